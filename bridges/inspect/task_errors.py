"""How the Inspect tasks fail in Inspect's own terms: sample errors, and task parameters Inspect prints briefly.

- A sample whose episode (or question item) ended as an ``error`` record (its model calls failed after
  Inspect's retries, the agent could not start, the test broke) raises :class:`SampleError` from its
  solver, after keeping the record in the sample's store.  Inspect then counts the sample as an error:
  it is left out of the scores, the eval ends with status ``error`` (``inspect eval`` exits 1) unless
  ``--fail-on-error``/``--no-fail-on-error`` allows it, and ``--retry-on-error`` retries it.  A sample
  the model merely failed (wrong answer, unsolved cube) is scored as usual.
- A bad task parameter (``-T tier=cube``) raises :class:`TaskParameterError` from the task function.  It
  is a :class:`~cubebench.runner.suite_fields.SuiteError` (what the runner raises for a bad suite file)
  and an Inspect ``PrerequisiteError``, which ``inspect eval`` prints as its message alone, without a
  traceback.
"""

from __future__ import annotations

import inspect
from contextlib import contextmanager
from typing import Any, Callable, Iterator

from rich.markup import escape

from cubebench.agents.records import EpisodeRecord
from cubebench.runner import SuiteError

from .model_client import describe_failure

try:  # Inspect's own "print the message, not a traceback" exception (inspect eval's excepthook knows it)
    from inspect_ai._util.error import PrerequisiteError
except ImportError:  # pragma: no cover - a later Inspect that moved it: a plain traceback, same message
    class PrerequisiteError(Exception):  # type: ignore[no-redef]
        """Stands in for Inspect's ``PrerequisiteError`` where this Inspect has none."""

from inspect_ai.util import LimitExceededError

__all__ = ["SampleError", "TaskParameterError", "task_parameters", "refuse_unknown", "raise_if_error"]


class SampleError(RuntimeError):
    """A sample's episode or item ended as an ``error`` record; Inspect records this as the sample's error.

    ``message`` is what Inspect shows as the error (it reads the attribute when there is one)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class TaskParameterError(SuiteError, PrerequisiteError):
    """A bad task parameter: a :class:`SuiteError` for Python callers, and for ``inspect eval`` an Inspect
    ``PrerequisiteError``, whose message it prints alone (exit 1) instead of a traceback."""

    def __init__(self, message: str) -> None:
        SuiteError.__init__(self, message)
        self.message = escape(message)  # Inspect prints it as rich markup: "[face,vertex]" must stay text


@contextmanager
def task_parameters(task_name: str) -> Iterator[None]:
    """Turn the suite errors raised while a task function reads its parameters into :class:`TaskParameterError`s
    naming the task (``cubebench/episode: inspect task parameters: ...``)."""
    try:
        yield
    except TaskParameterError:
        raise
    except SuiteError as err:
        raise TaskParameterError(f"{task_name}: {err}") from err


def refuse_unknown(task_name: str, unknown: dict[str, Any], task: Callable[..., Any]) -> None:
    """Refuse parameters the task does not have (``-T tiers=face``): Inspect itself would only warn and run the
    task's whole default grid.  The task takes ``**unknown`` so that Inspect hands them over."""
    if unknown:
        known = [n for n, p in inspect.signature(task).parameters.items() if p.kind is not p.VAR_KEYWORD]
        raise TaskParameterError(f"{task_name}: inspect task parameters: unknown parameter "
                                 f"{', '.join(sorted(unknown))}; the parameters are {', '.join(known)}")


def raise_if_error(record: EpisodeRecord, what: str, failure: BaseException | None) -> None:
    """Raise for a sample whose ``record`` ended as an ``error``, or in which a model call failed after Inspect's
    retries (``failure``: even on an episode's last step, where the step budget ended it as ``failed``, its
    outcome is not the model's).  ``what`` names the sample (its episode or item key).

    An Inspect limit
    (``--token-limit``, ``--time-limit`` ...) is raised as itself, so Inspect records the sample as limited
    and scores it as far as it got; any other failure is the :class:`SampleError`'s cause."""
    if record.status != "error" and failure is None:
        return
    if isinstance(failure, LimitExceededError):
        raise failure
    raise SampleError(f"{what} ended as an error: {_detail(record, failure)}") from None


def _detail(record: EpisodeRecord, failure: BaseException | None) -> str:
    if failure is not None:
        return f"a model call failed after Inspect's retries: {describe_failure(failure)}"
    for key in ("reset_error", "play_error"):
        if record.config.get(key):
            return str(record.config[key])
    errors = [s.error for s in record.steps if s.error]
    return errors[-1] if errors else f"status error with {record.errors} error(s) recorded"
