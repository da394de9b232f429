"""Playing one planned episode or question item: :func:`play_episode` builds the env of its cell and a
fresh agent and runs the episode; :func:`play_item` asks an item's question(s) of a fresh answerer
and records the exchanges as an episode record, so the store, reports and exports read both alike.

This is what every backend's workers call (:func:`~.protocols.play_spec` picks by the spec's type); it needs
only picklable inputs (:class:`~.plan.EpisodeSpec` or :class:`~.plan.ItemSpec`,
:class:`~.specs.AgentSpec`, :class:`PlaySettings`) so it runs the same in a thread, a process or a
Ray task.
"""

from __future__ import annotations

import time
import traceback
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from typing import Any, Callable, Iterator

import gymnasium as gym

from cubebench.agents.answerers import BUDGET_SPENT
from cubebench.agents.episode import run_episode
from cubebench.agents.records import EpisodeRecord, StepRecord, observation_digest
from cubebench.tasks.items import Exchange, Item, ItemResult, Prompt, Reply
from cubebench.tasks.rules import PAPER, STRICT
from cubebench.wrappers.description import describe_env
from cubebench.tiers import tier_spec

from .plan import EpisodeSpec, ItemSpec
from .question_suites import configured_test
from .specs import AgentFactory
from .store import decode_record, encode_record


@dataclass(frozen=True)
class PlaySettings:
    """Per-run settings of how episodes are played (stored in the run's config)."""

    obs_format: str = "image"
    store_images: bool = True
    distance_budget_s: float | None = None
    renderer: str = "painter"
    rules: str | None = None
    """The rules the run plays under (``--rules``, :func:`~.answering.chosen_rules`).  Question runs: the answer
    rules the items are asked under (:mod:`cubebench.tasks.rules`); episode runs: ``paper`` (the paper's
    interaction steps, no move cap) or ``strict`` (the suite's move budgets).  ``None`` in runs stored before
    rules existed, which asked in the strict one-line forms and played the strict budgets (and still do on
    resume)."""

    @property
    def capped(self) -> bool:
        """Whether an episode plays under the suite's move and rotation budgets: every set of rules but ``paper``."""
        return self.rules != PAPER

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "PlaySettings":
        """The settings of a stored run's config; a run stored before the rename keeps its rules under
        :data:`LEGACY_RULES_KEY`."""
        data = dict(data)
        if LEGACY_RULES_KEY in data:
            data.setdefault("rules", data.pop(LEGACY_RULES_KEY))
        return cls(**data)


LEGACY_RULES_KEY = "answer_protocol"
"""Where runs stored by cubebench before the rules were named kept them in ``config["play"]``."""


def stored_rules(config: dict[str, Any]) -> str | None:
    """The rules a stored run's ``config`` records (``None``: a run from before rules, which played ``strict``)."""
    play = config.get("play") or {}
    return play.get("rules") or play.get(LEGACY_RULES_KEY)


_STEP_LISTENERS: list[Callable[[], None]] = []


@contextmanager
def listening_to_steps(listener: Callable[[], None]) -> Iterator[None]:
    """Call ``listener`` after every interaction step that episodes played in this process take (the run's
    progress inside long episodes; workers in other processes are not heard)."""
    _STEP_LISTENERS.append(listener)
    try:
        yield
    finally:
        _STEP_LISTENERS.remove(listener)


def _step_taken(_: StepRecord) -> None:
    for listener in list(_STEP_LISTENERS):
        listener()


def make_env(ep: EpisodeSpec, settings: PlaySettings, symbolic_format: str = "text") -> gym.Env:
    """The env of an episode's cell: no action limit (interaction steps bound the episode), the suite's
    move and rotation budgets (a plan from before budgets gets run_episode's defaults), none under ``paper``."""
    spec = tier_spec(ep.tier)
    obs_format = settings.obs_format if spec.pictured else symbolic_format
    capped = settings.capped
    kwargs: dict[str, Any] = {"depth": ep.depth, "reward": ep.reward, "metric": ep.metric,
                              "max_steps": None, "obs_format": obs_format, "max_moves": ep.max_moves if capped else None,
                              "max_rotations": ep.max_rotations if capped and spec.partial else None,
                              "renderer": settings.renderer}
    return gym.make(spec.env_id, **kwargs)


def play_episode(ep: EpisodeSpec, factory: AgentFactory, settings: PlaySettings) -> EpisodeRecord:
    """Play ``ep`` with a fresh agent from ``factory``; the record's config names the cell and seeds."""
    env = make_env(ep, settings, factory.symbolic_obs_format)
    agent = factory.new(seed=ep.agent_seed)
    try:
        record = run_episode(
            agent, env, tool_setting=ep.setting, seed=ep.env_seed, reset_options=ep.reset_options,
            max_steps=ep.max_steps, tier=ep.tier, store_images=settings.store_images,
            distance_budget_s=settings.distance_budget_s, capped=settings.capped, on_step=_step_taken,
            config={"key": ep.key, "depth": ep.depth, "instance": ep.instance, "reward": ep.reward,
                    "metric": ep.metric, "instance_source": ep.source, "agent_seed": ep.agent_seed,
                    "certified_distance": ep.certified_distance, "obs_format": describe_env(env).obs_format},
        )
        if record.distance_start is None and ep.certified_distance is not None:
            record.distance_start = ep.certified_distance  # reset by state: the env does not know it
        return record
    finally:
        close = getattr(agent, "close", None)
        if callable(close):
            close()
        env.close()


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


def storable(record: EpisodeRecord) -> EpisodeRecord:
    """``record``, once it is known to read back from the store (``RecordError`` otherwise)."""
    decode_record(encode_record(record))
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
    )


def _judged(ex: Exchange) -> dict[str, Any]:
    """What a record keeps of an exchange's judgement: the question's name, its gold in the strict format
    (never shown to the model), whether the answer was right, the move it applied."""
    gold = ex.prompt.form.format(ex.prompt.gold) if ex.prompt.scored and ex.prompt.gold is not None else None
    return {"name": ex.prompt.name, "gold": gold, "correct": ex.correct, "move": ex.move}
