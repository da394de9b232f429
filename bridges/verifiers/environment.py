"""``load_environment``: CubeBench episodes as a verifiers multi-turn environment.

A rollout is one planned episode (:mod:`.dataset`) played by the runner with our ReAct agent through an
:class:`~.relay.EpisodeRelay`: the first prompt is the agent's system prompt and first observation; each
model reply goes to the agent, which parses its ``Action:`` line with our parser and calls the episode's
tools (moves, rotations, solvers: :class:`~cubebench.agents.tools.Toolbox`); the next observation comes
back as the environment's message.  The episode ends as ours does: solved, the move budget spent, the
step budget (``max_steps`` model turns) spent, or three failed model calls in a row; its last tool
results and outcome are the final environment message.  :class:`~.rubric.CubeBenchRubric` scores it.
"""

from __future__ import annotations

from typing import Any, Sequence

import verifiers as vf
from datasets import Dataset

from cubebench.agents.episode import DEFAULT_MAX_STEPS
from cubebench.agents.records import EpisodeRecord
from cubebench.agents.tool_registry import TOOL_SETTINGS
from cubebench.runner.execute import PlaySettings
from cubebench.runner.plan import EpisodeSpec
from cubebench.wrappers.tiers import TIERS

from .dataset import episode_grid, episode_rows, split_plan
from .relay import Ask, EpisodeRelay
from .rubric import RECORD_KEY, CubeBenchRubric

__all__ = ["CubeBenchEnv", "load_environment", "RELAY_KEY", "DENSE_REWARDS"]

RELAY_KEY = "cubebench_relay"
"""Where a running rollout keeps its :class:`~.relay.EpisodeRelay` (removed when the rollout ends)."""
DENSE_REWARDS = ("sticker", "face", "heuristic")
"""The env rewards whose return can shape the rubric (:mod:`cubebench.wrappers.rewards`)."""
REWARDS = ("none", *DENSE_REWARDS)


def _text(content: Any) -> str:
    """The text of a message's content (a string, or a list of parts of which the text ones count)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    parts = []
    for part in content:
        text = part.get("text") if isinstance(part, dict) else getattr(part, "text", None)
        if isinstance(text, str):
            parts.append(text)
    return "".join(parts)


def _messages(raw: list[dict[str, Any]]) -> list[Any]:
    """Our agent's chat messages (text only) as verifiers message objects."""
    kinds = {"system": vf.SystemMessage, "user": vf.UserMessage, "assistant": vf.AssistantMessage}
    return [kinds[m["role"]](content=_text(m["content"])) for m in raw]


def _since_last_reply(ask: Ask) -> list[dict[str, Any]]:
    """The messages of ``ask`` after the model's last reply: what the environment answers with."""
    last = max((i for i, m in enumerate(ask.messages) if m["role"] == "assistant"), default=-1)
    return ask.messages[last + 1:]


def _final_message(record: EpisodeRecord) -> str:
    """The last step's tool results and the episode's outcome (the final environment message)."""
    lines: list[str] = []
    if record.steps:
        last = record.steps[-1]
        lines += [c.result for c in last.tool_calls if c.result]
        lines += [f"Error: {p}" for p in (last.parse_error, last.error) if p]
    lines.append(f"Episode over: {record.status} after {record.n_steps} steps and {record.n_moves} moves.")
    return "Observation: " + "\n".join(lines)


class CubeBenchEnv(vf.MultiTurnEnv):
    """A verifiers multi-turn environment whose rollouts are CubeBench episodes (see the module docstring).

    ``settings`` says how episodes are played (:class:`~cubebench.runner.execute.PlaySettings`; the
    visual, face and vertex tiers need ``obs_format="text"``); ``max_tokens`` and the agent's stop
    sequence are the default sampling arguments of every model call (a rollout's own sampling arguments
    override them).  The rest goes to ``vf.MultiTurnEnv``.
    """

    def __init__(self, *, settings: PlaySettings, max_tokens: int = 256, episode_timeout_s: float = 600.0,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.settings = settings
        self.max_tokens = max_tokens
        self.episode_timeout_s = episode_timeout_s

    async def setup_state(self, state: vf.State) -> vf.State:
        """Start the row's episode; its first model call becomes the rollout's prompt."""
        spec = EpisodeSpec(**state["info"])
        relay = EpisodeRelay(spec, self.settings, model=str(state["model"]), max_tokens=self.max_tokens,
                             timeout_s=self.episode_timeout_s).start()
        state[RELAY_KEY] = relay
        event = await relay.next_event()
        if not isinstance(event, Ask):
            raise vf.Error(f"episode {spec.key} ended before its first model call ({event.status})")
        state["prompt"] = _messages(event.messages)
        defaults: dict[str, Any] = {"max_tokens": event.max_tokens or self.max_tokens}
        if event.stop:
            defaults["stop"] = event.stop
        state["sampling_args"] = {**defaults, **(state.get("sampling_args") or {})}
        return state

    async def env_response(self, messages: Any, state: vf.State, **kwargs: Any) -> list[Any]:
        """Hand the model's reply to the episode; answer with the next observation, or end the rollout."""
        relay: EpisodeRelay = state[RELAY_KEY]
        reply = _text(messages[-1].content if hasattr(messages[-1], "content") else messages[-1].get("content"))
        relay.answer(reply, *self._usage(state))
        event = await relay.next_event()
        if isinstance(event, Ask):
            return _messages(_since_last_reply(event))
        state[RECORD_KEY] = event.to_dict()
        final = [vf.UserMessage(content=_final_message(event))]
        state["final_env_response"] = final
        return final

    @staticmethod
    def _usage(state: vf.State) -> tuple[int, int]:
        """(input, output) tokens of the last model call, as the server reported them (0 if it did not)."""
        try:
            usage = state["trajectory"][-1]["response"].usage
            return int(usage.prompt_tokens or 0), int(usage.completion_tokens or 0)
        except (AttributeError, IndexError, KeyError, TypeError, ValueError):
            return 0, 0

    @vf.cleanup
    async def finish_episode(self, state: vf.State) -> None:
        """End the episode if the rollout stopped first (an error, a timeout, verifiers' own limits): our
        loop then records it as an ``error`` episode, which scores 0."""
        relay: EpisodeRelay | None = state.get(RELAY_KEY)
        if relay is None:
            return
        relay.close()
        while state.get(RECORD_KEY) is None:
            event = await relay.next_event()
            if isinstance(event, EpisodeRecord):
                state[RECORD_KEY] = event.to_dict()
        del state[RELAY_KEY]


def _choice(value: Any, name: str, allowed: Sequence[str]) -> str:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, allowed))}, got {value!r}")
    return str(value)


