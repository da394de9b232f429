"""IDA* over coordinates, in numba.

A node carries, for each of the three axes, the ``(twist, flip, slice_sorted)``
coordinates of the cube seen along that axis and the exact distance ``h`` of
that coordinate triple to its goal; the corner permutation rides along.  A
child's ``h`` comes from the parent's and the 2-bit table value (distance mod
3): a move changes the distance by -1, 0 or +1, and those differ mod 3.  A node
is pruned as soon as one bound exceeds the moves left; a node at the depth
bound with every bound 0 is the solved cube (all edges placed and oriented by
the three axes, twist 0, corner permutation 0).

Redundant move sequences are skipped with a small automaton: never the same
face twice (half-turn metric), at most two equal clockwise quarter turns of a
face (quarter-turn metric: ``U U`` is the half turn, ``U' U'`` its duplicate),
and of two opposite faces (which commute) only the order U before D, R before
L, F before B.

Each iteration is split into tasks (two-move prefixes) run by ``prange`` over
both cores; a shared flag stops every task once one finds a solution or the
time limit passes.
"""

from __future__ import annotations

import time

import numba as nb
import numpy as np

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from . import coords as C
from .pruning import ROW, get2

MAX_SEARCH_DEPTH = 32
"""Length of the search's move-path arrays: the deepest bound an IDA* iteration may reach."""


@intrinsic
def prefetch(typingctx, arr, idx):
    """Ask the CPU to start loading ``arr[idx]`` into cache (LLVM ``llvm.prefetch``); no effect on results.

    Table probes are random accesses with ~0.4 us latency on these machines;
    prefetching the next probes lets many of them travel at once.
    """
    sig = types.void(arr, idx)

    def codegen(context, builder, signature, args):
        aryty, _ = signature.args
        ary = context.make_array(aryty)(context, builder, args[0])
        ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [args[1]])
        i8p = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        fnty = ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0")
        builder.call(fn, [builder.bitcast(ptr, i8p), ir.Constant(i32, 0), ir.Constant(i32, 3), ir.Constant(i32, 1)])
        return context.get_dummy_value()

    return sig, codegen


def move_automaton(metric: str) -> tuple[np.ndarray, np.ndarray, int]:
    """(allowed[state, move], next_state[state, move], start state) for ``metric``."""
    face = np.arange(C.N_MOVES) // 3
    if metric == "half":
        n_states, start = C.N_MOVES + 1, C.N_MOVES
        allowed = np.zeros((n_states, C.N_MOVES), dtype=np.bool_)
        nxt = np.zeros((n_states, C.N_MOVES), dtype=np.int64)
        for st in range(n_states):
            for m in range(C.N_MOVES):
                nxt[st, m] = m
                if st == start:
                    allowed[st, m] = True
                else:
                    allowed[st, m] = not (face[m] == face[st] or face[m] == face[st] - 3)
        return allowed, nxt, start
    # quarter: states 0..17 = last move once, 18..35 = last move twice, 36 = none
    n_states, start = 2 * C.N_MOVES + 1, 2 * C.N_MOVES
    allowed = np.zeros((n_states, C.N_MOVES), dtype=np.bool_)
    nxt = np.zeros((n_states, C.N_MOVES), dtype=np.int64)
    for st in range(n_states):
        for m in range(C.N_MOVES):
            if m % 3 == 1:
                continue  # half turns are not quarter-turn moves
            if st == start:
                allowed[st, m], nxt[st, m] = True, m
                continue
            last, twice = st % C.N_MOVES, st >= C.N_MOVES
            if face[m] == face[last]:
                ok = (not twice) and m == last and m % 3 == 0
                allowed[st, m], nxt[st, m] = ok, C.N_MOVES + m
            else:
                allowed[st, m], nxt[st, m] = face[m] != face[last] - 3, m
    return allowed, nxt, start


