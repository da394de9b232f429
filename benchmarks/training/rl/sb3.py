"""Stable-Baselines3 on the native vector env: ``python -m cubebench.training.rl.sb3 --algo ppo ...``.

SB3 has its own ``VecEnv`` interface (reset on the same step, the last
observation in ``info["terminal_observation"]``, ``TimeLimit.truncated``);
:class:`SB3VecEnv` adapts :class:`~cubebench.envs.vector_env.CubeVectorEnv`
(``SAME_STEP`` autoreset) to it, so SB3's PPO, A2C and DQN train on the
Numba-stepped batch.  :class:`CurriculumCallback` drives the same depth
curriculum as ``cubebench.training.rl.train`` (depths before each rollout, promotion on
the training success rate).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import torch
from gymnasium.vector import AutoresetMode
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.vec_env import VecEnv

from cubebench.engine.rewards import NATIVE_REWARDS, unalias_reward
from cubebench.envs.vector_env import CubeVectorEnv

from cubebench.agents.rl.evaluate import eval_instances, rollouts
from .schedule import DepthCurriculum, set_horizon
from .train import EVAL_DEPTHS, ScalarLog

ALGOS = ("ppo", "a2c", "dqn")


class SB3VecEnv(VecEnv):
    """SB3 ``VecEnv`` over a :class:`CubeVectorEnv` in ``SAME_STEP`` autoreset mode."""

    def __init__(self, env: CubeVectorEnv) -> None:
        if env.autoreset_mode != AutoresetMode.SAME_STEP:
            raise ValueError("SB3VecEnv needs CubeVectorEnv(autoreset_mode=AutoresetMode.SAME_STEP)")
        self.venv = env
        super().__init__(env.num_envs, env.single_observation_space, env.single_action_space)
        self._actions: np.ndarray | None = None

    def reset(self) -> np.ndarray:
        seeds = None if all(s is None for s in self._seeds) else [s for s in self._seeds]
        obs, _ = self.venv.reset(seed=seeds, options=self._options[0] or None)
        self._reset_seeds()
        self._reset_options()
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions, dtype=np.int64).reshape(self.num_envs)

    def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        if self._actions is None:
            raise RuntimeError("step_wait() needs the actions from step_async()")
        obs, rew, term, trunc, info = self.venv.step(self._actions)
        done = term | trunc
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        for i in np.flatnonzero(done):
            fin = info["final_info"]
            infos[i] = {"terminal_observation": info["final_obs"][i], "TimeLimit.truncated": bool(trunc[i]),
                        "is_success": bool(term[i]), "depth": int(fin["depth"][i]),
                        "episode_steps": int(fin["steps"][i])}
        return obs, rew.astype(np.float32), done, infos

    def close(self) -> None:
        self.venv.close()

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        return [getattr(self.venv, attr_name) for _ in self._get_indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        setattr(self.venv, attr_name, value)

    def env_method(self, method_name: str, *args: Any, indices: Any = None, **kwargs: Any) -> list[Any]:
        return [getattr(self.venv, method_name)(*args, **kwargs) for _ in self._get_indices(indices)]

    def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
        return [False for _ in self._get_indices(indices)]

    def _get_indices(self, indices: Any) -> Sequence[int]:
        if indices is None:
            return range(self.num_envs)
        return [indices] if isinstance(indices, int) else list(indices)


class CurriculumCallback(BaseCallback):
    """Sets curriculum depths before each rollout; promotes on finished episodes' success."""

    def __init__(self, curriculum: DepthCurriculum, venv: CubeVectorEnv, seed: int, horizon: int,
                 budget: int, every: int = 0, log: ScalarLog | None = None, eval_every: int = 0) -> None:
        super().__init__()
        self.curriculum, self.venv, self.horizon, self.budget = curriculum, venv, horizon, budget
        self.rng = np.random.default_rng(seed)
        self.every = every  # off-policy algorithms have no rollouts: resample every `every` steps
        self.wins = self.ends = 0
        self.log, self.eval_every, self.evals = log, eval_every, 0

    def _resample(self) -> None:
        self.curriculum.update()
        set_horizon(self.venv, self.budget, self.horizon, self.curriculum.frontier)
        self.venv.set_depths(self.curriculum.sample(self.venv.num_envs, self.rng))
        scalars = {"curriculum/frontier": float(self.curriculum.frontier)}
        if self.ends:
            scalars["train/success"] = self.wins / self.ends
        if self.log is not None:
            self.log.write(self.num_timesteps, scalars)
        self.wins = self.ends = 0

    def _on_rollout_start(self) -> None:
        if not self.every:
            self._resample()

    def _on_step(self) -> bool:
        infos, dones = self.locals["infos"], self.locals["dones"]
        for i in np.flatnonzero(dones):
            self.curriculum.record(np.array([infos[i]["depth"]]), np.array([infos[i]["is_success"]]))
            self.wins += int(infos[i]["is_success"])
            self.ends += 1
        if self.every and self.num_timesteps % self.every < self.venv.num_envs:
            self._resample()
        if self.log is not None and self.eval_every and self.num_timesteps // self.eval_every > self.evals:
            self.evals = self.num_timesteps // self.eval_every
            self.log.write(self.num_timesteps, evaluate_model(self.model, EVAL_DEPTHS))
        return True


