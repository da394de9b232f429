"""The rubric: the episode's sparse reward, optional dense shaping, and the episode's counts as metrics.

Every value is read off the episode record that our own loop wrote (:class:`~cubebench.agents.records.EpisodeRecord`,
kept in the rollout state under :data:`RECORD_KEY`), so the scores are exactly a ``cubebench run`` episode's:

- ``solved`` (weight 1): 1.0 when the cube was solved within the step and move budgets, else 0.0;
- ``shaping`` (weight ``shaping_weight``): the episode's return under the env's reward, i.e. the sum of the
  reward wrapper's ``R_t = phi(s_{t+1}) - phi(s_t)`` (``sticker``, ``face`` or ``heuristic``,
  :mod:`cubebench.wrappers.rewards`) over every move made; a metric only (weight 0) under the sparse reward;
- metrics (weight 0): ``moves``, ``rotations``, ``steps``, ``parse_errors``, ``errors``.

A rollout that ended without a record (it failed before the episode started) scores 0 everywhere.
"""

from __future__ import annotations

from typing import Any

import verifiers as vf

from cubebench.agents.records import EpisodeRecord

__all__ = ["RECORD_KEY", "CubeBenchRubric", "record_of"]

RECORD_KEY = "cubebench_record"
"""Where the rollout state keeps the episode record (``EpisodeRecord.to_dict()``); pass it in
``state_columns`` to get it in the outputs."""


def record_of(state: Any) -> EpisodeRecord | None:
    """The episode record of a rollout state, or ``None`` when the episode never ran."""
    data = state.get(RECORD_KEY) if hasattr(state, "get") else None
    return EpisodeRecord.from_dict(data) if data is not None else None


def _figure(state: Any, field: str) -> float:
    """One figure of the rollout's episode record, 0.0 when the episode never ran."""
    record = record_of(state)
    return float(getattr(record, field)) if record is not None else 0.0


class CubeBenchRubric(vf.Rubric):
    """Sparse success (weight 1) plus ``shaping_weight`` times the dense return, and the episode's counts."""

    def __init__(self, shaping_weight: float = 0.0, parser: vf.Parser | None = None) -> None:
        if not isinstance(shaping_weight, (int, float)) or isinstance(shaping_weight, bool) or shaping_weight < 0:
            raise ValueError(f"shaping_weight must be a number >= 0, got {shaping_weight!r}")
        super().__init__(funcs=[self.solved], weights=[1.0], parser=parser)
        self.shaping_weight = float(shaping_weight)
        if self.shaping_weight > 0:
            self.add_reward_func(self.shaping, weight=self.shaping_weight)
        else:
            self.add_metric(self.shaping)
        for metric in (self.moves, self.rotations, self.steps, self.parse_errors, self.errors):
            self.add_metric(metric)

    async def solved(self, state: vf.State) -> float:
        """1.0 when the episode solved the cube, else 0.0."""
        record = record_of(state)
        return float(record is not None and record.solved)

    async def shaping(self, state: vf.State) -> float:
        """The episode's return under the env's reward (dense under ``sticker``/``face``/``heuristic``)."""
        return _figure(state, "total_reward")

    async def moves(self, state: vf.State) -> float:
        """Face turns made (in the env's metric), solver moves included."""
        return _figure(state, "n_moves")

    async def rotations(self, state: vf.State) -> float:
        """Whole-cube rotations made (view actions of the partial tiers)."""
        return _figure(state, "n_rotations")

    async def steps(self, state: vf.State) -> float:
        """Interaction steps played (model turns)."""
        return _figure(state, "n_steps")

    async def parse_errors(self, state: vf.State) -> float:
        """Replies without a readable action (no ``Action:`` line, unknown tool, bad arguments)."""
        return _figure(state, "parse_errors")

    async def errors(self, state: vf.State) -> float:
        """Steps that failed outside the model's reply (model call or infrastructure)."""
        return _figure(state, "errors")
