"""HTTP 200 replies whose JSON body is not a valid reply, through the real openai/anthropic clients.

Content that is a number or a list, ``usage`` that is a string or holds non-integer counts, choices
missing or empty, a body that is not an object, ... each one is a *malformed reply*: logged with
``error_kind`` ``malformed``, retried like any malformed body, a :class:`MalformedReply` (a
``ModelError``) once the attempts run out, and never a reply an agent puts in its history. Text with
lone surrogates is repaired (each one written as its ``\\uXXXX`` escape) and the log says so.
"""

from __future__ import annotations

import json
from typing import Any, Callable

import gymnasium as gym
import pytest

from helpers import extra_reason

pytest.importorskip("openai", reason=extra_reason("openai"))
pytest.importorskip("anthropic", reason=extra_reason("anthropic"))

import cubebench  # noqa: E402
from cubebench.agents.episode import run_episode  # noqa: E402
from cubebench.agents.llm import (AnthropicClient, MalformedReply, ModelError,  # noqa: E402
                                  OpenAIChatClient, RetryPolicy)
from cubebench.agents.llm.testing import ScriptedServer, Step  # noqa: E402
from cubebench.agents.react import ReActAgent  # noqa: E402

PROVIDERS = ("openai", "anthropic")
FAST = RetryPolicy(max_attempts=3, base_delay_s=0.001, max_delay_s=0.01)
USER = [{"role": "user", "content": "Say something."}]
LONE = "\ud800"


def openai_body(content: Any = "fine", *, usage: Any = None, **top: Any) -> dict[str, Any]:
    body = {"id": "c", "object": "chat.completion", "model": "m",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                         "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4} if usage is None else usage}
    body.update(top)
    return body


def anthropic_body(content: Any = None, *, usage: Any = None, **top: Any) -> dict[str, Any]:
    body = {"id": "m", "type": "message", "role": "assistant", "model": "m",
            "content": [{"type": "text", "text": "fine"}] if content is None else content,
            "stop_reason": "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": 3, "output_tokens": 1} if usage is None else usage}
    body.update(top)
    return body


def _openai_choice(**fields: Any) -> dict[str, Any]:
    body = openai_body()
    body["choices"][0].update(fields)
    return body


MALFORMED: dict[str, dict[str, Callable[[], Any]]] = {
    "openai": {
        "content int": lambda: openai_body(7),
        "content list": lambda: openai_body([{"type": "text", "text": "hi"}, 3]),
        "content object": lambda: openai_body({"text": "hi"}),
        "usage string": lambda: openai_body(usage="lots"),
        "usage list": lambda: openai_body(usage=[1, 2]),
        "usage counts not integers": lambda: openai_body(usage={"prompt_tokens": "12", "completion_tokens": 1}),
        "usage count fractional": lambda: openai_body(usage={"prompt_tokens": 2, "completion_tokens": 1.5}),
        "usage count negative": lambda: openai_body(usage={"prompt_tokens": -4, "completion_tokens": 1}),
        "usage count boolean": lambda: openai_body(usage={"prompt_tokens": True, "completion_tokens": 1}),
        "choices missing": lambda: {k: v for k, v in openai_body().items() if k != "choices"},
        "choices empty": lambda: openai_body(choices=[]),
        "choices a string": lambda: openai_body(choices="fine"),
        "choice not an object": lambda: openai_body(choices=["fine"]),
        "message missing": lambda: openai_body(choices=[{"index": 0, "finish_reason": "stop"}]),
        "message a string": lambda: _openai_choice(message="fine"),
        "finish_reason a number": lambda: _openai_choice(finish_reason=3),
        "body a list": lambda: [openai_body()],
        "body a string": lambda: "fine",
        "body null": lambda: None,
    },
    "anthropic": {
        "content int": lambda: anthropic_body(7),
        "content a string": lambda: anthropic_body("fine"),
        "text block text int": lambda: anthropic_body([{"type": "text", "text": 5}]),
        "text block text list": lambda: anthropic_body([{"type": "text", "text": ["a", "b"]}]),
        "block not an object": lambda: anthropic_body(["fine"]),
        "content missing": lambda: {k: v for k, v in anthropic_body().items() if k != "content"},
        "usage string": lambda: anthropic_body(usage="lots"),
        "usage counts not integers": lambda: anthropic_body(usage={"input_tokens": "3", "output_tokens": 1}),
        "usage count fractional": lambda: anthropic_body(usage={"input_tokens": 3, "output_tokens": 0.5}),
        "cache count not integer": lambda: anthropic_body(
            usage={"input_tokens": 3, "output_tokens": 1, "cache_read_input_tokens": "x"}),
        "stop_reason a list": lambda: anthropic_body(stop_reason=["end_turn"]),
        "body a list": lambda: [anthropic_body()],
        "body a number": lambda: 42,
    },
}
CASES = [(p, name) for p in PROVIDERS for name in MALFORMED[p]]


