"""REINFORCE with a learned value baseline, on whole episodes from the native vector env.

Each update resets every sub-env (``DISABLED`` autoreset, depths from the
curriculum), plays the sampling policy until every episode has ended (solved
or out of budget), and takes one gradient step on
``-(G_t - V(s_t)) log pi(a_t|s_t) + c_v (G_t - V(s_t))^2 - c_e H``, with
Monte-Carlo returns ``G_t`` (no bootstrapping: this is plain REINFORCE).
Finished sub-envs are not fed to the policy, so short episodes cost little.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from gymnasium.vector import AutoresetMode

from cubebench.envs.vector_env import CubeVectorEnv

from .algorithm import PolicyGradient, entropy
from cubebench.agents.rl.mlp_policy import MLPPolicy
from .schedule import DepthCurriculum, set_horizon


@dataclass
class ReinforceConfig:
    """Hyper-parameters of REINFORCE with baseline."""

    lr: float = 1e-3
    gamma: float = 0.95
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5


class Reinforce(PolicyGradient):
    """One call of :meth:`update` = ``num_envs`` complete episodes and one gradient step."""

    autoreset_mode = AutoresetMode.DISABLED
    name = "REINFORCE"

    def __init__(self, policy: MLPPolicy, env: CubeVectorEnv, curriculum: DepthCurriculum,
                 cfg: ReinforceConfig, seed: int = 0, horizon: int = 0) -> None:
        if env.max_steps is None:
            raise ValueError("REINFORCE needs episodes with a step limit (max_steps)")
        super().__init__(policy, env, curriculum, cfg, seed, horizon)
        self.seed = seed

    @torch.no_grad()
    def _sample(self, obs: np.ndarray, prev: np.ndarray) -> np.ndarray:
        logits, _ = self.policy(torch.as_tensor(obs), torch.as_tensor(prev))
        return torch.multinomial(torch.softmax(logits, -1), 1, generator=self.gen).squeeze(-1).numpy()

    def collect(self) -> tuple[dict[str, np.ndarray], dict[str, float]]:
        """Play one batch of episodes; the visited (obs, prev, action, return) and statistics."""
        n = self.env.num_envs
        set_horizon(self.env, self.budget, self.horizon, self.curriculum.frontier)
        depths = self.curriculum.sample(n, self.rng)
        seed = self.seed if self.env_steps == 0 else None
        obs, _ = self.env.reset(seed=seed, options={"depth": depths})
        prev = np.full(n, -1, dtype=np.int64)
        alive, solved = np.ones(n, dtype=np.bool_), np.zeros(n, dtype=np.bool_)
        steps: list[tuple[np.ndarray, ...]] = []
        while alive.any():
            idx = np.flatnonzero(alive)
            act = np.zeros(n, dtype=np.int64)
            act[idx] = self._sample(obs[idx], prev[idx])
            nxt, rew, term, trunc, _ = self.env.step(act)
            steps.append((idx, obs[idx], prev[idx], act[idx], rew[idx]))
            solved[idx] |= term[idx]
            alive[idx] &= ~(term[idx] | trunc[idx])
            obs, prev = nxt, act
            self.env_steps += idx.size
        self.curriculum.record(depths, solved)
        data = self._returns(steps, n)
        used = np.bincount(np.concatenate([s[0] for s in steps]), minlength=n)
        stats = {"train/episodes": n, "train/success": float(solved.mean()),
                 "train/solve_len": float(used[solved].mean()) if solved.any() else float("nan")}
        return data, stats

    def _returns(self, steps: list[tuple[np.ndarray, ...]], n: int) -> dict[str, np.ndarray]:
        """Discounted returns G_t of every visited step, computed backwards per sub-env."""
        running = np.zeros(n)
        returns = []
        for idx, _, _, _, rew in reversed(steps):
            running[idx] = rew + self.cfg.gamma * running[idx]
            returns.append(running[idx].copy())
        returns.reverse()
        return {"obs": np.concatenate([s[1] for s in steps]), "prev": np.concatenate([s[2] for s in steps]),
                "act": np.concatenate([s[3] for s in steps]), "ret": np.concatenate(returns)}

    def learn(self, data: dict[str, np.ndarray]) -> dict[str, float]:
        """One gradient step on the whole batch."""
        logits, value = self.policy(torch.as_tensor(data["obs"]), torch.as_tensor(data["prev"]))
        logp_all = torch.log_softmax(logits, -1)
        logp = logp_all.gather(1, torch.as_tensor(data["act"])[:, None]).squeeze(-1)
        ret = torch.as_tensor(data["ret"]).float()
        adv = ret - value.detach()
        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
        policy_loss = -(adv * logp).mean()
        value_loss = 0.5 * (value - ret).pow(2).mean()
        ent = entropy(logp_all)
        self.gradient_step(policy_loss, value_loss, ent)
        return {"loss/policy": float(policy_loss.detach()), "loss/value": float(value_loss.detach()),
                "loss/entropy": float(ent.detach())}
