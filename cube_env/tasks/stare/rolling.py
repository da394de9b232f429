"""Does a polyomino fold into a cube?  Roll the engine's cube across its cells and see.

Stand a cube on one cell of the net drawn on the floor and tip it over an edge onto a neighbouring
cell: the face that now touches the floor is the cube face that the neighbouring cell becomes when
the net is wrapped around the cube.  Each tip is a whole-cube quarter rotation (``x``, ``x'``,
``z`` or ``z'``) from the engine's own move tables, applied to the solved state; the face touching
the floor is read off the D centre.  So the engine's cube geometry is the one source of truth here:
no table of the eleven nets, no hand-written rotation.

The floor is seen from above with the cube's B side at the top of the page (how the standard net
shows U): north is B, south F, east R, west L.  Tipping east brings the R face down, and so on.

A net folds exactly when (1) tipping along the cells gives six different faces, and (2) every pair
of neighbouring cells agrees, i.e. tipping from either one onto the other gives the same whole
orientation (this fails around a 2x2 block, whose four faces would meet at one cube corner).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Iterable

import numpy as np

from ...engine.facelets import CENTRES, FACES, SOLVED
from ...engine.kernels import apply_move
from ...engine.moves import MOVE_INDEX, TABLE
from .polyomino import STEPS, Cell, is_connected

SIDE_OF = {"north": "B", "south": "F", "west": "L", "east": "R"}
"""Which face of the standing cube looks each way across the floor."""
DOWN = CENTRES[FACES.index("D")]
"""Facelet index of the D centre: the sticker there names the face on the floor."""


def face_at(state: np.ndarray, face: str) -> str:
    """The letter of the original face whose centre is now at ``face``'s position."""
    return FACES[int(state[CENTRES[FACES.index(face)]]) // 9]


@lru_cache(maxsize=None)
def tip_moves() -> dict[str, int]:
    """The engine move index that tips the cube over each way: the one quarter rotation among ``x x' z z'``
    that brings that side's face down and the opposite face up (found by trying them, not written down)."""
    moves = {}
    for direction, side in SIDE_OF.items():
        found = [m for m in ("x", "x'", "z", "z'")
                 if face_at(apply_move(SOLVED, TABLE, MOVE_INDEX[m]), "D") == side
                 and face_at(apply_move(SOLVED, TABLE, MOVE_INDEX[m]), "U") == opposite(side)]
        if len(found) != 1:
            raise RuntimeError(f"the engine has {len(found)} rotations that tip the cube {direction}")
        moves[direction] = MOVE_INDEX[found[0]]
    return moves


def opposite(face: str) -> str:
    """The face opposite ``face`` (U-D, R-L, F-B)."""
    return {"U": "D", "D": "U", "R": "L", "L": "R", "F": "B", "B": "F"}[face]


def roll(cells: Iterable[Cell], start: Cell | None = None) -> dict[Cell, np.ndarray]:
    """The cube's orientation (an engine state) standing on each cell, tipped there breadth-first from
    ``start`` (default: the least cell) standing solved (D on the floor)."""
    cells = set(cells)
    if not is_connected(cells):
        raise ValueError(f"the cells {sorted(cells)} are not connected through shared edges")
    start = min(cells) if start is None else start
    if start not in cells:
        raise ValueError(f"the start cell {start} is not one of the cells")
    tips = tip_moves()
    pose = {start: SOLVED.copy()}
    queue = [start]
    while queue:
        cell = queue.pop(0)
        for direction, (dr, dc) in STEPS.items():
            nxt = (cell[0] + dr, cell[1] + dc)
            if nxt in cells and nxt not in pose:
                pose[nxt] = apply_move(pose[cell], TABLE, tips[direction])
                queue.append(nxt)
    return pose


def floor_faces(cells: Iterable[Cell], start: Cell | None = None) -> dict[Cell, str]:
    """The cube face (a letter of URFDLB) each cell becomes: the face on the floor when the rolled cube stands there."""
    return {cell: face_at(state, "D") for cell, state in roll(cells, start).items()}


def hinges_agree(cells: Iterable[Cell]) -> bool:
    """Whether every pair of neighbouring cells agrees on the cube's orientation (no 2x2 corner clash)."""
    cells = set(cells)
    pose, tips = roll(cells), tip_moves()
    for cell in cells:
        for direction, (dr, dc) in STEPS.items():
            nxt = (cell[0] + dr, cell[1] + dc)
            if nxt in cells and not np.array_equal(apply_move(pose[cell], TABLE, tips[direction]), pose[nxt]):
                return False
    return True


def folds_to_cube(cells: Iterable[Cell]) -> bool:
    """Whether the hexomino ``cells`` folds into a cube: six cells, six different faces, hinges consistent."""
    cells = set(cells)
    if len(cells) != 6:
        raise ValueError(f"a cube net has 6 cells, got {len(cells)}")
    return len(set(floor_faces(cells).values())) == 6 and hinges_agree(cells)


__all__ = ["SIDE_OF", "tip_moves", "opposite", "roll", "floor_faces", "hinges_agree", "folds_to_cube", "face_at"]
