"""The report's exploration table: view rotations before the first face turn and the faces the agent had been
shown by then, on the partial tiers only.

The hand-built cases are derived from docs/conventions.md's views (Face shows the held cube's F, Vertex its U, F
and R; ``y`` brings R to the front, ``x`` brings D to the front and F to the top) and checked against what the
env itself shows; the report cases play real runs: the solver's exploration, a scripted model that sends a
malformed move and rotates twice in one step, an episode that never turns, error episodes, and runs the table
stays out of.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

from cubebench.agents.llm.testing import RecordedRequest, ScriptedServer, Step
from cubebench.engine import VIEW_ACTIONS
from cubebench.engine.facelets import CENTRES
from cubebench.runner.cli import main
from cubebench.runner.html_report import report_html
from cubebench.runner.protocols.episodes.exploration import FirstTurn, first_turn
from cubebench.runner.report import build_report, text_report
from cubebench.runner.store import open_run
from cubebench.tiers import PARTIAL_TIERS, TIER_SPECS
from helpers import edit_record, needs

TITLE = "Exploration before the first face turn (partial tiers)"


@pytest.mark.parametrize("tier, steps, expected", [
    ("face", [["R"]], (0, 1, True)),  # turns at once: it saw the front only
    ("face", [["y"], ["y"], ["y"], ["R"]], (3, 4, True)),  # F, then R, B and L brought to the front
    ("face", [["y", "y", "y", "R"]], (3, 1, True)),  # the same rotations in one step: nothing shown between them
    ("face", [["y"], ["y'"], ["R"]], (2, 2, True)),  # back to the front it had seen
    ("face", [["x"], ["x"], ["x"], ["x"], ["y"], ["y"], ["U"]], (6, 5, True)),  # F D B U F, then R and B: no L
    ("face", [[], ["y"], ["R"]], (1, 2, True)),  # a step that executed nothing (a malformed call) shows one view
    ("face", [["y"], ["y"]], (2, 2, False)),  # never turned; the view after its last step was never shown
    ("face", [], (0, 1, False)),
    ("face", [["R"], ["y"], ["y"], ["U"]], (0, 1, True)),  # only what comes before the first turn counts
    ("vertex", [["U"]], (0, 3, True)),  # a corner shows three faces at the start
    ("vertex", [["x"], ["x"], ["U"]], (2, 5, True)),  # U F R, then F D R, then D B R: all but L
    ("vertex", [["y"], ["y"], ["U"]], (2, 5, True)),  # U F R, then U R B, then U B L: all but D
    ("vertex", [["x", "z", "z"], ["R"]], (3, 6, True)),  # the opposite corner (the tier's looks, x z2) in one step
])
def test_hand_built_sequences_give_the_counts_the_conventions_predict(
        tier: str, steps: list[list[str]], expected: tuple[int, int, bool]) -> None:
    assert first_turn(tier, steps) == FirstTurn(*expected)


@pytest.mark.parametrize("tier", PARTIAL_TIERS)
def test_the_tiers_looks_one_rotation_a_step_show_every_face(tier: str) -> None:
    looks = TIER_SPECS[tier].quarter_looks()
    assert first_turn(tier, [[r] for r in looks] + [["R"]]) == FirstTurn(len(looks), 6, True)


def test_tiers_that_show_the_whole_cube_and_actions_no_env_has_are_refused() -> None:
    assert {"face", "vertex"} <= set(PARTIAL_TIERS)
    for tier in set(TIER_SPECS) - set(PARTIAL_TIERS):
        with pytest.raises(ValueError, match=f"the {tier} tier shows the whole cube"):
            first_turn(tier, [["R"]])
    with pytest.raises(ValueError, match="unknown tier 'sphere'"):
        first_turn("sphere", [])
    for action in ("M", "x2", "Q", "r"):  # slices, wide turns and doubled rotations are expanded before the env
        with pytest.raises(ValueError, match=f"'{action}' is not an action of a CubeBench env"):
            first_turn("face", [["y"], [action]])


@pytest.mark.parametrize("tier", PARTIAL_TIERS)
@pytest.mark.parametrize("start", ["R U F'", "x y' R U", "z2 F"])
def test_the_counts_are_what_the_env_shows_from_any_held_start(tier: str, start: str) -> None:
    """Random steps of rotations, then a face turn, played in the env: the faces seen are the distinct centre
    colours its observations showed at the start of each step (from a start held in another orientation too)."""
    spec = TIER_SPECS[tier]
    centres = [spec.visible.index(c) for c in CENTRES if c in spec.visible]
    rng = np.random.default_rng(len(start) + len(tier))
    env = gym.make(spec.env_id, obs_format="indices")
    for _ in range(20):
        steps = [[str(v) for v in rng.choice(VIEW_ACTIONS, size=int(rng.integers(0, 3)))]
                 for _ in range(int(rng.integers(0, 6)))] + [["F"]]
        obs, _ = env.reset(options={"scramble": start})
        shown: set[int] = set()
        for actions in steps:
            shown |= {int(obs[i]) for i in centres}
            for name in actions:
                obs = env.step(env.unwrapped.action_names.index(name))[0]
        rotations = sum(len(a) for a in steps) - 1
        assert first_turn(tier, steps) == FirstTurn(rotations, len(shown), True), steps
    env.close()


# --- the report ---------------------------------------------------------------------------------------------------
def _suite(folder: Path, tiers: list[str], **extra: Any) -> str:
    path = folder / "suite.json"
    path.write_text(json.dumps({"schema": "cubebench-suite/1", "name": "explore", "tiers": tiers, "depths": [1, 8],
                                "horizons": {"short": [1], "long": [8]}, "instances": 1, "rewards": ["none"],
                                "tool_settings": ["basic"], "metric": "quarter", **extra}))
    return str(path)


def _run(folder: Path, suite: str, agent: str, *extra: str) -> Path:
    out = folder / "run.sqlite"
    assert main(["run", "--suite", suite, "--agent", agent, "--out", str(out), "--no-progress", "--quiet",
                 "--no-images", "--distance-budget", "0", *extra]) in (0, 1)
    return out


def exploration_of(report: Any) -> Any:
    """The report's exploration table, or None."""
    return next((t for t in report.tables if t.title.startswith("Exploration")), None)


