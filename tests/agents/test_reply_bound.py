"""A model reply far longer than its request's token limit is cut before anything keeps it, and the step says so.

Through the real openai and anthropic libraries against the scripted loopback server (127.0.0.1 only): a 4 MB
reply to an 8-token request keeps 4,096 characters in the reply, its log and the stored record; an honest reply
at the bound is kept whole; a 4 MB error message is cut too.
"""

from __future__ import annotations

import json
import random
import string
from pathlib import Path

import pytest

from helpers import extra_reason

pytest.importorskip("openai", reason=extra_reason("openai"))
pytest.importorskip("anthropic", reason=extra_reason("anthropic"))

from cubebench.agents.llm import AnthropicClient, ModelError, OpenAIChatClient, RetryPolicy  # noqa: E402
from cubebench.agents.llm.reply_bound import (CHARS_PER_TOKEN, CUT_MARK, MIN_REPLY_CHARS,  # noqa: E402
                                              cut_reply, cut_strings, reply_char_limit)
from cubebench.agents.llm.testing import ScriptedServer, Step  # noqa: E402

BIG = "".join(random.Random(0).choices(string.ascii_letters + " ", k=4_000_000))
"""4 MB of text (random, so that no compression hides its size)."""
USER = [{"role": "user", "content": "One move."}]


def _client(provider: str, srv: ScriptedServer):
    settings = {"retry": RetryPolicy(max_attempts=1), "timeout_s": 30.0, "sleep": lambda _s: None}
    if provider == "openai":
        return OpenAIChatClient("scripted", base_url=srv.base_url, api_key="sk-test", **settings)
    return AnthropicClient("scripted", base_url=srv.root_url, api_key="sk-test", **settings)


def test_the_bound_grows_with_the_token_limit_from_a_floor() -> None:
    assert reply_char_limit(8) == MIN_REPLY_CHARS == 4096
    assert reply_char_limit(1024) == 1024 * CHARS_PER_TOKEN
    assert cut_reply("R", 8) == ("R", None)
    kept, note = cut_reply("x" * 5000, 8)
    assert kept == "x" * 4096 and "5,000 characters" in note and "8 token(s)" in note and "4,096" in note
    assert cut_strings({"a": "y" * 5000, "b": list(range(5000))}, 4096) == \
        {"a": "y" * 4096 + CUT_MARK, "b": [*range(4096), CUT_MARK]}
    assert len(cut_strings({str(k): k for k in range(5000)}, 4096)) == 4097


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_4_mb_reply_to_an_8_token_request_is_cut_everywhere_it_is_kept(provider: str) -> None:
    with ScriptedServer([Step.reply(BIG)]) as srv:
        with _client(provider, srv) as client:
            reply = client.complete(USER, max_tokens=8)
    assert reply.text == BIG[:4096]
    assert reply.reply_cut and "4,000,000 characters" in reply.reply_cut
    assert reply.log[-1]["reply_cut"] == reply.reply_cut
    kept = json.dumps(reply.as_record())
    assert len(kept) < 20_000, len(kept)  # the text, and the body in the log, both bounded
    assert BIG[:4096] in kept and BIG[4096:4200] not in kept


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_reply_within_the_bound_is_kept_whole(provider: str) -> None:
    honest = BIG[:reply_char_limit(64)]
    with ScriptedServer([Step.reply(honest)]) as srv:
        with _client(provider, srv) as client:
            reply = client.complete(USER, max_tokens=64)
    assert reply.text == honest and reply.reply_cut is None and "reply_cut" not in reply.log[-1]
    assert honest in json.dumps(reply.log[-1]["response"])


def test_a_4_mb_error_message_is_cut_in_the_error_and_its_log() -> None:
    with ScriptedServer([Step.http_error(400, message=BIG)]) as srv:
        with _client("openai", srv) as client:
            with pytest.raises(ModelError) as err:
                client.complete(USER, max_tokens=8)
    assert len(str(err.value)) < 1000  # the message is what the model is shown next step
    assert len(json.dumps(err.value.log)) < 20_000


def test_a_body_of_the_wrong_shape_is_logged_bounded() -> None:
    """Content that is a million numbers, not text: a malformed reply, logged as far as the bound allows."""
    body = {"choices": [{"message": {"content": list(range(1_000_000))}, "finish_reason": "stop"}]}
    with ScriptedServer([Step.body(body)]) as srv:
        with _client("openai", srv) as client:
            with pytest.raises(ModelError) as err:
                client.complete(USER, max_tokens=8)
    assert err.value.kind == "malformed" and len(json.dumps(err.value.log)) < 50_000


def test_a_run_of_4_mb_replies_to_8_token_requests_stores_a_bounded_record(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The policy agent asks for 8 tokens; the server sends 4 MB each step.  Before the bound this one 20-step
    episode stored a record of 240 MB of JSON (176 MB of file); now each step keeps 4,096 characters and says so."""
    from cubebench.runner.cli import main
    from cubebench.runner.store import open_run, record_json

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    out = tmp_path / "run.sqlite"
    with ScriptedServer(lambda request: BIG) as srv:
        assert main(["run", "--suite", "smoke", "--tiers", "symbolic", "--depths", "1", "--limit", "1",
                     "--agent", f"openai-compatible:{srv.base_url}:m", "--style", "policy", "--out", str(out),
                     "--no-progress", "--quiet", "--distance-budget", "0"]) == 0
        assert {r.body["max_tokens"] for r in srv.requests} == {8}
    with open_run(out) as store:
        [(key, record)] = list(store.records())
    steps = record.steps
    assert len(steps) == 20 and all(s.parse_error for s in steps)  # 4 MB of letters is no move: wasted steps
    assert all(s.reply == BIG[:4096] and s.reply_cut and "4,000,000 characters" in s.reply_cut for s in steps)
    assert len(record_json(record.to_dict())) < 1_000_000  # 20 steps, each reply kept twice (reply and log)
    from cubebench.runner.viewer import episode_view

    assert episode_view(key, record)["steps"][0]["reply_cut"] == steps[0].reply_cut  # the viewer shows the note
