"""Asking one planned question item: :func:`play_item` asks an item's question(s) of a fresh answerer and
records the exchanges as an episode record, so the store, reports and exports read it as they read an episode.
"""

from __future__ import annotations

import time
import traceback
from typing import Any

from cubebench.agents.answerers import BUDGET_SPENT
from cubebench.agents.records import EpisodeRecord, StepRecord, observation_digest
from cubebench.tasks.items import Exchange, Item, ItemResult, Prompt, Reply
from cubebench.tasks.rules import STRICT

from ...execute import PlaySettings, storable
from ...specs import AgentFactory
from .plan import ItemSpec
from .suite import configured_test


def play_item(spec: ItemSpec, factory: AgentFactory, settings: PlaySettings) -> EpisodeRecord:
    """Ask ``spec``'s item, in its variant, of a fresh answerer from ``factory``; one step per question.

    An exception from the test or from recording it (a bug, never a model's failure: those are replies
    with ``error``) ends the item as an ``error`` record holding the exception's text and the questions
    asked until then, so one broken item never stops a run.  Images a text-only answerer was not sent
    are not stored either: the record shows what the model saw.
    """
    item = spec.to_item()
    asked: list[Exchange] = []
    answerer = factory.new_answerer(seed=spec.agent_seed)

    def ask(prompt: Prompt) -> Reply:
        reply = answerer.answer(prompt)
        asked.append(Exchange(prompt, reply))
        return reply

    started = time.perf_counter()
    try:
        test = configured_test(spec.test, spec.options, settings.rules or STRICT)
        result: ItemResult | None = test.play(item, spec.variant, ask)
        failure = None
    except Exception as err:  # noqa: BLE001 - a broken test is an error record, not a crash
        result, failure = None, traceback.format_exception_only(type(err), err)[-1].strip()
    finally:
        answerer.close()
    images = settings.store_images and factory.spec.send_images
    try:
        record = storable(item_record(spec, item, result, result.exchanges if result else asked, answerer.name,
                                      images))
    except Exception as err:  # noqa: BLE001 - a result that cannot be recorded is the test's bug
        failure = traceback.format_exception_only(type(err), err)[-1].strip()
        record = item_record(spec, item, None, [], answerer.name, False)
    if failure is not None:
        record.status, record.errors = "error", record.errors + 1
        record.config["play_error"] = failure
    record.wall_s = time.perf_counter() - started
    return record


def item_record(spec: ItemSpec, item: Item, result: ItemResult | None, exchanges: list[Exchange], agent: str,
                store_images: bool) -> EpisodeRecord:
    """The episode record of one asked item (``result`` is ``None`` when the test raised).

    An item whose answerer spent its own token or cost budget is ``failed``, scored as far as it got (the
    model's verbosity must not spare it a wrong answer); any other failed call makes it an ``error``."""
    steps = [_step(i, ex, store_images) for i, ex in enumerate(exchanges)]
    distances = [ex.distance for ex in exchanges if ex.distance is not None]
    start = item.data.get("distance")
    start = start if isinstance(start, int) and not isinstance(start, bool) else None
    config = {"protocol": ItemSpec.protocol, "key": spec.key, "test": spec.test, "variant": spec.variant,
              "depth": spec.depth, "index": spec.index, "metric": spec.metric, "seed": spec.seed,
              "agent_seed": spec.agent_seed, "options": spec.options, "item": item.data, "state": item.state,
              "score": result.score if result else None, "exchanges": [_judged(ex) for ex in exchanges],
              "counted": result.counted if result else True}
    passed = bool(result and result.passed)
    return EpisodeRecord(
        agent=agent, config=config, start_facelets=item.state, steps=steps,
        status="solved" if passed else "error" if result is None or (
            result.error and not result.error.startswith(BUDGET_SPENT)) else "failed",
        solved=passed, n_steps=len(steps), n_moves=result.moves if result else 0,
        input_tokens=sum(s.input_tokens for s in steps), output_tokens=sum(s.output_tokens for s in steps),
        cost_usd=sum(s.cost_usd for s in steps), end_facelets=(result.end_state if result else "") or item.state,
        distance_start=start, distance_end=distances[-1] if distances else start,
        errors=sum(s.error is not None for s in steps), parse_errors=sum(s.parse_error is not None for s in steps),
    )


def _step(index: int, ex: Exchange, store_images: bool) -> StepRecord:
    """One question and its reply as a step: the prompt's text and image, the raw and the parsed reply."""
    prompt, reply = ex.prompt, ex.reply
    digest, png = observation_digest(prompt.text, prompt.image, store_images)
    return StepRecord(
        index=index, observation_text=prompt.text, observation_sha256=digest, observation_png_b64=png,
        reply=reply.text, action=prompt.form.format(ex.answer) if ex.answer is not None else "", tool_calls=[],
        moves=int(ex.move is not None), reward=0.0, input_tokens=reply.input_tokens,
        output_tokens=reply.output_tokens, cost_usd=reply.cost_usd, latency_s=reply.latency_s, error=reply.error,
        model_log=list(reply.model_log), distance=ex.distance, parse_error=ex.parse_error,
        reply_cut=next((entry["reply_cut"] for entry in reply.model_log if entry.get("reply_cut")), None),
    )


def _judged(ex: Exchange) -> dict[str, Any]:
    """What a record keeps of an exchange's judgement: the question's name, its gold in the strict format
    (never shown to the model), whether the answer was right, the move it applied."""
    gold = ex.prompt.form.format(ex.prompt.gold) if ex.prompt.scored and ex.prompt.gold is not None else None
    return {"name": ex.prompt.name, "gold": gold, "correct": ex.correct, "move": ex.move}

