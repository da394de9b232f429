"""The training-depth curriculum: which scramble depths the sub-envs start from.

Depths run from 1 to a *frontier* ``D`` that moves up when the policy solves
enough of its frontier episodes while training.  Half of the sub-envs start
at the frontier and the rest uniformly below it, so earlier depths are not
forgotten.  The env draws the start states (random scrambles, or the
certified generator when one is given to the env).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np


def set_horizon(env: Any, budget: int | None, horizon: int, frontier: int) -> None:
    """Training episode limit ``min(budget, frontier + horizon)`` (``horizon=0``: the full budget).

    Wandering far from a shallow start teaches little and costs most of the
    samples; a limit that grows with the frontier keeps rollouts informative.
    Evaluation always uses the full 20-move budget.
    """
    if horizon > 0:
        env.max_steps = frontier + horizon if budget is None else min(budget, frontier + horizon)


@dataclass
class DepthCurriculum:
    """Frontier curriculum over depths ``1..max_depth``.

    ``promote_at``: training success rate at the frontier that moves it up;
    ``min_episodes``: frontier episodes needed before judging it.
    """

    max_depth: int = 10
    frontier: int = 1
    promote_at: float = 0.9
    min_episodes: int = 500
    frontier_share: float = 0.5
    _done: int = 0
    _solved: int = 0

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """Start depths for ``n`` sub-envs."""
        below = rng.integers(1, self.frontier + 1, size=n)
        at_frontier = rng.random(n) < self.frontier_share
        return np.where(at_frontier, self.frontier, below).astype(np.int64)

    def record(self, depths: np.ndarray, solved: np.ndarray) -> None:
        """Count finished episodes (their start depth and whether they were solved)."""
        here = np.asarray(depths) == self.frontier
        self._done += int(here.sum())
        self._solved += int(np.asarray(solved)[here].sum())

    @property
    def frontier_success(self) -> float:
        return self._solved / self._done if self._done else 0.0

    def update(self) -> bool:
        """Judge the frontier once ``min_episodes`` have finished there; True when it moved up.

        Each judgement starts a fresh window, so the rate reflects the current policy.
        """
        if self._done < self.min_episodes or self.frontier >= self.max_depth:
            return False
        promoted = self.frontier_success >= self.promote_at
        self.frontier += int(promoted)
        self._done = self._solved = 0
        return promoted
