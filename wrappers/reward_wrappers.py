"""Reward wrappers: CubeBench's sparse reward and its dense potential rewards.

The reward names are the registry's (:mod:`cubebench.engine.rewards`):
``none`` (alias ``sparse``: no wrapper, the core env's 1.0 on solving),
``sticker``, ``face``, ``heuristic`` (the two-phase solver's estimate) and
``oracle`` (the exact distance; RL research only).  The ``sticker`` and ``face``
potentials are the registry's own :func:`~cubebench.engine.rewards.potential`,
the code the vector env's step kernel runs.

A dense reward is a potential difference ``R_t = phi(s_{t+1}) - phi(s_t)``
(plus the sparse 1.0 on solving is *not* added: the potentials already peak
at the solved state), so the rewards of an episode telescope to
``phi(end) - phi(start)``.  View rotations never change ``phi``: every
potential here reads the cube relative to its own centres.  Each wrapper
reports ``phi`` in ``info["phi"]`` unless a partial tier beneath it hides the
state (:attr:`~cubebench.wrappers.observations.NetObservation.hides_state`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, cast

import gymnasium as gym
import numpy as np

from cubebench.engine.metric import metric_length, parse_metric
from cubebench.engine.rewards import REWARD_SPECS, parse_reward, potential
from cubebench.engine.state import canonical
from cubebench.envs.cube_env import CubeEnv
from cubebench.solver.twophase import solve_twophase


class PotentialReward(gym.Wrapper, ABC):
    """Replace the reward by ``phi(next) - phi(current)`` for the potential ``phi``."""

    name = "potential"

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        self._last_phi = 0.0
        self._report_phi = not _hides_state(env)

    @abstractmethod
    def phi(self, state: np.ndarray) -> float:
        """The potential of an engine state (held frame)."""

    def _potential(self, info: dict[str, Any]) -> float:
        value = float(self.phi(cast(CubeEnv, self.env.unwrapped).state))
        if self._report_phi:
            info["phi"] = value
        info["reward_kind"] = self.name
        return value

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        obs, info = self.env.reset(**kwargs)
        self._last_phi = self._potential(info)
        return obs, info

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        obs, _, terminated, truncated, info = self.env.step(action)
        value = self._potential(info)
        reward, self._last_phi = value - self._last_phi, value
        return obs, float(reward), terminated, truncated, info


def _hides_state(env: gym.Env) -> bool:
    """Whether a wrapper beneath strips ``info`` of the state (a partial tier without ``debug``)."""
    try:
        return bool(env.get_wrapper_attr("hides_state"))
    except AttributeError:
        return False


class KernelPotentialReward(PotentialReward):
    """A potential the kernels compute (the registry's ``kind`` of :attr:`name`), so the vector env batches it."""

    def phi(self, state: np.ndarray) -> float:
        return float(potential(state, REWARD_SPECS[self.name].kind))


class StickerReward(KernelPotentialReward):
    """phi = stickers matching the centre of the face they are on (6..54)."""

    name = "sticker"


class FaceReward(KernelPotentialReward):
    """phi = faces completed (0..6)."""

    name = "face"


class HeuristicReward(PotentialReward):
    """phi = -(length of the two-phase solver's solution), in the env's metric.

    CubeBench's heuristic reward: "distance estimation via classic solving
    algorithms".  Kociemba's two-phase algorithm answers in milliseconds at
    every depth; its solution is short but not optimal (on the certified
    quarter-turn sets it averages 11 quarter turns at depth 8 and 30 at
    depth 20), so the estimate is noisy and a move that lowers it need not
    lower the true distance.  The exact distance is :class:`OracleReward`.
    """

    name = "heuristic"

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        self.metric = cast(CubeEnv, env.unwrapped).metric

    def phi(self, state: np.ndarray) -> float:
        # the cube in reference orientation: the solver's answer depends on how the cube is held, and
        # a view rotation must pay nothing
        return -float(metric_length(solve_twophase(canonical(state)), self.metric))


class OracleReward(PotentialReward):
    """phi = -(exact optimal distance): exact where the optimal solver answers in
    ``time_budget`` seconds, otherwise minus its admissible lower bound.

    For RL research only.  A model that may probe rewards (try a move, read
    the reward, undo) reads an optimal plan straight off this potential, so it
    measures nothing about the model: the runner refuses it.
    ``info["phi_source"]`` says which (``"exact"`` or ``"lower_bound"``),
    wherever ``phi`` itself is reported.
    """

    name = "oracle"

    def __init__(self, env: gym.Env, time_budget: float = 0.5, metric: str | None = None) -> None:
        super().__init__(env)
        self.time_budget = time_budget
        self.metric = parse_metric(metric) if metric else cast(CubeEnv, env.unwrapped).metric
        self._source = "exact"

    def phi(self, state: np.ndarray) -> float:
        from cubebench.solver.optimal import SolverTimeout, lower_bound, optimal_distance

        try:
            dist = optimal_distance(state, self.metric, time_limit=self.time_budget)
            self._source = "exact"
        except SolverTimeout:
            dist = lower_bound(state, self.metric)
            self._source = "lower_bound"
        return -float(dist)

    def _potential(self, info: dict[str, Any]) -> float:
        value = super()._potential(info)
        if self._report_phi:
            info["phi_source"] = self._source
        return value


REWARD_WRAPPERS: dict[str, type[PotentialReward]] = {cls.name: cls for cls in (StickerReward, FaceReward, HeuristicReward, OracleReward)}
"""The wrapper of each dense reward of the registry (:data:`~cubebench.engine.rewards.DENSE_REWARDS`)."""


def make_reward_wrapper(env: gym.Env, reward: str = "none", **kwargs: Any) -> gym.Env:
    """Wrap ``env`` for the reward named ``none|sticker|face|heuristic|oracle`` (``sparse`` = ``none``: no wrapper)."""
    name = parse_reward(reward)
    if not REWARD_SPECS[name].dense:
        return env
    return REWARD_WRAPPERS[name](env, **kwargs)
