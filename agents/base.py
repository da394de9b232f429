"""The one agent interface that LLM agents, scripted agents and RL policies share.

An episode is a loop of *interaction steps*.  At each step the runner shows
the agent an :class:`Observation`; the agent acts by calling tools on the
:class:`~cubebench.agents.tools.Toolbox` it is given (moves, rotations, solvers, done)
and returns a :class:`Turn` describing what it did (its raw reply, the action
text it parsed, token use).  The runner records both; see
:func:`cubebench.agents.episode.run_episode`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np

from .tool_registry import TOOL_SETTINGS
from .tools import Toolbox

__all__ = ["TOOL_SETTINGS", "Task", "Observation", "Turn", "Agent"]


@dataclass(frozen=True)
class Task:
    """What an agent is told before an episode starts."""

    tier: str
    tool_setting: str
    tools: tuple[str, ...]
    action_names: tuple[str, ...]
    obs_format: str
    reward: str
    metric: str
    max_steps: int
    description: str
    max_moves: int | None = None
    """The episode's move budget (face turns in ``metric``); ``None``: unbounded."""
    max_rotations: int | None = None
    """The episode's view-rotation budget; ``None``: unbounded or no rotations."""


@dataclass
class Observation:
    """What the agent is shown at the start of one interaction step.

    ``text`` is the feedback of the previous step followed by the tier's
    observation when it is text; ``image`` holds the tier's image (RGB) when
    the tier is visual; ``raw`` is the env observation as the env returned
    it (for RL policies).  ``reward`` is the dense reward collected by the
    previous step, or ``None`` when rewards are sparse.
    """

    step: int
    steps_left: int
    text: str
    image: np.ndarray | None
    raw: Any
    reward: float | None = None


@dataclass
class Turn:
    """What the agent did in one step, beyond the tool calls the toolbox records."""

    reply: str = ""
    action: str = ""
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    model_log: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None
    """A failure of the agent, its model client or the infrastructure (an API call that failed
    after its retries, an exception in agent code, a sandbox that cannot start): shown to the
    model next step; ``max_consecutive_errors`` of them in a row end the episode as ``error``."""
    parse_error: str | None = None
    """The model's reply was malformed (no parsable action, no code block, an unknown tool or bad
    arguments): the model's own failure.  It is shown to the model next step and the step counts
    like any other; it never counts toward the ``error`` status."""
    stop: bool = False
    """The agent cannot go on (e.g. its token budget is spent): the episode ends as an error."""
    feedback: str | None = None
    """Text to show as the next observation's feedback instead of the tool results (CodeAct output)."""
    reply_cut: str | None = None
    """The model's reply was longer than its request's token limit allows and was cut (what was cut: see
    :mod:`cubebench.agents.llm.reply_bound`); ``reply`` holds what was kept."""


@runtime_checkable
class Agent(Protocol):
    """Anything that can play an episode: ``reset`` once, then ``act`` once per step."""

    name: str

    def reset(self, task: Task) -> None:
        """Prepare for a new episode (clear memory, build the prompt, seed)."""

    def act(self, observation: Observation, tools: "Toolbox") -> Turn:
        """Take one interaction step by calling ``tools``; return what was done."""
