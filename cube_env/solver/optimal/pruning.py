"""The solver's tables: move tables, symmetry classes and pruning tables.

The main pruning table follows Michael Reid's and Herbert Kociemba's optimal
solvers: it stores, for every cube up to the 16 symmetries of the U-D axis, how
many moves are needed to orient all edges and corners *and* put the four U-D
slice edges home in order (the ``flip x slice_sorted x twist`` coset space:
2048 * 11880 * 2187 positions, 1 523 864 symmetry classes of
``flip x slice_sorted`` times 2187 twists).  Distances are stored modulo 3 in
two bits (value 3 = not reached); the search recovers exact values because a
move changes a distance by at most one.  The same table, applied to the cube
seen along the R-L and F-B axes, gives three admissible bounds per node; the
only cubes all three call solved differ from solved in the corner
permutation, which a small corner-permutation table bounds and checks.

One table per metric (18 half-turn-metric moves or 12 quarter turns).  Build:
breadth-first, forward (expand the frontier, one thread) while the frontier is
small, then backward (each unreached entry looks for a neighbour on the
frontier; rows are independent, so both cores work without locks).
"""

from __future__ import annotations

import mmap
import os
import sys
import time
from dataclasses import dataclass

import numba as nb
import numpy as np

from ...engine.metric import check_metric
from . import coords as C
from . import table_cache

ROW = 2188  # twists per class row, padded to a multiple of 4 so rows are byte-aligned
ROW_BYTES = ROW // 4
EMPTY = np.uint32(0xFFFFFFFF)


def metric_moves(metric: str) -> np.ndarray:
    """The move indices (solver order) that count as one move in ``metric``."""
    return C.HALF_TURN_MOVES if check_metric(metric) == "half" else C.QUARTER_TURN_MOVES


# --------------------------------------------------------------------------
# Symmetry classes of flip x slice_sorted
# --------------------------------------------------------------------------

@nb.njit(cache=True, nogil=True)
def _conj_flipslice(raw, s, sym_ep, sym_eo, inv_of, ep, eo, t_ep, t_eo, c_ep, c_eo):
    """Raw flip-slice coordinate of ``D4H[s]^-1 . X . D4H[s]`` (cubie-level product)."""
    set_flip_slice(raw, ep, eo)
    b = s
    a = inv_of[s]
    for i in range(12):
        t_ep[i] = ep[sym_ep[b, i]]
        t_eo[i] = (eo[sym_ep[b, i]] + sym_eo[b, i]) % 2
    for i in range(12):
        c_ep[i] = sym_ep[a, t_ep[i]]
        c_eo[i] = (sym_eo[a, t_ep[i]] + t_eo[i]) % 2
    return C.flip_of(c_eo) * C.N_SLICE_SORTED + C.slice_sorted_of(c_ep)


