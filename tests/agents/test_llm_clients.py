"""Model clients against the scripted loopback server, through the real openai/anthropic libraries.

No network beyond 127.0.0.1 and no real waiting: the clients get a recording ``sleep`` so backoff
delays are asserted, not slept.
"""

from __future__ import annotations

import base64
import io
import json
from typing import Any

import pytest

from helpers import extra_reason

pytest.importorskip("openai", reason=extra_reason("openai"))
pytest.importorskip("anthropic", reason=extra_reason("anthropic"))

from cubebench.agents.llm import (AnthropicClient, Budget, BudgetExceeded, ModelError, OpenAIChatClient,  # noqa: E402
                        RetryPolicy, image_part, make_client, price_for,
                        react_grammar, react_pattern, text_part)
from cubebench.agents.llm.messages import mask_secret, validate_messages  # noqa: E402
from cubebench.agents.llm.retry import parse_retry_after  # noqa: E402
from cubebench.agents.llm.testing import ScriptedServer, Step  # noqa: E402

PROVIDERS = ("openai", "anthropic")
API_KEY = "sk-test-secret-0123456789"
FAST = RetryPolicy(max_attempts=4, base_delay_s=0.01, max_delay_s=0.04, jitter=0.5)
USER = [{"role": "user", "content": "Say something."}]


def _png() -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (3, 2), (200, 10, 10)).save(buf, "PNG")
    return buf.getvalue()


def _client(provider: str, srv: ScriptedServer, sleeps: list[float] | None = None,
            **settings: Any) -> OpenAIChatClient | AnthropicClient:
    settings.setdefault("retry", FAST)
    settings.setdefault("timeout_s", 5.0)
    sleep = sleeps.append if sleeps is not None else (lambda _s: None)
    if provider == "openai":
        return OpenAIChatClient(settings.pop("model", "scripted-model"), base_url=srv.base_url,
                                api_key=API_KEY, sleep=sleep, rng_seed=0, **settings)
    return AnthropicClient(settings.pop("model", "scripted-model"), base_url=srv.root_url,
                           api_key=API_KEY, sleep=sleep, rng_seed=0, **settings)


def _assert_log_complete(reply_or_error: Any, n_requests: int) -> None:
    """Every attempt is logged, numbered, and no log entry leaks the key."""
    log = reply_or_error.log
    assert [e["attempt"] for e in log] == list(range(1, n_requests + 1))
    assert all("request" in e and "latency_s" in e for e in log)
    assert API_KEY not in json.dumps(log)


# ---------------------------------------------------------------------------- normal replies

@pytest.mark.parametrize("provider", PROVIDERS)
def test_normal_reply_with_token_counts(provider: str) -> None:
    with ScriptedServer([Step.reply("Thought: hi\nAction: done()", input_tokens=17,
                                    output_tokens=6)]) as srv:
        with _client(provider, srv) as client:
            reply = client.complete(USER)
        requests = srv.requests
    assert reply.text == "Thought: hi\nAction: done()"
    assert (reply.finish_reason, reply.input_tokens, reply.output_tokens) == ("stop", 17, 6)
    assert reply.attempts == 1 and reply.provider == provider
    assert len(requests) == 1 and requests[0].api == provider
    assert requests[0].body["messages"][-1]["content"] in ("Say something.",
                                                           [text_part("Say something.")])
    _assert_log_complete(reply, 1)
    assert reply.log[0]["status"] == 200
    assert reply.log[0]["response"]["model"] == "scripted-model"


