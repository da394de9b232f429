"""PPO (clipped surrogate, GAE) on the native vector env, compact and readable.

Rollouts run ``n_steps`` steps of all sub-envs with ``SAME_STEP`` autoreset
(a finished sub-env starts its next episode at once, so every step is
useful); truncated episodes bootstrap from the value of their final
observation, solved ones from zero.  The curriculum's depths are given to
the env before each rollout and apply to the episodes that start in it.
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
class PPOConfig:
    """Hyper-parameters (defaults: what trained the shipped checkpoint)."""

    n_steps: int = 16
    epochs: int = 4
    minibatch: int = 4096
    lr: float = 1e-3
    gamma: float = 0.95
    gae_lambda: float = 0.95
    clip: float = 0.2
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5


class PPO(PolicyGradient):
    """One call of :meth:`update` = one rollout plus ``epochs`` passes of minibatch updates."""

    autoreset_mode = AutoresetMode.SAME_STEP
    name = "PPO"

    def __init__(self, policy: MLPPolicy, env: CubeVectorEnv, curriculum: DepthCurriculum,
                 cfg: PPOConfig, seed: int = 0, horizon: int = 0) -> None:
        super().__init__(policy, env, curriculum, cfg, seed, horizon)
        depths = curriculum.sample(env.num_envs, self.rng)
        self.obs, _ = env.reset(seed=seed, options={"depth": depths})
        self.prev = np.full(env.num_envs, -1, dtype=np.int64)

    @torch.no_grad()
    def _policy_step(self, obs: np.ndarray, prev: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        logits, value = self.policy(torch.as_tensor(obs), torch.as_tensor(prev))
        action = torch.multinomial(torch.softmax(logits, -1), 1, generator=self.gen).squeeze(-1)
        logp = torch.log_softmax(logits, -1).gather(1, action[:, None]).squeeze(-1)
        return action.numpy(), logp.numpy(), value.numpy()

    @torch.no_grad()
    def _value(self, obs: np.ndarray, prev: np.ndarray) -> np.ndarray:
        return self.policy(torch.as_tensor(obs), torch.as_tensor(prev))[1].numpy()

    def collect(self) -> tuple[dict[str, np.ndarray], dict[str, float]]:
        """One rollout: tensors for learning and episode statistics."""
        n, t_max = self.env.num_envs, self.cfg.n_steps
        set_horizon(self.env, self.budget, self.horizon, self.curriculum.frontier)
        self.env.set_depths(self.curriculum.sample(n, self.rng))
        buf: dict[str, list[np.ndarray]] = {k: [] for k in ("obs", "prev", "act", "logp", "val", "rew", "done", "boot")}
        ends, wins, lengths = 0, 0, []
        for _ in range(t_max):
            act, logp, val = self._policy_step(self.obs, self.prev)
            obs, rew, term, trunc, info = self.env.step(act)
            done = term | trunc
            boot = np.zeros(n)
            if trunc.any():  # time limit: bootstrap from the value of the last observation
                idx = np.flatnonzero(trunc)
                final = np.stack(info["final_obs"][idx])
                boot[idx] = self._value(final, act[idx])
            for k, v in zip(buf, (self.obs, self.prev, act, logp, val, rew, done, boot)):
                buf[k].append(v)
            if done.any():
                fin = info["final_info"]
                self.curriculum.record(fin["depth"][done], term[done])
                ends, wins = ends + int(done.sum()), wins + int(term.sum())
                lengths.extend(fin["steps"][term].tolist())
            self.obs, self.prev = obs, np.where(done, -1, act)
        self.env_steps += n * t_max
        data = {k: np.stack(v) for k, v in buf.items()}
        data["last_val"] = self._value(self.obs, self.prev)
        stats = {"train/episodes": ends, "train/success": wins / max(ends, 1),
                 "train/solve_len": float(np.mean(lengths)) if lengths else float("nan")}
        return data, stats

    def advantages(self, data: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """GAE(lambda) advantages and returns, cut at episode ends."""
        g, lam = self.cfg.gamma, self.cfg.gae_lambda
        adv = np.zeros_like(data["rew"])
        running = np.zeros(self.env.num_envs)
        next_val = data["last_val"]
        for t in reversed(range(self.cfg.n_steps)):
            done = data["done"][t]
            target = np.where(done, data["boot"][t], next_val)
            delta = data["rew"][t] + g * target - data["val"][t]
            running = delta + g * lam * np.where(done, 0.0, running)
            adv[t] = running
            next_val = data["val"][t]
        return adv, adv + data["val"]

    def learn(self, data: dict[str, np.ndarray]) -> dict[str, float]:
        """``epochs`` passes of clipped-surrogate minibatch updates."""
        adv, ret = self.advantages(data)
        flat = lambda x: torch.as_tensor(x.reshape(-1, *x.shape[2:]))  # noqa: E731
        obs, prev, act, old_logp = flat(data["obs"]), flat(data["prev"]), flat(data["act"]), flat(data["logp"])
        adv_t, ret_t = flat(adv).float(), flat(ret).float()
        total = len(act)
        logs = {"loss/policy": 0.0, "loss/value": 0.0, "loss/entropy": 0.0}
        count = 0
        for _ in range(self.cfg.epochs):
            perm = torch.randperm(total, generator=self.gen)
            for start in range(0, total, self.cfg.minibatch):
                i = perm[start:start + self.cfg.minibatch]
                parts = self._loss(obs[i], prev[i], act[i], old_logp[i].float(), adv_t[i], ret_t[i])
                self.gradient_step(*parts)
                for key, part in zip(logs, parts):
                    logs[key] += float(part.detach())
                count += 1
        return {k: v / count for k, v in logs.items()}

    def _loss(self, obs, prev, act, old_logp, adv, ret) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        logits, value = self.policy(obs, prev)
        logp_all = torch.log_softmax(logits, -1)
        logp = logp_all.gather(1, act[:, None]).squeeze(-1)
        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
        ratio = torch.exp(logp - old_logp)
        clipped = torch.clamp(ratio, 1 - self.cfg.clip, 1 + self.cfg.clip)
        policy_loss = -torch.min(ratio * adv, clipped * adv).mean()
        value_loss = 0.5 * (value - ret).pow(2).mean()
        return policy_loss, value_loss, entropy(logp_all)
