"""Measure the deepcube agent's network and search against exact distances (the oracle measures, never teaches).

    python benchmarks/deepcube_eval.py                       # the shipped network, value error and search
    python benchmarks/deepcube_eval.py --weights runs/deepcube/value.npz --per-depth 20 --no-search
    python benchmarks/deepcube_eval.py --run runs/deepcube.sqlite   # a deepcube run's episodes, per depth

Value: for every exact quarter-turn distance 1..10 (seeded random walks whose distance the distance oracle,
:mod:`cubebench.solver.oracle`, certifies) and the certified shipped sets of depths 12, 16 and 20, the network's
estimate against the truth: mean estimate, mean absolute error, mean signed error, and the share it
overestimates.  Distances 11, 13-15 and 17-19 need the optimal solver's tables (hours on these machines): not
measured here.  Search: on the certified shipped sets (the public starts ``cubebench run --suite exp1`` plays),
the agent's own search with its defaults under the 20-move limit: solved, plan length against optimal,
expansions and wall time per episode.  ``--run``: a stored ``cubebench run`` of the agent, per depth: solved,
moves played against the certified distance, and the expansions and search time each episode's records hold
(every planning step's ``model_log``).  Prints one Markdown table each, and the CPU and load.
"""

from __future__ import annotations

import argparse
import os
import platform
from pathlib import Path

import numpy as np

from cubebench.agents.deepcube_agent import DeepCubeAgent
from cubebench.agents.deepcube_net import load_value_net
from cubebench.agents.deepcube_search import QUARTER_MOVES
from cubebench.engine.apply import apply_batch, apply_sequence
from cubebench.engine.facelets import SOLVED
from cubebench.engine.state import from_facelets
from cubebench.generators import NoInstanceSetError, shipped_instances
from cubebench.runner.store import open_run
from cubebench.solver.oracle import oracle

CERTIFIED_DEPTHS = (1, 2, 3, 4, 8, 12, 16, 20)


def walk_positions(distance: int, n: int, rng: np.random.Generator, tries: int = 200) -> np.ndarray:
    """``n`` positions at exact quarter-turn ``distance`` (<= the oracle's reach): random walks, kept when the
    oracle says so."""
    ball = oracle("quarter")
    found: list[np.ndarray] = []
    for _ in range(tries):
        length = distance + int(rng.integers(0, 3))
        states = np.tile(SOLVED, (64, 1))
        for _step in range(length):
            apply_batch(states, QUARTER_MOVES[rng.integers(0, 12, size=64)], out=states)
        for s in states:
            if ball.within_reach(s) == distance:
                found.append(s.copy())
        if len(found) >= n:
            break
    return np.stack(found[:n]) if found else np.zeros((0, 54), np.uint8)


def certified(depth: int, n: int) -> np.ndarray:
    try:
        rows = shipped_instances("quarter", depth)
    except NoInstanceSetError:
        return np.zeros((0, 54), np.uint8)
    return np.stack([from_facelets(r["state"]) for r in rows[:n]])


def value_table(net, per_depth: int, seed: int) -> list[str]:
    rng = np.random.default_rng(seed)
    lines = ["| distance | n | mean estimate | mean abs error | mean signed error | overestimates |",
             "|---:|---:|---:|---:|---:|---:|"]
    sets = [(d, walk_positions(d, per_depth, rng), "oracle") for d in range(1, 11)]
    sets += [(d, certified(d, per_depth), "certified set") for d in (12, 16, 20)]
    for d, states, _source in sets:
        if not len(states):
            continue
        est = net(states)
        err = est - d
        lines.append(f"| {d} | {len(states)} | {est.mean():.2f} | {np.abs(err).mean():.2f} | {err.mean():+.2f} | "
                     f"{(err > 0).mean():.0%} |")
    return lines


