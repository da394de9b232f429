"""Face View (Tier 3a): one face of the held cube, seen straight on.

The renderer takes only the nine colours of that face, so nothing else about
the cube can reach the image: partial observability is enforced by what the
function is given, not by what it chooses to draw.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ..engine.facelets import COLOUR_RGB
from .canvas import StickerCanvas, build_canvas, square

FACE_FILL = 0.8
"""Fraction of the image side taken by the face."""


def render_face(face_colours: np.ndarray, size: int = 224, palette: np.ndarray = COLOUR_RGB) -> np.ndarray:
    """(size, size, 3) uint8 image of one face from 9 colour indices, row-major
    as the face is seen (for the F face: top row next to U, left column next to L)."""
    return face_canvas(int(size)).paint(face_colours, palette)


@lru_cache(maxsize=8)
def face_canvas(size: int) -> StickerCanvas:
    """The face layout at ``size`` pixels square: 9 slots, row-major."""
    if size < 16:
        raise ValueError(f"the face view needs at least 16 pixels, got size={size}")
    x0, cell = face_geometry(size)
    gap = max(cell // 14, 1)
    stickers = [
        square(x0 + (k % 3) * cell + gap, x0 + (k // 3) * cell + gap, cell - 2 * gap) for k in range(9)
    ]
    return build_canvas((size, size), [square(x0, x0, 3 * cell)], stickers)


def face_geometry(size: int) -> tuple[int, int]:
    """(offset, cell): the face's top-left pixel on both axes and the side of one sticker cell."""
    cell = int(size * FACE_FILL) // 3
    return (size - 3 * cell) // 2, cell


__all__ = ["render_face", "face_canvas", "face_geometry"]
