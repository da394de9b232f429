"""The move metric: what counts as one move, and so which actions an env has.

One type with one spelling, everywhere (envs, generators, solver,
curriculum, runner, CLIs, RL):

- ``"quarter"`` (QTM): 12 actions, a half turn counts two;
- ``"half"`` (HTM): 18 actions, any face turn counts one.

:func:`parse_metric` is the one place an outside spelling is read: the old
ones (``face``, ``htm``, ``qtm``) still work with a :class:`FutureWarning`
(Python's warning for deprecations aimed at end users: shown by default, from
CLIs and suite files too) that names the new one; anything else is a
``ValueError``.
"""

from __future__ import annotations

import warnings
from typing import Literal, cast

from .moves import FACE_ACTIONS, QUARTER_ACTIONS

Metric = Literal["quarter", "half"]
METRICS: tuple[Metric, ...] = ("quarter", "half")
DEFAULT_METRIC: Metric = "quarter"
DEPRECATED_METRICS: dict[str, Metric] = {"face": "half", "htm": "half", "qtm": "quarter"}
"""Old spellings :func:`parse_metric` still reads (with a FutureWarning)."""

TURN_ACTIONS: dict[Metric, tuple[str, ...]] = {"quarter": QUARTER_ACTIONS, "half": FACE_ACTIONS}
"""The face-turn actions of each metric, in env action order."""


def _unknown(value: object, key: str) -> ValueError:
    return ValueError(f"unknown {key} {value!r}; use {key}='quarter' (12 quarter turns) or {key}='half' "
                      "(18 face turns, half turns included)")


def check_metric(metric: object) -> Metric:
    """``metric`` if it is ``"quarter"`` or ``"half"``; a ``ValueError`` otherwise (no old spellings)."""
    if metric not in METRICS:
        raise _unknown(metric, "metric")
    return cast(Metric, metric)


def parse_metric(value: object, key: str = "metric", stacklevel: int = 2) -> Metric:
    """The :data:`Metric` a user's spelling names.

    ``"quarter"`` and ``"half"`` as they are; the deprecated ``"face"``,
    ``"htm"`` (half) and ``"qtm"`` (quarter) with a ``FutureWarning``
    naming ``metric=<new>``; anything else raises ``ValueError``.  ``key`` is
    the argument's name in messages; ``stacklevel`` points the warning at the
    caller (2: whoever called this function).
    """
    if value in METRICS:
        return cast(Metric, value)
    if isinstance(value, str) and value in DEPRECATED_METRICS:
        new = DEPRECATED_METRICS[value]
        warnings.warn(f"{key}={value!r} is deprecated; use metric={new!r}", FutureWarning,
                      stacklevel=stacklevel + 1)
        return new
    raise _unknown(value, key)


def metric_argument(metric: str | None, moves: str | None, stacklevel: int = 2) -> Metric:
    """The metric of an env's keyword arguments: ``metric=`` (``None``: the default, quarter), or the
    deprecated ``moves=`` (warned).

    ``moves`` took ``"quarter"`` or ``"face"``; it still does (any metric
    spelling, in fact), with a ``FutureWarning`` naming ``metric=``.
    Giving both with different values is a ``ValueError``.
    """
    if moves is None:
        return parse_metric(DEFAULT_METRIC if metric is None else metric, stacklevel=stacklevel + 1)
    with warnings.catch_warnings():  # one warning, about moves= itself
        warnings.simplefilter("ignore", FutureWarning)
        chosen = parse_metric(moves, key="moves")
    warnings.warn(f"moves={moves!r} is deprecated; use metric={chosen!r}", FutureWarning,
                  stacklevel=stacklevel + 1)
    if metric is not None and parse_metric(metric, stacklevel=stacklevel + 1) != chosen:
        raise ValueError(f"moves={moves!r} (deprecated) and metric={metric!r} disagree; give metric= only")
    return chosen


def turn_actions(metric: str) -> tuple[str, ...]:
    """The face-turn action names of ``metric`` (12 quarter turns, or 18 face turns), in env order."""
    return TURN_ACTIONS[check_metric(metric)]


def metric_length(solution: str, metric: Metric) -> int:
    """Moves in a face-turn solution (``"R U2 F'"``) counted in ``metric``: a half turn is two quarter turns."""
    turns = solution.split()
    return len(turns) + (sum(t.endswith("2") for t in turns) if metric == "quarter" else 0)
