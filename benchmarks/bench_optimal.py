"""Benchmark of the exact optimal solver (cubebench.solver.optimal).

Prints a table: table build time and size, solve time by distance (scrambles
of 1..N moves, grouped by their certified distance), random states, nodes per
second, and -- when the optional ``rubikoptimal`` package (module ``optimal``)
is importable -- RubikOptimal on the same states in the same run.  The load
average is printed next to every timing: the machines this runs on are shared.

Examples::

    python benchmarks/bench_optimal.py                       # half-turn metric, depths 1..16
    python benchmarks/bench_optimal.py --max-depth 18 --random 5 --time-limit 600
    python benchmarks/bench_optimal.py --metric quarter --max-depth 14
    python benchmarks/bench_optimal.py --max-depth 0 --instances benchmarks/instances/half-d16-n20.jsonl
    python benchmarks/bench_optimal.py --rebuild             # also time a from-scratch table build
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cubebench.engine.cubie import CubieCube, to_state  # noqa: E402
from cubebench.engine.kernels import apply_moves  # noqa: E402
from cubebench.engine.moves import TABLE  # noqa: E402
from cubebench.curriculum import load_instance_file  # noqa: E402
from cubebench.engine.state import SOLVED, from_facelets, to_facelets  # noqa: E402
from cubebench.solver.optimal import SolverTimeout, ensure_tables, lower_bound_batch, solve_optimal  # noqa: E402
from cubebench.solver.optimal import table_cache  # noqa: E402


def load() -> str:
    return "load {:.2f}".format(os.getloadavg()[0])


def scramble(rng: np.random.Generator, n: int, metric: str) -> np.ndarray:
    """``n`` random moves, never the same face twice in a row."""
    moves, last = [], -1
    allowed = [m for m in range(18) if metric == "half" or m % 3 != 1]
    while len(moves) < n:
        m = int(rng.choice(allowed))
        if m // 3 != last:
            moves.append(m)
            last = m // 3
    return apply_moves(SOLVED, TABLE, np.asarray(moves, dtype=np.int64))


def random_state(rng: np.random.Generator) -> np.ndarray:
    """A uniformly random reachable cube (random cubies with matching parities)."""
    while True:
        cp, ep = rng.permutation(8), rng.permutation(12)
        co, eo = rng.integers(0, 3, 8), rng.integers(0, 2, 12)
        co[7] = (-co[:7].sum()) % 3
        eo[11] = eo[:11].sum() % 2
        try:
            return to_state(CubieCube(cp.astype(np.int8), co.astype(np.int8), ep.astype(np.int8), eo.astype(np.int8)))
        except ValueError:
            continue  # odd parity mismatch: draw again


def rubikoptimal():
    """RubikOptimal's solver module, or None with the reason."""
    try:
        import optimal.solver as sv  # type: ignore[import-not-found]
        return sv, ""
    except Exception as exc:  # noqa: BLE001 - any import failure means "not available"
        return None, f"rubikoptimal not importable ({type(exc).__name__}: {exc}); pip install RubikOptimal (its tables take hours on CPython)"


def time_build(metric: str) -> None:
    with tempfile.TemporaryDirectory(prefix="cubebench-bench-") as tmp:
        old = os.environ.get(table_cache.ENV_VAR)
        os.environ[table_cache.ENV_VAR] = tmp
        from cubebench.solver.optimal import pruning as T

        T.forget()
        t0, c0 = time.perf_counter(), time.process_time()
        ensure_tables(metric, progress=True)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        size = sum(p.stat().st_size for p in Path(tmp).rglob("*.npy"))
        print(f"fresh build ({metric}): {wall:.1f} s wall, {cpu:.1f} s CPU, {size / 2**20:.0f} MiB on disk, {load()}")
        T.forget()
        if old is None:
            del os.environ[table_cache.ENV_VAR]
        else:
            os.environ[table_cache.ENV_VAR] = old


def cached_tables() -> None:
    total = 0
    for path in sorted(table_cache.cache_dir().glob("*.npy")):
        meta = table_cache.read_meta(path.name.rsplit("-v", 1)[0]) or {}
        total += path.stat().st_size
        if "build_seconds" in meta:
            print(f"  {path.name}: {path.stat().st_size / 2**20:.0f} MiB, built in {meta['build_seconds']} s")
    print(f"  all tables: {total / 2**20:.0f} MiB in {table_cache.cache_dir()}")


