"""How a question run asks: its answer rules and its decoding, as the papers ran theirs.

:func:`question_settings` fills in what a run's configuration leaves open before the run is stored, so the
stored configuration says exactly how every item was asked (and a resume asks the same way):

* the **answer rules** (:mod:`cubebench.tasks.rules`): the suite's default, ``paper`` (each paper's
  own: STARE's step-by-step reasoning and boxed answer, Inf-Bench's letter-and-why ending in a tag, Cube Bench's
  one-line forms), or one the suite has (``strict``; ``release`` for Cube Bench's tests);
* the **temperature** of a model: 0 (greedy), as all three papers decode (Cube Bench §3.2 and B.6, Inf-Bench
  B.2, STARE Tab. 14 for its API models); ``--temperature`` overrides;
* the **token limit per reply**: room for the reasoning the rules ask for (:data:`REPLY_TOKENS`);
  ``--reply-max-tokens`` overrides.
"""

from __future__ import annotations

from typing import Protocol

from cubebench.tasks.rules import DESCRIPTIONS, RULES

from .execute import PlaySettings
from .specs import AgentSpec
from .suite_fields import SuiteError

__all__ = ["REPLY_TOKENS", "LOCAL_REPLY_TOKENS", "DEFAULT_TEMPERATURE", "check_rules", "no_question_settings",
           "chosen_rules",
           "decoding_text", "rules_text"]

DEFAULT_TEMPERATURE = 0.0
"""Greedy decoding, as every paper's table was made."""
REPLY_TOKENS = {True: 4096, False: 1024}
"""Default token limit of one reply: 4096 where some test of the suite asks for reasoning before the answer under
the rules (a STARE chain of thought, an Inf-Bench "why", a release step's ``<REASONING>``;
:func:`reply_tokens`), 1024 where every answer is one line (Cube Bench's paper
forms), except for a reasoning model (:func:`~cubebench.agents.llm.takes_temperature`), whose hidden thinking
counts against the limit: 4096 whatever the rules."""
LOCAL_REPLY_TOKENS = 1024
"""The embedded local model's default cap whatever the rules: a 135M model on a CPU writes a few tokens a second,
so a 4096-token reply costs minutes, and its context (8192 tokens in SmolLM2's GGUF) is shared with the prompt."""


class Playable(Protocol):
    """A suite that names the rules its runs may play under: a question suite (answer rules) or an episode
    suite (``paper`` or ``strict`` budgets)."""

    @property
    def name(self) -> str: ...

    @property
    def rule_sets(self) -> tuple[str, ...]: ...


def check_rules(suite: Playable, rules: str) -> None:
    """:class:`SuiteError` unless ``suite`` can be played under ``rules``; the message names the choices."""
    have = ", ".join(suite.rule_sets)
    if rules not in RULES:
        raise SuiteError(f"--rules {rules!r}: no such answer rules; the rules are "
                         f"{', '.join(RULES)} (suite {suite.name!r} has {have})")
    if rules not in suite.rule_sets:
        raise SuiteError(f"--rules {rules}: suite {suite.name!r} has no such answer rules; it has {have}")


def chosen_rules(suite: Playable, rules: str | None) -> str:
    """The rules ``suite`` is played under: ``rules``, else the suite's first (``paper``), checked
    (:func:`check_rules`).  A run, an export and the Inspect task choose a question suite's answer rules so,
    and a run an episode suite's budget (``paper`` or ``strict``)."""
    chosen = rules or suite.rule_sets[0]
    check_rules(suite, chosen)
    return chosen


def no_question_settings(agent: AgentSpec, play: PlaySettings, suite_name: str, *, rules: bool = False) -> None:
    """:class:`SuiteError` when a run that asks no questions was given a question run's setting (``--rules`` too,
    unless the run reads it: ``rules``)."""
    if play.rules is not None and not rules:
        raise SuiteError(f"--rules chooses how question items are answered or an episode suite's budget; suite "
                         f"{suite_name!r} has neither")
    if agent.reply_max_tokens is not None:
        raise SuiteError(f"--reply-max-tokens limits each answer to a question item; suite {suite_name!r} asks none")


def rules_text(rules: str | None) -> str:
    """A run's answer rules as the report prints it."""
    if rules is None:
        return "strict (a run from before answer rules: the one-line forms)"
    return f"{rules}: {DESCRIPTIONS.get(rules, 'unknown here')}"


def decoding_text(temperature: float | None, reply_max_tokens: int | None) -> str:
    """A model's decoding as the report prints it."""
    heat = "the provider's default temperature" if temperature is None else f"temperature {temperature:g}"
    limit = "the client's default token limit" if reply_max_tokens is None else f"at most {reply_max_tokens} tokens"
    return f"{heat}; {limit} per reply"
