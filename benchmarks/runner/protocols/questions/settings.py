"""A question run's open settings filled in: its answer rules, decoding and reply budget.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Iterable

from cubebench.agents.llm import takes_temperature
from cubebench.tasks.registry import TESTS

from ...answering import DEFAULT_TEMPERATURE, LOCAL_REPLY_TOKENS, REPLY_TOKENS, chosen_rules
from ...execute import PlaySettings
from ...specs import AgentSpec
from ...suite_fields import SuiteError
from .suite import QuestionSuite


def question_settings(suite: QuestionSuite, agent: AgentSpec, play: PlaySettings) -> tuple[AgentSpec, PlaySettings]:
    """The agent and play settings with the question run's open settings filled in: the rules (checked against
    the suite), and for a model answerer the temperature (greedy, unless the model takes only its provider's default:
    :func:`~cubebench.agents.llm.takes_temperature`) and the token limit per reply."""
    rules = chosen_rules(suite, play.rules)
    if agent.reply_max_tokens is not None and agent.reply_max_tokens < 1:
        raise SuiteError(f"--reply-max-tokens must be at least 1, got {agent.reply_max_tokens}")
    if agent.kind == "model":
        reasoning_model = not takes_temperature(agent.spec)  # its hidden thinking counts against the limit
        if agent.is_local_model:
            limit = LOCAL_REPLY_TOKENS
        else:
            limit = REPLY_TOKENS[True] if reasoning_model else reply_tokens(rules, suite.tests)
        greedy = None if reasoning_model else DEFAULT_TEMPERATURE
        agent = replace(agent, temperature=greedy if agent.temperature is None else agent.temperature,
                        reply_max_tokens=agent.reply_max_tokens or limit)
    return agent, replace(play, rules=rules)


def reply_tokens(rules: str, tests: Iterable[str]) -> int:
    """The default token limit of one reply when ``tests`` are asked under ``rules`` (:data:`REPLY_TOKENS`):
    room to reason where one of them asks for reasoning under it (:attr:`~cubebench.tasks.items.QuestionTest.reasoned`).
    A run's, and the verifiers bridge's question environment's."""
    return REPLY_TOKENS[any(rules in TESTS[name].reasoned for name in tests)]

