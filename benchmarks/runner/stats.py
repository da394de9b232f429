"""Pass rates and their Wilson score intervals.

A pass rate is ``solved / episodes`` over the finished episodes of a cell
(``error`` episodes count as not solved: the agent did not solve the cube).
The interval is Wilson's score interval, which stays inside [0, 1] and is
sensible at 0 and n successes, unlike the normal approximation; for n = 0
there is no estimate.
"""

from __future__ import annotations

from typing import Any

from cubebench.tasks.metrics import Z95, Proportion, wilson_interval

Rate = Proportion
"""A pass rate: ``solved`` of ``episodes`` with its Wilson interval (the same type as the question tests')."""


def as_float(value: Any) -> float | None:
    """A metric as a plain number (a rate's value), or ``None`` (not a number)."""
    if isinstance(value, Proportion):
        return value.value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return None


__all__ = ["Rate", "Z95", "as_float", "wilson_interval"]