def _report(run: Path) -> tuple[Any, str, str]:
    with open_run(run) as store:
        report = build_report(store)
    return report, text_report(report), report_html(report, with_plots=False)


def test_the_solver_looks_at_every_face_before_it_turns(tmp_path: Path) -> None:
    report, text, page = _report(_run(tmp_path, _suite(tmp_path, ["symbolic", "face", "vertex"]), "solver"))
    table = exploration_of(report)
    assert table is not None and table.title == TITLE and TITLE in text and TITLE in page
    face, vertex = (len(TIER_SPECS[t].quarter_looks()) for t in ("face", "vertex"))
    assert table.rows == [  # no Symbolic row: it shows the whole cube
        ["sparse reward, basic tools", "Face", "short", "1", f"{face} ({face:.1f})", "6.0", "1.0", ".00 (0)"],
        ["sparse reward, basic tools", "Face", "long", "1", f"{face} ({face:.1f})", "6.0", "1.0", ".00 (0)"],
        ["sparse reward, basic tools", "Vertex", "short", "1", f"{vertex} ({vertex:.1f})", "6.0", "1.0", ".00 (0)"],
        ["sparse reward, basic tools", "Vertex", "long", "1", f"{vertex} ({vertex:.1f})", "6.0", "1.0", ".00 (0)"],
    ]
    assert "Face shows 1; Vertex shows 3" in table.note


