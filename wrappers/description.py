"""What an env is, read off its own wrapper stack: tier, observation form, reward, metric, step limit, budgets.

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

from .observations import TIER_OBSERVATIONS
from .reward_wrappers import PotentialReward


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
    """The fewest actions after which the env truncates (its own limit or a ``TimeLimit``'s); ``None``: none."""
    view_actions: bool
    max_moves: int | None = None
    """The episode's move budget (face turns); ``None``: unbounded."""
    max_rotations: int | None = None
    """The episode's view-rotation budget; ``None``: unbounded (or no view actions)."""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def describe_env(env: gym.Env) -> EnvDescription:
    """The :class:`EnvDescription` of ``env``; raises :class:`EnvDescriptionError` if it cannot say."""
    tier_wrapper: Any = None
    reward = "none"
    max_steps: list[int] = []
    layer: Any = env
    while isinstance(layer, gym.Wrapper):
        if isinstance(layer, TIER_OBSERVATIONS):
            tier_wrapper = tier_wrapper or layer
        if isinstance(layer, PotentialReward) and reward == "none":
            reward = layer.name
        if isinstance(layer, gym.wrappers.TimeLimit):
            max_steps.append(layer._max_episode_steps)
        layer = layer.env
    if not isinstance(layer, CubeEnv):
        raise EnvDescriptionError(f"not a CubeBench env: the innermost env is {type(layer).__name__}, not CubeEnv")
    if tier_wrapper is None:
        raise EnvDescriptionError(
            "the env has no tier: wrap the CubeEnv in SymbolicObservation, NetObservation, FaceViewObservation, "
            "VertexViewObservation or another TierObservation, or build it with gym.make('CubeBench-<Tier>-v0') or "
            "make_cube_env(tier)")
    if env.observation_space != tier_wrapper.observation_space:
        raise EnvDescriptionError(
            f"a wrapper on top of {type(tier_wrapper).__name__} changes the observation ({env.observation_space} "
            f"instead of {tier_wrapper.observation_space}), so the tier no longer says what the agent sees; "
            "choose the form with the env's own options (obs_format=, image_size=, letters=) instead")
    if layer.max_steps is not None:
        max_steps.append(layer.max_steps)
    return EnvDescription(tier=tier_wrapper.tier, obs_format=tier_wrapper.form, reward=reward, metric=layer.metric,
                          max_steps=min(max_steps, default=None), view_actions=layer.view_actions,
                          max_moves=layer.max_moves, max_rotations=layer.max_rotations if layer.view_actions else None)
