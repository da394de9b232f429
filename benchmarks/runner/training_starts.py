"""Training starts that never meet the evaluated positions.

A model fine-tuned on the positions it is then evaluated on learns nothing the evaluation can see.
Every evaluated position (a shipped certified start, of every metric, depth and file, or a question
suite's item state: :mod:`.heldout`) is kept out, so training starts are drawn apart from all of them:
seeded random walks of any face turns (a walk may turn one face twice, which the certified scrambler
never does), each labelled by its exact distance (:func:`~cubebench.solver.oracle.oracle`, never the
walk's length), and kept only when it is at the asked distance, new, and not an evaluated position in
any of its 48 spellings (seen from another side, or in a mirror: :mod:`cubebench.engine.symmetry`).
:func:`~.heldout.check_apart` proves it on any list of states.
"""

from __future__ import annotations

from typing import Iterator

import numpy as np
from cubebench.curriculum import Instance
from cubebench.engine import SOLVED, TABLE
from cubebench.engine.kernels import apply_moves
from cubebench.engine.metric import check_metric
from cubebench.engine.moves import MOVE_INDEX
from cubebench.engine.notation import invert_sequence
from cubebench.engine.state import to_facelets
from cubebench.engine.symmetry import symmetry_key
from cubebench.solver.oracle import metric_moves, oracle

from .heldout import check_apart, evaluation_keys

__all__ = ["TrainingStartError", "training_instances", "oracle_solution", "check_apart", "MAX_TRAINING_DEPTH"]

MAX_TRAINING_DEPTH = {"quarter": 9, "half": 8}
"""The deepest start labelled exactly without the optimal solver's tables (the distance oracle's range)."""
SOURCE = "training-walk"
GIVE_UP = 20_000
"""Walks in a row that bring nothing new before a depth is taken to hold no more training positions."""


class TrainingStartError(ValueError):
    """A training start cannot be drawn as asked (a depth out of range, too few new positions)."""


def training_instances(metric: str, depth: int, count: int, seed: int = 0, *, at_most: bool = False) -> list[Instance]:
    """``count`` training starts at exact distance ``depth``, none of them an evaluated position in any of its 48
    spellings, all distinct up to symmetry; deterministic in ``(metric, depth, seed)``.  Fewer exist at the
    shallow depths (none at quarter-turn depths 1 to 3): :class:`TrainingStartError`, or with ``at_most`` the
    ones there are (none is still an error)."""
    metric = check_metric(metric)
    if not 1 <= depth <= MAX_TRAINING_DEPTH[metric]:
        raise TrainingStartError(f"training starts are labelled exactly up to {MAX_TRAINING_DEPTH[metric]} "
                                 f"{metric} turns; depth {depth} is out of range")
    found: list[Instance] = []
    seen, walked, misses = set(evaluation_keys()), set(), 0
    for walk, array, state in _walks(metric, depth, seed):
        if len(found) == count or misses > GIVE_UP:
            break
        misses += 1
        if state in walked:
            continue
        walked.add(state)
        if oracle(metric).distance(array) != depth or (key := symmetry_key(state)) in seen:
            continue
        seen.add(key)
        misses = 0
        found.append(Instance(index=len(found), seed=seed, scramble=invert_sequence(oracle_solution(array, metric)),
                              state=state, distance=depth, metric=metric, solver_version="distance-oracle",
                              source=SOURCE))
    if len(found) == count or (at_most and found):
        return found
    raise TrainingStartError(f"only {len(found)} new {metric}-turn positions at depth {depth} apart from the "
                             f"evaluation sets were found; ask for fewer than {count}")


def oracle_solution(state: np.ndarray, metric: str) -> str:
    """An optimal solution by exact descent: at each step the first move (in the metric's order) that brings
    the cube one move closer to solved.  (An instance's ``scramble`` is this solution inverted, so it has
    exactly the certified length, as a shipped instance's has.)"""
    moves = []
    for _ in range(oracle(metric).distance(state)):
        best = oracle(metric).progress_moves(state)[0]
        moves.append(best)
        state = apply_moves(state, TABLE, np.array([MOVE_INDEX[best]], dtype=np.int64))
    return " ".join(moves)


def _walks(metric: str, depth: int, seed: int) -> Iterator[tuple[str, np.ndarray, str]]:
    """Seeded random walks of ``depth`` to ``depth + 2`` face turns: ``(moves, state, facelets)``."""
    names = metric_moves(metric)
    rng = np.random.default_rng([seed, depth, 0 if metric == "quarter" else 1])
    while True:
        walk = [names[int(k)] for k in rng.integers(0, len(names), size=depth + int(rng.integers(0, 3)))]
        state = apply_moves(SOLVED, TABLE, np.array([MOVE_INDEX[m] for m in walk], dtype=np.int64))
        yield " ".join(walk), state, to_facelets(state)
