"""Answerers: who replies to a question item's prompts (a model, the oracle, the random baseline).

A question item (:mod:`cubebench.tasks.items`) asks through an ``Ask`` callback; the runner passes
``answerer.answer``. Three answerers exist:

* :class:`ModelAnswerer` asks a chat model through a :class:`~cubebench.agents.llm.ModelClient`
  (the system text, the question text and the image, never the gold); a failed call (API error
  after retries, a malformed reply, a spent budget) is a :class:`Reply` with ``error`` set, never an
  exception, so the item ends as an error and the run goes on.
* :class:`OracleAnswerer` replies the gold in the prompt's answer format (the strict one-line form, or the
  run's rules: ``\\boxed{Yes}``, ``<ANSWER> B </ANSWER>``): the calibration ceiling (every scored reply
  must parse back to the gold) and the only code that reads ``Prompt.gold``.
* :class:`RandomAnswerer` replies a uniformly random answer in the format: the chance baseline.
"""

from __future__ import annotations

import random
from typing import Any, Protocol

from ..tasks.items import Prompt, Reply
from .llm import BudgetExceeded, ModelClient, ModelError
from .llm.messages import Part, image_part, safe_text, text_part
from .records import png_bytes

__all__ = ["Answerer", "OracleAnswerer", "RandomAnswerer", "ModelAnswerer", "ORACLE_FREE_TEXT", "EMPTY_QUESTION"]

ORACLE_FREE_TEXT = "(oracle: no reflection needed)"
"""What the oracle replies to an unscored free-text turn (a reflection): there is nothing to fix."""
EMPTY_QUESTION = "(no further text)"
"""The user text sent when a prompt has neither text nor a shown image: providers refuse empty messages."""


BUDGET_SPENT = "budget:"
"""How a reply's ``error`` starts when the answerer spent its own token or cost budget (the model's doing,
unlike a failed call)."""

class Answerer(Protocol):
    """Replies to a question item's prompts; ``answer`` is the item's ``Ask``."""

    name: str

    def answer(self, prompt: Prompt) -> Reply:
        """The reply to one prompt; a failed call is a reply with ``error`` set, not an exception."""

    def close(self) -> None:
        """Release what the answerer holds (a model client's connections)."""


class OracleAnswerer:
    """The calibration oracle: replies the gold answer in the prompt's answer format."""

    name = "oracle"

    def answer(self, prompt: Prompt) -> Reply:
        """``form.format(gold)`` for a scored prompt; a fixed short text for a free-text turn."""
        if not prompt.scored:
            return Reply(text=ORACLE_FREE_TEXT)
        return Reply(text=prompt.form.format(prompt.gold))

    def close(self) -> None:
        """Nothing to release."""


class RandomAnswerer:
    """The uniform random baseline: a random answer in the prompt's format, reproducible per seed."""

    name = "random"

    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    def answer(self, prompt: Prompt) -> Reply:
        """``form.format(form.sample(rng))`` for a scored prompt; an empty text for a free-text turn."""
        if not prompt.scored:
            return Reply(text="")
        return Reply(text=prompt.form.format(prompt.form.sample(self.rng)))

    def close(self) -> None:
        """Nothing to release."""


class ModelAnswerer:
    """Asks a chat model each prompt as one fresh conversation: a system and a user message.

    ``send_images=False`` leaves the image out (text-only runs of image variants); ``max_tokens``
    overrides the client's per-call limit (a question run sets its rules': :mod:`cubebench.runner.answering`).
    The request is built from ``system``, ``text`` and
    ``image`` only: the gold never reaches the model.
    """

    def __init__(self, client: ModelClient, *, send_images: bool = True, max_tokens: int | None = None,
                 name: str | None = None) -> None:
        self.client = client
        self.send_images = send_images
        self.max_tokens = max_tokens
        self.name = name or client.model

    def messages(self, prompt: Prompt) -> list[dict[str, Any]]:
        """The chat messages for ``prompt``: system text (when any), then question text and image, or the prompt's
        interleaved texts and images in their order (``Prompt.parts``; without images: its text).

        Without an image the question is a plain string: text-only servers (llama.cpp's, for one) and the
        in-process models refuse a list of content parts."""
        text = prompt.text or EMPTY_QUESTION
        content: str | list[Part] = text
        if prompt.parts is not None and self.send_images:  # one multi-image message, texts between the images
            content = [text_part(p) if isinstance(p, str) else image_part(png_bytes(p)) for p in prompt.parts
                       if not isinstance(p, str) or p]  # providers refuse empty text blocks
        elif prompt.image is not None and self.send_images:
            content = [image_part(png_bytes(prompt.image))]
            if prompt.text:
                content.insert(0, text_part(prompt.text))
        system = [{"role": "system", "content": prompt.system}] if prompt.system else []
        return [*system, {"role": "user", "content": content}]

    def answer(self, prompt: Prompt) -> Reply:
        """One model call; model failures and spent budgets come back as ``Reply.error``."""
        try:
            reply = self.client.complete(self.messages(prompt), max_tokens=self.max_tokens)
        except BudgetExceeded as err:
            return _failed(f"{BUDGET_SPENT} {safe_text(str(err))}", err.log, err.reply)
        except ModelError as err:  # MalformedReply included
            return _failed(f"{err.kind}: {safe_text(str(err))}", err.log)
        if not isinstance(reply.text, str):  # a client of its own that let a malformed reply through
            return _failed(f"malformed: the reply text is a {type(reply.text).__name__}, not a str",
                           reply.log, reply)
        return Reply(text=safe_text(reply.text), input_tokens=reply.input_tokens,
                     output_tokens=reply.output_tokens, cost_usd=reply.cost_usd,
                     latency_s=reply.latency_s, model_log=list(reply.log))

    def close(self) -> None:
        """Close the model client."""
        self.client.close()


def _failed(error: str, log: list[dict[str, Any]] | None, reply: Any = None) -> Reply:
    """A failed call's reply: no text, the error, the attempts logged and any usage already spent
    (a budget crossed by a finished call still cost its tokens)."""
    if reply is None:
        return Reply(text="", error=error, model_log=list(log or []))
    return Reply(text="", error=error, input_tokens=reply.input_tokens, output_tokens=reply.output_tokens,
                 cost_usd=reply.cost_usd, latency_s=reply.latency_s, model_log=list(log or []))
