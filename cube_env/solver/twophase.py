"""Kociemba's two-phase algorithm: a short (not optimal) solution of any cube in milliseconds.

Phase 1 turns the cube into the subgroup G1 = <U, D, R2, L2, F2, B2> (every corner and edge oriented, the four
U-D slice edges in the slice); phase 2 solves it with G1's ten moves only. Phase 1 deepens one move at a time
from one move (also for a cube already in G1), each phase-1 solution gets a phase-2 search of at most 10 moves,
and the first whole solution of at most 24 turns is returned. These are the bounds, move order and rules of
Kociemba's own search, so the answers are those of the ``kociemba`` package (C) move for move:
tests/engine/twophase_reference.json holds its answers for 263 cubes, and the tests hold this solver to them.

It runs on the optimal solver's coordinates and move tables (:mod:`cubebench.solver.optimal.coords`), adds four
small tables (about 5.5 MB, built in a few seconds on first use and cached beside the optimal solver's)
and is compiled by Numba, so nothing is built from C at install time.

The wrapper accepts any valid state, also a cube held in another orientation (solutions act on the held cube's
faces), returns the empty solution for a solved cube, validates input with the engine (errors are
:class:`InvalidStateError`) and checks every solution with the engine before returning it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from itertools import combinations
from typing import Callable

import numba as nb
import numpy as np

from ..engine import kernels
from ..engine.errors import InvalidStateError
from ..engine.facelets import CENTRES
from ..engine.moves import TABLE
from ..engine.notation import parse_array
from ..engine.state import from_facelets, relabel_to_centres, validate_state
from .optimal import coords as C
from .optimal import table_cache
from .optimal.pruning import pair_distances

MAX_SOLUTION_LENGTH = 24
"""The longest solution the first search accepts (Kociemba's default bound)."""

PHASE2_CAP = 10
"""The longest phase-2 search a phase-1 solution gets in the first search (Kociemba's bound)."""

FALLBACK = (30, 18)
"""(total, phase-2) bounds of a second search, run only if the first finds nothing: it cannot fail (phase 1 needs
at most 12 turns, phase 2 at most 18), so no state leaves the solver without a plan."""

PHASE2_MOVES = np.array([0, 1, 2, 4, 7, 9, 10, 11, 13, 16], dtype=np.int64)
"""G1's moves in solver numbering (``3 * face + power``, faces URFDLB): U, U2, U', R2, F2, D, D2, D', L2, B2."""

_CENTRES = np.asarray(CENTRES, dtype=np.uint8)
N_COMB = 495  # the 4 slice edges' unordered slots: C(12, 4)
N_SLICE_PERM = 24  # their order inside the slice, in phase 2


@dataclass(frozen=True)
class Tables:
    """Move tables (rows: coordinate, columns: the 18 face turns) and distance tables (uint8, flat)."""

    tw_move: np.ndarray
    fl_move: np.ndarray
    comb_move: np.ndarray
    comb_of_ss: np.ndarray
    cp_move: np.ndarray
    ud_move: np.ndarray
    sp_move: np.ndarray
    sp_of_ss: np.ndarray
    tw_comb: np.ndarray
    fl_comb: np.ndarray
    cp_sp: np.ndarray
    ud_sp: np.ndarray
    comb_goal: int
    sp_goal: int


def _slice_coords() -> tuple[np.ndarray, np.ndarray]:
    """For every ``slice_sorted`` value: its unordered slots' index (0..494), and its order index (0..23) where
    the four slice edges sit in the slice's own slots, else -1."""
    comb_index: dict[tuple[int, ...], int] = {c: i for i, c in enumerate(combinations(range(12), 4))}
    ep = np.empty(12, dtype=np.int64)
    comb = np.empty(C.N_SLICE_SORTED, dtype=np.int64)
    in_slice = np.full(C.N_SLICE_SORTED, -1, dtype=np.int64)
    rank = 0
    for ss in range(C.N_SLICE_SORTED):
        C.set_slice_sorted(ss, ep)
        slots = tuple(int(i) for i in np.flatnonzero(ep >= 8))
        comb[ss] = comb_index[slots]
        if slots == (8, 9, 10, 11):
            in_slice[ss] = rank
            rank += 1
    return comb, in_slice


def _projected_move(ss_move: np.ndarray, of_ss: np.ndarray, n: int) -> np.ndarray:
    """Move table of a coordinate that is a function ``of_ss`` of ``slice_sorted`` (-1: outside its domain)."""
    rep = np.full(n, -1, dtype=np.int64)
    for ss in range(len(of_ss) - 1, -1, -1):
        if of_ss[ss] >= 0:
            rep[of_ss[ss]] = ss
    out = np.zeros((n, C.N_MOVES), dtype=np.uint16)
    for m in range(C.N_MOVES):
        image = of_ss[ss_move[rep, m]]
        if np.all(image >= 0):
            out[:, m] = image
    return out


@nb.njit(cache=True, nogil=True)
def _ud_move_table(table, moves, cf, ef, id_corner, id_edge):
    """Order of the 8 U and D edges after each G1 move, for every order (40320 rows; other moves stay 0)."""
    out = np.zeros((40320, 18), np.uint16)
    cp = np.arange(8).astype(np.int64)
    co = np.zeros(8, np.int64)
    ep = np.arange(12).astype(np.int64)
    eo = np.zeros(12, np.int64)
    state = np.empty(54, np.uint8)
    for u in range(40320):
        C.set_corner_perm(u, ep[:8])
        C.encode_cubies(cp, co, ep, eo, cf, ef, state)
        for m in moves:
            turned = state[table[m]]
            C.decode_cubies(turned, cf, ef, id_corner, id_edge, cp, co, ep, eo)
            out[u, m] = C.corner_perm_of(ep[:8])
        cp[:] = np.arange(8)
        co[:] = 0
        eo[:] = 0
        ep[8:] = np.arange(8, 12)
    return out


_TABLES: Tables | None = None


def tables() -> Tables:
    """Load (building and caching on first use) the two-phase solver's tables."""
    global _TABLES
    if _TABLES is not None:
        return _TABLES
    get = table_cache.get_or_build

    def moves_of(name: str, n: int, build: Callable[[], np.ndarray]) -> np.ndarray:
        return np.ascontiguousarray(get(name, np.dtype(np.uint16), (n, C.N_MOVES), build))

    sizes = (C.N_TWIST, C.N_FLIP, C.N_SLICE_SORTED, C.N_CORNER_PERM)  # shared with the optimal solver
    tw_move, fl_move, ss_move, cp_move = (moves_of(f"move-{k}", n, partial(C.move_table, k))
                                          for k, n in enumerate(sizes))
    comb_of_ss, sp_of_ss = _slice_coords()
    comb_move = _projected_move(ss_move, comb_of_ss, N_COMB)
    sp_move = _projected_move(ss_move, sp_of_ss, N_SLICE_PERM)
    ud_move = moves_of("twophase-ud-move", C.N_CORNER_PERM, partial(
        _ud_move_table, TABLE, PHASE2_MOVES, C._CF, C._EF, C._ID_CORNER, C._ID_EDGE))
    solved_ss = int(C.slice_sorted_of(np.arange(12, dtype=np.int64)))
    comb_goal, sp_goal = int(comb_of_ss[solved_ss]), int(sp_of_ss[solved_ss])
    all_moves = np.arange(C.N_MOVES, dtype=np.int64)

    def dist(name: str, a: np.ndarray, b: np.ndarray, moves: np.ndarray, goal_b: int) -> np.ndarray:
        n = len(a) * len(b)
        return np.ascontiguousarray(get(f"twophase-{name}", np.dtype(np.uint8), (n,), lambda: pair_distances(
            a, b, moves, 0, goal_b)))

    _TABLES = Tables(
        tw_move=tw_move, fl_move=fl_move, comb_move=comb_move, comb_of_ss=comb_of_ss, cp_move=cp_move,
        ud_move=ud_move, sp_move=sp_move, sp_of_ss=sp_of_ss,
        tw_comb=dist("twist-comb", tw_move, comb_move, all_moves, comb_goal),
        fl_comb=dist("flip-comb", fl_move, comb_move, all_moves, comb_goal),
        cp_sp=dist("cperm-sperm", cp_move, sp_move, PHASE2_MOVES, sp_goal),
        ud_sp=dist("udperm-sperm", ud_move, sp_move, PHASE2_MOVES, sp_goal),
        comb_goal=comb_goal, sp_goal=sp_goal,
    )
    return _TABLES


@nb.njit(cache=True, nogil=True)
def _allowed(m, prev):
    """No two turns of one face in a row, and of two opposite faces (which commute) only U-D, R-L, F-B order."""
    f, p = m // 3, prev // 3
    return f != p and f + 3 != p


@nb.njit(cache=True, nogil=True)
def _phase2(cp, ud, sp, limit, cp_move, ud_move, sp_move, cp_sp, ud_sp, moves, out, at):
    """Write the shortest phase-2 solution, if it has at most ``limit`` turns, into ``out[at:]``; its length, or -1.

    Its first turn is free: a phase-1 solution whose last turn it cannot follow is rejected whole by the caller
    (Kociemba's rule), rather than given a longer phase 2.
    """
    h = int(max(cp_sp[cp * 24 + sp], ud_sp[ud * 24 + sp]))
    if h > limit:
        return -1
    s_cp = np.empty(limit + 1, np.int64)
    s_ud = np.empty(limit + 1, np.int64)
    s_sp = np.empty(limit + 1, np.int64)
    s_mv = np.empty(limit + 1, np.int64)
    for depth in range(h, limit + 1):
        if depth == 0:
            return 0
        s_cp[0], s_ud[0], s_sp[0], s_mv[0] = cp, ud, sp, -1
        level = 0
        while level >= 0:
            s_mv[level] += 1
            if s_mv[level] >= moves.shape[0]:
                level -= 1
                continue
            m = moves[s_mv[level]]
            if level > 0 and not _allowed(m, out[at + level - 1]):
                continue
            ncp, nud, nsp = cp_move[s_cp[level], m], ud_move[s_ud[level], m], sp_move[s_sp[level], m]
            rest = depth - level - 1
            if max(cp_sp[ncp * 24 + nsp], ud_sp[nud * 24 + nsp]) > rest:
                continue
            out[at + level] = m
            if rest == 0:
                return depth
            level += 1
            s_cp[level], s_ud[level], s_sp[level], s_mv[level] = ncp, nud, nsp, -1
    return -1


@nb.njit(cache=True, nogil=True)
def _search(state, max_len, cap2, table, cf, ef, id_corner, id_edge, tw_move, fl_move, comb_move, comb_of_ss,
            cp_move, ud_move, sp_move, sp_of_ss, tw_comb, fl_comb, cp_sp, ud_sp, comb_goal, p2_moves, out):
    """Write the first two-phase solution of at most ``max_len`` turns into ``out``; its length, or -1."""
    cp = np.empty(8, np.int64)
    co = np.empty(8, np.int64)
    ep = np.empty(12, np.int64)
    eo = np.empty(12, np.int64)
    C.decode_cubies(state, cf, ef, id_corner, id_edge, cp, co, ep, eo)
    tw, fl, cb = C.twist_of(co), C.flip_of(eo), comb_of_ss[C.slice_sorted_of(ep)]
    n_comb = comb_move.shape[0]
    s_tw = np.empty(max_len + 1, np.int64)
    s_fl = np.empty(max_len + 1, np.int64)
    s_cb = np.empty(max_len + 1, np.int64)
    s_mv = np.empty(max_len + 1, np.int64)
    h = int(max(tw_comb[tw * n_comb + cb], fl_comb[fl * n_comb + cb]))
    for depth in range(max(h, 1), max_len + 1):  # at least one turn, even in G1 (Kociemba's search does so)
        s_tw[0], s_fl[0], s_cb[0], s_mv[0] = tw, fl, cb, -1
        level = 0
        while level >= 0:
            s_mv[level] += 1
            m = s_mv[level]
            if m >= 18:
                level -= 1
                continue
            if level > 0 and not _allowed(m, out[level - 1]):
                continue
            ntw, nfl, ncb = tw_move[s_tw[level], m], fl_move[s_fl[level], m], comb_move[s_cb[level], m]
            rest = depth - level - 1
            if max(tw_comb[ntw * n_comb + ncb], fl_comb[nfl * n_comb + ncb]) > rest:
                continue
            out[level] = m
            if rest > 0:
                if ntw == 0 and nfl == 0 and ncb == comb_goal and rest < 5:
                    continue  # in G1 this close to the bound: the shorter phase-1 solution was tried already
                level += 1
                s_tw[level], s_fl[level], s_cb[level], s_mv[level] = ntw, nfl, ncb, -1
                continue
            turned = state.copy()
            for i in range(depth):
                turned = turned[table[out[i]]]
            C.decode_cubies(turned, cf, ef, id_corner, id_edge, cp, co, ep, eo)
            n2 = _phase2(C.corner_perm_of(cp), C.corner_perm_of(ep[:8]), sp_of_ss[C.slice_sorted_of(ep)],
                         min(cap2, max_len - depth), cp_move, ud_move, sp_move, cp_sp, ud_sp, p2_moves, out, depth)
            if n2 == 0 or (n2 > 0 and _allowed(out[depth], m)):
                return depth + n2
    return -1


def _as_state(cube: np.ndarray | str) -> np.ndarray:
    if isinstance(cube, str):
        return from_facelets(cube)
    return validate_state(cube)


def _solve_reference(state: np.ndarray) -> str:
    """Solution of a state whose centres are home (sticker ids of the reference cube)."""
    t = tables()
    out = np.empty(FALLBACK[0], dtype=np.int64)
    for max_len, cap2 in ((MAX_SOLUTION_LENGTH, PHASE2_CAP), FALLBACK):
        n = _search(state, max_len, cap2, TABLE, C._CF, C._EF, C._ID_CORNER, C._ID_EDGE, t.tw_move, t.fl_move,
                    t.comb_move, t.comb_of_ss, t.cp_move, t.ud_move, t.sp_move, t.sp_of_ss, t.tw_comb, t.fl_comb,
                    t.cp_sp, t.ud_sp, t.comb_goal, PHASE2_MOVES, out)
        if n >= 0:
            return " ".join(C.FACE_MOVES[m] for m in out[:n])
    raise InvalidStateError("the two-phase search found no solution (the state is not a reachable cube)")


def solve_twophase(cube: np.ndarray | str) -> str:
    """A short (not necessarily optimal) solution of ``cube``, in face-turn notation."""
    state = _as_state(cube)
    if kernels.is_solved(state):
        return ""
    home = bool((state[_CENTRES] == _CENTRES).all())  # then the state is its own reference (validated ids)
    solution = _solve_reference(state if home else from_facelets(relabel_to_centres(state)))
    if not kernels.is_solved(kernels.apply_moves(state, TABLE, parse_array(solution))):
        raise InvalidStateError(f"two-phase solution {solution!r} does not solve the cube")
    return solution
