"""The answerers of question items: the oracle, the random baseline, and a model through the real
``openai`` and ``anthropic`` clients against the loopback scripted server (no network, no waiting).
"""

from __future__ import annotations

import json
import random
from typing import Any

import numpy as np
import pytest

from helpers import extra_reason

from cubebench.agents.answerers import (EMPTY_QUESTION, ORACLE_FREE_TEXT, Answerer, ModelAnswerer,
                                        OracleAnswerer, RandomAnswerer)
from cubebench.tasks.items import ParseFailure, Prompt, ask_and_judge

GOLD = "ZQX-GOLD"
API_KEY = "sk-test-secret-0123456789"
PROVIDERS = ("openai", "anthropic")


class ChoiceForm:
    """A strict one-of-these-words format (a stand-in for the forms of ``cubebench.tasks.parsing``)."""

    def __init__(self, options: tuple[str, ...]) -> None:
        self.options = options

    def parse(self, reply: str) -> str:
        answer = reply.strip()
        if answer not in self.options:
            raise ParseFailure(f"expected one of {self.options}, got {reply!r}")
        return answer

    def format(self, answer: str) -> str:
        return answer

    def sample(self, rng: random.Random) -> str:
        return rng.choice(self.options)


LETTERS = ChoiceForm(("A", "B", "C", "D"))
SECRET = ChoiceForm(("A", GOLD))
IMAGE = np.zeros((4, 6, 3), dtype=np.uint8)


def _prompt(*, form: Any = SECRET, gold: str = GOLD, text: str = "Which option? Reply with one letter.",
            image: np.ndarray | None = IMAGE, system: str = "You answer cube questions.",
            scored: bool = True) -> Prompt:
    return Prompt(system=system, text=text, image=image, form=form, gold=gold, scored=scored)


# ---------------------------------------------------------------------------- oracle and random

def test_oracle_replies_the_gold_in_the_format() -> None:
    oracle: Answerer = OracleAnswerer()
    for gold in LETTERS.options:
        exchange = ask_and_judge(oracle.answer, _prompt(form=LETTERS, gold=gold))
        assert (exchange.answer, exchange.correct) == (gold, True)
    free = oracle.answer(_prompt(scored=False))
    assert free.text == ORACLE_FREE_TEXT and GOLD not in free.text and free.error is None
    assert oracle.name == "oracle"


def test_random_is_reproducible_per_seed_and_covers_every_option() -> None:
    prompt = _prompt(form=LETTERS, gold="C")

    def draws(seed: int) -> list[str]:
        answerer = RandomAnswerer(seed)
        return [LETTERS.parse(answerer.answer(prompt).text) for _ in range(200)]

    assert draws(7) == draws(7) and draws(7) != draws(8)
    assert set(draws(7)) == set(LETTERS.options)
    assert RandomAnswerer(0).answer(_prompt(scored=False)).text == ""
    assert RandomAnswerer(0).name == "random"


# ---------------------------------------------------------------------------- the model answerer

openai = pytest.importorskip("openai", reason=extra_reason("openai"))
anthropic = pytest.importorskip("anthropic", reason=extra_reason("anthropic"))

from cubebench.agents.llm import AnthropicClient, Budget, OpenAIChatClient, RetryPolicy  # noqa: E402
from cubebench.agents.llm.testing import ScriptedServer, Step  # noqa: E402


def _answerer(provider: str, srv: ScriptedServer, **kwargs: Any) -> ModelAnswerer:
    """A model answerer on a real client with two quick attempts and no sleeping."""
    settings: dict[str, Any] = {"api_key": API_KEY, "retry": RetryPolicy(max_attempts=2), "timeout_s": 5.0,
                                "sleep": lambda _s: None, "rng_seed": 0, "budget": kwargs.pop("budget", None)}
    client: OpenAIChatClient | AnthropicClient
    if provider == "openai":
        client = OpenAIChatClient("scripted-model", base_url=srv.base_url, **settings)
    else:
        client = AnthropicClient("scripted-model", base_url=srv.root_url, **settings)
    return ModelAnswerer(client, **kwargs)


def _user_parts(provider: str, body: dict[str, Any]) -> list[dict[str, Any]]:
    content = body["messages"][-1]["content"]
    return [{"type": "text", "text": content}] if isinstance(content, str) else content


def _image_parts(provider: str, body: dict[str, Any]) -> list[dict[str, Any]]:
    kind = "image_url" if provider == "openai" else "image"
    return [p for p in _user_parts(provider, body) if p["type"] == kind]


def _system(provider: str, body: dict[str, Any]) -> str:
    if provider == "anthropic":
        return str(body.get("system", ""))
    return "".join(m["content"] for m in body["messages"] if m["role"] == "system")


