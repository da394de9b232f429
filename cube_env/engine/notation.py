"""Singmaster notation: parse what cubers type into engine move indices.

Accepted: face turns ``U R F D L B``, rotations ``x y z``, slices ``M E S``,
wide turns as lower case (``r``) or with ``w`` (``Rw``), each with an optional
``'``/``’`` (inverse), ``2``, ``2'`` or ``'2`` suffix.  Tokens may be separated
by any whitespace or written together (``RUR'U'``).  Anything else raises
:class:`NotationError` naming the bad token and its character position.  The message is bounded
whatever the input: it quotes at most :data:`TOKEN_EXCERPT` characters of the token and
:data:`TEXT_EXCERPT` of the sequence (:func:`~.errors.excerpt`), each with its length when cut.
"""

from __future__ import annotations

import re
from typing import Iterable

import numpy as np

from .errors import NotationError, excerpt
from .facelets import FACES
from .moves import INVERSE, MOVE_INDEX, MOVE_NAMES

_TOKEN = re.compile(rf"\s*(?:([{FACES}])w|([{FACES}xyzMESurfdlb]))(2['’]?|['’]2?)?")
TOKEN_EXCERPT = 20
"""At most this many characters of a bad token appear in a :class:`NotationError` message."""
TEXT_EXCERPT = 60
"""At most this many characters of the sequence appear in a :class:`NotationError` message."""


def _canonical(base: str, suffix: str | None) -> str:
    if not suffix:
        return base
    if suffix.startswith("2") or suffix.endswith("2"):
        return base + "2"
    return base + "'"


def parse(text: str) -> list[int]:
    """Move indices (into ``MOVE_NAMES``) of a sequence such as ``"R U R' U'"``."""
    if not isinstance(text, str):
        raise NotationError(f"a move sequence must be a string, got {type(text).__name__}")
    out: list[int] = []
    pos, end = 0, len(text.rstrip())
    while pos < end:
        m = _TOKEN.match(text, pos)
        if m is None:
            start = len(text) - len(text[pos:].lstrip())
            stop = start  # the token runs to the next blank; only the first characters are needed
            while stop < end and not text[stop].isspace() and stop - start <= TOKEN_EXCERPT:
                stop += 1
            bad = excerpt(text[start:stop], TOKEN_EXCERPT)
            if stop - start > TOKEN_EXCERPT:
                bad = bad.split("…(")[0] + "…"  # its length is unknown without reading it all
            raise NotationError(
                f"unknown move {bad} at position {start} in {excerpt(text, TEXT_EXCERPT)}; "
                "expected face turns U R F D L B, rotations x y z, slices M E S or wide turns "
                "(r or Rw), each optionally followed by ' or 2"
            )
        base = m.group(1).lower() if m.group(1) else m.group(2)
        out.append(MOVE_INDEX[_canonical(base, m.group(3))])
        pos = m.end()
    return out


def parse_array(text: str) -> np.ndarray:
    """:func:`parse` as an int64 array, the form the kernels take."""
    return np.asarray(parse(text), dtype=np.int64)


def format_moves(moves: Iterable[int]) -> str:
    """Space-separated notation of move indices."""
    return " ".join(MOVE_NAMES[int(m)] for m in moves)


def invert_moves(moves: Iterable[int]) -> list[int]:
    """The sequence that undoes ``moves``."""
    return [int(INVERSE[int(m)]) for m in reversed(list(moves))]


def invert_sequence(text: str) -> str:
    """The notation of the sequence that undoes the sequence ``text`` (e.g. a scramble's solution)."""
    return format_moves(invert_moves(parse(text)))
