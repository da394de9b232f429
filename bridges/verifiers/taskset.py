"""The verifiers 0.4 adapter: CubeBench episodes as a ``verifiers.v1`` taskset, environment and harness.

- :class:`CubeBenchTaskset` yields one :class:`CubeBenchTask` per planned episode of one split (``train``:
  the first ``instances`` of each depth, ``eval``: the next ``eval_instances``), its prompt the episode's
  first model call and its ``info`` the episode spec;
- :class:`CubeBenchEnv` plays a task as a game (like verifiers' own game tasksets): ``run`` starts the
  episode (:class:`~.game.EpisodeTurns`), opens an interaction with the ``player`` agent on the first
  prompt, hands each reply to the episode and sends back its next observation until the episode is over
  (or the agent's run ends first: the episode is then abandoned and scores 0), and records the rewards and
  metrics of :mod:`.game` on the trace, the episode record in ``trace.info["cubebench_record"]``;
- :class:`CubeBenchHarness`, the taskset's harness: one model call per turn, in process, through the
  rollout's interception endpoint, with the ReAct agent's stop sequence and ``max_tokens`` (verifiers'
  chat harnesses run a program per turn and do not send a stop sequence).

verifiers 0.4 finds plugins by id, as top-level module names; CubeBench has one top-level package, so this
module registers itself under the id ``cubebench`` (:data:`EPISODES_PLUGIN_ID`) when imported:
``import cubebench.bridges.verifiers`` (or :func:`~.environment.load_environment`) comes first.
"""

from __future__ import annotations

import inspect
import sys
from collections import abc
from typing import Any, Literal, get_args, get_origin, get_type_hints

import httpx
import verifiers.v1 as vf
from pydantic import Field, create_model
from verifiers.v1.runtimes import ProgramResult, SubprocessConfig

from cubebench.runner import EpisodeSpec

from . import game
from .dataset import split_plan
from .relay import first_prompt

__all__ = ["CubeBenchData", "CubeBenchEnvConfig", "CubeBenchHarness", "CubeBenchTask", "CubeBenchTaskset",
           "CubeBenchTasksetConfig", "CubeBenchEnv", "EPISODES_PLUGIN_ID", "build"]

EPISODES_PLUGIN_ID = "cubebench"
"""The id of the taskset, its environment and its harness in verifiers 0.4 (``--env.taskset.id cubebench``)."""
STOP_CONDITION = "episode_over"
"""The trace's stop condition when the episode ended (solved or a budget spent), not the agent's run."""
OUTCOME_KEY = "cubebench_outcome"
"""Where the trace's ``info`` keeps the episode's last tool results and outcome (the final observation)."""


class CubeBenchData(vf.TaskData):
    """A task: one planned episode (``info``: its :class:`~cubebench.runner.protocols.episodes.plan.EpisodeSpec` as a dict)."""

    info: dict[str, Any] = Field(default_factory=dict)
    answer: str = ""
    """The start state's certified optimal distance, as text ("" when not certified)."""
    stop: list[str] | None = None
    """The agent's stop sequence, sent with every model call of the task's rollout."""
    max_tokens: int | None = None
    """The agent's per-call token limit."""


class CubeBenchTask(vf.Task[CubeBenchData, vf.State, vf.TaskConfig]):
    """One CubeBench episode; :class:`CubeBenchEnv` plays and scores it."""

    @property
    def key(self) -> str:
        """The episode's key in the runner's plan (stable across runs and splits)."""
        return str(self.data.info.get("key") or self.hash)


def option_fields(function: Any = game.options) -> dict[str, Any]:
    """``function``'s parameters (:func:`.game.options`: ``load_environment``'s arguments) as pydantic fields, with
    their types and defaults, so the config and the function cannot drift apart; a tuple default becomes a list,
    and an optional sequence an optional list (pydantic reads a string as no list, with its own message)."""
    hints = get_type_hints(function)
    fields: dict[str, Any] = {}
    for name, param in inspect.signature(function).parameters.items():
        if isinstance(param.default, tuple):
            element = get_args(hints[name])[0]
            fields[name] = (list[element], Field(default_factory=lambda d=param.default: list(d)))  # type: ignore[valid-type]
        elif param.default is None and any(get_origin(a) is abc.Sequence for a in get_args(hints[name])):
            element = next(get_args(a)[0] for a in get_args(hints[name]) if get_origin(a) is abc.Sequence)
            fields[name] = (list[element] | None, None)  # type: ignore[valid-type]
        else:
            fields[name] = (hints[name], param.default)
    return fields


