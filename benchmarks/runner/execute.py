"""What playing any planned row shares: the run's :class:`PlaySettings`, the stored rules, the step listeners
and the check that a record reads back from the store.

Each protocol plays its rows in its folder (``protocols/<name>/play.py``); every backend's workers call
:func:`~.protocols.play_spec`, which asks the row's protocol.  Inputs are picklable (a plan row,
:class:`~.specs.AgentSpec`, :class:`PlaySettings`), so a row plays the same in a thread, a process or a Ray task.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import asdict, dataclass
from typing import Any, Callable, Iterator

from cubebench.agents.records import EpisodeRecord, StepRecord
from cubebench.tasks.rules import PAPER

from .store import decode_record, encode_record


@dataclass(frozen=True)
class PlaySettings:
    """Per-run settings of how episodes are played (stored in the run's config)."""

    obs_format: str = "image"
    store_images: bool = True
    distance_budget_s: float | None = None
    renderer: str = "painter"
    rules: str | None = None
    """The rules the run plays under (``--rules``, :func:`~.answering.chosen_rules`).  Question runs: the answer
    rules the items are asked under (:mod:`cubebench.tasks.rules`); episode runs: ``paper`` (the paper's
    interaction steps, no move cap) or ``strict`` (the suite's move budgets).  ``None`` in runs stored before
    rules existed, which asked in the strict one-line forms and played the strict budgets (and still do on
    resume)."""

    @property
    def capped(self) -> bool:
        """Whether an episode plays under the suite's move and rotation budgets: every set of rules but ``paper``."""
        return self.rules != PAPER

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "PlaySettings":
        """The settings of a stored run's config; a run stored before the rename keeps its rules under
        :data:`LEGACY_RULES_KEY`."""
        data = dict(data)
        if LEGACY_RULES_KEY in data:
            data.setdefault("rules", data.pop(LEGACY_RULES_KEY))
        return cls(**data)


LEGACY_RULES_KEY = "answer_protocol"
"""Where runs stored by cubebench before the rules were named kept them in ``config["play"]``."""


def stored_rules(config: dict[str, Any]) -> str | None:
    """The rules a stored run's ``config`` records (``None``: a run from before rules, which played ``strict``)."""
    play = config.get("play") or {}
    return play.get("rules") or play.get(LEGACY_RULES_KEY)


_STEP_LISTENERS: list[Callable[[], None]] = []


@contextmanager
def listening_to_steps(listener: Callable[[], None]) -> Iterator[None]:
    """Call ``listener`` after every interaction step that episodes played in this process take (the run's
    progress inside long episodes; workers in other processes are not heard)."""
    _STEP_LISTENERS.append(listener)
    try:
        yield
    finally:
        _STEP_LISTENERS.remove(listener)


def step_taken(_: StepRecord) -> None:
    """Tell the listeners that a step was taken (an episode's ``on_step``)."""
    for listener in list(_STEP_LISTENERS):
        listener()


def storable(record: EpisodeRecord) -> EpisodeRecord:
    """``record``, once it is known to read back from the store (``RecordError`` otherwise)."""
    decode_record(encode_record(record))
    return record
