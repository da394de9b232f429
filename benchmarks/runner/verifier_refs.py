"""Verifier references: what an exported row carries so a trainer can score a model's reply.

A reference is a small JSON object; :func:`verify` checks a candidate against it with the
benchmark's own code, never a second copy of it:

- ``{"kind": "cube-episode", "tier", "state", "metric", "max_moves", "max_rotations"}``: the
  candidate is a move sequence (``"R U' F2"``; whole-cube rotations ``x y z`` where the tier has
  them, slices and wide turns as the ``move`` tool reads them).  It is played by the agents' own
  ``move`` tool on the tier's env reset to ``state``, so notation, the move budget (a move past
  it is refused) and the end of the episode on solving are exactly an episode's; the verdict is
  whether the cube is solved.
- ``{"kind": "cube-question", "test", "variant", "options", "item", "rules"}``: the candidate is a
  reply to the item's (first) question, asked under the answer ``rules``
  (:mod:`cubebench.tasks.rules`).  The question is rebuilt by playing the item with the oracle
  (:class:`~cubebench.agents.answerers.OracleAnswerer`) under those rules, as ``cubebench run`` asks it,
  and the reply is parsed by the rules' parser for the question (a STARE ``paper`` reply may reason and
  end in ``\\boxed{Yes}``; a ``strict`` one is the one-line form only) and compared with the exact label
  (:func:`~cubebench.tasks.items.ask_and_judge`).  A reference written before the rules were named keeps
  them under ``protocol`` (still read); one with neither (written before exports had rules) means ``strict``, the only form those exports asked in, so its rows still verify
  as they did.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Mapping

from cubebench.agents.answerers import OracleAnswerer
from cubebench.agents.tools import Toolbox, ToolError
from cubebench.budgets import DEFAULT_MAX_MOVES
from cubebench.tasks.items import Item, Prompt, Reply, ask_and_judge
from cubebench.tasks.rules import STRICT
from cubebench.tiers import tier_spec
from cubebench.wrappers.tier_envs import make_cube_env

from .protocols.questions.suite import configured_test

EPISODE_REF = "cube-episode"
QUESTION_REF = "cube-question"


@dataclass(frozen=True)
class Verdict:
    """Whether a candidate passes its reference, and why not where it does not."""

    ok: bool
    detail: str
    parsed: bool = True
    """Whether the candidate was read at all (``False``: a reply not in the rules' answer form, or moves the
    ``move`` tool does not read)."""


LEGACY_REF_KEY = "protocol"
"""Where references exported before the rules were named kept them (still read)."""

def episode_ref(tier: str, state: str, metric: str, max_moves: int | None, max_rotations: int | None) -> dict[str, Any]:
    """The reference of an episode starting from ``state`` (``max_moves=None``: the episode loop's default budget)."""
    return {"kind": EPISODE_REF, "tier": tier, "state": state, "metric": metric,
            "max_moves": max_moves if max_moves is not None else DEFAULT_MAX_MOVES[metric],
            "max_rotations": max_rotations if tier_spec(tier).partial else None}


def question_ref(test: str, variant: str, options: Mapping[str, Any], item: Mapping[str, Any],
                 rules: str) -> dict[str, Any]:
    """The reference of a question item asked in ``variant`` under answer ``rules`` (the whole item travels
    with it, as in a run's plan)."""
    return {"kind": QUESTION_REF, "test": test, "variant": variant, "options": dict(options), "item": dict(item),
            "rules": rules}


def asked_prompts(test: str, options: Mapping[str, Any], item: Mapping[str, Any], variant: str,
                  reply: str | None = None, rules: str = STRICT) -> list[Prompt]:
    """Every prompt the item asks in ``variant`` under answer ``rules`` when the oracle answers, or, given
    ``reply``, when every answer is that text (how many questions a loop asks depends on the answers).  The
    test is configured as :func:`~.protocols.questions.play.play_item` configures it, so the prompts and reply forms are a run's."""
    asked: list[Prompt] = []
    oracle = OracleAnswerer()

    def ask(prompt: Prompt) -> Reply:
        asked.append(prompt)
        return oracle.answer(prompt) if reply is None else Reply(text=reply)

    configured_test(test, dict(options), rules).play(Item(**item), variant, ask)
    return asked


def verify(ref: Mapping[str, Any] | str, candidate: str) -> Verdict:
    """Check ``candidate`` (a move sequence or a reply) against ``ref`` (a reference, or its JSON text)."""
    data = json.loads(ref) if isinstance(ref, str) else ref
    kind = data.get("kind")
    if kind == EPISODE_REF:
        return verify_episode(data, candidate)
    if kind == QUESTION_REF:
        return verify_question(data, candidate)
    raise ValueError(f"unknown verifier reference kind {kind!r}; expected {EPISODE_REF!r} or {QUESTION_REF!r}")


def verify_episode(ref: Mapping[str, Any], moves: str) -> Verdict:
    """Play ``moves`` with the ``move`` tool from the reference's state; solved within the budget passes."""
    env = make_cube_env(ref["tier"], metric=ref["metric"], max_steps=None, obs_format="text",
                        max_moves=ref["max_moves"], max_rotations=ref.get("max_rotations"))
    try:
        obs, info = env.reset(options={"state": ref["state"]})
        tools = Toolbox(env, ref["tier"], "basic", obs, info)
        try:
            result = tools.invoke("move", [moves])
        except ToolError as err:
            return Verdict(False, f"not played: {err}", parsed=False)
        return Verdict(tools.terminated, result)
    finally:
        env.close()


def verify_question(ref: Mapping[str, Any], reply: str) -> Verdict:
    """Parse ``reply`` with the parser of the reference's answer rules for the first question and compare it
    with that question's exact label.  A reference without ``rules`` means ``strict``: exports made before
    rules asked every question in the strict one-line forms, and their files keep verifying so (a reference written
    before the rules were named keeps them under :data:`LEGACY_REF_KEY`)."""
    prompts = asked_prompts(ref["test"], ref["options"], ref["item"], ref["variant"],
                            rules=ref.get("rules") or ref.get(LEGACY_REF_KEY) or STRICT)
    exchange = ask_and_judge(lambda prompt: Reply(text=reply), prompts[0])
    if exchange.parse_error is not None:
        return Verdict(False, f"not in the answer format: {exchange.parse_error}", parsed=False)
    return Verdict(bool(exchange.correct), "correct" if exchange.correct else f"wrong answer {exchange.answer!r}")
