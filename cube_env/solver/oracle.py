"""Exact distance-to-solved for the states question items use, in milliseconds and without tables.

Every label of a question item (the optimal option, a move's effect, progress in closed loop)
comes from exact distances.  Cube Bench's items sit near solved, so a breadth-first *ball* of
every state within ``radius`` moves of solved (half-turn: 5, 621 649 states; quarter-turn: 6,
983 926 states) answers them by lookup: a state in the ball has the distance it was found at.  A
state outside it is at least ``radius + 1`` away; looking up everything ``k`` moves from it
(``k`` = 1 to 4) gives its exact distance whenever that is at most ``radius + k`` (a shortest path
passes through the ball after ``k`` moves exactly then), so the ball answers up to 9 half turns
or 10 quarter turns exactly: the deepest items (8 and 9) and every state one move from them.
Farther states go to the exact optimal solver
(:mod:`cubebench.solver.optimal`, whose tables are built on first use).  Both are exact: no label
rests on a scramble's length or a heuristic.

A state is keyed by its 20 cubies: for each corner (edge) place, which cubie sits there and how
it is twisted (flipped), 5 bits each, in two 64-bit words; the ball is an open-addressing hash
table of these keys, built and probed in numba.
"""

from __future__ import annotations

from functools import lru_cache

import numba as nb
import numpy as np

from ..engine.facelets import sticker_geometry
from ..engine.kernels import apply_move
from ..engine.metric import Metric, check_metric
from ..engine.moves import MOVE_NAMES, TABLE
from ..engine.state import canonical

__all__ = ["DistanceOracle", "oracle", "RADIUS", "metric_moves"]

RADIUS: dict[str, int] = {"half": 5, "quarter": 6}
"""Ball radius per metric (the ball of the next radius would hold 8.3 M and 8.8 M states)."""
EXPANSION = 4
"""Moves looked ahead from a state outside the ball before the optimal solver is asked (4: the
neighbours of the deepest items are exact too; at most 18^4 lookups, only for states that far)."""
_SLOT_BITS = 21
_EMPTY = np.int8(-1)


def metric_moves(metric: str) -> tuple[str, ...]:
    """The moves one step of ``metric`` may take, in engine order: 18 face turns, or the 12 quarter turns."""
    metric = check_metric(metric)
    return tuple(m for m in MOVE_NAMES[:18] if metric == "half" or not m.endswith("2"))


def _cubie_codes() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Reference facelet of each corner and edge place, and each sticker's code (cubie x orientation)."""
    pos, _ = sticker_geometry()
    corners: dict[tuple[int, ...], list[int]] = {}
    edges: dict[tuple[int, ...], list[int]] = {}
    for i in range(54):
        p = tuple(int(v) for v in pos[i])
        moving = sum(v != 0 for v in p)
        if moving == 3:
            corners.setdefault(p, []).append(i)
        elif moving == 2:
            edges.setdefault(p, []).append(i)
    code = np.full(54, -1, np.int64)
    for places in (corners, edges):
        for cubie, facelets in enumerate(sorted(places.values())):
            for twist, sticker in enumerate(sorted(facelets)):
                code[sticker] = cubie * len(facelets) + twist
    cref = np.array([min(f) for f in sorted(corners.values())], np.int64)
    eref = np.array([min(f) for f in sorted(edges.values())], np.int64)
    return cref, eref, code


@nb.njit(cache=True, nogil=True)
def _key(state, cref, eref, code):
    kc = np.uint64(0)
    for i in range(cref.shape[0]):
        kc = (kc << np.uint64(5)) | np.uint64(code[state[cref[i]]])
    ke = np.uint64(0)
    for i in range(eref.shape[0]):
        ke = (ke << np.uint64(5)) | np.uint64(code[state[eref[i]]])
    return kc, ke


@nb.njit(cache=True, nogil=True)
def _slot(kc, ke, mask):
    h = kc * np.uint64(0x9E3779B97F4A7C15) ^ (ke * np.uint64(0xC2B2AE3D27D4EB4F))
    return np.int64((h >> np.uint64(40)) & mask)


@nb.njit(cache=True, nogil=True)
def _find(tkc, tke, tdep, kc, ke):
    """The slot holding key (kc, ke), or the empty slot where it would go."""
    mask = np.uint64(tkc.shape[0] - 1)
    s = _slot(kc, ke, mask)
    while tdep[s] != -1 and (tkc[s] != kc or tke[s] != ke):
        s = (s + 1) & np.int64(mask)
    return s


@nb.njit(cache=True, nogil=True)
def _build(table, moves, radius, cref, eref, code, tkc, tke, tdep):
    """Breadth-first search from solved to ``radius``; fills the hash table; returns the states found."""
    solved = np.arange(54).astype(np.uint8)
    kc, ke = _key(solved, cref, eref, code)
    s = _find(tkc, tke, tdep, kc, ke)
    tkc[s], tke[s], tdep[s] = kc, ke, 0
    frontier = solved.reshape(1, 54).copy()
    total = 1
    for level in range(1, radius + 1):
        nxt = np.empty((frontier.shape[0] * moves.shape[0], 54), np.uint8)
        count = 0
        for i in range(frontier.shape[0]):
            for m in moves:
                t = apply_move(frontier[i], table, m)
                kc, ke = _key(t, cref, eref, code)
                s = _find(tkc, tke, tdep, kc, ke)
                if tdep[s] == -1:
                    tkc[s], tke[s], tdep[s] = kc, ke, level
                    nxt[count] = t
                    count += 1
        frontier = nxt[:count].copy()
        total += count
    return total


