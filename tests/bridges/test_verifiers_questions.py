"""The verifiers bridge's question environment (``cubebench.bridges.verifiers.questions``): rows asked under an
answer rules as ``cubebench export-tasks`` and ``cubebench run`` ask them, and replies scored by those rules'
parser, through the installed verifiers' own rollout loop (0.4's ``verifiers.v1`` or 0.3's ``SingleTurnEnv``) and
its OpenAI-compatible client against our scripted loopback server.

Replies are shaped as models write them: reasoning that ends in the paper's final-answer form (right or wrong),
and the strict one-line form.  Under ``paper`` the first are read and the one-line STARE form is not (it has no
box); under ``strict`` only the one-line form is read."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from helpers import extra_reason

pytest.importorskip("verifiers", reason=extra_reason("verifiers"))
pytest.importorskip("openai", reason=extra_reason("openai"))

import verifiers  # noqa: E402

from cubebench.agents.llm.testing import RecordedRequest, ScriptedServer, Step  # noqa: E402
from cubebench.bridges import verifiers as bridge  # noqa: E402
from cubebench.bridges.verifiers import questions  # noqa: E402
from cubebench.runner.answering import REPLY_TOKENS  # noqa: E402
from cubebench.runner.export_tasks import ExportRequest, item_rows  # noqa: E402

V1 = bridge.API == "v1"
"""verifiers 0.4 (``verifiers.v1``) is installed; else 0.2-0.3."""
SMALL = {"stare-smoke": {"items": 2}, "inf-bench-smoke": {"depths": [1], "items": 2}}
"""Small question environments of the two suites whose paper rules differs from the strict forms."""


def gold_of(answer: str) -> str:
    """The gold in a row's answer (``\\\\boxed{Yes}``, ``<ANSWER> B </ANSWER>``, ``Answer: Yes``, ``B``)."""
    return re.sub(r"^(\\boxed\{|<ANSWER>|Answer:)|(\}|</ANSWER>)$", "", answer.strip()).strip()


def other(gold: str) -> str:
    return {"Yes": "No", "No": "Yes"}.get(gold) or next(c for c in "ABCD" if c != gold)


REPLIES = {
    "reasoned-right": lambda s, g: (f"Let me look at the {'net' if s == 'stare' else 'faces'} step by step. "
                                    f"Each option is checked in turn.\n\nSo the answer is "
                                    + (f"**\\boxed{{ {g} }}**." if s == "stare" else f"<ANSWER> {g} </ANSWER>")),
    "reasoned-wrong": lambda s, g: ("Thinking it through, the last option fits.\n"
                                    + (f"\\boxed{{{other(g)}}}" if s == "stare" else f"<ANSWER> {other(g)} </ANSWER>")),
    "one-line": lambda s, g: f"Answer: {g}" if g in ("Yes", "No") else g,
}
"""Reply kinds, each ``(suite family, gold) -> text``."""
EXPECTED = {  # (family, rules, kind) -> (correct, parsed)
    ("stare", "paper", "reasoned-right"): (1.0, 1.0), ("stare", "paper", "reasoned-wrong"): (0.0, 1.0),
    ("stare", "paper", "one-line"): (0.0, 0.0),  # no box: STARE's paper form is the box
    ("stare", "strict", "reasoned-right"): (0.0, 0.0), ("stare", "strict", "reasoned-wrong"): (0.0, 0.0),
    ("stare", "strict", "one-line"): (1.0, 1.0),
    ("inf", "paper", "reasoned-right"): (1.0, 1.0), ("inf", "paper", "reasoned-wrong"): (0.0, 1.0),
    ("inf", "paper", "one-line"): (1.0, 1.0),  # a bare letter is what the paper's user prompt asks for
    ("inf", "strict", "reasoned-right"): (0.0, 0.0), ("inf", "strict", "reasoned-wrong"): (0.0, 0.0),
    ("inf", "strict", "one-line"): (1.0, 1.0),
}


