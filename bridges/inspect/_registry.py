"""Inspect's entry point (``[project.entry-points.inspect_ai]`` in pyproject.toml): importing the tasks
registers them as ``cubebench/episode`` and ``cubebench/questions``."""

from .episodes import episode
from .questions import questions

__all__ = ["episode", "questions"]
