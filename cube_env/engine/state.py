"""Conversions between engine states and the outside world, with validation.

Outside forms: the 54-character facelet string over ``URFDLB`` (Kociemba's
format), the colour string over ``WRGYOB``, and a sticker-id array.  A string
may describe a cube held in any of the 24 orientations (its centres then sit
on other faces); it is decoded to the state of that held cube.  Everything
from outside goes through :func:`from_facelets` or :func:`validate_state`,
which raise :class:`InvalidStateError` and never return a partial result.
"""

from __future__ import annotations

import numpy as np

from . import cubie
from .errors import InvalidStateError
from .facelets import CENTRES, COLOUR_LETTERS, FACES, N_STICKERS, SOLVED
from .moves import ORIENTATION_NAMES, ORIENTATIONS, invert

_ID_TO_FACE = bytes(ord(FACES[i // 9]) for i in range(N_STICKERS)) + bytes(256 - N_STICKERS)
_ID_TO_COLOUR = bytes(ord(COLOUR_LETTERS[i // 9]) for i in range(N_STICKERS)) + bytes(256 - N_STICKERS)
_COLOUR_TO_FACE = str.maketrans(COLOUR_LETTERS, FACES)

# Centre colours (as a 6-byte key) of each held orientation -> orientation index.
_CENTRE_KEY = {(ORIENTATIONS[r][list(CENTRES)] // 9).tobytes(): r for r in range(len(ORIENTATIONS))}


def to_facelets(state: np.ndarray) -> str:
    """The 54-character ``URFDLB`` string of a state (letter = colour's home face)."""
    return np.ascontiguousarray(state, dtype=np.uint8).tobytes().translate(_ID_TO_FACE).decode()


def to_colour_string(state: np.ndarray) -> str:
    """The 54-character ``WRGYOB`` colour string of a state."""
    return np.ascontiguousarray(state, dtype=np.uint8).tobytes().translate(_ID_TO_COLOUR).decode()


def orientation_of(state: np.ndarray) -> int:
    """Index into ``ORIENTATIONS`` of the held orientation (read from the centres)."""
    key = (np.asarray(state)[list(CENTRES)] // 9).astype(np.uint8).tobytes()
    return _CENTRE_KEY[key]


def _colour_indices(text: str, alphabet: str, what: str) -> np.ndarray:
    if not isinstance(text, str):
        raise InvalidStateError(f"a {what} must be a str, got {type(text).__name__}")
    s = text.strip()
    if len(s) != N_STICKERS:
        raise InvalidStateError(f"a {what} has {N_STICKERS} characters, got {len(s)}")
    bad = sorted({ch for ch in s if ch not in alphabet})
    if bad:
        raise InvalidStateError(f"a {what} uses only the letters {alphabet}; found {''.join(bad)!r}")
    col = np.frombuffer(s.encode(), dtype=np.uint8)
    lut = np.zeros(256, dtype=np.uint8)
    lut[np.frombuffer(alphabet.encode(), dtype=np.uint8)] = np.arange(6)
    col = lut[col]
    counts = np.bincount(col, minlength=6)
    if (counts != 9).any():
        detail = ", ".join(f"{alphabet[k]}={counts[k]}" for k in range(6) if counts[k] != 9)
        raise InvalidStateError(f"each of the six letters must appear 9 times; {detail}")
    return col


def from_colour_indices(col: np.ndarray) -> np.ndarray:
    """State of a cube given as 54 colour indices (any held orientation); validates."""
    col = np.asarray(col, dtype=np.uint8)
    r = _CENTRE_KEY.get(col[list(CENTRES)].tobytes())
    if r is None:
        centres = "".join(FACES[c] for c in col[list(CENTRES)])
        raise InvalidStateError(
            f"centres {centres} (in U R F D L B order) are not an orientation of a cube: "
            "each centre must appear once, opposite centres opposite and not mirrored"
        )
    rot = ORIENTATIONS[r]
    reference = col[invert(rot)]  # the same cube turned back to reference orientation
    state = cubie.to_state(cubie.from_colours(reference))[rot]
    return state


def from_facelets(text: str) -> np.ndarray:
    """State of a 54-character ``URFDLB`` string; raises :class:`InvalidStateError`."""
    return from_colour_indices(_colour_indices(text, FACES, "facelet string"))


def from_colour_string(text: str) -> np.ndarray:
    """State of a 54-character ``WRGYOB`` colour string; raises :class:`InvalidStateError`."""
    return from_colour_indices(_colour_indices(text, COLOUR_LETTERS, "colour string"))


def validate_state(state: np.ndarray) -> np.ndarray:
    """Check a sticker-id array from outside and return it as a fresh uint8 array."""
    arr = np.asarray(state)
    if arr.shape != (N_STICKERS,):
        raise InvalidStateError(f"a state has shape ({N_STICKERS},), got {arr.shape}")
    if not np.issubdtype(arr.dtype, np.integer) or arr.min() < 0 or arr.max() >= N_STICKERS:
        raise InvalidStateError(f"a state holds sticker ids 0..{N_STICKERS - 1}")
    arr = arr.astype(np.uint8)
    if len(np.unique(arr)) != N_STICKERS:
        raise InvalidStateError("a state is a permutation of the 54 sticker ids; some id repeats")
    rebuilt = from_colour_indices(arr // 9)
    if not np.array_equal(rebuilt, arr):
        raise InvalidStateError(
            "sticker ids are inconsistent with the cubies they sit on (stickers of one piece split up)"
        )
    return arr


def to_cubie(state: np.ndarray) -> cubie.CubieCube:
    """Cubie-level form of a state, relative to its own centres (orientation removed)."""
    rot = ORIENTATIONS[orientation_of(state)]
    return cubie.from_colours(np.asarray(state)[invert(rot)] // 9)


def canonical(state: np.ndarray) -> np.ndarray:
    """The same cube turned to reference orientation (centres U R F D L B in place)."""
    return np.asarray(state)[invert(ORIENTATIONS[orientation_of(state)])]


def relabel_to_centres(state: np.ndarray) -> str:
    """Facelet string of the held cube, each colour named by the face its centre is on.

    This is what a solver expecting reference centres needs: moves it returns
    act on the held cube's faces.
    """
    col = np.asarray(state) // 9
    centre_face = np.empty(6, dtype=np.uint8)
    centre_face[col[list(CENTRES)]] = np.arange(6)
    return bytes(ord(FACES[c]) for c in centre_face[col]).decode()


__all__ = [
    "SOLVED", "ORIENTATION_NAMES", "to_facelets", "to_colour_string", "from_facelets",
    "from_colour_string", "from_colour_indices", "validate_state", "to_cubie", "canonical",
    "orientation_of", "relabel_to_centres",
]
