"""The cube's 48 symmetries: one position seen from any of 24 sides, or in a mirror.

Turning the whole cube (24 ways) and recolouring it so its centres read ``URFDLB`` again gives the same
problem in other letters; so does its mirror image (a reflection through the L-R plane, with ``R``
becoming ``L'``), recoloured the same way.  All 48 keep the exact distance to solved, and an optimal
solution of one maps move for move onto an optimal solution of the other.  A set of positions kept
apart from another (training positions from evaluation starts) must therefore be apart under all 48:
:func:`symmetry_key` names the whole class by one string (the least of its 48 spellings).

Each symmetry is a signed permutation matrix of the cube's three axes; it moves the sticker at
``(position, normal)`` to the sticker at ``(M position, M normal)`` (:func:`~.facelets.sticker_geometry`),
so the permutations come from geometry alone, not from the move tables they are checked against.
"""

from __future__ import annotations

import itertools
from functools import lru_cache

import numpy as np

from .facelets import CENTRES, FACES, N_STICKERS, sticker_geometry

__all__ = ["symmetry_permutations", "symmetric_facelets", "symmetry_key", "N_SYMMETRIES"]

N_SYMMETRIES = 48
_LETTER_CODES = np.frombuffer(FACES.encode(), dtype=np.uint8)


@lru_cache(maxsize=1)
def symmetry_permutations() -> tuple[np.ndarray, np.ndarray]:
    """``(perms, mirror)``: ``perms[k][i]`` is where symmetry ``k`` moves sticker ``i`` (int64 (48, 54)), and
    ``mirror[k]`` whether it reverses handedness; symmetry 0 is the identity, the first 24 are rotations."""
    pos, nrm = sticker_geometry()
    where = {(tuple(p), tuple(n)): i for i, (p, n) in enumerate(zip(pos.tolist(), nrm.tolist()))}
    rows: list[tuple[bool, list[int]]] = []
    for axes in itertools.permutations(range(3)):
        for signs in itertools.product((1, -1), repeat=3):
            matrix = np.zeros((3, 3), dtype=np.int64)
            matrix[range(3), axes] = signs
            perm = [where[(tuple((matrix @ p).tolist()), tuple((matrix @ n).tolist()))] for p, n in zip(pos, nrm)]
            rows.append((bool(round(np.linalg.det(matrix)) < 0), perm))
    rows.sort(key=lambda row: (row[0], row[1] != list(range(N_STICKERS))))  # identity, rotations, then mirrors
    return np.array([perm for _, perm in rows], dtype=np.int64), np.array([m for m, _ in rows])


def symmetric_facelets(facelets: str) -> list[str]:
    """The 48 spellings of ``facelets`` (54 letters ``URFDLB``; any held orientation): each symmetry's image,
    recoloured so its centres read ``URFDLB``.  The first is ``facelets`` itself when its centres are in place."""
    codes = np.frombuffer(facelets.encode(), dtype=np.uint8)
    if codes.shape != (N_STICKERS,):
        raise ValueError(f"a position is {N_STICKERS} facelet letters, got {len(facelets)} characters")
    perms, _ = symmetry_permutations()
    moved = np.empty((N_SYMMETRIES, N_STICKERS), dtype=np.uint8)
    np.put_along_axis(moved, perms, np.broadcast_to(codes, perms.shape), axis=1)
    lut = np.zeros((N_SYMMETRIES, 256), dtype=np.uint8)
    lut[np.arange(N_SYMMETRIES)[:, None], moved[:, list(CENTRES)]] = _LETTER_CODES
    recoloured = np.take_along_axis(lut, moved.astype(np.int64), axis=1)
    return [row.tobytes().decode() for row in recoloured]


def symmetry_key(facelets: str) -> str:
    """One name for a position and its 47 twins: the least of its 48 spellings (:func:`symmetric_facelets`)."""
    return min(symmetric_facelets(facelets))
