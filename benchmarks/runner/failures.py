"""A run whose model calls fail says so: the first failure's cause at once, and a stop when they keep coming.

An ``error`` record (an episode, item or game whose model kept failing) is a finished record, so a run
whose every call failed used to end with exit 0 and a pass rate of 0.00, the cause hidden in the
records; with no model server at the URL the smoke suite took 22 minutes to fail 72 times.  Now:

* the first error record's cause (:func:`error_cause`) is printed on stderr as it arrives;
* :class:`FailureWatch` counts records in a row that failed for a reason no retry of the next one will
  cure (:func:`systematic_failure`: no connection, the key refused, nothing at the URL) and stops the
  run after :data:`STOP_AFTER` of them, with the cause and the command that plays them again;
* the report's headline reads ``n/a: every episode ended in error`` instead of 0.00 when nothing was
  evaluated (:func:`nothing_evaluated`), and ``cubebench run`` then exits 1.
"""

from __future__ import annotations

from typing import Any, Iterable

from cubebench.agents.records import EpisodeRecord

__all__ = ["STOP_AFTER", "FailureWatch", "error_cause", "systematic_failure", "nothing_evaluated",
           "nothing_evaluated_text", "short_cause"]

STOP_AFTER = 3
"""Records in a row that failed systematically after which a run stops (each already retried its calls)."""
SYSTEMATIC_STATUS = {401: "the model server refused the key", 403: "the model server refused the key",
                     404: "nothing answers at that URL or model name"}
"""HTTP statuses whose failure the next call repeats, and what each means."""
_CONFIG_KEYS = ("reset_error", "play_error")
"""Where a record keeps a failure that was no step's (the env could not reset, a test or game raised)."""


def error_cause(record: EpisodeRecord) -> str | None:
    """Why an error record failed: its first step error, else its reset or play error (``None``: no cause kept)."""
    for step in record.steps:
        if step.error:
            return step.error
    for key in _CONFIG_KEYS:
        value = record.config.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def systematic_failure(record: EpisodeRecord) -> str | None:
    """What failed for good in an ``error`` record when the next call would fail alike: ``could not connect``
    (the last attempt of its last failed call found no server), or :data:`SYSTEMATIC_STATUS`'s meaning of its
    HTTP status; ``None`` for any other failure (a timeout, a rate limit, a malformed reply, a bug)."""
    if record.status != "error":
        return None
    failed = [step for step in record.steps if step.error]
    if not failed:
        return None
    attempts = [entry for entry in failed[-1].model_log if isinstance(entry, dict) and entry.get("error_kind")]
    if not attempts:
        return None
    last = attempts[-1]
    if last.get("error_kind") == "connection":
        return "could not connect to the model server"
    status = last.get("status")
    return SYSTEMATIC_STATUS.get(status) if isinstance(status, int) else None


class FailureWatch:
    """Fed every finished record in the order they arrive: says the first error's cause once (``notes``), and
    whether the run should stop (:attr:`stop`: :data:`STOP_AFTER` systematic failures in a row)."""

    def __init__(self, unit: str, stop_after: int = STOP_AFTER) -> None:
        self.unit, self.stop_after = unit, stop_after
        self.in_row = 0
        self.reason: str | None = None
        self.cause: str | None = None
        self.first_told = False

    def see(self, key: str, record: EpisodeRecord) -> list[str]:
        """Count ``record``; the lines to print now (the first error's cause)."""
        notes = []
        if record.status == "error" and not self.first_told:
            self.first_told = True
            notes.append(f"{self.unit} {key} ended in error: {_short(error_cause(record) or 'no cause recorded')}")
        reason = systematic_failure(record)
        if reason is None:
            self.in_row = 0
        else:
            self.in_row += 1
            self.reason, self.cause = reason, error_cause(record)
        return notes

    @property
    def stop(self) -> bool:
        return self.in_row >= self.stop_after

    def outcome(self) -> str:
        """The run's outcome when the watch stopped it."""
        return f"stopped: {self.in_row} {self.unit}s in a row ended in error: {self.reason}"


def short_cause(text: str | None, limit: int = 300) -> str:
    """A cause on one line of at most ``limit`` characters."""
    return _short(text or "no cause recorded", limit)


def _short(text: str, limit: int = 300) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[:limit - 3] + "..."


def nothing_evaluated(statuses: Iterable[Any]) -> bool:
    """Whether a run's finished records (their statuses) evaluated nothing: some finished, every one an error."""
    statuses = list(statuses)
    return bool(statuses) and all(status == "error" for status in statuses)


def nothing_evaluated_text(unit: str) -> str:
    """The headline of a run that evaluated nothing (never a rate of 0)."""
    return f"n/a: every {unit} ended in error"
