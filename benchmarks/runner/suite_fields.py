"""What every suite file shares: the error type, where the named suites live, and the field checks
that every schema uses (each protocol's ``suite`` module: :mod:`.protocols.episodes.suite`, :mod:`.protocols.questions.suite`,
:mod:`.protocols.multi.suite`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cubebench.engine.metric import METRICS, Metric, parse_metric
from cubebench.shipped import package_dir


def suites_dir() -> Path:
    """The named suites' directory (the ``cubebench.suites`` data package)."""
    return package_dir("cubebench.suites")


class SuiteError(ValueError):
    """A suite file is missing, malformed, or asks for something that does not exist."""


def check_one_of(value: Any, allowed: tuple[str, ...], key: str, source: str) -> str:
    if value not in allowed:
        raise SuiteError(f"{source}: {key} must be one of {list(allowed)}, got {value!r}")
    return str(value)


def suite_metric(value: Any, source: str) -> Metric:
    """The suite's metric: ``quarter`` or ``half`` (an old spelling such as ``face`` is read with a warning)."""
    try:
        return parse_metric(value)
    except ValueError:
        raise SuiteError(f"{source}: metric must be one of {list(METRICS)}, got {value!r}") from None


MAX_NAME = 200
"""The longest suite name (it names the run in reports and, cleaned, the run's default file)."""


def check_name(value: Any, source: str) -> str:
    """A suite's name: printable text (no NUL, no control characters), 1 to :data:`MAX_NAME` characters."""
    if not isinstance(value, str) or not value.strip() or len(value) > MAX_NAME or not value.isprintable():
        shown = repr(value) if not isinstance(value, str) else repr(value[:60])
        raise SuiteError(f"{source}: name must be printable text of 1 to {MAX_NAME} characters, got {shown}")
    return value


def check_int(data: dict[str, Any], key: str, source: str, minimum: int, default: int | None = None) -> int:
    value = data.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise SuiteError(f"{source}: {key} must be an integer >= {minimum}, got {value!r}")
    return value


def check_ints(data: dict[str, Any], key: str, source: str, minimum: int) -> tuple[int, ...]:
    values = data[key]
    if not isinstance(values, list) or not values:
        raise SuiteError(f"{source}: {key} must be a non-empty list of integers")
    for v in values:
        if isinstance(v, bool) or not isinstance(v, int) or v < minimum:
            raise SuiteError(f"{source}: {key} must hold integers >= {minimum}, got {v!r}")
    if len(set(values)) != len(values):
        raise SuiteError(f"{source}: {key} lists a depth twice: {values}")
    return tuple(values)
