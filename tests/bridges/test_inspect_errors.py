"""Failures of the Inspect tasks in Inspect's own terms (cubebench.bridges.inspect.task_errors).

A sample whose model calls failed is an Inspect sample error: the eval's status is ``error`` (or, where
``fail_on_error`` allows errors, ``success`` with the sample counted as an error and left out of the scores),
never a score of 0.  The dead endpoint is a port on 127.0.0.1 that nothing listens on; "offline" mockllm is a
mockllm whose outputs raise.  A bad task parameter is Inspect's one-message error, not a traceback.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from helpers import extra_reason, needs

inspect_ai = pytest.importorskip("inspect_ai", reason=extra_reason("inspect_ai"))

from inspect_ai import eval as inspect_eval  # noqa: E402
from inspect_ai._util.error import PrerequisiteError  # noqa: E402
from inspect_ai.log import EvalLog, read_eval_log  # noqa: E402
from inspect_ai.model import ChatMessage, Model, ModelOutput, get_model  # noqa: E402

from cubebench.agents.records import EpisodeRecord  # noqa: E402
from cubebench.bridges.inspect import RECORD_KEY, episode, questions  # noqa: E402
from cubebench.bridges.inspect.task_errors import TaskParameterError  # noqa: E402
from cubebench.bridges.inspect.questions import ITEM_RECORD_KEY  # noqa: E402
from cubebench.runner.suite_fields import SuiteError  # noqa: E402
from test_inspect_bridge import output, undo  # noqa: E402

INSPECT = str(Path(sys.executable).with_name("inspect"))


def dead_port() -> int:
    """A loopback port nothing listens on (bound, then closed)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def dead_model() -> Model:
    """Inspect's OpenAI-compatible provider pointed at the dead port (no retries: the first failure is final)."""
    return get_model("openai-api/dead/dead", base_url=f"http://127.0.0.1:{dead_port()}/v1", api_key="none")


def offline(outputs: list[ModelOutput | Exception], calls: list[int]) -> Model:
    """mockllm replaying ``outputs`` in order, where an exception is raised (the model is unreachable)."""
    queue = list(outputs)

    def reply(messages: list[ChatMessage], tools: Any, tool_choice: Any, config: Any) -> ModelOutput:
        calls.append(len(messages))
        item = queue.pop(0) if queue else ConnectionError("mock endpoint down")
        if isinstance(item, Exception):
            raise item
        return item

    return get_model("mockllm/model", custom_outputs=reply)


def evaluate(task: Any, model: Model, tmp_path: Path, **options: Any) -> EvalLog:
    (log,) = inspect_eval(task, model=model, log_dir=str(tmp_path / "logs"), display="none", max_retries=0,
                          **options)
    return log


def record(sample: Any, key: str = RECORD_KEY) -> EpisodeRecord:
    return EpisodeRecord.from_dict(sample.store[key])


# --------------------------------------------------------------------------- a dead endpoint


@pytest.mark.parametrize("agent", ["tools", "react"])
def test_an_episode_against_a_dead_endpoint_is_an_eval_error_not_a_score(tmp_path: Path, agent: str) -> None:
    log = evaluate(episode(tier="symbolic", depths=1, instances=1, agent=agent), dead_model(), tmp_path)
    assert log.status == "error" and log.results is None  # no "solved 0.000"
    assert log.error is not None and "ended as an error" in log.error.message
    (sample,) = log.samples or []
    assert sample.error is not None and not sample.scores
    assert "symbolic/d1/i00/none/basic" in sample.error.message and "APIConnectionError" in sample.error.message
    # what `inspect eval` prints is this traceback: the cause is in the message, the client's chain is not (it
    # was 500 lines of httpx and openai frames; now the frames down to the raise, about 90 lines)
    for traceback in (log.error.traceback, sample.error.traceback):
        assert "direct cause" not in traceback and "During handling" not in traceback and "httpx" not in traceback
    kept = record(sample)  # the episode record stays in the log, for the reader
    assert kept.status == "error" and kept.n_steps == 3  # the loop's consecutive-error limit
    assert all("Inspect's retries" in s.error or "APIConnectionError" in s.error for s in kept.steps)
    assert "not called" in kept.steps[-1].error  # the dead endpoint was tried once, not once per step


