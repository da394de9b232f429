"""Stable-Baselines3 on the native vector env: ``python -m cubebench.training.rl.sb3 --algo ppo ...``.

:class:`~.sb3_vec_env.SB3VecEnv` adapts :class:`~cubebench.envs.vector_env.CubeVectorEnv`
(``SAME_STEP`` autoreset) to SB3's own ``VecEnv`` interface, so SB3's PPO, A2C and DQN train on the
Numba-stepped batch.  :class:`CurriculumCallback` drives the same depth
curriculum as ``cubebench.training.rl.train`` (depths before each rollout, promotion on
the training success rate).  ``--tier face|vertex`` trains on a partial view's compact
form (:mod:`.sb3_recurrent`), where ``--algo recurrent-ppo`` (sb3-contrib's
``RecurrentPPO``, an LSTM policy) is the library baseline beside ``rnn_ppo``'s GRU.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np
import torch
from gymnasium.vector import AutoresetMode
from stable_baselines3.common.callbacks import BaseCallback

from cubebench.engine.rewards import NATIVE_REWARDS, unalias_reward
from cubebench.envs.vector_env import CubeVectorEnv
from cubebench.tiers import DEFAULT_TIER, PARTIAL_TIERS, tier_names, tier_spec

from cubebench.agents.rl.evaluate import eval_instances, rollouts
from .sb3_recurrent import PartialSB3VecEnv, evaluate_partial_sb3, make_recurrent
from .sb3_vec_env import SB3VecEnv
from .schedule import DepthCurriculum, set_horizon
from .train import EVAL_DEPTHS, ScalarLog

ALGOS = ("ppo", "a2c", "dqn", "recurrent-ppo")
ADAPTER_TIERS = (DEFAULT_TIER, *PARTIAL_TIERS)
"""The tiers the adapter trains on: the default (fully observed) one, and the partial views in their compact form."""


class CurriculumCallback(BaseCallback):
    """Sets curriculum depths before each rollout; promotes on finished episodes' success."""

    def __init__(self, curriculum: DepthCurriculum, venv: CubeVectorEnv, seed: int, horizon: int,
                 budget: int, every: int = 0, log: ScalarLog | None = None, eval_every: int = 0,
                 evaluate: Callable[[Any], dict[str, float]] | None = None, seconds: float = 0.0) -> None:
        super().__init__()
        self.curriculum, self.venv, self.horizon, self.budget = curriculum, venv, horizon, budget
        self.rng = np.random.default_rng(seed)
        self.every = every  # off-policy algorithms have no rollouts: resample every `every` steps
        self.wins = self.ends = 0
        self.log, self.eval_every, self.evals = log, eval_every, 0
        self.evaluate = evaluate or (lambda model: evaluate_model(model, EVAL_DEPTHS))
        self.deadline = time.monotonic() + seconds if seconds > 0 else float("inf")  # training stops after it

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
            self.log.write(self.num_timesteps, self.evaluate(self.model))
        return time.monotonic() < self.deadline


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
    p.add_argument("--algo", choices=ALGOS, default="ppo",
                   help=f"recurrent-ppo: sb3-contrib's RecurrentPPO (LSTM), for --tier {tier_names('partial')}")
    p.add_argument("--tier", choices=ADAPTER_TIERS, default=DEFAULT_TIER,
                   help=f"{tier_names('partial')}: the partial view's compact form with the previous action")
    p.add_argument("--timesteps", type=int, default=None, help="env steps (default 500,000; none with --minutes)")
    p.add_argument("--num-envs", type=int, default=256)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--horizon", type=int, default=None, help=f"default 3 ({DEFAULT_TIER}), 8 ({tier_names('partial')}: rnn_ppo's)")
    p.add_argument("--max-depth", type=int, default=None, help=f"default 12 ({DEFAULT_TIER}), 4 ({tier_names('partial')})")
    p.add_argument("--promote-at", type=float, default=None, help=f"default 0.9 ({DEFAULT_TIER}), 0.7 ({tier_names('partial')})")
    p.add_argument("--minutes", type=float, default=0.0, help="stop training after this long (0: no time limit)")
    p.add_argument("--reward", type=unalias_reward, choices=NATIVE_REWARDS, default="none")
    p.add_argument("--eval-every", type=int, default=50_000, help="env steps between evaluations")
    p.add_argument("--eval-episodes", type=int, default=200,
                   help="seeded starts per depth in a partial view's evaluations (as rnn_ppo's)")
    p.add_argument("--out", type=Path, default=Path("runs/sb3"))
    args = p.parse_args(argv)
    if args.timesteps is None:
        args.timesteps = 10**12 if args.minutes > 0 else 500_000
    partial_view = tier_spec(args.tier).partial
    for name, whole, partial in (("horizon", 3, 8), ("max_depth", 12, 4), ("promote_at", 0.9, 0.7)):
        if getattr(args, name) is None:
            setattr(args, name, partial if partial_view else whole)
    if args.algo == "recurrent-ppo" and not partial_view:
        p.error(f"--algo recurrent-ppo is for the partial views (--tier {tier_names('partial')}); the {args.tier} tier "
                "is fully observed: use --algo ppo")
    torch.set_num_threads(1)
    from stable_baselines3.common.logger import configure

    venv, env, model = build(args)
    env.seed(args.seed)
    curriculum = DepthCurriculum(max_depth=args.max_depth, promote_at=args.promote_at,
                                 min_episodes=max(200, args.num_envs // 2))
    model.set_logger(configure(str(args.out), ["csv", "log"]))
    log = ScalarLog(args.out)
    evaluate = _evaluator(args.tier, args.eval_episodes)
    callback = CurriculumCallback(curriculum, venv, args.seed, args.horizon, 20,
                                  every=args.num_envs * 16 if args.algo == "dqn" else 0, log=log,
                                  eval_every=args.eval_every, evaluate=evaluate, seconds=60 * args.minutes)
    t0 = time.perf_counter()
    model.learn(total_timesteps=args.timesteps, callback=callback, progress_bar=_has_rich())
    train_s = time.perf_counter() - t0
    result = evaluate(model)
    log.write(model.num_timesteps, result)
    log.close()
    result.update({"wall_s": round(time.perf_counter() - t0, 1), "train_s": round(train_s, 1),
                   "env_steps": model.num_timesteps, "frontier": curriculum.frontier})
    model.save(args.out / f"sb3_{args.algo}")
    (args.out / "eval.json").write_text(json.dumps(result, indent=2))
    print(json.dumps(result))
    return result


def build(args: argparse.Namespace) -> tuple[CubeVectorEnv, SB3VecEnv, Any]:
    """The native batch, its SB3 adapter and the model for ``--tier`` and ``--algo``."""
    if not tier_spec(args.tier).partial:
        venv = CubeVectorEnv(args.num_envs, reward=args.reward, autoreset_mode=AutoresetMode.SAME_STEP)
        env = SB3VecEnv(venv)
        return venv, env, make_model(args.algo, env, args.seed)
    venv = CubeVectorEnv(args.num_envs, tier=args.tier, obs_format="indices", reward=args.reward,
                         autoreset_mode=AutoresetMode.SAME_STEP)
    env = PartialSB3VecEnv(venv)
    model = make_recurrent(env, args.seed) if args.algo == "recurrent-ppo" else make_model(args.algo, env, args.seed)
    return venv, env, model


def _evaluator(tier: str, episodes: int) -> Callable[[Any], dict[str, float]]:
    """Greedy pass rates of a model on ``tier``: the MLP baseline's instance sets (symbolic), or seeded starts of
    each depth as ``rnn_ppo`` evaluates (the partial views)."""
    if not tier_spec(tier).partial:
        return lambda model: evaluate_model(model, EVAL_DEPTHS)
    return lambda model: evaluate_partial_sb3(model, tier, EVAL_DEPTHS, episodes)


def _has_rich() -> bool:
    """SB3's progress bar needs tqdm and rich, and a terminal to draw on (not a background job's log)."""
    if not sys.stderr.isatty():
        return False
    try:
        import rich  # noqa: F401
        import tqdm  # noqa: F401
    except ImportError:
        return False
    return True


if __name__ == "__main__":
    main()
