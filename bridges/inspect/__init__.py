"""CubeBench as Inspect AI tasks: ``inspect eval cubebench/episode`` and ``inspect eval cubebench/questions``.

Needs the ``inspect`` extra (``pip install -e ".[inspect]"`` in the checkout); see docs/ecosystem.md.  Nothing here
re-implements the benchmark: the tasks plan with the runner's suites and certified instances, play with
the runner's ``play_episode``/``play_item``, act through our tools, agents and sandbox, and score with
the episode records and the question tests' own parsers.
"""

from cubebench.extras import install_hint

try:
    import inspect_ai  # noqa: F401 - only to fail early with the extra's name
except ModuleNotFoundError as err:  # the message names the extra; the name lets callers tell which is missing
    raise ModuleNotFoundError(f"cubebench.bridges.inspect needs Inspect AI: {install_hint('inspect')}",
                              name="inspect_ai") from err

from .model_client import InspectModelClient, in_worker_thread, to_inspect_messages
from .task_errors import SampleError, TaskParameterError
from .episodes import RECORD_KEY, episode, episode_dataset, episode_outcome, play_cube_episode
from .agent_factory import AGENTS, InspectAgentFactory
from .questions import answer_cube_questions, question_dataset, question_outcome, question_table, questions
from .tool_agent import InspectToolAgent

__all__ = [
    "AGENTS", "RECORD_KEY", "InspectAgentFactory", "InspectModelClient", "InspectToolAgent", "SampleError",
    "TaskParameterError", "answer_cube_questions",
    "episode", "episode_dataset", "episode_outcome", "in_worker_thread", "play_cube_episode", "question_dataset",
    "question_outcome", "question_table", "questions", "to_inspect_messages",
]