@nb.njit(cache=True, nogil=True)
def _lookup_after(states, prefix_moves, table, moves, cref, eref, code, tkc, tke, tdep):
    """Ball depth (-1 outside) of each state, or with ``prefix_moves`` of them: of each state after each move."""
    n = states.shape[0]
    out = np.empty((n, 1 if prefix_moves == 0 else moves.shape[0]), np.int64)
    for i in range(n):
        if prefix_moves == 0:
            kc, ke = _key(states[i], cref, eref, code)
            out[i, 0] = tdep[_find(tkc, tke, tdep, kc, ke)]
        else:
            for j in range(moves.shape[0]):
                t = apply_move(states[i], table, moves[j])
                kc, ke = _key(t, cref, eref, code)
                out[i, j] = tdep[_find(tkc, tke, tdep, kc, ke)]
    return out


@nb.njit(cache=True, nogil=True)
def _min_after(state, k, table, moves, cref, eref, code, tkc, tke, tdep):
    """The least ball depth among the states ``k`` moves from ``state`` (-1: none is in the ball)."""
    n = moves.shape[0]
    best = -1
    total = n ** k
    for seq in range(total):
        t = state
        rest = seq
        for _ in range(k):
            t = apply_move(t, table, moves[rest % n])
            rest //= n
        kc, ke = _key(t, cref, eref, code)
        d = tdep[_find(tkc, tke, tdep, kc, ke)]
        if d >= 0 and (best < 0 or d < best):
            best = d
    return best


class DistanceOracle:
    """Exact distances in one metric (see the module docstring); build with :func:`oracle` (cached)."""

    def __init__(self, metric: Metric, radius: int | None = None) -> None:
        self.metric = check_metric(metric)
        self.radius = RADIUS[self.metric] if radius is None else int(radius)
        self.move_names = metric_moves(self.metric)
        self.moves = np.array([MOVE_NAMES.index(m) for m in self.move_names], np.int64)
        self._cref, self._eref, self._code = _cubie_codes()
        size = 1 << _SLOT_BITS
        self._tkc = np.zeros(size, np.uint64)
        self._tke = np.zeros(size, np.uint64)
        self._tdep = np.full(size, _EMPTY, np.int8)
        self.size = int(_build(TABLE, self.moves, self.radius, self._cref, self._eref, self._code,
                               self._tkc, self._tke, self._tdep))

    @property
    def reach(self) -> int:
        """The largest distance answered without the optimal solver (9 half turns, 10 quarter turns)."""
        return self.radius + EXPANSION

    def _ball(self, states: np.ndarray, after_each_move: bool) -> np.ndarray:
        return _lookup_after(states, int(after_each_move), TABLE, self.moves, self._cref, self._eref,
                             self._code, self._tkc, self._tke, self._tdep)

    def distance(self, state: np.ndarray) -> int:
        """The exact distance of ``state`` (an engine state, any orientation) to solved; past :attr:`reach`
        the optimal solver answers (its tables are built on first use: see :meth:`within_reach`)."""
        found = self.within_reach(state)
        if found is not None:
            return found
        from .optimal import optimal_distance

        return int(optimal_distance(canonical(np.asarray(state, np.uint8)), self.metric))

    def within_reach(self, state: np.ndarray) -> int | None:
        """The exact distance of ``state`` if it is at most :attr:`reach`, else ``None``: table-free, in
        milliseconds, and never the optimal solver (whose first use may build its tables)."""
        s = np.ascontiguousarray(canonical(np.asarray(state, np.uint8)))
        found = int(self._ball(s[None], False)[0, 0])
        if found >= 0:
            return found
        for k in range(1, EXPANSION + 1):
            best = int(_min_after(s, k, TABLE, self.moves, self._cref, self._eref, self._code,
                                  self._tkc, self._tke, self._tdep))
            if best >= 0:
                return best + k
        return None

    def after_moves(self, state: np.ndarray) -> dict[str, int]:
        """The exact distance after each move of the metric, by move name."""
        s = np.ascontiguousarray(canonical(np.asarray(state, np.uint8)))
        depths = self._ball(s[None], True)[0]
        return {name: int(d) if d >= 0 else self.distance(apply_move(s, TABLE, m))
                for name, m, d in zip(self.move_names, self.moves, depths)}

    def progress_moves(self, state: np.ndarray) -> tuple[str, ...]:
        """The moves that bring ``state`` one move closer to solved (the exact optimal action set)."""
        here = self.distance(state)
        return tuple(m for m, d in self.after_moves(state).items() if d == here - 1)


@lru_cache(maxsize=2)
def oracle(metric: str) -> DistanceOracle:
    """The process's oracle for ``metric`` (built once: about a second)."""
    return DistanceOracle(check_metric(metric))

