"""What PPO and REINFORCE share: their setup, the entropy, the gradient step and the update loop.

Each algorithm states the autoreset mode it needs and defines ``collect``
(play the env) and ``learn`` (turn the data into losses); one update is a
collect, a learn and a curriculum step.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

import numpy as np
import torch
from gymnasium.vector import AutoresetMode

from cubebench.envs.vector_env import CubeVectorEnv

from cubebench.agents.rl.mlp_policy import MLPPolicy
from .schedule import DepthCurriculum


def entropy(logp_all: torch.Tensor) -> torch.Tensor:
    """Mean entropy of the action distributions (masked actions, log-prob -inf, count zero)."""
    return -(logp_all.exp() * logp_all.nan_to_num(neginf=0.0)).sum(-1).mean()


class PolicyGradient(ABC):
    """Policy, vector env, curriculum, Adam and seeded generators, shared by both algorithms."""

    autoreset_mode: AutoresetMode
    name = "policy gradient"

    def __init__(self, policy: MLPPolicy, env: CubeVectorEnv, curriculum: DepthCurriculum,
                 cfg: Any, seed: int = 0, horizon: int = 0) -> None:
        if env.autoreset_mode != self.autoreset_mode:
            raise ValueError(f"{self.name} needs a CubeVectorEnv with autoreset_mode={self.autoreset_mode.name}")
        self.policy, self.env, self.curriculum, self.cfg = policy, env, curriculum, cfg
        self.opt = torch.optim.Adam(policy.parameters(), lr=cfg.lr, eps=1e-5)
        self.budget, self.horizon = env.max_steps, horizon
        self.rng = np.random.default_rng(seed)
        self.gen = torch.Generator().manual_seed(seed)
        self.env_steps = 0

    @abstractmethod
    def collect(self) -> tuple[dict[str, np.ndarray], dict[str, float]]:
        """Play the env with the current policy: the training data and the scalars to log."""

    @abstractmethod
    def learn(self, data: dict[str, np.ndarray]) -> dict[str, float]:
        """Gradient step(s) on ``data``; the loss scalars to log."""

    def gradient_step(self, policy_loss: torch.Tensor, value_loss: torch.Tensor, ent: torch.Tensor) -> None:
        """One clipped Adam step on ``policy + c_v value - c_e entropy``."""
        loss = policy_loss + self.cfg.vf_coef * value_loss - self.cfg.ent_coef * ent
        self.opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.policy.parameters(), self.cfg.max_grad_norm)
        self.opt.step()

    def update(self) -> dict[str, float]:
        """Collect, learn from it, step the curriculum; the scalars to log."""
        data, stats = self.collect()
        stats.update(self.learn(data))
        stats["curriculum/frontier"] = float(self.curriculum.frontier)
        self.curriculum.update()
        return stats
