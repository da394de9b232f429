"""A run that evaluated nothing says so: the first failure's cause on stderr as it arrives, a stop after
records in a row failed for a reason the next call repeats (no server, the key refused, nothing at the URL),
the headline ``n/a: every episode ended in error`` (never 0.00) and exit 1; in every protocol.  The model
is the real openai client against a port where nothing listens, or the loopback scripted server.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from cubebench.agents.llm.testing import ScriptedServer, Step
from cubebench.agents.records import EpisodeRecord, StepRecord
from cubebench.runner.cli import main
from cubebench.runner.failures import STOP_AFTER, FailureWatch, systematic_failure
from cubebench.runner.store import open_run
from helpers import needs

pytestmark = needs("openai")

EPISODES = {"name": "tiny", "tiers": ["symbolic"], "depths": [1, 3], "instances": 2, "rewards": ["none"],
            "tool_settings": ["basic", "standard"]}
"""8 episodes: room to stop after STOP_AFTER of them."""


@pytest.fixture
def dead_url() -> str:
    """An OpenAI-style base URL on a loopback port where nothing listens (connection refused at once)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def _run(capsys, *argv: str) -> tuple[int, str, list[str]]:
    rc = main(["run", *argv, "--model-attempts", "1", "--no-progress"])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return rc, out, err.strip().splitlines()


def _suite(tmp_path: Path) -> str:
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(EPISODES))
    return str(path)


def test_a_run_with_no_model_server_stops_says_why_and_exits_1(tmp_path, capsys, dead_url) -> None:
    db = tmp_path / "run.sqlite"
    rc, out, lines = _run(capsys, "--suite", _suite(tmp_path), "--agent", f"openai-compatible:{dead_url}:m",
                          "--out", str(db))
    assert rc == 1
    first = next(i for i, line in enumerate(lines) if "ended in error:" in line)
    assert "connection failed" in lines[first] and "Connection refused" in lines[first]
    stopped = next(i for i, line in enumerate(lines) if line.startswith("cubebench: stopped:"))
    assert first < stopped  # the cause came as the first error did, before the stop
    assert lines[stopped].startswith(f"cubebench: stopped: {STOP_AFTER} episodes in a row ended in error: could not "
                                     f"connect to the model server: {STOP_AFTER} episode(s) played")
    assert lines[-1].startswith("cubebench: nothing was evaluated: every episode ended in error (model error: ")
    assert lines[-1].endswith(f"once the cause is fixed, play them again: cubebench run --resume {db} --retry-errors")
    assert "pass rate: n/a: every episode ended in error" in out and "0.00" not in out.split("errors:")[0]
    with open_run(db) as store:
        assert [r.status for r in store.rows()] == ["error"] * STOP_AFTER
    assert main(["report", str(db)]) == 0  # a report of it reads the same
    assert "pass rate: n/a: every episode ended in error" in capsys.readouterr().out



def test_once_the_cause_is_fixed_the_resume_command_evaluates_the_run(tmp_path, capsys) -> None:
    db, down = tmp_path / "run.sqlite", {"on": True}

    def model(request: object) -> Step:  # a server that drops every connection, then comes back
        return Step.drop() if down["on"] else Step.reply("Thought: t\nAction: done()")

    with ScriptedServer(model) as srv:
        rc, _, lines = _run(capsys, "--suite", _suite(tmp_path), "--agent", f"openai-compatible:{srv.base_url}:m",
                            "--out", str(db), "--quiet")
        assert rc == 1 and "could not connect to the model server" in "\n".join(lines)
        down["on"] = False
        command = lines[-1].rpartition("play them again: cubebench ")[2].split()
        assert command == ["run", "--resume", str(db), "--retry-errors"]
        assert main([*command, "--no-progress"]) == 0
    out, err = capsys.readouterr()
    assert "episodes: 8 of 8 finished" in out and "pass rate: 0.00 [" in out and "errors: 0" in out
    assert "ended in error" not in err


@pytest.mark.parametrize("status, reason", [(401, "the model server refused the key"),
                                            (404, "nothing answers at that URL or model name")])
def test_a_refused_key_or_a_wrong_url_stops_the_run(status, reason, tmp_path, capsys) -> None:
    with ScriptedServer([], default=Step.http_error(status, message="no such thing")) as srv:
        rc, _, lines = _run(capsys, "--suite", _suite(tmp_path), "--agent", f"openai-compatible:{srv.base_url}:m",
                            "--out", str(tmp_path / "run.sqlite"), "--quiet")
        asked = len(srv.requests)
    assert rc == 1 and f"ended in error: {reason}" in "\n".join(lines)
    assert f"HTTP {status}" in lines[-1] and asked == 3 * STOP_AFTER  # 3 failed calls end an episode; none retried