@pytest.mark.parametrize("provider", PROVIDERS)
def test_api_key_reaches_server_but_never_the_log(provider: str) -> None:
    with ScriptedServer(["ok"]) as srv:
        reply = _client(provider, srv).complete(USER)
        headers = srv.requests[0].headers
    sent = headers.get("authorization", "") + headers.get("x-api-key", "")
    assert API_KEY in sent
    assert API_KEY not in json.dumps(reply.as_record())


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("key", ["x", "y", "R", "none"])
def test_a_short_key_is_masked_where_it_was_sent_never_in_cube_notation(provider: str, key: str) -> None:
    """A local server's dummy key (``x``, ``none``) is also a cube rotation, a move, a reward's name: the log keeps
    every occurrence of its text in prompts and replies, and masks it only where it stands as the key (here a
    server's error that echoes it)."""
    notation = "Action: rotate(\"x\") then move(\"R U R' y\"); reward none; an exact box of x-rays"
    with ScriptedServer([Step.http_error(401, message=f"Incorrect API key provided: {key}"), notation]) as srv:
        client = OpenAIChatClient("scripted-model", base_url=srv.base_url, api_key=key, retry=FAST, timeout_s=5.0) \
            if provider == "openai" else AnthropicClient("scripted-model", base_url=srv.root_url, api_key=key,
                                                         retry=FAST, timeout_s=5.0)
        with pytest.raises(ModelError) as refused:
            client.complete([{"role": "user", "content": notation}])
        reply = client.complete([{"role": "user", "content": notation}])
    failed = json.dumps(refused.value.log)
    assert "Incorrect API key provided: ***" in failed and f"provided: {key}" not in failed
    logged = json.dumps(reply.as_record())
    assert logged.count(json.dumps(notation)[1:-1]) == 3 and "***" not in logged  # request, reply, its body


@pytest.mark.parametrize(("text", "secret", "masked"), [
    ("Bearer sk-test-secret-0123456789!", API_KEY, "Bearer ***!"),
    ("url?key=sk-test-secret-0123456789&x=1", API_KEY, "url?key=***&x=1"),
    ("glued:XXsk-test-secret-0123456789YY", API_KEY, "glued:XX***YY"),  # a long key: every occurrence
    ("tax exam: x", "x", "tax exam: x"),
    ("Action: x", "x", "Action: x"),
    ("x-ray, max_x, (x)", "x", "x-ray, max_x, (x)"),
    ("Authorization: Bearer x", "x", "Authorization: Bearer ***"),
    ('{"api_key": "none", "reward": "none"}', "none", '{"api_key": "***", "reward": "none"}'),
    ("https://h/v1?key=R&model=R", "R", "https://h/v1?key=***&model=R"),
    ("x-api-key: y; move y'", "y", "x-api-key: ***; move y'"),
    ("Bearer xyz", "x", "Bearer xyz"),
    ("abc", "", "abc"),
])
def test_mask_secret(text: str, secret: str, masked: str) -> None:
    assert mask_secret(text, secret) == masked


def test_cost_from_price_table_and_zero_for_unknown_models() -> None:
    script = [Step.reply("a", input_tokens=1_000_000, output_tokens=1_000_000)] * 2
    with ScriptedServer(script) as srv:
        priced = _client("openai", srv, model="gpt-4o-2024-08-06").complete(USER)
        unknown = _client("openai", srv, model="my-vllm-model").complete(USER)
    assert price_for("gpt-4o-2024-08-06") == price_for("gpt-4o") != price_for("gpt-4o-mini")
    assert priced.cost_usd == pytest.approx(sum(price_for("gpt-4o")))
    assert unknown.cost_usd == 0.0


@pytest.mark.parametrize("provider", PROVIDERS)
def test_system_prompt_is_sent_in_provider_form(provider: str) -> None:
    messages = [{"role": "system", "content": "You solve cubes."}, *USER]
    with ScriptedServer(["ok"]) as srv:
        _client(provider, srv).complete(messages)
        body = srv.requests[0].body
    if provider == "openai":
        assert body["messages"][0] == {"role": "system", "content": "You solve cubes."}
    else:
        assert body["system"] == "You solve cubes."
        assert [m["role"] for m in body["messages"]] == ["user"]


# ---------------------------------------------------------------------------- images

@pytest.mark.parametrize("provider", PROVIDERS)
def test_image_parts_arrive_as_base64_and_are_hashed_in_the_log(provider: str) -> None:
    png = _png()
    b64 = base64.b64encode(png).decode()
    messages = [{"role": "user", "content": [text_part("What do you see?"), image_part(png)]}]
    with ScriptedServer(["a red square"]) as srv:
        reply = _client(provider, srv).complete(messages)
        part = srv.requests[0].body["messages"][0]["content"][1]
    if provider == "openai":
        assert part == {"type": "image_url", "image_url": {"url": "data:image/png;base64," + b64}}
    else:
        assert part == {"type": "image",
                        "source": {"type": "base64", "media_type": "image/png", "data": b64}}
    logged = json.dumps(reply.log)
    assert b64 not in logged
    import hashlib
    assert hashlib.sha256(png).hexdigest() in logged and f'"bytes": {len(png)}' in logged


