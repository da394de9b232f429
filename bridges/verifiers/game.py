"""The bridge's game logic, the same under every verifiers API: the environment's options, one rollout's
episode turn by turn, and its scores.

- :func:`options` validates ``load_environment``'s arguments once (:class:`Options`), whichever verifiers
  API builds the environment from them;
- :class:`EpisodeTurns` is one rollout: it starts the row's planned episode (an :class:`~.relay.EpisodeRelay`:
  the runner's ``play_episode`` with our ReAct agent), gives the model call the episode makes first, takes
  each model reply and gives back what the environment answers (the agent's next observation) until the
  episode is over, and abandons an episode the rollout gave up on;
- :func:`rewards` and :func:`metrics` score an episode record: ``solved`` (weight 1) and ``shaping`` (the
  dense return, weight ``shaping_weight``) as rewards; ``moves``, ``rotations``, ``steps``,
  ``parse_errors``, ``errors`` (and ``shaping`` under the sparse reward) as metrics.

The adapters (:mod:`.multiturn` for verifiers 0.2-0.3's ``MultiTurnEnv``, :mod:`.taskset` for verifiers
0.4's ``verifiers.v1``) only translate these into their API's messages, states and traces.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Sequence

from cubebench.engine.rewards import DENSE_REWARDS, ORACLE_REWARDS
from cubebench.agents.episode import DEFAULT_MAX_STEPS
from cubebench.agents.records import EpisodeRecord
from cubebench.agents.episode_reward import episode_rewards, shaping
from cubebench.agents.tool_registry import TOOL_SETTINGS
from cubebench.runner import EpisodeSpec, PlaySettings, Suite
from cubebench.tiers import DEFAULT_TIER, TIERS

from .dataset import episode_grid
from .relay import Ask, EpisodeRelay

__all__ = ["SHAPING_REWARDS", "RECORD_KEY", "EpisodeTurns", "Options", "Turn", "metrics", "options", "record_of", "rewards",
           "text_of"]

RECORD_KEY = "cubebench_record"
"""Where a rollout keeps its episode record (``EpisodeRecord.to_dict()``): the rollout state under verifiers
0.3 (pass it in ``state_columns`` to get it in the outputs), the trace's ``info`` under verifiers 0.4."""

SHAPING_REWARDS = tuple(r for r in DENSE_REWARDS if r not in ORACLE_REWARDS)
"""The env rewards whose return can shape the reward: the engine's dense rewards but the oracle one, which
reveals the exact distance (:mod:`cubebench.engine.rewards`)."""
PLAYED_REWARDS = ("none", *SHAPING_REWARDS)
PLAY_SETTINGS = PlaySettings(obs_format="text", store_images=False)
"""How the bridge plays episodes: every tier in its text form (a rollout's messages are text only)."""


@dataclass(frozen=True)
class Options:
    """``load_environment``'s arguments, validated (see :func:`options`)."""

    tier: str = DEFAULT_TIER
    depths: tuple[int, ...] = (1, 2, 3, 4)
    instances: int = 20
    eval_instances: int = 5
    reward: str = "none"
    shaping_weight: float = 0.0
    tool_setting: str = "basic"
    metric: str = "quarter"
    max_steps: int = DEFAULT_MAX_STEPS
    max_moves: int | None = None
    max_rotations: int | None = None
    seed: int = 0
    instance_source: str = "certified"
    max_tokens: int = 256

    def suite(self) -> Suite:
        """The runner's suite of both splits (``instances + eval_instances`` per depth)."""
        return episode_grid(tier=self.tier, depths=self.depths, instances=self.instances + self.eval_instances,
                            reward=self.reward, tool_setting=self.tool_setting, metric=self.metric,
                            max_steps=self.max_steps, max_moves=self.max_moves, max_rotations=self.max_rotations,
                            seed=self.seed, instance_source=self.instance_source)

    def env_args(self) -> dict[str, Any]:
        """The options as plain values (``max_moves`` resolved to the suite's budget)."""
        return {**asdict(self), "depths": list(self.depths), "max_moves": self.suite().max_moves}


def _choice(value: Any, name: str, allowed: Sequence[str]) -> str:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, allowed))}, got {value!r}")
    return str(value)


