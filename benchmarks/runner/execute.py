"""Playing one planned episode: build the env of its cell, a fresh agent, run the episode.

This is what every backend's workers call; it needs only picklable inputs
(:class:`~.plan.EpisodeSpec`, :class:`~.specs.AgentSpec`, :class:`PlaySettings`)
so it runs the same in a thread, a process or a Ray task.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import gymnasium as gym

import cubebench
from cubebench.agents.episode import run_episode
from cubebench.agents.records import EpisodeRecord
from cubebench.wrappers.description import describe_env
from cubebench.wrappers.tiers import PARTIAL_TIERS

from .plan import EpisodeSpec
from .specs import AgentFactory


@dataclass(frozen=True)
class PlaySettings:
    """Per-run settings of how episodes are played (stored in the run's config)."""

    obs_format: str = "image"
    store_images: bool = True
    distance_budget_s: float | None = None
    renderer: str = "painter"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def make_env(ep: EpisodeSpec, settings: PlaySettings, symbolic_format: str = "text") -> gym.Env:
    """The env of an episode's cell: no action limit (interaction steps bound the episode), the suite's
    move and rotation budgets (a plan from before budgets gets run_episode's defaults)."""
    obs_format = symbolic_format if ep.tier == "symbolic" else settings.obs_format
    kwargs: dict[str, Any] = {"depth": ep.depth, "reward": ep.reward, "metric": ep.metric,
                              "max_steps": None, "obs_format": obs_format, "max_moves": ep.max_moves,
                              "max_rotations": ep.max_rotations if ep.tier in PARTIAL_TIERS else None}
    if ep.tier == "vertex":
        kwargs["renderer"] = settings.renderer
    return gym.make(cubebench.TIERS[ep.tier], **kwargs)


def play_episode(ep: EpisodeSpec, factory: AgentFactory, settings: PlaySettings) -> EpisodeRecord:
    """Play ``ep`` with a fresh agent from ``factory``; the record's config names the cell and seeds."""
    env = make_env(ep, settings, factory.symbolic_obs_format)
    agent = factory.new(seed=ep.agent_seed)
    try:
        record = run_episode(
            agent, env, tool_setting=ep.setting, seed=ep.env_seed, reset_options=ep.reset_options,
            max_steps=ep.max_steps, tier=ep.tier, store_images=settings.store_images,
            distance_budget_s=settings.distance_budget_s,
            config={"key": ep.key, "depth": ep.depth, "instance": ep.instance, "reward": ep.reward,
                    "metric": ep.metric, "instance_source": ep.source, "agent_seed": ep.agent_seed,
                    "certified_distance": ep.certified_distance, "obs_format": describe_env(env).obs_format},
        )
        if record.distance_start is None and ep.certified_distance is not None:
            record.distance_start = ep.certified_distance  # reset by state: the env does not know it
        return record
    finally:
        close = getattr(agent, "close", None)
        if callable(close):
            close()
        env.close()