def test_failures_a_retry_may_cure_do_not_stop_the_run(tmp_path, capsys) -> None:
    """A server error (503) is retried and may pass: every episode is played, and still nothing was evaluated."""
    with ScriptedServer([], default=Step.http_error(503)) as srv:
        rc, out, lines = _run(capsys, "--suite", _suite(tmp_path), "--agent", f"openai-compatible:{srv.base_url}:m",
                              "--out", str(tmp_path / "run.sqlite"))
    assert rc == 1 and not any(line.startswith("cubebench: stopped") for line in lines)
    assert "episodes: 8 of 8 finished" in out and "n/a: every episode ended in error" in out
    assert sum("ended in error:" in line for line in lines) == 1  # the first cause once, not one line per record


def test_a_run_that_evaluated_something_keeps_its_rate_and_exit_0(tmp_path, capsys) -> None:
    replies = ["Thought: t\nAction: done()"] + [Step.http_error(503)] * 3  # one episode, then one error episode
    with ScriptedServer(replies, default="Thought: t\nAction: done()") as srv:
        rc, out, lines = _run(capsys, "--suite", _suite(tmp_path), "--agent", f"openai-compatible:{srv.base_url}:m",
                              "--out", str(tmp_path / "run.sqlite"))
    assert rc == 0 and "pass rate: 0.00 [" in out and "errors: 1 (resume with --retry-errors" in out
    assert sum("ended in error: model error:" in line for line in lines) == 1


def test_a_question_run_with_no_model_server_says_so(tmp_path, capsys, dead_url) -> None:
    rc, out, lines = _run(capsys, "--suite", "cube-bench-smoke", "--agent", f"openai-compatible:{dead_url}:m",
                          "--out", str(tmp_path / "q.sqlite"))
    assert rc == 1 and "items passed: n/a: every item ended in error" in out
    assert any(line.startswith(f"cubebench: stopped: {STOP_AFTER} items in a row ended in error") for line in lines)
    assert lines[-1].startswith("cubebench: nothing was evaluated: every item ended in error (connection: ")


@needs("pettingzoo")
def test_a_game_run_with_no_model_server_says_so(tmp_path, capsys, dead_url) -> None:
    rc, out, lines = _run(capsys, "--suite", "multi-smoke", "--agent", f"openai-compatible:{dead_url}:m",
                          "--out", str(tmp_path / "m.sqlite"))
    assert rc == 1 and "pass rate: n/a: every game ended in error" in out
    assert ".00 [" not in out and "n/a: every game of the cell ended in error" in out  # the team table says it too
    assert any(line.startswith(f"cubebench: stopped: {STOP_AFTER} games in a row ended in error") for line in lines)


def test_max_cost_0_lets_a_free_agent_play_to_the_end(tmp_path, capsys) -> None:
    assert main(["run", "--suite", _suite(tmp_path), "--agent", "solver", "--max-cost", "0", "--out",
                 str(tmp_path / "free.sqlite"), "--no-progress", "--quiet"]) == 0
    assert "cubebench: complete: 8 episode(s) played" in capsys.readouterr().err


def _record(status: str, log: list[dict]) -> EpisodeRecord:
    step = StepRecord(index=0, observation_text="", observation_sha256="", observation_png_b64=None, reply="",
                      action="", tool_calls=[], moves=0, reward=0.0, input_tokens=0, output_tokens=0, cost_usd=0.0,
                      latency_s=0.0, error="model error: x" if log else None, model_log=log)
    return EpisodeRecord(agent="m", config={}, start_facelets="", steps=[step], status=status)


def test_the_watch_counts_only_systematic_failures_in_a_row() -> None:
    refused = _record("error", [{"error_kind": "server_error", "status": 503},
                                {"error_kind": "connection", "status": None}])
    busy = _record("error", [{"error_kind": "rate_limit", "status": 429}])
    assert systematic_failure(refused) == "could not connect to the model server"
    assert systematic_failure(busy) is None and systematic_failure(_record("failed", [])) is None
    watch = FailureWatch("episode")
    assert watch.see("a", refused) == ["episode a ended in error: model error: x"]
    assert watch.see("b", refused) == [] and not watch.stop
    watch.see("c", busy)  # a failure a retry may cure breaks the row
    for key in "def":
        watch.see(key, refused)
    assert watch.stop and watch.outcome() == "stopped: 3 episodes in a row ended in error: could not connect to " \
                                             "the model server"
