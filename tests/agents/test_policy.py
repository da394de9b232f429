"""The compact policy agent: one model call per move, the current state only, one move per reply.

Played through the runner with the real openai client against a loopback server: a server that answers each
prompt with an optimal move (read off the state the prompt shows, the exact oracle's) solves every episode, and
every request it sees is the fixed instruction and the current state alone; a server that answers anything else
wastes steps, never crashes an episode; the move budget binds the policy as it binds every agent."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import needs

from cubebench.agents.policy import POLICY_SYSTEM, parse_policy_reply, policy_messages
from cubebench.engine.facelets import FACES
from cubebench.engine.state import from_facelets
from cubebench.solver.oracle import metric_moves, oracle

QUARTER = metric_moves("quarter")


@pytest.mark.parametrize("reply, move", [("R'", "R'"), (" R' \n", "R'"), ("`U`", "U"), ("B.", "B"), ("F\u2019", "F'"),
                                         ('"D"', "D"), ("**L'**", "L'")])
def test_a_reply_that_is_one_move(reply: str, move: str) -> None:
    assert parse_policy_reply(reply, QUARTER) == move


@pytest.mark.parametrize("reply", ["", "R' U", "Move: R", "r", "R2", "x", "'R'", "R''", "I would turn R'", "R\nU"])
def test_anything_else_is_not_a_move(reply: str) -> None:
    with pytest.raises(ValueError, match="not one move"):
        parse_policy_reply(reply, QUARTER)


def test_the_prompt_is_the_instruction_the_state_and_the_moves() -> None:
    state = "BRFBUUBUURRDRRDFFDRFFUFFULLFDDFDDLLBUUUBLLBLLRBLRBDRBD"
    system, user = policy_messages(state, QUARTER)
    assert system == {"role": "system", "content": POLICY_SYSTEM}
    lines = user["content"].splitlines()
    assert lines[1:7] == [f"{face}: {' '.join(state[9 * k:9 * k + 9])}" for k, face in enumerate(FACES)]
    assert lines[-1] == "Moves: " + " ".join(QUARTER)
    grid = "Front face:\nR G G\nW G G\nW O O"
    assert policy_messages(grid, QUARTER)[1]["content"] == grid + "\nMoves: " + " ".join(QUARTER)


def state_of(prompt: str) -> str:
    """The 54 letters a policy prompt shows."""
    rows = [line.split(": ", 1)[1] for line in prompt.splitlines() if line[:2] in {f"{f}:" for f in FACES}]
    return "".join(rows).replace(" ", "")


def optimal_reply(request) -> str:
    messages = request.body["messages"]
    assert [m["role"] for m in messages] == ["system", "user"]  # no history, ever
    state = from_facelets(state_of(messages[1]["content"]))
    return oracle("quarter").progress_moves(state)[0]


pytestmark = needs("openai")


def run(tmp_path: Path, script, *extra: str) -> Path:
    from cubebench.agents.llm.testing import ScriptedServer
    from cubebench.runner.cli import main

    out = tmp_path / "run.sqlite"
    with ScriptedServer(script) as srv:
        argv = ["run", "--suite", "smoke", "--tiers", "symbolic", "--agent", f"openai-compatible:{srv.base_url}:m",
                "--style", "policy", "--out", str(out), "--no-progress", "--quiet", "--distance-budget", "0", *extra]
        assert main(argv) == 0
        requests = srv.requests
    assert requests and all(len(r.body["messages"]) == 2 for r in requests)
    assert all("Observation" not in r.body["messages"][1]["content"] for r in requests)
    return out


def rows(out: Path):
    from cubebench.runner.store import open_run

    with open_run(out) as store:
        return store.rows()


def test_an_optimal_server_solves_every_episode_in_its_depth_of_calls(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    found = rows(run(tmp_path, optimal_reply))
    assert found and all(r.solved and r.n_steps == r.depth == r.n_moves for r in found)


def test_replies_that_are_not_moves_are_wasted_steps(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from cubebench.runner.store import open_run

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    out = run(tmp_path, lambda request: "Let me think about this cube.")
    found = rows(out)
    assert found and all(r.status == "failed" and r.n_moves == 0 and r.n_steps == 20 for r in found)
    with open_run(out) as store:
        record = store.record(found[0].key)
    assert all(step.parse_error and "not one move" in step.parse_error for step in record.steps)


def test_the_move_budget_binds_the_policy_under_strict(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    found = rows(run(tmp_path, lambda request: "R", "--protocol", "strict"))
    shallow = [r for r in found if r.depth == 1]
    assert shallow and all(r.n_moves <= 5 and r.n_steps <= 5 for r in shallow)  # depth 1: a budget of 5 turns


def test_the_paper_protocol_gives_the_policy_its_twenty_steps(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    found = rows(run(tmp_path, lambda request: "R"))
    unsolved = [r for r in found if not r.solved]
    assert unsolved and all(r.n_moves == r.n_steps == 20 for r in unsolved)  # no move cap: one move per step