def test_questions_against_a_dead_endpoint_are_errors_left_out_of_the_score(tmp_path: Path) -> None:
    task = questions(tests="move-choice", depths=1, items=2, variants="text")
    log = evaluate(task, dead_model(), tmp_path, fail_on_error=False)  # errors allowed: the eval goes on
    assert log.status == "success" and log.samples is not None and len(log.samples) == 2
    assert all(s.error is not None and "ended as an error" in s.error.message for s in log.samples)
    assert all(not s.scores for s in log.samples)
    assert log.results is None or log.results.completed_samples == 0  # nothing scored: no "passed 0.000"
    assert record(log.samples[0], ITEM_RECORD_KEY).status == "error"
    strict = evaluate(task, dead_model(), tmp_path)  # Inspect's default: any sample error fails the eval
    assert strict.status == "error" and strict.results is None


# --------------------------------------------------------------------------- mockllm offline


def test_one_failed_sample_is_an_error_and_the_others_are_scored(tmp_path: Path) -> None:
    calls: list[int] = []
    model = offline([output("<ANSWER> A </ANSWER>"), ConnectionError("mock endpoint down")], calls)
    log = evaluate(questions(tests="move-choice", depths=1, items=2, variants="text"), model, tmp_path,
                   fail_on_error=False, max_samples=1)
    assert log.samples is not None and len(log.samples) == 2 and len(calls) == 2
    scored = [s for s in log.samples if s.error is None]
    failed = [s for s in log.samples if s.error is not None]
    assert len(scored) == 1 and len(failed) == 1 and "mock endpoint down" in failed[0].error.message  # type: ignore
    assert log.results is not None and log.results.completed_samples == 1
    (passed,) = log.results.scores
    assert passed.scored_samples == 1
    assert passed.metrics["mean"].value == scored[0].scores["question_outcome"].value["passed"]  # type: ignore


def test_a_failure_on_the_last_step_is_still_an_error(tmp_path: Path) -> None:
    """One step, and its call fails: the step budget ends the episode (``failed``), but it is no model's score."""
    calls: list[int] = []
    log = evaluate(episode(tier="symbolic", depths=1, instances=1, steps=1), offline([], calls), tmp_path)
    (sample,) = log.samples or []
    assert record(sample).status == "failed" and len(calls) == 1
    assert log.status == "error" and sample.error is not None and "mock endpoint down" in sample.error.message


def test_a_model_that_fails_mid_episode_stops_being_called(tmp_path: Path) -> None:
    calls: list[int] = []
    model = offline([output(tool=("move", {"seq": "R"})), ConnectionError("mock endpoint down")], calls)
    log = evaluate(episode(tier="symbolic", depths=1, instances=1), model, tmp_path)
    (sample,) = log.samples or []
    kept = record(sample)
    assert len(calls) == 2 and kept.n_steps == 4 and kept.n_moves == 1  # one move, then three error steps
    assert log.status == "error" and sample.error is not None


def test_no_model_at_all_is_an_error_on_the_command_line(tmp_path: Path) -> None:
    """``inspect eval cubebench/questions`` without ``--model``: Inspect's ``none`` model refuses every call."""
    env = {k: v for k, v in os.environ.items() if k != "INSPECT_EVAL_MODEL"}
    done = subprocess.run([INSPECT, "eval", "cubebench/questions", "-T", "tests=move-choice", "-T", "depths=1",
                           "-T", "items=1", "-T", "variants=text", "--display", "plain", "--log-dir",
                           str(tmp_path / "logs")], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)
    out = done.stdout + done.stderr
    assert "No model specified" in out and "ended as an error" in out, out[-3000:]
    assert "mean    0.000" not in out
    (path,) = (tmp_path / "logs").glob("*.eval")  # inspect eval exits 0 whatever its tasks' status: it is in the log
    log = read_eval_log(str(path))
    assert log.status == "error" and log.results is None