_OptionsConfig: Any = create_model("_OptionsConfig", __base__=vf.TasksetConfig, **option_fields())


class CubeBenchTasksetConfig(_OptionsConfig):
    """The environment's options (``load_environment``'s arguments, :func:`.game.options`) and the split."""

    id: str = EPISODES_PLUGIN_ID
    split: Literal["train", "eval"] = "train"
    episode_timeout_s: float = 600.0
    """How long a rollout waits for the episode's next model call or end."""

    def options(self) -> game.Options:
        """The validated options (a bad value raises ``ValueError`` or the runner's ``SuiteError``)."""
        return game.options(**{name: getattr(self, name) for name in inspect.signature(game.options).parameters})


class CubeBenchTaskset(vf.Taskset[CubeBenchTask, CubeBenchTasksetConfig]):
    """The planned episodes of one split (see the module docstring)."""

    def __init__(self, config: CubeBenchTasksetConfig) -> None:
        super().__init__(config)
        self.opts = config.options()
        train, evaluate = split_plan(self.opts.suite(), self.opts.instances)
        self.specs: list[EpisodeSpec] = train if config.split == "train" else evaluate
        if not self.specs:
            raise ValueError(f"the {config.split} split has no rows (instances={self.opts.instances}, "
                             f"eval_instances={self.opts.eval_instances})")

    def load(self) -> Any:
        for spec in self.specs:
            prompt = first_prompt(spec, game.PLAY_SETTINGS, max_tokens=self.opts.max_tokens)
            yield CubeBenchTask(CubeBenchData(
                name=spec.key, prompt=[chat_message(m) for m in prompt], info=spec.to_dict(),
                answer="" if spec.certified_distance is None else str(spec.certified_distance)), self.config.task)


def chat_message(raw: dict[str, Any]) -> Any:
    """A chat message (text only) as a verifiers 0.4 message object."""
    kinds = {"system": vf.SystemMessage, "user": vf.UserMessage, "assistant": vf.AssistantMessage}
    return kinds[raw["role"]](content=game.text_of(raw.get("content")))


class CubeBenchHarnessConfig(vf.HarnessConfig):
    id: str = EPISODES_PLUGIN_ID


class CubeBenchHarness(vf.Harness[CubeBenchHarnessConfig]):
    """One model call per turn, in process (see the module docstring): the conversation so far, with the
    task's stop sequence and ``max_tokens``, posted to the rollout's interception endpoint."""

    APPENDS_SYSTEM_PROMPT = True
    SUPPORTS_RESUME = True
    EXECUTES_CODE = False
    NEEDS_CONTAINER = False

    async def launch(self, ctx: Any, trace: Any, runtime: Any, endpoint: str, secret: str,
                     mcp_urls: dict[str, str], data: Any, tool_interception_url: str | None = None) -> ProgramResult:
        system, prompt = self.resolve_prompt(data)
        messages = [{"role": "system", "content": system}] if system else []
        if isinstance(prompt, str):
            messages.append({"role": "user", "content": prompt})
        else:
            messages += [{"role": m.role, "content": game.text_of(m.content)} for m in prompt or []]
        body: dict[str, Any] = {"model": ctx.model, "messages": messages}
        if getattr(data, "stop", None):
            body["stop"] = list(data.stop)
        if getattr(data, "max_tokens", None):
            body["max_tokens"] = data.max_tokens
        try:
            async with httpx.AsyncClient(timeout=None) as client:
                response = await client.post(f"{endpoint.rstrip('/')}/chat/completions", json=body,
                                             headers={"Authorization": f"Bearer {secret}"})
        except httpx.HTTPError as err:
            return ProgramResult(1, "", f"model call failed: {type(err).__name__}: {err}")
        if response.status_code >= 400:
            return ProgramResult(1, "", f"model call failed: HTTP {response.status_code}: {response.text[:500]}")
        return ProgramResult(0, "", "")


