"""Question-item generation speed: items per second per test and depth, exact labels included.

    python benchmarks/bench_items.py [--suite cube-bench] [--n 50] [--repeat 3] [--no-solver]

Prints (1) the one-time cost of the exact-distance oracle (the breadth-first balls), (2) items
per second for every test and depth of the suite, generated and generated-and-played by the oracle
answerer, and the whole suite's generation time (what ``cubebench run --suite cube-bench`` spends
planning), and (3) the cost of one exact distance
through the oracle against the optimal solver's ``optimal_distance`` on the same states, in the
same process (a ratio: the machine is shared), when the solver's tables are already on disk.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np


def timed(fn, repeat: int) -> float:
    """Median wall seconds of ``repeat`` calls."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def oracle_build() -> None:
    from cubebench.solver.oracle import DistanceOracle

    for metric in ("half", "quarter"):
        DistanceOracle(metric)  # compile (cached) and warm
        t = timed(lambda: DistanceOracle(metric), 1)
        print(f"oracle ball, {metric}-turn: {DistanceOracle(metric).size} states built in {t:.2f} s")


def oracle_ask(prompt):
    from cubebench.tasks.items import Reply

    return Reply(prompt.form.format(prompt.gold) if prompt.scored else "")


def per_test(suite_name: str, n: int, repeat: int) -> None:
    from cubebench.runner.suites import load_suite
    from cubebench.tasks.registry import get_test

    suite = load_suite(suite_name)
    print(f"\nper test and depth ({suite.metric}-turn, up to {n} items per cell, median of {repeat}): items/s "
          "generated (states certified, options and labels exact), and items/s generated and played by the "
          "oracle answerer (closed loop and recovery label each step's options as they are played)")
    print(f"{'test':<16}{'depth':>6}{'items':>7}{'generated/s':>13}{'+played/s':>11}")
    for name, grid in suite.fixed.items():
        test = get_test(name)
        for depth in grid.depths:
            k = min(n, grid.items_at(depth))
            test.items(depth, 2, seed=suite.seed, metric=suite.metric)  # warm the oracle and numba
            t_gen = timed(lambda: test.items(depth, k, seed=suite.seed + 1, metric=suite.metric), repeat)
            items = test.items(depth, k, seed=suite.seed + 1, metric=suite.metric)
            t_play = timed(lambda: [test.play(i, test.variants[0], oracle_ask) for i in items], repeat)
            print(f"{name:<16}{depth:>6}{k:>7}{k / t_gen:>13.0f}{k / (t_gen + t_play):>11.0f}")
    t0 = time.perf_counter()
    for name, grid in suite.fixed.items():
        for depth in grid.depths:
            get_test(name).items(depth, grid.items_at(depth), seed=suite.seed, metric=suite.metric)
    total = time.perf_counter() - t0
    count = sum(grid.items_at(d) for grid in suite.fixed.values() for d in grid.depths)
    print(f"\nwhole suite {suite.name!r}: {count} items generated with exact labels in {total:.2f} s")


def label_ratio(n: int) -> None:
    from cubebench.engine.facelets import SOLVED
    from cubebench.engine.kernels import apply_moves
    from cubebench.engine.moves import TABLE
    from cubebench.runner.run import optimal_tables_ready
    from cubebench.solver.optimal import optimal_distance
    from cubebench.solver.oracle import oracle

    if not optimal_tables_ready("half"):
        print("\n(optimal solver tables not built: no oracle/solver ratio; `python -m cubebench.solver.optimal build`)")
        return
    rng = np.random.default_rng(0)
    states = [apply_moves(SOLVED, TABLE, rng.integers(0, 18, int(rng.integers(1, 6)))) for _ in range(n)]
    optimal_distance(states[0], "half")  # load the tables
    o = oracle("half")
    t_oracle = timed(lambda: [o.distance(s) for s in states], 3)
    t_solver = timed(lambda: [optimal_distance(s, "half") for s in states], 3)
    assert [o.distance(s) for s in states] == [optimal_distance(s, "half") for s in states]
    print(f"\none exact distance (half-turn, {n} states at distance 0-5, same answers): oracle "
          f"{1e6 * t_oracle / n:.1f} us, optimal solver {1e6 * t_solver / n:.1f} us: {t_solver / t_oracle:.0f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", default="cube-bench")
    parser.add_argument("--n", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-solver", action="store_true", help="skip the comparison with the optimal solver")
    args = parser.parse_args()
    print(f"load average: {os.getloadavg()[0]:.1f}")
    oracle_build()
    per_test(args.suite, args.n, args.repeat)
    if not args.no_solver:
        label_ratio(200)
    print(f"load average: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
