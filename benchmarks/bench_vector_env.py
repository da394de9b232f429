"""Env-steps per second: the native CubeVectorEnv against SyncVectorEnv and Jumanji, in one run.

    python benchmarks/bench_vector_env.py            # native + SyncVectorEnv (+ Jumanji if importable)
    python benchmarks/bench_vector_env.py --json out.json
    python benchmarks/bench_vector_env.py --only partial   # just the Face and Vertex rows

The partial tiers (Face, Vertex) are measured at 1,024 envs in their compact
``indices`` form and their ``image`` form (at ``--image-size``, 64 by default,
a CNN's input), each beside a ``SyncVectorEnv`` of single envs of the same tier
and form: the same observations, so both sides do the same work.  Their
random actions include the six view rotations.

Jumanji is optional and never a dependency of this project.  To include it,
install JAX (CPU) and Jumanji into a separate folder and name it with
``--jax-path`` (appended to ``sys.path``, so this environment's own NumPy and
Gymnasium still come first):

    python -m pip install --target /tmp/jaxpkgs "jax[cpu]" jumanji
    python benchmarks/bench_vector_env.py --jax-path /tmp/jaxpkgs

The native env runs its default kernels (AVX-512 VBMI where the CPU has it)
and, in the ``portable`` rows, the portable ones a CPU without VBMI runs.
Every configuration steps uniformly random actions (drawn before timing) on
depth-4 scrambles with the 20-move limit and NEXT_STEP autoreset, so resets
are included.  The machine load (``os.getloadavg``) is printed before and
after: on a shared machine only the ratios measured in the same run mean much.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any, Callable

import numpy as np

DEPTH = 4


def load() -> str:
    return "load average %.2f %.2f %.2f on %d cores" % (*os.getloadavg(), os.cpu_count() or 0)


def rate(step: Callable[[int], Any], n_envs: int, min_time: float, max_iters: int) -> float:
    """Env-steps/s of ``step(k)`` (one batched step per call), after one warm-up call."""
    step(0)
    iters, t0 = 0, time.perf_counter()
    while iters < max_iters and (iters < 3 or time.perf_counter() - t0 < min_time):
        step(iters + 1)
        iters += 1
    return n_envs * iters / (time.perf_counter() - t0)


def actions(n_envs: int, n_actions: int, k: int = 8) -> np.ndarray:
    return np.random.default_rng(0).integers(n_actions, size=(k, n_envs))


def bench_native(n_envs: int, parallel: bool, copy: bool, min_time: float, vbmi: bool | None = None) -> float:
    """``CubeVectorEnv`` steps (``vbmi=False``: the portable kernels, as on a CPU without AVX-512 VBMI)."""
    from cubebench.envs.vector_env import CubeVectorEnv

    env = CubeVectorEnv(n_envs, depth=DEPTH, parallel=parallel, copy=copy, vbmi=vbmi)
    env.reset(seed=0)
    acts = actions(n_envs, 12)
    return rate(lambda k: env.step(acts[k % len(acts)]), n_envs, min_time, 10_000)


def bench_sync(n_envs: int, min_time: float) -> float:
    from gymnasium.vector import SyncVectorEnv

    import cubebench
    from cubebench.generators import ScrambleGenerator

    # the same uncertified scrambles as the native env's default, so both sides do the same work
    env = SyncVectorEnv([lambda: cubebench.make_cube_env("symbolic", depth=DEPTH, generator=ScrambleGenerator())
                         for _ in range(n_envs)])
    env.reset(seed=0)
    acts = actions(n_envs, 12)
    return rate(lambda k: env.step(acts[k % len(acts)]), n_envs, min_time, 10_000)


def bench_jumanji(n_envs: int, min_time: float, scan: int = 0) -> float | str:
    """Jumanji RubiksCube-v0, ``jax.jit(jax.vmap(env.step))`` (or ``lax.scan`` over ``scan`` steps)."""
    try:
        import jax
        import jumanji
    except ImportError as err:
        return f"skipped: {err.name} is not importable (see this file's docstring to include it)"
    env = jumanji.make("RubiksCube-v0")
    keys = jax.random.split(jax.random.PRNGKey(0), n_envs)
    state, _ = jax.jit(jax.vmap(env.reset))(keys)
    spec = env.action_spec
    maxima = np.asarray(spec.num_values)
    acts = np.stack([np.random.default_rng(i).integers(maxima, size=(n_envs, len(maxima))) for i in range(8)])
    acts = jax.numpy.asarray(acts, dtype=jax.numpy.int32)
    vstep = jax.vmap(env.step)
    if scan:
        def run(s, a):
            def body(carry, _):
                nxt, _ = vstep(carry, a)
                return nxt, None
            return jax.lax.scan(body, s, None, length=scan)[0]
        fn = jax.jit(run)
        holder = [state]

        def step(k: int) -> None:
            holder[0] = fn(holder[0], acts[k % 8])
            jax.block_until_ready(holder[0])
        return rate(step, n_envs * scan, min_time, 1000)
    fn = jax.jit(vstep)
    holder = [state]

    def step(k: int) -> None:
        holder[0], ts = fn(holder[0], acts[k % 8])
        jax.block_until_ready(ts)
    return rate(step, n_envs, min_time, 1000)


def bench_partial(tier: str, form: str, n_envs: int, image_size: int, min_time: float, native: bool,
                  copy: bool = True) -> float:
    """A partial tier in ``form``: the native env (``native``; ``copy=False``: one observation buffer, whose
    images keep their background, so only stickers are painted) or a ``SyncVectorEnv`` of single envs."""
    import cubebench
    from cubebench.envs.vector_env import CubeVectorEnv
    from cubebench.generators import ScrambleGenerator

    kwargs: dict[str, Any] = dict(depth=DEPTH, obs_format=form, image_size=image_size)
    if native:
        env: Any = CubeVectorEnv(n_envs, tier=tier, copy=copy, **kwargs)
    else:
        from gymnasium.vector import SyncVectorEnv

        env = SyncVectorEnv([lambda: cubebench.make_cube_env(tier, generator=ScrambleGenerator(), **kwargs)
                             for _ in range(n_envs)])
    env.reset(seed=0)
    acts = actions(n_envs, int(env.single_action_space.n))
    return rate(lambda k: env.step(acts[k % len(acts)]), n_envs, min_time, 10_000)


def partial_runs(min_time: float, image_size: int) -> list[tuple[str, Callable[[], float | str]]]:
    """Native and SyncVectorEnv rows of every partial tier in each of its batched forms, at 1,024 envs."""
    from cubebench.tiers import TIER_SPECS

    runs: list[tuple[str, Callable[[], float | str]]] = []
    for tier, spec in TIER_SPECS.items():
        for form in spec.vector_forms if spec.partial else ():
            for native in (True, False):
                name = f"{tier}_{form}_1024_{'native' if native else 'sync'}"
                runs.append((name, lambda t=tier, f=form, nat=native: bench_partial(t, f, 1024, image_size,
                                                                                       min_time, nat)))
            if form == "image":
                runs.append((f"{tier}_{form}_1024_native_nocopy",
                             lambda t=tier, f=form: bench_partial(t, f, 1024, image_size, min_time, True, False)))
    return runs


def main(argv: list[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--min-time", type=float, default=2.0, help="seconds per configuration")
    p.add_argument("--only", choices=("all", "symbolic", "partial"), default="all",
                   help="the Symbolic (and Jumanji) rows, the partial tiers' rows, or both (default)")
    p.add_argument("--image-size", type=int, default=64, help="image side of the partial tiers' image rows")
    p.add_argument("--json", help="also write the results here")
    p.add_argument("--jax-path", help="folder holding jax and jumanji (appended to sys.path)")
    args = p.parse_args(argv)
    if args.jax_path:
        sys.path.append(args.jax_path)
    from cubebench.engine import simd

    results: dict[str, Any] = {"load_before": load(), "vbmi": simd.HAS_VBMI}
    print(results["load_before"], "| AVX-512 VBMI kernels:", simd.HAS_VBMI)
    runs: list[tuple[str, Callable[[], float | str]]] = [
        ("native_1024_serial", lambda: bench_native(1024, False, True, args.min_time)),
        ("sync_1024", lambda: bench_sync(1024, args.min_time)),
        ("native_65536_serial", lambda: bench_native(65536, False, True, args.min_time)),
        ("native_65536_parallel", lambda: bench_native(65536, True, True, args.min_time)),
        ("native_65536_parallel_nocopy", lambda: bench_native(65536, True, False, args.min_time)),
        ("native_65536_portable_serial", lambda: bench_native(65536, False, True, args.min_time, vbmi=False)),
        ("native_65536_portable_parallel", lambda: bench_native(65536, True, True, args.min_time, vbmi=False)),
        ("jumanji_65536_vmap", lambda: bench_jumanji(65536, args.min_time)),
        ("jumanji_65536_scan32", lambda: bench_jumanji(65536, args.min_time, scan=32)),
    ] if args.only != "partial" else []
    if args.only != "symbolic":
        runs += partial_runs(args.min_time, args.image_size)
    for name, fn in runs:
        value = fn()
        results[name] = value
        shown = f"{value / 1e6:10.3f} M env-steps/s" if isinstance(value, float) else value
        print(f"{name:32s} {shown}", flush=True)
    results["load_after"] = load()
    print(results["load_after"])
    _ratios(results)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(results, fh, indent=2)
    return results


def _ratios(r: dict[str, Any]) -> None:
    """The target ratios, from figures of this same run."""
    for key in [k for k in r if k.endswith("_1024_native")]:
        base = key.removesuffix("_native")
        nocopy = f"; copy=False {r[key + '_nocopy'] / r[base + '_sync']:.1f}x" if key + "_nocopy" in r else ""
        print(f"{base}: native / SyncVectorEnv {r[key] / r[base + '_sync']:.1f}x{nocopy} (target >= 20x)")
    if "native_1024_serial" not in r:
        return
    print(f"native / SyncVectorEnv at 1,024 envs: {r['native_1024_serial'] / r['sync_1024']:.1f}x (target >= 10x)")
    best = max(r["native_65536_serial"], r["native_65536_parallel"])
    portable = max(r["native_65536_portable_serial"], r["native_65536_portable_parallel"])
    for key in ("jumanji_65536_vmap", "jumanji_65536_scan32"):
        if isinstance(r[key], float):
            print(f"native (copy=True, best of serial/parallel) / {key}: {best / r[key]:.1f}x (target >= 20x); "
                  f"portable kernels: {portable / r[key]:.1f}x")


if __name__ == "__main__":
    main()