class CubeBenchEnvConfig(vf.EnvConfig):
    """The environment: the taskset and one seat, ``player`` (run locally, in process)."""

    player: vf.AgentConfig = vf.AgentConfig(runtime=SubprocessConfig())


class CubeBenchEnv(vf.Env[CubeBenchEnvConfig]):
    """Plays each task as a CubeBench episode (see the module docstring)."""

    async def run(self, task: Any, agents: Any) -> None:
        config: CubeBenchTasksetConfig = self.taskset.config
        opts = self.taskset.opts
        player = agents.player
        turns = game.EpisodeTurns(EpisodeSpec(**task.data.info), model=str(player.config.model or "model"),
                                  max_tokens=opts.max_tokens, timeout_s=config.episode_timeout_s)
        first = await turns.start()
        data = task.data.model_copy(update={"prompt": [chat_message(m) for m in first.messages],
                                            "stop": first.stop, "max_tokens": first.max_tokens})
        try:
            async with player.interaction(type(task)(data, task.config)) as interaction:
                segment = await interaction.turn()
                while not segment.terminated:
                    after = await turns.reply(_reply_text(segment), *_usage(interaction.trace))
                    if after is None:
                        interaction.trace.stop(STOP_CONDITION)
                        break
                    segment = await interaction.turn(after.messages)
                # scored before the interaction closes, so verifiers' own close-out sees the reward
                _score(interaction.trace, turns.record or await turns.abandon(), opts.shaping_weight,
                       turns.final_message())
        finally:
            await turns.abandon()  # a no-op once the episode is over


def _score(trace: Any, record: Any, shaping_weight: float, final_message: str) -> None:
    """The rewards and metrics of :mod:`.game` on the trace, and the record in its ``info``."""
    for name, (value, weight) in game.rewards(record, shaping_weight).items():
        trace.record_reward(name, value, weight)
    trace.record_metrics(game.metrics(record, shaping_weight))
    if record is not None:
        trace.info[game.RECORD_KEY] = record.to_dict()
        trace.info[OUTCOME_KEY] = final_message

def _reply_text(segment: Any) -> str:
    """The model's reply as it sent it (``Segment.last_reply`` strips it; the conversation keeps it whole)."""
    reply = game.last_reply(segment.messages)
    return str(segment.last_reply) if reply is None else reply


def _usage(trace: Any) -> tuple[int, int]:
    """(input, output) tokens of the last model call, as the server reported them (0 if it did not)."""
    try:
        usage = trace.calls[-1].usage
        return int(usage.prompt_tokens or 0), int(usage.completion_tokens or 0)
    except (AttributeError, IndexError, TypeError, ValueError):
        return 0, 0


def build(opts: game.Options, split: str = "train", episode_timeout_s: float = 600.0, **kwargs: Any) -> CubeBenchEnv:
    """The verifiers 0.4 environment of ``opts`` on ``split``; ``kwargs`` are further ``CubeBenchEnvConfig``
    fields (``player``, ``timeout``, ...)."""
    taskset = {"id": EPISODES_PLUGIN_ID, "split": split, "episode_timeout_s": episode_timeout_s,
               **{k: v for k, v in opts.env_args().items() if k != "max_moves"}, "max_moves": opts.max_moves}
    player = dict(kwargs.pop("player", None) or {})
    player.setdefault("runtime", {"type": "subprocess"})
    player.setdefault("max_turns", opts.max_steps + 1)  # a backstop only: our loop ends the episode at max_steps
    config = vf.resolve_env_config({"taskset": taskset, "player": player, **kwargs})
    env = vf.load_environment(config)
    assert isinstance(env, CubeBenchEnv), type(env)
    return env


# verifiers 0.4 imports a plugin id `x` as `verifiers.v1.tasksets.x` (taskset, environment) or
# `verifiers.v1.harnesses.x` (harness) when that module exists, else as the top-level module `x`.
for _group in ("verifiers.v1.tasksets", "verifiers.v1.harnesses"):
    sys.modules.setdefault(f"{_group}.{EPISODES_PLUGIN_ID}", sys.modules[__name__])
