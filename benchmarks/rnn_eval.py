"""Pass rates of partial-view policies (:mod:`cubebench.training.rl.rnn_ppo` checkpoints) by depth, beside chance.

    python benchmarks/rnn_eval.py runs/rnn_face_gru/last.pt runs/rnn_face_stack/last.pt --depths 1 2 3 4 \\
        --episodes 1000 --seed 424242 --certified

Every checkpoint and a uniformly random policy (chance) play the same fresh starts of each depth (sub-env ``i``
seeded ``seed + 10_000 d + i``; ``--certified``: drawn by :class:`~cubebench.generators.CertifiedGenerator`, optimal
distance exactly ``d``, as the paper's instances; else scrambles of ``d`` turns) through the native vector env, one
episode each with the 20-step budget (view rotations count as steps).  Greedy and sampled play, with Wilson 95 %
intervals; ``--json`` writes the table too.  ``--explore`` adds, per checkpoint and depth, how the greedy policy
looks: the mean view rotations before its first face turn and per episode.  Keep ``--seed`` away from training seeds (a run trains on ``--seed``
plus at most a few million).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import torch
from gymnasium.vector import AutoresetMode

from cubebench.agents.rl.rnn_policy import PartialViewPolicy, load_rnn_checkpoint
from cubebench.envs.vector_env import CubeVectorEnv
from cubebench.generators import CertifiedGenerator
from cubebench.tasks.metrics import wilson_interval
from cubebench.training.rl.rnn_ppo import evaluate_partial


def exploration(policy: PartialViewPolicy, tier: str, depth: int, episodes: int, seed: int, budget: int,
                generator: CertifiedGenerator | None) -> tuple[float, float]:
    """Greedy play on the starts :func:`evaluate_partial` uses: mean view rotations before the first face turn (the
    whole episode's when it never turns) and per episode (each episode counted to its end)."""
    env = CubeVectorEnv(episodes, tier=tier, obs_format="indices", depth=depth, max_steps=budget,
                        autoreset_mode=AutoresetMode.SAME_STEP, generator=generator)
    obs, _ = env.reset(seed=seed + 10_000 * depth)
    prev, memory = np.full(episodes, -1, dtype=np.int64), policy.initial_memory(episodes)
    live, turned = np.ones(episodes, bool), np.zeros(episodes, bool)
    before, total = np.zeros(episodes), np.zeros(episodes)
    for _ in range(budget):
        act, memory = policy.act(obs, prev, memory, prev < 0)
        rotation = act >= env.n_turns
        total += rotation & live
        before += rotation & live & ~turned
        turned |= ~rotation
        obs, _, term, trunc, _ = env.step(act)
        live &= ~(term | trunc)
        prev = np.where(term | trunc, -1, act)
        if not live.any():
            break
    return float(before.mean()), float(total.mean())


def add_start_options(p: argparse.ArgumentParser) -> None:
    """The options that choose the starts and the table: depths, episodes per depth, seed, budget, certified, json."""
    p.add_argument("--depths", type=int, nargs="+", default=[1, 2, 3, 4])
    p.add_argument("--episodes", type=int, default=1000)
    p.add_argument("--seed", type=int, default=424242)
    p.add_argument("--budget", type=int, default=20)
    p.add_argument("--certified", action="store_true", help="starts at certified distance exactly d")
    p.add_argument("--json", type=Path, default=None)


def rate_rows(name: str, play: str, rates: dict[str, float], episodes: int, seconds: float) -> list[dict]:
    """One player's table rows (solved, rate and Wilson 95 % interval per depth), printed as one line."""
    rows = []
    for key, rate in rates.items():
        k = round(rate * episodes)
        lo, hi = wilson_interval(k, episodes)
        rows.append({"player": name, "play": play, "depth": int(key.split("/d")[1]), "solved": k, "n": episodes,
                     "rate": rate, "wilson95": [round(lo, 3), round(hi, 3)]})
    print(f"{name} ({play}): " + " ".join(
        f"d{r['depth']} {r['rate']:.3f} [{r['wilson95'][0]:.3f}, {r['wilson95'][1]:.3f}]" for r in rows)
        + f"; mean {sum(r['rate'] for r in rows) / len(rows):.3f} ({seconds:.0f} s)", flush=True)
    return rows


def main() -> None:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("checkpoints", type=Path, nargs="+")
    p.add_argument("--tier", default=None, help="face or vertex (default: the first checkpoint's training tier)")
    add_start_options(p)
    p.add_argument("--explore", action="store_true", help="also the greedy policies' view rotations")
    args = p.parse_args()
    torch.set_num_threads(1)
    policies = {str(c): load_rnn_checkpoint(c) for c in args.checkpoints}
    tier = args.tier or next(iter(policies.values()))[1]["args"]["tier"]
    generator = CertifiedGenerator() if args.certified else None
    rows = []
    players = [("random (chance)", None, True)] + [(name, pol, g) for name, (pol, _) in policies.items()
                                                   for g in (True, False)]
    for name, policy, greedy in players:
        started = time.perf_counter()
        rates = evaluate_partial(policy, tier, args.depths, args.episodes, seed=args.seed, budget=args.budget,
                                 greedy=greedy, generator=generator)
        play = "uniform" if policy is None else "greedy" if greedy else "sampled"
        rows += rate_rows(name, play, rates, args.episodes, time.perf_counter() - started)
    explore = []
    if args.explore:
        for name, (policy, _) in policies.items():
            for depth in args.depths:
                first, per_episode = exploration(policy, tier, depth, args.episodes, args.seed, args.budget, generator)
                explore.append({"player": name, "depth": depth, "rotations_before_first_turn": round(first, 3),
                                "rotations_per_episode": round(per_episode, 3)})
                print(f"{name} d{depth}: {first:.2f} rotations before the first face turn, {per_episode:.2f} per "
                      "episode (greedy)", flush=True)
    if args.json:
        args.json.write_text(json.dumps({"tier": tier, "certified": args.certified, "seed": args.seed,
                                         "budget": args.budget, "rows": rows, "exploration": explore},
                                        indent=1) + "\n")


if __name__ == "__main__":
    main()
