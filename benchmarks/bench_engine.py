"""Engine and env throughput, as ratios against baselines measured in the same run.

Run: ``python benchmarks/bench_engine.py`` (``--quick`` for a shorter run).
Prints one table; see docs/performance.md for recorded results.
"""

from __future__ import annotations

import argparse
import os
import time
from typing import Callable

import gymnasium as gym
import numba
import numpy as np

import cubebench  # noqa: F401  (registers the ids)
from cubebench.engine import SOLVED, TABLE, kernels
from cubebench.engine import simd
from cubebench.engine.apply import apply_batch

BYTES_PER_MOVE = 108  # read 54 + write 54 bytes: what any batched gather must move


def best_rates(fns: dict[str, Callable[[], int]], repeats: int) -> dict[str, float]:
    """Items per second of each function's fastest of ``repeats`` runs (each returns its item count).

    The functions' runs are interleaved, so a burst of load on a shared
    machine falls on all of them alike and the ratios between them hold.
    """
    for fn in fns.values():
        fn()  # warm-up (compilation, caches)
    best = dict.fromkeys(fns, 0.0)
    for _ in range(repeats):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            n = fn()
            best[name] = max(best[name], n / (time.perf_counter() - t0))
    return best


def best_rate(fn: Callable[[], int], repeats: int) -> float:
    """Items per second of the fastest of ``repeats`` runs of ``fn``."""
    return best_rates({"": fn}, repeats)[""]


def bench_single(repeats: int) -> dict[str, float]:
    rng = np.random.default_rng(0)
    seq = rng.integers(0, 18, size=1_000_000).astype(np.int64)
    short = seq[:20_000]

    def per_call() -> int:
        s = SOLVED
        for m in short:
            s = kernels.apply_move(s, TABLE, m)
        return len(short)

    def gather_python() -> int:
        s = SOLVED
        for m in short:
            s = s[TABLE[m]]
        return len(short)

    out = {
        "numpy gather, one move per Python call": best_rate(gather_python, repeats),
        "kernel, one move per call": best_rate(per_call, repeats),
        "portable kernel, whole sequence in one call": best_rate(
            lambda: (kernels.apply_moves(SOLVED, TABLE, seq), len(seq))[1], repeats),
    }
    if simd.HAS_VBMI:
        out["VBMI kernel, whole sequence in one call"] = best_rate(
            lambda: (simd.apply_moves_vbmi(SOLVED, seq, simd.INDEX64), len(seq))[1], repeats)
    return out


def bench_batch(batch: int, repeats: int) -> dict[str, float]:
    rng = np.random.default_rng(1)
    states = np.tile(SOLVED, (batch, 1))
    out = np.empty_like(states)
    moves = rng.integers(0, 18, size=batch).astype(np.int64)
    copy_dst = np.empty_like(states)

    def numpy_fancy() -> int:
        np.take_along_axis(states, TABLE[moves].astype(np.intp), axis=1)
        return batch

    def copy() -> int:
        np.copyto(copy_dst, states)
        return batch

    def run(kernel, *tables, target=out) -> Callable[[], int]:
        def go() -> int:
            kernel(states, moves, *tables, target)
            return batch
        return go

    threads = numba.get_num_threads()
    res = {
        "memory copy (moves/s implied at 108 B/move)": best_rate(copy, repeats),
        "numpy take_along_axis": best_rate(numpy_fancy, repeats),
        "portable kernel, serial": best_rate(run(kernels.apply_batch_serial, TABLE), repeats),
        f"portable kernel, parallel ({threads} threads)": best_rate(run(kernels.apply_batch_parallel, TABLE), repeats),
    }
    if simd.HAS_VBMI:
        res["VBMI kernel, serial"] = best_rate(run(simd.apply_batch_vbmi, simd.INDEX64), repeats)
        res["VBMI kernel, serial, in place"] = best_rate(run(simd.apply_batch_vbmi, simd.INDEX64, target=states), repeats)
        res[f"VBMI kernel, parallel ({threads} threads)"] = best_rate(run(simd.apply_batch_vbmi_parallel, simd.INDEX64), repeats)
    res["apply_batch (what the envs call)"] = best_rate(lambda: (apply_batch(states, moves, out=out), batch)[1], repeats)
    return res


class DoNothingEnv(gym.Env):
    """The cheapest possible env with the same spaces, for the step-overhead baseline."""

    observation_space = gym.spaces.Box(0, 1, shape=(54, 6), dtype=np.uint8)
    action_space = gym.spaces.Discrete(12)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return np.zeros((54, 6), np.uint8), {}

    def step(self, action):
        return np.zeros((54, 6), np.uint8), 0.0, False, False, {}


def bench_env(steps: int, repeats: int) -> dict[str, float]:
    """Steps/s of the Symbolic id and of a do-nothing env, both from ``gym.make`` with its default wrappers."""
    gym.register("Bench-DoNothing-v0", entry_point=DoNothingEnv)
    actions = np.random.default_rng(2).integers(0, 12, size=steps)

    def stepper(env: gym.Env) -> Callable[[], int]:
        env.reset(seed=0)

        def run() -> int:
            for a in actions:
                env.step(int(a))
            return steps
        return run

    return best_rates({
        "gym.make do-nothing env": stepper(gym.make("Bench-DoNothing-v0")),
        "gym.make CubeBench-Symbolic-v0": stepper(gym.make("CubeBench-Symbolic-v0", max_steps=None)),
    }, repeats)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    repeats = 3 if args.quick else 7
    load = os.getloadavg()
    print(f"numba threads: {numba.get_num_threads()}, cores: {os.cpu_count()}, AVX-512 VBMI: {simd.HAS_VBMI}, "
          f"load avg (1 min) at start: {load[0]:.2f}")
    print(f"{'benchmark':58s} {'rate':>14s}  ratio")
    single = bench_single(repeats)
    base = single["numpy gather, one move per Python call"]
    for k, v in single.items():
        print(f"{k:58s} {v / 1e6:10.2f} M/s  {v / base:6.1f}x numpy gather")
    sizes = (1024, 65_536) if args.quick else (1024, 65_536, 1_048_576)
    for b in sizes:
        res = bench_batch(b, repeats)
        copy = res["memory copy (moves/s implied at 108 B/move)"]
        print(f"-- batch B={b:,} (copy baseline {copy * 54 * 2 / 1e9:.2f} GB/s)")
        for k, v in res.items():
            print(f"{k:58s} {v / 1e6:10.2f} M/s  {v / copy:6.2f}x copy")
    env = bench_env(20_000 if args.quick else 100_000, repeats)
    base = env["gym.make do-nothing env"]
    for k, v in env.items():
        print(f"{k:58s} {v / 1e3:10.1f} k/s  step time {base / v:5.2f}x do-nothing")
    print(f"load avg (1 min) at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
