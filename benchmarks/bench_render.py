"""Observation throughput of the four tiers, as ratios against baselines from the same run.

Run: ``python benchmarks/bench_render.py`` (``--quick`` for a shorter run,
``--no-pyrender`` to skip the OpenGL renderer, ``--size N`` for other image
sizes).  Prints the load average (``uptime``) before and after, then two
tables:

1. frames per second of each renderer alone on random states, with its
   time per frame as a multiple of the core env's ``step`` (the baseline:
   what one observation costs relative to the engine work behind it);
2. ``gym.make(id).step`` rate per tier and form, as a multiple of
   ``gym.make("CubeBench-Symbolic-v0", obs_format="indices").step`` (the same
   wrappers minus the rendering).

Renders run in this one Python thread (one core).  pyrender's llvmpipe
rasteriser may use more threads: set ``LP_NUM_THREADS=1`` to pin it to one.
"""

from __future__ import annotations

import argparse
import os
import time
from typing import Callable

import gymnasium as gym
import numpy as np

import cubebench  # noqa: F401  (registers the ids)
from cubebench import CubeEnv
from cubebench.engine import SOLVED, TABLE, kernels
from cubebench.render.face import render_face
from cubebench.render.net import render_net
from cubebench.render.text import face_text_grid, net_text_grid, vertex_text_grids
from cubebench.render.vertex import render_vertex
from cubebench.tiers import FRONT


def best_rate(fn: Callable[[], int], repeats: int) -> float:
    """Items per second of the fastest of ``repeats`` runs (``fn`` returns its item count)."""
    fn()  # warm-up: layout caches, first GL frame, shader compilation
    best = 0.0
    for _ in range(repeats):
        t0 = time.perf_counter()
        n = fn()
        best = max(best, n / (time.perf_counter() - t0))
    return best


def random_colours(n: int) -> list[np.ndarray]:
    """Colour arrays of ``n`` random 30-move states, so no renderer sees one state twice in a row."""
    rng = np.random.default_rng(0)
    return [kernels.apply_moves(SOLVED, TABLE, rng.integers(0, 18, 30)) // 9 for _ in range(n)]


def uptime() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f}, {five:.2f}, {fifteen:.2f} on {os.cpu_count()} cores"


def core_step_rate(steps: int, repeats: int) -> float:
    """Steps/s of the bare core env (no wrappers, no checker): the render baseline."""
    env = CubeEnv(max_steps=None, view_actions=True)
    env.reset(seed=0)
    actions = np.random.default_rng(1).integers(0, env.action_space.n, steps)

    def run() -> int:
        for a in actions:
            env.step(int(a))
        return steps

    return best_rate(run, repeats)


def renderers(size: int, with_gl: bool) -> dict[str, Callable[[np.ndarray], object]]:
    out: dict[str, Callable[[np.ndarray], object]] = {
        "net image": lambda c: render_net(c, size),
        "face image": lambda c: render_face(c[FRONT], size),
        "vertex image, painter": lambda c: render_vertex(c, size),
    }
    if with_gl:
        from cubebench.render.vertex_gl import render_vertex_gl

        out["vertex image, pyrender"] = lambda c: render_vertex_gl(c, size)
    out["net text"] = net_text_grid
    out["face text"] = lambda c: face_text_grid(c[FRONT])
    out["vertex text"] = vertex_text_grids
    return out


def bench_renders(size: int, with_gl: bool, n: int, repeats: int) -> dict[str, float]:
    states = random_colours(n)
    rates = {}
    for label, fn in renderers(size, with_gl).items():
        count = max(n // 20, 20) if "pyrender" in label else n

        def run(fn: Callable[[np.ndarray], object] = fn, count: int = count) -> int:
            for c in states[:count]:
                fn(c)
            return count

        rates[label] = best_rate(run, repeats)
    return rates


def make_configs(size: int, with_gl: bool) -> dict[str, dict]:
    configs = {
        "Symbolic, indices (baseline)": {"id": "CubeBench-Symbolic-v0", "obs_format": "indices"},
        "Symbolic, onehot": {"id": "CubeBench-Symbolic-v0"},
        "Symbolic, text": {"id": "CubeBench-Symbolic-v0", "obs_format": "text"},
        "Visual, image": {"id": "CubeBench-Visual-v0", "image_size": size},
        "Visual, text": {"id": "CubeBench-Visual-v0", "obs_format": "text"},
        "Face, image": {"id": "CubeBench-Face-v0", "image_size": size},
        "Face, text": {"id": "CubeBench-Face-v0", "obs_format": "text"},
        "Vertex, image, painter": {"id": "CubeBench-Vertex-v0", "image_size": size},
        "Vertex, image, pyrender": {"id": "CubeBench-Vertex-v0", "image_size": size, "renderer": "pyrender"},
        "Vertex, text": {"id": "CubeBench-Vertex-v0", "obs_format": "text"},
    }
    if not with_gl:
        del configs["Vertex, image, pyrender"]
    return configs


def bench_steps(size: int, with_gl: bool, steps: int, repeats: int) -> dict[str, float]:
    rates = {}
    for label, cfg in make_configs(size, with_gl).items():
        kwargs = {k: v for k, v in cfg.items() if k != "id"}
        env = gym.make(cfg["id"], max_steps=None, **kwargs)
        env.reset(seed=0)
        n = max(steps // 20, 20) if "pyrender" in label else steps
        actions = np.random.default_rng(2).integers(0, env.action_space.n, n)

        def run(env: gym.Env = env, actions: np.ndarray = actions) -> int:
            for a in actions:
                env.step(int(a))
            return len(actions)

        rates[label] = best_rate(run, repeats)
    return rates


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer frames and repeats")
    ap.add_argument("--no-pyrender", action="store_true", help="skip the OpenGL vertex renderer")
    ap.add_argument("--size", type=int, default=224, help="image side in pixels")
    args = ap.parse_args()
    repeats, n = (3, 400) if args.quick else (5, 2000)
    with_gl = not args.no_pyrender
    print(f"before: {uptime()}; image {args.size}x{args.size}; LP_NUM_THREADS={os.environ.get('LP_NUM_THREADS', 'unset')}")
    base = core_step_rate(n * 5, repeats)
    print(f"baseline: CubeEnv.step (core env, no wrappers) {base:,.0f} steps/s = {1e6 / base:.1f} us")
    print(f"{'renderer':32s} {'frames/s':>10s} {'us/frame':>9s}  cost vs core step")
    for label, rate in bench_renders(args.size, with_gl, n, repeats).items():
        print(f"{label:32s} {rate:10,.0f} {1e6 / rate:9.1f}  {base / rate:6.1f}x")
    steps = bench_steps(args.size, with_gl, n * 2, repeats)
    ref = steps["Symbolic, indices (baseline)"]
    print(f"{'gym.make(...).step':32s} {'steps/s':>10s} {'us/step':>9s}  time vs Symbolic indices")
    for label, rate in steps.items():
        print(f"{label:32s} {rate:10,.0f} {1e6 / rate:9.1f}  {ref / rate:6.2f}x")
    print(f"after: {uptime()}")


if __name__ == "__main__":
    main()
