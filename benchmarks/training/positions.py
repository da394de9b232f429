"""Labelled positions for a policy: training paths and a probe set that the training never meets.

Every label is exact: a position's distance and *every* move that brings it one move closer to solved come
from the table-free distance oracle (:func:`cubebench.solver.oracle.oracle`), never from the length of the
scramble that made it.  Starts are seeded random walks of face turns.

What "held out" means here, plainly:

- **Evaluation positions.**  No training start is an evaluated position (a shipped certified start or a
  question item) or one of its 48 symmetric twins (:mod:`cubebench.runner.heldout`).  A training *path* runs from its start to
  solved along optimal moves; from depth :data:`APART_FROM` up, none of its positions is evaluated either (a
  path that cannot avoid one is dropped).  At depths 1 to 3 (quarter turns) every position is an evaluated one
  up to symmetry, so paths pass through them on the way to solved, as any solve does: a model's pass rate on
  the shipped depth-1 to 3 starts is not a held-out figure.  :func:`overlap_by_depth` counts what a data set
  holds of them.
- **The probe set.**  Whole symmetry classes at depths 2 to 8 are set aside by a seeded hash of the class
  (:func:`is_probe_class`): no training start, and no position on any training path, is in one.  One-step
  accuracy on probe positions (:mod:`.probe`) is measured on positions the model never saw, in any of their
  48 spellings.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Iterator

import numpy as np

from cubebench.engine import SOLVED, TABLE
from cubebench.engine.kernels import apply_moves
from cubebench.engine.metric import check_metric
from cubebench.engine.moves import MOVE_INDEX
from cubebench.engine.state import from_facelets, to_facelets
from cubebench.engine.symmetry import symmetry_key
from cubebench.runner import evaluation_keys
from cubebench.solver.oracle import metric_moves, oracle


__all__ = ["Position", "labelled", "is_probe_class", "probe_positions", "training_paths", "overlap_by_depth",
           "PROBE_DEPTHS", "MAX_START_DEPTH", "PROBE_FRACTION", "APART_FROM"]

PROBE_DEPTHS = range(2, 9)
"""Depths of the probe classes (depth 1 is one class in the quarter-turn metric: every path ends there)."""
PROBE_FRACTION = 0.2
"""The share of symmetry classes at each probe depth set aside for the probe."""
MAX_START_DEPTH = {"quarter": 9, "half": 8}
APART_FROM = 4
"""From this depth up no position of a training path is an evaluated one (below it, none is left that is not)."""
_STREAMS = {"probe": 1, "train": 2}
MAX_FRUITLESS_WALKS = 50_000
"""Walks in a row that bring nothing new before a depth is taken to hold no more of what is asked."""
"""The deepest start labelled exactly by the oracle alone: its every neighbour is within the oracle's range."""


@dataclass(frozen=True)
class Position:
    """A position with its exact distance and every optimal move (in the metric's move order)."""

    facelets: str
    distance: int
    moves: tuple[str, ...]

    def to_dict(self) -> dict[str, object]:
        return {"state": self.facelets, "distance": self.distance, "moves": list(self.moves)}


def labelled(facelets: str, metric: str, depth: int | None = None) -> Position | None:
    """``facelets`` with its exact distance and optimal moves (``metric``'s oracle); with ``depth``, ``None``
    unless the position is at exactly that distance (its moves are then not looked up: a position deeper than
    asked may have neighbours beyond the oracle's table-free range)."""
    state = from_facelets(facelets)
    found = oracle(metric)
    distance = found.distance(state)
    if depth is not None and distance != depth:
        return None
    return Position(facelets, distance, found.progress_moves(state))


