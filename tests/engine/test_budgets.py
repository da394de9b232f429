"""The per-depth move budget: the blind bound it rests on, the `blind` agent that tests it, and room for
every plan the solver tools and the solver agent play.

A blind agent solves an instance only if its walk passes through the instance's inverse, a position at
the instance's depth; so the budget at depth d is set from the most depth-d positions a walk can pass
through and the largest probability the certified generator gives one of them (enumerated exactly).
"""

from __future__ import annotations

import json

import gymnasium as gym
import numpy as np
import pytest

import cubebench
from cubebench.agents.episode import run_episode
from cubebench.agents.scripted import BlindAgent, SolverAgent
from cubebench.budgets import (
    BLIND_SHARE, DEEP_ODDS, DESIGN_SHARE, LONG_BUDGET, PLAN_MARGIN, SET_SKEW, ball, blind_reach, blind_target, blind_walk, largest_odds, move_budget, odds,
    solved_by, sweep,
)
from cubebench.curriculum import random_scramble
from cubebench.engine import ORIENTATIONS
from cubebench.engine.facelets import SOLVED
from cubebench.engine.metric import metric_length
from cubebench.engine.moves import MOVE_INDEX, TABLE
from cubebench.engine.state import from_facelets
from cubebench.shipped import instances_dir
from cubebench.solver.twophase import solve_twophase

METRICS = ("quarter", "half")
DEPTHS = range(0, 21)


def shipped(metric: str) -> dict[tuple[int, str], np.ndarray]:
    """Every shipped certified set of ``metric`` as (depth, file name) -> states (one row each)."""
    sets = {}
    for path in sorted(instances_dir().glob(f"{metric}-d*.jsonl")):
        rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        assert {r["distance"] for r in rows} == {int(path.name.split("-d")[1][:2])}
        sets[(rows[0]["distance"], path.name)] = np.array([from_facelets(r["state"]) for r in rows])
    return sets


def solves(walk: list[str], states: np.ndarray) -> np.ndarray:
    """Which of ``states`` the blind ``walk`` solves: the cube is solved after some prefix of it."""
    return solved_by(walk, states) >= 0


def generator_mass(walk: list[str], metric: str, depth: int) -> float:
    """The generator's probability mass at ``depth`` that ``walk`` passes through (what it solves of fresh draws)."""
    g, weight, state, seen = ball(metric), odds(metric, depth), SOLVED, set()
    for turn in walk:
        state = state[TABLE[MOVE_INDEX[turn]]]
        seen.add(g.index.get(state.tobytes(), 0))
    return float(sum(weight[i] for i in seen))


# --- the bound -------------------------------------------------------------------------------------------------
def test_the_layers_are_counted_exactly() -> None:
    """The published distance distributions (quarter turns: 1, 12, 114, 1068; face turns: 1, 18, 243, 3240)."""
    assert [ball("quarter").layer(d) for d in range(4)] == [1, 12, 114, 1068]
    assert [ball("half").layer(d) for d in range(4)] == [1, 18, 243, 3240]


def test_the_generators_odds_are_exact_and_favour_positions_two_scrambles_reach() -> None:
    """Depth 2: a scramble never turns one face twice, so the quarter-turn half turns (X X) are never drawn
    (108 of 114 positions), and F B = B F is drawn twice as often as F U: 1/60 against 1/120."""
    q2, h2 = odds("quarter", 2), odds("half", 2)
    assert (q2 > 0).sum() == 108 and sorted(set(np.round(q2[q2 > 0] * 120, 9))) == [1.0, 2.0]
    assert (h2 > 0).sum() == 243 and sorted(set(np.round(h2[h2 > 0] * 270, 9))) == [1.0, 2.0]
    assert abs(q2.sum() - 1) < 1e-12 and abs(odds("quarter", 3).sum() - 1) < 1e-12
    assert [round(1 / largest_odds(d, "quarter")) for d in (2, 3, 8)] == [60, 480, 2400]
    assert [round(1 / largest_odds(d, "half")) for d in (2, 3)] == [135, 1620]
    # the enumeration agrees with the generator it describes: 24,000 seeded scrambles of depth 2
    g, rng = ball("quarter"), np.random.default_rng(3)
    drawn = np.zeros(len(g.depth))
    for _ in range(24_000):
        state = SOLVED
        for m in random_scramble(rng, 2, "quarter"):
            state = state[TABLE[m]]
        drawn[g.index[state.tobytes()]] += 1
    assert np.abs(drawn / drawn.sum() - q2).max() < 0.004


def test_a_quarter_turn_always_changes_the_depth_by_one_so_a_walk_lands_on_a_layer_every_other_turn() -> None:
    """The parity fact behind blind_reach: inside the ball every quarter turn moves one layer up or down
    (a face turn at most one), and the solved cube is the only position at depth 0."""
    for metric, steps in (("quarter", {-1, 1}), ("half", {-1, 0, 1})):
        g = ball(metric)
        inside = g.next >= 0
        change = g.depth[np.where(inside, g.next, 0)] - g.depth[:, None]
        assert set(np.unique(change[inside]).tolist()) == steps
        assert (~inside).sum(axis=1)[g.depth < g.radius].max() == 0  # only the outer layer has turns leaving it
    assert [blind_reach(b, 2, "quarter") for b in range(1, 8)] == [0, 1, 1, 2, 2, 3, 3]
    assert [blind_reach(b, 2, "half") for b in range(1, 5)] == [0, 1, 2, 3]