# --------------------------------------------------------------------------- Inspect's limits stay limits


def test_an_inspect_token_limit_ends_the_sample_as_a_limit_and_scores_it(tmp_path: Path) -> None:
    calls: list[int] = []
    model = offline([output(tool=("move", {"seq": "R"})) for _ in range(5)], calls)
    log = evaluate(episode(tier="symbolic", depths=1, instances=1), model, tmp_path, token_limit=15)
    (sample,) = log.samples or []
    assert log.status == "success" and sample.error is None
    assert sample.limit is not None and sample.limit.type == "token"
    assert sample.scores and sample.scores["episode_outcome"].value["solved"] == 0.0  # type: ignore[index]
    # 10 tokens a call: the second call goes over 15, and Inspect raises its limit instead of returning it
    assert record(sample).n_moves == 1 and len(calls) == 2


@needs("openai")
def test_a_working_endpoint_still_scores(tmp_path: Path) -> None:
    """The control: the same task against a live scripted server is scored, no error."""
    from cubebench.agents.llm.testing import ScriptedServer

    with ScriptedServer([f"Thought: t\nAction: move(\"{undo(1, 0)}\")"]) as server:
        model = get_model("openai-api/scripted/scripted", base_url=server.base_url, api_key="none")
        log = evaluate(episode(tier="symbolic", depths=1, instances=1, agent="react"), model, tmp_path)
    assert log.status == "success" and log.results is not None and log.results.completed_samples == 1
    assert log.samples is not None and log.samples[0].error is None


# --------------------------------------------------------------------------- task parameters


@pytest.mark.parametrize("args, message", [
    (["cubebench/episode", "-T", "tier=cube"], "each of tiers must be one of"),
    (["cubebench/episode", "-T", "tiers=face"], "unknown parameter tiers; the parameters are suite, tier, depths"),
    *[pytest.param(args, message, marks=pytest.mark.slow) for args, message in [  # the same path, other checks
        (["cubebench/episode", "-T", "agent=human"], "agent must be one of"),
        (["cubebench/episode", "-T", "send_images=maybe"], "send_images must be true or false"),
        (["cubebench/questions", "-T", "tests=[move-choice,nope]"], "unknown test ['nope']"),
    ]],
])
def test_a_bad_task_parameter_is_one_line_on_the_command_line(tmp_path: Path, args: list[str], message: str) -> None:
    env = {**os.environ, "COLUMNS": "250"}  # rich wraps the line at the terminal's width (80 without one)
    done = subprocess.run([INSPECT, "eval", *args, "--model", "mockllm/model", "--log-dir", str(tmp_path / "logs")],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    out = done.stdout + done.stderr
    lines = [line for line in out.splitlines() if line.strip()]
    assert done.returncode == 1, out[-2000:]
    assert "Traceback" not in out and len(lines) == 1, out[-3000:]
    assert lines[0].startswith(f"{args[0]}: inspect task parameters: ") and message in lines[0]


def test_a_task_parameter_error_is_a_suite_error_and_inspects_prerequisite_error() -> None:
    with pytest.raises(TaskParameterError) as caught:
        episode(tier="cube")
    assert isinstance(caught.value, SuiteError) and isinstance(caught.value, PrerequisiteError)
    assert str(caught.value).startswith("cubebench/episode: inspect task parameters: each of tiers")
    with pytest.raises(SuiteError, match="send_images"):
        questions(send_images="no")  # type: ignore[arg-type]
    with pytest.raises(TaskParameterError, match="agent must be one of"):
        episode(agent="human")
    with pytest.raises(TaskParameterError, match=r"unknown parameter tiers, variant; the parameters are suite, tests"):
        questions(tiers="face", variant="text")
