"""The agents and answerers an Inspect eval plays with: ours, over the eval's model.

The runner's :func:`~cubebench.runner.protocols.episodes.play.play_episode` and :func:`~cubebench.runner.protocols.questions.play.play_item`
take a factory that makes a fresh agent per episode (or answerer per item).  :class:`InspectAgentFactory`
is that factory for an Inspect model, so an Inspect sample is played by exactly the code a ``cubebench run``
episode is played by, and records the same :class:`~cubebench.agents.records.EpisodeRecord`:

- ``tools``: :class:`~.tool_agent.InspectToolAgent`, the model calls our tools as native tool calls;
- ``react``: our :class:`~cubebench.agents.react.ReActAgent` (its prompt, ``Action:`` parser and few-shot
  examples), the rules of the CubeBench paper and of ``cubebench run``;
- ``codeact``: our :class:`~cubebench.agents.codeact.CodeActAgent`, code run in our own sandbox
  (``cubebench.agents.sandbox``: a separate process, no container runtime needed).
"""

from __future__ import annotations

from typing import Any, cast

from inspect_ai.model import ChatMessage, Model

from cubebench.agents.answerers import ModelAnswerer
from cubebench.agents.base import Agent
from cubebench.agents.chat import ChatAgent
from cubebench.agents.codeact import CodeActAgent
from cubebench.agents.react import ReActAgent
from cubebench.agents.records import EpisodeRecord
from cubebench.runner import AgentFactory, AgentSpec

from .model_client import FailedCall, InspectModelClient, to_inspect_messages
from .tool_agent import InspectToolAgent

__all__ = ["AGENTS", "InspectAgentFactory", "stored_record"]

AGENTS = ("tools", "react", "codeact")
"""How the model acts in an episode (see the module docstring)."""


class InspectAgentFactory:
    """Fresh agents (``new``) and answerers (``new_answerer``) over one Inspect ``model``.

    It offers what :func:`~cubebench.runner.protocols.episodes.play.play_episode` and
    :func:`~cubebench.runner.protocols.questions.play.play_item` use of the runner's
    :class:`~cubebench.runner.specs.AgentFactory`: ``new``, ``new_answerer``, ``symbolic_obs_format`` and
    ``spec.send_images``.  It keeps the agents it made, for the sample's transcript (:meth:`transcript`), and
    the sample's first model call that failed after Inspect's retries (:attr:`failed`): make one factory per sample.
    """

    symbolic_obs_format = "text"
    """A model reads the symbolic tier as its 54-letter text."""

    def __init__(self, model: Model, agent: str = "tools", *, send_images: bool = True) -> None:
        if agent not in AGENTS:
            raise ValueError(f"unknown agent {agent!r}; expected one of {', '.join(AGENTS)}")
        self.model = model
        self.agent = agent
        self.spec = AgentSpec(spec=f"inspect:{model}", style="react" if agent == "tools" else agent,
                              send_images=send_images)
        self.made: list[Any] = []
        self.failed = FailedCall()

    def new(self, seed: int | None = None) -> Agent:
        """A fresh agent for one episode (the seed is the runner's; sampling is the eval's ``--seed``)."""
        agent: Agent
        if self.agent == "tools":
            agent = InspectToolAgent(self.model, send_images=self.spec.send_images, failed=self.failed)
        elif self.agent == "codeact":
            agent = CodeActAgent(self._client(), send_images=self.spec.send_images)
        else:
            agent = ReActAgent(self._client(), send_images=self.spec.send_images)
        self.made.append(agent)
        return agent

    def new_answerer(self, seed: int | None = None) -> ModelAnswerer:
        """A fresh answerer for one question item: each question one fresh conversation, as in ``cubebench run``."""
        answerer = ModelAnswerer(self._client(), send_images=self.spec.send_images)
        self.made.append(answerer)
        return answerer

    def _client(self) -> InspectModelClient:
        return InspectModelClient(self.model, failed=self.failed)

    def for_runner(self) -> AgentFactory:
        """This factory where the runner's play functions name their factory type: it has every member they use."""
        return cast(AgentFactory, self)

    def transcript(self, record: EpisodeRecord) -> list[ChatMessage]:
        """The conversation of the last agent made, as Inspect messages (for the sample's log).

        A tool agent's last tool calls are answered with their recorded results, so the transcript is
        complete; a chat agent's history is its own messages."""
        if not self.made:
            return []
        agent = self.made[-1]
        if isinstance(agent, InspectToolAgent):
            last = record.steps[-1] if record.steps else None
            if last is not None:
                agent.close_pending("\n".join(c.result for c in last.tool_calls) or "(no result)")
            return list(agent.messages)
        if isinstance(agent, ChatAgent):
            if isinstance(agent.client, InspectModelClient):  # the messages its calls sent, as the same objects
                return agent.client.inspect_messages(agent.messages)
            return to_inspect_messages(agent.messages)
        return []


def stored_record(state: Any, key: str, solver: str, scorer: str) -> EpisodeRecord:
    """The record a sample's ``solver`` kept in its store under ``key``, for ``scorer`` (which must run after it)."""
    data = state.store.get(key)
    if data is None:
        raise RuntimeError(f"sample {state.sample_id}: no record under {key!r}; the {solver} solver must run "
                           f"before {scorer}")
    return EpisodeRecord.from_dict(data)
