"""The episode move budget per depth: room for every optimal plan, too little for a blind walk.

A *blind* agent sees nothing but whether the cube is solved (the episode ends when it is).  Whatever
it does, its face turns trace one walk from the start, and it solves an instance ``s`` exactly when
the walk passes through ``s``'s inverse, a position at the same depth ``d``.  A walk of ``B`` turns
passes through at most :func:`blind_reach` positions at depth ``d``: it cannot be at depth ``d``
before turn ``d``, and in the quarter-turn metric every turn changes the depth by one, so only every
other turn can land there.

How likely each of those positions is depends on how instances are drawn, and a blind agent may
know that (the generator is open source): the certified sets are random scrambles of ``d`` moves
(:func:`cubebench.curriculum.random_scramble`) kept when their distance is exactly ``d``, so a
position two scrambles reach (``F B`` = ``B F``) is twice as likely as one only one reaches.
:func:`largest_odds` is the largest probability the generator gives one depth-``d`` position,
computed exactly by enumerating every scramble; no blind strategy, fixed, randomised or told the
depth, solves a drawn instance with probability above ``blind_reach(B, d) * largest_odds(d)``.

:func:`move_budget` is the largest budget that keeps that bound at or under :data:`DESIGN_SHARE`, capped at
:data:`LONG_BUDGET` (40 quarter turns, 30 face turns: the budget measured against reward probing at depth 8,
docs/environments.md), and never less than the optimal plan plus :data:`PLAN_MARGIN` (3 turns).
:data:`DESIGN_SHARE` is 5 % (:data:`BLIND_SHARE`) less two kinds of headroom: the sampling of a run's seeds
(a third), and the played 20-instance sets, which hold up to :data:`SET_SKEW` times the generator's share of
the likeliest positions (measured on every shipped set by tests/engine/test_budgets.py).  So quarter-turn depth
3 gets 22 (10 positions at 1/480: 2.1 %), which still fits the solver tools' plans (at most 21 quarter turns
in any orientation), and the half-turn depth 3 gets the cap (30).  At depth 2 the margin binds: 5 in both
metrics, whose bound (2 of the favoured quarter-turn positions, each drawn with probability 1/60, or 4
half-turn ones at 1/135: 3.3 % and 3.0 %) is over the design share but under 5 %; a tighter depth-2 budget
would leave one spare turn.  Depth 1 cannot be held to 5 % by any budget (one guess is 1 in 12): it gets
depth 2's budget, so the budget never tells depth 1 from depth 2.  Odds are enumerated to
:data:`EXACT_DEPTH`; deeper, depth 4's (:data:`DEEP_ODDS`) stand in (they fall with depth: 1/60, 1/480,
1/2400 at quarter-turn depths 2, 3, 4).
:func:`blind_walk` is the strongest blind strategy we have: greedy on those odds over the exact
distance ball.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Sequence

import numpy as np

from .curriculum import may_follow, scramble_moves
from .engine.facelets import SOLVED
from .engine.metric import TURN_ACTIONS, Metric, check_metric
from .engine import kernels
from .engine.moves import MOVE_INDEX, TABLE

__all__ = ["BLIND_SHARE", "DESIGN_SHARE", "PLAN_MARGIN", "SET_SKEW", "DEEP_ODDS", "LONG_BUDGET", "EXACT_DEPTH", "move_budget", "blind_reach", "largest_odds", "odds",
           "blind_target", "blind_walk", "SWEEP_RADIUS", "sweep", "solved_by", "Ball", "ball", "DEFAULT_MAX_MOVES", "DEFAULT_MAX_ROTATIONS", "episode_budget"]

BLIND_SHARE = 0.05
"""The most a blind agent may solve at any depth >= 2."""
SET_SKEW = 1.6
"""The most a played 20-instance set over-represents the likeliest positions: the blind walk's mean share of the set
over its share of the generator's draws (at most 1.57 on the shipped sets, over 256 seeds: tests/engine/test_budgets.py).
With it the design share is exactly 1/48, ten quarter-turn depth-3 positions at 1/480 each: a larger skew would
take depth 3 under the solver tools' 21-turn plans, which the same tests would refuse."""
PLAN_MARGIN = 3
"""The fewest spare turns over the optimal plan any budget leaves."""
DESIGN_SHARE = BLIND_SHARE * 2 / 3 / SET_SKEW
"""What the budget holds the blind bound to (2.1 %): two thirds of :data:`BLIND_SHARE`, the rest headroom for a run's
seeds (the suites play 20 instances, which resolves 5 % to one), over :data:`SET_SKEW` for the sets themselves."""
DEEP_ODDS: dict[str, float] = {"quarter": 1 / 2400, "half": 1 / 6075}
"""The largest odds at depth 4 (enumerated over the radius-4 ball by tests/engine/test_budgets.py, slow: 6-15 s),
which stand in for every deeper depth (the odds fall with depth: 1/60, 1/480, 1/2400 in quarter turns)."""
LONG_BUDGET: dict[str, int] = {"quarter": 40, "half": 30}
"""The cap: the budget of every depth the blind bound does not tighten (docs/environments.md, "Move budget")."""
DEFAULT_MAX_MOVES: dict[str, int] = dict(LONG_BUDGET)
"""The episode move budget (face turns, in the env's metric) at depths the blind bound does not tighten, and
for an episode whose depth is unknown (a given state or scramble); :func:`episode_budget` gives an episode
whose env has none :func:`move_budget` of its depth (5 quarter turns at depths 1-2, 22 at 3, 40 from 4).

Room for any optimal plan (God's number is 26 quarter turns, 20 face turns)
plus exploration, and for the two-phase solver's plan of every shipped
instance in any orientation (at most 36 quarter turns, 23 face turns); far
too little to enumerate (every sequence of 2 quarter turns, each undone, is
576 turns) or, but for luck (about 1 % of blind attempts at depth 8), to
follow the heuristic reward by trial and error.  The rule is in
docs/environments.md, "Move budget"; the measurements in docs/results/episodes.md."""
DEFAULT_MAX_ROTATIONS = 40
"""The view-rotation budget an evaluated episode on a partial tier gets when its env has none (two looks per step)."""
EXACT_DEPTH = 3
"""Depths whose odds are enumerated exactly; deeper ones use depth 3's (a bound: the odds fall with depth)."""
RULE_DEPTHS = range(0, 21)
"""The depths the rule is stated for (the shipped certified sets' 1-20)."""


