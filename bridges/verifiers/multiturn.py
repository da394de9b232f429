"""The verifiers 0.2-0.3 adapter: CubeBench episodes as a ``vf.MultiTurnEnv`` with a ``vf.Rubric``.

A rollout is one row's episode (:class:`~.game.EpisodeTurns`): ``setup_state`` starts it and makes its first
model call the rollout's prompt (with the agent's stop sequence and ``max_tokens`` as default sampling
arguments); ``env_response`` hands each reply to the episode and answers with the next observation, or ends
the rollout with the last tool results and the outcome once the episode is over; a cleanup hook abandons an
episode the rollout stopped first.  :class:`CubeBenchRubric` scores the record with :func:`.game.rewards` and
:func:`.game.metrics`.  Rows are ``datasets`` tables (:func:`.dataset.episode_rows`): ``dataset`` and
``eval_dataset``.

Question items (:mod:`.question_rows`) are a ``vf.SingleTurnEnv`` over the export's item rows, scored by
:class:`QuestionRubric` under the environment's answer rules (:func:`build_questions`).
"""

from __future__ import annotations

import importlib
from typing import Any

from datasets import Dataset

from cubebench.agents.episode_reward import shaping, solved
from cubebench.runner import EpisodeSpec

from . import game
from .dataset import episode_rows, split_plan
from .game import RECORD_KEY, EpisodeTurns, Options, record_of
from .question_rows import judge, question_options

vf: Any = importlib.import_module("verifiers")  # typed as Any: type checkers may see verifiers 0.4, which lacks these

__all__ = ["CubeBenchEnv", "CubeBenchRubric", "QuestionRubric", "RELAY_KEY", "build", "build_questions"]

RELAY_KEY = "cubebench_relay"
"""Where a running rollout keeps its :class:`~.game.EpisodeTurns` (removed when the rollout ends)."""


def _messages(raw: list[dict[str, str]]) -> list[Any]:
    """Chat messages (text only) as verifiers message objects."""
    kinds = {"system": vf.SystemMessage, "user": vf.UserMessage, "assistant": vf.AssistantMessage}
    return [kinds[m["role"]](content=m["content"]) for m in raw]


class CubeBenchRubric(vf.Rubric):
    """``solved`` (weight 1) plus ``shaping_weight`` times the dense return; the episode's counts as metrics
    (the figures of :mod:`.game`, read off the record in the rollout state)."""

    def __init__(self, shaping_weight: float = 0.0, parser: Any = None) -> None:
        if not isinstance(shaping_weight, (int, float)) or isinstance(shaping_weight, bool) or shaping_weight < 0:
            raise ValueError(f"shaping_weight must be a number >= 0, got {shaping_weight!r}")
        super().__init__(funcs=[self.solved], weights=[1.0], parser=parser)
        self.shaping_weight = float(shaping_weight)
        if self.shaping_weight > 0:
            self.add_reward_func(self.shaping, weight=self.shaping_weight)
        for name in game.metrics(None, self.shaping_weight):
            self.add_metric(getattr(self, name))

    async def solved(self, state: Any) -> float:
        """1.0 when the episode solved the cube, else 0.0."""
        return solved(record_of(state))

    async def shaping(self, state: Any) -> float:
        """The episode's return under the env's reward (dense under ``sticker``/``face``/``heuristic``)."""
        return shaping(record_of(state))

    async def moves(self, state: Any) -> float:
        """Face turns made (in the env's metric), solver moves included."""
        return game.figure(record_of(state), "moves")

    async def rotations(self, state: Any) -> float:
        """Whole-cube rotations made (view actions of the partial tiers)."""
        return game.figure(record_of(state), "rotations")

    async def steps(self, state: Any) -> float:
        """Interaction steps played (model turns)."""
        return game.figure(record_of(state), "steps")

    async def parse_errors(self, state: Any) -> float:
        """Replies without a readable action (no ``Action:`` line, unknown tool, bad arguments)."""
        return game.figure(record_of(state), "parse_errors")

    async def errors(self, state: Any) -> float:
        """Steps that failed outside the model's reply (model call or infrastructure)."""
        return game.figure(record_of(state), "errors")