def test_invalid_messages_are_refused_before_sending() -> None:
    with pytest.raises(ValueError, match="role"):
        validate_messages([{"role": "tool", "content": "x"}])
    with pytest.raises(ValueError, match="PNG"):
        validate_messages([{"role": "user", "content": [{"type": "image", "png": b"GIF89a"}]}])
    with ScriptedServer(["never used"]) as srv:
        with pytest.raises(ValueError, match="empty"):
            _client("openai", srv).complete([])
        assert srv.requests == []


# ---------------------------------------------------------------------------- settings

def test_openai_sends_stop_seed_temperature_max_tokens_and_extra_body() -> None:
    with ScriptedServer(["ok"]) as srv:
        client = _client("openai", srv, temperature=0.3, seed=11, max_tokens=64)
        reply = client.complete(USER, stop=["Observation:"], seed=12,
                                extra={"grammar": 'root ::= "x"'})
        body = srv.requests[0].body
    assert body["stop"] == ["Observation:"]
    assert (body["seed"], body["temperature"], body["max_tokens"]) == (12, 0.3, 64)
    assert body["grammar"] == 'root ::= "x"'
    assert reply.log[0]["request"]["grammar"] == 'root ::= "x"'


def test_anthropic_sends_stop_sequences_temperature_and_notes_unsupported_seed() -> None:
    with ScriptedServer(["ok"]) as srv:
        client = _client("anthropic", srv, temperature=0.0, seed=5, max_tokens=77)
        reply = client.complete(USER, stop=["Observation:"])
        body = srv.requests[0].body
    assert body["stop_sequences"] == ["Observation:"]
    assert (body["temperature"], body["max_tokens"]) == (0.0, 77)
    assert "seed" not in body
    assert reply.log[0]["request"]["unsupported"] == {"seed": 5}


def test_make_client_specs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with ScriptedServer(["ok"]) as srv:
        client = make_client(f"openai-compatible:{srv.base_url}:llama3:8b", retry=FAST)
        assert isinstance(client, OpenAIChatClient) and client.model == "llama3:8b"
        assert client.complete(USER).text == "ok"
        assert srv.requests[0].body["model"] == "llama3:8b"
    with pytest.raises(ModelError, match="OPENAI_API_KEY"):
        make_client("openai:gpt-4o")
    with pytest.raises(ModelError, match="ANTHROPIC_API_KEY"):
        make_client("anthropic:claude-sonnet-4-5")
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    client = make_client("openai:gpt-4o")
    assert client.max_tokens_param == "max_completion_tokens"
    with pytest.raises(ValueError, match="unknown model spec"):
        make_client("gemini:pro")
    with pytest.raises(ValueError, match="openai-compatible"):
        make_client("openai-compatible:localhost-no-scheme")


def test_env_vars_configure_the_openai_client(monkeypatch: pytest.MonkeyPatch) -> None:
    with ScriptedServer(["from env"]) as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
        reply = OpenAIChatClient("m", retry=FAST).complete(USER)
        assert reply.text == "from env"
        assert API_KEY in srv.requests[0].headers["authorization"]


# ---------------------------------------------------------------------------- faults

@pytest.mark.parametrize("provider", PROVIDERS)
def test_429_honours_retry_after(provider: str) -> None:
    sleeps: list[float] = []
    with ScriptedServer([Step.http_error(429, retry_after=7), "after the wait"]) as srv:
        reply = _client(provider, srv, sleeps).complete(USER)
        n = len(srv.requests)
    assert reply.text == "after the wait" and reply.attempts == 2 == n
    assert sleeps == [7.0]
    first = reply.log[0]
    assert (first["status"], first["error_kind"], first["retry_after_s"]) == (429, "rate_limit", 7.0)
    _assert_log_complete(reply, 2)


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("status", [500, 502, 503, 529])
def test_server_errors_retry_with_exponential_backoff(provider: str, status: int) -> None:
    sleeps: list[float] = []
    script = [Step.http_error(status)] * 3 + ["recovered"]
    with ScriptedServer(script) as srv:
        reply = _client(provider, srv, sleeps).complete(USER)
    assert reply.text == "recovered" and reply.attempts == 4
    for i, wait in enumerate(sleeps):
        cap = min(FAST.max_delay_s, FAST.base_delay_s * 2 ** i)
        assert cap * (1 - FAST.jitter) <= wait <= cap
    assert [e["status"] for e in reply.log] == [status, status, status, 200]
    _assert_log_complete(reply, 4)


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("fault,kind", [(Step.malformed(), "malformed"),
                                        (Step.truncated(), "connection"),
                                        (Step.drop(), "connection")])