def make_model(algo: str, env: SB3VecEnv, seed: int) -> Any:
    """An SB3 model with settings that suit this task (sparse reward, short episodes)."""
    from stable_baselines3 import A2C, DQN, PPO

    kwargs: dict[str, Any] = dict(seed=seed, verbose=0, tensorboard_log=None, device="cpu",
                                  policy_kwargs={"net_arch": [256, 256]})
    if algo == "ppo":
        return PPO("MlpPolicy", env, n_steps=16, batch_size=1024, n_epochs=2, learning_rate=1e-3,
                   gamma=0.95, ent_coef=0.01, **kwargs)
    if algo == "a2c":
        return A2C("MlpPolicy", env, n_steps=8, learning_rate=1e-3, gamma=0.95, ent_coef=0.01, **kwargs)
    return DQN("MlpPolicy", env, learning_rate=5e-4, buffer_size=200_000, learning_starts=5_000, batch_size=512,
               gamma=0.95, train_freq=1, gradient_steps=1, target_update_interval=2_000,
               exploration_fraction=0.3, exploration_final_eps=0.05, **kwargs)


def evaluate_model(model: Any, depths: Sequence[int], metric: str = "quarter", budget: int = 20) -> dict[str, float]:
    """Greedy pass rate of an SB3 model on the same instance sets as the MLP baseline."""
    act = lambda obs, prev: model.predict(obs, deterministic=True)[0]  # noqa: E731
    out = {}
    for d in depths:
        states, _ = eval_instances(d, metric)
        out[f"pass/d{d}"] = float(rollouts(act, states, metric, budget)[0].mean())
    return out


def main(argv: list[str] | None = None) -> dict[str, float]:
    p = argparse.ArgumentParser(prog="python -m cubebench.training.rl.sb3", description=__doc__.split("\n\n")[0])
    p.add_argument("--algo", choices=ALGOS, default="ppo")
    p.add_argument("--timesteps", type=int, default=500_000)
    p.add_argument("--num-envs", type=int, default=256)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--horizon", type=int, default=3)
    p.add_argument("--max-depth", type=int, default=12)
    p.add_argument("--reward", type=unalias_reward, choices=NATIVE_REWARDS, default="none")
    p.add_argument("--eval-every", type=int, default=50_000, help="env steps between evaluations")
    p.add_argument("--out", type=Path, default=Path("runs/sb3"))
    args = p.parse_args(argv)
    torch.set_num_threads(1)
    from stable_baselines3.common.logger import configure

    venv = CubeVectorEnv(args.num_envs, reward=args.reward, autoreset_mode=AutoresetMode.SAME_STEP)
    env = SB3VecEnv(venv)
    env.seed(args.seed)
    curriculum = DepthCurriculum(max_depth=args.max_depth, min_episodes=max(200, args.num_envs // 2))
    model = make_model(args.algo, env, args.seed)
    model.set_logger(configure(str(args.out), ["csv", "log"]))
    log = ScalarLog(args.out)
    callback = CurriculumCallback(curriculum, venv, args.seed, args.horizon, 20,
                                  every=args.num_envs * 16 if args.algo == "dqn" else 0, log=log,
                                  eval_every=args.eval_every)
    t0 = time.perf_counter()
    model.learn(total_timesteps=args.timesteps, callback=callback, progress_bar=_has_rich())
    result = evaluate_model(model, EVAL_DEPTHS)
    log.write(model.num_timesteps, result)
    log.close()
    result.update({"wall_s": round(time.perf_counter() - t0, 1), "frontier": curriculum.frontier})
    model.save(args.out / f"sb3_{args.algo}")
    (args.out / "eval.json").write_text(json.dumps(result, indent=2))
    print(json.dumps(result))
    return result


def _has_rich() -> bool:
    """SB3's progress bar needs tqdm and rich."""
    try:
        import rich  # noqa: F401
        import tqdm  # noqa: F401
    except ImportError:
        return False
    return True


if __name__ == "__main__":
    main()
