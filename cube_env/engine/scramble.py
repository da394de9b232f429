"""Seeded scrambles without trivial redundancy.

A scramble never turns the same face twice in a row, and two turns of one
axis (opposite faces, which commute) always come in a fixed order, so no
``U D U``-style sequence collapses.  The length is counted in the chosen
metric's moves; it is an upper bound on the distance, not the distance
(the certified curriculum measures that).
"""

from __future__ import annotations

import numpy as np

from .moves import MOVE_INDEX

METRICS = {"quarter": "quarter", "qtm": "quarter", "half": "half", "face": "half", "htm": "half"}
_FACE_ORDER = "URFDLB"  # axis of face f is f % 3; U<D, R<L, F<B is the allowed order
_SUFFIXES = {"quarter": ("", "'"), "half": ("", "2", "'")}


def normalise_metric(metric: str) -> str:
    """``"quarter"`` or ``"half"`` for any accepted spelling (``face``/``htm``/``qtm``)."""
    try:
        return METRICS[metric]
    except KeyError:
        raise ValueError(f"unknown metric {metric!r}; use 'quarter' or 'half' (alias 'face')") from None


def scramble(depth: int, metric: str = "quarter", rng: np.random.Generator | int | None = None) -> list[int]:
    """``depth`` random face turns (indices into ``MOVE_NAMES``) in the given metric."""
    if depth < 0:
        raise ValueError(f"scramble depth must be >= 0, got {depth}")
    suffixes = _SUFFIXES[normalise_metric(metric)]
    gen = np.random.default_rng(rng)
    out: list[int] = []
    prev = prev2 = -1
    while len(out) < depth:
        f = int(gen.integers(6))
        if f == prev:
            continue
        if prev >= 0 and f % 3 == prev % 3 and (f < prev or prev2 == f):
            continue  # opposite faces only in U-before-D order, never U D U
        s = suffixes[int(gen.integers(len(suffixes)))]
        out.append(MOVE_INDEX[_FACE_ORDER[f] + s])
        prev2, prev = prev, f
    return out