def search_table(net, per_depth: int, method: str, depths: tuple[int, ...] = CERTIFIED_DEPTHS, **options) -> list[str]:
    lines = ["| depth | solved | mean plan length (optimal = depth) | mean expansions | mean seconds | max seconds |",
             "|---:|---:|---:|---:|---:|---:|"]
    agent = DeepCubeAgent(net, method=method, **options)
    for d in depths:
        states = certified(d, per_depth)
        solved, lengths, expansions, seconds = 0, [], [], []
        for s in states:
            result = agent.search(s, 20)
            expansions.append(result.expansions)
            seconds.append(result.seconds)
            if result.plan is not None:
                end = apply_sequence(s, QUARTER_MOVES[result.plan]) if result.plan else s
                if not np.array_equal(end // 9, SOLVED // 9):
                    raise RuntimeError(f"a plan at depth {d} does not solve its start")
                solved += 1
                lengths.append(len(result.plan))
        mean_len = f"{np.mean(lengths):.2f}" if lengths else "-"
        lines.append(f"| {d} | {solved}/{len(states)} | {mean_len} | {np.mean(expansions):.0f} | "
                     f"{np.mean(seconds):.2f} | {np.max(seconds):.2f} |")
    return lines


def run_table(path: Path) -> list[str]:
    """Per depth of a stored run: solved, moves of the solved against their certified distance, search cost."""
    rows: dict[int, list] = {}
    with open_run(path, readonly=True) as store:
        for _key, record in store.records():
            searches = [log["search"] for step in record.steps for log in step.model_log if "search" in log]
            rows.setdefault(int(record.config["depth"]), []).append((
                record.solved, record.n_moves, record.config.get("certified_distance"),
                sum(s["expansions"] for s in searches), sum(s["seconds"] for s in searches), record.wall_s))
    lines = ["| depth | solved | moves - distance (solved) | expansions per episode (mean, max) | "
             "search s per episode (mean, max) | episode wall s (mean) |", "|---:|---:|---:|---:|---:|---:|"]
    for depth in sorted(rows):
        eps = rows[depth]
        extra = [m - d for ok, m, d, *_ in eps if ok and d is not None]
        exp, sec = [e[3] for e in eps], [e[4] for e in eps]
        excess = f"{np.mean(extra):+.2f}" if extra else "-"
        lines.append(f"| {depth} | {sum(e[0] for e in eps)}/{len(eps)} | {excess} | {np.mean(exp):.0f}, {max(exp)} | "
                     f"{np.mean(sec):.2f}, {max(sec):.2f} | {np.mean([e[5] for e in eps]):.2f} |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--weights", type=Path, default=None, help="a value.npz (default: the shipped network)")
    parser.add_argument("--per-depth", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-search", action="store_true", help="the value table only")
    parser.add_argument("--no-value", action="store_true", help="the search table only")
    parser.add_argument("--method", choices=("astar", "beam"), default="astar")
    parser.add_argument("--max-expansions", type=int, default=60_000)
    parser.add_argument("--max-seconds", type=float, default=30.0)
    parser.add_argument("--weight", type=float, default=0.8, help="A*'s weight on g")
    parser.add_argument("--batch", type=int, default=300, help="A*'s nodes expanded at once")
    parser.add_argument("--width", type=int, default=1000, help="beam width")
    parser.add_argument("--depths", default=",".join(map(str, CERTIFIED_DEPTHS)), help="search: the certified depths")
    parser.add_argument("--run", type=Path, default=None, help="summarise a stored deepcube run instead")
    args = parser.parse_args()
    if args.run is not None:
        print("\n".join(run_table(args.run)))
        return
    net = load_value_net(args.weights)
    print(f"network: {args.weights or 'shipped'}; trained {net.meta.get('step', '?')} steps, "
          f"{net.meta.get('train_seconds', '?')} s; {net.parameters:,} parameters")
    if not args.no_value:
        print("\n".join(value_table(net, args.per_depth, args.seed)))
    if not args.no_search:
        print()
        depths = tuple(int(d) for d in args.depths.split(","))
        print(f"search: {args.method}, weight {args.weight}, batch {args.batch}, width {args.width}, at most "
              f"{args.max_expansions} expansions and {args.max_seconds} s, 20 moves")
        print("\n".join(search_table(net, args.per_depth, args.method, depths, max_expansions=args.max_expansions,
                                     max_seconds=args.max_seconds, weight=args.weight, batch=args.batch,
                                     width=args.width)))
    load = os.getloadavg()
    print(f"\nCPU: {_cpu()}; load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; {platform.python_version()}")


def _cpu() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


if __name__ == "__main__":
    main()
