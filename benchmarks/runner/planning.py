"""The planner's common parts: what every plan row is, its seeds, and the bound on a plan's size.

A run's plan is a list of keyed rows, one per episode, item or game, in a stable order; the key is the result store's
unique key, so a resumed run recognises finished rows whatever order they ran in.  Each run protocol defines its row
(a :class:`PlannedSpec` subclass in its folder, e.g. :class:`~.protocols.episodes.plan.EpisodeSpec`) and plans it;
defining the subclass registers it (:func:`row_type`), which is how the store reads a protocol's rows back.
"""

from __future__ import annotations

import hashlib
from abc import ABC, abstractmethod
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from cubebench.agents.records import check_form

from .rows import StoredRow
from .suite_fields import SuiteError

_ROW_TYPES: dict[str, type["PlannedSpec"]] = {}


@dataclass(frozen=True)
class PlannedSpec(ABC):
    """What every plan row has: the name of its protocol, its JSON form and ``cell()``: its store summary columns
    part, depth, instance, variant, setting, horizon (each protocol's meaning of them: :mod:`.rows`).
    A subclass that sets ``protocol`` is that protocol's row type."""

    if TYPE_CHECKING:  # every row type's first field (declared here for the type checker only: it stays first)
        key: str

    protocol: ClassVar[str]
    """The name of the protocol that plays it (its suite class's ``protocol``)."""
    stored_as: ClassVar[type[StoredRow]] = StoredRow
    """The summary row type the store gives back for it: the columns under the protocol's own words."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "protocol" in cls.__dict__:
            _ROW_TYPES[cls.protocol] = cls

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @abstractmethod
    def cell(self) -> tuple[str, int, int, str, str, str]:
        """Its summary columns part, depth, instance, variant, setting, horizon (:mod:`.rows`)."""

    @classmethod
    def from_row(cls, data: Any, where: str) -> "PlannedSpec":
        """The row ``data`` read back from a store (``where`` names it in errors): ``RecordError`` when it is not
        one, ``NewerForm`` when it has fields of a newer version."""
        check_form(data, cls, where)
        spec = cls(**data)
        spec.check_part()
        return spec

    def check_part(self) -> None:
        """``ValueError`` when the row's part (tier, test, game) is none of this protocol's: a row copied from
        another protocol's run, or edited by hand, is refused where it is read, not when it is played."""


def row_type(protocol: str) -> type[PlannedSpec] | None:
    """The plan row type of the run protocol called ``protocol``, or ``None`` (not a protocol of this version)."""
    return _ROW_TYPES.get(protocol)


def forget_row_type(protocol: str) -> None:
    """Forget ``protocol``'s row type (its protocol was unregistered): the store reads no more of its runs."""
    _ROW_TYPES.pop(protocol, None)


def row_protocols() -> tuple[str, ...]:
    """The names of every protocol whose rows this version reads."""
    return tuple(_ROW_TYPES)


def agent_seed(suite_seed: int, key: str) -> int:
    """A reproducible seed for the agent of one episode (independent of scheduling order)."""
    return int.from_bytes(hashlib.sha256(f"agent/{suite_seed}/{key}".encode()).digest()[:4], "big") & 0x7FFFFFFF


MAX_PLANNED = 50_000
"""The most episodes, items or games a plan holds at once: a run's plan, an Inspect task's dataset, a verifiers
environment's rows are made in memory before the first is played (question items: about 1 ms and up to 13 KB each,
measured on ``cube-bench`` and ``stare``).  16 times the largest shipped suite (``cube-bench``, 3,058 items); an
export (``cubebench export-tasks``) streams its rows to files and has no such limit."""


class Plannable(Protocol):
    """What :func:`check_plan_size` reads of a suite of any protocol."""

    @property
    def name(self) -> str: ...

    @property
    def planned_at_start(self) -> int:
        """How many rows planning it makes at once (a question suite's ladders add their first rounds)."""


class RunnableSuite(Plannable, Protocol):
    """A suite of any protocol, as the run, the command and the store see it."""

    @property
    def protocol(self) -> str:
        """The name of the protocol its runs play."""

    @property
    def metric(self) -> str: ...

    def to_dict(self) -> dict[str, Any]:
        """The suite as it would be written in a suite file (stored as the run's ``meta["suite"]``)."""


def check_plan_size(suite: Plannable, unit: str) -> None:
    """:class:`SuiteError` at once, before anything is made, when ``suite`` plans more than :data:`MAX_PLANNED`
    of ``unit`` (``episode``, ``item``, ``game``)."""
    n = suite.planned_at_start
    if n > MAX_PLANNED:
        raise SuiteError(f"suite {suite.name!r} plans {n:,} {unit}s; a plan holds at most {MAX_PLANNED:,} (made in "
                         "memory before the first is played): ask for fewer, or split the suite into several runs")
