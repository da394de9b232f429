"""The unfolded net as coloured terminal text (``render_mode="ansi"``)."""

from __future__ import annotations

import numpy as np

from ..engine.facelets import COLOUR_LETTERS, COLOUR_RGB, FACES

# Net layout in face-sized cells: U above F, L F R B in a ring, D below F.
NET_CELLS = {"U": (0, 1), "L": (1, 0), "F": (1, 1), "R": (1, 2), "B": (1, 3), "D": (2, 1)}


def _cell(colour: int, letters: str, use_colour: bool) -> str:
    ch = letters[colour]
    if not use_colour:
        return ch + " "
    r, g, b = (int(v) for v in COLOUR_RGB[colour])
    fg = "30" if r + g + b > 400 else "97"
    return f"\x1b[{fg};48;2;{r};{g};{b}m{ch} \x1b[0m"


def net_text(colours: np.ndarray, letters: str = FACES, use_colour: bool = True) -> str:
    """Net of 54 colour indices as text, one 2-character cell per sticker.

    ``letters`` names each colour (``URFDLB`` face letters or ``WRGYOB``);
    with ``use_colour`` the cells also carry 24-bit ANSI background colours.
    """
    col = np.asarray(colours)
    rows = [["  "] * 12 for _ in range(9)]
    for f, face in enumerate(FACES):
        r0, c0 = NET_CELLS[face]
        for k in range(9):
            rows[3 * r0 + k // 3][3 * c0 + k % 3] = _cell(int(col[9 * f + k]), letters, use_colour)
    return "\n".join("".join(row).rstrip() for row in rows) + "\n"


__all__ = ["net_text", "NET_CELLS", "COLOUR_LETTERS"]
