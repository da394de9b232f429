"""Train the MLP policy-gradient baseline: ``python -m cubebench.training.rl.train --algo ppo ...``.

Builds the native vector env (Symbolic tier, one-hot observations), the MLP
policy and the depth curriculum; runs PPO or REINFORCE-with-baseline until
``--minutes`` or ``--env-steps`` is spent; evaluates the greedy policy on the
shipped 20-per-depth instance sets every ``--eval-every`` updates; writes
scalars (``scalars.jsonl``, one ``{"step", "tag", "value", "wall"}`` per line,
plus TensorBoard event files when the ``tensorboard`` package is installed)
and checkpoints (``last.pt``, ``best.pt``) under ``--out``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import numpy as np

from cubebench.extras import install_hint

try:
    import torch
except ModuleNotFoundError as missing:  # run as a program: one line that names the extra, not a traceback
    if __name__ == "__main__":
        raise SystemExit(f"python -m cubebench.training.rl.train needs {missing.name}: {install_hint('rl')}") from None
    raise
from tqdm import tqdm

from cubebench.engine.metric import METRICS, metric_argument
from cubebench.engine.rewards import NATIVE_REWARDS, unalias_reward
from cubebench.envs.cube_env import INTERACTION_STEPS
from cubebench.envs.vector_env import CubeVectorEnv

from cubebench.agents.rl.evaluate import evaluate
from cubebench.agents.rl.mlp_policy import MLPPolicy, action_names, save_checkpoint
from .ppo import PPO, PPOConfig
from .reinforce import Reinforce, ReinforceConfig
from .schedule import DepthCurriculum

EVAL_DEPTHS = (1, 2, 3, 4, 8)


class ScalarLog:
    """Scalars as JSON lines (always) and TensorBoard events (when ``tensorboard`` is installed)."""

    def __init__(self, out: Path) -> None:
        out.mkdir(parents=True, exist_ok=True)
        self.file = (out / "scalars.jsonl").open("w", encoding="utf-8")
        self.t0 = time.perf_counter()
        try:
            from torch.utils.tensorboard import SummaryWriter

            self.tb: Any = SummaryWriter(str(out))
        except ImportError:
            self.tb = None

    def write(self, step: int, scalars: dict[str, float]) -> None:
        wall = round(time.perf_counter() - self.t0, 3)
        for tag, value in scalars.items():
            self.file.write(json.dumps({"step": step, "tag": tag, "value": float(value), "wall": wall}) + "\n")
            if self.tb is not None:
                self.tb.add_scalar(tag, value, step)
        self.file.flush()

    def close(self) -> None:
        self.file.close()
        if self.tb is not None:
            self.tb.close()


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m cubebench.training.rl.train", description=__doc__.split("\n\n")[0])
    p.add_argument("--algo", choices=("ppo", "reinforce"), default="ppo")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--num-envs", type=int, default=1024)
    p.add_argument("--minutes", type=float, default=20.0, help="wall-clock training budget")
    p.add_argument("--env-steps", type=int, default=0, help="stop after this many env steps (0: no limit)")
    p.add_argument("--reward", type=unalias_reward, choices=NATIVE_REWARDS, default="none",
                   help="none (or sparse) = 1.0 on solving; sticker/face = dense potential differences")
    p.add_argument("--metric", choices=METRICS, default="quarter",
                   help="quarter: 12 actions; half: 18 (half turns too)")
    p.add_argument("--moves", dest="metric", type=_deprecated_moves, help=argparse.SUPPRESS)
    p.add_argument("--max-steps", type=int, default=INTERACTION_STEPS, help="episode budget while training")
    p.add_argument("--horizon", type=int, default=3,
                   help="training episodes end after frontier + HORIZON moves (0: the full --max-steps)")
    p.add_argument("--max-depth", type=int, default=12, help="highest curriculum depth")
    p.add_argument("--promote-at", type=float, default=0.9)
    p.add_argument("--hidden", type=int, nargs="+", default=[512, 256])
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--anneal", action="store_true",
                   help="decay the learning rate linearly to a tenth over the run (by time or --env-steps)")
    p.add_argument("--gamma", type=float, default=0.95)
    p.add_argument("--ent-coef", type=float, default=0.01)
    p.add_argument("--n-steps", type=int, default=16, help="PPO rollout length")
    p.add_argument("--epochs", type=int, default=4, help="PPO epochs per rollout")
    p.add_argument("--minibatch", type=int, default=4096, help="PPO minibatch size")
    p.add_argument("--eval-every", type=int, default=25, help="updates between evaluations")
    p.add_argument("--out", type=Path, default=Path("runs/rl"))
    p.add_argument("--threads", type=int, default=1, help="torch threads (1 is fastest on 2 shared cores)")
    p.add_argument("--no-progress", action="store_true")
    return p.parse_args(argv)


def _deprecated_moves(value: str) -> str:
    """``--moves quarter|face``, the old spelling of ``--metric quarter|half`` (warned)."""
    return metric_argument(None, value)


def build(args: argparse.Namespace) -> tuple[Any, MLPPolicy]:
    """The algorithm object (with its env, policy and curriculum) for the arguments."""
    metric = args.metric
    torch.manual_seed(args.seed)
    policy = MLPPolicy(len(action_names(metric)), tuple(args.hidden), metric)
    curriculum = DepthCurriculum(max_depth=args.max_depth, promote_at=args.promote_at,
                                 min_episodes=max(200, args.num_envs // 2))
    algo_cls = PPO if args.algo == "ppo" else Reinforce
    env = CubeVectorEnv(args.num_envs, reward=args.reward, metric=metric, max_steps=args.max_steps,
                        autoreset_mode=algo_cls.autoreset_mode)
    if args.algo == "ppo":
        cfg: Any = PPOConfig(n_steps=args.n_steps, epochs=args.epochs, minibatch=args.minibatch, lr=args.lr,
                             gamma=args.gamma, ent_coef=args.ent_coef)
    else:
        cfg = ReinforceConfig(lr=args.lr, gamma=args.gamma, ent_coef=args.ent_coef)
    return algo_cls(policy, env, curriculum, cfg, seed=args.seed, horizon=args.horizon), policy


def train(args: argparse.Namespace) -> dict[str, float]:
    """Run training; returns the last evaluation's scalars."""
    torch.set_num_threads(args.threads)
    algo, policy = build(args)
    log = ScalarLog(args.out)
    meta = {"args": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()}}
    (args.out / "config.json").write_text(json.dumps(meta, indent=2))
    deadline = time.perf_counter() + 60 * args.minutes
    best, updates = -1.0, 0
    last_eval: dict[str, float] = {}
    bar = tqdm(total=args.env_steps or None, unit="step", unit_scale=True, disable=args.no_progress)
    while time.perf_counter() < deadline and not (args.env_steps and algo.env_steps >= args.env_steps):
        before = algo.env_steps
        if args.anneal:
            _anneal(algo, args, deadline)
        stats = algo.update()
        updates += 1
        bar.update(algo.env_steps - before)
        log.write(algo.env_steps, stats)
        if updates % args.eval_every == 0:
            last_eval, best = _evaluate(policy, algo, log, args, meta, best)
        bar.set_postfix(frontier=algo.curriculum.frontier, success=f"{stats['train/success']:.2f}",
                        **{k.split("/")[1]: f"{v:.2f}" for k, v in last_eval.items()})
    bar.close()
    last_eval, best = _evaluate(policy, algo, log, args, meta, best)
    log.close()
    return last_eval