def make_env(split: str = "train", **kwargs: Any) -> Any:
    """``load_question_environment(**kwargs)``; under 0.4 on ``split`` (0.3 holds both splits)."""
    return bridge.load_question_environment(**kwargs, **({"split": split} if V1 else {}))


def rows(env: Any, split: str = "train") -> list[tuple[list[dict[str, str]], str, dict[str, Any]]]:
    """``(messages, answer, info)`` of each row (0.3) or task (0.4) of ``split``."""
    if V1:
        return [([{"role": m.role, "content": m.content} for m in t.data.prompt], t.data.answer, dict(t.data.info))
                for t in env.taskset]
    data = env.get_dataset() if split == "train" else env.get_eval_dataset()
    return [([{"role": m["role"], "content": m["content"]} for m in r["prompt"]], r["answer"], json.loads(r["info"]))
            for r in data]


def rollouts(env: Any, server: ScriptedServer) -> list[tuple[float, float, float]]:
    """``(correct, parsed, reward)`` of every train row rolled out once through verifiers' own client and loop."""
    if V1:
        import asyncio

        import verifiers.v1 as vf

        ctx = vf.ModelContext(model="scripted", client=vf.EvalClientConfig(base_url=server.base_url,
                                                                           api_key_var="CUBEBENCH_TEST_NO_KEY"))

        async def run() -> list[Any]:
            limit = asyncio.Semaphore(4)

            async def one(task: Any) -> Any:
                async with limit:
                    return await env.run_episode(task, ctx)

            async with env.serving():
                return await asyncio.gather(*(one(t) for t in env.taskset))

        out = []
        for episode in asyncio.run(run()):
            assert episode.ok, episode.errors
            (trace,) = episode.traces
            out.append((trace.rewards["correct"].score, trace.metrics["parsed"], float(trace.reward)))
        return out
    from openai import AsyncOpenAI

    client = verifiers.OpenAIChatCompletionsClient(AsyncOpenAI(base_url=server.base_url, api_key="none",
                                                                max_retries=0))
    outputs = env.generate_sync(env.get_dataset(), client=client, model="scripted", max_concurrent=4)["outputs"]
    return [(o["metrics"]["correct"], o["metrics"]["parsed"], float(o["reward"])) for o in outputs]


@pytest.mark.parametrize("suite", sorted(SMALL))
@pytest.mark.parametrize("rules", ["paper", "strict"])
@pytest.mark.parametrize("kind", sorted(REPLIES))
def test_replies_are_scored_by_the_environments_rules(suite: str, rules: str, kind: str) -> None:
    family = suite.split("-")[0]
    env = make_env(suite=suite, rules=rules, train_fraction=1.0, **SMALL[suite])
    asked = rows(env)
    gold = {messages[-1]["content"]: gold_of(answer) for messages, answer, _ in asked}

    def reply_to(request: RecordedRequest) -> Step:
        return Step.reply(REPLIES[kind](family, gold[request.body["messages"][-1]["content"]]))

    with ScriptedServer(reply_to) as server:
        outputs = rollouts(env, server)
        sent = [r.body for r in server.requests]
    assert len(outputs) == len(asked) >= 2
    correct, parsed = EXPECTED[(family, rules, kind)]
    assert outputs == [(correct, parsed, correct)] * len(asked)
    limit = REPLY_TOKENS[rules == "paper"]  # room for the reasoning the rules asks for, as a run gives
    assert all(b.get("max_tokens", b.get("max_completion_tokens")) == limit for b in sent)


