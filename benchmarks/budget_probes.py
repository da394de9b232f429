"""The measurements behind the default move budget (docs/environments.md, "Move budget").

Prints, for the shipped certified sets of a metric:

- the longest two-phase solution (what the built-in solver agent plays) per
  depth, as shipped and over all 24 ways of holding the cube (the solver
  agent plays from wherever its exploration left the cube);
- for the heuristic-reward probe (try each move in a fixed order, keep the
  first whose reward is positive, else undo it), the moves it needs to solve
  each certified instance with no budget, over many move orders: the fewest
  is how small the budget must stay for the probe to fail;
- for the same probe with a fresh random order at every step (the ``prober``
  agent), and for a face-cycling probe (turn one face up to four times:
  f, f2, f' tested for one move each, the face just kept skipped), the share
  of seeded attempts that solve within each budget.

    python benchmarks/budget_probes.py [--metric quarter] [--depths 3 4 8] [--orders 24] [--seeds 50]
"""

from __future__ import annotations

import argparse
import json

import gymnasium as gym
import numpy as np

import cubebench
from cubebench.engine import ORIENTATIONS
from cubebench.engine.metric import metric_length
from cubebench.engine.state import from_facelets
from cubebench.shipped import instances_dir
from cubebench.solver.twophase import solve_twophase


def longest_twophase(metric: str, orientations: bool) -> dict[str, tuple[int, int | None]]:
    """The longest two-phase solution (in ``metric``) of each shipped instance file: as shipped, and over
    the 24 orientations when asked."""
    out: dict[str, tuple[int, int | None]] = {}
    for path in sorted(instances_dir().glob(f"{metric}-d*.jsonl")):
        states = [from_facelets(json.loads(line)["state"]) for line in path.read_text().splitlines() if line.strip()]
        shipped = max(metric_length(solve_twophase(s), metric) for s in states)  # type: ignore[arg-type]
        turned = max(metric_length(solve_twophase(s[o]), metric) for s in states for o in ORIENTATIONS) \
            if orientations else None  # type: ignore[arg-type]
        out[path.name] = (shipped, turned)
    return out


def probe_moves(env: gym.Env, instance: int, order: list[int] | np.random.Generator) -> int | None:
    """Moves the reward probe spends to solve ``instance`` (``None``: it gets stuck); ``order`` is
    the move order, or a generator that draws a new one at every step."""
    inverse = [a ^ 1 for a in range(12)]  # U U' D D' ... : each action's inverse is its neighbour
    env.reset(options={"instance": instance})
    used = 0
    for _ in range(400):
        for a in (order.permutation(12).tolist() if isinstance(order, np.random.Generator) else order):
            _, reward, solved, _, _ = env.step(a)
            used += 1
            if solved:
                return used
            if reward > 0:
                break
            env.step(inverse[a])
            used += 1
        else:
            return None
    return None


def cycle_moves(env: gym.Env, instance: int, rng: np.random.Generator) -> int | None:
    """Moves the face-cycling probe spends to solve ``instance`` (``None``: it gets stuck)."""
    env.reset(options={"instance": instance})
    used, last = 0, -1
    while used < 400:
        for face in rng.permutation([f for f in range(0, 12, 2) if f != last]).tolist():
            gain = 0.0
            for turn in range(4):  # f, f2, f', back to where it started
                _, reward, solved, _, _ = env.step(face)
                used, gain = used + 1, gain + float(reward)
                if solved:
                    return used
                if turn < 3 and gain > 0:
                    break
            if gain > 0:
                last = face
                break
        else:
            return None
    return None


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--metric", default="quarter", choices=["quarter"])
    p.add_argument("--depths", type=int, nargs="+", default=[3, 4, 8])
    p.add_argument("--orders", type=int, default=24, help="move orders tried (12 rotations, then random ones)")
    p.add_argument("--seeds", type=int, default=50, help="random-order attempts per instance")
    p.add_argument("--budgets", type=int, nargs="+", default=[30, 34, 40, 46, 52])
    p.add_argument("--orientations", action="store_true", help="also the longest two-phase plan over 24 orientations")
    p.add_argument("--reward", default="heuristic", choices=["heuristic", "oracle", "sticker", "face"],
                   help="the reward the probes follow (oracle needs the optimal solver's tables)")
    args = p.parse_args()
    for name, (shipped, turned) in longest_twophase(args.metric, args.orientations).items():
        print(f"two-phase longest {name}: {shipped}" + (f", any orientation {turned}" if turned is not None else ""))
    rng = np.random.default_rng(0)
    orders = [list(np.roll(np.arange(12), s)) for s in range(min(12, args.orders))]
    orders += [list(rng.permutation(12)) for _ in range(args.orders - len(orders))]
    for depth in args.depths:
        env = gym.make(cubebench.TIERS["symbolic"], depth=depth, reward=args.reward, metric=args.metric,
                       max_steps=None, obs_format="indices")
        n = 12 if depth == 1 else 20
        spent = [m for order in orders for k in range(n) if (m := probe_moves(env, k, order)) is not None]
        print(f"{args.reward} probe, depth {depth}: solved {len(spent)} of {n * len(orders)} (instance x order); "
              f"fewest moves {min(spent, default=None)}, median {int(np.median(spent)) if spent else None}")
        for name, probe in (("random order per step", probe_moves), ("face cycling", cycle_moves)):
            tries = [probe(env, k, np.random.default_rng(1000 * k + s)) for k in range(n) for s in range(args.seeds)]
            within = ", ".join(f"{b}: {sum(t is not None and t <= b for t in tries)}" for b in args.budgets)
            fewest = min((t for t in tries if t is not None), default=None)
            print(f"  {name}, {len(tries)} attempts, fewest {fewest}, solved within budget {within}")


if __name__ == "__main__":
    main()
