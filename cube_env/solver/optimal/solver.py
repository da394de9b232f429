"""Public entry points of the exact optimal solver.

``solve_optimal`` runs IDA* (see :mod:`.search`) with the admissible bounds of
:mod:`.pruning`, in the half-turn metric (18 moves: every face turn, quarter or
half, counts 1) or the quarter-turn metric (12 moves: a half turn counts 2).
Input is a sticker state or a 54-letter ``URFDLB`` string, held in any of the
24 orientations; the returned moves act on the faces of the cube *as held*
and every solution is replayed on the engine before it is returned.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numba as nb
import numpy as np

from ...engine.errors import InvalidStateError
from ...engine.kernels import apply_moves, is_solved
from ...engine.metric import METRICS, check_metric
from ...engine.moves import MOVE_NAMES, ORIENTATIONS, TABLE
from ...engine.notation import parse
from ...engine.state import from_facelets, relabel_to_centres, validate_state
from . import coords as C
from . import pruning as T
from .search import MAX_SEARCH_DEPTH, exact_h, move_automaton, run_tasks

SOLVER_VERSION = f"cubebench-optimal-1 (tables v{T.table_cache.FORMAT_VERSION})"
"""Identifies the solver and table format that certified a distance."""


class SolverTimeout(TimeoutError):
    """The search ran past its ``time_limit``; ``lower_bound`` is the depth proven so far."""

    def __init__(self, message: str, lower_bound: int, nodes: int, seconds: float):
        super().__init__(message)
        self.lower_bound = lower_bound
        self.nodes = nodes
        self.seconds = seconds


@dataclass(frozen=True)
class OptimalSolution:
    """An optimal solution: ``len(moves) == distance`` in ``metric``.

    In the quarter-turn metric every move is a quarter turn (a half turn
    appears as two equal quarter turns).  ``nodes`` counts search nodes
    generated and ``seconds`` the wall time of the search.
    """

    moves: tuple[str, ...]
    distance: int
    metric: str
    nodes: int
    seconds: float

    def __str__(self) -> str:
        return " ".join(self.moves)


def _reference_state(cube: np.ndarray | str) -> tuple[np.ndarray, np.ndarray]:
    """Validated state with reference centres, same geometry as the held cube."""
    if isinstance(cube, str):
        held = from_facelets(cube)
    elif isinstance(cube, np.ndarray) or isinstance(cube, (list, tuple)):
        held = validate_state(np.asarray(cube))
    else:
        raise InvalidStateError(
            f"a cube is a uint8[54] state or a 54-character URFDLB string, got {type(cube).__name__}"
        )
    return held, from_facelets(relabel_to_centres(held))


@dataclass
class _Root:
    tw: np.ndarray
    fl: np.ndarray
    ss: np.ndarray
    cp: int
    parity: int


def _root(state: np.ndarray) -> _Root:
    views = np.stack([C.conj_states(state, C.AXIS_ROT[a]) for a in range(3)])
    co = C.decode_coords(views)
    cp = np.empty(8, np.int64)
    C.set_corner_perm(int(co[0, 3]), cp)
    inversions = sum(1 for i in range(8) for j in range(i + 1, 8) if cp[i] > cp[j])
    return _Root(co[:, 0].copy(), co[:, 1].copy(), co[:, 2].copy(), int(co[0, 3]), inversions % 2)


def _axis_h(root: _Root, small: T.SmallTables, tab: np.ndarray, moves: np.ndarray) -> np.ndarray:
    return np.array([
        exact_h(tab, small.classidx, small.tw_conj, small.tw_move, small.flip_move, small.ss_move,
                moves, small.solved_slice, int(root.tw[a]), int(root.fl[a]), int(root.ss[a]))
        for a in range(3)
    ], dtype=np.int64)


_TASKS: dict[tuple[str, int], np.ndarray] = {}


def _tasks(metric: str, length: int) -> np.ndarray:
    """Legal move prefixes of ``length`` (0, 1 or 2) as a (n, MAX_SEARCH_DEPTH) int64 array, -1 padded."""
    key = (metric, length)
    if key not in _TASKS:
        allowed, nxt, start = move_automaton(metric)
        moves = T.metric_moves(metric)
        prefixes: list[list[int]] = [[]]
        states = [start]
        for _ in range(length):
            next_prefixes, next_states = zip(*[
                (p + [int(m)], int(nxt[s, m])) for p, s in zip(prefixes, states) for m in moves if allowed[s, m]
            ]) if prefixes else ((), ())
            prefixes, states = list(next_prefixes), list(next_states)
        out = np.full((len(prefixes), MAX_SEARCH_DEPTH), -1, dtype=np.int64)
        for i, p in enumerate(prefixes):
            out[i, : len(p)] = p
        _TASKS[key] = out
    return _TASKS[key]


def _start_bound(h: np.ndarray, corner: int) -> int:
    """Lower bound from the three axis distances and the corner distance.

    When all three axes need the same ``k > 0`` moves the cube needs ``k + 1``:
    a ``k``-move solution would have to end with a move off all three axes.
    """
    k = int(h.max())
    if k > 0 and h[0] == h[1] == h[2]:
        k += 1
    return max(k, corner)


def lower_bound(state: np.ndarray | str, metric: str = "half") -> int:
    """Admissible lower bound on the distance (max of the three axis bounds and the corners).

    Cheap (a few hundred table probes); never larger than the true distance.
    """
    check_metric(metric)
    _, ref = _reference_state(state)
    small, tab, cpd = T.tables_for(metric)
    root = _root(ref)
    h = _start_bound(_axis_h(root, small, tab, T.metric_moves(metric)), int(cpd[root.cp]))
    if metric == "quarter" and h % 2 != root.parity:
        h += 1
    return h


def solve_optimal(cube: np.ndarray | str, metric: str = "half", *,
                  time_limit: float | None = None, known: str | None = None) -> OptimalSolution:
    """Solve ``cube`` optimally in ``metric`` (``"half"`` or ``"quarter"``).

    ``known`` is a solution already in hand (face turns, e.g. the inverse of
    the scramble that made the cube).  The search then stops as soon as every
    shorter length is ruled out and returns it: still exact, and it skips the
    costliest iteration, the one at the answer's own length (which is why the
    curriculum certifies with it).  A shorter solution, if found, is returned
    instead.  Raises :class:`~cubebench.engine.errors.InvalidStateError` for an
    invalid cube, ``ValueError`` for a ``known`` that does not solve it, and
    :class:`SolverTimeout` when ``time_limit`` seconds pass first.  Tables are
    loaded (built on first use) and the numba kernels compiled before the clock
    starts, so ``seconds`` and ``time_limit`` cover the search.
    """
    check_metric(metric)
    held, ref = _reference_state(cube)
    upper = None if known is None else _known_path(held, known, metric)
    _warm_up(metric)
    return _solve(held, ref, metric, time_limit, upper)


def _known_path(held: np.ndarray, known: str, metric: str) -> list[int]:
    """``known`` as search moves (a half turn is two quarter turns in QTM), checked to solve ``held``."""
    path = []
    for m in parse(known):
        if m >= C.N_MOVES:
            raise ValueError(f"a known solution is face turns only; {known!r} has {MOVE_NAMES[m]!r}")
        path += [m - 1, m - 1] if metric == "quarter" and m % 3 == 1 else [m]
    if not is_solved(apply_moves(held, TABLE, np.asarray(path, dtype=np.int64))):
        raise ValueError(f"the known solution {known!r} does not solve this cube")
    return path


_WARM: set[str] = set()


def _warm_up(metric: str) -> None:
    """Load the tables and compile (or load from numba's cache) the kernels before any clock starts."""
    if metric not in _WARM:
        T.tables_for(metric)
        state = TABLE[0].copy()  # one quarter turn of U: every kernel runs once
        _solve(state, state, metric, None)
        _WARM.add(metric)


def _solve(held: np.ndarray, ref: np.ndarray, metric: str, time_limit: float | None,
           upper: list[int] | None = None) -> OptimalSolution:
    small, tab, cpd = T.tables_for(metric)
    moves = T.metric_moves(metric)
    allowed, nxt, start = move_automaton(metric)
    t0 = time.perf_counter()
    deadline = 0.0 if time_limit is None else t0 + float(time_limit)
    root = _root(ref)
    h = _axis_h(root, small, tab, moves)
    bound = _start_bound(h, int(cpd[root.cp]))
    step = 1
    if metric == "quarter":
        step = 2
        if bound % 2 != root.parity:
            bound += 1
    total_nodes = 0
    while True:
        if upper is not None and bound >= len(upper):
            return _verified(held, upper, metric, total_nodes, time.perf_counter() - t0)
        if bound == 0:
            found_path: list[int] | None = [] if (h.max() == 0 and cpd[root.cp] == 0) else None
        else:
            tasks = _tasks(metric, min(2, bound))
            stop = np.zeros(1, dtype=np.int64)
            found = np.zeros(len(tasks), dtype=np.int64)
            paths = tasks.copy()
            nodes = np.zeros(len(tasks), dtype=np.int64)
            with nb.parallel_chunksize(1):
                run_tasks(tasks, bound, start, root.tw, root.fl, root.ss, h, root.cp, tab,
                          small.classidx, small.tw_conj, small.tw_move, small.flip_move,
                          small.ss_move, small.cp_move, cpd, C.AXIS_MOVE, moves, allowed, nxt,
                          stop, deadline, found, paths, nodes)
            total_nodes += int(nodes.sum())
            hits = np.flatnonzero(found)
            found_path = [int(m) for m in paths[hits[0], :bound]] if len(hits) else None
            if found_path is None and stop[0] == 2:
                seconds = time.perf_counter() - t0
                raise SolverTimeout(
                    f"no solution proven within {time_limit} s; distance is at least {bound} "
                    f"({metric}-turn metric, {total_nodes} nodes)", bound, total_nodes, seconds)
        if found_path is not None:
            return _verified(held, found_path, metric, total_nodes, time.perf_counter() - t0)
        bound += step
        if bound > MAX_SEARCH_DEPTH - 2:
            raise AssertionError("search exceeded the maximum depth: tables are inconsistent")
        if deadline and time.perf_counter() > deadline:
            raise SolverTimeout(
                f"no solution proven within {time_limit} s; distance is at least {bound}",
                bound, total_nodes, time.perf_counter() - t0)


def _verified(held: np.ndarray, path: list[int], metric: str, nodes: int, seconds: float) -> OptimalSolution:
    """Replay the solution on the engine; expand half turns into quarter turns for QTM."""
    if not is_solved(apply_moves(held, TABLE, np.asarray(path, dtype=np.int64))):
        raise AssertionError(f"solver produced a non-solution {path}: tables are corrupt")
    names = tuple(C.FACE_MOVES[m] for m in path)
    if metric == "quarter" and any(m % 3 == 1 for m in path):
        raise AssertionError("quarter-turn search produced a half turn")
    return OptimalSolution(moves=names, distance=len(names), metric=metric, nodes=nodes, seconds=seconds)


def optimal_distance(cube: np.ndarray | str, metric: str = "half", *, time_limit: float | None = None) -> int:
    """Exact distance of ``cube`` in ``metric`` (see :func:`solve_optimal`)."""
    return solve_optimal(cube, metric, time_limit=time_limit).distance


def lower_bound_batch(states: np.ndarray, metric: str = "half") -> np.ndarray:
    """Admissible lower bounds for a (B, 54) uint8 batch of states (any held orientation).

    States are assumed valid (they come from the engine); runs in parallel in numba.
    """
    check_metric(metric)
    states = np.ascontiguousarray(states, dtype=np.uint8)
    if states.ndim != 2 or states.shape[1] != 54:
        raise InvalidStateError(f"a batch of states has shape (B, 54), got {states.shape}")
    small, tab, cpd = T.tables_for(metric)
    out = np.empty(states.shape[0], dtype=np.int64)
    _batch_bounds(states, _CANON, _CENTRE_LUT, C._CF, C._EF, C._ID_CORNER, C._ID_EDGE,
                  C.AXIS_ROT.astype(np.int64), _AXIS_ROT_INV, tab, small.classidx, small.tw_conj,
                  small.tw_move, small.flip_move, small.ss_move, small.solved_slice, cpd,
                  T.metric_moves(metric), metric == "quarter", out)
    return out


def _canon_tables() -> tuple[np.ndarray, np.ndarray]:
    """Gather tables turning each held orientation back to reference, keyed by (U, F) centre colours."""
    canon = np.empty((24, 54), dtype=np.int64)
    lut = np.full(36, -1, dtype=np.int64)
    for r in range(24):
        inv = np.empty(54, dtype=np.int64)
        inv[ORIENTATIONS[r]] = np.arange(54)
        canon[r] = inv
        u, f = ORIENTATIONS[r][4] // 9, ORIENTATIONS[r][22] // 9
        lut[u * 6 + f] = r
    return canon, lut


_CANON, _CENTRE_LUT = _canon_tables()
_AXIS_ROT_INV = np.stack([np.argsort(C.AXIS_ROT[a]) for a in range(3)]).astype(np.int64)


@nb.njit(cache=True, nogil=True, parallel=True)
def _batch_bounds(states, canon, centre_lut, cf, ef, id_corner, id_edge, rot, rot_inv, tab, classidx,
                  tw_conj, tw_move, flip_move, ss_move, ss_solved, cpd, moves, quarter, out):
    for b in nb.prange(states.shape[0]):
        st = states[b]
        r = centre_lut[(st[4] // 9) * 6 + st[22] // 9]
        ref = np.empty(54, np.uint8)
        for i in range(54):
            ref[i] = st[canon[r, i]]
        cp = np.empty(8, np.int64)
        co = np.empty(8, np.int64)
        ep = np.empty(12, np.int64)
        eo = np.empty(12, np.int64)
        view = np.empty(54, np.uint8)
        best = 0
        hs = np.empty(3, np.int64)
        for a in range(3):
            for i in range(54):
                view[i] = rot_inv[a, ref[rot[a, i]]]
            C.decode_cubies(view, cf, ef, id_corner, id_edge, cp, co, ep, eo)
            h = exact_h(tab, classidx, tw_conj, tw_move, flip_move, ss_move, moves, ss_solved,
                        C.twist_of(co), C.flip_of(eo), C.slice_sorted_of(ep))
            best = max(best, h)
            hs[a] = h
            if a == 0:
                cidx = C.corner_perm_of(cp)
                best = max(best, np.int64(cpd[cidx]))
                inv = 0
                for i in range(8):
                    for j in range(i + 1, 8):
                        if cp[i] > cp[j]:
                            inv += 1
                par = inv % 2
        if hs[0] > 0 and hs[0] == hs[1] and hs[1] == hs[2]:
            best = max(best, hs[0] + 1)
        if quarter and best % 2 != par:
            best += 1
        out[b] = best


def tables_ready(metric: str = "half") -> bool:
    """Whether solving in ``metric`` starts without building tables (they are loaded, or built on disk)."""
    return T.tables_ready(check_metric(metric))


def ensure_tables(metric: str = "half", progress: bool = True) -> None:
    """Build (first time) and verify the tables of ``metric`` (``"half"``, ``"quarter"`` or ``"both"``)."""
    for m in (METRICS if metric == "both" else (metric,)):
        check_metric(m)
        T.tables_for(m, progress)
