"""Train a recurrent (GRU) or frame-stacked policy with PPO on the Face or Vertex view:
``python -m cubebench.training.rl.rnn_ppo --tier face --memory gru --minutes 35 --out runs/rnn_face``.

The partial tiers show part of the cube (Face: the 9 stickers of the held F face; Vertex: the 27 of U, R and F),
so a policy must turn the cube to look (the view rotations ``x x' y y' z z'``) and remember what it saw.  The
policy (:class:`~cubebench.agents.rl.rnn_policy.PartialViewPolicy`) reads the compact view and the previous action;
``--memory gru`` carries a GRU state through the episode, ``--memory stack`` only the last ``--stack`` frames
(the memoryless control).  PPO (the MLP trainer's :class:`~.ppo.PPO`: its GAE, its clipped loss and its
curriculum step) runs on :class:`~cubebench.envs.vector_env.CubeVectorEnv` with ``obs_format="indices"``;
rollouts are segments of ``--n-steps`` steps of every sub-env, learnt from by truncated backpropagation through
time: each minibatch is a set of whole segments replayed from the memory they started with, and the memory is
zeroed at every episode start inside a segment.

The depth curriculum, its training horizon (:mod:`.schedule`), the scalars (``scalars.jsonl``, as
:mod:`.train` writes them, so :mod:`.curves` draws them) and the run state (:class:`~cubebench.training.run_state.
RunState`: a whole checkpoint in ``OUT/checkpoint`` written beside and renamed, progress history, a rerun with the
same arguments resumes; Ctrl-C or SIGTERM saves and prints the command that resumes, :mod:`cubebench.training.
program`) are the project's own.  ``--minutes`` is the training time over every session of the run.  Every
``--eval-every`` updates the greedy policy plays ``--eval-episodes`` fresh seeded starts per depth with the
20-step budget (:func:`evaluate_partial`); ``OUT/last.pt`` and ``OUT/best.pt`` (by mean pass rate) are the
playable checkpoints (:func:`~cubebench.agents.rl.rnn_policy.load_rnn_checkpoint`).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import numpy as np
import torch
from gymnasium.vector import AutoresetMode

from cubebench.agents.rl.rnn_policy import MEMORIES, PartialViewPolicy, policy_from_config, save_rnn_checkpoint
from cubebench.engine.metric import METRICS, Metric
from cubebench.engine.rewards import NATIVE_REWARDS, unalias_reward
from cubebench.envs.cube_env import INTERACTION_STEPS
from cubebench.envs.vector_env import CubeVectorEnv
from cubebench.generators import Generator
from cubebench.tiers import PARTIAL_TIERS

from ..program import Session, run_program
from ..run_state import RunState
from ..stopping import StopRequested
from .algorithm import entropy
from .ppo import PPO, PPOConfig
from .schedule import DepthCurriculum, set_horizon
from .train import ScalarLog

_PROG = "python -m cubebench.training.rl.rnn_ppo"
PARTIAL_EVAL_SEED = 7_000_000
"""Seed of the evaluation starts (depth d: sub-env i seeded ``PARTIAL_EVAL_SEED + 10_000 d + i``): far from the
training seeds (``--seed`` plus at most a few million)."""


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog=_PROG, description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("--tier", choices=PARTIAL_TIERS, default="face")
    p.add_argument("--memory", choices=MEMORIES, default="gru", help="gru, or stack: the memoryless control")
    p.add_argument("--stack", type=int, default=4, help="frames the stack policy sees (--memory stack)")
    p.add_argument("--hidden", type=int, default=128, help="width of the GRU and the layers")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--num-envs", type=int, default=256)
    p.add_argument("--minutes", type=float, default=30.0, help="training time, over every session of the run")
    p.add_argument("--updates", type=int, default=0, help="stop after this many PPO updates (0: no limit)")
    p.add_argument("--reward", type=unalias_reward, choices=NATIVE_REWARDS, default="none",
                   help="none (or sparse) = 1.0 on solving; sticker/face = dense potential differences")
    p.add_argument("--metric", choices=METRICS, default="quarter")
    p.add_argument("--max-steps", type=int, default=INTERACTION_STEPS, help="episode budget (steps, rotations too)")
    p.add_argument("--horizon", type=int, default=8,
                   help="training episodes end after frontier + HORIZON steps (0: the full --max-steps)")
    p.add_argument("--max-depth", type=int, default=4, help="highest curriculum depth")
    p.add_argument("--promote-at", type=float, default=0.7)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--gamma", type=float, default=0.95)
    p.add_argument("--ent-coef", type=float, default=0.01)
    p.add_argument("--n-steps", type=int, default=32, help="rollout segment length (the BPTT window)")
    p.add_argument("--epochs", type=int, default=4, help="PPO epochs per rollout")
    p.add_argument("--minibatch", type=int, default=64, help="segments (sub-envs) per minibatch")
    p.add_argument("--eval-every", type=int, default=25, help="updates between evaluations and checkpoints")
    p.add_argument("--eval-episodes", type=int, default=200, help="fresh starts per depth in each evaluation")
    p.add_argument("--out", type=Path, default=Path("runs/rnn"))
    p.add_argument("--threads", type=int, default=1, help="torch threads (1 is fastest on 2 shared cores)")
    args = p.parse_args(argv)
    for name in ("stack", "hidden", "num_envs", "max_steps", "max_depth", "n_steps", "epochs", "minibatch",
                 "eval_every", "eval_episodes", "threads"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1")
    if args.minutes <= 0 or args.updates < 0 or args.horizon < 0:
        p.error("--minutes must be positive, --updates and --horizon at least 0")
    return args


class RecurrentPPO(PPO):
    """PPO with a memory carried through the rollout: one :meth:`update` = a segment of ``n_steps`` steps of every
    sub-env, then ``epochs`` passes over minibatches of whole segments (truncated backpropagation through time)."""

    name = "recurrent PPO"

    def __init__(self, policy: PartialViewPolicy, env: CubeVectorEnv, curriculum: DepthCurriculum,
                 cfg: PPOConfig, seed: int = 0, horizon: int = 0) -> None:
        super().__init__(policy, env, curriculum, cfg, seed, horizon)  # type: ignore[arg-type]  # its update is ours
        self.net = policy
        self.seed = seed
        self.memory = policy.initial_memory(env.num_envs)
        self.updates = 0

    def collect(self) -> tuple[dict[str, np.ndarray], dict[str, float]]:
        """One rollout segment (with the memory it started from) and its episode statistics."""
        n, t_max = self.env.num_envs, self.cfg.n_steps
        set_horizon(self.env, self.budget, self.horizon, self.curriculum.frontier)
        self.env.set_depths(self.curriculum.sample(n, self.rng))
        memory0 = self.memory.numpy().copy()
        buf: dict[str, list[np.ndarray]] = {k: [] for k in ("obs", "prev", "act", "logp", "val", "rew", "done", "boot")}
        ends, wins, lengths = 0, 0, []
        for _ in range(t_max):
            with torch.no_grad():
                logits, value, self.memory = self.net.step(torch.as_tensor(self.obs), torch.as_tensor(self.prev),
                                                           self.memory, torch.as_tensor(self.prev < 0))
                action = torch.multinomial(torch.softmax(logits, -1), 1, generator=self.gen).squeeze(-1)
                logp = torch.log_softmax(logits, -1).gather(1, action[:, None]).squeeze(-1)
            act = action.numpy()
            obs, rew, term, trunc, info = self.env.step(act)
            done = term | trunc
            boot = np.zeros(n)
            if trunc.any():  # time limit: bootstrap from the value of the last observation, read with the memory
                idx = np.flatnonzero(trunc)
                boot[idx] = self._value_after(np.stack(info["final_obs"][idx]), act[idx], self.memory[idx])
            for k, v in zip(buf, (self.obs, self.prev, act, logp.numpy(), value.numpy(), rew, done, boot)):
                buf[k].append(v)
            if done.any():
                fin = info["final_info"]
                self.curriculum.record(fin["depth"][done], term[done])
                ends, wins = ends + int(done.sum()), wins + int(term.sum())
                lengths.extend(fin["steps"][term].tolist())
            self.obs, self.prev = obs, np.where(done, -1, act)
        self.env_steps += n * t_max
        data = {k: np.stack(v) for k, v in buf.items()}
        data["last_val"] = self._value_after(self.obs, self.prev, self.memory)
        data["memory0"] = memory0
        stats = {"train/episodes": ends, "train/success": wins / max(ends, 1),
                 "train/solve_len": float(np.mean(lengths)) if lengths else float("nan")}
        return data, stats

    @torch.no_grad()
    def _value_after(self, obs: np.ndarray, prev: np.ndarray, memory: torch.Tensor) -> np.ndarray:
        """Values of observations read with ``memory`` (the memory itself is left as it is)."""
        return self.net.step(torch.as_tensor(obs), torch.as_tensor(prev), memory,
                             torch.as_tensor(np.asarray(prev) < 0))[1].numpy()

    def learn(self, data: dict[str, np.ndarray]) -> dict[str, float]:
        """``epochs`` passes of clipped-surrogate updates over minibatches of whole segments."""
        adv, ret = self.advantages(data)
        obs, prev, act = (torch.as_tensor(data[k]) for k in ("obs", "prev", "act"))
        start = prev < 0
        old_logp = torch.as_tensor(data["logp"]).float()
        adv_t, ret_t = torch.as_tensor(adv).float(), torch.as_tensor(ret).float()
        memory0 = torch.as_tensor(data["memory0"])
        logs = {"loss/policy": 0.0, "loss/value": 0.0, "loss/entropy": 0.0}
        count = 0
        for _ in range(self.cfg.epochs):
            perm = torch.randperm(self.env.num_envs, generator=self.gen)
            for first in range(0, self.env.num_envs, self.cfg.minibatch):
                i = perm[first:first + self.cfg.minibatch]
                parts = self.segment_loss(obs[:, i], prev[:, i], start[:, i], memory0[i], act[:, i], old_logp[:, i],
                                          adv_t[:, i], ret_t[:, i])
                self.gradient_step(*parts)
                for key, part in zip(logs, parts):
                    logs[key] += float(part.detach())
                count += 1
        self.updates += 1
        return {k: v / count for k, v in logs.items()}

    def segment_loss(self, obs: torch.Tensor, prev: torch.Tensor, start: torch.Tensor, memory0: torch.Tensor,
                     act: torch.Tensor, old_logp: torch.Tensor, adv: torch.Tensor,
                     ret: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Policy (clipped surrogate), value and entropy terms of segments (T, B) replayed from ``memory0``."""
        logits, value = self.net.unroll(obs, prev, start, memory0)
        logp_all = torch.log_softmax(logits, -1).reshape(-1, logits.shape[-1])
        logp = logp_all.gather(1, act.reshape(-1, 1)).squeeze(-1)
        adv = adv.reshape(-1)
        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
        ratio = torch.exp(logp - old_logp.reshape(-1))
        clipped = torch.clamp(ratio, 1 - self.cfg.clip, 1 + self.cfg.clip)
        policy_loss = -torch.min(ratio * adv, clipped * adv).mean()
        value_loss = 0.5 * (value.reshape(-1) - ret.reshape(-1)).pow(2).mean()
        return policy_loss, value_loss, entropy(logp_all)

    # --- what a resumed run needs besides the weights and the optimizer (RunState.restore) ---------------------
    def state_dict(self) -> dict[str, Any]:
        c = self.curriculum
        return {"env_steps": self.env_steps, "updates": self.updates, "rng": self.rng.bit_generator.state,
                "gen": self.gen.get_state(), "curriculum": [c.frontier, c._done, c._solved]}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Counters, curriculum and generators as saved; the sub-envs start fresh episodes (seeded by the update
        count, so a resumed run is reproducible) with an empty memory."""
        self.env_steps, self.updates = int(state["env_steps"]), int(state["updates"])
        self.rng.bit_generator.state = state["rng"]
        self.gen.set_state(state["gen"])
        self.curriculum.frontier, self.curriculum._done, self.curriculum._solved = state["curriculum"]
        n = self.env.num_envs
        depths = self.curriculum.sample(n, self.rng)
        self.obs, _ = self.env.reset(seed=self.seed + n * (1 + self.updates), options={"depth": depths})
        self.prev = np.full(n, -1, dtype=np.int64)
        self.memory = self.net.initial_memory(n)


def make_policy(args: argparse.Namespace) -> PartialViewPolicy:
    """A fresh policy for the tier and metric of ``args`` (seeded by ``--seed``)."""
    torch.manual_seed(args.seed)
    probe = CubeVectorEnv(1, tier=args.tier, obs_format="indices", metric=args.metric)
    return PartialViewPolicy(int(np.prod(probe.single_observation_space.shape or (0,))), probe.action_names, args.memory, args.hidden,
                             args.stack)


def build(args: argparse.Namespace, policy: PartialViewPolicy | None = None) -> RecurrentPPO:
    """The trainer (env, policy, curriculum, PPO) for the arguments."""
    policy = policy or make_policy(args)
    curriculum = DepthCurriculum(max_depth=args.max_depth, promote_at=args.promote_at,
                                 min_episodes=max(200, args.num_envs // 2))
    env = CubeVectorEnv(args.num_envs, tier=args.tier, obs_format="indices", reward=args.reward,
                        metric=args.metric, max_steps=args.max_steps, autoreset_mode=AutoresetMode.SAME_STEP)
    cfg = PPOConfig(n_steps=args.n_steps, epochs=args.epochs, minibatch=args.minibatch, lr=args.lr,
                    gamma=args.gamma, ent_coef=args.ent_coef)
    return RecurrentPPO(policy, env, curriculum, cfg, seed=args.seed, horizon=args.horizon)


Steps = Callable[[CubeVectorEnv, np.ndarray, int], Iterator[tuple[np.ndarray, np.ndarray]]]
"""Plays one batch of starts: given the env, its first observations and the depth, yields each step's
(terminated, truncated)."""


def partial_pass_rates(tier: str, depths: Sequence[int], episodes: int, steps: Steps, seed: int = PARTIAL_EVAL_SEED,
                       budget: int = INTERACTION_STEPS, metric: Metric = "quarter",
                       generator: Generator | None = None) -> dict[str, float]:
    """Pass rate per depth (``pass/dD``): ``episodes`` fresh starts of each depth (sub-env ``i`` seeded ``seed +
    10_000 D + i``; scrambles of ``D`` turns, or what ``generator`` draws, e.g.
    :class:`~cubebench.generators.CertifiedGenerator`'s starts at distance exactly ``D``), each played once by
    ``steps`` for at most ``budget`` steps, view rotations included. Every partial-view evaluation (this module's
    policies, SB3's recurrent ones) plays through here, so their rates are comparable."""
    out = {}
    for depth in depths:
        env = CubeVectorEnv(episodes, tier=tier, obs_format="indices", depth=depth, max_steps=budget, metric=metric,
                            autoreset_mode=AutoresetMode.SAME_STEP, generator=generator)
        obs, _ = env.reset(seed=seed + 10_000 * depth)
        finished, solved = np.zeros(episodes, bool), np.zeros(episodes, bool)
        for term, trunc in steps(env, obs, depth):
            solved |= term & ~finished
            finished |= term | trunc
            if finished.all():
                break
        out[f"pass/d{depth}"] = float(solved.mean())
        env.close()
    return out


def evaluate_partial(policy: PartialViewPolicy | None, tier: str, depths: Sequence[int], episodes: int,
                     seed: int = PARTIAL_EVAL_SEED, budget: int = INTERACTION_STEPS, metric: Metric = "quarter",
                     greedy: bool = True, generator: Generator | None = None) -> dict[str, float]:
    """:func:`partial_pass_rates` of ``policy`` (``None``: uniformly random actions, chance); ``greedy=False``
    samples the policy."""

    def steps(env: CubeVectorEnv, obs: np.ndarray, depth: int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        prev = np.full(episodes, -1, dtype=np.int64)
        memory = policy.initial_memory(episodes) if policy is not None else None
        rng, gen = np.random.default_rng(seed + depth), torch.Generator().manual_seed(seed + depth)
        for _ in range(budget):
            if policy is None or memory is None:
                act = rng.integers(0, len(env.action_names), size=episodes)
            else:
                act, memory = policy.act(obs, prev, memory, prev < 0, greedy=greedy, generator=gen)
            obs, _, term, trunc, _ = env.step(act)
            prev = np.where(term | trunc, -1, act)
            yield term, trunc

    return partial_pass_rates(tier, depths, episodes, steps, seed, budget, metric, generator)


class _Weights:
    """The policy as :class:`~cubebench.training.run_state.RunState` saves a model: its weights in the checkpoint's
    safetensors file, its architecture in the config file beside them."""

    def __init__(self, policy: PartialViewPolicy) -> None:
        self.policy = policy

    def save_pretrained(self, folder: str, save_embedding_layers: bool = False) -> None:
        from safetensors.torch import save_file

        Path(folder).mkdir(parents=True, exist_ok=True)
        tensors = {k: v.detach().contiguous() for k, v in self.policy.state_dict().items()}
        save_file(tensors, str(Path(folder) / "adapter_model.safetensors"))
        (Path(folder) / "adapter_config.json").write_text(json.dumps(self.policy.config()), encoding="utf-8")

    @staticmethod
    def load(folder: Path) -> PartialViewPolicy:
        from safetensors.torch import load_file

        policy = policy_from_config(json.loads((folder / "adapter_config.json").read_text(encoding="utf-8")))
        policy.load_state_dict(load_file(str(folder / "adapter_model.safetensors")))
        return policy


def _scalar_log(out: Path, resumed: bool, seconds: float) -> ScalarLog:
    """The training scalars; a resumed run keeps the lines before it and its wall clock goes on from ``seconds``."""
    path = out / "scalars.jsonl"
    before = path.read_text(encoding="utf-8") if resumed and path.exists() else ""
    log = ScalarLog(out)
    log.file.write(before)
    log.file.flush()
    log.t0 -= seconds
    return log


BUDGET_ARGS = ("minutes", "updates")
"""Arguments a rerun may change besides ``--out`` and ``--threads``: a larger budget trains the run on."""


def _run_args(args: argparse.Namespace) -> dict[str, Any]:
    """The arguments that make the run (a resume must give the same), the budget left out."""
    return {k: v for k, v in vars(args).items() if k not in BUDGET_ARGS}


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parse_args(argv)
    return run_program("rnn_ppo", _PROG, argv, args.out, lambda session: _run(args, session))


def _run(args: argparse.Namespace, session: Session) -> int:
    resumed = RunState.resumable(args.out, _run_args(args), log=session.say)
    torch.set_num_threads(args.threads)
    policy = _Weights.load(args.out / "checkpoint") if resumed else None
    algo = build(args, policy)
    state = train(args, algo, session, resumed)
    session.say(f"done: {state.step} updates, {algo.env_steps:,} env steps, {state.seconds / 60:.1f} min; "
                f"play {args.out / 'last.pt'} (or best.pt); summary in {args.out / 'training.json'}")
    return 0


def train(args: argparse.Namespace, algo: RecurrentPPO, session: Session,
          resumed: dict[str, Any] | None) -> RunState:
    """The loop: updates until ``--minutes`` of training (all sessions) or ``--updates``; evaluations,
    checkpoints and progress lines every ``--eval-every`` updates; a stop signal saves, then goes on up."""
    state = RunState.start(args.out, _run_args(args), {"minutes": args.minutes, "updates": args.updates},
                           {"threads": args.threads}, resumed)
    session.state = state
    state.restore(algo.opt, algo)
    weights = _Weights(algo.net)
    log = _scalar_log(args.out, state.resumed, state.seconds)
    best = max((h.get("eval_mean", -1.0) for h in state.history), default=-1.0)
    try:
        while state.seconds < 60 * args.minutes and not (args.updates and state.step >= args.updates):
            session.phase = f"in update {state.step + 1}"
            started = time.monotonic()
            with session.stop.deferred():
                stats = algo.update()
                state.step += 1
                log.write(algo.env_steps, stats)
                entry: dict[str, Any] = {"step": state.step, "env_steps": algo.env_steps,
                                         "train_success": stats["train/success"], "frontier": algo.curriculum.frontier,
                                         "seconds": round(time.monotonic() - started, 3)}
                state.history.append(entry)  # before the checkpoint an evaluation writes
                if state.step % args.eval_every == 0:
                    entry["eval_mean"], best = _evaluate(args, algo, state, log, weights, best, session)
                    entry["seconds"] = round(time.monotonic() - started, 3)
            if state.step == state.session_from + 1:
                session.say(f"update {state.step}, the first of this session: {time.monotonic() - started:.1f} s, "
                            f"{args.num_envs * args.n_steps} env steps")
        with session.stop.deferred():
            if state.saved_step != state.step or not (args.out / "last.pt").exists():
                _evaluate(args, algo, state, log, weights, best, session)
            state.write_summary(args.out / "training.json")
    except StopRequested as err:
        if not err.again and state.step > state.saved_step:
            state.save(weights, algo.opt, algo, quiet=True)
        raise
    finally:
        log.close()
    return state


def _evaluate(args: argparse.Namespace, algo: RecurrentPPO, state: RunState, log: ScalarLog, weights: _Weights,
              best: float, session: Session) -> tuple[float, float]:
    """Greedy pass rates per depth, a progress line, the checkpoint and ``last.pt`` / ``best.pt``."""
    depths = tuple(range(1, args.max_depth + 1))
    algo.net.eval()
    scalars = evaluate_partial(algo.net, args.tier, depths, args.eval_episodes, budget=args.max_steps,
                               metric=args.metric)
    algo.net.train()
    log.write(algo.env_steps, scalars)
    mean = float(np.mean(list(scalars.values())))
    shown = " ".join(f"d{k.split('/d')[1]} {v:.2f}" for k, v in scalars.items())
    session.say(f"update {state.step}, {algo.env_steps / 1e6:.2f} M env steps, {state.seconds / 60:.1f} of "
                f"{args.minutes:g} min: frontier {algo.curriculum.frontier}, greedy pass {shown}")
    meta = {"args": state.info["args"], "update": state.step, "env_steps": algo.env_steps, "eval": scalars,
            "frontier": algo.curriculum.frontier, "train_seconds": round(state.seconds, 1)}
    state.save(weights, algo.opt, algo, quiet=True)
    save_rnn_checkpoint(algo.net, args.out / "last.pt", meta)
    if mean >= best:
        best = mean
        save_rnn_checkpoint(algo.net, args.out / "best.pt", meta)
    return mean, best


if __name__ == "__main__":
    sys.exit(main())
