"""Fast 2D sticker images: draw the layout once, recolour it per frame.

Every 2D renderer (net, face view, vertex painter) draws its fixed layout
(background, labels, cube body and sticker outlines) once per image size with
Pillow, recording which sticker *slot* owns each pixel.  A frame is then one
small Numba kernel: copy the template and write each slot's colour into its
pixels.  This is what makes the renders cost tens of microseconds instead of
the milliseconds that drawing polygons per frame would take (a numpy
fancy-index scatter of the same pixels is 3-5x slower than the kernel).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Callable

import numba as nb
import numpy as np
from PIL import Image, ImageDraw, ImageFont

from ..engine.facelets import COLOUR_RGB

BACKGROUND = (128, 128, 128)
"""Neutral grey behind every image."""
BODY = (16, 16, 16)
"""Near-black plastic between the stickers."""

_NO_SLOT = 255


@lru_cache(maxsize=16)
def font(px: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    """Pillow's bundled scalable font at ``px`` pixels (no system fonts needed on servers; the fixed
    bitmap font on Pillow < 10.1): every label and caption of every renderer uses it."""
    try:
        return ImageFont.load_default(size=px)
    except TypeError:
        return ImageFont.load_default()


@dataclass(frozen=True)
class StickerCanvas:
    """A pre-drawn layout: ``template`` plus the sticker slot of every pixel.

    ``pixels`` are the flat indices (into ``H * W``) of the pixels covered by
    a sticker and ``owner`` the slot drawn at each; ``shade`` scales each
    slot's colour (1.0 for flat layouts, < 1 for faces turned away from the
    light).
    """

    template: np.ndarray
    pixels: np.ndarray
    owner: np.ndarray
    shade: np.ndarray

    @property
    def n_slots(self) -> int:
        return int(self.shade.shape[0])

    def paint(self, colours: np.ndarray, palette: np.ndarray = COLOUR_RGB) -> np.ndarray:
        """A new (H, W, 3) uint8 image with slot ``k`` painted ``palette[colours[k]]``.

        ``colours`` holds one colour index per slot; ``palette`` maps indices
        to RGB (tests pass extra colours to mark stickers that must stay hidden).
        """
        col = np.asarray(colours)
        if col.shape != (self.n_slots,):
            raise ValueError(f"expected {self.n_slots} colour indices, got shape {col.shape}")
        slot_rgb = np.rint(palette[col] * self.shade[:, None]).astype(np.uint8)
        return _paint(self.template, self.pixels, self.owner, slot_rgb)


@nb.njit(cache=True, nogil=True)
def _paint(template: np.ndarray, pixels: np.ndarray, owner: np.ndarray, slot_rgb: np.ndarray) -> np.ndarray:
    """A copy of ``template`` (H, W, 3) with pixel ``pixels[i]`` set to ``slot_rgb[owner[i]]``."""
    out = template.copy()
    flat = out.reshape(-1)
    for i in range(pixels.shape[0]):
        p, s = 3 * pixels[i], owner[i]
        flat[p] = slot_rgb[s, 0]
        flat[p + 1] = slot_rgb[s, 1]
        flat[p + 2] = slot_rgb[s, 2]
    return out


def build_canvas(
    size: tuple[int, int],
    body: list[list[tuple[float, float]]],
    stickers: list[list[tuple[float, float]]],
    shade: np.ndarray | None = None,
    decorate: Callable[[ImageDraw.ImageDraw], None] | None = None,
) -> StickerCanvas:
    """Draw a layout once: ``body`` polygons in :data:`BODY`, then one polygon per sticker slot.

    ``size`` is (width, height); polygons are lists of (x, y) pixel corners.
    ``decorate(draw)`` may add labels to the RGB template (it never touches
    sticker pixels, which are overwritten per frame anyway).
    """
    width, height = size
    rgb = Image.new("RGB", (width, height), BACKGROUND)
    slots = Image.new("L", (width, height), _NO_SLOT)
    draw_rgb, draw_slot = ImageDraw.Draw(rgb), ImageDraw.Draw(slots)
    for poly in body:
        draw_rgb.polygon(poly, fill=BODY)
    for k, poly in enumerate(stickers):
        draw_slot.polygon(poly, fill=k)
    if decorate is not None:
        decorate(draw_rgb)
    owner_map = np.asarray(slots, dtype=np.uint8).ravel()
    pixels = np.flatnonzero(owner_map != _NO_SLOT).astype(np.int64)
    shade = np.ones(len(stickers), np.float32) if shade is None else np.asarray(shade, np.float32)
    template = np.array(rgb, dtype=np.uint8)
    template.flags.writeable = False  # shared by every frame of this size
    return StickerCanvas(template=template, pixels=pixels, owner=owner_map[pixels], shade=shade)


def square(x: float, y: float, side: float) -> list[tuple[float, float]]:
    """Corners of an axis-aligned square with top-left (x, y), as Pillow expects them.

    Pillow fills polygons including their last pixel row and column, so the
    far edges sit one pixel in to keep ``side`` pixels per side.
    """
    x1, y1 = x + side - 1, y + side - 1
    return [(x, y), (x1, y), (x1, y1), (x, y1)]
