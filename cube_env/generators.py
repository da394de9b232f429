"""Instance generators: where an episode's start state comes from.

The env asks its generator for an :class:`Instance` given a depth, a metric
and a random generator (``reset(options={"depth": d})``), or for the k-th
shipped instance (``reset(options={"instance": k})``).  The default,
:class:`CertifiedGenerator`, certifies every depth with the exact optimal
solver, so ``info["distance"]`` is the true optimal distance.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Protocol

import numpy as np

from .engine import kernels
from .engine.facelets import SOLVED
from .engine.moves import TABLE
from .engine.notation import format_moves, invert_sequence
from .engine.metric import Metric, check_metric, parse_metric
from .engine.scramble import scramble
from .engine.state import from_facelets
from .shipped import INSTANCES_ENV_VAR, instances_dir, largest_instance_file
from .solver.oracle import EXPANSION, RADIUS, oracle

# Non-redundant scrambles of at most this many moves are always optimal and distinct: the numbers
# of canonical sequences equal the numbers of positions at these distances (HTM 18, 243, 3240;
# QTM 12, then 108 of the 114 distance-2 positions: the scrambler never turns a face twice).
_OPTIMAL_BY_CONSTRUCTION: dict[Metric, int] = {"half": 3, "quarter": 2}
MAX_SCRAMBLE_DEPTH: dict[Metric, int] = {"half": 18, "quarter": 22}
"""Deepest depth certified from random scrambles (deeper ones almost never are: use shipped sets)."""


class NoInstanceSetError(ValueError):
    """A certified instance set was asked for and none is behind the request: the generator has no
    shipped sets, or no set exists for that metric and depth."""


@dataclass(frozen=True)
class Instance:
    """A start state with its provenance.

    ``distance`` is the exact optimal distance in ``metric`` when certified,
    else ``None`` (a scramble's length only bounds it from above).
    """

    state: np.ndarray
    scramble: str
    depth: int
    metric: Metric
    distance: int | None = None


class Generator(Protocol):
    """Makes the start state for ``reset(options={"depth": d})``."""

    def __call__(self, depth: int, metric: str, rng: np.random.Generator) -> Instance: ...


class ScrambleGenerator:
    """A seeded non-redundant scramble of ``depth`` moves (distance not certified)."""

    def __call__(self, depth: int, metric: str, rng: np.random.Generator) -> Instance:
        metric = parse_metric(metric)
        moves = np.asarray(scramble(depth, metric, rng), dtype=np.int64)
        state = kernels.apply_moves(SOLVED, TABLE, moves)
        return Instance(state=state, scramble=format_moves(moves), depth=depth, metric=metric)


class CertifiedGenerator:
    """States whose optimal distance is certified to equal the depth asked for.

    A seeded scramble of ``depth`` moves is kept when its exact distance is
    ``depth`` (others are redrawn): shallow depths are optimal by construction,
    depths up to 9 half turns or 10 quarter turns are certified by the
    table-free distance oracle (:mod:`cubebench.solver.oracle`, about a second
    to build once), deeper ones by the exact optimal solver, whose tables are
    built on first use (announced on stderr first).  ``instance(depth, metric, k)`` returns
    the k-th shipped instance of ``benchmarks/instances/``.
    """

    def __init__(self, max_draws: int = 200, time_limit: float | None = None) -> None:
        self.max_draws = max_draws
        self.time_limit = time_limit
        self._scrambles = ScrambleGenerator()

    def __call__(self, depth: int, metric: str, rng: np.random.Generator) -> Instance:
        metric = parse_metric(metric)
        if depth > MAX_SCRAMBLE_DEPTH[metric]:
            raise ValueError(
                f"random scrambles do not reach {metric}-turn distance {depth} in practice; use a shipped "
                f"instance (reset(options={{'instance': k}})) or generator=ScrambleGenerator() for uncertified scrambles"
            )
        for _ in range(self.max_draws):
            candidate = self._scrambles(depth, metric, rng)
            distance = self._distance(candidate, metric)
            if distance == depth:
                return Instance(candidate.state, candidate.scramble, depth, metric, distance)
        raise RuntimeError(f"no scramble of {depth} moves certified at distance {depth} in {self.max_draws} draws")

    def instance(self, depth: int, metric: str, index: int) -> Instance:
        """The ``index``-th shipped certified instance of ``depth`` in ``metric``."""
        metric = parse_metric(metric)
        records = shipped_instances(metric, depth)
        if not 0 <= index < len(records):
            raise ValueError(f"instance {index} does not exist: {len(records)} shipped {metric}-turn instances at depth {depth}")
        rec = records[index]
        return Instance(from_facelets(rec["state"]), rec["scramble"], depth, metric, int(rec["distance"]))

    def _distance(self, candidate: Instance, metric: Metric) -> int:
        if candidate.depth <= _OPTIMAL_BY_CONSTRUCTION[metric]:
            return candidate.depth
        if candidate.depth <= RADIUS[metric] + EXPANSION:  # exact without tables: a scramble's distance <= its length
            return oracle(metric).distance(candidate.state)
        from .solver.optimal import solve_optimal

        undo = invert_sequence(candidate.scramble)  # spares the search its costliest iteration
        return solve_optimal(candidate.state, metric, time_limit=self.time_limit, known=undo).distance


@lru_cache(maxsize=64)
def shipped_instances(metric: str, depth: int) -> tuple[dict, ...]:
    """The largest shipped set for ``(metric, depth)`` as records (state, scramble, distance, ...)."""
    from .curriculum import load_instance_file

    check_metric(metric)
    largest = largest_instance_file(metric, depth)
    if largest is None:
        raise NoInstanceSetError(
            f"no shipped {metric}-turn instance set for depth {depth} in {instances_dir()} "
            f"(set {INSTANCES_ENV_VAR} to a directory of certified instance files)"
        )
    return tuple(vars(inst) for inst in load_instance_file(largest))
