"""Facelet layout: Kociemba's URFDLB order and the geometry behind it.

Every other module derives its tables from the positions defined here, so the
facelet order (docs/conventions.md) lives in exactly one place.

Position ``i`` (0..53) is face ``FACES[i // 9]``, sticker ``i % 9`` in row-major
order as seen on the standard net: U from above with B at the top, D from below
with F at the top, and L, F, R, B from the front of the ring.  A *state* is a
``uint8[54]`` permutation of sticker ids: ``state[i]`` is the id of the sticker
now at position ``i``; the solved state is the identity and a sticker's colour
is ``id // 9`` (the face it belongs to).
"""

from __future__ import annotations

import numpy as np

FACES = "URFDLB"
"""Face letters in facelet order; also the 54-character string alphabet."""

COLOUR_LETTERS = "WRGYOB"
"""Western colour scheme in face order: U=White, R=Red, F=Green, D=Yellow, L=Orange, B=Blue."""

COLOUR_NAMES = ("white", "red", "green", "yellow", "orange", "blue")

COLOUR_RGB = np.array(
    [
        [255, 255, 255],  # white
        [200, 16, 46],  # red
        [0, 155, 72],  # green
        [255, 213, 0],  # yellow
        [255, 88, 0],  # orange
        [0, 70, 173],  # blue
    ],
    dtype=np.uint8,
)
"""RGB of each colour index, shared by every renderer."""

N_STICKERS = 54


def face_slice(face: str) -> slice:
    """The positions of one face's nine stickers (``face_slice("F")`` is 18..26)."""
    k = FACES.index(face)
    return slice(9 * k, 9 * k + 9)


SOLVED = np.arange(N_STICKERS, dtype=np.uint8)
SOLVED_FACELETS = "".join(f * 9 for f in FACES)
CENTRES = tuple(9 * f + 4 for f in range(6))

# Outward unit normal of each face, in a right-handed frame: x towards R,
# y towards U, z towards F.
FACE_NORMALS = {
    "U": (0, 1, 0),
    "R": (1, 0, 0),
    "F": (0, 0, 1),
    "D": (0, -1, 0),
    "L": (-1, 0, 0),
    "B": (0, 0, -1),
}


def _sticker_xyz(face: str, row: int, col: int) -> tuple[int, int, int]:
    """Cubie coordinates (each in -1..1) of a sticker on the standard net."""
    a, b = row - 1, col - 1  # row grows downwards, col rightwards on the net
    if face == "U":
        return (b, 1, a)
    if face == "D":
        return (b, -1, -a)
    if face == "F":
        return (b, -a, 1)
    if face == "B":
        return (-b, -a, -1)
    if face == "R":
        return (1, -a, -b)
    return (-1, -a, b)  # L


def sticker_geometry() -> tuple[np.ndarray, np.ndarray]:
    """Return ``(positions, normals)``, both int8 (54, 3), in facelet order.

    ``positions`` is the centre of the cubie carrying the sticker and
    ``normals`` the direction the sticker faces; together they identify a
    facelet uniquely, which is how move permutations are computed.
    """
    pos = np.zeros((N_STICKERS, 3), dtype=np.int8)
    nrm = np.zeros((N_STICKERS, 3), dtype=np.int8)
    for f, face in enumerate(FACES):
        for k in range(9):
            pos[9 * f + k] = _sticker_xyz(face, k // 3, k % 3)
            nrm[9 * f + k] = FACE_NORMALS[face]
    return pos, nrm


def colours(state: np.ndarray) -> np.ndarray:
    """Colour index (0..5, in face order) of each position; works on batches."""
    return np.asarray(state) // 9
