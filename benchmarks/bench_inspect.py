"""Overhead of an Inspect-driven episode against ``cubebench run``'s, on the same scripted replies.

    python benchmarks/bench_inspect.py [--episodes 8] [--steps 20] [--repeat 5]

Both sides play the same episodes (symbolic tier, certified depth-1 instances, ReAct agent) against the
scripted OpenAI-compatible server on 127.0.0.1, which replies ``observe()`` at every step, so every episode
runs its full step budget and the model costs nothing: what is measured is each path's own work.  The
server keeps each client's connection open between calls, as a provider does (``keep_alive=True``; one
that closes every connection charges each call a new TCP connection, which Inspect's asynchronous client
pays several times over the runner's synchronous one, and no provider does that).

- ours: the runner's ``play_episode`` with the ``openai-compatible`` client, one episode after another;
- inspect: ``inspect_ai.eval(cubebench/episode, agent=react)`` with Inspect's ``openai-api`` provider,
  ``max_samples=1`` (one episode at a time, as ours), again with Inspect's default concurrency, and once
  more one at a time without Inspect's realtime sample log (``log_realtime=False``, ``--no-log-realtime``:
  the live view's per-event buffer, Inspect's own cost); the eval's own start-up (task, log file) is
  inside its time;
- Inspect's floor: no CubeBench at all, an Inspect solver that sends the same conversation through
  ``generate`` (the runner's first request, then at each step the reply and the same observation message,
  as many calls as steps) and a scorer of the same shape as ``episode_outcome`` (four values, the same
  metrics), with and without the realtime log: what any scored Inspect eval of these calls pays.

Prints, per episode, the wall time and the process's CPU time (every thread of it: the client, Inspect's
event loop, the episode's worker thread and the scripted server), each the median of ``--repeat``, the
sides alternated in the same process, and the ratios inspect / ours.  On a shared machine the CPU ratio
is the steadier one (wall time also counts the other processes' turns on the cores); on an idle machine
the two agree.  Needs the ``inspect`` and ``llm`` extras.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from typing import Callable

from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessage, ChatMessageAssistant, ChatMessageSystem, ChatMessageUser, get_model
from inspect_ai.scorer import Score, Scorer, Target, mean, scorer, stderr
from inspect_ai.solver import Generate, Solver, TaskState, solver

from cubebench.agents.llm.testing import ScriptedServer
from cubebench.bridges.inspect import episode
from cubebench.bridges.inspect.params import episode_suite
from cubebench.runner.execute import PlaySettings
from cubebench.runner.protocols.episodes.play import play_episode
from cubebench.runner.protocols.episodes.instances import resolve_source
from cubebench.runner.protocols.episodes.plan import plan_episodes
from cubebench.runner.specs import AgentFactory, AgentSpec

REPLY = "Thought: look again\nAction: observe()"


Times = tuple[float, float]
"""Wall seconds and CPU seconds (the whole process's)."""


def _clock() -> Times:
    return time.perf_counter(), time.process_time()


def _since(start: Times) -> Times:
    now = _clock()
    return now[0] - start[0], now[1] - start[1]


def ours(episodes: int, steps: int) -> Times:
    """Wall and CPU seconds for ``episodes`` episodes played by the runner."""
    suite = episode_suite("exp1", tier="symbolic", depths=1, instances=episodes, max_steps=steps)
    specs = plan_episodes(suite, resolve_source(suite, warn=False))
    with ScriptedServer([], default=REPLY, keep_alive=True) as server:
        factory = AgentFactory(AgentSpec(spec=f"openai-compatible:{server.base_url}:scripted"))
        start = _clock()
        for spec in specs:
            record = play_episode(spec, factory, PlaySettings(store_images=False))
            assert record.n_steps == steps, record.status
        return _since(start)


def inspect(episodes: int, steps: int, max_samples: int | None, realtime: bool = True) -> Times:
    """Wall and CPU seconds for one Inspect eval of the same episodes."""
    with ScriptedServer([], default=REPLY, keep_alive=True) as server, tempfile.TemporaryDirectory() as logs:
        model = get_model("openai-api/scripted/scripted", base_url=server.base_url, api_key="none")
        task = episode(tier="symbolic", depths=1, instances=episodes, steps=steps, agent="react")
        start = _clock()
        (log,) = inspect_eval(task, model=model, log_dir=logs, display="none", max_samples=max_samples,
                              log_realtime=realtime)
        elapsed = _since(start)
        assert log.status == "success" and log.samples and len(log.samples) == episodes, log.error
        return elapsed


def conversation(steps: int) -> tuple[list[dict], str]:
    """The runner's first request (its messages) and the observation message it sends after each step."""
    suite = episode_suite("exp1", tier="symbolic", depths=1, instances=1, max_steps=steps)
    (spec,) = plan_episodes(suite, resolve_source(suite, warn=False))
    with ScriptedServer([], default=REPLY, keep_alive=True) as server:
        play_episode(spec, AgentFactory(AgentSpec(spec=f"openai-compatible:{server.base_url}:scripted")),
                     PlaySettings(store_images=False))
        requests = server.requests
    return requests[0].body["messages"], requests[-1].body["messages"][-1]["content"]


@solver
def same_conversation(first: list[dict], observation: str, steps: int) -> Solver:
    """Inspect's own loop over the same calls: ``generate``, then the observation, ``steps`` times."""
    kinds = {"system": ChatMessageSystem, "user": ChatMessageUser, "assistant": ChatMessageAssistant}

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        messages: list[ChatMessage] = [kinds[m["role"]](content=m["content"]) for m in first]
        state.messages = messages
        for _ in range(steps):
            state = await generate(state, max_tokens=256, stop_seqs=["Observation:"])
            state.messages.append(ChatMessageUser(content=observation))
        return state

    return solve


@scorer(metrics={"solved": [mean(), stderr()], "moves": [mean()], "rotations": [mean()], "steps": [mean()]})
def same_shape() -> Scorer:
    """A score shaped like ``episode_outcome``'s (its values are not the point: the floor plays no episode)."""

    async def score(state: TaskState, target: Target) -> Score:
        return Score(value={"solved": 0.0, "moves": 0, "rotations": 0, "steps": len(state.messages)})

    return score


def floor(episodes: int, steps: int, talk: tuple[list[dict], str], realtime: bool) -> Times:
    """Wall and CPU seconds for an Inspect eval of ``episodes`` samples of :func:`same_conversation`."""
    with ScriptedServer([], default=REPLY, keep_alive=True) as server, tempfile.TemporaryDirectory() as logs:
        model = get_model("openai-api/scripted/scripted", base_url=server.base_url, api_key="none")
        task = Task(dataset=MemoryDataset([Sample(id=i, input="-") for i in range(episodes)]),
                    solver=same_conversation(*talk, steps), scorer=same_shape())
        start = _clock()
        (log,) = inspect_eval(task, model=model, log_dir=logs, display="none", max_samples=1, log_realtime=realtime)
        elapsed = _since(start)
        assert log.status == "success" and log.samples and len(log.samples) == episodes, log.error
        assert len(server.requests) == episodes * steps
        return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", type=int, default=8)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    talk = conversation(args.steps)
    sides: dict[str, Callable[[], Times]] = {
        "ours (cubebench runner)": lambda: ours(args.episodes, args.steps),
        "inspect, max_samples=1": lambda: inspect(args.episodes, args.steps, 1),
        "inspect, default concurrency": lambda: inspect(args.episodes, args.steps, None),
        "inspect, max_samples=1, no realtime log": lambda: inspect(args.episodes, args.steps, 1, realtime=False),
        "floor: Inspect alone, same calls": lambda: floor(args.episodes, args.steps, talk, True),
        "floor, no realtime log": lambda: floor(args.episodes, args.steps, talk, False),
    }
    for run in sides.values():  # warm up: imports, numba kernels, the first eval's set-up
        run()
    times: dict[str, list[Times]] = {name: [] for name in sides}
    loads = []
    for _ in range(args.repeat):
        for name, run in sides.items():
            times[name].append(run())
        loads.append(os.getloadavg()[0])
    print(f"{args.episodes} episodes x {args.steps} steps (ReAct, symbolic, scripted server on 127.0.0.1, "
          f"kept-alive connections), median of {args.repeat}, load {min(loads):.1f}-{max(loads):.1f}")
    print(f"{'':<40} {'wall ms/episode':>16} {'ratio':>6} {'CPU ms/episode':>15} {'ratio':>6}")
    base = [statistics.median(t[i] for t in times["ours (cubebench runner)"]) for i in (0, 1)]
    for name, runs in times.items():
        wall, cpu = (statistics.median(t[i] for t in runs) for i in (0, 1))
        print(f"{name:<40} {wall / args.episodes * 1000:16.1f} {wall / base[0]:6.2f} "
              f"{cpu / args.episodes * 1000:15.1f} {cpu / base[1]:6.2f}")


if __name__ == "__main__":
    main()
