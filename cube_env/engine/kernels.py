"""Numba kernels over single states and batches.

Each kernel takes the move table as an argument (``TABLE`` from :mod:`.moves`),
so one compiled function serves every move set.  These are the portable
kernels; :mod:`.simd` has the AVX-512 VBMI ones that :mod:`.apply` prefers.
"""

from __future__ import annotations

import numba as nb
import numpy as np

_OPTS = dict(cache=True, nogil=True, fastmath=True)


@nb.njit(**_OPTS)
def apply_move(state, table, move):
    """New state after one move (``state[table[move]]``)."""
    out = np.empty(54, np.uint8)
    row = table[move]
    for i in range(54):
        out[i] = state[row[i]]
    return out


@nb.njit(**_OPTS)
def apply_moves(state, table, moves):
    """New state after a whole move sequence, in one call."""
    a = state.copy()
    b = np.empty(54, np.uint8)
    for k in range(moves.shape[0]):
        row = table[moves[k]]
        for i in range(54):
            b[i] = a[row[i]]
        a, b = b, a
    return a


@nb.njit(**_OPTS)
def _gather_rows(states, moves, table, out, lo, hi):
    """Rows ``lo..hi-1``: ``out[b] = states[b][table[moves[b]]]`` through a row copy (so in place works)."""
    tmp = np.empty(54, np.uint8)
    for b in range(lo, hi):
        m = moves[b]
        for i in range(54):
            tmp[i] = states[b, i]
        if m < 0:
            for i in range(54):
                out[b, i] = tmp[i]
        else:
            for i in range(54):
                out[b, i] = tmp[table[m, i]]


@nb.njit(**_OPTS)
def apply_batch_serial(states, moves, table, out):
    """Write ``states[b]`` after ``moves[b]`` into ``out[b]`` for every b.

    ``out`` may be ``states`` (in place); ``moves[b] < 0`` copies the state unchanged.
    """
    _gather_rows(states, moves, table, out, 0, states.shape[0])


_CHUNK = 4096


@nb.njit(parallel=True, **_OPTS)
def apply_batch_parallel(states, moves, table, out):
    """:func:`apply_batch_serial` over chunks of rows on numba's threads (large batches only)."""
    n = states.shape[0]
    for c in nb.prange((n + _CHUNK - 1) // _CHUNK):
        _gather_rows(states, moves, table, out, c * _CHUNK, min(n, (c + 1) * _CHUNK))


@nb.njit(**_OPTS)
def is_solved(state):
    """True when every face shows one colour, whatever the held orientation."""
    for f in range(6):
        c = state[9 * f] // 9
        for k in range(1, 9):
            if state[9 * f + k] // 9 != c:
                return False
    return True


@nb.njit(**_OPTS)
def solved_after(states, table, moves):
    """For each row of ``states`` (n, 54), how many moves of ``moves`` leave it solved first (0: solved as it is),
    ``-1`` when no prefix does: what a fixed move sequence played blind from each start solves, and when."""
    out = np.full(states.shape[0], -1, np.int64)
    cur = np.empty(54, np.uint8)
    nxt = np.empty(54, np.uint8)
    for r in range(states.shape[0]):
        cur[:] = states[r]
        if is_solved(cur):
            out[r] = 0
            continue
        for k in range(moves.shape[0]):
            row = table[moves[k]]
            for i in range(54):
                nxt[i] = cur[row[i]]
            cur, nxt = nxt, cur
            if is_solved(cur):
                out[r] = k + 1
                break
    return out


SOLVED_BITS = (1 << 54) - 1
""":func:`centre_bits` of a solved state (every sticker has its face centre's colour)."""


@nb.njit(**_OPTS)
def centre_bits(state, early):
    """Bit ``9 f + k`` set when sticker ``k`` of face ``f`` has the colour of that face's centre.

    All 54 bits set (:data:`SOLVED_BITS`) is a solved cube, whatever the held
    orientation.  With ``early`` the scan stops at the first mismatch: enough
    to tell solved, not to count.  The one definition of what the dense
    reward potentials count (:mod:`.rewards`); the vector env's AVX-512 VBMI
    step computes the same bits with :func:`cubebench.engine.simd.centre_bits`.
    """
    bits = 0
    for f in range(6):
        centre = state[9 * f + 4] // 9
        for k in range(9):
            same = state[9 * f + k] // 9 == centre
            if early and not same:
                return bits
            bits |= np.int64(same) << (9 * f + k)  # branch-free: random states mispredict
    return bits


@nb.njit(**_OPTS)
def count_in_place(bits):
    """Stickers in place in :func:`centre_bits` (its popcount, 6..54)."""
    n = 0
    while bits:
        bits &= bits - 1
        n += 1
    return n


@nb.njit(**_OPTS)
def count_complete_faces(bits):
    """Faces (0..6) whose nine stickers all have their centre's colour, from :func:`centre_bits`."""
    n = 0
    for f in range(6):
        if (bits >> (9 * f)) & 0x1FF == 0x1FF:
            n += 1
    return n


@nb.njit(**_OPTS)
def stickers_in_place(state):
    """Number of stickers whose colour matches the centre of the face they are on (6..54)."""
    return count_in_place(centre_bits(state, False))


@nb.njit(**_OPTS)
def faces_completed(state):
    """Number of faces (0..6) whose nine stickers all match their centre."""
    return count_complete_faces(centre_bits(state, False))


@nb.njit(**_OPTS)
def batch_is_solved(states, out):
    """``out[b] = is_solved(states[b])``."""
    for b in range(states.shape[0]):
        out[b] = is_solved(states[b])


@nb.njit(**_OPTS)
def batch_stickers_in_place(states, out):
    """``out[b] = stickers_in_place(states[b])``."""
    for b in range(states.shape[0]):
        out[b] = stickers_in_place(states[b])


@nb.njit(**_OPTS)
def batch_faces_completed(states, out):
    """``out[b] = faces_completed(states[b])``."""
    for b in range(states.shape[0]):
        out[b] = faces_completed(states[b])


@nb.njit(**_OPTS)
def invert_moves(moves, inverse):
    """Move indices of the sequence that undoes ``moves``."""
    n = moves.shape[0]
    out = np.empty(n, np.int64)
    for k in range(n):
        out[k] = inverse[moves[n - 1 - k]]
    return out


@nb.njit(**_OPTS)
def invert_state(state):
    """The state whose effect undoes ``state`` (group inverse of the permutation)."""
    out = np.empty(54, np.uint8)
    for i in range(54):
        out[state[i]] = i
    return out
