"""The benchmark runner: suites as data, resumable runs in SQLite, reports, viewer, play.

See ``docs/runner.md``.  The ``cubebench`` subcommands are in :mod:`.cli`.
"""

from .question_suites import QuestionSuite
from .run import RunConfig, RunOutcome, resume_run, start_run
from .specs import AgentFactory, AgentSpec, AgentSpecError, make_agent
from .stats import Rate, wilson_interval
from .store import RunStore, StoreError, open_run
from .suites import Suite, SuiteError, available_suites, load_suite

__all__ = [
    "AgentFactory", "AgentSpec", "AgentSpecError", "QuestionSuite", "Rate", "RunConfig", "RunOutcome", "RunStore",
    "StoreError", "Suite", "SuiteError", "available_suites", "load_suite", "make_agent", "open_run", "resume_run",
    "start_run", "wilson_interval",
]
