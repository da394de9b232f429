"""The benchmark runner: suites as data, resumable runs in SQLite, reports, viewer, play.

See ``docs/runner.md``.  The ``cubebench`` subcommands are in :mod:`.cli`.
"""

from .answering import check_rules, chosen_rules, reply_tokens
from .execute import PlaySettings, play_episode, play_item
from .export_tasks import ExportError, ExportRequest, item_rows
from .heldout import EvaluationOverlap, check_apart, evaluation_keys, evaluation_positions
from .instances import resolve_source
from .plan import MAX_PLANNED, EpisodeSpec, GameSpec, ItemSpec, check_plan_size, plan_episodes, plan_items
from .protocols import PROTOCOLS, RunProtocol, play_spec, protocol_for, protocol_named
from .question_suites import QuestionSuite, question_suite_from_dict
from .run import RunConfig, RunOutcome, resume_run, start_run
from .specs import AgentFactory, AgentSpec, AgentSpecError, make_agent
from .stats import Rate, wilson_interval
from .store import RunStore, StoreDamaged, StoreError, StoreFull, StoreNewer, open_run
from .suites import Suite, SuiteError, available_suites, load_suite, suite_from_dict
from .verifier_refs import Verdict, verify

__all__ = [
    "AgentFactory", "AgentSpec", "AgentSpecError", "EpisodeSpec", "EvaluationOverlap", "ExportError", "ExportRequest",
    "GameSpec", "ItemSpec", "MAX_PLANNED", "PROTOCOLS", "PlaySettings", "QuestionSuite", "Rate", "RunConfig", "RunOutcome",
    "RunProtocol", "RunStore", "StoreDamaged", "StoreError", "StoreFull", "StoreNewer", "Suite", "SuiteError", "Verdict",
    "available_suites", "check_apart", "check_plan_size", "check_rules", "chosen_rules", "evaluation_keys",
    "evaluation_positions", "item_rows",
    "load_suite", "make_agent", "open_run", "plan_episodes", "plan_items", "play_episode", "play_item", "play_spec",
    "protocol_for", "protocol_named", "question_suite_from_dict", "reply_tokens", "resolve_source", "resume_run",
    "start_run", "suite_from_dict", "verify", "wilson_interval",
]
