"""Agents: the one Agent interface and episode loop, tools, LLM agents, baselines, the runner.

See docs/agents.md. Submodules load their optional dependencies lazily.
"""

from .base import Agent, Observation, Task, Turn
from .episode import run_episode
from .records import EpisodeRecord, StepRecord
from .tools import ToolCallError, ToolError, Toolbox

__all__ = ["Agent", "Observation", "Task", "Turn", "run_episode", "EpisodeRecord", "StepRecord", "Toolbox", "ToolError", "ToolCallError"]