@pytest.mark.parametrize("metric", METRICS)
def test_the_budget_is_the_largest_that_holds_any_blind_walk_to_the_design_share_unless_the_margin_binds(
        metric: str) -> None:
    """Past the margin, one more turn would lift the blind bound over the design share; wherever the margin binds
    (depth 2) the bound still stays under 5 %."""
    cap = LONG_BUDGET[metric]
    for d in range(2, 21):
        budget, worst = move_budget(d, metric), largest_odds(d, metric)
        assert d + PLAN_MARGIN <= budget <= cap
        assert blind_reach(budget, d, metric) * worst < BLIND_SHARE
        if budget > d + PLAN_MARGIN:
            assert blind_reach(budget, d, metric) * worst <= DESIGN_SHARE + 1e-12
            assert budget == cap or blind_reach(budget + 1, d, metric) * worst > DESIGN_SHARE + 1e-12
        else:
            assert blind_reach(budget, d, metric) * worst > DESIGN_SHARE  # depth 2: the margin binds
    assert move_budget(0, metric) == move_budget(1, metric) == move_budget(2, metric)  # depth 1 is not told apart
    expected = {"quarter": [5] * 3 + [22] + [40] * 17, "half": [5] * 3 + [30] * 18}[metric]
    assert [move_budget(d, metric) for d in DEPTHS] == expected


@pytest.mark.slow
@pytest.mark.parametrize("metric", METRICS)
def test_the_deep_odds_are_depth_fours_and_fall_with_depth(metric: str) -> None:
    deep = float(odds(metric, 4, radius=4).max())
    assert abs(deep - DEEP_ODDS[metric]) < 1e-12 and deep < largest_odds(3, metric) < largest_odds(2, metric)


@pytest.mark.parametrize("bad", [-1, True, 2.0, "2"])
def test_a_bad_depth_is_refused(bad: object) -> None:
    with pytest.raises(ValueError, match="depth"):
        move_budget(bad)  # type: ignore[arg-type]


# --- the blind agent ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("metric, depth, share", [("quarter", 2, 0.033), ("quarter", 3, 0.019), ("half", 2, 0.029),
                                                  ("half", 3, 0.013)])
def test_the_blind_walk_comes_close_to_the_bound(metric: str, depth: int, share: float) -> None:
    """The generator's mass the walk passes through (the bound: 3.3 %, 2.1 %, 3.0 %, 1.7 %), for 8 seeds."""
    budget = move_budget(depth, metric)
    for seed in range(8):
        walk = blind_walk(metric, depth, budget, np.random.default_rng(seed))
        assert len(walk) == budget and set(walk) <= set(ball(metric).turns)
        mass = generator_mass(walk, metric, depth)
        assert share - 0.001 <= mass <= blind_reach(budget, depth, metric) * largest_odds(depth, metric) + 1e-12


def test_the_blind_agent_aims_at_the_depth_its_budget_names() -> None:
    assert (blind_target(5, "quarter"), blind_target(22, "quarter"), blind_target(40, "quarter")) == (2, 3, 4)
    assert (blind_target(5, "half"), blind_target(30, "half")) == (2, 3)
    assert blind_target(17, "quarter") == 2  # a budget the rule never gives: the densest layer past depth 1


@pytest.mark.parametrize("metric", METRICS)
def test_blind_solves_at_most_five_percent_of_every_shipped_set_at_depth_two_and_beyond(metric: str) -> None:
    """The blind agent's walk (as the agent builds it from the suite budget) on every shipped certified set,
    the 20-instance prefixes the suites play included, over 32 seeds: the mean share solved stays within 5 %
    at every depth >= 2.  The old budget (40 quarter, 30 face turns) let the same walk solve 10-22 % of depth 2."""
    for (depth, name), states in shipped(metric).items():
        budget = move_budget(depth, metric)
        rates = [solves(blind_walk(metric, blind_target(budget, metric), budget, np.random.default_rng(s)),
                           states).mean() for s in range(32)]
        if depth >= 2:
            assert np.mean(rates) <= BLIND_SHARE, (name, np.mean(rates))
        if depth == 2:
            old = [solves(blind_walk(metric, 2, LONG_BUDGET[metric], np.random.default_rng(s)), states).mean()
                   for s in range(32)]
            assert np.mean(old) > max(BLIND_SHARE, 2 * np.mean(rates)), (name, np.mean(old))


