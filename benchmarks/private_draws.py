"""What a private draw costs, and what a walk that memorised the public sets scores on it (docs/results/episodes.md).

``python benchmarks/private_draws.py --seed 914723`` draws ``exp1``'s instances (8 depths x 20, quarter turns) as
``cubebench run --seed 914723`` does (:func:`cubebench.curriculum.certified_instances` with ``table_free=True``:
the distance oracle within its reach, the exact optimal solver beyond, whose tables are built on first use), timing
each depth, then plays against every public and private start the walk that memorised the public sets: solve
instance 1, undo, try 2, ... (blind), under the paper's budget (every depth's solutions, as many move calls as 20
steps carry) and under ours (the depth's own solutions, cut at its move budget).  The walk is played without an
env by :func:`cubebench.budgets.solved_by`, the floor's own function.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from cubebench.agents.scripted import move_calls
from cubebench.budgets import move_budget, solved_by
from cubebench.curriculum import certified_instances, load_instance_file
from cubebench.engine.notation import invert_sequence
from cubebench.engine.state import from_facelets
from cubebench.shipped import largest_instance_file
from cubebench.solver.oracle import oracle

DEPTHS = (1, 2, 3, 4, 8, 12, 16, 20)
METRIC = "quarter"
STEPS = 20


def quarter_turns(moves: list[str]) -> list[str]:
    """A move sequence as the env counts it in the quarter-turn metric (a half turn is two quarter turns)."""
    return [t for m in moves for t in ([m[0], m[0]] if m.endswith("2") else [m])]


def memorised(depth: int, n: int) -> list[str]:
    """The walk that memorised the first ``n`` public instances of ``depth``: each solution, then its undo."""
    turns: list[str] = []
    for instance in load_instance_file(largest_instance_file(METRIC, depth))[:n]:
        turns += invert_sequence(instance.scramble).split() + instance.scramble.split()
    return quarter_turns(turns)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=914723, help="the private seed (not 0: seed 0 is the public sets)")
    parser.add_argument("--instances", type=int, default=20)
    args = parser.parse_args()
    started = time.perf_counter()
    oracle(METRIC)
    print(f"distance oracle: {time.perf_counter() - started:.1f} s")
    private = {}
    for depth in DEPTHS:
        t0 = time.perf_counter()
        drawn = certified_instances(depth, METRIC, args.seed, args.instances, table_free=True)
        private[depth] = np.array([from_facelets(i.state) for i in drawn])
        print(f"depth {depth}: {len(drawn)} instances drawn in {time.perf_counter() - t0:.2f} s")
    print(f"the whole draw: {time.perf_counter() - started:.1f} s")
    calls = move_calls([t for d in DEPTHS for t in memorised(d, args.instances)])[:STEPS]
    paper = [t for call in calls for t in call.split()]
    print(f"\nthe memorised walk under paper: {len(paper)} quarter turns in {len(calls)} move calls\n")
    print("| depth | public, `paper` | private, `paper` | public, `strict` (budget) | private, `strict` |")
    print("|---|---|---|---|---|")
    for depth in DEPTHS:
        public = np.array([from_facelets(i.state) for i in load_instance_file(largest_instance_file(METRIC, depth))
                           [:args.instances]])
        budget = move_budget(depth, METRIC)
        strict = memorised(depth, args.instances)[:budget]
        cells = [f"{int((solved_by(walk, starts) >= 0).sum())}/{len(starts)}"
                 for walk, starts in ((paper, public), (paper, private[depth]), (strict, public), (strict, private[depth]))]
        print(f"| {depth} | {cells[0]} | {cells[1]} | {cells[2]} ({budget}) | {cells[3]} |")


if __name__ == "__main__":
    main()