def _client(provider: str, srv: ScriptedServer, **settings: Any) -> OpenAIChatClient | AnthropicClient:
    settings.setdefault("retry", FAST)
    if provider == "openai":
        return OpenAIChatClient("scripted", base_url=srv.base_url, api_key="sk-x", timeout_s=5,
                                sleep=lambda _s: None, **settings)
    return AnthropicClient("scripted", base_url=srv.root_url, api_key="ak-x", timeout_s=5,
                           sleep=lambda _s: None, **settings)


def _good(provider: str, text: str) -> Step:
    return Step.body(openai_body(text) if provider == "openai" else anthropic_body([{"type": "text", "text": text}]))


def _utf8(value: Any) -> bytes:
    """``value`` as UTF-8 JSON: fails on any lone surrogate left in it."""
    return json.dumps(value, ensure_ascii=False).encode("utf-8")


# ---------------------------------------------------------------------------- the client

@pytest.mark.parametrize("provider,case", CASES, ids=[f"{p}-{c}" for p, c in CASES])
def test_a_malformed_body_is_logged_and_retried(provider: str, case: str) -> None:
    with ScriptedServer([Step.body(MALFORMED[provider][case]()), "the good one", "and the next"]) as srv:
        with _client(provider, srv) as client:
            reply = client.complete(USER)
            after = client.complete([*USER, {"role": "assistant", "content": reply.text}, *USER])
    assert (reply.text, reply.attempts) == ("the good one", 2)
    assert isinstance(reply.input_tokens, int) and isinstance(reply.output_tokens, int)
    first = reply.log[0]
    assert (first["status"], first["error_kind"]) == (200, "malformed")
    assert first["error"].startswith("malformed reply: ")
    assert first["response"] == MALFORMED[provider][case]()  # the body as it came, for the record
    assert reply.log[1]["status"] == 200 and reply.log[1]["error"] is None
    _utf8(reply.as_record())
    assert (after.text, after.attempts) == ("and the next", 1)  # later calls work


@pytest.mark.parametrize("provider,case", CASES, ids=[f"{p}-{c}" for p, c in CASES])
def test_persistently_malformed_bodies_raise_malformed_reply(provider: str, case: str) -> None:
    with ScriptedServer([Step.body(MALFORMED[provider][case]())] * 3 + ["recovered"]) as srv:
        with _client(provider, srv) as client:
            with pytest.raises(MalformedReply, match="gave up after 3 attempts; last error: malformed") as info:
                client.complete(USER)
            assert client.complete(USER).text == "recovered"  # the client is not poisoned
    err = info.value
    assert isinstance(err, ModelError) and (err.kind, err.status) == ("malformed", 200)
    assert [e["attempt"] for e in err.log] == [1, 2, 3]
    assert all(e["error_kind"] == "malformed" for e in err.log)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_body_that_is_not_json_is_a_malformed_reply_too(provider: str) -> None:
    with ScriptedServer([Step.malformed()] * 3) as srv:
        with pytest.raises(MalformedReply) as info:
            _client(provider, srv).complete(USER)
    assert info.value.kind == "malformed" and len(info.value.log) == 3


@pytest.mark.parametrize("provider", PROVIDERS)
def test_lone_surrogates_are_repaired_in_the_text_and_the_log(provider: str) -> None:
    text = f"Thought: {LONE} and \udcff\nAction: done()"
    body = openai_body(text) if provider == "openai" else anthropic_body([{"type": "text", "text": text}])
    body[f"note{LONE}"] = f"x{LONE}"
    with ScriptedServer([Step.body(body)]) as srv:
        reply = _client(provider, srv).complete(USER)
    assert reply.text == "Thought: \\ud800 and \\udcff\nAction: done()"
    assert reply.attempts == 1 and reply.log[0]["error"] is None
    assert "2 lone surrogates" in reply.log[0]["repaired"]
    record = reply.as_record()
    _utf8(record)  # nothing in the record (the logged response included) is unencodable
    assert reply.log[0]["response"]["note\\ud800"] == "x\\ud800"


@pytest.mark.parametrize("provider", PROVIDERS)
def test_null_usage_and_null_content_are_still_valid(provider: str) -> None:
    if provider == "openai":
        body = openai_body(None, usage={"prompt_tokens": None, "completion_tokens": 2.0})
    else:
        body = anthropic_body([{"type": "thinking", "thinking": "hm"}], usage={"input_tokens": 3})
    with ScriptedServer([Step.body(body), Step.body({**body, "usage": None})]) as srv:
        client = _client(provider, srv)
        first, second = client.complete(USER), client.complete(USER)
    assert first.text == second.text == "" and first.attempts == second.attempts == 1
    assert (first.input_tokens, first.output_tokens) == ((0, 2) if provider == "openai" else (3, 0))
    assert (second.input_tokens, second.output_tokens) == (0, 0)


