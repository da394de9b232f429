"""The verifiers 0.4 question adapter: a question suite's one-question items as a ``verifiers.v1`` taskset.

- :class:`CubeBenchQuestionTaskset` yields one :class:`CubeBenchQuestionTask` per row of one split (the rows of
  :mod:`.question_rows`: ``export-tasks --kind items --images none`` rows under the answer ``rules``);
- a task's ``correct`` reward and ``parsed`` metric are the row's verifier reference read by that rules'
  parser (:func:`.question_rows.judge`);
- the harness is the episode bridge's (:class:`~.taskset.CubeBenchHarness`): one model call, in process,
  with the task's ``max_tokens``; the environment is verifiers' own single-agent one (seat ``agent``).

verifiers 0.4 finds plugins by id, as module names; this module registers itself under the id
``cubebench_questions`` (:data:`QUESTIONS_PLUGIN_ID`) when imported (``import cubebench.bridges.verifiers`` does).
"""

from __future__ import annotations

import inspect
import sys
from typing import Any

import verifiers.v1 as vf
from pydantic import Field, create_model

from . import game
from .question_rows import QuestionOptions, info_of, judge, question_options
from .taskset import CubeBenchHarness, chat_message, option_fields

__all__ = ["CubeBenchHarness", "CubeBenchQuestionData", "CubeBenchQuestionTask", "CubeBenchQuestionTaskset",
           "CubeBenchQuestionTasksetConfig", "QUESTIONS_PLUGIN_ID", "build_questions"]

QUESTIONS_PLUGIN_ID = "cubebench_questions"
"""The id of the question taskset and its harness in verifiers 0.4 (``--env.taskset.id cubebench_questions``)."""


class CubeBenchQuestionData(vf.TaskData):
    """A task: one question row (``info``: its id, test, variant, depth, rules and verifier reference)."""

    info: dict[str, Any] = Field(default_factory=dict)
    answer: str = ""
    """The gold in the rules' final-answer form (a label: never shown to the model)."""
    max_tokens: int | None = None
    """The reply's token limit (a run's default for the exported tests under the rules unless given)."""
    rules: str = ""
    """The environment's answer rules, which the row's verifier reference must have been made under."""
    stop: list[str] | None = None
    """No stop sequence: a reply may reason before its answer."""


class CubeBenchQuestionTask(vf.Task[CubeBenchQuestionData, vf.State, vf.TaskConfig]):
    """One question; the reward and metric are the row's verdict under the row's rules."""

    @property
    def key(self) -> str:
        """The item's id in the export (``<metric>/<runner key>``)."""
        return str(self.data.info.get("id") or self.hash)

    def _verdict(self, trace: Any) -> Any:
        return judge(self.data.info, _reply(trace), self.data.rules)

    @vf.reward
    async def correct(self, trace: Any) -> float:
        """1.0 when the reply's answer is the exact label, else 0.0."""
        return float(self._verdict(trace).ok)

    @vf.metric
    async def parsed(self, trace: Any) -> float:
        """1.0 when the reply is in the rules' answer form (right or wrong), else 0.0."""
        return float(self._verdict(trace).parsed)


def _reply(trace: Any) -> str:
    """The model's reply: the trace's last assistant message (empty when the call failed)."""
    return game.last_reply(getattr(trace, "messages", None)) or ""


_QuestionConfig: Any = create_model("_QuestionConfig", __base__=vf.TasksetConfig, **option_fields(question_options))


class CubeBenchQuestionTasksetConfig(_QuestionConfig):
    """The question environment's options (:func:`.question_rows.question_options`) and the split."""

    id: str = QUESTIONS_PLUGIN_ID
    split: str = "train"

    def options(self) -> QuestionOptions:
        """The validated options and their rows (a bad value raises ``ValueError`` naming it)."""
        return question_options(**{name: getattr(self, name)
                                   for name in inspect.signature(question_options).parameters})


class CubeBenchQuestionTaskset(vf.Taskset[CubeBenchQuestionTask, CubeBenchQuestionTasksetConfig]):
    """The question rows of one split (``train`` or ``eval``)."""

    def __init__(self, config: CubeBenchQuestionTasksetConfig) -> None:
        super().__init__(config)
        if config.split not in ("train", "eval"):
            raise ValueError(f"split must be 'train' or 'eval', got {config.split!r}")
        self.opts = config.options()
        self.rows = self.opts.rows[config.split]
        if not self.rows:
            raise ValueError(f"the {config.split} split has no rows (train_fraction={config.train_fraction})")

    def load(self) -> Any:
        for row in self.rows:
            info = info_of(row["info"])
            yield CubeBenchQuestionTask(CubeBenchQuestionData(
                name=info["id"], prompt=[chat_message(m) for m in row["prompt"]], info=info, answer=row["answer"],
                max_tokens=self.opts.max_tokens, rules=self.opts.rules), self.config.task)


def build_questions(args: dict[str, Any], split: str | None = None, **kwargs: Any) -> Any:
    """The verifiers 0.4 question environment of ``args`` (:func:`.question_rows.question_options`'s) on ``split``
    (``train``, the default, or ``eval``): the taskset, verifiers' single-agent environment and the in-process
    harness; ``kwargs`` are further environment config fields (``agent``, ``timeout``, ...)."""
    taskset = {"id": QUESTIONS_PLUGIN_ID, "split": split or "train", **args}
    agent = dict(kwargs.pop("agent", None) or {})
    agent.setdefault("runtime", {"type": "subprocess"})
    agent.setdefault("max_turns", 1)
    config = vf.resolve_env_config({"taskset": taskset, "agent": agent, **kwargs})
    return vf.load_environment(config)


for _group in ("verifiers.v1.tasksets", "verifiers.v1.harnesses"):
    sys.modules.setdefault(f"{_group}.{QUESTIONS_PLUGIN_ID}", sys.modules[__name__])
