"""An episode of the runner whose model calls are answered from outside: the core of the verifiers bridge.

A verifiers rollout is driven by verifiers (it calls the model, then asks the environment for its
response), while a CubeBench episode is driven by our loop (:func:`~cubebench.agents.episode.run_episode`
calls the agent).  :class:`EpisodeRelay` joins the two without re-implementing either: it plays the
episode with the runner's :func:`~cubebench.runner.protocols.episodes.play.play_episode` in a worker thread, with our
:class:`~cubebench.agents.react.ReActAgent` (its prompt, ``Action:`` parser, tools and budgets), whose
model client (:class:`RelayClient`) hands each request to the caller and waits for the reply the caller
got from its own model.  So every message the model sees, every parse and every move is exactly what a
``cubebench run`` episode with the ReAct agent would do with the same replies, and the episode ends with
the same :class:`~cubebench.agents.records.EpisodeRecord`.

This module needs nothing beyond the core install; :mod:`.environment` puts it behind ``vf.MultiTurnEnv``.
"""

from __future__ import annotations

import asyncio
import queue
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence, cast

from cubebench.agents.base import Agent
from cubebench.agents.llm import ModelError, ModelReply
from cubebench.agents.react import ReActAgent
from cubebench.agents.records import EpisodeRecord
from cubebench.tiers import tier_spec
from cubebench.runner import AgentFactory, AgentSpec, EpisodeSpec, play_episode, PlaySettings

__all__ = ["Ask", "EpisodeRelay", "RelayClient", "RelayClosed", "first_prompt"]

PROVIDER = "verifiers"
"""The provider name in the episode record's model log: the reply came through a verifiers rollout."""


@dataclass(frozen=True)
class Ask:
    """One model call the episode makes: the whole conversation so far and the agent's sampling settings."""

    messages: list[dict[str, Any]]
    stop: list[str] | None = None
    max_tokens: int | None = None


class RelayClosed(ModelError):
    """The relay was closed (the rollout ended) while the episode still wanted a model reply."""


@dataclass
class _Channel:
    """The two queues between the episode thread and its caller."""

    asks: "queue.Queue[Ask | EpisodeRecord | BaseException]" = field(default_factory=queue.Queue)
    replies: "queue.Queue[tuple[str, int, int] | None]" = field(default_factory=queue.Queue)
    closed: threading.Event = field(default_factory=threading.Event)


class RelayClient:
    """A :class:`~cubebench.agents.llm.ModelClient` stand-in for the ReAct agent: ``complete`` hands the
    request to the relay's caller and returns the reply the caller passes to :meth:`EpisodeRelay.answer`."""

    provider = PROVIDER

    def __init__(self, channel: _Channel, model: str) -> None:
        self._channel = channel
        self.model = model

    def complete(self, messages: Sequence[Any], *, stop: Sequence[str] | None = None,
                 max_tokens: int | None = None, temperature: float | None = None, seed: int | None = None,
                 extra: Mapping[str, Any] | None = None, budget: Any = None) -> ModelReply:
        """Wait for the caller's reply to ``messages`` (sampling is the caller's: ``temperature``,
        ``seed`` and ``extra`` are not used); raises :class:`RelayClosed` once the relay is closed."""
        if self._channel.closed.is_set():
            raise RelayClosed("the verifiers rollout ended before the episode did", kind="config")
        started = time.perf_counter()
        self._channel.asks.put(Ask([dict(m) for m in messages], list(stop) if stop else None, max_tokens))
        answer = self._channel.replies.get()
        if answer is None:
            raise RelayClosed("the verifiers rollout ended before the episode did", kind="config")
        text, n_in, n_out = answer
        return ModelReply(text=text, finish_reason="stop", input_tokens=n_in, output_tokens=n_out,
                          latency_s=time.perf_counter() - started, cost_usd=0.0, attempts=1, model=self.model,
                          provider=PROVIDER)

    def close(self) -> None:
        """Nothing to release: the model belongs to the caller."""


