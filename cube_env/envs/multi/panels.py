"""Render a multi-agent env as one picture of its seats (``rgb_array``) or as text (``ansi``).

The picture is a row of panels, one per seat plus the true cube: each with a caption, the image
that seat sees (a grey square for a seat that sees nothing) and a few lines of text under it
(the last message it received, its budgets).  The pictures of docs/multi-agent.md are these.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field

import numpy as np
from PIL import Image, ImageDraw

from ...render.ansi import net_text
from ...render.canvas import BACKGROUND, font

_PAD = 8
_CAPTION_PX = 14
_LINE_PX = 12
_TEXT_LINES = 7


@dataclass
class Panel:
    """One panel: a caption, an image (``None``: the seat sees nothing) and text lines under it."""

    caption: str
    image: np.ndarray | None
    lines: list[str] = field(default_factory=list)


def _wrapped(lines: list[str], width: int) -> list[str]:
    """The lines wrapped to ``width`` characters, at most :data:`_TEXT_LINES` of them."""
    out: list[str] = []
    for line in lines:
        out += textwrap.wrap(line, width, replace_whitespace=True, drop_whitespace=True, break_long_words=True) or [""]
    return out[:_TEXT_LINES - 1] + ["…"] if len(out) > _TEXT_LINES else out


def render_panels(panels: list[Panel], size: int) -> np.ndarray:
    """The panels side by side as one (H, W, 3) uint8 image; every image is shown at ``size`` pixels."""
    text_h = _TEXT_LINES * (_LINE_PX + 2)
    width = len(panels) * (size + _PAD) + _PAD
    height = _PAD + _CAPTION_PX + _PAD + size + _PAD + text_h + _PAD
    sheet = Image.new("RGB", (width, height), BACKGROUND)
    draw = ImageDraw.Draw(sheet)
    chars = max(size // 7, 8)
    for k, panel in enumerate(panels):
        x = _PAD + k * (size + _PAD)
        draw.text((x + size / 2, _PAD + _CAPTION_PX / 2), panel.caption, fill="white", font=font(_CAPTION_PX), anchor="mm")
        top = 2 * _PAD + _CAPTION_PX
        if panel.image is None:
            draw.rectangle([x, top, x + size - 1, top + size - 1], fill=(96, 96, 96))
            draw.text((x + size / 2, top + size / 2), "sees nothing", fill="white", font=font(_CAPTION_PX), anchor="mm")
        else:
            image = Image.fromarray(panel.image)
            sheet.paste(image if image.size == (size, size) else image.resize((size, size)), (x, top))
        y = top + size + _PAD
        for line in _wrapped(panel.lines, chars):
            draw.text((x, y), line, fill="white", font=font(_LINE_PX))
            y += _LINE_PX + 2
    return np.asarray(sheet, dtype=np.uint8).copy()


def render_text(colours: np.ndarray, lines: list[str]) -> str:
    """The true cube's net as coloured terminal text, then the seats' lines."""
    return net_text(colours) + "\n".join(lines) + "\n"


def quote(text: str, limit: int = 60) -> str:
    """A message as a panel or a log line shows it: quoted, one line, cut to ``limit`` characters."""
    flat = text.replace("\n", " ")
    return repr(flat if len(flat) <= limit else flat[: limit - 1] + "…")


__all__ = ["Panel", "render_panels", "render_text", "quote", "RENDER_MODES", "checked_render_mode"]


RENDER_MODES = ("ansi", "rgb_array")
"""The render modes every multi-agent env offers."""


def checked_render_mode(render_mode: str | None) -> str | None:
    """``render_mode`` if it is ``None`` or one of :data:`RENDER_MODES`; ``ValueError`` otherwise."""
    if render_mode is not None and render_mode not in RENDER_MODES:
        raise ValueError(f"render_mode must be None or one of {RENDER_MODES}, got {render_mode!r}")
    return render_mode
