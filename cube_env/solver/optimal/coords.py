"""Cubie coordinates, move tables and symmetries for the optimal solver.

The solver works on *coordinates*: small integers that encode one aspect of a
cube (corner twist, edge flip, where the four slice edges are, the corner
permutation).  A face turn maps each coordinate through a lookup table, so the
search never touches stickers.  Everything here is derived from the engine's
sticker tables (:data:`cubebench.engine.moves.TABLE`) and its cubie layout
(:mod:`cubebench.engine.cubie`), so it cannot drift from the engine's
conventions; the tests check the round trips.

Conventions
-----------
* A sticker state ``X`` (uint8[54]) is decoded to Kociemba cubies
  ``cp, co, ep, eo``.  The decoder reads sticker *ids*, not colours, so it also
  decodes edge cubies of mirror images.
* The 18 face turns are numbered ``3 * face + power`` with faces ``URFDLB`` and
  powers ``(quarter, half, inverse quarter)`` -- the first 18 rows of the
  engine's ``MOVE_NAMES``.
* Symmetry conjugation of a state by a geometric symmetry with sticker gather
  table ``P`` is ``conj(X) = P^-1[X[P]]``; it is a group homomorphism, maps face
  turns to face turns and preserves the distance of a state in both metrics.
* ``D4H`` holds the 16 symmetries that keep the U-D axis (rotations about it,
  the half turn about the F-B axis, and the left-right mirror): the target
  subgroup of the pruning table is invariant under them, so the table needs
  one entry per symmetry class only.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from ...engine.cubie import CORNER_FACELETS, EDGE_FACELETS
from ...engine.facelets import FACES, N_STICKERS, sticker_geometry
from ...engine.moves import MOVE_INDEX, MOVE_NAMES, TABLE

N_MOVES = 18
N_TWIST = 2187  # 3^7
N_FLIP = 2048  # 2^11
N_SLICE_SORTED = 11880  # 12 * 11 * 10 * 9
N_CORNER_PERM = 40320  # 8!
N_RAW_FLIPSLICE = N_FLIP * N_SLICE_SORTED
N_SYM = 16

FACE_MOVES = tuple(MOVE_NAMES[:N_MOVES])
"""Move names in solver order (``3 * face + power``), equal to the engine's first 18."""
assert FACE_MOVES == tuple(f + s for f in FACES for s in ("", "2", "'"))

HALF_TURN_MOVES = np.arange(N_MOVES, dtype=np.int64)
QUARTER_TURN_MOVES = np.array([m for m in range(N_MOVES) if m % 3 != 1], dtype=np.int64)

_CF = np.ascontiguousarray(CORNER_FACELETS, dtype=np.int64)
_EF = np.ascontiguousarray(EDGE_FACELETS, dtype=np.int64)


def _sticker_lookup() -> tuple[np.ndarray, np.ndarray]:
    """For every sticker id: (cubie, facelet index) of the corner/edge it belongs to, else -1."""
    corner = np.full((N_STICKERS, 2), -1, dtype=np.int64)
    edge = np.full((N_STICKERS, 2), -1, dtype=np.int64)
    for j in range(8):
        for k in range(3):
            corner[_CF[j, k]] = (j, k)
    for j in range(12):
        for k in range(2):
            edge[_EF[j, k]] = (j, k)
    return corner, edge


_ID_CORNER, _ID_EDGE = _sticker_lookup()


# --------------------------------------------------------------------------
# Decoding stickers to cubies and back (numba, single state)
# --------------------------------------------------------------------------

@nb.njit(cache=True, nogil=True)
def decode_cubies(state, cf, ef, id_corner, id_edge, cp, co, ep, eo):
    """Fill ``cp, co, ep, eo`` (Kociemba cubies) from a sticker-id state.

    The sticker at a slot's first facelet is facelet ``k`` of cubie ``j``; the
    cubie's reference (U/D or, for edges, U/D-else-F/B) sticker then sits
    ``-k`` places further round the slot, which is the orientation.
    """
    for i in range(8):
        sid = state[cf[i, 0]]
        cp[i] = id_corner[sid, 0]
        co[i] = (3 - id_corner[sid, 1]) % 3
    for i in range(12):
        sid = state[ef[i, 0]]
        ep[i] = id_edge[sid, 0]
        eo[i] = id_edge[sid, 1]


@nb.njit(cache=True, nogil=True)
def encode_cubies(cp, co, ep, eo, cf, ef, out):
    """Write the sticker-id state of cubies ``cp, co, ep, eo`` into ``out`` (no validation)."""
    for i in range(54):
        out[i] = i
    for i in range(8):
        for k in range(3):
            out[cf[i, (k + co[i]) % 3]] = cf[cp[i], k]
    for i in range(12):
        for k in range(2):
            out[ef[i, (k + eo[i]) % 2]] = ef[ep[i], k]


# --------------------------------------------------------------------------
# Coordinates (numba)
# --------------------------------------------------------------------------

@nb.njit(cache=True, nogil=True)
def twist_of(co):
    """Corner twist coordinate 0..2186 (the last corner's twist is implied)."""
    t = 0
    for i in range(7):
        t = 3 * t + co[i]
    return t


