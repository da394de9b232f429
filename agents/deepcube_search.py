"""Search over a learned cost-to-go: batched weighted A* (DeepCubeA's) and beam search, in quarter turns.

Both take a start state (engine state, centres in place), a heuristic mapping (N, 54) states to (N,) estimated
distances, and a move limit: no plan longer than ``max_moves`` is ever returned, so a plan always fits the
episode's budget.  Children are made with the engine's batched kernel
(:func:`cubebench.engine.apply.apply_batch`) and the heuristic is called once per batch of children.

Weighted A* pops the ``batch`` open nodes of least ``f = weight * g + h`` at once, expands them all, and stops when
a child is solved (the first solution it generates, as DeepCubeA does: not always the shortest).  Beam search keeps
the ``width`` children of least ``h`` at each depth.  Both stop at ``max_expansions`` expanded nodes or
``max_seconds`` of wall time and then report no plan.
"""

from __future__ import annotations

import heapq
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from cubebench.engine import kernels
from cubebench.engine.apply import apply_batch
from cubebench.engine.moves import MOVE_INDEX, QUARTER_ACTIONS

QUARTER_MOVES = np.array([MOVE_INDEX[a] for a in QUARTER_ACTIONS], dtype=np.int64)
"""Engine move of each of the 12 quarter-turn actions (``QUARTER_ACTIONS`` order: a turn, then its inverse)."""
N_TURNS = len(QUARTER_MOVES)

Heuristic = Callable[[np.ndarray], np.ndarray]


@dataclass
class SearchResult:
    """A plan (quarter-turn action indices into ``QUARTER_ACTIONS``; ``None``: none found) and what it cost."""

    plan: list[int] | None
    method: str
    expansions: int = 0
    generated: int = 0
    seconds: float = 0.0
    stopped: str = ""
    """Why the search gave up without a plan (``expansions``, ``time``, ``exhausted``); empty when it found one."""
    extra: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, object]:
        return {"method": self.method, "plan_length": None if self.plan is None else len(self.plan),
                "expansions": self.expansions, "generated": self.generated, "seconds": round(self.seconds, 4),
                "stopped": self.stopped, **self.extra}


def quarter_children(states: np.ndarray) -> np.ndarray:
    """(B * 12, 54): each state turned by each quarter turn; child ``12 b + a`` is state ``b`` after action ``a``."""
    parents = np.repeat(np.ascontiguousarray(states, dtype=np.uint8), N_TURNS, axis=0)
    return apply_batch(parents, np.tile(QUARTER_MOVES, len(states)))


def solved_mask(states: np.ndarray) -> np.ndarray:
    """Whether each of the (N, 54) states is solved."""
    out = np.zeros(len(states), dtype=np.bool_)
    kernels.batch_is_solved(np.ascontiguousarray(states, dtype=np.uint8), out)
    return out


class _Nodes:
    """The search tree: states, depth, parent and the action that led to each node (growable arrays)."""

    def __init__(self, start: np.ndarray) -> None:
        self.states = np.empty((1024, 54), dtype=np.uint8)
        self.g = np.empty(1024, dtype=np.int32)
        self.parent = np.empty(1024, dtype=np.int64)
        self.action = np.empty(1024, dtype=np.int8)
        self.size = 0
        self.add(start[None], np.zeros(1, np.int32), np.full(1, -1), np.full(1, -1))

    def add(self, states: np.ndarray, g: np.ndarray, parent: np.ndarray, action: np.ndarray) -> np.ndarray:
        n = len(states)
        while self.size + n > len(self.g):
            cap = 2 * len(self.g)
            self.states = np.resize(self.states, (cap, 54))
            self.g = np.resize(self.g, cap).astype(np.int32, copy=False)
            self.parent = np.resize(self.parent, cap).astype(np.int64, copy=False)
            self.action = np.resize(self.action, cap).astype(np.int8, copy=False)
        idx = np.arange(self.size, self.size + n)
        self.states[idx], self.g[idx], self.parent[idx], self.action[idx] = states, g, parent, action
        self.size += n
        return idx

    def path(self, node: int) -> list[int]:
        moves: list[int] = []
        while self.parent[node] >= 0:
            moves.append(int(self.action[node]))
            node = int(self.parent[node])
        return moves[::-1]


def _limits(expansions: int, started: float, max_expansions: int, max_seconds: float) -> str:
    if expansions >= max_expansions:
        return "expansions"
    return "time" if time.perf_counter() - started >= max_seconds else ""