@nb.njit(cache=True, nogil=True, inline="always")
def probe(tab, classidx, tw_conj, tw, flip, ss):
    """Stored value (distance mod 3, or 3) of coordinates ``(tw, flip, ss)``."""
    cs = classidx[flip * C.N_SLICE_SORTED + ss]
    return get2(tab, (cs >> 4) * ROW + tw_conj[tw, cs & 15])


@nb.njit(cache=True, nogil=True)
def exact_h(tab, classidx, tw_conj, tw_move, flip_move, ss_move, moves, ss_solved, tw, flip, ss):
    """Exact coset distance of ``(tw, flip, ss)``: walk down the mod-3 values to the goal."""
    d = 0
    while not (tw == 0 and flip == 0 and ss == ss_solved):
        v = probe(tab, classidx, tw_conj, tw, flip, ss)
        target = (v + 2) % 3
        for m in moves:
            t2 = tw_move[tw, m]
            f2 = flip_move[flip, m]
            s2 = ss_move[ss, m]
            if probe(tab, classidx, tw_conj, t2, f2, s2) == target:
                tw, flip, ss = t2, f2, s2
                break
        d += 1
    return d


@nb.njit(cache=True)  # not nogil: the objmode block takes the GIL for its one call anyway
def _clock():
    with nb.objmode(t="float64"):
        t = time.perf_counter()
    return t


@nb.njit(cache=True, nogil=True, inline="always")
def _move_child(lvl, j, k, c_m, c_cp, c_tw, c_fl, c_ss):
    """Compact the child list of level ``lvl``: child ``j`` takes slot ``k`` (bounds are written after)."""
    c_m[lvl, k] = c_m[lvl, j]
    c_cp[lvl, k] = c_cp[lvl, j]
    for b in range(3):
        c_tw[lvl, k, b] = c_tw[lvl, j, b]
        c_fl[lvl, k, b] = c_fl[lvl, j, b]
        c_ss[lvl, k, b] = c_ss[lvl, j, b]


@nb.njit(cache=True, nogil=True, inline="always")
def _child_h(hp, hp3, v):
    """A child's exact bound from its parent's ``hp`` (``hp3 = hp % 3``) and its stored value ``v``.

    A move changes the distance by -1, 0 or +1, and those differ mod 3:
    ``(v - hp3) mod 3`` is 0, 1 or 2 for 0, +1, -1.
    """
    d = v - hp3
    d += 3 * (d < 0)
    return hp + d - 3 * (d >> 1)


