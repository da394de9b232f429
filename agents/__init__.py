"""Agents: the one Agent interface and episode loop, tools, LLM agents and their model clients, the compact policy,
the scripted and RL baselines (the policies, not their training: ``cubebench.training``), seats, teams and
answerers.  The runner is a layer above (``cubebench.runner``).

See docs/agents.md. Submodules load their optional dependencies lazily.
"""

from .base import Agent, Observation, Task, Turn
from .episode import run_episode
from .records import EpisodeRecord, StepRecord
from .tools import ToolCallError, ToolError, Toolbox

__all__ = ["Agent", "Observation", "Task", "Turn", "run_episode", "EpisodeRecord", "StepRecord", "Toolbox", "ToolError", "ToolCallError"]
