"""Benchmark of the two-phase solver (cubebench.solver.twophase): speed and solution length.

Solves seeded random states (30 random face turns each) and short scrambles, and prints the median, 90th
percentile and longest solve time and the solution lengths. When the ``kociemba`` package (Kociemba's algorithm in
C, GPL-2.0, not a dependency) is importable, it solves the same states in the same run, alternating with ours state
by state so load hits both alike, and the table adds the ratio of the medians and how many solutions agree move for
move. The load average is printed beside the figures: the machines this runs on are shared.

``--reference FILE`` instead writes kociemba's solutions of a fixed set of states (random ones, short scrambles,
cubes inside <U, D, R2, L2, F2, B2>, one cube held 24 ways) to FILE: tests/engine/twophase_reference.json, which
the tests hold cubebench's solver to, move for move, with no C package installed.

Examples::

    python benchmarks/bench_twophase.py                  # 500 random states, 200 short scrambles
    python benchmarks/bench_twophase.py --random 2000 --seed 7
    python benchmarks/bench_twophase.py --reference tests/engine/twophase_reference.json   # needs kociemba
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from typing import Callable

import numpy as np

from cubebench.engine import ORIENTATIONS, SOLVED, TABLE, kernels
from cubebench.engine.moves import MOVE_INDEX
from cubebench.engine.scramble import scramble
from cubebench.engine.notation import parse_array
from cubebench.engine.state import relabel_to_centres, to_facelets, validate_state
from cubebench.solver.twophase import MAX_SOLUTION_LENGTH, solve_twophase, tables


def _states(count: int, length: int, rng: np.random.Generator) -> list[np.ndarray]:
    return [kernels.apply_moves(SOLVED, TABLE, np.asarray(scramble(length, "half", rng), dtype=np.int64))
            for _ in range(count)]


def _kociemba() -> Callable[[np.ndarray], str] | None:
    """kociemba behind the same checks as ``solve_twophase`` (validation, the engine's replay), so that both
    columns time what a caller gets (the checks are most of a short scramble's time)."""
    try:
        import kociemba
    except ImportError:
        return None

    def solve(state: np.ndarray) -> str:
        state = validate_state(state)
        solution = kociemba.solve(relabel_to_centres(state), max_depth=MAX_SOLUTION_LENGTH)
        if not kernels.is_solved(kernels.apply_moves(state, TABLE, parse_array(solution))):
            raise AssertionError(f"kociemba's {solution!r} does not solve the cube")
        return solution

    return solve


def _timed(solve: Callable[[np.ndarray], str], state: np.ndarray) -> tuple[float, str]:
    start = time.perf_counter()
    solution = solve(state)
    return time.perf_counter() - start, solution


def _row(name: str, times: list[float], solutions: list[str]) -> str:
    ms = sorted(1000 * t for t in times)
    lengths = [len(s.split()) for s in solutions]
    return (f"| {name} | {statistics.median(ms):.1f} | {ms[int(0.9 * (len(ms) - 1))]:.1f} | {ms[-1]:.1f} | "
            f"{statistics.mean(lengths):.2f} | {min(lengths)}-{max(lengths)} |")


def run(label: str, states: list[np.ndarray], reference: Callable[[np.ndarray], str] | None) -> None:
    solvers: dict[str, Callable[[np.ndarray], str]] = {"cubebench two-phase (numba)": solve_twophase}
    if reference is not None:
        solvers["kociemba 1.2.1 (C)"] = reference
    times: dict[str, list[float]] = {name: [] for name in solvers}
    found: dict[str, list[str]] = {name: [] for name in solvers}
    for state in states:
        for name, solve in solvers.items():
            seconds, solution = _timed(solve, state)
            times[name].append(seconds)
            found[name].append(solution)
    print(f"\n{label}: {len(states)} states, load average {os.getloadavg()[0]:.2f} at the end\n")
    print("| solver | median ms | p90 ms | max ms | mean turns | turns |\n|---|---|---|---|---|---|")
    for name in solvers:
        print(_row(name, times[name], found[name]))
    if reference is not None:
        ours, theirs = found.values()
        ratio = statistics.median(times["kociemba 1.2.1 (C)"]) / statistics.median(times["cubebench two-phase (numba)"])
        same = sum(a == b for a, b in zip(ours, theirs))
        print(f"\nmedian time ratio (kociemba / cubebench): {ratio:.2f}; identical solutions: {same}/{len(states)}")


def _g1_states(count: int, rng: np.random.Generator) -> list[np.ndarray]:
    moves = np.array([MOVE_INDEX[m] for m in ("U", "U2", "U'", "D", "D2", "D'", "R2", "L2", "F2", "B2")])
    return [kernels.apply_moves(SOLVED, TABLE, rng.choice(moves, size=int(rng.integers(1, 21))).astype(np.int64))
            for _ in range(count)]


def write_reference(path: str, seed: int) -> None:
    """kociemba's solutions of a fixed, seeded set of states, for the tests."""
    solve = _kociemba()
    if solve is None:
        raise SystemExit("--reference needs the kociemba package (pip install kociemba; it compiles a C extension)")
    import kociemba  # noqa: F401  (its version is recorded)
    from importlib.metadata import version

    rng = np.random.default_rng(seed)
    held = _states(1, 30, rng)[0]
    groups = {"random": _states(120, 30, rng), "short": [s for n in range(1, 9) for s in _states(10, n, rng)],
              "g1": _g1_states(40, rng), "held": [held[o] for o in ORIENTATIONS]}
    cases = [{"group": g, "facelets": to_facelets(s), "solution": solve(s)} for g, states in groups.items()
             for s in states if not kernels.is_solved(s)]  # kociemba answers a solved cube with 13 turns; we, ""
    source = (f"kociemba {version('kociemba')}, max_depth={MAX_SOLUTION_LENGTH}: "
              f"python benchmarks/bench_twophase.py --reference {path} --seed {seed}")
    with open(path, "w", encoding="utf-8") as f:  # a case a line, so a diff shows which answers changed
        f.write(f'{{"source": {json.dumps(source)},\n"cases": [\n')
        f.write(",\n".join(json.dumps(case) for case in cases) + "\n]}\n")
    print(f"wrote {len(cases)} cases to {path}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--random", type=int, default=500, help="random states (30 random turns each)")
    parser.add_argument("--short", type=int, default=200, help="short scrambles (1 to 8 random turns)")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--reference", metavar="FILE", help="write kociemba's solutions of a fixed set of states")
    args = parser.parse_args(argv)
    if args.reference:
        write_reference(args.reference, args.seed)
        return
    print(f"load average {os.getloadavg()[0]:.2f} at the start")
    start = time.perf_counter()
    tables()
    solve_twophase(_states(1, 30, np.random.default_rng(0))[0])  # compile or load the numba code
    print(f"tables and code ready in {time.perf_counter() - start:.1f} s (cached after the first run)")
    reference = _kociemba()
    if reference is None:
        print("kociemba is not importable: cubebench's solver alone")
    rng = np.random.default_rng(args.seed)
    run("random states", _states(args.random, 30, rng), reference)
    short = [state for n in range(1, 9) for state in _states(args.short // 8, n, rng)]
    run("short scrambles (1-8 turns)", short, reference)
    run("cubes in <U, D, R2, L2, F2, B2> (1-20 random turns of it)", _g1_states(args.short, rng), reference)


if __name__ == "__main__":
    main()