def _count(value: Any, name: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return value


def load_environment(tier: str = "symbolic", depths: Sequence[int] = (1, 2, 3, 4), instances: int = 20,
                     eval_instances: int = 5, reward: str = "none", shaping_weight: float | None = None,
                     tool_setting: str = "basic", metric: str = "quarter", max_steps: int = DEFAULT_MAX_STEPS,
                     max_moves: int | None = None, max_rotations: int | None = None, seed: int = 0,
                     instance_source: str = "certified", max_tokens: int = 256, **kwargs: Any) -> CubeBenchEnv:
    """CubeBench episodes as a verifiers environment (``vf.load_environment("cubebench.bridges.verifiers", ...)``).

    - ``tier``: ``symbolic``, or ``visual``/``face``/``vertex`` in their text forms;
    - ``depths``, ``instances``, ``eval_instances``: certified optimal depths (in ``metric``) and how many
      instances of each train (``dataset``) and evaluate (``eval_dataset``, the next instances: no start
      state is in both); ``instance_source="scramble"`` uses seeded scrambles instead (not certified);
    - ``reward``: the env's reward, ``none`` (sparse) or a dense one (``sticker``, ``face``, ``heuristic``);
      ``shaping_weight`` weighs the dense return in the rubric (default 1 under a dense reward, 0 otherwise);
    - ``tool_setting``: ``basic``, ``standard`` or ``ideal`` (which solvers the agent may call);
    - ``max_steps`` (model turns), ``max_moves`` (face turns in ``metric``; default each depth's own,
      :func:`cubebench.budgets.move_budget`), ``max_rotations`` (partial tiers): the episode's budgets, enforced by the env;
    - ``seed``: the suite seed (env and agent seeds of every episode); ``max_tokens``: per model call.

    Other keyword arguments go to :class:`CubeBenchEnv` / ``vf.MultiTurnEnv``.
    """
    _choice(tier, "tier", tuple(TIERS))
    _choice(reward, "reward", REWARDS)
    _choice(tool_setting, "tool_setting", TOOL_SETTINGS)
    _count(instances, "instances", 0)
    _count(eval_instances, "eval_instances", 0)
    _count(max_tokens, "max_tokens", 1)
    if instances + eval_instances == 0:
        raise ValueError("instances and eval_instances are both 0: the environment would have no rows")
    if shaping_weight is None:
        shaping_weight = 1.0 if reward in DENSE_REWARDS else 0.0
    if shaping_weight and reward not in DENSE_REWARDS:
        raise ValueError(f"shaping_weight={shaping_weight!r} needs a dense reward ({', '.join(DENSE_REWARDS)}); "
                         f"reward={reward!r} is sparse")
    rubric = CubeBenchRubric(shaping_weight)
    suite = episode_grid(tier=tier, depths=depths, instances=instances + eval_instances, reward=reward,
                         tool_setting=tool_setting, metric=metric, max_steps=max_steps, max_moves=max_moves,
                         max_rotations=max_rotations, seed=seed, instance_source=instance_source)
    settings = PlaySettings(obs_format="text", store_images=False)
    train, evaluate = split_plan(suite, instances)

    def build(specs: list[EpisodeSpec]) -> Any:
        return (lambda: Dataset.from_list(episode_rows(specs, settings, max_tokens))) if specs else None

    env_args = {"tier": tier, "depths": list(depths), "instances": instances, "eval_instances": eval_instances,
                "reward": reward, "shaping_weight": shaping_weight, "tool_setting": tool_setting, "metric": metric,
                "max_steps": max_steps, "max_moves": suite.max_moves, "max_rotations": max_rotations, "seed": seed,
                "instance_source": instance_source, "max_tokens": max_tokens}
    kwargs.setdefault("max_turns", max_steps + 1)  # a backstop only: our loop ends the episode at max_steps
    return CubeBenchEnv(settings=settings, max_tokens=max_tokens, dataset=build(train), eval_dataset=build(evaluate),
                        rubric=rubric, env_id=kwargs.pop("env_id", "cubebench"), env_args=env_args, **kwargs)
