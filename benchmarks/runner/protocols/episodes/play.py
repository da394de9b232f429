"""Playing one planned episode: :func:`play_episode` builds the env of its cell and a fresh agent and runs
the episode (what a backend's worker does with an :class:`~.plan.EpisodeSpec`).
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
from cubebench.agents.episode import run_episode
from cubebench.agents.records import EpisodeRecord
from cubebench.tiers import tier_spec
from cubebench.wrappers.description import describe_env
from cubebench.wrappers.tier_envs import tier_reads

from ...execute import PlaySettings, step_taken
from ...specs import AgentFactory
from .plan import EpisodeSpec


def make_env(ep: EpisodeSpec, settings: PlaySettings, symbolic_format: str = "text") -> gym.Env:
    """The env of an episode's cell: no action limit (interaction steps bound the episode), the suite's
    move and rotation budgets (a plan from before budgets gets run_episode's defaults), none under ``paper``."""
    spec = tier_spec(ep.tier)
    obs_format = settings.obs_format if spec.pictured else symbolic_format
    capped = settings.capped
    kwargs: dict[str, Any] = {"depth": ep.depth, "reward": ep.reward, "metric": ep.metric,
                              "max_steps": None, "obs_format": obs_format, "max_moves": ep.max_moves if capped else None,
                              "max_rotations": ep.max_rotations if capped and spec.partial else None}
    if "renderer" in tier_reads(ep.tier):  # --renderer is for every tier of a run, and only Vertex reads it
        kwargs["renderer"] = settings.renderer
    return gym.make(spec.env_id, **kwargs)


def play_episode(ep: EpisodeSpec, factory: AgentFactory, settings: PlaySettings) -> EpisodeRecord:
    """Play ``ep`` with a fresh agent from ``factory``; the record's config names the cell and seeds.

    The env of the cell is described once, here, and run_episode plays under that description.  Step distances
    are the exact solver's within ``settings.distance_budget_s`` (``--distance-budget``, which never starts a
    table build: :func:`~cubebench.runner.run.resolve_distance_budget`), or none when it is off."""
    env = make_env(ep, settings, factory.symbolic_obs_format)
    description = describe_env(env)
    agent = factory.new(seed=ep.agent_seed)
    try:
        record = run_episode(
            agent, env, tool_setting=ep.setting, seed=ep.env_seed, reset_options=ep.reset_options,
            max_steps=ep.max_steps, description=description, store_images=settings.store_images,
            distances="none" if settings.distance_budget_s is None else "exact",
            distance_budget_s=settings.distance_budget_s, capped=settings.capped, on_step=step_taken,
            config={"key": ep.key, "depth": ep.depth, "instance": ep.instance, "reward": ep.reward,
                    "metric": ep.metric, "instance_source": ep.source, "agent_seed": ep.agent_seed,
                    "certified_distance": ep.certified_distance, "obs_format": description.obs_format},
        )
        if record.distance_start is None and ep.certified_distance is not None:
            record.distance_start = ep.certified_distance  # reset by state: the env does not know it
        return record
    finally:
        close = getattr(agent, "close", None)
        if callable(close):
            close()
        env.close()

