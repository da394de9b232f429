"""What the store keeps of every played row, whatever the run's protocol: its summary columns.

Each name holds one concept in every protocol (store schema 2; schema 1 called ``part`` ``tier`` and ``variant``
``reward``, after the episodes they first held, and is still read):

=============  ===========================  ==========================  ====================================
column         an episode                   a question item             a multi-agent game
=============  ===========================  ==========================  ====================================
``part``       its tier                     its test                    its game
``depth``      its depth                    its depth (a ladder level)  its depth
``instance``   its instance                 its item index              its instance
``variant``    its reward                   its variant                 its view
``setting``    its tool setting             ``item``                    the seat the agent played alone, or ``team``
``horizon``    ``short`` or ``long``        ``d<depth>``                ``d<depth>``
=============  ===========================  ==========================  ====================================

A protocol reads its rows under its own words: its plan row type names a :class:`StoredRow` subclass
(``stored_as``) whose :class:`Word` attributes say ``tier``, ``test``, ``game``... for these columns.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic, TypeVar, overload

STORED_COLUMNS = ("key", "part", "depth", "instance", "variant", "setting", "horizon", "status", "solved",
                  "n_steps", "n_moves", "input_tokens", "output_tokens", "cost_usd", "wall_s",
                  "distance_start", "distance_end")
"""The summary columns, in the store's order."""
SCHEMA_1_NAMES = {"part": "tier", "variant": "reward"}
"""The columns store schema 1 named otherwise."""


@dataclass(frozen=True)
class StoredRow:
    """One played row's summary columns (see the module docstring): its cell, then its outcome (the full record is
    loaded on demand)."""

    key: str
    part: str
    depth: int
    instance: int
    variant: str
    setting: str
    horizon: str
    status: str
    solved: bool
    n_steps: int
    n_moves: int
    input_tokens: int
    output_tokens: int
    cost_usd: float
    wall_s: float
    distance_start: int | None
    distance_end: int | None

    @classmethod
    def words(cls) -> dict[str, str]:
        """``{column: its word}`` for the columns this row type reads under a word of its protocol's."""
        return {word.column: name for klass in reversed(cls.__mro__) for name, word in vars(klass).items()
                if isinstance(word, Word)}


_T = TypeVar("_T")


class Word(Generic[_T]):
    """A protocol's word for one of the columns (``tier = Word[str]("part")``): the column, read under that name."""

    def __init__(self, column: str) -> None:
        self.column = column

    @overload
    def __get__(self, row: None, owner: Any) -> "Word[_T]": ...

    @overload
    def __get__(self, row: StoredRow, owner: Any) -> _T: ...

    def __get__(self, row: StoredRow | None, owner: Any) -> Any:
        return self if row is None else getattr(row, self.column)