@pytest.mark.parametrize("metric", METRICS)
def test_no_shipped_set_holds_more_than_set_skew_times_its_share_of_what_a_blind_walk_reaches(metric: str) -> None:
    """The design share's second headroom, measured: over 256 seeds (fewer wander: 1.25 over 32 seeds, 1.50 over 256
    for the quarter-turn depth-3 set), the blind walk's mean share of each shipped set at depths 2-3 (and of its
    20-instance prefix, what the suites play) over its mean share of the generator's draws (1.25 and 1.50 for the
    quarter-turn 20-sets at depths 2 and 3, 1.57 for the half-turn depth-3 one)."""
    for (depth, name), states in shipped(metric).items():
        if not 2 <= depth <= 3:
            continue
        budget = move_budget(depth, metric)
        walks = [blind_walk(metric, depth, budget, np.random.default_rng(s)) for s in range(256)]
        fresh = np.mean([generator_mass(w, metric, depth) for w in walks])
        for played in {len(states): states, 20: states[:20]}.values():  # the whole set and what a suite plays
            skew = np.mean([solves(w, played).mean() for w in walks]) / fresh
            assert skew <= SET_SKEW, (name, len(played), skew)


def test_the_blind_agent_plays_through_the_episode_loop_and_sees_nothing() -> None:
    """One ``move`` call of the whole walk, stopped by the env on solving; what it plays never depends on the cube."""
    walks = []
    for instance in range(3):
        env = gym.make(cubebench.TIERS["face"], depth=2, max_steps=None)
        record = run_episode(BlindAgent(seed=5), env, reset_options={"instance": instance}, distance_budget_s=None)
        assert record.config["env"]["max_moves"] == move_budget(2) == 5
        assert record.n_moves <= 5 and record.steps[0].tool_calls[0].name == "move"
        walks.append(record.steps[0].tool_calls[0].args[0])
    assert len(set(walks)) == 1


# --- room for the plans -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("metric", METRICS)
def test_every_shipped_short_instance_keeps_room_for_the_solver_tools_plan_in_any_orientation(metric: str) -> None:
    """At the depths the budget tightens (1-3), the two-phase plan that ``solve``/``solve_current`` return
    and the solver agent plays, held any of 24 ways, fits: optimal at depths 1-2 (3 turns to spare), at most
    21 quarter turns at depth 3 (of 22)."""
    for (depth, name), states in shipped(metric).items():
        if depth > 3:
            continue
        longest = max(metric_length(solve_twophase(s[o]), metric) for s in states for o in ORIENTATIONS)  # type: ignore[arg-type]
        assert longest <= move_budget(depth, metric), name
        assert depth == 3 or (longest == depth and move_budget(depth, metric) - depth >= 3), name


@pytest.mark.parametrize("metric", METRICS)
def test_every_shipped_instance_leaves_a_margin_over_its_optimal_plan(metric: str) -> None:
    for depth, _ in shipped(metric):
        assert move_budget(depth, metric) - depth >= 3


@pytest.mark.slow
@pytest.mark.parametrize("metric", METRICS)
def test_every_shipped_instance_fits_the_solver_tools_plan_in_any_orientation(metric: str) -> None:
    for (depth, name), states in shipped(metric).items():
        longest = max(metric_length(solve_twophase(s[o]), metric) for s in states for o in ORIENTATIONS)  # type: ignore[arg-type]
        assert longest <= move_budget(depth, metric), name


@pytest.mark.parametrize("tier", ["symbolic", "vertex"])
def test_the_solver_agent_solves_every_short_shipped_instance_within_its_budget(tier: str) -> None:
    for depth in (1, 2):
        for instance in range(12 if depth == 1 else 20):
            env = gym.make(cubebench.TIERS[tier], depth=depth, max_steps=None)
            record = run_episode(SolverAgent(), env, reset_options={"instance": instance}, distance_budget_s=None)
            assert record.solved and record.config["env"]["max_moves"] == 5 and record.n_moves == depth


# --- no move cap: the sweep ---------------------------------------------------------------------------------
@pytest.mark.parametrize("metric, turns", [("quarter", 24530), pytest.param("half", 66248, marks=pytest.mark.slow)])
def test_the_sweep_solves_every_start_within_four_turns_and_none_deeper(metric: str, turns: int) -> None:
    """With no move cap a blind walk can pass through every position within 4 turns: played from every one of them
    (the ball is closed under inverses) it solves each, and no shipped start at depth 8."""
    walk = sweep(metric)
    assert len(walk) == turns and set(walk) <= set(ball(metric).turns)
    assert (solved_by(walk, ball(metric, 4).states) >= 0).all()
    deep = np.array([from_facelets(json.loads(line)["state"])
                     for line in (instances_dir() / f"{metric}-d08-n20.jsonl").read_text().splitlines()])
    assert (solved_by(walk, deep) < 0).all()


def test_solved_by_says_when_a_walk_solves_each_start() -> None:
    start = np.stack([SOLVED, SOLVED[TABLE[MOVE_INDEX["R"]]], SOLVED[TABLE[MOVE_INDEX["U"]]]])
    assert solved_by(["U", "U'", "R'", "R"], start).tolist() == [0, 3, -1]  # solved as it is; after U U' R'; never