@pytest.mark.parametrize("provider", PROVIDERS)
def test_model_round_trip_with_an_image_never_sends_the_gold(provider: str) -> None:
    with ScriptedServer([Step.reply(" A ", input_tokens=30, output_tokens=1)]) as srv:
        answerer = _answerer(provider, srv, max_tokens=16)
        exchange = ask_and_judge(answerer.answer, _prompt())
        answerer.close()
        requests = srv.requests
    reply = exchange.reply
    assert (reply.text, reply.error, reply.input_tokens, reply.output_tokens) == (" A ", None, 30, 1)
    assert (exchange.answer, exchange.correct) == ("A", False)
    assert answerer.name == "scripted-model"
    [request] = requests
    body = request.body
    assert request.api == provider and body["max_tokens"] == 16
    assert _system(provider, body) == "You answer cube questions."
    assert len(_image_parts(provider, body)) == 1
    assert _user_parts(provider, body)[0] == {"type": "text", "text": "Which option? Reply with one letter."}
    assert GOLD not in json.dumps(body)
    logged = json.dumps(reply.model_log)
    assert reply.model_log and reply.model_log[0]["status"] == 200
    assert GOLD not in logged and API_KEY not in logged and '"sha256"' in logged
    assert len(logged) < 10_000  # the image is stored as its hash, not its bytes


@pytest.mark.parametrize("provider", PROVIDERS)
def test_send_images_false_sends_no_image(provider: str) -> None:
    with ScriptedServer(["B"]) as srv:
        reply = _answerer(provider, srv, send_images=False, name="text-only").answer(_prompt())
        body = srv.requests[0].body
    assert reply.text == "B" and _image_parts(provider, body) == []
    assert _user_parts(provider, body) == [{"type": "text", "text": "Which option? Reply with one letter."}]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_an_empty_prompt_still_sends_a_valid_message(provider: str) -> None:
    with ScriptedServer(["A", "A"]) as srv:
        answerer = _answerer(provider, srv)
        bare = answerer.answer(_prompt(text="", image=None, system=""))
        image_only = answerer.answer(_prompt(text=""))
        bodies = [r.body for r in srv.requests]
    assert bare.error is None and image_only.error is None
    assert _user_parts(provider, bodies[0]) == [{"type": "text", "text": EMPTY_QUESTION}]
    assert _system(provider, bodies[0]) == ""
    assert len(_user_parts(provider, bodies[1])) == 1 and len(_image_parts(provider, bodies[1])) == 1


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_server_error_storm_is_a_reply_error(provider: str) -> None:
    with ScriptedServer([Step.http_error(500)] * 2) as srv:
        reply = _answerer(provider, srv).answer(_prompt())
        assert len(srv.requests) == 2
    assert reply.text == "" and reply.error is not None
    assert reply.error.startswith("server_error: ") and "gave up after 2 attempts" in reply.error
    assert [entry["attempt"] for entry in reply.model_log] == [1, 2]
    exchange = ask_and_judge(lambda p: reply, _prompt())
    assert exchange.correct is None  # a failed call is neither right nor wrong


@pytest.mark.parametrize("provider", PROVIDERS)
def test_an_auth_failure_is_a_reply_error(provider: str) -> None:
    with ScriptedServer([Step.http_error(401, message="bad key"), "unused"]) as srv:
        reply = _answerer(provider, srv).answer(_prompt())
        assert len(srv.requests) == 1
    assert reply.error is not None and reply.error.startswith("client_error: ") and "bad key" in reply.error
    assert API_KEY not in reply.error + json.dumps(reply.model_log)


def test_a_spent_budget_is_a_reply_error_that_keeps_the_usage() -> None:
    with ScriptedServer([Step.reply("A", input_tokens=400, output_tokens=2)] * 2) as srv:
        answerer = _answerer("openai", srv, budget=Budget(max_tokens=300), send_images=False)
        crossed = answerer.answer(_prompt())
        refused = answerer.answer(_prompt())
        assert len(srv.requests) == 1
    assert crossed.error is not None and crossed.error.startswith("budget: ")
    assert (crossed.text, crossed.input_tokens, crossed.output_tokens) == ("", 400, 2) and crossed.model_log
    assert refused.error is not None and "refused" in refused.error and refused.model_log == []


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_lone_surrogate_in_the_reply_is_made_safe(provider: str) -> None:
    text = "A \ud800"
    if provider == "openai":
        body: dict[str, Any] = {"id": "x", "object": "chat.completion", "created": 0, "model": "scripted-model",
                                "choices": [{"index": 0, "finish_reason": "stop",
                                             "message": {"role": "assistant", "content": text}}],
                                "usage": {"prompt_tokens": 3, "completion_tokens": 2}}
    else:
        body = {"id": "x", "type": "message", "role": "assistant", "model": "scripted-model",
                "content": [{"type": "text", "text": text}], "stop_reason": "end_turn",
                "usage": {"input_tokens": 3, "output_tokens": 2}}
    with ScriptedServer([Step.body(body)]) as srv:
        reply = _answerer(provider, srv).answer(_prompt())
    assert reply.error is None and reply.text == "A \\ud800"
    json.dumps([reply.text, reply.model_log], ensure_ascii=False).encode("utf-8")  # all encodable


def test_model_answerer_closes_its_client() -> None:
    closed: list[bool] = []
    with ScriptedServer(["A"]) as srv:
        answerer = _answerer("openai", srv)
        answerer.client.close = lambda: closed.append(True)  # type: ignore[method-assign]
        answerer.close()
    assert closed == [True]