@nb.njit(cache=True, nogil=True)
def set_twist(t, co):
    """Inverse of :func:`twist_of`."""
    s = 0
    for i in range(6, -1, -1):
        co[i] = t % 3
        s += co[i]
        t //= 3
    co[7] = (3 - s % 3) % 3


@nb.njit(cache=True, nogil=True)
def flip_of(eo):
    """Edge flip coordinate 0..2047 (the last edge's flip is implied)."""
    f = 0
    for i in range(11):
        f = 2 * f + eo[i]
    return f


@nb.njit(cache=True, nogil=True)
def set_flip(f, eo):
    """Inverse of :func:`flip_of`."""
    s = 0
    for i in range(10, -1, -1):
        eo[i] = f % 2
        s += eo[i]
        f //= 2
    eo[11] = s % 2


@nb.njit(cache=True, nogil=True)
def slice_sorted_of(ep):
    """Where the slice edges FR, FL, BL, BR (cubies 8..11) are, in order: 0..11879.

    Ranks the ordered 4-tuple of their slots as a partial permutation of 12.
    """
    pos = np.empty(4, np.int64)
    for i in range(12):
        if ep[i] >= 8:
            pos[ep[i] - 8] = i
    idx = 0
    for k in range(4):
        r = pos[k]
        for j in range(k):
            if pos[j] < pos[k]:
                r -= 1
        idx = idx * (12 - k) + r
    return idx


@nb.njit(cache=True, nogil=True)
def _take_nth_unused(used, r):
    """Mark the ``r``-th (0-based) still unused index as used and return it (unranking helper)."""
    cnt = -1
    for i in range(used.shape[0]):
        if not used[i]:
            cnt += 1
            if cnt == r:
                used[i] = True
                return i
    return -1


@nb.njit(cache=True, nogil=True)
def set_slice_sorted(idx, ep):
    """Inverse of :func:`slice_sorted_of`; the other slots get edges 0..7 in order."""
    r = np.empty(4, np.int64)
    for k in range(3, -1, -1):
        r[k] = idx % (12 - k)
        idx //= 12 - k
    used = np.zeros(12, np.bool_)
    for k in range(4):
        ep[_take_nth_unused(used, r[k])] = 8 + k
    nxt = 0
    for i in range(12):
        if not used[i]:
            ep[i] = nxt
            nxt += 1


@nb.njit(cache=True, nogil=True)
def corner_perm_of(cp):
    """Lehmer rank 0..40319 of the corner permutation (0 = solved)."""
    idx = 0
    for i in range(8):
        smaller = 0
        for j in range(i + 1, 8):
            if cp[j] < cp[i]:
                smaller += 1
        idx = idx * (8 - i) + smaller
    return idx


@nb.njit(cache=True, nogil=True)
def set_corner_perm(idx, cp):
    """Inverse of :func:`corner_perm_of`."""
    digits = np.empty(8, np.int64)
    for i in range(7, -1, -1):
        digits[i] = idx % (8 - i)
        idx //= 8 - i
    used = np.zeros(8, np.bool_)
    for i in range(8):
        cp[i] = _take_nth_unused(used, digits[i])


# --------------------------------------------------------------------------
# Symmetries
# --------------------------------------------------------------------------

def _inverse(perm: np.ndarray) -> np.ndarray:
    inv = np.empty_like(perm)
    inv[perm] = np.arange(len(perm), dtype=perm.dtype)
    return inv


def conj_states(states: np.ndarray, perm: np.ndarray) -> np.ndarray:
    """``P^-1[X[P]]`` for one state or a batch: the state seen through symmetry ``P``."""
    return _inverse(perm)[states[..., perm]]


def _mirror_lr() -> np.ndarray:
    """Sticker gather table of the reflection x -> -x (swaps the L and R sides)."""
    pos, nrm = sticker_geometry()
    key = {(tuple(p), tuple(q)): i for i, (p, q) in enumerate(zip(pos.tolist(), nrm.tolist()))}
    flip = np.array([-1, 1, 1])
    target = np.array([key[(tuple(p * flip), tuple(q * flip))] for p, q in zip(pos, nrm)])
    return _inverse(target.astype(np.uint8))


def _d4h() -> np.ndarray:
    """The 16 symmetries keeping the U-D axis, as sticker gather tables (identity first)."""
    gens = [TABLE[MOVE_INDEX["y"]], TABLE[MOVE_INDEX["z2"]], _mirror_lr()]
    ident = np.arange(N_STICKERS, dtype=np.uint8)
    found = {ident.tobytes(): ident}
    frontier = [ident]
    while frontier:
        nxt = []
        for p in frontier:
            for g in gens:
                q = p[g]
                if q.tobytes() not in found:
                    found[q.tobytes()] = q
                    nxt.append(q)
        frontier = nxt
    syms = [ident] + [v for k, v in sorted(found.items()) if k != ident.tobytes()]
    assert len(syms) == N_SYM
    return np.stack(syms)


