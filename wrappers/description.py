"""What an env is, read off its own wrapper stack: tier, observation form, reward, metric, step limit.

An episode's record and the tools an agent gets must follow from the env the
agent really faces, however it was built (``gym.make`` with or without an id's
module prefix, :func:`~cubebench.make_cube_env`, hand-wrapped :class:`CubeEnv`,
extra Gymnasium wrappers on top).  Nothing is guessed: a stack that does not
say its tier, or whose observation was changed after the tier made it, raises
:class:`EnvDescriptionError`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import gymnasium as gym

from cubebench.envs.cube_env import CubeEnv

from .observations import FaceViewObservation, NetObservation, SymbolicObservation, VertexViewObservation
from .rewards import PotentialReward

TIER_WRAPPERS = (SymbolicObservation, NetObservation, FaceViewObservation, VertexViewObservation)
"""The observation wrappers that make a tier; each names its tier in ``.tier``."""


class EnvDescriptionError(ValueError):
    """The env does not say what it is (no tier wrapper, not a CubeEnv, an observation changed on top)."""


@dataclass(frozen=True)
class EnvDescription:
    """The facts of an env that decide an episode's tools and record."""

    tier: str
    obs_format: str
    reward: str
    metric: str
    max_steps: int | None
    view_actions: bool

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def describe_env(env: gym.Env) -> EnvDescription:
    """The :class:`EnvDescription` of ``env``; raises :class:`EnvDescriptionError` if it cannot say."""
    tier_wrapper: Any = None
    reward = "none"
    layer: Any = env
    while isinstance(layer, gym.Wrapper):
        if isinstance(layer, TIER_WRAPPERS):
            tier_wrapper = tier_wrapper or layer
        elif isinstance(layer, gym.ObservationWrapper) and tier_wrapper is None:
            raise EnvDescriptionError(
                f"{type(layer).__name__} changes the observation on top of the tier's wrapper, so the tier no "
                "longer says what the agent sees; put observation wrappers inside the tier wrapper or drop them")
        if isinstance(layer, PotentialReward) and reward == "none":
            reward = layer.name
        layer = layer.env
    if not isinstance(layer, CubeEnv):
        raise EnvDescriptionError(f"not a CubeBench env: the innermost env is {type(layer).__name__}, not CubeEnv")
    if tier_wrapper is None:
        raise EnvDescriptionError(
            "the env has no tier: wrap the CubeEnv in SymbolicObservation, NetObservation, FaceViewObservation "
            "or VertexViewObservation, or build it with gym.make('CubeBench-<Tier>-v0') or make_cube_env(tier)")
    return EnvDescription(tier=tier_wrapper.tier, obs_format=tier_wrapper.form, reward=reward, metric=layer.metric,
                          max_steps=layer.max_steps, view_actions=layer.view_actions)