@dataclass(frozen=True)
class Ball:
    """Every position within ``radius`` turns of solved, as a graph: ``states[i]`` (sticker arrays),
    ``depth[i]`` (exact, by breadth-first search), ``next[i, k]`` (the position after the metric's
    ``k``-th turn action, ``-1`` outside the ball) and ``index`` (a state's bytes -> its row)."""

    metric: str
    radius: int
    turns: tuple[str, ...]
    states: np.ndarray
    depth: np.ndarray
    next: np.ndarray
    index: dict[bytes, int]

    def layer(self, d: int) -> int:
        """The number of positions at exactly depth ``d`` (``d <= radius``)."""
        return int(np.count_nonzero(self.depth == d))


@lru_cache(maxsize=None)
def ball(metric: Metric, radius: int = EXACT_DEPTH) -> Ball:
    """The ball of ``radius`` around solved in ``metric`` (1,195 quarter-turn positions for radius 3)."""
    check_metric(metric)
    if not 0 <= radius <= 4:
        raise ValueError(f"ball radius must be 0..4 (radius 4 is 11,206 quarter-turn positions), got {radius}")
    turns = TURN_ACTIONS[metric]
    rows = TABLE[[MOVE_INDEX[t] for t in turns]]
    index = {SOLVED.tobytes(): 0}
    layers = [SOLVED[None, :]]
    depth = [0]
    for d in range(1, radius + 1):
        found = []
        for state in layers[-1]:
            for row in rows:
                nxt = state[row]
                key = nxt.tobytes()
                if key not in index:
                    index[key] = len(depth)
                    depth.append(d)
                    found.append(nxt)
        layers.append(np.array(found, np.uint8))
    states = np.concatenate(layers)
    nxt_index = np.array([[index.get(s[row].tobytes(), -1) for row in rows] for s in states], np.int64)
    return Ball(metric, radius, turns, states, np.array(depth, np.int64), nxt_index, index)