def is_probe_class(key: str, seed: int, fraction: float = PROBE_FRACTION) -> bool:
    """Whether the symmetry class ``key`` belongs to the probe set of ``seed`` (a seeded hash of the class,
    so membership is decided without listing a depth's classes)."""
    digest = hashlib.sha256(f"cubebench-probe/{seed}/{key}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < fraction


def _walks(metric: str, depth: int, seed: int, stream: str) -> Iterator[str]:
    """Seeded random walks of ``depth`` or ``depth + 1`` face turns (at most the oracle's exact range)."""
    names = metric_moves(metric)
    rng = np.random.default_rng([seed, depth, 0 if metric == "quarter" else 1, _STREAMS[stream]])
    while True:
        length = depth + int(rng.integers(0, 2))
        moves = np.array([MOVE_INDEX[names[int(k)]] for k in rng.integers(0, len(names), size=length)], np.int64)
        yield to_facelets(apply_moves(SOLVED, TABLE, moves))


def _check_depth(metric: str, depth: int) -> str:
    metric = check_metric(metric)
    if not 1 <= depth <= MAX_START_DEPTH[metric]:
        raise ValueError(f"positions are labelled exactly up to {MAX_START_DEPTH[metric]} {metric} turns; "
                         f"depth {depth} is out of range")
    return metric


def probe_positions(metric: str, depth: int, count: int, seed: int) -> list[Position]:
    """``count`` distinct probe positions at exact distance ``depth`` (fewer where the probe classes of that
    depth hold fewer), deterministic in ``(metric, depth, seed)``."""
    metric = _check_depth(metric, depth)
    if depth not in PROBE_DEPTHS:
        raise ValueError(f"the probe has depths {PROBE_DEPTHS.start}-{PROBE_DEPTHS.stop - 1}, not {depth}")
    found: dict[str, Position] = {}
    misses = 0
    for facelets in _walks(metric, depth, seed, "probe"):
        if len(found) == count or misses > MAX_FRUITLESS_WALKS:
            break
        misses += 1
        if facelets in found or not is_probe_class(symmetry_key(facelets), seed):
            continue
        position = labelled(facelets, metric, depth)
        if position is not None:
            found[facelets] = position
            misses = 0
    return list(found.values())


def training_paths(metric: str, depth: int, count: int, seed: int) -> Iterator[list[Position]]:
    """``count`` optimal paths from distinct training starts at exact distance ``depth`` down to distance 1
    (see the module docstring for what they avoid), deterministic in ``(metric, depth, seed)``.  Two starts may
    be spellings of one symmetry class (neither is evaluated): the same problem shown another way."""
    metric = _check_depth(metric, depth)
    rng = np.random.default_rng([seed, depth, 7])
    held, starts = evaluation_keys(), set()
    made = misses = 0
    for facelets in _walks(metric, depth, seed, "train"):
        if made == count:
            return
        misses += 1
        if misses > MAX_FRUITLESS_WALKS:
            raise ValueError(f"only {made} training starts at {metric}-turn depth {depth} were found apart from the "
                             f"evaluation positions and the probe; ask for fewer than {count}")
        if facelets in starts:
            continue
        key = symmetry_key(facelets)
        if key in held or _probe(key, depth, seed):
            continue
        start = labelled(facelets, metric, depth)
        if start is None:
            continue
        path = _descend(start, metric, seed, held, rng)
        if path is not None:
            starts.add(facelets)
            made, misses = made + 1, 0
            yield path


def _probe(key: str, depth: int, seed: int) -> bool:
    return depth in PROBE_DEPTHS and is_probe_class(key, seed)


def _descend(start: Position, metric: str, seed: int, held: frozenset[str],
             rng: np.random.Generator) -> list[Position] | None:
    """The path from ``start`` to distance 1: at each position a random optimal move among those whose next
    position is not in a probe class, preferring one that is not an evaluated position; ``None`` when every
    optimal move leads into the probe, or into evaluated positions at depth :data:`APART_FROM` or more."""
    path = [start]
    while path[-1].distance > 1:
        here = path[-1]
        options = []
        for move in here.moves:
            after = to_facelets(apply_moves(from_facelets(here.facelets), TABLE, np.array([MOVE_INDEX[move]])))
            key = symmetry_key(after)
            if not _probe(key, here.distance - 1, seed):
                options.append((key in held, after))
        if not options:
            return None
        fresh = [after for evaluated, after in options if not evaluated]
        if not fresh and here.distance - 1 >= APART_FROM:
            return None
        pool = fresh or [after for _, after in options]
        step = labelled(pool[int(rng.integers(len(pool)))], metric, here.distance - 1)
        if step is None:  # an optimal move always lands one closer: a wrong oracle, not bad input
            raise RuntimeError(f"{metric} oracle: an optimal move from a depth-{here.distance} position did not land one closer")
        path.append(step)
    return path


def overlap_by_depth(positions: list[Position]) -> dict[int, tuple[int, int]]:
    """``{depth: (evaluated, all)}``: how many of ``positions`` are evaluated positions up to symmetry."""
    held = evaluation_keys()
    counts: dict[int, list[int]] = {}
    for position in positions:
        seen = counts.setdefault(position.distance, [0, 0])
        seen[0] += symmetry_key(position.facelets) in held
        seen[1] += 1
    return {depth: (evaluated, total) for depth, (evaluated, total) in sorted(counts.items())}
