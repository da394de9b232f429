"""Text forms of the visual tiers, for text-only models.

Each form states the same thing its image shows, as letters: colours are
written ``W R G Y O B`` (white, red, green, yellow, orange, blue), stickers
separated by spaces, rows by newlines.  Every form has a fixed length for a
given tier, so it fits a fixed ``gymnasium.spaces.Text``.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Callable

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
    return _filled(_net_layout, 54, colours, letters)


def face_text_grid(face_colours: np.ndarray, letters: str = COLOUR_LETTERS) -> str:
    """The Front face of 9 colour indices as a titled 3x3 grid."""
    return _filled(_face_layout, 9, face_colours, letters)


def vertex_text_grids(colours: np.ndarray, letters: str = COLOUR_LETTERS) -> str:
    """Up, Front and Right of 54 colour indices (only those 27 are read) as three
    titled 3x3 grids, each title saying which way the grid is held."""
    return _filled(_vertex_layout, 27, np.asarray(colours)[:27], letters)


def _filled(layout: Callable[[np.ndarray, str], str], n: int, colours: np.ndarray, letters: str) -> str:
    """``layout`` of ``colours`` written with ``letters``, from a cached template.

    The layout is fixed, so it is formatted once with a unique placeholder
    per slot; a frame is then one array write and one decode (a few
    microseconds instead of formatting every line again).
    """
    template, where = _template(layout, n)
    chars = np.frombuffer(letters.encode("utf-32-le"), dtype=np.uint32)
    out = template.copy()
    out[where] = chars[np.asarray(colours)]
    return out.tobytes().decode("utf-32-le")


@lru_cache(maxsize=None)
def _template(layout: Callable[[np.ndarray, str], str], n: int) -> tuple[np.ndarray, np.ndarray]:
    """(characters as uint32 code points, index of each slot's placeholder) of one layout."""
    marks = "".join(chr(0xE000 + k) for k in range(n))  # private-use code points, never in the layout
    text = layout(np.arange(n), marks)
    template = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32).copy()
    where = np.array([text.index(m) for m in marks])
    return template, where


def _net_layout(colours: np.ndarray, letters: str) -> str:
    col = np.asarray(colours)
    lines: list[str] = []
    for net_row in range(3):
        faces = sorted((c, f) for f, (r, c) in NET_CELLS.items() if r == net_row)
        lines.append(_join_columns([(c, FACE_NAMES[f]) for c, f in faces]))
        rows = {f: face_rows(col[9 * FACES.index(f) : 9 * FACES.index(f) + 9], letters) for _, f in faces}
        for k in range(3):
            lines.append(_join_columns([(c, rows[f][k]) for c, f in faces]))
    return "\n".join(lines)


def _face_layout(face_colours: np.ndarray, letters: str) -> str:
    return "\n".join([FACE_TEXT_HEADER, *face_rows(face_colours, letters)])


def _vertex_layout(colours: np.ndarray, letters: str) -> str:
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