@nb.njit(cache=True, nogil=True)
def _expand(lvl, bound, tw, fl, ss, hh, cp, st, tab, classidx, tw_conj, tw_move, flip_move, ss_move,
            cp_move, cp_dist, axis_move, moves, allowed, nxt, c_tw, c_fl, c_ss, c_hh, c_cp, c_m, eidx):
    """Children of the node at ``lvl`` that survive every bound, written to ``c_*[lvl]``.

    Each axis is evaluated for all children in two tight loops (symmetry-class
    lookups, then table probes) so the memory accesses of different children
    overlap instead of waiting for one another.  ``eidx`` (18 x 3) is scratch
    for the table entries.  Returns (survivors, generated).
    """
    rem = bound - lvl - 1
    n = 0
    gen = 0
    for i in range(moves.shape[0]):
        m = moves[i]
        if not allowed[st, m]:
            continue
        gen += 1
        cpn = cp_move[cp, m]
        if cp_dist[cpn] > rem:
            continue
        c_m[lvl, n] = m
        c_cp[lvl, n] = cpn
        n += 1
    # Round 1: coordinates and symmetry classes of every child on every axis
    # (mostly cache hits: the grandparent prefetched them), then prefetch the
    # table bytes so the probes of round 2 overlap instead of queueing.
    for j in range(n):
        m = c_m[lvl, j]
        for a in range(3):
            mm = axis_move[a, m]
            t2 = tw_move[tw[lvl, a], mm]
            f2 = flip_move[fl[lvl, a], mm]
            s2 = ss_move[ss[lvl, a], mm]
            c_tw[lvl, j, a] = t2
            c_fl[lvl, j, a] = f2
            c_ss[lvl, j, a] = s2
            c = classidx[f2 * C.N_SLICE_SORTED + s2]
            e = (c >> 4) * ROW + tw_conj[t2, c & 15]
            eidx[j, a] = e
            prefetch(tab, e >> 2)
    # Round 2: the three bounds of each child, stopping at the first that prunes it.
    h0, h1, h2 = hh[lvl, 0], hh[lvl, 1], hh[lvl, 2]
    r0, r1, r2 = h0 % 3, h1 % 3, h2 % 3
    k = 0
    for j in range(n):
        a0 = _child_h(h0, r0, get2(tab, eidx[j, 0]))
        if a0 > rem:
            continue
        a1 = _child_h(h1, r1, get2(tab, eidx[j, 1]))
        if a1 > rem:
            continue
        a2 = _child_h(h2, r2, get2(tab, eidx[j, 2]))
        if a2 > rem:
            continue
        if rem > 0 and a0 == rem and a1 == rem and a2 == rem:
            # Every axis needing exactly ``rem`` moves would force the last move to lie
            # on none of the three axes (a last move on an axis's own faces keeps that
            # axis's goal, so it would not have been needed): impossible, so prune.
            continue
        if k != j:
            _move_child(lvl, j, k, c_m, c_cp, c_tw, c_fl, c_ss)
        c_hh[lvl, k, 0] = a0
        c_hh[lvl, k, 1] = a1
        c_hh[lvl, k, 2] = a2
        k += 1
    n = k
    if rem > 1:
        # Prefetch the class lookups of the grandchildren (the children expanded next).
        for j in range(n):
            st2 = nxt[st, c_m[lvl, j]]
            for i in range(moves.shape[0]):
                m2 = moves[i]
                if not allowed[st2, m2]:
                    continue
                for a in range(3):
                    mm = axis_move[a, m2]
                    prefetch(classidx, flip_move[c_fl[lvl, j, a], mm] * C.N_SLICE_SORTED
                             + ss_move[c_ss[lvl, j, a], mm])
    return n, gen


@nb.njit(cache=True, nogil=True)
def _dfs(g0, bound, mstate0, tw0, fl0, ss0, h0, cp0, path, tab, classidx, tw_conj, tw_move,
         flip_move, ss_move, cp_move, cp_dist, axis_move, moves, allowed, nxt, stop, deadline):
    """Depth-first search below a node at depth ``g0``; returns (found, nodes)."""
    D = MAX_SEARCH_DEPTH + 1
    tw = np.empty((D, 3), np.int64)
    fl = np.empty((D, 3), np.int64)
    ss = np.empty((D, 3), np.int64)
    hh = np.empty((D, 3), np.int64)
    cp = np.empty(D, np.int64)
    ms = np.empty(D, np.int64)
    ncand = np.zeros(D, np.int64)
    nexti = np.zeros(D, np.int64)
    c_tw = np.empty((D, 18, 3), np.int64)
    c_fl = np.empty((D, 18, 3), np.int64)
    c_ss = np.empty((D, 18, 3), np.int64)
    c_hh = np.empty((D, 18, 3), np.int64)
    c_cp = np.empty((D, 18), np.int64)
    c_m = np.empty((D, 18), np.int64)
    eidx = np.empty((18, 3), np.int64)
    for a in range(3):
        tw[g0, a] = tw0[a]
        fl[g0, a] = fl0[a]
        ss[g0, a] = ss0[a]
        hh[g0, a] = h0[a]
    cp[g0] = cp0
    ms[g0] = mstate0
    nodes = 0
    next_check = 0x40000
    lvl = g0
    ncand[lvl], gen = _expand(lvl, bound, tw, fl, ss, hh, cp[lvl], ms[lvl], tab, classidx, tw_conj,
                              tw_move, flip_move, ss_move, cp_move, cp_dist, axis_move, moves,
                              allowed, nxt, c_tw, c_fl, c_ss, c_hh, c_cp, c_m, eidx)
    nodes += gen
    nexti[lvl] = 0
    while True:
        if nexti[lvl] == ncand[lvl]:
            if lvl == g0:
                return False, nodes
            lvl -= 1
            continue
        j = nexti[lvl]
        nexti[lvl] += 1
        m = c_m[lvl, j]
        path[lvl] = m
        if lvl + 1 == bound:
            stop[0] = 1
            return True, nodes
        if nodes >= next_check:
            next_check = nodes + 0x40000
            if stop[0] != 0:
                return False, nodes
            if deadline > 0.0 and _clock() > deadline:
                stop[0] = 2
                return False, nodes
        nl = lvl + 1
        for a in range(3):
            tw[nl, a] = c_tw[lvl, j, a]
            fl[nl, a] = c_fl[lvl, j, a]
            ss[nl, a] = c_ss[lvl, j, a]
            hh[nl, a] = c_hh[lvl, j, a]
        cp[nl] = c_cp[lvl, j]
        ms[nl] = nxt[ms[lvl], m]
        ncand[nl], gen = _expand(nl, bound, tw, fl, ss, hh, cp[nl], ms[nl], tab, classidx, tw_conj,
                                 tw_move, flip_move, ss_move, cp_move, cp_dist, axis_move, moves,
                                 allowed, nxt, c_tw, c_fl, c_ss, c_hh, c_cp, c_m, eidx)
        nodes += gen
        nexti[nl] = 0
        lvl = nl


