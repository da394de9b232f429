"""CubeBench as Inspect AI tasks (cubebench.bridges.inspect): real ``inspect_ai.eval`` runs.

The model is Inspect's ``mockllm/model`` with scripted outputs, or Inspect's ``openai-api`` provider talking to
our scripted OpenAI-compatible server on 127.0.0.1; no other network.  The episodes an Inspect eval plays must
be the episodes ``cubebench run`` plays for the same replies: same moves, steps, solved flag, observations.
(mockllm outputs carry their usage: without it mockllm counts tokens with tiktoken, which downloads an encoding.)
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from helpers import extra_reason, needs

inspect_ai = pytest.importorskip("inspect_ai", reason=extra_reason("inspect_ai"))

from inspect_ai import eval as inspect_eval  # noqa: E402
from inspect_ai.log import EvalLog  # noqa: E402
from inspect_ai.model import ChatMessage, ContentImage, Model, ModelOutput, ModelUsage, get_model  # noqa: E402

from cubebench.agents.llm.testing import ScriptedServer  # noqa: E402
from cubebench.agents.records import EpisodeRecord  # noqa: E402
from cubebench.bridges.inspect import RECORD_KEY, episode, question_table, questions  # noqa: E402
from cubebench.bridges.inspect.questions import ITEM_RECORD_KEY  # noqa: E402
from cubebench.curriculum import load_instance_file  # noqa: E402
from cubebench.engine.notation import parse  # noqa: E402
from cubebench.engine.moves import MOVE_NAMES  # noqa: E402
from cubebench.runner.execute import PlaySettings  # noqa: E402
from cubebench.runner.protocols.episodes.play import play_episode  # noqa: E402
from cubebench.runner.protocols.questions.play import play_item  # noqa: E402
from cubebench.runner.protocols.episodes.instances import resolve_source  # noqa: E402
from cubebench.runner.protocols.episodes.plan import plan_episodes  # noqa: E402
from cubebench.runner.protocols.questions.plan import plan_items  # noqa: E402
from cubebench.runner.specs import AgentFactory, AgentSpec  # noqa: E402
from cubebench.runner.suite_fields import SuiteError  # noqa: E402
from cubebench.bridges.inspect.params import episode_suite, question_suite  # noqa: E402
from cubebench.shipped import largest_instance_file  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
USAGE = ModelUsage(input_tokens=7, output_tokens=3, total_tokens=10)


def output(text: str | None = None, tool: tuple[str, dict[str, Any]] | None = None) -> ModelOutput:
    """A mockllm output: a text reply or a tool call, with its usage."""
    made = ModelOutput.for_tool_call("mockllm/model", tool[0], tool[1]) if tool else \
        ModelOutput.from_content("mockllm/model", text or "")
    made.usage = USAGE
    return made


def mock(outputs: list[ModelOutput], seen: list[list[ChatMessage]] | None = None) -> Model:
    """mockllm replaying ``outputs`` in order (recording each call's input in ``seen``)."""
    queue = list(outputs)

    def reply(messages: list[ChatMessage], tools: Any, tool_choice: Any, config: Any) -> ModelOutput:
        if seen is not None:
            seen.append(list(messages))
        return queue.pop(0)

    return get_model("mockllm/model", custom_outputs=reply)


def run(task: Any, model: Model, tmp_path: Path, **options: Any) -> EvalLog:
    (log,) = inspect_eval(task, model=model, log_dir=str(tmp_path / "logs"), display="none", **options)
    assert log.status == "success", log.error
    return log


def undo(depth: int, index: int, metric: str = "quarter") -> str:
    """The moves that solve shipped certified instance ``index`` of ``depth``: its scramble, inverted."""
    path = largest_instance_file(metric, depth)
    assert path is not None
    scramble = load_instance_file(path)[index].scramble
    names = [MOVE_NAMES[m] for m in parse(scramble)]
    return " ".join(n[0] if n.endswith("'") else n if n.endswith("2") else n + "'" for n in reversed(names))


def record_of(log: EvalLog) -> EpisodeRecord:
    assert log.samples is not None and len(log.samples) == 1
    return EpisodeRecord.from_dict(log.samples[0].store[RECORD_KEY])


def scores(log: EvalLog) -> dict[str, float]:
    assert log.results is not None
    return {s.name: s.metrics["mean"].value for s in log.results.scores}


# --------------------------------------------------------------------------- episodes


def test_native_tool_calls_solve_an_episode_and_score_it(tmp_path: Path) -> None:
    solution = undo(1, 0)
    model = mock([output(tool=("move", {"seq": "R"})), output("thinking, no tool"),
                  output(tool=("move", {"seq": f"R' {solution}"}))])
    log = run(episode(tier="symbolic", depths=1, instances=1), model, tmp_path)
    assert scores(log) == {"solved": 1.0, "moves": 3.0, "rotations": 0.0, "steps": 3.0}
    record = record_of(log)
    assert record.status == "solved" and record.n_steps == 3 and record.parse_errors == 1
    assert [c.actions for s in record.steps for c in s.tool_calls] == [["R"], ["R'", *solution.split()]]
    sample = log.samples[0]  # type: ignore[index]
    meta = sample.scores["episode_outcome"].metadata  # type: ignore[index]
    assert meta["tier"] == "symbolic" and meta["horizon"] == "short" and meta["setting"] == "basic"
    assert meta["solver_answered"] is False and meta["distance_start"] == 1
    assert [m.role for m in sample.messages] == ["system", "user", "assistant", "tool", "assistant", "user",
                                                 "assistant", "tool"]
    assert "no tool call in your reply" in sample.messages[5].text


def test_an_unsolved_episode_scores_zero_and_a_refused_call_is_the_models_parse_error(tmp_path: Path) -> None:
    model = mock([output(tool=("solve_current", {})), output(tool=("move", {"seq": "U"})), output(tool=("done", {}))])
    log = run(episode(tier="face", depths=1, instances=1, agent="tools"), model, tmp_path)
    record = record_of(log)
    assert record.status == "failed" and record.n_steps == 3 and record.n_moves == 1
    assert record.parse_errors == 1  # solve_current is not a basic tool
    assert scores(log)["solved"] == 0.0


def test_image_tiers_send_the_view_as_an_inspect_image(tmp_path: Path) -> None:
    seen: list[list[ChatMessage]] = []
    model = mock([output(tool=("rotate", {"views": "y"})), output(tool=("done", {}))], seen)
    log = run(episode(tier="vertex", depths=1, instances=1), model, tmp_path)
    images = [[c for m in call for c in (m.content if isinstance(m.content, list) else []) if isinstance(c, ContentImage)]
              for call in seen]
    assert len(images[0]) == 1 and len(images[1]) == 2  # the first view, then the view after the rotation
    assert all(i.image.startswith("data:image/png;base64,") for i in images[1])
    assert record_of(log).n_rotations == 1
    text_only = mock([output(tool=("done", {}))], seen := [])
    run(episode(tier="vertex", depths=1, instances=1, obs_format="text"), text_only, tmp_path)
    assert not any(isinstance(c, ContentImage) for m in seen[0] for c in (m.content if isinstance(m.content, list) else []))


@needs("openai")  # our runner's side talks to the scripted server through the openai client
def test_react_through_inspect_records_what_our_runner_records(tmp_path: Path) -> None:
    """The same ReAct replies, once from mockllm through Inspect and once from the scripted server through
    ``cubebench run``'s play_episode: the same episode, step by step, and the same prompts."""
    solution = undo(2, 1)
    replies = ["Thought: try\nAction: move(\"F\")", "I will think more.", "Thought: undo\nAction: move(\"F'\")",
               f"Thought: solve\nAction: move(\"{solution}\")"]
    suite = episode_suite("exp1", tier="visual", depths=2, instances=2)
    spec = plan_episodes(suite, resolve_source(suite, warn=False))[1]
    settings = PlaySettings(store_images=False)
    with ScriptedServer(replies) as server:
        ours = play_episode(spec, AgentFactory(AgentSpec(spec=f"openai-compatible:{server.base_url}:scripted")),
                            settings)
        sent = [r.body["messages"] for r in server.requests]
    seen: list[list[ChatMessage]] = []
    log = run(episode(tier="visual", depths=2, instances=2, agent="react"), mock([output(r) for r in replies], seen),
              tmp_path, sample_id=spec.key)
    theirs = record_of(log)
    assert ours.status == theirs.status == "solved"
    for field in ("n_steps", "n_moves", "n_rotations", "solved", "parse_errors", "errors", "start_facelets",
                  "end_facelets", "total_reward", "distance_start"):
        assert getattr(ours, field) == getattr(theirs, field), field
    for a, b in zip(ours.steps, theirs.steps, strict=True):
        assert (a.observation_text, a.observation_sha256, a.reply, a.action, a.parse_error, a.moves) == \
               (b.observation_text, b.observation_sha256, b.reply, b.action, b.parse_error, b.moves)
        assert [(c.name, c.args, c.result, c.actions) for c in a.tool_calls] == \
               [(c.name, c.args, c.result, c.actions) for c in b.tool_calls]
    assert {k: v for k, v in ours.config.items() if k != "agent_seed"} == \
           {k: v for k, v in theirs.config.items() if k != "agent_seed"}
    # the model was shown the same conversation (texts; the images as Inspect images)
    last = seen[-1]
    assert [m.role for m in last] == [m["role"] for m in sent[-1]]
    assert last[0].text == sent[-1][0]["content"]
    assert all(isinstance(m.content, list) and isinstance(m.content[1], ContentImage) for m in last if m.role == "user")


@needs("openai")
def test_openai_api_provider_on_the_scripted_server_agrees_with_our_runner(tmp_path: Path) -> None:
    """Inspect's own OpenAI-compatible provider against our loopback server, beside our runner's client."""
    solution = undo(1, 3)
    replies = ["Thought: a\nAction: move(\"U\")", f"Thought: b\nAction: move(\"U' {solution}\")"]
    suite = episode_suite("exp1", tier="symbolic", depths=1, instances=4)
    spec = plan_episodes(suite, resolve_source(suite, warn=False))[3]
    with ScriptedServer(replies) as server:
        ours = play_episode(spec, AgentFactory(AgentSpec(spec=f"openai-compatible:{server.base_url}:scripted")),
                            PlaySettings(store_images=False))
        ours_sent = [r.body["messages"] for r in server.requests]
    with ScriptedServer(replies) as server:
        model = get_model("openai-api/scripted/scripted", base_url=server.base_url, api_key="none")
        task = episode(tier="symbolic", depths=1, instances=4, agent="react")
        (log,) = inspect_eval(task, model=model, sample_id=spec.key, log_dir=str(tmp_path / "logs"), display="none")
        inspect_sent = [r.body["messages"] for r in server.requests]
    assert log.status == "success", log.error
    theirs = record_of(log)
    assert (ours.status, ours.n_steps, ours.n_moves, ours.solved) == (theirs.status, theirs.n_steps, theirs.n_moves,
                                                                      theirs.solved) == ("solved", 2, 3, True)
    assert [s.action for s in ours.steps] == [s.action for s in theirs.steps]
    assert [s.input_tokens for s in ours.steps] == [s.input_tokens for s in theirs.steps]  # the server's usage
    assert [[(m["role"], m["content"]) for m in call] for call in ours_sent] == \
           [[(m["role"], m["content"]) for m in call] for call in inspect_sent]
    assert scores(log)["solved"] == 1.0


def test_codeact_runs_in_our_sandbox(tmp_path: Path) -> None:
    from cubebench.agents.sandbox import Sandbox, SandboxLimits

    try:
        Sandbox({}, SandboxLimits()).close()
    except Exception as err:  # noqa: BLE001 - the sandbox's own tests cover why it cannot start here
        pytest.skip(f"the CodeAct sandbox cannot start on this machine: {err}")
    solution = undo(1, 2)
    code = f"```python\nprint(move(\"{solution}\"))\n```"
    log = run(episode(tier="symbolic", depths=1, instances=3, agent="codeact"),
              mock([output("```python\nimport cubebench\n```"), output(code)]), tmp_path,
              sample_id="symbolic/d1/i02/none/basic")
    record = record_of(log)
    assert record.status == "solved" and record.n_steps == 2
    assert "ModuleNotFoundError" in record.steps[1].observation_text or "No module" in record.steps[1].observation_text


@pytest.mark.parametrize("params, message", [
    ({"tier": "cube"}, "tiers"), ({"horizon": "medium"}, "horizon"), ({"depths": "1,x"}, "integers"),
    ({"horizon": "short", "depths": 8}, "not in horizon"), ({"tool_setting": "oracle"}, "tool_settings"),
    ({"reward": "oracle"}, "oracle"), ({"suite": "cube-bench"}, "question suite"), ({"steps": 0}, "max_steps"),
])
def test_bad_episode_parameters_fail_before_any_sample(params: dict[str, Any], message: str) -> None:
    with pytest.raises(SuiteError, match=message):
        episode(**params)


def test_episode_parameters_select_the_papers_grids() -> None:
    exp3 = episode_suite("exp3", tier="face", horizon="long", instances=2)
    assert (exp3.tiers, exp3.depths, exp3.tool_settings, exp3.instances) == (("face",), (8, 12, 16, 20),
                                                                              ("basic", "standard", "ideal"), 2)
    half = episode_suite("exp1", metric="half", depths=[1, 2])
    assert half.metric == "half" and half.max_moves is None  # each depth's own budget, in the half-turn metric
    assert (half.move_budget(2), half.move_budget(8)) == (5, 30)
    with pytest.raises(ValueError, match="agent"):
        episode(agent="human")


# --------------------------------------------------------------------------- questions


def test_question_task_scores_with_each_tests_own_parser(tmp_path: Path) -> None:
    model = mock([output("<ANSWER> A </ANSWER>") for _ in range(8)])
    log = run(questions(tests="move-choice", depths=1, items=4, variants=["text", "image"]), model, tmp_path)
    assert log.samples is not None and len(log.samples) == 8
    for sample in log.samples:
        gold = [e["gold"] for e in sample.store[ITEM_RECORD_KEY]["config"]["exchanges"]]
        assert sample.scores["question_outcome"].value["passed"] == float(gold == ["<ANSWER> A </ANSWER>"])  # type: ignore
    table = question_table(log)
    assert set(table) == {("move-choice", "text", 1), ("move-choice", "image", 1)}
    assert table[("move-choice", "text", 1)]["acc"].k == 1 and table[("move-choice", "text", 1)]["parse"].k == 4
    assert scores(log)["passed"] == 0.25  # the correct slot is balanced over A-D


@needs("openai")
def test_question_items_agree_with_our_runner(tmp_path: Path) -> None:
    """A closed-loop item (several questions) through Inspect's openai-api provider and through play_item."""
    grid = question_suite(tests="closed-loop", depths=2, items=1, variants="standard")
    (spec,) = plan_items(grid)
    replies = ["<ANSWER> A </ANSWER>", "<ANSWER> B </ANSWER>", "<ANSWER> C </ANSWER>"]
    with ScriptedServer(replies, default="<ANSWER> A </ANSWER>") as server:
        ours = play_item(spec, AgentFactory(AgentSpec(spec=f"openai-compatible:{server.base_url}:scripted")), PlaySettings(store_images=False))
    with ScriptedServer(replies, default="<ANSWER> A </ANSWER>") as server:
        model = get_model("openai-api/scripted/scripted", base_url=server.base_url, api_key="none")
        log = run(questions(tests="closed-loop", depths=2, items=1, variants="standard"), model, tmp_path)
    theirs = EpisodeRecord.from_dict(log.samples[0].store[ITEM_RECORD_KEY])  # type: ignore[index]
    assert (ours.status, ours.n_steps, ours.solved) == (theirs.status, theirs.n_steps, theirs.solved)
    assert ours.config["score"] == theirs.config["score"] and ours.config["exchanges"] == theirs.config["exchanges"]
    assert [s.observation_text for s in ours.steps] == [s.observation_text for s in theirs.steps]


@pytest.mark.parametrize("params, message", [
    ({"tests": "nope"}, "unknown test"), ({"tests": "move-choice", "variants": "video"}, "variant"),
    ({"suite": "exp1"}, "episode suite"), ({"suite": "cube-bench-smoke", "tests": "nope"}, "has no test"),
    ({"depths": 99}, "depth"), ({"suite": "inf-bench"}, "ladders"),
])
def test_bad_question_parameters_fail_before_any_sample(params: dict[str, Any], message: str) -> None:
    with pytest.raises(SuiteError, match=message):
        questions(**params)


def test_the_question_task_covers_every_registered_test() -> None:
    from cubebench.tasks.registry import TESTS

    grid = question_suite()
    assert set(grid.tests) == set(TESTS)
    assert {spec.test for spec in plan_items(grid)} == set(TESTS)  # each at the default depths it can build
    smoke = question_suite("cube-bench-smoke", tests=["recovery", "move-choice"], items=1)
    assert set(smoke.tests) == {"recovery", "move-choice"} and all(g.items == 1 for g in smoke.tests.values())


# --------------------------------------------------------------------------- packaging


@needs("openai")
def test_inspect_eval_finds_the_tasks_by_package_name(tmp_path: Path) -> None:
    """``inspect eval cubebench/episode`` as docs/ecosystem.md writes it: the entry point registers the tasks."""
    solution = undo(1, 0)
    with ScriptedServer([f"Thought: t\nAction: move(\"{solution}\")"]) as server:
        env = {**os.environ, "SCRIPTED_BASE_URL": server.base_url, "SCRIPTED_API_KEY": "none",
               "INSPECT_LOG_DIR": str(tmp_path / "logs")}
        cli = Path(sys.executable).with_name("inspect")
        done = subprocess.run([str(cli), "eval", "cubebench/episode", "--model", "openai-api/scripted/scripted",
                               "-T", "tier=symbolic", "-T", "depths=1", "-T", "instances=1", "-T", "agent=react",
                               "--display", "plain", "--log-format", "json"],
                              cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    from inspect_ai.log import read_eval_log

    (path,) = (tmp_path / "logs").glob("*.json")
    log = read_eval_log(str(path))
    assert log.eval.task == "cubebench/episode" and scores(log)["solved"] == 1.0