def weighted_astar(start: np.ndarray, heuristic: Heuristic, *, max_moves: int, weight: float = 0.6,
                   batch: int = 100, max_expansions: int = 100_000, max_seconds: float = 30.0) -> SearchResult:
    """Batched weighted A* from ``start``: a plan of at most ``max_moves`` quarter turns, or none (module docstring)."""
    _check(start, max_moves, batch, max_expansions)
    started = time.perf_counter()
    result = SearchResult(plan=None, method="astar", extra={"weight": weight, "batch": batch})
    if solved_mask(start[None])[0]:
        result.plan = []
        return result
    nodes = _Nodes(start)
    best = {start.tobytes(): 0}  # state -> node holding its shortest known path
    heap: list[tuple[float, int]] = [(float(heuristic(start[None])[0]), 0)]
    while heap:
        stop = _limits(result.expansions, started, max_expansions, max_seconds)
        if stop:
            result.stopped = stop
            break
        chosen: list[int] = []
        while heap and len(chosen) < batch:
            _, node = heapq.heappop(heap)
            if best.get(nodes.states[node].tobytes()) == node and nodes.g[node] < max_moves:
                chosen.append(node)
        if not chosen:
            continue
        parents = np.asarray(chosen, dtype=np.int64)
        kids = quarter_children(nodes.states[parents])
        kid_parent = np.repeat(parents, N_TURNS)
        kid_g = nodes.g[kid_parent] + 1
        result.expansions += len(parents)
        result.generated += len(kids)
        done = np.flatnonzero(solved_mask(kids))
        if len(done):
            first = done[np.argmin(kid_g[done])]
            result.plan = nodes.path(int(kid_parent[first])) + [int(first % N_TURNS)]
            break
        keep = kid_g < max_moves  # a child at the move limit that is not solved leads nowhere in time
        claimed: dict[bytes, int] = {}  # state -> child index: its shortest new path in this batch
        for k in np.flatnonzero(keep):
            key = kids[k].tobytes()
            prior = claimed.get(key)
            if prior is not None:
                if kid_g[prior] > kid_g[k]:
                    claimed[key] = int(k)
                continue
            old = best.get(key)
            if old is None or nodes.g[old] > kid_g[k]:
                claimed[key] = int(k)
        if not claimed:
            continue
        fresh_idx = np.fromiter(claimed.values(), dtype=np.int64, count=len(claimed))
        h = np.asarray(heuristic(kids[fresh_idx]), dtype=np.float64)
        idx = nodes.add(kids[fresh_idx], kid_g[fresh_idx], kid_parent[fresh_idx], (fresh_idx % N_TURNS))
        for key, node, f in zip(claimed, idx, weight * kid_g[fresh_idx] + h):
            best[key] = int(node)
            heapq.heappush(heap, (float(f), int(node)))
    else:
        result.stopped = "exhausted"
    result.seconds = time.perf_counter() - started
    return result


def beam_search(start: np.ndarray, heuristic: Heuristic, *, max_moves: int, width: int = 1000,
                max_expansions: int = 1_000_000, max_seconds: float = 30.0) -> SearchResult:
    """Beam search from ``start``: keep the ``width`` children of least ``h`` at each depth (never a state seen at
    an earlier depth); a plan of at most ``max_moves`` quarter turns, or none."""
    _check(start, max_moves, width, max_expansions)
    started = time.perf_counter()
    result = SearchResult(plan=None, method="beam", extra={"width": width})
    if solved_mask(start[None])[0]:
        result.plan = []
        return result
    frontier = start[None].copy()
    paths = np.zeros((1, 0), dtype=np.int64)
    seen = {start.tobytes()}
    for _ in range(max_moves):
        stop = _limits(result.expansions, started, max_expansions, max_seconds)
        if stop:
            result.stopped = stop
            break
        kids = quarter_children(frontier)
        kid_paths = np.concatenate([np.repeat(paths, N_TURNS, axis=0),
                                    np.tile(np.arange(N_TURNS), len(frontier))[:, None]], axis=1)
        result.expansions += len(frontier)
        result.generated += len(kids)
        done = np.flatnonzero(solved_mask(kids))
        if len(done):
            result.plan = [int(a) for a in kid_paths[done[0]]]
            break
        unique: dict[bytes, int] = {}
        for k in range(len(kids)):
            key = kids[k].tobytes()
            if key not in seen:
                unique.setdefault(key, k)
        if not unique:
            result.stopped = "exhausted"
            break
        seen.update(unique)
        pick = np.fromiter(unique.values(), dtype=np.int64, count=len(unique))
        h = np.asarray(heuristic(kids[pick]))
        best = pick[np.argsort(h, kind="stable")[:width]]
        frontier, paths = kids[best], kid_paths[best]
    else:
        result.stopped = result.stopped or "depth"
    result.seconds = time.perf_counter() - started
    return result


def _check(start: np.ndarray, max_moves: int, batch: int, max_expansions: int) -> None:
    if np.shape(start) != (54,):
        raise ValueError(f"a start state is shaped (54,), got {np.shape(start)}")
    if max_moves < 0 or batch < 1 or max_expansions < 1:
        raise ValueError(f"max_moves must be >= 0 and the batch/width and max_expansions >= 1, got {max_moves}, "
                         f"{batch}, {max_expansions}")
