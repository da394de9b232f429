"""Train/test splits of exported tasks, by the cube state a row starts from.

A model trained on a start state and tested on it again learns nothing the test can see, so a
split must never put one start state on both sides.  Rows are not split by index: the same
position can come back through another row (a quarter-turn and a half-turn instance of depth 1,
two tiers or tool settings of one instance, a question item built on a state an episode starts
from).  Every row is therefore assigned by a seeded hash of its start state alone, held
orientation removed (:func:`~cubebench.engine.state.canonical`: a cube held another way is the
same position), so equal states land on the same side in any export made with the same seed,
whatever kind, suite or depth produced them.  :func:`check_disjoint` proves it on the rows written.

A question test whose items share one state (STARE's nets are not cube positions) names what must
stay on one side instead (:meth:`~cubebench.tasks.items.QuestionTest.split_key`, e.g. the hexomino);
such a key, not being a cube state, is hashed as it is.
"""

from __future__ import annotations

import hashlib
from typing import Iterable, Mapping

from cubebench.engine.state import canonical, from_facelets, to_facelets

SPLITS = ("train", "test")


class SplitError(ValueError):
    """A split's arguments are out of range, or rows of one start state ended up on both sides."""


def state_key(facelets: str) -> str:
    """The identity of a start state for splitting: its 54 letters with the held orientation removed."""
    return to_facelets(canonical(from_facelets(facelets)))


def group_of(key: str) -> str:
    """What a row is split by: a cube state's :func:`state_key`, or a key that is not a cube state as it is."""
    try:
        return state_key(key)
    except ValueError:  # StateError is a ValueError: not 54 facelets of a valid cube
        return key


def split_of(key: str, seed: int, train_fraction: float) -> str:
    """``"train"`` or ``"test"`` for a row whose group is ``key`` (a start state's facelets, or a test's split
    key): a seeded hash of :func:`group_of` mapped to [0, 1), compared with ``train_fraction``.
    Deterministic; no group is shared between sides."""
    check_fraction(train_fraction)
    digest = hashlib.sha256(f"cubebench-split/{seed}/{group_of(key)}".encode()).digest()
    return "train" if int.from_bytes(digest[:8], "big") / 2**64 < train_fraction else "test"


def check_fraction(train_fraction: float) -> None:
    """:class:`SplitError` unless ``0 <= train_fraction <= 1``."""
    if not 0.0 <= train_fraction <= 1.0:
        raise SplitError(f"the train fraction (--split) must be between 0 and 1, got {train_fraction}")


def check_disjoint(rows: Iterable[Mapping[str, object]]) -> None:
    """:class:`SplitError` naming the groups found on both sides, if any (rows need ``split`` and ``group``,
    or ``state`` for a row split by its start state)."""
    sides = Sides()
    for row in rows:
        sides.add(row)
    sides.check()


class Sides:
    """The side each row's group went to, row by row (an export streams its rows): memory holds one group key
    and side per group, not the rows."""

    def __init__(self) -> None:
        self.sides: dict[str, set[str]] = {}

    def add(self, row: Mapping[str, object]) -> None:
        """Note the side of ``row``'s group."""
        self.sides.setdefault(group_of(str(row.get("group", row["state"]))), set()).add(str(row["split"]))

    def check(self) -> None:
        """:class:`SplitError` naming the groups seen on both sides, if any."""
        shared = sorted(key for key, seen in self.sides.items() if len(seen) > 1)
        if shared:
            raise SplitError(f"{len(shared)} start state(s) or item group(s) are in both train and test, "
                             f"e.g. {shared[0]}")
