"""Overhead of an Inspect-driven episode against ``cubebench run``'s, on the same scripted replies.

    python benchmarks/bench_inspect.py [--episodes 8] [--steps 20] [--repeat 3]

Both sides play the same episodes (symbolic tier, certified depth-1 instances, ReAct agent) against the
scripted OpenAI-compatible server on 127.0.0.1, which replies ``observe()`` at every step, so every episode
runs its full step budget and the model costs nothing: what is measured is each path's own work.

- ours: the runner's ``play_episode`` with the ``openai-compatible`` client, one episode after another;
- inspect: ``inspect_ai.eval(cubebench/episode, agent=react)`` with Inspect's ``openai-api`` provider,
  ``max_samples=1`` (one episode at a time, as ours), again with Inspect's default concurrency, and once
  more one at a time without Inspect's realtime sample log (``log_realtime=False``, ``--no-log-realtime``:
  the live view's per-event buffer, Inspect's own cost); the eval's own start-up (task, log file) is
  inside its time.

Prints wall seconds per episode (median of ``--repeat``, the two sides alternated in the same process:
the machine is shared) and the ratio inspect / ours.  Needs the ``inspect`` and ``llm`` extras.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from typing import Callable

from inspect_ai import eval as inspect_eval
from inspect_ai.model import get_model

from cubebench.agents.llm.testing import ScriptedServer
from cubebench.bridges.inspect import episode
from cubebench.bridges.inspect.params import episode_suite
from cubebench.runner.execute import PlaySettings, play_episode
from cubebench.runner.instances import resolve_source
from cubebench.runner.plan import plan_episodes
from cubebench.runner.specs import AgentFactory, AgentSpec

REPLY = "Thought: look again\nAction: observe()"


def ours(episodes: int, steps: int) -> float:
    """Seconds for ``episodes`` episodes played by the runner."""
    suite = episode_suite("exp1", tier="symbolic", depths=1, instances=episodes, max_steps=steps)
    specs = plan_episodes(suite, resolve_source(suite, warn=False))
    with ScriptedServer([], default=REPLY) as server:
        factory = AgentFactory(AgentSpec(spec=f"openai-compatible:{server.base_url}:scripted"))
        t0 = time.perf_counter()
        for spec in specs:
            record = play_episode(spec, factory, PlaySettings(store_images=False))
            assert record.n_steps == steps, record.status
        return time.perf_counter() - t0


def inspect(episodes: int, steps: int, max_samples: int | None, realtime: bool = True) -> float:
    """Seconds for one Inspect eval of the same episodes."""
    with ScriptedServer([], default=REPLY) as server, tempfile.TemporaryDirectory() as logs:
        model = get_model("openai-api/scripted/scripted", base_url=server.base_url, api_key="none")
        task = episode(tier="symbolic", depths=1, instances=episodes, steps=steps, agent="react")
        t0 = time.perf_counter()
        (log,) = inspect_eval(task, model=model, log_dir=logs, display="none", max_samples=max_samples,
                              log_realtime=realtime)
        elapsed = time.perf_counter() - t0
        assert log.status == "success" and log.samples and len(log.samples) == episodes, log.error
        return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", type=int, default=8)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    sides: dict[str, Callable[[], float]] = {
        "ours (cubebench runner)": lambda: ours(args.episodes, args.steps),
        "inspect, max_samples=1": lambda: inspect(args.episodes, args.steps, 1),
        "inspect, default concurrency": lambda: inspect(args.episodes, args.steps, None),
        "inspect, max_samples=1, no realtime log": lambda: inspect(args.episodes, args.steps, 1, realtime=False),
    }
    for run in sides.values():  # warm up: imports, numba kernels, the first eval's set-up
        run()
    times: dict[str, list[float]] = {name: [] for name in sides}
    for _ in range(args.repeat):
        for name, run in sides.items():
            times[name].append(run())
    load = os.getloadavg()[0]
    print(f"{args.episodes} episodes x {args.steps} steps (ReAct, symbolic, scripted server on 127.0.0.1), "
          f"median of {args.repeat}, load {load:.1f}")
    base = statistics.median(times["ours (cubebench runner)"]) / args.episodes
    for name, seconds in times.items():
        per = statistics.median(seconds) / args.episodes
        print(f"{name:<40} {per * 1000:8.1f} ms/episode  {per / args.steps * 1000:6.2f} ms/step  "
              f"ratio {per / base:5.2f}")


if __name__ == "__main__":
    main()
