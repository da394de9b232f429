"""The two-phase solver: any valid state in, an engine-verified solution out, Kociemba's own answer."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from helpers import apply

from cubebench.engine import ORIENTATIONS, SOLVED, TABLE, InvalidStateError, kernels, to_facelets
from cubebench.engine.notation import parse_array
from cubebench.engine.scramble import scramble
from cubebench.solver.twophase import MAX_SOLUTION_LENGTH, solve_twophase

REFERENCE = json.loads((Path(__file__).parent / "twophase_reference.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("group", ["random", "short", "g1", "held"])
def test_solutions_are_kociembas_move_for_move(group: str) -> None:
    """The ``kociemba`` package's (C, 1.2.1) solutions, recorded once (benchmarks/bench_twophase.py --reference):
    random cubes, short scrambles, cubes already in phase 2's subgroup (where a search that skipped phase 1 would
    answer differently) and one cube held 24 ways."""
    cases = [case for case in REFERENCE["cases"] if case["group"] == group]
    assert len(cases) >= 24
    for case in cases:
        assert solve_twophase(case["facelets"]) == case["solution"], case["facelets"]


@pytest.mark.parametrize("count", [100, pytest.param(1000, marks=pytest.mark.slow)])
def test_seeded_random_states_are_solved(count: int) -> None:
    rng = np.random.default_rng(2026)
    for _ in range(count):
        state = kernels.apply_moves(SOLVED, TABLE, np.asarray(scramble(30, "half", rng), dtype=np.int64))
        solution = solve_twophase(state)
        assert kernels.is_solved(kernels.apply_moves(state, TABLE, parse_array(solution)))
        assert len(solution.split()) <= MAX_SOLUTION_LENGTH


def test_the_second_search_answers_when_the_first_bounds_find_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    import cubebench.solver.twophase as twophase

    monkeypatch.setattr(twophase, "MAX_SOLUTION_LENGTH", 6)
    monkeypatch.setattr(twophase, "PHASE2_CAP", 1)
    state = kernels.apply_moves(SOLVED, TABLE, np.asarray(scramble(30, "half", np.random.default_rng(5)), dtype=np.int64))
    solution = solve_twophase(state)
    assert kernels.is_solved(kernels.apply_moves(state, TABLE, parse_array(solution)))
    assert 6 < len(solution.split()) <= twophase.FALLBACK[0]


def test_solved_cube_has_empty_solution() -> None:
    assert solve_twophase(SOLVED) == ""
    assert solve_twophase(to_facelets(SOLVED)) == ""
    assert solve_twophase(SOLVED[ORIENTATIONS[5]]) == ""


@pytest.mark.parametrize("orientation", range(24))
def test_rotated_cube_solution_acts_on_held_faces(orientation: int) -> None:
    state = apply("R U F' L D2 B", SOLVED)[ORIENTATIONS[orientation]]
    solution = solve_twophase(to_facelets(state))
    assert kernels.is_solved(kernels.apply_moves(state, TABLE, parse_array(solution)))
    assert all(tok[0] in "URFDLB" for tok in solution.split())


def test_bad_input_raises_engine_error_not_package_message() -> None:
    with pytest.raises(InvalidStateError, match="54 characters"):
        solve_twophase("UUU")
    with pytest.raises(InvalidStateError, match="twisted corner"):
        s = list(to_facelets(SOLVED))
        s[8], s[9], s[20] = "F", "U", "R"
        solve_twophase("".join(s))
    with pytest.raises(InvalidStateError, match="repeats"):
        solve_twophase(np.zeros(54, dtype=np.uint8))