def test_broken_responses_are_retried(provider: str, fault: Step, kind: str) -> None:
    with ScriptedServer([fault, "fine"]) as srv:
        reply = _client(provider, srv).complete(USER)
    assert reply.text == "fine" and reply.attempts == 2
    assert reply.log[0]["error_kind"] == kind and reply.log[0]["error"]
    _assert_log_complete(reply, 2)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_timeout_is_retried(provider: str) -> None:
    with ScriptedServer([Step.slow("too late", delay_s=5.0), "in time"]) as srv:
        reply = _client(provider, srv, timeout_s=0.2).complete(USER)
    assert reply.text == "in time" and reply.attempts == 2
    assert reply.log[0]["error_kind"] == "timeout"


@pytest.mark.parametrize("provider", PROVIDERS)
def test_giving_up_raises_model_error_with_every_attempt(provider: str) -> None:
    with ScriptedServer([Step.http_error(503)] * 4) as srv:
        with pytest.raises(ModelError, match="gave up after 4 attempts") as info:
            _client(provider, srv).complete(USER)
        assert len(srv.requests) == 4
    err = info.value
    assert (err.status, err.kind) == (503, "server_error")
    _assert_log_complete(err, 4)


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("status", [400, 401, 404, 422])
def test_client_errors_are_not_retried(provider: str, status: int) -> None:
    with ScriptedServer([Step.http_error(status, message="no such thing"), "unused"]) as srv:
        with pytest.raises(ModelError, match="no such thing") as info:
            _client(provider, srv).complete(USER)
        assert len(srv.requests) == 1
    assert (info.value.status, info.value.kind) == (status, "client_error")
    _assert_log_complete(info.value, 1)
    if status == 401:
        assert "API_KEY" in str(info.value)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_empty_and_length_replies_are_returned_as_such(provider: str) -> None:
    with ScriptedServer([Step.empty(), Step.length("Thought: I was cut")]) as srv:
        client = _client(provider, srv)
        empty = client.complete(USER)
        cut = client.complete(USER)
    assert (empty.text, empty.finish_reason, empty.attempts) == ("", "stop", 1)
    assert (cut.text, cut.finish_reason) == ("Thought: I was cut", "length")


def test_exhausted_script_is_a_clear_error() -> None:
    with ScriptedServer([]) as srv:
        with pytest.raises(ModelError, match="script is exhausted"):
            _client("openai", srv).complete(USER)


def test_responder_callable_sees_the_request() -> None:
    def echo(request: Any) -> Step:
        return Step.reply("echo: " + request.body["messages"][-1]["content"])

    with ScriptedServer(echo) as srv:
        assert _client("openai", srv).complete(USER).text == "echo: Say something."


# ---------------------------------------------------------------------------- budget

@pytest.mark.parametrize("provider", PROVIDERS)
def test_token_budget_stops_calls(provider: str) -> None:
    budget = Budget(max_tokens=15)
    script = [Step.reply("one", input_tokens=6, output_tokens=4)] * 3
    with ScriptedServer(script) as srv:
        client = _client(provider, srv, budget=budget)
        client.complete(USER)
        with pytest.raises(BudgetExceeded, match="token budget exceeded") as after:
            client.complete(USER)
        assert after.value.reply is not None and after.value.reply.text == "one"
        assert len(after.value.log) == 1
        with pytest.raises(BudgetExceeded, match="refused"):
            client.complete(USER)
        assert len(srv.requests) == 2
    assert (budget.tokens, budget.calls, budget.as_dict()["input_tokens"]) == (20, 2, 12)


def test_cost_budget_and_per_call_budget_override() -> None:
    shared = Budget(max_cost_usd=1.0)
    script = [Step.reply("x", input_tokens=100_000, output_tokens=100_000)] * 2
    with ScriptedServer(script) as srv:
        client = _client("openai", srv, model="gpt-4o", budget=shared)
        episode = Budget(max_cost_usd=2.0)
        client.complete(USER, budget=episode)  # $0.25 in + $1.00 out, charged to `episode`
        with pytest.raises(BudgetExceeded, match="cost budget exceeded"):
            client.complete(USER, budget=episode)
    assert shared.calls == 0 and episode.calls == 2
    assert episode.cost_usd == pytest.approx(2 * (0.25 + 1.0))