# ---------------------------------------------------------------------------- an episode

def _env() -> gym.Env:
    return gym.make(cubebench.TIERS["symbolic"], max_steps=None, obs_format="text")


@pytest.mark.parametrize("provider", PROVIDERS)
def test_malformed_replies_never_enter_the_history_and_the_episode_goes_on(provider: str) -> None:
    bad = MALFORMED[provider]
    script = [
        Step.body(bad["content int"]()), _good(provider, "Thought: a\nAction: move(\"U\")"),
        # a whole call of malformed replies: the step is a model error, the episode goes on
        Step.body(bad["usage string"]()), Step.body(bad["content int"]()), Step.body(bad["body a list"]()),
        Step.body(bad["usage counts not integers"]()), _good(provider, f"Thought: b {LONE}\nAction: move(\"U'\")"),
        _good(provider, "Thought: c\nAction: move(\"R'\")"),
    ]
    with ScriptedServer(script) as srv:
        agent = ReActAgent(_client(provider, srv))
        record = run_episode(agent, _env(), reset_options={"scramble": "R"}, distance_budget_s=None)
        bodies = [r.body for r in srv.requests]
    assert record.status == "solved" and record.n_steps == 4
    assert [s.action for s in record.steps] == ['move(\'U\')', "", "move(\"U'\")", "move(\"R'\")"]
    # the step whose call failed is a model error naming the malformed reply, with every attempt
    failed = record.steps[1]
    assert "model error" in failed.error and "malformed" in failed.error and not failed.reply
    assert [e["error_kind"] for e in failed.model_log] == ["malformed"] * 3
    assert record.steps[0].model_log[0]["log"][0]["error_kind"] == "malformed"
    assert record.steps[2].reply == "Thought: b \\ud800\nAction: move(\"U'\")"
    # every request the server got held only good assistant turns, all of them strings
    assistant = [m["content"] for m in bodies[-1]["messages"] if m["role"] == "assistant"]
    texts = [c if isinstance(c, str) else "".join(p["text"] for p in c) for c in assistant]
    assert texts == ["Thought: a\nAction: move(\"U\")", "Thought: b \\ud800\nAction: move(\"U'\")"]
    assert [m["role"] for m in agent.messages] == ["system"] + ["user", "assistant"] * 3
    assert all(isinstance(m["content"], str) for m in agent.messages if m["role"] == "assistant")
    _utf8(record.to_dict())


@pytest.mark.parametrize("provider", PROVIDERS)
def test_lone_surrogates_in_the_prompt_are_sent_escaped(provider: str) -> None:
    messages = [{"role": "system", "content": f"sys{LONE}"},
                {"role": "user", "content": f"Observation: {LONE}"}]
    with ScriptedServer([_good(provider, "ok")]) as srv:
        reply = _client(provider, srv).complete(messages)
        body = srv.requests[0].body
    assert reply.text == "ok"
    sent = json.dumps(body)
    assert "sys\\\\ud800" in sent and "Observation: \\\\ud800" in sent
    _utf8(reply.as_record())


# ---------------------------------------------------------------------------- the agent's own guard

class _OddClient:
    """A client of one's own (no ModelClient checks): returns ``replies`` in turn; exceptions are raised."""

    model = "odd"

    def __init__(self, *replies: Any) -> None:
        self.replies = list(replies)
        self.seen: list[list[dict[str, Any]]] = []

    def complete(self, messages: Any, **_kw: Any) -> Any:
        from cubebench.agents.llm import ModelReply

        self.seen.append([dict(m) for m in messages])
        item = self.replies.pop(0)
        if isinstance(item, BaseException):
            raise item
        return ModelReply(text=item, finish_reason="stop", input_tokens=1, output_tokens=1, latency_s=0.0,
                          cost_usd=0.0, attempts=1)

    def close(self) -> None:
        pass


def test_the_agent_keeps_its_history_clean_whatever_a_client_returns() -> None:
    client = _OddClient(7, TypeError("boom"), ["a", "list"], f"Thought: {LONE}\nAction: move(\"R'\")")
    agent = ReActAgent(client)  # type: ignore[arg-type]
    record = run_episode(agent, _env(), reset_options={"scramble": "R"}, distance_budget_s=None,
                         max_consecutive_errors=5)
    assert record.status == "solved" and record.n_steps == 4
    assert "malformed reply: its text is a int" in record.steps[0].error
    assert "TypeError" in record.steps[1].error and "boom" in record.steps[1].error
    assert "its text is a list" in record.steps[2].error
    assert record.steps[3].reply == "Thought: \\ud800\nAction: move(\"R'\")"
    # every call saw a well-formed history: the system prompt, then one observation (no failed turn kept)
    assert all([m["role"] for m in seen] == ["system", "user"] for seen in client.seen)
    assert [m["role"] for m in agent.messages] == ["system", "user", "assistant"]