@nb.njit(cache=True, nogil=True, parallel=True)
def run_tasks(tasks, bound, start, tw0, fl0, ss0, h0, cp0, tab, classidx, tw_conj, tw_move,
              flip_move, ss_move, cp_move, cp_dist, axis_move, moves, allowed, nxt, stop, deadline,
              found, paths, nodes):
    """One IDA* iteration: every task (a move prefix, -1 padded) searched to ``bound``."""
    for k in nb.prange(tasks.shape[0]):
        if stop[0] != 0:
            continue
        tw = tw0.copy()
        fl = fl0.copy()
        ss = ss0.copy()
        hh = h0.copy()
        cp = cp0
        st = start
        g = 0
        ok = True
        for j in range(tasks.shape[1]):
            m = tasks[k, j]
            if m < 0:
                break
            if not allowed[st, m]:
                ok = False
                break
            nodes[k] += 1
            rem = bound - g - 1
            cp = cp_move[cp, m]
            if cp_dist[cp] > rem:
                ok = False
                break
            for a in range(3):
                mm = axis_move[a, m]
                tw[a] = tw_move[tw[a], mm]
                fl[a] = flip_move[fl[a], mm]
                ss[a] = ss_move[ss[a], mm]
                v = probe(tab, classidx, tw_conj, tw[a], fl[a], ss[a])
                diff = (v - hh[a] % 3 + 3) % 3
                hh[a] = hh[a] if diff == 0 else (hh[a] + 1 if diff == 1 else hh[a] - 1)
                if hh[a] > rem:
                    ok = False
            if rem > 0 and hh[0] == rem and hh[1] == rem and hh[2] == rem:
                ok = False  # see _expand
            if not ok:
                break
            paths[k, g] = m
            st = nxt[st, m]
            g += 1
        if not ok:
            continue
        if g == bound:
            if stop[0] == 0:
                found[k] = 1
                stop[0] = 1
            continue
        hit, n = _dfs(g, bound, st, tw, fl, ss, hh, cp, paths[k], tab, classidx, tw_conj, tw_move,
                      flip_move, ss_move, cp_move, cp_dist, axis_move, moves, allowed, nxt, stop,
                      deadline)
        nodes[k] += n
        if hit:
            found[k] = 1