def _anneal(algo: Any, args: argparse.Namespace, deadline: float) -> None:
    """Learning rate ``lr * max(0.1, 1 - progress)``, progress by env steps or wall-clock time."""
    if args.env_steps:
        progress = algo.env_steps / args.env_steps
    else:
        progress = 1 - (deadline - time.perf_counter()) / (60 * args.minutes)
    for group in algo.opt.param_groups:
        group["lr"] = args.lr * max(0.1, 1 - progress)


def _evaluate(policy: MLPPolicy, algo: Any, log: ScalarLog, args: argparse.Namespace,
              meta: dict[str, Any], best: float) -> tuple[dict[str, float], float]:
    """Greedy pass rates on the instance sets; checkpoints ``last.pt`` and (by mean pass rate) ``best.pt``."""
    policy.eval()
    scalars = evaluate(policy, EVAL_DEPTHS, budget=20)
    policy.train()
    log.write(algo.env_steps, scalars)
    info = {**meta, "env_steps": algo.env_steps, "eval": scalars, "frontier": algo.curriculum.frontier,
            "wall_s": round(time.perf_counter() - log.t0, 1)}
    save_checkpoint(policy, args.out / "last.pt", info)
    score = float(np.mean(list(scalars.values())))
    if score >= best:
        best = score
        save_checkpoint(policy, args.out / "best.pt", info)
    return scalars, best


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    result = train(args)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
