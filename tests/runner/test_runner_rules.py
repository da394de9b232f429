"""A question run's answer rules and decoding: chosen on the command line, stored with the run, sent to the
model by the real openai and anthropic clients (against a loopback server), printed in the report; bad choices
are one line naming the choices."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cubebench.agents.llm.testing import RecordedRequest, ScriptedServer, Step
from cubebench.runner.protocols import protocol_named
from cubebench.runner.answering import LOCAL_REPLY_TOKENS, REPLY_TOKENS
from cubebench.runner.protocols.questions.settings import question_settings, reply_tokens
from cubebench.runner.cli import main
from cubebench.runner.execute import PlaySettings
from cubebench.runner.protocols.questions.play import play_item
from cubebench.runner.protocols.questions.plan import plan_items
from cubebench.runner.protocols.questions.suite import restrict_questions
from cubebench.runner.report import build_report, text_report
from cubebench.runner.specs import AgentSpec
from cubebench.runner.store import open_run
from cubebench.runner.suites import load_suite
from cubebench.tasks.stare.asking import STEP_BY_STEP
from helpers import needs

LLM = needs("openai", "anthropic")

NET_FOLD = ("--suite", "stare-smoke", "--tests", "net-fold", "--depths", "1", "--variants", "question,steps,frames,text")
"""Sixteen yes/no items (the paper's four setups x four nets)."""


def run(out: Path, agent: str, *extra: str) -> int:
    return main(["run", *NET_FOLD, "--agent", agent, "--out", str(out), "--no-progress", "--quiet", *extra])


def reasoned(req: RecordedRequest) -> Step:
    """A model that reasons, then boxes Yes (right on the half of the items whose net folds)."""
    return Step.reply("Let me fold it step by step.\n1. Face 1 stays down.\n2. ...\nSo it closes up.\n\n"
                      "**Final answer:** \\boxed{Yes}")


def config_of(path: Path) -> dict[str, Any]:
    with open_run(path) as store:
        return store.get_meta("config")


@LLM
@pytest.mark.parametrize("provider", ["openai", "anthropic", "openai-compatible"])
def test_a_question_run_sends_temperature_zero_and_room_to_reason(provider: str, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "run.sqlite"
    with ScriptedServer(reasoned) as srv:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
        monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", srv.root_url)
        agent = {"openai": "openai:gpt-4o", "anthropic": "anthropic:claude-scripted",
                 "openai-compatible": f"openai-compatible:{srv.base_url}:qwen"}[provider]
        assert run(out, agent, "--limit", "8", "--model-attempts", "1") == 0
        bodies = [r.body for r in srv.requests]
    length = "max_completion_tokens" if provider == "openai" else "max_tokens"
    assert len(bodies) == 8 and all(b["temperature"] == 0 and b[length] == REPLY_TOKENS[True] for b in bodies)
    assert all(STEP_BY_STEP.split("\\")[0] in str(b["messages"]) for b in bodies)
    config = config_of(out)
    assert config["play"]["rules"] == "paper"
    assert (config["agent"]["temperature"], config["agent"]["reply_max_tokens"]) == (0.0, 4096)
    with open_run(out) as store:
        records = [r for _, r in store.records()]
        report = text_report(build_report(store))
    assert all(r.parse_errors == 0 and r.solved == (r.config["item"]["truth"] == "Yes") for r in records)
    assert any(r.solved for r in records) and not all(r.solved for r in records)
    assert "rules: paper: each paper's own" in report
    assert "decoding: temperature 0; at most 4096 tokens per reply" in report


@LLM
@pytest.mark.parametrize("rules,limit", [("paper", REPLY_TOKENS[True]), ("strict", REPLY_TOKENS[False])])
def test_the_flags_override_the_papers_decoding_and_strict_needs_less_room(rules: str, limit: int,
                                                                          tmp_path: Path) -> None:
    with ScriptedServer(reasoned) as srv:
        agent = f"openai-compatible:{srv.base_url}:qwen"
        assert run(tmp_path / "default.sqlite", agent, "--limit", "1", "--rules", rules) == 0
        assert run(tmp_path / "chosen.sqlite", agent, "--limit", "1", "--rules", rules,
                   "--temperature", "0.7", "--reply-max-tokens", "300") == 0
        first, second = (r.body for r in srv.requests)
    assert (first["temperature"], first["max_tokens"]) == (0, limit)
    assert (second["temperature"], second["max_tokens"]) == (0.7, 300)
    assert config_of(tmp_path / "chosen.sqlite")["agent"]["temperature"] == 0.7
    with open_run(tmp_path / "default.sqlite") as store:
        [record] = [r for _, r in store.records()]
    assert record.parse_errors == (1 if rules == "strict" else 0)  # a reasoned reply is malformed when strict


@needs("torch", "transformers", "gguf", "accelerate")
def test_the_local_model_decodes_greedily_with_a_cap_that_fits_its_context(tmp_path: Path) -> None:
    """``local:PATH`` (here a tiny random model, in place of SmolLM2's GGUF) answers question items greedily, each
    reply capped at the local model's limit, its messages text only."""
    from cubebench.agents.llm.tiny_model import build_tiny_chat_model

    tiny = build_tiny_chat_model(tmp_path / "tiny")
    assert run(tmp_path / "local.sqlite", f"local:{tiny}", "--limit", "2") == 0
    with open_run(tmp_path / "local.sqlite") as store:
        records = [r for _, r in store.records()]
    requests = [entry["request"] for r in records for s in r.steps for entry in s.model_log]
    assert len(records) == 2 and requests
    assert all(q["temperature"] == 0 and q["max_new_tokens"] == LOCAL_REPLY_TOKENS for q in requests)
    assert all(isinstance(q["messages"][-1]["content"], str) for q in requests)  # text only, as the model reads


def test_the_local_model_gets_a_cap_that_fits_its_context() -> None:
    suite = load_suite("stare-smoke")
    agent, play = question_settings(suite, AgentSpec("local"), PlaySettings())
    assert (agent.reply_max_tokens, agent.temperature, play.rules) == (LOCAL_REPLY_TOKENS, 0.0, "paper")
    oracle, play = question_settings(suite, AgentSpec("oracle"), PlaySettings(rules="strict"))
    assert (oracle.temperature, oracle.reply_max_tokens, play.rules) == (None, None, "strict")


@pytest.mark.parametrize("suite,rules,reasons", [
    ("stare-smoke", "paper", True), ("inf-bench-smoke", "paper", True), ("stare-smoke", "strict", False),
    ("cube-bench-smoke", "paper", False), ("cube-bench-smoke", "strict", False), ("cube-bench-smoke", "release", True)])
def test_the_reply_limit_has_room_for_reasoning_only_where_a_test_asks_for_it(suite: str, rules: str,
                                                                             reasons: bool) -> None:
    """Cube Bench's paper forms are one line (1024 tokens); STARE's and Inf-Bench's paper prompts and the release's
    closed-loop and recovery steps reason first (4096)."""
    agent, _ = question_settings(load_suite(suite), AgentSpec("openai:gpt-4o"),
                                 PlaySettings(rules=rules))
    assert agent.reply_max_tokens == REPLY_TOKENS[reasons]
    assert reply_tokens("release", ["move-choice", "verification"]) == REPLY_TOKENS[False]  # the release's one-liners


@pytest.mark.parametrize("spec,greedy", [("openai:gpt-4o", 0.0), ("openai:gpt-5-chat-latest", 0.0), ("anthropic:claude-x", 0.0),
                                         ("openai:o1", None), ("openai:o3-mini", None), ("openai:o4-mini-2025-04-16", None),
                                         ("openai:gpt-5", None), ("openai:gpt-5.1-codex", None),
                                         ("openai:ft:o4-mini-2025-04-16:acme::abc123", None),
                                         ("openai:codex-mini-latest", None), ("openai:gpt-4.1", 0.0),
                                         ("openai:ft:gpt-4o-mini-2024-07-18:acme::x1", 0.0),
                                         ("openai-compatible:http://127.0.0.1:1/v1:o3", 0.0)])
def test_openais_reasoning_models_keep_their_only_temperature(spec: str, greedy: float | None) -> None:
    """The API refuses any temperature but the default for them (HTTP 400): the greedy default is left out and
    the run records the provider's default; a temperature the user gives is sent as given.  Their hidden reasoning
    counts against the reply limit, so they get room to reason even where the answer is one line."""
    suite = load_suite("cube-bench-smoke")  # one-line answers: 1024 tokens, but a reasoning model thinks first
    agent, _ = question_settings(suite, AgentSpec(spec), PlaySettings())
    assert agent.temperature == greedy
    assert agent.reply_max_tokens == REPLY_TOKENS[greedy is None]
    chosen, _ = question_settings(suite, AgentSpec(spec, temperature=1.0), PlaySettings())
    assert chosen.temperature == 1.0


@LLM
def test_a_reasoning_model_is_sent_no_temperature_and_the_report_says_so(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "o3.sqlite"
    with ScriptedServer(reasoned) as srv:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url)
        assert run(out, "openai:o3-mini", "--limit", "2", "--model-attempts", "1") == 0
        bodies = [r.body for r in srv.requests]
    assert len(bodies) == 2 and all("temperature" not in b and b["max_completion_tokens"] == 4096 for b in bodies)
    assert config_of(out)["agent"]["temperature"] is None
    with open_run(out) as store:
        assert "decoding: the provider's default temperature; at most 4096 tokens" in text_report(build_report(store))


@pytest.mark.parametrize("rules,reply", [(None, "Answer: "), ("strict", "Answer: "), ("paper", "\\boxed{")])
def test_a_run_stored_before_rules_resumes_in_the_strict_forms(rules: str | None, reply: str) -> None:
    suite = restrict_questions(load_suite("stare-smoke"), ["net-fold"], [1])
    spec = plan_items(suite)[0]
    record = play_item(spec, protocol_named("questions").factory(AgentSpec("oracle")), PlaySettings(rules=rules))
    assert record.solved and record.steps[0].reply.startswith(reply)


@pytest.mark.parametrize("argv,message", [
    (("--suite", "stare-smoke", "--rules", "socratic"),
     "--rules 'socratic': no such answer rules; the rules are paper, strict, release "
     "(suite 'stare-smoke' has paper, strict)"),
    (("--suite", "inf-bench-smoke", "--rules", "release"),
     "--rules release: suite 'inf-bench-smoke' has no such answer rules; it has paper, strict"),
    (("--suite", "smoke", "--protocol", "release"),  # the option's old name is read as --rules
     "--rules release: suite 'smoke' has no such answer rules; it has paper, strict"),
    (("--suite", "multi-smoke", "--rules", "paper"),
     "--rules chooses how question items are answered or an episode suite's budget; suite 'multi-smoke' has "
     "neither"),
    (("--suite", "smoke", "--reply-max-tokens", "100"),
     "--reply-max-tokens limits each answer to a question item; suite 'smoke' asks none"),
])
def test_bad_rules_choices_are_one_line_naming_the_choices(argv: tuple[str, ...], message: str, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "bad.sqlite"
    assert main(["run", *argv, "--agent", "random", "--out", str(out), "--no-progress", "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == f"cubebench: error: {message}" and "Traceback" not in "\n".join(err)
    assert not out.exists()


def test_a_resume_keeps_the_runs_rules(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run.sqlite"
    assert run(out, "oracle", "--rules", "strict", "--limit", "3") == 0
    assert main(["run", "--resume", str(out), "--rules", "paper", "--quiet"]) == 2
    assert "--resume continues a run as it was configured; drop --rules" in capsys.readouterr().err
    assert main(["run", "--resume", str(out), "--quiet", "--no-progress"]) == 0
    with open_run(out) as store:
        replies = [r.steps[0].reply for _, r in store.records()]
        report = text_report(build_report(store))
    assert len(replies) == 16 and all(r.startswith("Answer: ") for r in replies)
    assert "rules: strict: the strict one-line forms" in report and "decoding" not in report  # the oracle decodes nothing


def test_the_inspect_task_asks_under_the_suites_rules() -> None:
    pytest.importorskip("inspect_ai")
    from cubebench.bridges.inspect import questions
    from cubebench.runner.suites import SuiteError

    assert questions(suite="stare-smoke", items=1).metadata["rules"] == "paper"
    assert questions(suite="cube-bench-smoke", items=1, rules="release").metadata["rules"] == "release"
    with pytest.raises(SuiteError, match="suite 'stare-smoke' has no such answer rules; it has paper, strict"):
        questions(suite="stare-smoke", rules="release")
