"""Text forms of the visual tiers, for text-only models.

Each form states the same thing its image shows, as letters: colours are
written ``W R G Y O B`` (white, red, green, yellow, orange, blue), stickers
separated by spaces, rows by newlines.  Every form has a fixed length for a
given tier, so it fits a fixed ``gymnasium.spaces.Text``.
"""

from __future__ import annotations

import numpy as np

from ..engine.facelets import COLOUR_LETTERS, FACES
from .ansi import NET_CELLS
from .net import FACE_NAMES

_COLUMN = 7
"""Characters per face column of the text net: "W W W" plus two spaces."""

FACE_TEXT_HEADER = "Front face (top row touches Up, left column touches Left):"
VERTEX_TEXT_HEADERS = (
    ("U", "Up face, seen from above (bottom row touches Front, right column touches Right):"),
    ("F", "Front face, seen from the front (top row touches Up, right column touches Right):"),
    ("R", "Right face, seen from the right (top row touches Up, left column touches Front):"),
)
"""The three grids of the vertex text, in order, each with the way it is held."""


def face_rows(colours: np.ndarray, letters: str = COLOUR_LETTERS) -> list[str]:
    """Three lines "a b c" for 9 colour indices in row-major order."""
    chars = [letters[int(c)] for c in np.asarray(colours)]
    return [" ".join(chars[3 * r : 3 * r + 3]) for r in range(3)]


def net_text_grid(colours: np.ndarray, letters: str = COLOUR_LETTERS) -> str:
    """The cross net of 54 colour indices as a labelled letter grid (face name above each face).

    Layout as on the net image: Up above Front; Left, Front, Right, Back in
    a row; Down below Front; each face read as it appears on the net.
    """
    col = np.asarray(colours)
    lines: list[str] = []
    for net_row in range(3):
        faces = sorted((c, f) for f, (r, c) in NET_CELLS.items() if r == net_row)
        lines.append(_join_columns([(c, FACE_NAMES[f]) for c, f in faces]))
        rows = {f: face_rows(col[9 * FACES.index(f) : 9 * FACES.index(f) + 9], letters) for _, f in faces}
        for k in range(3):
            lines.append(_join_columns([(c, rows[f][k]) for c, f in faces]))
    return "\n".join(lines)


def face_text_grid(face_colours: np.ndarray, letters: str = COLOUR_LETTERS) -> str:
    """The Front face of 9 colour indices as a titled 3x3 grid."""
    return "\n".join([FACE_TEXT_HEADER, *face_rows(face_colours, letters)])


def vertex_text_grids(colours: np.ndarray, letters: str = COLOUR_LETTERS) -> str:
    """Up, Front and Right of 54 colour indices (only those 27 are read) as three
    titled 3x3 grids, each title saying which way the grid is held."""
    col = np.asarray(colours)
    lines: list[str] = []
    for face, header in VERTEX_TEXT_HEADERS:
        f = FACES.index(face)
        lines += [header, *face_rows(col[9 * f : 9 * f + 9], letters)]
    return "\n".join(lines)


def _join_columns(cells: list[tuple[int, str]]) -> str:
    """One text line with each string placed at its face column of the net."""
    line = ""
    for column, text in cells:
        line = line.ljust(column * _COLUMN) + text
    return line


__all__ = ["net_text_grid", "face_text_grid", "vertex_text_grids", "face_rows", "VERTEX_TEXT_HEADERS"]
