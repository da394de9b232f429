"""Seeded scrambles without trivial redundancy.

A scramble never turns the same face twice in a row, and two turns of one
axis (opposite faces, which commute) always come in a fixed order, so no
``U D U``-style sequence collapses.  The length is counted in the chosen
metric's moves; it is an upper bound on the distance, not the distance
(the certified curriculum measures that).
"""

from __future__ import annotations

import numpy as np

from .facelets import FACES
from .metric import METRICS, Metric, parse_metric
from .moves import MOVE_INDEX

# A scramble draws faces in FACES order (URFDLB): face f's axis is f % 3, and U<D, R<L, F<B is the
# allowed order of two turns of one axis.
SCRAMBLE_SUFFIXES: dict[Metric, tuple[str, ...]] = {"quarter": ("", "'"), "half": ("", "2", "'")}
"""The turn suffixes a scramble draws from in each metric, in draw order."""


_MOVE_TABLES = {
    m: np.array([[MOVE_INDEX[f + s] for s in SCRAMBLE_SUFFIXES[m]] for f in FACES], dtype=np.int64)
    for m in METRICS
}


def scramble_move_table(metric: str) -> np.ndarray:
    """Engine move of (face index in ``FACES``, suffix index) as :func:`scramble` draws them."""
    return _MOVE_TABLES[parse_metric(metric, stacklevel=2)].copy()


def scramble(depth: int, metric: str = "quarter", rng: np.random.Generator | int | None = None) -> list[int]:
    """``depth`` random face turns (indices into ``MOVE_NAMES``) in the given metric."""
    if depth < 0:
        raise ValueError(f"scramble depth must be >= 0, got {depth}")
    table = _MOVE_TABLES[parse_metric(metric, stacklevel=2)]
    gen = np.random.default_rng(rng)
    out: list[int] = []
    prev = prev2 = -1
    while len(out) < depth:
        f = int(gen.integers(6))
        if f == prev:
            continue
        if prev >= 0 and f % 3 == prev % 3 and (f < prev or prev2 == f):
            continue  # opposite faces only in U-before-D order, never U D U
        out.append(int(table[f, int(gen.integers(table.shape[1]))]))
        prev2, prev = prev, f
    return out
