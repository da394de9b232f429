"""A complete example of plugging your own agent into CubeBench.

Run it:  python -m cubebench.agents.example_agent

An agent is any object with a ``name``, a ``reset(task)`` and an
``act(observation, tools) -> Turn``.  It acts only through the tools
(``tools.call("move", ["R U"])``, ``tools.call("rotate", ["y"])``, ...);
``run_episode`` records everything it saw and did.
"""

from __future__ import annotations

import gymnasium as gym

import cubebench  # noqa: F401  (registers the ids)
from cubebench.agents.base import Observation, Task, Turn
from cubebench.agents.episode import run_episode
from cubebench.agents.tools import Toolbox


class SexyMoveAgent:
    """Repeats the "sexy move" R U R' U' every step.

    It undoes this example's scramble (``U R U' R'``, the move's inverse) in its first step;
    on other scrambles it only cycles (six repetitions return any cube to where it started).
    """

    name = "sexy-move"

    def reset(self, task: Task) -> None:
        self.task = task  # task.description is what an LLM would be prompted with

    def act(self, observation: Observation, tools: Toolbox) -> Turn:
        result = tools.call("move", ["R U R' U'"])  # one interaction step, four moves
        return Turn(reply=result, action='move("R U R\' U\'")')


def main() -> None:
    env = gym.make("CubeBench-Symbolic-v0", obs_format="text", max_steps=None)
    record = run_episode(SexyMoveAgent(), env, reset_options={"scramble": "U R U' R'"}, max_steps=6)
    print(f"status={record.status} steps={record.n_steps} moves={record.n_moves}")
    for step in record.steps:
        print(step.index, step.action, "->", step.tool_calls[0].result)


if __name__ == "__main__":
    main()
