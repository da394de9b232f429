"""Pass rates and their Wilson score intervals.

A pass rate is ``solved / episodes`` over the finished episodes of a cell
(``error`` episodes count as not solved: the agent did not solve the cube).
The interval is Wilson's score interval, which stays inside [0, 1] and is
sensible at 0 and n successes, unlike the normal approximation; for n = 0
there is no estimate.
"""

from __future__ import annotations

from dataclasses import dataclass

from cubebench.tasks.metrics import Z95, wilson_interval


@dataclass(frozen=True)
class Rate:
    """``k`` successes out of ``n`` trials with a Wilson interval at ``z``."""

    k: int
    n: int
    z: float = Z95

    @property
    def value(self) -> float | None:
        """The pass rate k/n, or ``None`` when there are no trials."""
        return self.k / self.n if self.n else None

    @property
    def interval(self) -> tuple[float, float] | None:
        """The Wilson score interval, or ``None`` when there are no trials."""
        return wilson_interval(self.k, self.n, self.z) if self.n else None

    def __add__(self, other: "Rate") -> "Rate":
        return Rate(self.k + other.k, self.n + other.n, self.z)

    def format(self, with_interval: bool = True) -> str:
        """``0.75 [0.53, 0.89]`` (or ``-`` for an empty cell)."""
        if not self.n:
            return "-"
        if not with_interval:
            return f"{self.value:.2f}"
        lo, hi = self.interval  # type: ignore[misc]
        return f"{self.value:.2f} [{lo:.2f}, {hi:.2f}]"
