"""Vertex View (Tier 3b), painter renderer: U, F and R seen from the UFR corner.

No OpenGL: the 27 visible sticker squares and the three faces of the black
body are projected through :data:`~.camera.VERTEX_CAMERA` and filled as
polygons with Pillow once per image size; each frame recolours them (see
:mod:`.canvas`).  From a camera on the UFR diagonal the three visible faces
never overlap, so no depth sorting is needed, and D, L and B stickers are not
drawn at all.  Faces are shaded by :data:`~.camera.FACE_SHADE`, which the
pyrender renderer bakes in the same way, so both give the same picture.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ..engine.facelets import COLOUR_RGB, FACE_NORMALS
from .camera import N_VISIBLE, VERTEX_CAMERA, VISIBLE_FACES, sticker_quads, visible_shade
from .canvas import StickerCanvas, build_canvas


def render_vertex(colours: np.ndarray, size: int = 224, palette: np.ndarray = COLOUR_RGB) -> np.ndarray:
    """(size, size, 3) uint8 corner view of a cube given as 54 colour indices (URFDLB order).

    Only positions 0..26 (U, R, F) are read; the others cannot be seen from
    the corner.
    """
    return vertex_canvas(int(size)).paint(np.asarray(colours)[:N_VISIBLE], palette)


@lru_cache(maxsize=8)
def vertex_canvas(size: int) -> StickerCanvas:
    """The projected corner-view layout at ``size`` pixels square: 27 slots (U, R, F)."""
    if size < 32:
        raise ValueError(f"the vertex view needs at least 32 pixels, got size={size}")
    _, corners = sticker_quads()
    stickers = [_polygon(corners[k], size) for k in range(N_VISIBLE)]
    body = [_polygon(_face_square(face), size) for face in VISIBLE_FACES]
    return build_canvas((size, size), body, stickers, shade=visible_shade())


def _face_square(face: str) -> np.ndarray:
    """Corners (4, 3) of one whole face of the cube, in order round the square."""
    n = np.asarray(FACE_NORMALS[face], dtype=np.float64)
    u = np.roll(np.abs(n), 1)
    v = np.cross(n, u)
    signs = [(1, 1), (1, -1), (-1, -1), (-1, 1)]
    return np.array([1.5 * n + 1.5 * (a * u + b * v) for a, b in signs])


def _polygon(points: np.ndarray, size: int) -> list[tuple[float, float]]:
    """Projected pixel corners of a 3D polygon, as Pillow's polygon takes them."""
    return [(float(x), float(y)) for x, y in VERTEX_CAMERA.project(points, size)]


__all__ = ["render_vertex", "vertex_canvas"]
