"""What ReAct and CodeAct share: a conversation with a chat model, one call per step."""

from __future__ import annotations

from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any

from .base import Observation, Task, Turn
from .llm import BudgetExceeded, ModelClient, ModelError, text_part
from .llm.messages import image_part, safe_text
from .records import png_bytes

PROMPTS = Path(__file__).with_name("prompts")


def read_prompt(value: str | Path | None) -> str:
    """A prompt given as a path (read it) or as the text itself."""
    if value is None:
        return ""
    return Path(value).read_text() if isinstance(value, Path) else value


class ChatAgent(ABC):
    """Keeps the message history, shows observations (text and images), calls the model.

    Subclasses build the system prompt in :meth:`system_prompt` and turn a
    reply into tool calls in :meth:`handle`.
    """

    stop: list[str] | None = None
    reward_line = True
    """Show a dense reward as a ``Reward: +x`` line under the observation; off where the
    observation (a tool's own result) already reports it."""
    steps_line = True
    """End the observation with ``(N steps left)``; off where the observation states its own budgets."""

    def __init__(self, client: ModelClient, *, name: str, system_prompt: str | Path,
                 examples: str | Path | None, max_tokens: int, send_images: bool = True) -> None:
        self.client = client
        self.name = name
        self.template = read_prompt(system_prompt)
        self.examples = read_prompt(examples)
        self.max_tokens = max_tokens
        self.send_images = send_images
        self.messages: list[dict[str, Any]] = []
        self.extra: dict[str, Any] = {}

    @abstractmethod
    def system_prompt(self, task: Task) -> str:
        """The system prompt for an episode of ``task`` (may also set ``self.extra``)."""

    @abstractmethod
    def handle(self, reply: str, turn: Turn, tools: Any) -> None:
        """Turn the model's reply into tool calls, noting the action or error on ``turn``."""

    def reset(self, task: Task) -> None:
        system = self.system_prompt(task)
        if self.examples:
            system += "\n\n" + self.examples.strip()
        self.messages = [{"role": "system", "content": system}]

    def act(self, observation: Observation, tools: Any) -> Turn:
        """One model call. Only a call that returned a reply adds to the history (the observation and
        the reply's text); a failed call (budget, model error, malformed reply, anything else the
        client raises) leaves the history as it was, so it cannot break the calls after it."""
        self.messages.append({"role": "user", "content": self._content(observation)})
        try:
            reply = self.client.complete(self.messages, stop=self.stop, max_tokens=self.max_tokens, extra=self.extra)
        except BudgetExceeded as err:
            self.messages.pop()
            return Turn(error=f"budget exceeded: {err}", model_log=list(getattr(err, "log", None) or []), stop=True)
        except ModelError as err:  # MalformedReply included: the server's replies were not replies
            self.messages.pop()
            return Turn(error=f"model error: {safe_text(str(err))}", model_log=list(getattr(err, "log", None) or []))
        except BaseException:
            self.messages.pop()
            raise
        if not isinstance(reply.text, str):  # a client of its own that let a malformed reply through
            self.messages.pop()
            return Turn(error=f"model error: malformed reply: its text is a {type(reply.text).__name__}, not a str",
                        model_log=list(getattr(reply, "log", None) or []))
        text = safe_text(reply.text)
        self.messages.append({"role": "assistant", "content": text})
        turn = Turn(reply=text, input_tokens=reply.input_tokens, output_tokens=reply.output_tokens,
                    cost_usd=reply.cost_usd, model_log=[reply.as_record()],
                    reply_cut=getattr(reply, "reply_cut", None))
        self.handle(text, turn, tools)
        return turn

    def close(self) -> None:
        """Release the model client."""
        self.client.close()

    def _content(self, observation: Observation) -> Any:
        text = f"Observation: {safe_text(observation.text)}"  # code output may hold lone surrogates
        if observation.reward is not None and self.reward_line:  # dense rewards: what the last step earned
            text += f"\nReward: {observation.reward:+g}"
        if self.steps_line:
            text += f"\n({observation.steps_left} steps left)"
        if observation.image is None or not self.send_images:
            return text
        return [text_part(text), image_part(png_bytes(observation.image))]