def _count(value: Any, name: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return value


def options(tier: str = DEFAULT_TIER, depths: Sequence[int] = (1, 2, 3, 4), instances: int = 20,
            eval_instances: int = 5, reward: str = "none", shaping_weight: float | None = None,
            tool_setting: str = "basic", metric: str = "quarter", max_steps: int = DEFAULT_MAX_STEPS,
            max_moves: int | None = None, max_rotations: int | None = None, seed: int = 0,
            instance_source: str = "certified", max_tokens: int = 256) -> Options:
    """Validate the environment's arguments: a bad value raises ``ValueError`` naming it, and the grid's
    values (``depths``, ``metric``, budgets, ``instance_source``) the runner's ``SuiteError``."""
    _choice(tier, "tier", tuple(TIERS))
    _choice(reward, "reward", PLAYED_REWARDS)
    _choice(tool_setting, "tool_setting", TOOL_SETTINGS)
    _count(instances, "instances", 0)
    _count(eval_instances, "eval_instances", 0)
    _count(max_tokens, "max_tokens", 1)
    if instances + eval_instances == 0:
        raise ValueError("instances and eval_instances are both 0: the environment would have no rows")
    if shaping_weight is None:
        shaping_weight = 1.0 if reward in SHAPING_REWARDS else 0.0
    if not isinstance(shaping_weight, (int, float)) or isinstance(shaping_weight, bool) or shaping_weight < 0:
        raise ValueError(f"shaping_weight must be a number >= 0, got {shaping_weight!r}")
    if shaping_weight and reward not in SHAPING_REWARDS:
        raise ValueError(f"shaping_weight={shaping_weight!r} needs a dense reward ({', '.join(SHAPING_REWARDS)}); "
                         f"reward={reward!r} is sparse")
    grid_depths: Any = depths  # anything but a list reaches episode_grid as given, which names it
    if isinstance(depths, Sequence) and not isinstance(depths, (str, bytes)):
        grid_depths = tuple(depths)
    chosen = Options(tier=tier, depths=grid_depths, instances=instances, eval_instances=eval_instances, reward=reward,
                     shaping_weight=float(shaping_weight), tool_setting=tool_setting, metric=metric,
                     max_steps=max_steps, max_moves=max_moves, max_rotations=max_rotations, seed=seed,
                     instance_source=instance_source, max_tokens=max_tokens)
    chosen.suite()  # the grid's values, checked as a suite file's are
    return chosen


def last_reply(messages: Any) -> str | None:
    """The text of the last assistant message among ``messages`` (dicts or message objects, as each verifiers API
    keeps them), or ``None`` when there is none (the call failed)."""
    for message in reversed(list(messages or [])):
        role = message.get("role") if isinstance(message, dict) else getattr(message, "role", None)
        if role == "assistant":
            return text_of(message.get("content") if isinstance(message, dict) else message.content)
    return None


def text_of(content: Any) -> str:
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


@dataclass(frozen=True)
class Turn:
    """What the rollout sends the model next: ``messages`` (chat messages, text only: the whole conversation
    for the first call, the environment's answer after that) and the agent's sampling settings."""

    messages: list[dict[str, str]]
    stop: list[str] | None
    max_tokens: int

    def sampling(self) -> dict[str, Any]:
        """The sampling arguments of the call (``max_tokens``, and ``stop`` when the agent has one)."""
        return {"max_tokens": self.max_tokens, **({"stop": list(self.stop)} if self.stop else {})}


def _plain(messages: Sequence[dict[str, Any]]) -> list[dict[str, str]]:
    return [{"role": str(m["role"]), "content": text_of(m.get("content"))} for m in messages]


def _since_last_reply(ask: Ask) -> list[dict[str, Any]]:
    """The messages of ``ask`` after the model's last reply: what the environment answers with."""
    last = max((i for i, m in enumerate(ask.messages) if m["role"] == "assistant"), default=-1)
    return ask.messages[last + 1:]


class EpisodeTurns:
    """One rollout's episode, turn by turn (see the module docstring).

    Use: ``first = await start()``; then ``after = await reply(text)`` for each model reply until it returns
    ``None`` (the episode is over: :attr:`record` holds its record); :meth:`abandon` when the rollout stops
    first (our loop then ends the episode as ``error``, which scores 0).  Safe to abandon at any time.
    """

    def __init__(self, spec: EpisodeSpec, *, model: str, max_tokens: int, timeout_s: float = 600.0) -> None:
        self.spec = spec
        self.max_tokens = max_tokens
        self.record: EpisodeRecord | None = None
        self._relay = EpisodeRelay(spec, PLAY_SETTINGS, model=model, max_tokens=max_tokens, timeout_s=timeout_s)
        self._started = False
        self._failed = False

    async def _next(self) -> Ask | EpisodeRecord:
        """The episode's next event; if waiting for it fails (the episode crashed or timed out), nothing more
        will come, which :meth:`abandon` must know."""
        try:
            return await self._relay.next_event()
        except BaseException:
            self._failed = True
            raise

    def _turn(self, ask: Ask, messages: list[dict[str, Any]]) -> Turn:
        return Turn(_plain(messages), list(ask.stop) if ask.stop else None, ask.max_tokens or self.max_tokens)

    async def start(self) -> Turn:
        """Start the episode; its first model call (system prompt and first observation)."""
        if self._started:
            raise RuntimeError(f"episode {self.spec.key} was already started")
        self._started = True
        self._relay.start()
        event = await self._next()
        if not isinstance(event, Ask):
            self.record = event
            raise RuntimeError(f"episode {self.spec.key} ended before its first model call ({event.status})")
        return self._turn(event, event.messages)

    async def reply(self, text: str, input_tokens: int = 0, output_tokens: int = 0) -> Turn | None:
        """Hand the model's reply to the episode: the environment's answer, or ``None`` once it is over."""
        self._relay.answer(text, input_tokens, output_tokens)
        event = await self._next()
        if isinstance(event, Ask):
            return self._turn(event, _since_last_reply(event))
        self.record = event
        return None

    async def abandon(self) -> EpisodeRecord | None:
        """End an episode the rollout gave up on and wait for its record (``None`` if it never started or
        failed); nothing to do once the episode is over."""
        if not self._started or self._failed or self.record is not None:
            return self.record
        self._relay.close()
        while self.record is None:
            event = await self._next()
            if isinstance(event, EpisodeRecord):
                self.record = event
        return self.record

    def final_message(self) -> str:
        """The last step's tool results and the episode's outcome (what the environment says last)."""
        record = self.record
        if record is None:
            return ""
        lines: list[str] = []
        if record.steps:
            last = record.steps[-1]
            lines += [c.result for c in last.tool_calls if c.result]
            lines += [f"Error: {p}" for p in (last.parse_error, last.error) if p]
        lines.append(f"Episode over: {record.status} after {record.n_steps} steps and {record.n_moves} moves.")
        return "Observation: " + "\n".join(lines)


def record_of(holder: Any) -> EpisodeRecord | None:
    """The episode record kept in a rollout state or a trace's ``info`` (:data:`RECORD_KEY`), or ``None``
    when the episode never ran."""
    data = holder.get(RECORD_KEY) if hasattr(holder, "get") else None
    return EpisodeRecord.from_dict(data) if data is not None else None


FIGURES = {"moves": "n_moves", "rotations": "n_rotations", "steps": "n_steps", "parse_errors": "parse_errors",
           "errors": "errors"}
"""The metrics read off the episode record (name: record field)."""


def figure(record: EpisodeRecord | None, name: str) -> float:
    """One of :data:`FIGURES`, 0.0 when the episode never ran."""
    return float(getattr(record, FIGURES[name])) if record is not None else 0.0


rewards = episode_rewards
"""The rollout's rewards (:func:`cubebench.agents.episode_reward.episode_rewards`: the GRPO programs' too)."""


def metrics(record: EpisodeRecord | None, shaping_weight: float) -> dict[str, float]:
    """The rollout's metrics (weight 0): the counts of :data:`FIGURES`, and ``shaping`` when it is not a reward."""
    out = {} if shaping_weight > 0 else {"shaping": shaping(record)}
    out.update({name: figure(record, name) for name in FIGURES})
    return out