class _RelayFactory:
    """What :func:`~cubebench.runner.protocols.episodes.play.play_episode` uses of an agent factory: one ReAct agent over the relay."""

    symbolic_obs_format = "text"
    """A model reads the symbolic tier as its 54-letter text."""

    def __init__(self, channel: _Channel, model: str, max_tokens: int) -> None:
        self.spec = AgentSpec(spec=f"{PROVIDER}:{model}", style="react", send_images=False)
        self._channel = channel
        self._model = model
        self._max_tokens = max_tokens

    def new(self, seed: int | None = None) -> Agent:
        return ReActAgent(cast(Any, RelayClient(self._channel, self._model)), name=f"react:{PROVIDER}:{self._model}",
                          max_tokens=self._max_tokens, send_images=False)


class EpisodeRelay:
    """One planned episode played in a worker thread, its model calls answered by the caller.

    Use: :meth:`start`, then loop ``event = await next_event()``: an :class:`Ask` is a model call to make
    (answer it with :meth:`answer`), an :class:`~cubebench.agents.records.EpisodeRecord` means the episode
    is over.  :meth:`close` ends an episode the caller abandons (its next model call fails, and our loop
    ends it as an ``error`` after its consecutive-error limit), and is safe to call at any time.
    """

    def __init__(self, spec: EpisodeSpec, settings: PlaySettings | None = None, *, model: str = "model",
                 max_tokens: int = 256, timeout_s: float = 600.0) -> None:
        settings = settings or PlaySettings(obs_format="text", store_images=False)
        if tier_spec(spec.tier).pictured and settings.obs_format != "text":
            raise ValueError(f"the {spec.tier} tier must be shown as text here (obs_format='text'): a verifiers "
                             "rollout of this bridge sends text messages only")
        self.spec = spec
        self.settings = settings
        self.timeout_s = timeout_s
        self.record: EpisodeRecord | None = None
        self._channel = _Channel()
        self._factory = _RelayFactory(self._channel, model, max_tokens)
        self._thread = threading.Thread(target=self._play, name=f"cubebench-episode-{spec.key}", daemon=True)

    def start(self) -> "EpisodeRelay":
        """Start the episode; its first model call arrives through :meth:`next_event`."""
        self._thread.start()
        return self

    def _play(self) -> None:
        try:
            record = play_episode(self.spec, cast(AgentFactory, self._factory), self.settings)
        except BaseException as err:  # noqa: BLE001 - handed to the caller, who raises it
            self._channel.asks.put(err)
            return
        self._channel.asks.put(record)

    def wait_event(self) -> Ask | EpisodeRecord:
        """The episode's next model call, or its record once it is over (blocking)."""
        try:
            event = self._channel.asks.get(timeout=self.timeout_s)
        except queue.Empty:
            self.close()
            raise TimeoutError(f"episode {self.spec.key}: no model call nor end within {self.timeout_s} s") from None
        if isinstance(event, BaseException):
            raise RuntimeError(f"episode {self.spec.key} failed: {type(event).__name__}: {event}") from event
        if isinstance(event, EpisodeRecord):
            self.record = event
        return event

    async def next_event(self) -> Ask | EpisodeRecord:
        """:meth:`wait_event` without blocking the event loop."""
        return await asyncio.to_thread(self.wait_event)

    def answer(self, text: str, input_tokens: int = 0, output_tokens: int = 0) -> None:
        """The model's reply to the last :class:`Ask`."""
        if not isinstance(text, str):
            raise TypeError(f"a reply is a str, not {type(text).__name__}")
        self._channel.replies.put((text, input_tokens, output_tokens))

    def close(self) -> None:
        """Abandon the episode: a pending or later model call fails (the thread then finishes by itself)."""
        self._channel.closed.set()
        self._channel.replies.put(None)


def first_prompt(spec: EpisodeSpec, settings: PlaySettings | None = None, *, max_tokens: int = 256) -> list[dict[str, Any]]:
    """The messages of the episode's first model call (system prompt and first observation), as the
    ReAct agent sends them; the episode is then abandoned."""
    relay = EpisodeRelay(spec, settings, max_tokens=max_tokens).start()
    try:
        event = relay.wait_event()
        if not isinstance(event, Ask):
            raise RuntimeError(f"episode {spec.key} ended before its first model call: {event.status}")
        return event.messages
    finally:
        relay.close()
