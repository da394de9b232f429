"""Training starts that never meet the evaluation sets.

A model fine-tuned on the positions it is then evaluated on learns nothing the evaluation can see.
Every start state the benchmark evaluates on is a shipped certified instance (``cubebench.instances``:
every metric, depth and file), so training starts are drawn apart from all of them: seeded random walks
of any face turns (a walk may turn one face twice, which the certified scrambler never does), each
labelled by its exact distance (:func:`~cubebench.solver.oracle.oracle`, never the walk's length), and
kept only when it is at the asked distance, new, and not a shipped start seen from any of the 24 sides: a
start turned whole and recoloured so its centres read URFDLB again (``B D`` seen after ``x2`` is ``F U``)
is the same problem in other letters, so :func:`symmetry_key` names all 24 by one string.
:func:`check_apart` proves it on any list of states.
"""

from __future__ import annotations

import itertools
from functools import lru_cache
from typing import Iterable, Iterator

import numpy as np

from cubebench.curriculum import Instance, load_instance_file
from cubebench.engine import SOLVED, TABLE
from cubebench.engine.kernels import apply_moves
from cubebench.engine.metric import check_metric
from cubebench.engine.moves import MOVE_INDEX
from cubebench.engine.notation import invert_sequence
from cubebench.engine.facelets import CENTRES, FACES
from cubebench.engine.state import from_facelets, to_facelets
from cubebench.shipped import instances_dir
from cubebench.solver.oracle import metric_moves, oracle

from .splits import state_key

__all__ = ["TrainingStartError", "heldout_keys", "symmetry_key", "training_instances", "oracle_solution",
           "check_apart", "MAX_TRAINING_DEPTH"]

MAX_TRAINING_DEPTH = {"quarter": 9, "half": 8}
"""The deepest start labelled exactly without the optimal solver's tables (the distance oracle's range)."""
SOURCE = "training-walk"
GIVE_UP = 20_000
"""Walks in a row that bring nothing new before a depth is taken to hold no more training positions."""


class TrainingStartError(ValueError):
    """A training start cannot be drawn as asked (a depth out of range, too few new positions)."""


@lru_cache(maxsize=1)
def _holdings() -> tuple[np.ndarray, ...]:
    """The 24 whole-cube rotations, as move-index arrays (one per way of holding the cube)."""
    found: dict[str, np.ndarray] = {}
    for n in range(5):
        for seq in itertools.product(("x", "y", "z"), repeat=n):
            moves = np.array([MOVE_INDEX[m] for m in seq], dtype=np.int64)
            found.setdefault(to_facelets(apply_moves(SOLVED, TABLE, moves)), moves)
    return tuple(found.values())


def symmetry_key(facelets: str) -> str:
    """One name for a position and its 23 twins: the least of its 24 holdings, each recoloured so the
    centres read URFDLB (the same position drawn in other letters)."""
    state = from_facelets(state_key(facelets))
    keys = []
    for moves in _holdings():
        turned = to_facelets(apply_moves(state, TABLE, moves)) if len(moves) else to_facelets(state)
        letter = {turned[c]: FACES[i] for i, c in enumerate(CENTRES)}
        keys.append("".join(letter[c] for c in turned))
    return min(keys)


@lru_cache(maxsize=1)
def heldout_keys() -> frozenset[str]:
    """The :func:`symmetry_key` of every shipped certified start (every metric, depth and file)."""
    return frozenset(symmetry_key(instance.state) for path in sorted(instances_dir().glob("*.jsonl"))
                     for instance in load_instance_file(path))


def training_instances(metric: str, depth: int, count: int, seed: int = 0, *, at_most: bool = False) -> list[Instance]:
    """``count`` training starts at exact distance ``depth``, none of them a shipped start or a rotation of
    one, all distinct up to rotation; deterministic in ``(metric, depth, seed)``.  Fewer exist at the shallow
    depths (none at 1 and 2, 4 at quarter-turn depth 3): :class:`TrainingStartError`, or with ``at_most`` the
    ones there are (none is still an error)."""
    metric = check_metric(metric)
    if not 1 <= depth <= MAX_TRAINING_DEPTH[metric]:
        raise TrainingStartError(f"training starts are labelled exactly up to {MAX_TRAINING_DEPTH[metric]} "
                                 f"{metric} turns; depth {depth} is out of range")
    found: list[Instance] = []
    seen, walked, misses = set(heldout_keys()), set(), 0
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


def check_apart(states: Iterable[str]) -> None:
    """:class:`TrainingStartError` naming a state that is a shipped certified start or a rotation of one."""
    held = heldout_keys()
    for state in states:
        if symmetry_key(state) in held:
            raise TrainingStartError(f"training start {state} is an evaluation start seen from another side (or itself)")
