"""What ``run_episode`` spends on each step's true distance: by default only what is cheap (the table-free oracle
within its reach, the exact solver only where its tables exist), so a library call never builds the solver's
0.8 GB tables by surprise; ``distances="exact"`` asks the solver at any distance (and may build them)."""

from __future__ import annotations

from typing import Any, Iterator

import gymnasium as gym
import numpy as np
import pytest

import cubebench
from cubebench.agents import episode
from cubebench.agents.episode import run_episode
from cubebench.agents.scripted import RandomAgent
from cubebench.engine import SOLVED, TABLE, kernels
from cubebench.engine.notation import parse_array
from cubebench.solver.oracle import oracle

FAR = "R U F' L D B R' U2 F L B D2 R F' U' L' B2 D F R' U L2 B' D' F2"
"""A 25-move scramble: farther from solved than the oracle reaches, and so is every state a few moves from it."""


class TablesBuilt(BaseException):
    """The optimal solver started to load or build its tables (a BaseException: nothing on the way catches it)."""


@pytest.fixture
def no_tables(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> Iterator[None]:
    """The optimal solver's tables absent (an empty cache, none loaded in this process); starting their build
    raises :class:`TablesBuilt`."""
    from cubebench.solver.optimal import pruning, table_cache

    def build(*args: Any, **kwargs: Any) -> None:
        raise TablesBuilt("the optimal solver's tables were asked for")

    monkeypatch.setenv(table_cache.ENV_VAR, str(tmp_path))
    monkeypatch.setattr(pruning, "_PRUNE", {})
    monkeypatch.setattr(pruning, "_SMALL", None)
    monkeypatch.setattr(pruning, "prune_table", build)
    monkeypatch.setattr(pruning, "small_tables", build)
    yield


def _wander(scramble: str, **kwargs: Any):
    env = gym.make(cubebench.TIERS["symbolic"], max_steps=None)
    try:
        return run_episode(RandomAgent(seed=1), env, reset_options={"scramble": scramble}, max_steps=8,
                           capped=False, store_images=False, **kwargs)
    finally:
        env.close()


def _states_after_steps(scramble: str, record) -> list[np.ndarray]:
    state, states = kernels.apply_moves(SOLVED, TABLE, parse_array(scramble)), []
    for step in record.steps:
        for call in step.tool_calls:
            state = kernels.apply_moves(state, TABLE, parse_array(" ".join(call.actions)))
        states.append(state)
    return states


def test_a_wandering_agent_far_from_solved_builds_no_tables_by_default(no_tables: None) -> None:
    record = _wander(FAR)
    assert record.status == "failed" and record.n_steps == 8
    reach = oracle("quarter")
    expected = [reach.within_reach(s) for s in _states_after_steps(FAR, record)]
    assert [s.distance for s in record.steps] == expected
    assert None in expected  # the walk left the oracle's reach, and nothing was spent past it


def test_cheap_distances_near_solved_are_exact_without_tables(no_tables: None) -> None:
    record = _wander("R U")
    distances = [2] + [s.distance for s in record.steps]
    assert all(isinstance(d, int) for d in distances)
    # one quarter turn per step changes the quarter-turn distance by exactly one
    assert all(abs(a - b) == 1 for a, b in zip(distances, distances[1:]))


def test_exact_distances_ask_the_solver_for_its_tables(no_tables: None) -> None:
    with pytest.raises(TablesBuilt):
        _wander(FAR, distances="exact")


def test_cheap_distances_use_the_solver_where_its_tables_are_ready(monkeypatch: pytest.MonkeyPatch) -> None:
    import cubebench.solver.optimal as solver

    asked: list[float | None] = []

    def answered(state: np.ndarray, metric: str, *, time_limit: float | None = None) -> int:
        asked.append(time_limit)
        return 99

    monkeypatch.setattr(solver, "tables_ready", lambda metric: True)
    monkeypatch.setattr(solver, "optimal_distance", answered)
    record = _wander(FAR, distance_budget_s=0.25)
    within = [oracle("quarter").within_reach(s) for s in _states_after_steps(FAR, record)]
    assert [s.distance for s in record.steps] == [99 if d is None else d for d in within]
    assert asked and set(asked) == {0.25}
    monkeypatch.setattr(solver, "tables_ready", lambda metric: False)
    assert [s.distance for s in _wander(FAR, distance_budget_s=0.25).steps] == within  # not ready: not asked


def test_no_distances_are_computed_when_none_are_asked(no_tables: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(episode, "oracle", lambda metric: pytest.fail("the oracle was asked"))
    assert [s.distance for s in _wander(FAR, distances="none").steps] == [None] * 8


@pytest.mark.parametrize("kwargs,message", [
    ({"distances": "all"}, "distances='all'.*cheap, exact, none"),
    ({"distances": "exact", "distance_budget_s": None}, "needs distance_budget_s"),
])
def test_a_bad_distances_request_is_one_clear_error(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        _wander("R", **kwargs)