def test_a_record_holding_an_action_no_env_has_is_left_out_and_named(tmp_path: Path) -> None:
    run = _run(tmp_path, _suite(tmp_path, ["face"]), "solver")
    key = "face/d1/i00/none/basic"

    def slice_move(record: dict[str, Any]) -> None:
        record["steps"][0]["tool_calls"][0]["actions"] = ["M"]

    edit_record(run, key, slice_move)
    report, text, _ = _report(run)
    assert exploration_of(report) is not None and [row[2:4] for row in exploration_of(report).rows] == [["long", "1"]]
    assert f"1 episode(s) left out, the first: {key} ('M' is not an action of a CubeBench env" in text


def test_symbolic_runs_and_runs_with_nothing_finished_have_no_exploration_table(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    report, text, page = _report(_run(tmp_path / "a", _suite(tmp_path / "a", ["symbolic", "visual"]), "solver"))
    assert exploration_of(report) is None and "Exploration" not in text and "Exploration" not in page
    (tmp_path / "b").mkdir()
    report, text, page = _report(_run(tmp_path / "b", _suite(tmp_path / "b", ["face"]), "solver", "--limit", "0"))
    assert exploration_of(report) is None and "No finished episodes yet." in text and "Exploration" not in page


@needs("openai")
def test_a_model_that_sends_a_bad_move_rotates_blind_or_never_turns_is_counted_as_it_was_shown(tmp_path: Path) -> None:
    """Face, basic: a malformed move, ``rotate("y")``, ``rotate("y y")`` in one step, ``move("R")``: 3 rotations and
    3 faces shown (F, R, L; B passed by within a step).  Face, ideal: ``done()`` at once: never turned.  Vertex: the
    model server fails, so every Vertex episode ends in error and is left out."""
    face_note = TIER_SPECS["face"].task_note.strip()
    script = ['move("Q")', 'rotate("y")', 'rotate("y y")', 'move("R")']

    def reply(request: RecordedRequest) -> Step:
        system = request.body["messages"][0]["content"]
        if face_note not in system:
            return Step.http_error(500, message="the vertex model is down")
        step = sum(m.get("role") == "assistant" for m in request.body["messages"])
        ideal = "solve_current" in system
        return Step.reply(f"Thought: t\nAction: {'done()' if ideal or step >= len(script) else script[step]}")

    suite = _suite(tmp_path, ["face", "vertex"], tool_settings=["basic", "ideal"])
    with ScriptedServer(reply) as srv:
        run = _run(tmp_path, suite, f"openai-compatible:{srv.base_url}:explorer", "--model-attempts", "1")
    with open_run(run) as store:
        statuses = {(r.part, r.setting): r.status for r in store.rows()}
        first = next(record for key, record in store.records() if key.startswith("face/d1/i00/none/basic"))
    assert {s for (tier, _), s in statuses.items() if tier == "vertex"} == {"error"}
    assert first.steps[0].tool_calls[0].error and first.steps[0].tool_calls[0].actions == []
    report, text, _ = _report(run)
    assert exploration_of(report) is not None
    assert exploration_of(report).rows == [
        ["basic tools", "Face", "short", "1", "3 (3.0)", "3.0", ".00", ".00 (0)"],
        ["basic tools", "Face", "long", "1", "3 (3.0)", "3.0", ".00", ".00 (0)"],
        ["ideal solver", "Face", "short", "1", "-", "-", "-", "1.0 (1)"],
        ["ideal solver", "Face", "long", "1", "-", "-", "-", "1.0 (1)"],
    ]
    assert "error episodes left out" in text


@needs("openai")
def test_a_run_whose_partial_episodes_all_errored_has_no_exploration_table(tmp_path: Path) -> None:
    with ScriptedServer(lambda request: Step.http_error(500)) as srv:
        run = _run(tmp_path, _suite(tmp_path, ["face"]), f"openai-compatible:{srv.base_url}:down",
                   "--model-attempts", "1")
    report, text, page = _report(run)
    assert {r.status for r in report.rows} == {"error"} and exploration_of(report) is None
    assert "Exploration" not in text and "Exploration" not in page
