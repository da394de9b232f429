"""The unfolded cross net as an RGB image (Tier 2, and ``render("rgb_array")``).

The net is the standard cross: U above F; L, F, R, B in a ring; D below F,
each face drawn as seen in the facelet order (docs/conventions.md).  The face's name is
written above each face, as in the papers' renders; nothing else is written,
so the image carries no text form of the state.
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

import numpy as np
from PIL import ImageDraw

from ..engine.facelets import COLOUR_RGB, FACES
from .ansi import NET_CELLS
from .canvas import StickerCanvas, build_canvas, square
from .canvas import font as font_of

FACE_NAMES = {"U": "Up", "R": "Right", "F": "Front", "D": "Down", "L": "Left", "B": "Back"}
"""The label written above each face of the net."""
LABEL_COLOUR = (255, 255, 255)


class NetLayout(NamedTuple):
    """Pixel geometry of the net at one size."""

    cell: int
    """Side of one sticker cell (sticker plus its share of the grid lines)."""
    label: int
    """Height of the band above each face that holds its name."""
    faces: dict[str, tuple[int, int]]
    """Top-left pixel (x, y) of each face's 3x3 block, by face letter."""


def render_net(colours: np.ndarray, size: int = 224, palette: np.ndarray = COLOUR_RGB) -> np.ndarray:
    """(size, size, 3) uint8 image of the net of 54 colour indices (URFDLB order).

    The layout is drawn once per ``size`` and recoloured per call, so a frame
    costs a copy and a gather; every call returns a new array.
    """
    return net_canvas(int(size)).paint(colours, palette)


@lru_cache(maxsize=8)
def net_canvas(size: int) -> StickerCanvas:
    """The net layout at ``size`` pixels square: 54 slots in facelet order."""
    if size < 48:
        raise ValueError(f"the net needs at least 48 pixels, got size={size}")
    layout = net_layout(size)
    cell, gap = layout.cell, max(layout.cell // 10, 1)
    body, stickers = [], []
    for face in FACES:
        x0, y0 = layout.faces[face]
        body.append(square(x0, y0, 3 * cell))
        for k in range(9):
            x, y = x0 + (k % 3) * cell + gap, y0 + (k // 3) * cell + gap
            stickers.append(square(x, y, cell - 2 * gap))
    return build_canvas((size, size), body, stickers, decorate=lambda d: _labels(d, layout))


def net_layout(size: int) -> NetLayout:
    """Pixel geometry of the net at ``size``: faces as large as four across allow,
    with a label band above each row of faces, centred on the image."""
    margin = max(size // 32, 1)
    cell = (size - 2 * margin) // 12
    face = 3 * cell
    label = max(int(round(0.3 * face)), 8)
    block = label + face  # one row of the net: label band, then the faces
    x0 = (size - 4 * face) // 2
    y0 = (size - 3 * block) // 2
    faces = {f: (x0 + c * face, y0 + r * block + label) for f, (r, c) in NET_CELLS.items()}
    return NetLayout(cell=cell, label=label, faces=faces)


def _labels(draw: ImageDraw.ImageDraw, layout: NetLayout) -> None:
    """Write each face's name centred in the band above it (its letter if the name does not fit)."""
    face_px, band = 3 * layout.cell, layout.label
    font = font_of(max(int(band * 0.8), 6))
    for letter, (x, y) in layout.faces.items():
        name = FACE_NAMES[letter]
        if draw.textlength(name, font=font) > face_px:
            name = letter
        draw.text((x + face_px / 2, y - band / 2), name, fill=LABEL_COLOUR, font=font, anchor="mm")


__all__ = ["render_net", "net_canvas", "net_layout", "NetLayout", "FACE_NAMES"]
