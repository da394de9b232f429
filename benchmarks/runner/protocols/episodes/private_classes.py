"""How private a private draw is up to symmetry, and a draw that keeps the public classes out.

A private draw (``cubebench run --seed N``, N not 0) plays fresh certified positions, but a position seen from
another side or in a mirror is the same problem in other letters (:mod:`cubebench.engine.symmetry`): a model that
memorised a public position (a shipped certified start or a question item: :func:`~cubebench.runner.heldout.evaluation_keys`)
has memorised its 47 twins too.  At shallow depths few classes exist: in quarter turns depths 1, 2 and 3 hold 1, 5
and 25 classes, every one of them public, and a fresh depth-4 draw lands in a public class more than half the time
(116 of 200 starts over seeds 1-10, counted with :func:`public_count`).  So:

* every private draw's instance line says, per depth, how many of its starts lie in a public class
  (:func:`public_notes`);
* ``--private-classes`` (the suite field ``instance_classes: "private"``) draws from the same certified curriculum
  of the run's seed but skips every candidate in a public class (:func:`private_class_starts`); at a depth where no
  other class exists (:func:`every_class_public`, decided by listing the depth's positions) it says so and draws as
  without it.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Callable, Iterable

import numpy as np
from cubebench.curriculum import certified_instances
from cubebench.engine import SOLVED, TABLE
from cubebench.engine.kernels import apply_moves
from cubebench.engine.metric import check_metric
from cubebench.engine.moves import MOVE_INDEX
from cubebench.engine.state import to_facelets
from cubebench.engine.symmetry import symmetry_key
from cubebench.solver.oracle import metric_moves

__all__ = ["LISTED_DEPTH", "public_keys", "use_public_keys", "classes_at", "every_class_public", "public_count", "public_notes",
           "private_class_starts", "PRIVATE_CLASSES"]

PRIVATE_CLASSES = "private"
"""The suite's ``instance_classes`` that keeps a private draw out of the public classes (``any``: the default)."""
LISTED_DEPTH = 3
"""The deepest depth whose positions are listed outright (quarter turns: 1,068 at depth 3; half turns 3,240) to
decide whether any class there is not public; deeper ones hold thousands of classes, a few of them public."""
GROWTH = 4
"""A draw that kept too few after skipping the public classes asks the curriculum for this many times more."""


_PUBLIC: list[Callable[[], frozenset[str]]] = []
"""Where the public classes come from: :func:`cubebench.runner.heldout.evaluation_keys`, which lists the question
suites' items through the protocols this module sits under, so it registers itself (:func:`use_public_keys`) when
``cubebench.runner`` loads rather than being imported here."""


def use_public_keys(source: Callable[[], frozenset[str]]) -> None:
    """Take the symmetry classes of the public positions from ``source`` (called once a draw needs them)."""
    _PUBLIC[:] = [source]


def public_keys() -> frozenset[str]:
    """The symmetry class of every public (evaluated) position: a shipped start or a question item."""
    if not _PUBLIC:
        raise RuntimeError("no list of public positions is registered: cubebench.runner.heldout registers it when "
                           "cubebench.runner is imported")
    return _PUBLIC[0]()


@lru_cache(maxsize=None)
def classes_at(metric: str, depth: int) -> frozenset[str]:
    """Every symmetry class at exact distance ``depth`` (``depth`` at most :data:`LISTED_DEPTH`), by breadth-first
    search from solved."""
    metric = check_metric(metric)
    if not 0 <= depth <= LISTED_DEPTH:
        raise ValueError(f"classes are listed up to depth {LISTED_DEPTH}, not {depth}")
    moves = [np.array([MOVE_INDEX[m]], np.int64) for m in metric_moves(metric)]
    seen = {to_facelets(SOLVED)}
    frontier = [SOLVED]
    for _ in range(depth):
        nxt = []
        for state in frontier:
            for move in moves:
                after = apply_moves(state, TABLE, move)
                text = to_facelets(after)
                if text not in seen:
                    seen.add(text)
                    nxt.append(after)
        frontier = nxt
    return frozenset(symmetry_key(to_facelets(s)) for s in frontier)


def every_class_public(metric: str, depth: int) -> bool:
    """Whether every class at ``depth`` is a public one (decided for listed depths only; deeper: ``False``)."""
    return depth <= LISTED_DEPTH and classes_at(metric, depth) <= public_keys()


def public_count(states: Iterable[str]) -> tuple[int, int]:
    """``(in a public class, all)`` of ``states`` (54-letter facelets)."""
    held = public_keys()
    states = list(states)
    return sum(symmetry_key(s) in held for s in states), len(states)


def public_notes(metric: str, starts_by_depth: dict[int, list[str]], private_classes: bool) -> list[str]:
    """The instance line's words on a private draw: how many of each depth's starts lie in a public class."""
    counts = {depth: public_count(states) for depth, states in sorted(starts_by_depth.items())}
    public = {depth: c for depth, c in counts.items() if c[0]}
    if not public:
        return ["none of the drawn starts lies in a public symmetry class"] if private_classes and counts else []
    shown = ", ".join(f"depth {d} {k} of {n}" for d, (k, n) in public.items())
    note = (f"drawn starts in a public symmetry class (a shipped start or question item seen from another side or in "
            f"a mirror: not private to a model that memorised it): {shown}")
    if private_classes:
        full = [d for d in public if every_class_public(metric, d)]
        why = [f"every {metric}-turn class at depth {', '.join(map(str, full))} is public"] if full else []
        why += ["the curriculum's tries found too few outside them at depth "
                f"{', '.join(str(d) for d in public if d not in full)}"] if len(full) < len(public) else []
        return [note + f" (--private-classes cannot keep them out: {'; '.join(why)})"]
    return [note + "; --private-classes keeps them out where other classes remain"]


@lru_cache(maxsize=None)
def private_class_starts(depth: int, metric: str, seed: int, count: int) -> tuple[tuple[str, int], ...]:
    """``count`` certified starts of ``seed``'s curriculum at ``depth`` outside every public class, in the
    curriculum's order (fewer where the curriculum's tries find fewer): ``(facelets, distance)`` pairs.  At a depth
    whose every class is public it is the plain draw (the caller says so)."""
    metric = check_metric(metric)
    if every_class_public(metric, depth):
        return tuple((i.state, i.distance) for i in certified_instances(depth, metric, seed, count, table_free=True))
    held = public_keys()
    asked = count
    while True:
        drawn = certified_instances(depth, metric, seed, asked, table_free=True)
        kept = [(i.state, i.distance) for i in drawn if symmetry_key(i.state) not in held]
        if len(kept) >= count or len(drawn) < asked:  # enough, or the curriculum has no more to give
            return tuple(kept[:count])
        asked *= GROWTH

