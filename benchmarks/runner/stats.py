"""Pass rates and their Wilson score intervals.

A pass rate is ``solved / episodes`` over the finished episodes of a cell
(``error`` episodes count as not solved: the agent did not solve the cube).
The interval is Wilson's score interval, which stays inside [0, 1] and is
sensible at 0 and n successes, unlike the normal approximation; for n = 0
there is no estimate.
"""

from __future__ import annotations

from cubebench.tasks.metrics import Z95, Proportion, wilson_interval

Rate = Proportion
"""A pass rate: ``solved`` of ``episodes`` with its Wilson interval (the same type as the question tests')."""

__all__ = ["Rate", "Z95", "wilson_interval"]
