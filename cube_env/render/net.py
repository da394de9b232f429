"""The unfolded cross net as an RGB image (numpy only)."""

from __future__ import annotations

import numpy as np

from ..engine.facelets import COLOUR_RGB, FACES
from .ansi import NET_CELLS

BACKGROUND = np.array([128, 128, 128], dtype=np.uint8)
GRID = np.array([20, 20, 20], dtype=np.uint8)


def render_net(colours: np.ndarray, size: int = 224) -> np.ndarray:
    """(H, W, 3) uint8 image of the net, ``size`` pixels wide, 3:4 aspect.

    Stickers are squares separated by dark grid lines on a neutral grey
    background, faces laid out as U over L F R B over D.
    """
    cell = max(size // 12, 3)
    width, height = size, max(size * 3 // 4, 9 * cell)
    img = np.empty((height, width, 3), dtype=np.uint8)
    img[:] = BACKGROUND
    x0, y0 = (width - 12 * cell) // 2, (height - 9 * cell) // 2
    gap = max(cell // 12, 1)
    col = np.asarray(colours)
    for f, face in enumerate(FACES):
        r0, c0 = NET_CELLS[face]
        top, left = y0 + 3 * r0 * cell, x0 + 3 * c0 * cell
        img[top : top + 3 * cell, left : left + 3 * cell] = GRID
        for k in range(9):
            y, x = top + (k // 3) * cell, left + (k % 3) * cell
            img[y + gap : y + cell - gap, x + gap : x + cell - gap] = COLOUR_RGB[col[9 * f + k]]
    return img
