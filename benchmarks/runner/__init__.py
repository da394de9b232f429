"""The benchmark runner: suites as data, resumable runs in SQLite, reports, viewer, play.

See ``docs/runner.md``.  The ``cubebench`` subcommands are in :mod:`.cli`.
"""

from .answering import check_rules, chosen_rules
from .execute import PlaySettings
from .export_tasks import ExportError, ExportRequest, item_rows
from .heldout import EvaluationOverlap, check_apart, evaluation_keys, evaluation_positions
from .planning import MAX_PLANNED, check_plan_size
from .protocols import PROTOCOLS, RunProtocol, play_spec, protocol_for, protocol_named
from .protocols.episodes.instances import resolve_source
from .protocols.episodes.plan import EpisodeSpec, plan_episodes
from .protocols.episodes.play import play_episode
from .protocols.episodes.suite import Suite, suite_from_dict
from .protocols.multi.plan import GameSpec
from .protocols.questions.plan import ItemSpec, plan_items
from .protocols.questions.play import play_item
from .protocols.questions.settings import reply_tokens
from .protocols.questions.suite import QuestionSuite, question_suite_from_dict
from .run import RunConfig, RunOutcome, resume_run, start_run
from .specs import AgentFactory, AgentSpec, AgentSpecError, make_agent
from .stats import Rate, wilson_interval
from .store import RunStore, StoreDamaged, StoreError, StoreFull, StoreNewer, open_run
from .suites import SuiteError, available_suites, load_suite
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