@pytest.mark.parametrize("suite", sorted(SMALL))
@pytest.mark.parametrize("rules", [None, "paper", "strict"])
def test_rows_are_the_export_rows_of_the_same_rules(suite: str, rules: str | None) -> None:
    depths = SMALL[suite].get("depths")
    exported, summary = item_rows(ExportRequest(kind="items", out=".", suite=suite, images="none", rules=rules,
                                                train_fraction=0.5, items=2, depths=tuple(depths) if depths else None))
    assert summary.rules == (rules or "paper")
    env = make_env(suite=suite, rules=rules, train_fraction=0.5, **SMALL[suite])
    for split, export_split in (("train", "train"), ("eval", "test")):
        if V1 and split == "eval":
            env = make_env("eval", suite=suite, rules=rules, train_fraction=0.5, **SMALL[suite])
        mine = [(messages, answer, info["verifier"], info["rules"]) for messages, answer, info in rows(env, split)]
        theirs = [([{"role": m["role"], "content": m["content"]} for m in r["messages"]], r["answer"], r["verifier"],
                   summary.rules) for r in exported if r["split"] == export_split]
        assert mine == theirs and mine
    if suite.startswith("stare") and summary.rules == "paper":
        assert all(answer.startswith("\\boxed{") for _, answer, _ in rows(env, "eval"))


@pytest.mark.skipif(V1, reason="verifiers 0.3's loader (vf.load_environment by module name)")
def test_vf_load_environment_finds_the_question_module_under_0_3() -> None:
    env = verifiers.load_environment("cubebench.bridges.verifiers.questions", suite="stare-smoke", items=2)
    assert isinstance(env, verifiers.SingleTurnEnv) and env.env_args["rules"] == "paper"
    assert env.env_args["max_tokens"] == REPLY_TOKENS[True]


def test_a_row_from_another_rules_is_refused_by_the_judge() -> None:
    opts = questions.question_options(suite="stare-smoke", rules="strict", items=2, train_fraction=1.0)
    row = opts.rows["train"][0]
    assert questions.judge(row["info"], row["answer"], "strict").ok
    with pytest.raises(ValueError, match="asked under rules 'strict', not 'paper'"):
        questions.judge(row["info"], row["answer"], "paper")


