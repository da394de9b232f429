"""Move permutation tables, derived once from the sticker geometry.

Every move the notation knows (18 face turns, 9 whole-cube rotations, 9 slice
turns, 18 wide turns) is a row of ``TABLE``: a gather permutation, so applying
move ``m`` to ``state`` is ``state[TABLE[m]]``.  The 24 held orientations of
the cube are rows of ``ORIENTATIONS`` in the same form.
"""

from __future__ import annotations

import numpy as np

from .facelets import FACES, N_STICKERS, sticker_geometry

# name -> (axis normal the turn is clockwise about, layers as (lo, hi) of the
# coordinate along +axis, i.e. which cubies move)
_AXES = {"U": (1, 1), "D": (1, -1), "R": (0, 1), "L": (0, -1), "F": (2, 1), "B": (2, -1)}


def _layer_spec() -> dict[str, tuple[int, int, tuple[int, ...]]]:
    """Base quarter-turn of every move family: (axis, sign, layers turned)."""
    spec: dict[str, tuple[int, int, tuple[int, ...]]] = {}
    for face, (axis, sign) in _AXES.items():
        spec[face] = (axis, sign, (sign,))
        spec[face.lower()] = (axis, sign, (sign, 0))  # wide: outer + middle layer
    spec["M"] = (0, -1, (0,))  # follows L
    spec["E"] = (1, -1, (0,))  # follows D
    spec["S"] = (2, 1, (0,))  # follows F
    spec["x"] = (0, 1, (-1, 0, 1))  # follows R
    spec["y"] = (1, 1, (-1, 0, 1))  # follows U
    spec["z"] = (2, 1, (-1, 0, 1))  # follows F
    return spec


def _quarter_turn_matrix(axis: int, sign: int) -> np.ndarray:
    """Clockwise quarter turn seen from the face whose normal is ``sign * e_axis``."""
    n = np.zeros(3, dtype=np.int64)
    n[axis] = sign
    # Rotation by -90 degrees about n: v -> n (n.v) - n x v.
    cross = np.array([[0, -n[2], n[1]], [n[2], 0, -n[0]], [-n[1], n[0], 0]])
    return np.outer(n, n) - cross


def _gather_from_map(target: np.ndarray) -> np.ndarray:
    """Gather table for a move that sends the sticker at ``j`` to ``target[j]``."""
    perm = np.empty(N_STICKERS, dtype=np.uint8)
    perm[target] = np.arange(N_STICKERS, dtype=np.uint8)
    return perm


def _quarter_table(axis: int, sign: int, layers: tuple[int, ...]) -> np.ndarray:
    pos, nrm = sticker_geometry()
    rot = _quarter_turn_matrix(axis, sign)
    moving = np.isin(pos[:, axis], layers)
    new_pos = np.where(moving[:, None], pos @ rot.T, pos)
    new_nrm = np.where(moving[:, None], nrm @ rot.T, nrm)
    key = {(tuple(p), tuple(q)): i for i, (p, q) in enumerate(zip(pos, nrm))}
    target = np.array([key[(tuple(p), tuple(q))] for p, q in zip(new_pos, new_nrm)])
    return _gather_from_map(target)


def compose(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """Gather table of ``first`` followed by ``second``."""
    return first[second]


def invert(perm: np.ndarray) -> np.ndarray:
    """Gather table of the inverse move."""
    inv = np.empty_like(perm)
    inv[perm] = np.arange(len(perm), dtype=perm.dtype)
    return inv


_FAMILIES = FACES + "xyz" + "MES" + FACES.lower()
_SUFFIXES = ("", "2", "'")


def _build() -> tuple[tuple[str, ...], np.ndarray]:
    spec = _layer_spec()
    names, rows = [], []
    for fam in _FAMILIES:
        q = _quarter_table(*spec[fam])
        for suffix, perm in zip(_SUFFIXES, (q, compose(q, q), invert(q))):
            names.append(fam + suffix)
            rows.append(perm)
    return tuple(names), np.stack(rows).astype(np.uint8)


MOVE_NAMES, TABLE = _build()
"""All named moves and their gather tables, in family order U R F D L B x y z M E S u r f d l b."""

MOVE_INDEX = {name: i for i, name in enumerate(MOVE_NAMES)}
INVERSE = np.array([MOVE_INDEX[_inverse_name] for _inverse_name in (
    n[:-1] if n.endswith("'") else n if n.endswith("2") else n + "'" for n in MOVE_NAMES
)], dtype=np.int64)
"""``INVERSE[m]`` is the index of the move that undoes move ``m``."""

FACE_TURNS = tuple(f + s for f in FACES for s in _SUFFIXES)
ROTATIONS = tuple(f + s for f in "xyz" for s in _SUFFIXES)

QUARTER_ACTIONS = ("U", "U'", "D", "D'", "L", "L'", "R", "R'", "F", "F'", "B", "B'")
"""CubeBench's 12 quarter-turn actions, in the paper's order (quarter-turn metric)."""
FACE_ACTIONS = tuple(m for f in "UDLRFB" for m in (f, f + "'", f + "2"))
"""The 18 face-turn actions (half-turn metric), grouped by face in the same order."""
VIEW_ACTIONS = ("x", "x'", "y", "y'", "z", "z'")
"""Whole-cube view rotations, appended after the move actions when views are enabled."""


def _orientations() -> tuple[tuple[str, ...], np.ndarray]:
    """The 24 held orientations (BFS over x and y), each with a shortest name."""
    ident = np.arange(N_STICKERS, dtype=np.uint8)
    names, perms, seen = [""], [ident], {ident.tobytes()}
    frontier = [("", ident)]
    gens = [(g, TABLE[MOVE_INDEX[g]]) for g in ("x", "y", "z", "x'", "y'", "z'", "x2", "y2", "z2")]
    while frontier:
        nxt = []
        for name, perm in frontier:
            for g, gperm in gens:
                p = compose(perm, gperm)
                if p.tobytes() not in seen:
                    seen.add(p.tobytes())
                    label = (name + " " + g).strip()
                    names.append(label)
                    perms.append(p)
                    nxt.append((label, p))
        frontier = nxt
    return tuple(names), np.stack(perms)


ORIENTATION_NAMES, ORIENTATIONS = _orientations()
"""The 24 orientations as gather tables from the reference orientation, with the rotation sequence that reaches each."""

# Sparse form of each move: only the positions a move changes, for the kernels.
_MOVED = TABLE != np.arange(N_STICKERS, dtype=np.uint8)
SPARSE_COUNT = _MOVED.sum(axis=1).astype(np.int64)
SPARSE_DST = np.zeros((len(MOVE_NAMES), N_STICKERS), dtype=np.int64)
SPARSE_SRC = np.zeros((len(MOVE_NAMES), N_STICKERS), dtype=np.int64)
for _m in range(len(MOVE_NAMES)):
    _dst = np.flatnonzero(_MOVED[_m])
    SPARSE_DST[_m, : len(_dst)] = _dst
    SPARSE_SRC[_m, : len(_dst)] = TABLE[_m, _dst]
del _m, _dst