class CubeBenchEnv(vf.MultiTurnEnv):
    """A verifiers 0.3 multi-turn environment whose rollouts are CubeBench episodes (see the module docstring).

    ``max_tokens`` is the agent's per-call limit; ``episode_timeout_s`` bounds the wait for the episode's next
    model call or end.  The rest goes to ``vf.MultiTurnEnv``.
    """

    def __init__(self, *, max_tokens: int = 256, episode_timeout_s: float = 600.0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.max_tokens = max_tokens
        self.episode_timeout_s = episode_timeout_s

    async def setup_state(self, state: Any) -> Any:
        """Start the row's episode; its first model call becomes the rollout's prompt."""
        turns = EpisodeTurns(EpisodeSpec(**state["info"]), model=str(state["model"]), max_tokens=self.max_tokens,
                             timeout_s=self.episode_timeout_s)
        state[RELAY_KEY] = turns
        try:
            first = await turns.start()
        except RuntimeError as err:
            raise vf.Error(str(err)) from err
        state["prompt"] = _messages(first.messages)
        state["sampling_args"] = {**first.sampling(), **(state.get("sampling_args") or {})}
        return state

    async def env_response(self, messages: Any, state: Any, **kwargs: Any) -> list[Any]:
        """Hand the model's reply to the episode; answer with the next observation, or end the rollout."""
        turns: EpisodeTurns = state[RELAY_KEY]
        last = messages[-1]
        reply = game.text_of(last.content if hasattr(last, "content") else last.get("content"))
        after = await turns.reply(reply, *self._usage(state))
        if after is not None:
            return _messages(after.messages)
        assert turns.record is not None
        state[RECORD_KEY] = turns.record.to_dict()
        final = [vf.UserMessage(content=turns.final_message())]
        state["final_env_response"] = final
        return final

    @staticmethod
    def _usage(state: Any) -> tuple[int, int]:
        """(input, output) tokens of the last model call, as the server reported them (0 if it did not)."""
        try:
            usage = state["trajectory"][-1]["response"].usage
            return int(usage.prompt_tokens or 0), int(usage.completion_tokens or 0)
        except (AttributeError, IndexError, KeyError, TypeError, ValueError):
            return 0, 0

    @vf.cleanup
    async def finish_episode(self, state: Any) -> None:
        """End the episode if the rollout stopped first (an error, a timeout, verifiers' own limits): our
        loop then records it as an ``error`` episode, which scores 0."""
        turns: EpisodeTurns | None = state.get(RELAY_KEY)
        if turns is None:
            return
        record = await turns.abandon()
        if state.get(RECORD_KEY) is None and record is not None:
            state[RECORD_KEY] = record.to_dict()
        del state[RELAY_KEY]


def build(opts: Options, **kwargs: Any) -> CubeBenchEnv:
    """The verifiers 0.3 environment of ``opts``: ``dataset`` and ``eval_dataset`` (built lazily), the rubric;
    ``kwargs`` go to :class:`CubeBenchEnv` / ``vf.MultiTurnEnv``."""
    train, evaluate = split_plan(opts.suite(), opts.instances)

    def rows(specs: list[EpisodeSpec]) -> Any:
        return (lambda: Dataset.from_list(episode_rows(specs, game.PLAY_SETTINGS, opts.max_tokens))) if specs else None

    kwargs.setdefault("max_turns", opts.max_steps + 1)  # a backstop only: our loop ends the episode at max_steps
    return CubeBenchEnv(max_tokens=opts.max_tokens, dataset=rows(train), eval_dataset=rows(evaluate),
                        rubric=CubeBenchRubric(opts.shaping_weight), env_id=kwargs.pop("env_id", "cubebench"),
                        env_args=opts.env_args(), **kwargs)


class QuestionRubric(vf.Rubric):
    """``correct`` (weight 1): the reply read with the answer ``rules``'s parser is the exact label; metric
    ``parsed``: the reply was in the rules' answer form (:func:`.question_rows.judge`, the row's verifier
    reference)."""

    def __init__(self, rules: str, parser: Any = None) -> None:
        super().__init__(funcs=[self.correct], weights=[1.0], parser=parser)
        self.rules = rules
        self.add_metric(self.parsed)

    def _verdict(self, completion: Any, info: Any) -> Any:
        return judge(info, _last_reply(completion), self.rules)

    async def correct(self, completion: Any, info: Any) -> float:
        """1.0 when the reply's answer is the exact label, else 0.0."""
        return float(self._verdict(completion, info).ok)

    async def parsed(self, completion: Any, info: Any) -> float:
        """1.0 when the reply is in the rules' answer form (right or wrong), else 0.0."""
        return float(self._verdict(completion, info).parsed)


def _last_reply(completion: Any) -> str:
    """The model's reply: the last assistant message's text (a completion-style rollout's text as it is)."""
    if isinstance(completion, str):
        return completion
    return game.last_reply(completion) or ""


def build_questions(args: dict[str, Any], split: str | None = None, **kwargs: Any) -> Any:
    """The verifiers 0.3 question environment of ``args`` (:func:`.question_rows.question_options`'s): a
    ``vf.SingleTurnEnv`` with both splits (``dataset``, ``eval_dataset``; ``None`` where a split is empty), each
    call's ``max_tokens``, and :class:`QuestionRubric`; ``kwargs`` go to ``vf.SingleTurnEnv``.  ``split`` is
    verifiers 0.4's: refused here."""
    if split is not None:
        raise ValueError("split is for verifiers 0.4; under verifiers 0.3 the environment holds both splits "
                         "(dataset and eval_dataset)")
    opts = question_options(**args)

    def rows(split: str) -> Any:
        return Dataset.from_list(opts.rows[split]) if opts.rows[split] else None

    sampling = {"max_tokens": opts.max_tokens, **(kwargs.pop("sampling_args", None) or {})}
    return vf.SingleTurnEnv(dataset=rows("train"), eval_dataset=rows("eval"), rubric=QuestionRubric(opts.rules),
                            sampling_args=sampling, env_id=kwargs.pop("env_id", "cubebench-questions"),
                            env_args=opts.env_args(), **kwargs)
