"""The episodes protocol's plan: a suite's grid expanded into keyed episodes, depth-major.

Every episode has a key built from what identifies it in the grid,
``<tier>/d<depth>/i<instance>/<reward>/<setting>`` (e.g. ``face/d8/i03/none/ideal``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from cubebench.tiers import TIER_SPECS

from ...planning import PlannedSpec, agent_seed, check_plan_size
from ...rows import StoredRow, Word
from .instances import instance_refs
from .suite import Suite


@dataclass(frozen=True)
class EpisodeRow(StoredRow):
    """An episode's stored summary row, its columns under the episodes' words."""

    tier = Word[str]("part")
    reward = Word[str]("variant")


@dataclass(frozen=True)
class EpisodeCell:
    """Where an episode sits in its suite's grid: its key, tier, depth, instance, reward, tool setting and horizon."""

    key: str
    tier: str
    depth: int
    instance: int
    reward: str
    setting: str
    horizon: str


@dataclass(frozen=True)
class EpisodeSpec(PlannedSpec, EpisodeCell):
    """One episode of a run: the grid cell, the instance and the seeds."""

    metric: str
    max_steps: int
    env_seed: int
    agent_seed: int
    source: str
    reset_options: dict[str, Any] = field(default_factory=dict)
    """What ``env.reset(options=...)`` gets: ``{"instance": k}``, ``{"state": ...}`` or ``{"depth": d}``."""
    certified_distance: int | None = None
    """The instance's certified optimal distance (certified sources), else ``None``."""
    max_moves: int | None = None
    """The episode's move budget (the suite's at this depth); ``None`` in plans stored before budgets: the default applies."""
    max_rotations: int | None = None
    """The episode's view-rotation budget on the partial tiers (the suite's)."""

    protocol: ClassVar[str] = Suite.protocol
    stored_as: ClassVar[type[StoredRow]] = EpisodeRow

    def cell(self) -> tuple[str, int, int, str, str, str]:
        return self.tier, self.depth, self.instance, self.reward, self.setting, self.horizon

    def check_part(self) -> None:
        if self.tier not in TIER_SPECS:
            raise ValueError(f"tier {str(self.tier)[:40]!r} is not an episode tier ({', '.join(TIER_SPECS)})")


def episode_key(tier: str, depth: int, instance: int, reward: str, setting: str) -> str:
    """The stable key of a grid cell's episode."""
    return f"{tier}/d{depth}/i{instance:02d}/{reward}/{setting}"


def plan_episodes(suite: Suite, source: str) -> list[EpisodeSpec]:
    """All episodes of ``suite``; depth-major so a partial run covers the easy depths first."""
    check_plan_size(suite, "episode")
    refs = instance_refs(suite, source)
    plan = []
    for depth in suite.depths:
        for k, ref in enumerate(refs[depth]):
            for tier in suite.tiers:
                for reward in suite.rewards:
                    for setting in suite.tool_settings:
                        key = episode_key(tier, depth, k, reward, setting)
                        plan.append(EpisodeSpec(
                            key=key, tier=tier, depth=depth, instance=k, reward=reward, setting=setting,
                            horizon=suite.horizon(depth), metric=suite.metric, max_steps=suite.max_steps,
                            env_seed=ref.seed, agent_seed=agent_seed(suite.seed, key), source=source,
                            reset_options=ref.reset_options,
                            certified_distance=ref.start.distance if ref.start else (depth if source == "certified" else None),
                            max_moves=suite.move_budget(depth), max_rotations=suite.max_rotations,
                        ))
    return plan