@lru_cache(maxsize=None)
def odds(metric: Metric, depth: int, radius: int = EXACT_DEPTH) -> np.ndarray:
    """The probability that the certified generator draws each position of :func:`ball` (0 off ``depth``):
    every scramble of ``depth`` moves enumerated with its probability (a uniform draw among the moves that may
    follow), those whose distance is exactly ``depth`` kept, and the kept mass renormalised."""
    if not 1 <= depth <= radius:
        raise ValueError(f"odds are enumerated for depths 1..{radius} (the ball's radius), got {depth!r}")
    g = ball(metric, radius)
    mass = [Fraction(0)] * len(g.depth)
    allowed = scramble_moves(metric)

    def walk(moves: list[int], p: Fraction, state: np.ndarray) -> None:
        if len(moves) == depth:
            i = g.index.get(state.tobytes(), -1)
            if i >= 0 and g.depth[i] == depth:
                mass[i] += p
            return
        fits = [m for m in allowed if may_follow(moves, m)]
        for m in fits:
            walk(moves + [m], p / len(fits), state[TABLE[m]])

    walk([], Fraction(1), SOLVED)
    total = sum(mass)
    return np.array([float(m / total) for m in mass])


def largest_odds(depth: int, metric: Metric) -> float:
    """The largest probability the generator gives one position at ``depth`` (:data:`DEEP_ODDS` beyond
    :data:`EXACT_DEPTH`)."""
    if depth > EXACT_DEPTH:
        return DEEP_ODDS[check_metric(metric)]
    return float(odds(metric, max(depth, 1)).max())


def blind_reach(budget: int, depth: int, metric: Metric) -> int:
    """The most positions at ``depth`` that any walk of ``budget`` turns from the start can pass through."""
    if budget < depth:
        return 0
    return (budget - depth) // 2 + 1 if check_metric(metric) == "quarter" else budget - depth + 1


@lru_cache(maxsize=None)
def move_budget(depth: int, metric: Metric = "quarter") -> int:
    """The episode move budget at certified ``depth``: the largest budget whose blind bound
    ``blind_reach * largest_odds`` stays at or under :data:`DESIGN_SHARE`, capped at :data:`LONG_BUDGET`, and at
    least ``depth`` + :data:`PLAN_MARGIN`; depths 0 and 1 get depth 2's (see the module docstring)."""
    check_metric(metric)
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 0:
        raise ValueError(f"depth must be an integer >= 0, got {depth!r}")
    d = max(depth, 2)
    cap = LONG_BUDGET[metric]
    worst = largest_odds(d, metric)
    budget = d
    while budget < cap and blind_reach(budget + 1, d, metric) * worst <= DESIGN_SHARE + 1e-12:
        budget += 1
    return min(max(budget, d + PLAN_MARGIN), cap)


def blind_target(budget: int, metric: Metric) -> int:
    """The depth a blind walk of ``budget`` turns should aim at: the shallowest depth >= 2 (of the depths the
    rule is stated for) whose :func:`move_budget` is ``budget``, else 2 (a budget the rule never gives)."""
    matches = [d for d in RULE_DEPTHS if d >= 2 and move_budget(d, metric) == budget]
    return min(matches, default=2)


def blind_walk(metric: Metric, depth: int, budget: int, rng: np.random.Generator | None = None) -> list[str]:
    """A walk of at most ``budget`` turns that passes through as much of the generator's mass at ``depth`` as
    it can: greedy on the odds of the positions one and two turns ahead, else the shortest way to the
    nearest position not yet passed.

    Seen from the start it is blind: one fixed sequence of turns for a given ``rng``.  It targets
    ``depth`` (clamped to 1..:data:`EXACT_DEPTH`) and moves on to the next depth when that one is used up.
    """
    rng = rng if rng is not None else np.random.default_rng(0)
    target = min(max(depth, 1), EXACT_DEPTH)
    g = ball(metric)
    weight = odds(metric, target)
    cur, walk = 0, []  # type: tuple[int, list[str]]
    while len(walk) < budget:
        if not weight.any():
            if target == EXACT_DEPTH:
                break
            target += 1
            weight = odds(metric, target).copy()
            continue
        k = _step(g, cur, weight, rng)
        cur = int(g.next[cur, k])
        walk.append(g.turns[k])
        weight = weight.copy()
        weight[cur] = 0.0  # passed: solving it is already accounted for
    return walk


def _step(g: Ball, cur: int, weight: np.ndarray, rng: np.random.Generator) -> int:
    """The turn to take from ``cur``: onto the likeliest unpassed position a turn away (ties: the one beside
    more unpassed mass), else to the neighbour beside the most unpassed mass, else toward the nearest."""
    order = rng.permutation(len(g.turns))
    best, best_score = -1, (0.0, 0.0)
    for k in order:
        nxt = int(g.next[cur, k])
        if nxt < 0:
            continue
        around = float(sum(weight[m] for m in g.next[nxt] if m >= 0 and m != nxt))
        score = (float(weight[nxt]), around)
        if score > best_score:
            best, best_score = int(k), score
    if best >= 0:
        return best
    return _toward_nearest(g, cur, weight, order)