@pytest.mark.parametrize("kwargs, message", [
    ({"suite": "stare-smoke", "rules": "nope"}, "no such answer rules; the rules are paper, strict, release"),
    ({"suite": "stare-smoke", "protocol": "release"}, "has no such answer rules; it has paper, strict"),  # the old name, still read
    ({"suite": "exp1"}, "is not a question suite"),
    ({"suite": "inf-bench-smoke"}, "export fixed levels with --depths"),
    ({"suite": "cube-bench-smoke", "tests": ["recovery"]}, "questions, each after the replies before it"),
    ({"suite": "stare-smoke", "tests": "net-fold"},
     "taskset.tests\n  Input should be a valid list" if V1 else "tests must be a non-empty list"),
    ({"suite": "stare-smoke", "max_tokens": 0}, "max_tokens must be an integer >= 1"),
    ({"suite": "stare-smoke", "train_fraction": 2.0}, "between 0 and 1"),
])
def test_bad_arguments_fail_with_a_clear_message(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        questions.load_environment(**kwargs)


@pytest.mark.parametrize("kwargs, message", [
    ({"items": "2"}, "items must be an integer >= 1, got '2'"), ({"items": 0}, "items must be an integer >= 1"),
    ({"seed": "x"}, "seed must be an integer, got 'x'"),
    ({"train_fraction": "0.5"}, "train_fraction must be a number in [0, 1], got '0.5'"),
])
def test_mistyped_arguments_from_python_are_named_not_a_type_error(kwargs: dict[str, Any], message: str) -> None:
    """Python callers pass what they like (verifiers 0.4's config coerces first; 0.3 hands the values on)."""
    with pytest.raises(ValueError, match=re.escape(message)):
        questions.question_options(suite="stare-smoke", **kwargs)


def test_a_huge_items_is_refused_at_once_naming_the_limit() -> None:
    """``items=10**6`` made 440 MB of rows in 40 s before planning was bounded; now one ValueError, at once."""
    from cubebench.runner import MAX_PLANNED

    with pytest.raises(ValueError, match=re.escape(f"plans 43,000,108 items; a plan holds at most {MAX_PLANNED:,}")):
        questions.question_options(suite="cube-bench", items=10 ** 6)


@pytest.mark.skipif(not V1, reason="verifiers 0.4's tasks carry the environment's rules")
def test_each_task_is_judged_under_the_environments_rules_not_its_rows() -> None:
    env = make_env(suite="stare-smoke", rules="strict", train_fraction=1.0, items=2)
    tasks = list(env.taskset)
    assert tasks and all(t.data.rules == "strict" for t in tasks)
    task = tasks[0]
    info = {**task.data.info, "rules": "paper",  # a whole row of another rules, as if mixed into this env
            "verifier": json.dumps({**json.loads(task.data.info["verifier"]), "rules": "paper"})}
    task = type(task)(task.data.model_copy(update={"info": info}), env.taskset.config.task)
    with pytest.raises(ValueError, match="was asked under rules 'paper', not 'strict'"):
        task._verdict(type("Trace", (), {"messages": []})())


def test_the_split_argument_belongs_to_the_installed_api() -> None:
    if V1:
        with pytest.raises(ValueError, match="split must be 'train' or 'eval'"):
            questions.load_environment(suite="stare-smoke", items=2, split="test")
        with pytest.raises(ValueError, match="the eval split has no rows"):
            questions.load_environment(suite="stare-smoke", items=2, train_fraction=1.0, split="eval")
    else:
        with pytest.raises(ValueError, match="split is for verifiers 0.4"):
            questions.load_environment(suite="stare-smoke", items=2, split="eval")


@pytest.mark.skipif(not V1, reason="verifiers 0.4's plugin loader (ids)")
def test_verifiers_v1_finds_the_question_taskset_and_harness_by_id() -> None:
    import verifiers.v1 as vf

    from cubebench.bridges.verifiers.question_taskset import QUESTIONS_PLUGIN_ID, CubeBenchQuestionTaskset
    from cubebench.bridges.verifiers.taskset import CubeBenchHarness

    config = vf.resolve_env_config({"taskset": {"id": QUESTIONS_PLUGIN_ID, "suite": "stare-smoke", "items": 2,
                                                "protocol": "strict"}})
    env = vf.load_environment(config)
    assert isinstance(env.taskset, CubeBenchQuestionTaskset) and env.taskset.opts.rules == "strict"  # "protocol": the old name, still read
    assert vf.utils.loaders.harness_class(QUESTIONS_PLUGIN_ID) is CubeBenchHarness


def test_the_docs_example_for_the_installed_verifiers_runs_as_written(capsys: pytest.CaptureFixture[str]) -> None:
    """docs/ecosystem.md's question example for the installed API, its server address pointed at the scripted
    server, whose model reasons and boxes the gold: every rollout printed is correct and parsed."""
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "docs" / "ecosystem.md").read_text()
    head = f"# verifiers {'0.4' if V1 else '0.3'}, question items\n"
    (code,) = [b for b in re.findall(r"```python\n(.*?)```", text, flags=re.S) if b.startswith(head)]
    opts = questions.question_options(suite="stare-smoke", rules="paper")
    gold = {r["prompt"][-1]["content"]: gold_of(r["answer"]) for rows in opts.rows.values() for r in rows}
    reply = REPLIES["reasoned-right"]
    with ScriptedServer(lambda r: Step.reply(reply("stare", gold[r.body["messages"][-1]["content"]]))) as server:
        exec(compile(code.replace("http://127.0.0.1:8000/v1", server.base_url), "docs/ecosystem.md", "exec"), {})
    printed = [line.split() for line in capsys.readouterr().out.splitlines() if line[:1].isdigit()]
    assert len(printed) == 4 and all(list(map(float, p)) == [1.0, 1.0, 1.0] for p in printed), printed