D4H = _d4h()
"""(16, 54) sticker gather tables of the U-D-axis symmetries; ``D4H[0]`` is the identity."""


def _sym_inverse() -> np.ndarray:
    keys = {D4H[s].tobytes(): s for s in range(N_SYM)}
    return np.array([keys[_inverse(D4H[s]).tobytes()] for s in range(N_SYM)], dtype=np.int64)


SYM_INV = _sym_inverse()

AXIS_ROT = np.stack([np.arange(N_STICKERS, dtype=np.uint8), TABLE[MOVE_INDEX["z"]], TABLE[MOVE_INDEX["x"]]])
"""Rotations whose conjugation turns the R-L axis (z) and the F-B axis (x) into the U-D axis."""


def _face_move_of(perm: np.ndarray) -> int:
    for m in range(N_MOVES):
        if np.array_equal(TABLE[m], perm):
            return m
    raise AssertionError("a symmetry mapped a face turn to something else")


def _axis_moves() -> np.ndarray:
    """``AXIS_MOVE[a, m]``: the face turn that move ``m`` becomes in axis ``a``'s frame."""
    out = np.empty((3, N_MOVES), dtype=np.int64)
    for a in range(3):
        for m in range(N_MOVES):
            out[a, m] = _face_move_of(conj_states(TABLE[m], AXIS_ROT[a]))
    return out


AXIS_MOVE = _axis_moves()


# --------------------------------------------------------------------------
# Batch decoding helpers (Python side, used to build the small tables)
# --------------------------------------------------------------------------

@nb.njit(cache=True, nogil=True)
def _decode_batch(states, cf, ef, id_corner, id_edge, out):
    """out[b] = (twist, flip, slice_sorted, corner_perm) of states[b]."""
    cp = np.empty(8, np.int64)
    co = np.empty(8, np.int64)
    ep = np.empty(12, np.int64)
    eo = np.empty(12, np.int64)
    for b in range(states.shape[0]):
        decode_cubies(states[b], cf, ef, id_corner, id_edge, cp, co, ep, eo)
        out[b, 0] = twist_of(co)
        out[b, 1] = flip_of(eo)
        out[b, 2] = slice_sorted_of(ep)
        out[b, 3] = corner_perm_of(cp)


def decode_coords(states: np.ndarray) -> np.ndarray:
    """(B, 4) int64: twist, flip, slice_sorted, corner_perm of each sticker state."""
    states = np.ascontiguousarray(np.atleast_2d(states), dtype=np.uint8)
    out = np.empty((states.shape[0], 4), dtype=np.int64)
    _decode_batch(states, _CF, _EF, _ID_CORNER, _ID_EDGE, out)
    return out


@nb.njit(cache=True, nogil=True)
def _encode_batch(kind, n, cf, ef, out):
    """Sticker states of coordinate values 0..n-1 of one kind, all else solved."""
    cp = np.arange(8).astype(np.int64)
    co = np.zeros(8, np.int64)
    ep = np.arange(12).astype(np.int64)
    eo = np.zeros(12, np.int64)
    for v in range(n):
        if kind == 0:
            set_twist(v, co)
        elif kind == 1:
            set_flip(v, eo)
        elif kind == 2:
            set_slice_sorted(v, ep)
        else:
            set_corner_perm(v, cp)
        encode_cubies(cp, co, ep, eo, cf, ef, out[v])


_KIND_SIZE = (N_TWIST, N_FLIP, N_SLICE_SORTED, N_CORNER_PERM)


def coordinate_states(kind: int) -> np.ndarray:
    """Sticker states realising every value of coordinate ``kind`` (0 twist, 1 flip, 2 slice, 3 cperm)."""
    n = _KIND_SIZE[kind]
    out = np.empty((n, N_STICKERS), dtype=np.uint8)
    _encode_batch(kind, n, _CF, _EF, out)
    return out


def move_table(kind: int) -> np.ndarray:
    """(n, 18) uint16: coordinate ``kind`` after each face turn."""
    states = coordinate_states(kind)
    out = np.empty((len(states), N_MOVES), dtype=np.uint16)
    for m in range(N_MOVES):
        out[:, m] = decode_coords(states[:, TABLE[m]])[:, kind]
    return out


def twist_conj_table() -> np.ndarray:
    """(2187, 16) uint16: twist of the cube conjugated by each D4h symmetry."""
    states = coordinate_states(0)
    out = np.empty((N_TWIST, N_SYM), dtype=np.uint16)
    for s in range(N_SYM):
        out[:, s] = decode_coords(conj_states(states, D4H[s]))[:, 0]
    return out


def edge_sym_cubies() -> tuple[np.ndarray, np.ndarray]:
    """(16, 12) edge permutation and orientation of each D4h symmetry, as cubies."""
    ep = np.empty((N_SYM, 12), dtype=np.int64)
    eo = np.empty((N_SYM, 12), dtype=np.int64)
    for s in range(N_SYM):
        sid = D4H[s][_EF[:, 0]]
        ep[s] = _ID_EDGE[sid, 0]
        eo[s] = _ID_EDGE[sid, 1]
    return ep, eo