@nb.njit(cache=True, nogil=True)
def set_flip_slice(raw, ep, eo):
    """Edges realising raw flip-slice coordinate ``flip * 11880 + slice_sorted``."""
    C.set_flip(raw // C.N_SLICE_SORTED, eo)
    C.set_slice_sorted(raw % C.N_SLICE_SORTED, ep)


@nb.njit(cache=True, nogil=True)
def _build_classes(sym_ep, sym_eo, inv_of, classidx, rep, stab):
    """Enumerate symmetry classes; ``classidx[raw] = 16 * class + sym`` with sym taking raw to the rep."""
    ep = np.empty(12, np.int64)
    eo = np.empty(12, np.int64)
    t_ep = np.empty(12, np.int64)
    t_eo = np.empty(12, np.int64)
    c_ep = np.empty(12, np.int64)
    c_eo = np.empty(12, np.int64)
    n = 0
    for raw in range(classidx.shape[0]):
        if classidx[raw] != 0xFFFFFFFF:
            continue
        rep[n] = raw
        mask = 0
        for s in range(16):
            r2 = _conj_flipslice(raw, s, sym_ep, sym_eo, inv_of, ep, eo, t_ep, t_eo, c_ep, c_eo)
            if r2 == raw:
                mask |= 1 << s
            if classidx[r2] == 0xFFFFFFFF:
                classidx[r2] = n * 16 + inv_of[s]
        stab[n] = mask
        n += 1
    return n


N_CLASS = 1523864
"""Symmetry classes of flip x slice_sorted under D4h (checked when the table is built)."""


def _classes() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    sym_ep, sym_eo = C.edge_sym_cubies()
    classidx = np.full(C.N_RAW_FLIPSLICE, EMPTY, dtype=np.uint32)
    rep = np.empty(C.N_RAW_FLIPSLICE // 8, dtype=np.uint32)
    stab = np.empty(C.N_RAW_FLIPSLICE // 8, dtype=np.uint16)
    n = _build_classes(sym_ep, sym_eo, C.SYM_INV, classidx, rep, stab)
    if n != N_CLASS:
        raise AssertionError(f"found {n} flip-slice symmetry classes, expected {N_CLASS}")
    return classidx, rep[:n].copy(), stab[:n].copy()


# --------------------------------------------------------------------------
# 2-bit table access
# --------------------------------------------------------------------------

@nb.njit(cache=True, nogil=True, inline="always")
def get2(tab, e):
    """Entry ``e`` of a 2-bit table."""
    return (tab[e >> 2] >> ((e & 3) << 1)) & 3


@nb.njit(cache=True, nogil=True, inline="always")
def _set2(tab, e, v):
    b = e >> 2
    sh = (e & 3) << 1
    tab[b] = (tab[b] & np.uint8(~(3 << sh) & 0xFF)) | np.uint8(v << sh)


# --------------------------------------------------------------------------
# Breadth-first build of the flip-slice-twist pruning table
# --------------------------------------------------------------------------

@nb.njit(cache=True, nogil=True)
def _neighbours(c, rep, classidx, flip_move, ss_move, moves, cn, sn):
    raw = rep[c]
    f = raw // C.N_SLICE_SORTED
    s = raw % C.N_SLICE_SORTED
    for i in range(moves.shape[0]):
        m = moves[i]
        cs = classidx[flip_move[f, m] * C.N_SLICE_SORTED + ss_move[s, m]]
        cn[i] = cs >> 4
        sn[i] = cs & 15


@nb.njit(cache=True, nogil=True)
def _forward(tab, d, rep, classidx, stab, flip_move, ss_move, tw_move, tw_conj, moves):
    """Expand every entry whose stored value is ``d % 3`` (serial: writes go anywhere)."""
    want = d % 3
    new = (d + 1) % 3
    nm = moves.shape[0]
    cn = np.empty(nm, np.int64)
    sn = np.empty(nm, np.int64)
    pattern = want * 0x55
    count = 0
    for c in range(rep.shape[0]):
        have = False
        base = c * ROW
        for byte in range(ROW_BYTES):
            y = tab[(base >> 2) + byte] ^ pattern
            if (~(y | (y >> 1))) & 0x55 == 0:
                continue
            for k in range(4):
                t = byte * 4 + k
                if t >= C.N_TWIST or get2(tab, base + t) != want:
                    continue
                if not have:
                    _neighbours(c, rep, classidx, flip_move, ss_move, moves, cn, sn)
                    have = True
                for i in range(nm):
                    tt = tw_conj[tw_move[t, moves[i]], sn[i]]
                    e = cn[i] * ROW + tt
                    if get2(tab, e) == 3:
                        _set2(tab, e, new)
                        count += 1
                        mask = stab[cn[i]]
                        if mask != 1:
                            for s in range(1, 16):
                                if (mask >> s) & 1:
                                    e2 = cn[i] * ROW + tw_conj[tt, s]
                                    if get2(tab, e2) == 3:
                                        _set2(tab, e2, new)
                                        count += 1
    return count


@nb.njit(cache=True, nogil=True, parallel=True)
def _backward(tab, d, rep, classidx, flip_move, ss_move, tw_move, tw_conj, moves):
    """Give value ``d + 1`` to every unreached entry with a neighbour at ``d`` (rows in parallel)."""
    want = d % 3
    new = (d + 1) % 3
    nm = moves.shape[0]
    count = 0
    for c in nb.prange(rep.shape[0]):
        cn = np.empty(nm, np.int64)
        sn = np.empty(nm, np.int64)
        have = False
        base = c * ROW
        local = 0
        for byte in range(ROW_BYTES):
            x = tab[(base >> 2) + byte]
            if (x & (x >> 1)) & 0x55 == 0:
                continue
            for k in range(4):
                t = byte * 4 + k
                if t >= C.N_TWIST or get2(tab, base + t) != 3:
                    continue
                if not have:
                    _neighbours(c, rep, classidx, flip_move, ss_move, moves, cn, sn)
                    have = True
                for i in range(nm):
                    tt = tw_conj[tw_move[t, moves[i]], sn[i]]
                    if get2(tab, cn[i] * ROW + tt) == want:
                        _set2(tab, base + t, new)
                        local += 1
                        break
        count += local
    return count


def _build_prune(metric: str, small: "SmallTables", progress: bool) -> np.ndarray:
    from tqdm.auto import tqdm

    moves = metric_moves(metric)
    n_class = small.rep.shape[0]
    total = n_class * C.N_TWIST
    tab = np.full(n_class * ROW_BYTES, 0xFF, dtype=np.uint8)
    solved = int(small.classidx[small.solved_flipslice]) >> 4
    _set2(tab, solved * ROW + 0, 0)
    reached, by_depth = 1, [1]
    bar = tqdm(total=total, desc=f"optimal-solver table ({metric})", unit="entry",
               unit_scale=True, disable=not progress, mininterval=1.0)
    bar.update(1)
    d = 0
    while True:
        same_mod = sum(n for k, n in enumerate(by_depth) if k % 3 == d % 3)
        if same_mod * len(moves) < (total - reached) * 4:
            n = _forward(tab, d, small.rep, small.classidx, small.stab, small.flip_move,
                         small.ss_move, small.tw_move, small.tw_conj, moves)
        else:
            n = _backward(tab, d, small.rep, small.classidx, small.flip_move, small.ss_move,
                          small.tw_move, small.tw_conj, moves)
        if n == 0:
            break
        reached += n
        by_depth.append(n)
        bar.update(n)
        bar.set_postfix(depth=d + 1)
        d += 1
    bar.close()
    if reached != total:
        raise AssertionError(f"pruning table reached {reached} of {total} entries")
    return tab


# --------------------------------------------------------------------------
# Small tables and the corner-permutation table
# --------------------------------------------------------------------------

@nb.njit(cache=True, nogil=True)
def pair_distances(a_move, b_move, moves, goal_a, goal_b):
    """Breadth-first distance under ``moves`` to (goal_a, goal_b) of every pair of two coordinates, flat
    (``a * n_b + b``; 255: unreached). A single coordinate is the pair with a one-value second (``b_move`` of one
    zero row)."""
    n_b = b_move.shape[0]
    n = a_move.shape[0] * n_b
    dist = np.full(n, 255, np.uint8)
    frontier = np.empty(n, np.int64)
    nxt = np.empty(n, np.int64)
    frontier[0] = goal_a * n_b + goal_b
    dist[frontier[0]] = 0
    nf = 1
    d = 0
    while nf:
        nn = 0
        for i in range(nf):
            a, b = frontier[i] // n_b, frontier[i] % n_b
            for m in moves:
                y = a_move[a, m] * n_b + b_move[b, m]
                if dist[y] == 255:
                    dist[y] = d + 1
                    nxt[nn] = y
                    nn += 1
        frontier, nxt = nxt, frontier
        nf = nn
        d += 1
    return dist


@dataclass(frozen=True)
class SmallTables:
    """Move tables, symmetry data and the flip-slice classes shared by both metrics."""

    tw_move: np.ndarray
    flip_move: np.ndarray
    ss_move: np.ndarray
    cp_move: np.ndarray
    tw_conj: np.ndarray
    classidx: np.ndarray
    rep: np.ndarray
    stab: np.ndarray
    solved_flipslice: int
    solved_slice: int


HUGEPAGES_ENV = "CUBEBENCH_SOLVER_HUGEPAGES"


def hot_copy(arr: np.ndarray) -> np.ndarray:
    """The search's copy of a big table: anonymous memory backed by transparent huge pages.

    The search probes these tables at random; with 4 KiB pages nearly every
    probe also misses the TLB, and a page-table walk costs several memory
    latencies.  Measured on the 2-core machine: one depth-16 iteration took
    44 s CPU on the memory-mapped file (once its page cache had been split
    into small pages) and 3.7 s CPU on a huge-page copy.  The copy costs the
    table's size in private RAM per process; set ``CUBEBENCH_SOLVER_HUGEPAGES=0``
    to search the shared memory map instead.  Non-Linux systems get the map.
    """
    if os.environ.get(HUGEPAGES_ENV, "1") == "0" or not sys.platform.startswith("linux"):
        return arr
    huge = 2 << 20
    nbytes = arr.nbytes
    buf = mmap.mmap(-1, nbytes + huge, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    base = np.frombuffer(buf, dtype=np.uint8)
    offset = (-base.ctypes.data) % huge
    if hasattr(buf, "madvise") and hasattr(mmap, "MADV_HUGEPAGE"):
        start = offset - offset % mmap.PAGESIZE
        try:
            buf.madvise(mmap.MADV_HUGEPAGE, start, nbytes + offset - start)
        except OSError:
            pass  # THP disabled: the copy still works, with small pages
    out = np.frombuffer(buf, dtype=arr.dtype, count=arr.size, offset=offset).reshape(arr.shape)
    out[...] = arr
    out.flags.writeable = False
    return out


_SMALL: SmallTables | None = None
_PRUNE: dict[str, tuple[np.ndarray, np.ndarray]] = {}


def _solved_slice() -> int:
    ep = np.arange(12, dtype=np.int64)
    return int(C.slice_sorted_of(ep))


def small_tables() -> SmallTables:
    """Load (building on first use) the move tables and symmetry classes."""
    global _SMALL
    if _SMALL is not None:
        return _SMALL
    sizes = (C.N_TWIST, C.N_FLIP, C.N_SLICE_SORTED, C.N_CORNER_PERM)
    mt = [table_cache.get_or_build(f"move-{k}", np.uint16, (n, C.N_MOVES), lambda k=k: C.move_table(k))
          for k, n in enumerate(sizes)]
    tw_conj = table_cache.get_or_build("twist-conj", np.uint16, (C.N_TWIST, C.N_SYM), C.twist_conj_table)
    cached: dict[str, np.ndarray] = {}

    def part(i: int):
        if not cached:
            cached.update(zip(("classidx", "rep", "stab"), _classes()))
        return cached[("classidx", "rep", "stab")[i]]

    classidx = table_cache.get_or_build("flipslice-classidx", np.uint32, (C.N_RAW_FLIPSLICE,), lambda: part(0))
    rep = table_cache.get_or_build("flipslice-rep", np.uint32, (N_CLASS,), lambda: part(1))
    stab = table_cache.get_or_build("flipslice-stab", np.uint16, (N_CLASS,), lambda: part(2))
    ss0 = _solved_slice()
    _SMALL = SmallTables(
        tw_move=np.ascontiguousarray(mt[0]), flip_move=np.ascontiguousarray(mt[1]),
        ss_move=np.ascontiguousarray(mt[2]), cp_move=np.ascontiguousarray(mt[3]),
        tw_conj=np.ascontiguousarray(tw_conj), classidx=hot_copy(classidx), rep=rep, stab=stab,
        solved_flipslice=ss0, solved_slice=ss0,
    )
    return _SMALL


def corner_perm_table(metric: str) -> np.ndarray:
    """Distance of every corner permutation in ``metric`` (uint8, 40320 entries)."""
    cp_move = table_cache.get_or_build("move-3", np.uint16, (C.N_CORNER_PERM, C.N_MOVES), lambda: C.move_table(3))
    return table_cache.get_or_build(
        f"cornerperm-dist-{metric}", np.uint8, (C.N_CORNER_PERM,),
        lambda: pair_distances(np.ascontiguousarray(cp_move), np.zeros((1, C.N_MOVES), np.uint16),
                               metric_moves(metric), 0, 0),
    )


BUILD_GB = N_CLASS * ROW_BYTES / 1e9
"""Disk (and shared memory) of one metric's pruning table, in GB."""


def announce_build(metric: str) -> None:
    """Say on stderr, before it starts, that a table build is coming: its size, its time, how to avoid it."""
    print(f"cubebench: building the exact optimal solver's {metric}-turn tables once: about {BUILD_GB:.1f} GB in "
          f"{table_cache.cache_dir()} (${table_cache.ENV_VAR} moves it), 2-15 minutes on 2 cores; later uses load them "
          f"(`python -m cubebench.solver.optimal build` builds them ahead)", file=sys.stderr, flush=True)


def _prune_name(metric: str) -> str:
    return f"prune-flipslice-twist-{metric}"


def tables_ready(metric: str) -> bool:
    """Whether the search in ``metric`` can start without building tables: they are loaded in this process, or
    saved in the cache in the current format (the pruning table is built last).  Reads one small file."""
    metric_moves(metric)
    return metric in _PRUNE or table_cache.read_meta(_prune_name(metric)) is not None


def prune_table(metric: str, progress: bool = True) -> np.ndarray:
    """The flip-slice-twist pruning table of ``metric`` (2-bit, distance mod 3)."""
    metric_moves(metric)
    if metric not in _PRUNE:
        name, shape = _prune_name(metric), (N_CLASS * ROW_BYTES,)
        if table_cache.load(name, np.uint8, shape) is None:
            announce_build(metric)
        small = small_tables()
        meta: dict = {"metric": metric}

        def build() -> np.ndarray:
            t0 = time.perf_counter()
            tab = _build_prune(metric, small, progress)
            meta["build_seconds"] = round(time.perf_counter() - t0, 1)
            return tab

        tab = table_cache.get_or_build(name, np.uint8, shape, build, meta=meta)
        _PRUNE[metric] = (hot_copy(tab), corner_perm_table(metric))
    return _PRUNE[metric][0]


def tables_for(metric: str, progress: bool = True) -> tuple[SmallTables, np.ndarray, np.ndarray]:
    """Everything the search needs for ``metric``: small tables, pruning table, corner table."""
    prune_table(metric, progress)
    return small_tables(), _PRUNE[metric][0], _PRUNE[metric][1]


def forget() -> None:
    """Drop loaded tables (tests use it after changing the cache directory)."""
    global _SMALL
    _SMALL = None
    _PRUNE.clear()
    table_cache.forget()
