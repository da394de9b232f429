"""Does training with fewer torch threads than cores help on a busy machine?  A measurement of the real program.

    python -m cubebench.training.thread_bench --out runs/thread-bench --threads 1,2 --burners 0,2

For every number of CPU burners (processes spinning ``while 1: pass``, started beside the run to make the machine
busy in a known way) and every thread count, it runs ``python -m cubebench.training.policy_sft`` for a few steps
(the default base, the same data for every run, made once) and reads the seconds of each step from its
``training.json``.  The first step of a run is left out (it warms up); the table gives the median of the others,
the CPU and the load average before and after each run.  Runs alternate between the settings so that a change in
the machine's own load falls on all of them.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Sequence

from .policy_data import DataRequest, make_data
from .run_state import cpu_name

__all__ = ["main"]

BURNER = "while 1: pass"


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m cubebench.training.thread_bench", description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("--out", type=Path, default=Path("runs/thread-bench"))
    p.add_argument("--threads", default="1,2", help="torch thread counts to compare")
    p.add_argument("--burners", default="0,2", help="numbers of CPU burners beside the run")
    p.add_argument("--steps", type=int, default=4, help="steps a run (the first is left out)")
    p.add_argument("--batch-size", type=int, default=4)
    p.add_argument("--repeats", type=int, default=1)
    args = p.parse_args(argv)
    threads = [int(t) for t in args.threads.split(",")]
    burners = [int(b) for b in args.burners.split(",")]
    if args.steps < 2 or min(threads) < 1 or min(burners) < 0:
        p.error("--steps is at least 2, --threads at least 1, --burners at least 0")
    request = DataRequest(starts_per_depth=2, probe_per_depth=1)
    make_data(args.out / "data", request)
    print(f"CPU: {cpu_name()}, {os.cpu_count()} cores; {args.steps} steps of {args.batch_size} a run", flush=True)
    rows = []
    for repeat in range(args.repeats):
        for count in burners:
            for n in threads if repeat % 2 == 0 else threads[::-1]:
                rows.append(_one_run(args, request, count, n, repeat))
                print(json.dumps(rows[-1]), flush=True)
    print("burners threads  median s/step  steps 2..n (s)  load before -> after")
    for row in rows:
        print(f"{row['burners']:7d} {row['threads']:7d}  {row['median']:13.1f}  {row['steps']}  "
              f"{row['load_before']} -> {row['load_after']}")
    return 0


def _one_run(args: argparse.Namespace, request: object, burners: int, threads: int, repeat: int) -> dict:
    out = args.out / f"b{burners}-t{threads}-r{repeat}"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    shutil.copytree(args.out / "data", out / "data")
    spinning = [subprocess.Popen([sys.executable, "-c", BURNER]) for _ in range(burners)]
    try:
        time.sleep(2.0 if burners else 0.0)
        before = _load()
        command = [sys.executable, "-m", "cubebench.training.policy_sft", "--out", str(out), "--steps",
                   str(args.steps), "--batch-size", str(args.batch_size), "--starts-per-depth", "2",
                   "--probe-per-depth", "1", "--eval-every", "0", "--save-every", str(args.steps), "--threads",
                   str(threads)]
        env = {**os.environ, "OMP_NUM_THREADS": str(threads)}
        started = time.monotonic()
        done = subprocess.run(command, env=env, capture_output=True, text=True)
        wall = time.monotonic() - started
        after = _load()
    finally:
        for proc in spinning:
            proc.kill()
            proc.wait()
    if done.returncode != 0:
        raise SystemExit(f"thread_bench: {' '.join(command)} failed:\n{done.stderr[-2000:]}")
    history = json.loads((out / "training.json").read_text())["history"]
    seconds = [round(h["seconds"], 1) for h in history[1:]]
    return {"burners": burners, "threads": threads, "repeat": repeat, "median": statistics.median(seconds),
            "steps": seconds, "wall_s": round(wall, 1), "load_before": before, "load_after": after}


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


if __name__ == "__main__":
    sys.exit(main())
