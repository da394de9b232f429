"""A contact sheet: several images in a grid in one image, each under its caption.

A question prompt carries one image, so items that show several pictures send them as one sheet, as
the papers do: Inf-Bench's start state and its four option states ("we present all options within a
single image"), STARE's folding frames and its four candidate nets.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
from PIL import Image, ImageDraw

from .canvas import BACKGROUND, font

Colour = tuple[int, int, int]
WHITE: Colour = (255, 255, 255)


def contact_sheet(panels: Sequence[np.ndarray], captions: Sequence[str], columns: int, *,
                  background: Colour = BACKGROUND, text: Colour = WHITE, caption_px: int | None = None,
                  gap: int = 0, border: Colour | None = None) -> np.ndarray:
    """(H, W, 3) uint8: ``panels`` (RGB images of one size) in rows of ``columns``, each under its caption
    (a band ``caption_px`` high, default a tenth of a panel), ``gap`` pixels apart, optionally framed."""
    if not panels or len(panels) != len(captions):
        raise ValueError(f"a contact sheet needs one caption per panel and at least one panel, got "
                         f"{len(panels)} panels and {len(captions)} captions")
    shapes = {np.asarray(p).shape for p in panels}
    if len(shapes) != 1:
        raise ValueError(f"contact sheet panels must share one size, got {sorted(shapes)}")
    h, w = np.asarray(panels[0]).shape[:2]
    band = caption_px if caption_px is not None else max(h // 10, 12)
    rows = -(-len(panels) // columns)
    cell_w, cell_h = w + gap, h + band + gap
    sheet = Image.new("RGB", (columns * cell_w + gap, rows * cell_h + gap), background)
    draw = ImageDraw.Draw(sheet)
    label = font(max(int(band * 0.75), 6))
    for k, (panel, caption) in enumerate(zip(panels, captions)):
        x, y = gap + (k % columns) * cell_w, gap + (k // columns) * cell_h
        draw.text((x + w / 2, y + band / 2), caption, fill=text, font=label, anchor="mm")
        sheet.paste(Image.fromarray(np.asarray(panel, dtype=np.uint8)), (x, y + band))
        if border is not None:
            draw.rectangle([x - 1, y + band - 1, x + w, y + band + h], outline=border)
    return np.asarray(sheet, dtype=np.uint8).copy()


__all__ = ["contact_sheet"]
