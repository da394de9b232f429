"""Cubie level: corner/edge permutation and orientation, in Kociemba's conventions.

Corners ``URF UFL ULB UBR DFR DLF DBL DRB`` and edges
``UR UF UL UB DR DF DL DB FR FL BL BR``, numbered in that order; a corner's
twist counts clockwise turns of its U/D sticker away from the U/D face, an
edge's flip is 1 when its reference sticker (U/D, else F/B) is off the
reference face.  This is the representation solvers and validation work in.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .errors import InvalidStateError
from .facelets import FACES


def _f(name: str) -> int:
    """Facelet index of e.g. ``"U9"`` (1-based sticker number on the net)."""
    return 9 * FACES.index(name[0]) + int(name[1]) - 1


CORNER_NAMES = ("URF", "UFL", "ULB", "UBR", "DFR", "DLF", "DBL", "DRB")
EDGE_NAMES = ("UR", "UF", "UL", "UB", "DR", "DF", "DL", "DB", "FR", "FL", "BL", "BR")
CORNER_FACELETS = np.array(
    [[_f(a), _f(b), _f(c)] for a, b, c in (
        ("U9", "R1", "F3"), ("U7", "F1", "L3"), ("U1", "L1", "B3"), ("U3", "B1", "R3"),
        ("D3", "F9", "R7"), ("D1", "L9", "F7"), ("D7", "B9", "L7"), ("D9", "R9", "B7"),
    )],
    dtype=np.int64,
)
"""Facelet positions of each corner slot, U/D sticker first, then clockwise."""
EDGE_FACELETS = np.array(
    [[_f(a), _f(b)] for a, b in (
        ("U6", "R2"), ("U8", "F2"), ("U4", "L2"), ("U2", "B2"), ("D6", "R8"), ("D2", "F8"),
        ("D4", "L8"), ("D8", "B8"), ("F6", "R4"), ("F4", "L6"), ("B6", "L4"), ("B4", "R6"),
    )],
    dtype=np.int64,
)
"""Facelet positions of each edge slot, reference sticker first."""
CORNER_COLOURS = CORNER_FACELETS // 9
EDGE_COLOURS = EDGE_FACELETS // 9


@dataclass(frozen=True)
class CubieCube:
    """A cube as cubie permutations and orientations (all int8 arrays)."""

    cp: np.ndarray  # corner at each slot
    co: np.ndarray  # twist 0..2 of the corner at each slot
    ep: np.ndarray  # edge at each slot
    eo: np.ndarray  # flip 0..1 of the edge at each slot


def _parity(perm: np.ndarray) -> int:
    """0 for an even permutation, 1 for odd."""
    seen = np.zeros(len(perm), dtype=bool)
    swaps = 0
    for i in range(len(perm)):
        j, length = i, 0
        while not seen[j]:
            seen[j] = True
            j = perm[j]
            length += 1
        swaps += max(length - 1, 0)
    return swaps % 2


def from_colours(col: np.ndarray) -> CubieCube:
    """Decode 54 colour indices with centres in reference order; validates everything.

    Raises :class:`InvalidStateError` naming the first fault found: a sticker
    set that is no cubie, a cubie present twice, a twisted corner, a flipped
    edge, or a permutation parity mismatch.
    """
    cp = np.empty(8, np.int8)
    co = np.empty(8, np.int8)
    for i in range(8):
        c = col[CORNER_FACELETS[i]]
        ori = next((k for k in range(3) if c[k] in (0, 3)), None)
        match = None
        if ori is not None:
            spun = (c[ori], c[(ori + 1) % 3], c[(ori + 2) % 3])
            match = next((j for j in range(8) if tuple(CORNER_COLOURS[j]) == spun), None)
        if match is None or ori is None:  # no match whenever there is no orientation
            colours = "".join(FACES[k] for k in c)
            raise InvalidStateError(
                f"corner slot {CORNER_NAMES[i]} holds stickers {colours}, which are not one corner "
                "of a cube (impossible colour combination or mirrored corner)"
            )
        cp[i], co[i] = match, ori
    ep = np.empty(12, np.int8)
    eo = np.empty(12, np.int8)
    for i in range(12):
        c = tuple(col[EDGE_FACELETS[i]])
        for j in range(12):
            if tuple(EDGE_COLOURS[j]) == c:
                ep[i], eo[i] = j, 0
                break
            if tuple(EDGE_COLOURS[j]) == c[::-1]:
                ep[i], eo[i] = j, 1
                break
        else:
            colours = "".join(FACES[k] for k in c)
            raise InvalidStateError(
                f"edge slot {EDGE_NAMES[i]} holds stickers {colours}, which are not one edge of a cube"
            )
    _check_cubies(cp, co, ep, eo)
    return CubieCube(cp, co, ep, eo)


def _check_cubies(cp: np.ndarray, co: np.ndarray, ep: np.ndarray, eo: np.ndarray) -> None:
    for names, perm in ((CORNER_NAMES, cp), (EDGE_NAMES, ep)):
        counts = np.bincount(perm, minlength=len(names))
        if (counts != 1).any():
            dup = names[int(np.argmax(counts))]
            raise InvalidStateError(f"the {dup} cubie appears {counts.max()} times; every cubie must appear once")
    if int(co.sum()) % 3:
        raise InvalidStateError(
            f"twisted corner: corner twists sum to {int(co.sum()) % 3} (mod 3), must be 0"
        )
    if int(eo.sum()) % 2:
        raise InvalidStateError("flipped edge: edge flips sum to 1 (mod 2), must be 0")
    if _parity(cp) != _parity(ep):
        raise InvalidStateError(
            "parity: corner and edge permutations have different parity (two pieces swapped)"
        )


def to_state(cc: CubieCube) -> np.ndarray:
    """Sticker-id state (reference orientation) of a cubie-level cube."""
    _check_cubies(np.asarray(cc.cp), np.asarray(cc.co), np.asarray(cc.ep), np.asarray(cc.eo))
    state = np.arange(54, dtype=np.uint8)
    for i in range(8):
        for k in range(3):
            state[CORNER_FACELETS[i][(k + cc.co[i]) % 3]] = CORNER_FACELETS[cc.cp[i]][k]
    for i in range(12):
        for k in range(2):
            state[EDGE_FACELETS[i][(k + cc.eo[i]) % 2]] = EDGE_FACELETS[cc.ep[i]][k]
    return state