def _toward_nearest(g: Ball, cur: int, weight: np.ndarray, order: np.ndarray) -> int:
    """The first turn of a shortest path (inside the ball) from ``cur`` to an unpassed position of the target."""
    first = {cur: -1}
    frontier = [cur]
    while frontier:
        later = []
        for node in frontier:
            for k in order:
                nxt = int(g.next[node, k])
                if nxt < 0 or nxt in first:
                    continue
                first[nxt] = int(k) if node == cur else first[node]
                if weight[nxt] > 0:
                    return first[nxt]
                later.append(nxt)
        frontier = later
    raise ValueError("no unpassed position is reachable inside the ball")


SWEEP_RADIUS = 4
"""How far :func:`sweep` reaches: every position within 4 turns of solved (11,206 quarter-turn positions, 46,741
half-turn ones; :func:`ball` builds no larger)."""


@lru_cache(maxsize=None)
def sweep(metric: Metric, radius: int = SWEEP_RADIUS) -> tuple[str, ...]:
    """The blind walk with no move cap: it passes through every position within ``radius`` turns of solved, depth by
    depth, greedy as :func:`blind_walk` (on the generator's odds at depths 1-3, on what is left unpassed deeper), so
    a blind agent that may make any number of moves solves every start that shallow and none deeper (the walk
    never leaves the ball).  One fixed walk (its ties broken by a fixed stream): 24,530 quarter turns or 66,248
    face turns for radius 4 (tests/engine/test_budgets.py holds both; building it takes about 3 s and 13 s)."""
    g = ball(metric, radius)
    rng = np.random.default_rng(0)
    passed = np.zeros(len(g.depth), bool)
    passed[0] = True
    cur, walk = 0, []  # type: tuple[int, list[str]]
    for target in range(1, radius + 1):
        weight = odds(metric, target, radius).copy() if target <= EXACT_DEPTH else (g.depth == target).astype(float)
        weight[passed] = 0.0
        while weight.any():
            k = _step(g, cur, weight, rng)
            cur = int(g.next[cur, k])
            walk.append(g.turns[k])
            passed[cur] = True
            weight[cur] = 0.0
    return tuple(walk)


def solved_by(walk: Sequence[str], states: np.ndarray) -> np.ndarray:
    """How many turns of ``walk`` each start (a row of ``states``, (n, 54) sticker arrays) needs before it is solved,
    ``-1`` where the walk never solves it: what a blind agent playing ``walk`` solves, played without an env."""
    moves = np.array([MOVE_INDEX[t] for t in walk], np.int64)
    return kernels.solved_after(np.ascontiguousarray(states, np.uint8).reshape(-1, 54), TABLE, moves)


def episode_budget(*, depth: int, metric: Metric, view_actions: bool, max_moves: int | None,
                   max_rotations: int | None, reset_options: dict | None = None) -> dict[str, int | None]:
    """The budget reset options (``max_moves``, ``max_rotations``) of an evaluated episode: never unbounded.

    An env's own budget (``max_moves``, ``max_rotations``) and budgets the reset options already give are
    kept; a missing move budget is :func:`move_budget` of the depth the reset will draw
    (``reset_options["depth"]``, else the env's ``depth``), or :data:`DEFAULT_MAX_MOVES` when the start is
    given as a state or scramble; a missing rotation budget is :data:`DEFAULT_MAX_ROTATIONS` where the env
    has the view actions.  Pure: the env's own budget is left as it is (``CubeEnv.reset`` applies these
    options to one episode only).
    """
    options = reset_options or {}
    max_moves = options.get("max_moves", max_moves)
    if max_moves is None:
        known = not ({"state", "scramble"} & set(options))
        depth = options.get("depth", depth)
        max_moves = move_budget(depth, metric) if known and isinstance(depth, int) and depth >= 0 \
            else DEFAULT_MAX_MOVES[metric]
    max_rotations = options.get("max_rotations", max_rotations)
    if max_rotations is None and view_actions:
        max_rotations = DEFAULT_MAX_ROTATIONS
    return {"max_moves": max_moves, "max_rotations": max_rotations}