def row(label: str, results: list[tuple[int, float, int]], ro: list[float] | None) -> None:
    if not results:
        return
    times = [t for _, t, _ in results]
    nodes = sum(n for _, _, n in results)
    dists = sorted({d for d, _, _ in results})
    rate = nodes / max(sum(times), 1e-9) / 1e6
    line = (f"{label:>10} | {len(results):3d} | {','.join(map(str, dists)):>9} | {statistics.median(times):8.3f} | "
            f"{max(times):8.3f} | {rate:7.2f}")
    if ro:
        line += f" | {statistics.median(ro):8.3f} | {max(ro):8.3f} | {statistics.median(ro) / statistics.median(times):6.1f}x"
    print(line + f" | {load()}", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--metric", choices=("half", "quarter"), default="half")
    ap.add_argument("--max-depth", type=int, default=16, help="scramble lengths 1..N")
    ap.add_argument("--per-depth", type=int, default=5, help="scrambles per length")
    ap.add_argument("--random", type=int, default=0, help="uniformly random states to solve")
    ap.add_argument("--instances", metavar="FILE", action="append", default=[],
                    help="also solve every state of a certified instance file (e.g. benchmarks/instances/"
                         "half-d16-n20.jsonl: states of exactly that distance), without its scramble")
    ap.add_argument("--time-limit", type=float, default=300.0, help="seconds per state")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--rebuild", action="store_true", help="time a fresh table build in a temporary cache")
    ap.add_argument("--verbose", action="store_true", help="print every solve")
    ap.add_argument("--no-rubikoptimal", action="store_true", help="skip the RubikOptimal comparison")
    args = ap.parse_args()

    print(f"# optimal solver benchmark, metric={args.metric}, {os.cpu_count()} CPUs, {load()}")
    if args.rebuild:
        time_build(args.metric)
    t0 = time.perf_counter()
    ensure_tables(args.metric, progress=True)
    print(f"tables ready in {time.perf_counter() - t0:.1f} s (load or build), {load()}")
    cached_tables()
    sv, why = (None, "skipped (--no-rubikoptimal)") if args.no_rubikoptimal else rubikoptimal()
    if sv is None:
        print(f"RubikOptimal comparison: {why}")
    solve_optimal(scramble(np.random.default_rng(0), 8, args.metric), args.metric)  # compile / warm up
    batch = np.stack([random_state(np.random.default_rng(i)) for i in range(2000)])
    lower_bound_batch(batch[:10], args.metric)
    t = time.perf_counter()
    lb = lower_bound_batch(batch, args.metric)
    dt = time.perf_counter() - t
    print(f"lower_bound_batch: {len(batch) / dt:,.0f} random states/s (mean bound {lb.mean():.2f}), {load()}")

    rng = np.random.default_rng(args.seed)
    head = " scramble  |   n | distances | median s |    max s | Mnodes/s"
    if sv is not None:
        head += " | RO med s |  RO max s | speedup"
    print(head)
    jobs = [(f"{d} moves", [scramble(rng, d, args.metric) for _ in range(args.per_depth)])
            for d in range(1, args.max_depth + 1)]
    for path in args.instances:
        insts = [i for i in load_instance_file(path) if i.metric == args.metric]
        jobs.append((Path(path).stem, [from_facelets(i.state) for i in insts]))
    if args.random:
        jobs.append(("random", [random_state(rng) for _ in range(args.random)]))
    for label, states in jobs:
        results, ro, timeouts = [], [], 0
        for s in states:
            try:
                sol = solve_optimal(s, args.metric, time_limit=args.time_limit)
            except SolverTimeout as exc:
                timeouts += 1
                print(f"    timeout after {exc.seconds:.0f} s (distance >= {exc.lower_bound}) on {to_facelets(s)}")
                continue
            results.append((sol.distance, sol.seconds, sol.nodes))
            if args.verbose:
                print(f"    {label}: distance {sol.distance}, {sol.seconds:.2f} s, {sol.nodes:,} nodes, "
                      f"{to_facelets(s)}, {load()}", flush=True)
            if sv is not None and args.metric == "half":
                t = time.perf_counter()
                out = sv.solve(to_facelets(s))
                ro.append(time.perf_counter() - t)
                if f"({sol.distance}f*)" not in out:
                    print(f"    DISTANCE MISMATCH: ours {sol.distance}, RubikOptimal {out}")
        row(label, results, ro)
        if timeouts:
            print(f"    {timeouts} of {len(states)} states timed out at {args.time_limit} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