def test_budget_refuses_a_prompt_that_cannot_fit() -> None:
    with ScriptedServer(["unused"]) as srv:
        client = _client("openai", srv, budget=Budget(max_tokens=5))
        with pytest.raises(BudgetExceeded, match="refused"):
            client.complete([{"role": "user", "content": "word " * 100}])
        assert srv.requests == []


# ---------------------------------------------------------------------------- helpers

def test_parse_retry_after_forms() -> None:
    assert parse_retry_after({"Retry-After": "3"}) == 3.0
    assert parse_retry_after({"retry-after-ms": "250"}) == 0.25
    assert parse_retry_after({"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0
    assert parse_retry_after({"Retry-After": "soon"}) is None
    assert parse_retry_after({}) is None


def test_retry_policy_caps_retry_after_and_backoff() -> None:
    import random

    policy = RetryPolicy(base_delay_s=1.0, max_delay_s=4.0, jitter=0.0, max_retry_after_s=10.0)
    rng = random.Random(0)
    assert [policy.delay(n, None, rng) for n in (1, 2, 3, 4)] == [1.0, 2.0, 4.0, 4.0]
    assert policy.delay(1, 120.0, rng) == 10.0
    with pytest.raises(ValueError):
        RetryPolicy(max_attempts=0)


def test_react_grammar_and_pattern_agree_on_tools() -> None:
    basic = ["move", "rotate", "observe", "done"]
    grammar = react_grammar(basic)
    assert "move-call" in grammar and "solve-call" not in grammar
    pattern = react_pattern(basic)
    good = ['Thought: turn it\nAction: move("R U2 F\' M x")', 'Thought: look\nAction: rotate("y\'")',
            "Thought: ok\nAction: observe()", "Thought: finished\nAction: done()"]
    bad = ['Thought: x\nAction: solve_current()', 'Thought: x\nAction: move("")',
           'Thought: x\nAction: move("R3")', 'Thought: x\nAction: rotate("w")',
           "Thought: \nAction: done()", "Action: done()", 'Thought: x\nAction: move("RU")']
    assert all(pattern.fullmatch(r) for r in good)
    assert not any(pattern.fullmatch(r) for r in bad)
    full = react_pattern(["solve", "solve_current"])
    assert full.fullmatch('Thought: x\nAction: solve("' + "UUUUUUUUURRRRRRRRRFFFFFFFFFDDDDDDDDDLLLLLLLLLBBBBBBBBB" + '")')
    assert not full.fullmatch('Thought: x\nAction: solve("UUU")')
    with pytest.raises(ValueError, match="unknown tool"):
        react_grammar(["move", "teleport"])
    with pytest.raises(ValueError):
        react_grammar([])


# --- the scripted server's connections ---------------------------------------------------------
@pytest.mark.parametrize("provider", ["openai", "anthropic"])
@pytest.mark.parametrize("keep_alive", [False, True])
def test_the_scripted_server_keeps_a_clients_connection_open_only_when_asked(provider: str, keep_alive: bool) -> None:
    msgs = [{"role": "user", "content": "hi"}]
    with ScriptedServer([], default="Thought: t\nAction: done()", keep_alive=keep_alive) as srv:
        client = _client(provider, srv)
        texts = [client.complete(msgs).text for _ in range(3)]
        assert texts == ["Thought: t\nAction: done()"] * 3
        assert srv.connections == (1 if keep_alive else 3)
        assert len(srv.requests) == 3
    # stop() returned with the kept-alive connection still open on the client's side: it was ended
    client.close()


def test_a_kept_alive_server_still_closes_a_connection_whose_reply_is_broken() -> None:
    script = [Step.truncated(), "Thought: t\nAction: done()"]
    with ScriptedServer(script, keep_alive=True) as srv:
        client = _client("openai", srv, sleeps=[])
        reply = client.complete([{"role": "user", "content": "hi"}])
        assert reply.text == "Thought: t\nAction: done()"
        assert srv.connections == 2  # the truncated reply's connection was closed; the retry opened another
