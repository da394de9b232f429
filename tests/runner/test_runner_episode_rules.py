"""Episode suites under the paper's budget or ours, their blind floors, the spine paper's tables, and private draws.

``--rules paper`` (the default) plays the CubeBench paper's 20 interaction steps with no move cap, ``strict``
our move budget per depth; the report and ``compare`` print the blind agent's floor under either.  ``--seed``
other than 0 plays a private draw of fresh certified instances instead of the public shipped sets, where a walk
that memorised the shipped sets stops scoring."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from cubebench.agents.llm.testing import RecordedRequest, ScriptedServer, Step
from cubebench.agents.scripted import move_calls
from cubebench.curriculum import certified_instances, load_instance_file
from cubebench.engine.notation import invert_sequence
from cubebench.engine.state import from_facelets
from cubebench.runner.cli import main
from cubebench.runner.compare import compare_runs
from cubebench.runner.protocols.episodes.instances import shipped_starts
from cubebench.runner.report import build_report, text_report
from cubebench.runner.store import open_run
from cubebench.shipped import largest_instance_file
from cubebench.solver.oracle import oracle
from helpers import needs

SMALL = {"schema": "cubebench-suite/1", "tiers": ["symbolic"], "instances": 2, "rewards": ["none"],
         "tool_settings": ["basic"], "metric": "quarter"}


def suite_file(folder: Path, name: str, depths: list[int], **extra: Any) -> Path:
    path = folder / f"{name}.json"
    path.write_text(json.dumps({**SMALL, "name": name, "depths": depths, **extra}))
    return path


def run(out: Path, suite: str | Path, agent: str, *extra: str) -> Path:
    assert main(["run", "--suite", str(suite), "--agent", agent, "--out", str(out), "--no-progress", "--quiet",
                 "--no-images", "--distance-budget", "0", *extra]) == 0
    return out


def solved_by_depth(path: Path) -> dict[int, float]:
    with open_run(path) as store:
        rows = store.rows()
    return {d: float(np.mean([r.solved for r in rows if r.depth == d])) for d in sorted({r.depth for r in rows})}


def floor_row(path: Path) -> list[str]:
    with open_run(path) as store:
        return build_report(store).tables[1].rows[-1]


# --- the paper's budget and ours ----------------------------------------------------------------------------------
def test_the_blind_floor_under_paper_is_what_the_blind_agent_scores(tmp_path: Path) -> None:
    """With no move cap the blind agent sweeps every position within 4 quarter turns, one fixed walk: the report's
    floor, computed without an env, is exactly what the agent scored, 1 at depths 1-3 and 0 at depth 8."""
    path = run(tmp_path / "blind.sqlite", suite_file(tmp_path, "exp1", [1, 3, 8]), "blind")  # named as the suite
    assert solved_by_depth(path) == {1: 1.0, 3: 1.0, 8: 0.0}
    assert floor_row(path) == ["blind floor (paper)", "every tier", "1.0", "1.0", ".00"]
    with open_run(path) as store:
        steps = [r.n_steps for r in store.rows()]
    assert max(steps) == 16  # the quarter-turn sweep: 24,530 turns in 15 move calls of at most 4096 characters, then done()
    # compare: the blind agent is above every published model at the short horizon, and exactly at its floor there
    comparison = compare_runs([path])
    exp1 = next(t for t, _ in comparison.tables if t.title.startswith("cubebench: Exp 1 ("))
    rows = {row[0]: row[1:] for row in exp1.rows}
    assert rows["run 1: blind"][0] == "1.00 (4/4)" and rows["blind floor (paper): run 1"][0] == "1.00"
    assert all(float(v.split()[0]) <= float(f) for v, f in zip(rows["run 1: blind"], rows["blind floor (paper): run 1"])
               if v != "-")


def test_under_strict_the_floor_is_small_and_the_budget_holds(tmp_path: Path) -> None:
    path = run(tmp_path / "strict.sqlite", suite_file(tmp_path, "floors", [2, 3, 8]), "blind", "--rules", "strict")
    row = floor_row(path)
    assert row[:2] == ["blind floor (strict)", "every tier"] and row[4] == ".00"
    assert all(float("0" + v) <= 0.05 for v in row[2:4])  # the budget holds a blind walk to 5 % at depths >= 2
    with open_run(path) as store:
        assert {r.n_moves <= {2: 5, 3: 22, 8: 40}[r.depth] for r in store.rows()} == {True}
        assert "rules: strict: our move budget per depth" in text_report(build_report(store))


def test_a_suite_that_fixes_its_move_budget_plays_strict_only(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fixed = suite_file(tmp_path, "fixed", [1], max_moves=9)
    assert main(["run", "--suite", str(fixed), "--agent", "random", "--out", str(tmp_path / "x.sqlite"),
                 "--rules", "paper", "--quiet", "--no-progress"]) == 2
    assert "--rules paper: suite 'fixed' has no such answer rules; it has strict" in capsys.readouterr().err
    path = run(tmp_path / "ok.sqlite", fixed, "random")
    with open_run(path) as store:
        assert store.get_meta("config")["play"]["rules"] == "strict"
        assert {record.config["env"]["max_moves"] for _, record in store.records()} == {9}


def test_exp1_under_paper_and_strict_report_their_floors_and_compare_sets_paper_beside_the_paper(tmp_path: Path) -> None:
    """The spine paper's Exp 1 (GPT-5 0.75 symbolic short, the MLP row, 0.00 long) beside exp1 runs: the paper run in
    the table with its blind floor (1.00 at the short horizon: the published 0.75 is below what a walk that never
    looks reaches under the paper's budget), the strict run listed apart with its own floor."""
    paper = run(tmp_path / "paper.sqlite", "exp1", "solver", "--tiers", "symbolic", "--depths", "1,2,3,4,8")
    strict = run(tmp_path / "strict.sqlite", "exp1", "solver", "--tiers", "symbolic", "--depths", "1,2,3,4,8",
                 "--rules", "strict")
    comparison = compare_runs([paper, strict])
    exp1, lines = next((t, lines) for t, lines in comparison.tables if t.title.startswith("cubebench: Exp 1 ("))
    rows = {row[0]: row[1:] for row in exp1.rows}
    assert rows["GPT-5"] == ["0.75", "0.00", "0.20", "0.40", "0.05", "0.00"]
    assert rows["MLP (Policy Gradient)"] == ["0.75", "0.00", "–", "–", "–", "0.00"]
    assert all(row[-1] == "0.00" for name, row in rows.items() if not name.startswith(("run", "blind")))
    assert rows["run 1: solver"][:2] == ["1.00 (72/72)", "1.00 (20/20)"]
    assert rows["blind floor (paper): run 1"][:2] == ["1.00", "0.00"]
    assert not any(name.startswith("run 2") for name in rows)
    apart = next(line for line in lines if line.startswith("run 2: solver (rules strict"))
    floor = float(re.search(r"Sym-Short 1.00 \(72/72\) \(blind floor ([0-9.]+)\)", apart).group(1))
    assert 0 < floor <= 0.10  # depth 1 (12 starts) is blind-solvable in part under any budget; depths 2-4 at most 5 %
    assert any("run 1: solver = " in h and "rules paper;" in h and "public shipped sets" in h for h in comparison.header)
    with open_run(strict) as store:
        assert "blind floor (strict)" in text_report(build_report(store))


# --- private draws --------------------------------------------------------------------------------------------
def test_the_table_free_draw_of_seed_0_is_the_shipped_sets() -> None:
    """The same generator, certified by the distance oracle instead of the solver: seed 0 gives every shipped set
    within the oracle's reach, instance for instance (so a private seed draws from the same curriculum)."""
    for metric in ("quarter", "half"):
        for depth in (1, 2, 3, 4, 8):
            drawn = certified_instances(depth, metric, 0, 20, table_free=True)
            assert [i.state for i in drawn] == [s.state for s in shipped_starts(depth, metric)[:20]]


def test_a_private_seed_plays_fresh_certified_instances(tmp_path: Path) -> None:
    suite = suite_file(tmp_path, "private", [3, 8], instances=3)
    path = run(tmp_path / "private.sqlite", suite, "solver", "--seed", "424242", "--rules", "strict")
    public = {d: {s.state for s in shipped_starts(d, "quarter")} for d in (3, 8)}
    with open_run(path) as store:
        assert store.get_meta("instance_draw") == "private" and store.get_meta("suite")["seed"] == 424242
        report = text_report(build_report(store))
        records = [record for _, record in store.records()]
    assert "a private draw of fresh certified instances (seed 424242" in report
    assert all(r.solved for r in records)  # the solver still scores 1.00: every start is certified
    for record in records:
        depth = record.config["depth"]
        assert record.start_facelets not in public[depth] or depth == 3  # depth 3 has 1,068 positions: overlap is luck
        assert oracle("quarter").distance(from_facelets(record.start_facelets)) == depth == record.distance_start
    assert not any(r.start_facelets in public[8] for r in records if r.config["depth"] == 8)


def test_half_turn_depth_20_has_no_private_draw(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    suite = suite_file(tmp_path, "deep", [20], metric="half")
    assert main(["run", "--suite", str(suite), "--agent", "solver", "--seed", "5", "--out", str(tmp_path / "x.sqlite"),
                 "--quiet", "--no-progress"]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith("cubebench: error: ") and "half-turn depth 20 has no private draw" in err


def memorised_walk(depth: int, metric: str) -> list[str]:
    """A walk that has memorised the public shipped set of ``depth``: solve instance 1, undo, solve 2, undo, ..."""
    turns: list[str] = []
    for instance in load_instance_file(largest_instance_file(metric, depth)):
        turns += invert_sequence(instance.scramble).split() + instance.scramble.split()
    return turns


@needs("openai")
def test_a_walk_that_memorised_the_shipped_sets_stops_scoring_on_a_private_draw(tmp_path: Path) -> None:
    """The trick, played through the runner by a model (the real client, a loopback server): at depth 8 it solves
    every public instance, blind, and no instance of a private draw, where the blind floor is 0."""
    calls = move_calls(memorised_walk(8, "quarter"))

    def reply(request: RecordedRequest) -> Step:
        step = sum(m.get("role") == "assistant" for m in request.body["messages"])
        return Step.reply(f'Thought: the next memorised solutions\nAction: move("{calls[min(step, len(calls) - 1)]}")')

    suite = suite_file(tmp_path, "memorised", [8], instances=4)
    with ScriptedServer(reply) as srv:
        agent = f"openai-compatible:{srv.base_url}:memoriser"
        public = run(tmp_path / "public.sqlite", suite, agent, "--model-attempts", "1")
        private = run(tmp_path / "private.sqlite", suite, agent, "--model-attempts", "1", "--seed", "977")
    assert solved_by_depth(public) == {8: 1.0} and solved_by_depth(private) == {8: 0.0}
    assert floor_row(private)[2] == ".00"


def test_a_resume_plays_the_same_private_draw(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    suite = suite_file(tmp_path, "resume", [4], instances=3)
    out = tmp_path / "resume.sqlite"
    assert main(["run", "--suite", str(suite), "--agent", "solver", "--seed", "31", "--limit", "1", "--out", str(out),
                 "--quiet", "--no-progress", "--distance-budget", "0"]) == 0
    assert main(["run", "--resume", str(out), "--seed", "32", "--quiet"]) == 2
    assert "--resume continues a run as it was configured; drop --seed" in capsys.readouterr().err
    assert main(["run", "--resume", str(out), "--quiet", "--no-progress"]) == 0
    with open_run(out) as store:
        starts = [record.start_facelets for _, record in store.records()]
        planned = [spec.reset_options["state"] for spec in store.plan()]
    assert sorted(starts) == sorted(planned) and len(set(starts)) == 3
    assert not set(starts) & {s.state for s in shipped_starts(4, "quarter")}
