"""The positions a model is evaluated on, which no training start may be.

Two kinds of position are evaluated: every start of a shipped certified instance set (every metric, depth
and file: the episode suites and the multi-agent games start there) and every item state of a shipped
question suite (Cube Bench's items are cube positions; STARE's nets are not, and Inf-Bench's ladders start
from 25-move random scrambles, see :func:`evaluation_positions`).  A position seen from another side or in a
mirror is the same problem in other letters (:mod:`cubebench.engine.symmetry`), so the held-out set is kept
as the classes of all 48 symmetries, and :func:`check_apart` refuses any training start in one of them.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Iterable, Iterator

from cubebench.curriculum import load_instance_file
from cubebench.engine.errors import InvalidStateError
from cubebench.engine.state import from_facelets
from cubebench.engine.symmetry import symmetry_key
from cubebench.shipped import instances_dir

from .protocols.episodes.private_classes import use_public_keys
from .protocols.questions.plan import iter_fixed_items
from .protocols.questions.suite import QuestionSuite
from .suites import available_suites, load_suite

__all__ = ["EvaluationOverlap", "evaluation_positions", "evaluation_keys", "check_apart"]


class EvaluationOverlap(ValueError):
    """A training position is an evaluation position (up to the 48 symmetries)."""


def evaluation_positions() -> Iterator[tuple[str, str]]:
    """``(where, facelets)`` of every evaluated position: each shipped instance's start, then each fixed item
    state of each shipped question suite that is a cube position.  Inf-Bench's ladder items are left out:
    their starts are 25 random face turns (``cubebench.tasks.inf_bench.common.random_start``), a position at
    distance 9 or less (the deepest a training start is) once in about 10^11 draws, and a ladder's items are
    drawn as it climbs, so no fixed list of them exists.  Listed once a process (building every question
    item takes seconds), then read from memory."""
    return iter(_positions())


@lru_cache(maxsize=1)
def _positions() -> tuple[tuple[str, str], ...]:
    return tuple(_list_positions())


def _list_positions() -> Iterator[tuple[str, str]]:
    for path in sorted(instances_dir().glob("*.jsonl")):
        for instance in load_instance_file(path):
            yield path.name, instance.state
    for name in available_suites():
        suite = load_suite(name)
        if not isinstance(suite, QuestionSuite):
            continue
        for test in suite.fixed:
            for spec in iter_fixed_items(suite, test):
                if _is_position(spec.item["state"]):
                    yield f"{name}/{spec.key}", spec.item["state"]


@lru_cache(maxsize=1)
def evaluation_keys() -> frozenset[str]:
    """The symmetry class (:func:`~cubebench.engine.symmetry.symmetry_key`) of every evaluated position."""
    return frozenset(symmetry_key(state) for _, state in evaluation_positions())


def check_apart(states: Iterable[str]) -> None:
    """:class:`EvaluationOverlap` naming the first of ``states`` that is an evaluated position or one of its
    47 symmetric twins."""
    held = evaluation_keys()
    for state in states:
        if symmetry_key(state) in held:
            raise EvaluationOverlap(f"training start {state} is an evaluation position up to the cube's 48 symmetries")


def _is_position(facelets: object) -> bool:
    try:
        from_facelets(str(facelets))
    except InvalidStateError:
        return False
    return True


use_public_keys(evaluation_keys)  # a private draw's public classes (--private-classes) are these
