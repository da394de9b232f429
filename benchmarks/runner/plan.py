"""The episode planner: a suite expanded into keyed episodes, in a stable order.

Every episode has a key built from what identifies it in the grid,
``<tier>/d<depth>/i<instance>/<reward>/<setting>`` (e.g.
``face/d8/i03/none/ideal``).  The key is the result store's unique key, so a
resumed run recognises finished episodes whatever order they ran in.
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass, field
from typing import Any

from .instances import instance_refs
from .suites import Suite


@dataclass(frozen=True)
class EpisodeSpec:
    """One episode of a run: the grid cell, the instance and the seeds."""

    key: str
    tier: str
    depth: int
    instance: int
    reward: str
    setting: str
    horizon: str
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
    """The episode's move budget (the suite's); ``None`` in plans stored before budgets: the default applies."""
    max_rotations: int | None = None
    """The episode's view-rotation budget on the partial tiers (the suite's)."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def episode_key(tier: str, depth: int, instance: int, reward: str, setting: str) -> str:
    """The stable key of a grid cell's episode."""
    return f"{tier}/d{depth}/i{instance:02d}/{reward}/{setting}"


def agent_seed(suite_seed: int, key: str) -> int:
    """A reproducible seed for the agent of one episode (independent of scheduling order)."""
    return int.from_bytes(hashlib.sha256(f"agent/{suite_seed}/{key}".encode()).digest()[:4], "big") & 0x7FFFFFFF


def plan_episodes(suite: Suite, source: str) -> list[EpisodeSpec]:
    """All episodes of ``suite``; depth-major so a partial run covers the easy depths first."""
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
                            max_moves=suite.max_moves, max_rotations=suite.max_rotations,
                        ))
    return plan
