"""Instance generators: where an episode's start state comes from.

The env asks its generator for an :class:`Instance` given a depth and a
random generator; swapping the generator (random scrambles now, the
certified curriculum later) changes nothing in the env's API.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from .engine import kernels
from .engine.facelets import SOLVED
from .engine.moves import TABLE
from .engine.notation import format_moves
from .engine.scramble import normalise_metric, scramble


@dataclass(frozen=True)
class Instance:
    """A start state with its provenance.

    ``distance`` is the exact optimal distance in ``metric`` when certified,
    else ``None`` (a scramble's length only bounds it from above).
    """

    state: np.ndarray
    scramble: str
    depth: int
    metric: str
    distance: int | None = None


class Generator(Protocol):
    """Makes the start state for ``reset(options={"depth": d})``."""

    def __call__(self, depth: int, metric: str, rng: np.random.Generator) -> Instance: ...


class ScrambleGenerator:
    """A seeded non-redundant scramble of ``depth`` moves (distance not certified)."""

    def __call__(self, depth: int, metric: str, rng: np.random.Generator) -> Instance:
        metric = normalise_metric(metric)
        moves = np.asarray(scramble(depth, metric, rng), dtype=np.int64)
        state = kernels.apply_moves(SOLVED, TABLE, moves)
        return Instance(state=state, scramble=format_moves(moves), depth=depth, metric=metric)
