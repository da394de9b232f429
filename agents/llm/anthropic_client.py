"""Anthropic's Messages API."""

from __future__ import annotations

import os
from typing import Any, Sequence

from .client import ModelClient, _import, CallResult, expect, optional_text, token_counts
from .messages import Message, to_anthropic
from .reply import ModelError

__all__ = ["AnthropicClient"]


_ANTHROPIC_STOP = {"end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length"}


class AnthropicClient(ModelClient):
    """Anthropic Messages API. ``api_key``/``base_url`` default to ``ANTHROPIC_API_KEY``/``ANTHROPIC_BASE_URL``.

    System messages become the ``system`` field. The API has no sampling seed: a seed is not
    sent, and the request log notes it under ``"unsupported"``.
    """

    provider = "anthropic"

    def __init__(self, model: str, *, base_url: str | None = None, api_key: str | None = None,
                 **settings: Any) -> None:
        super().__init__(model, **settings)
        anthropic = _import("anthropic")
        api_key = api_key or os.environ.get("ANTHROPIC_API_KEY") or None
        base_url = base_url or os.environ.get("ANTHROPIC_BASE_URL") or None
        if api_key is None:
            raise ModelError("ANTHROPIC_API_KEY is not set", kind="config")
        self._lib = anthropic
        self._client = anthropic.Anthropic(api_key=api_key, base_url=base_url, max_retries=0,
                                           timeout=self.timeout_s)
        self._secrets = (api_key,)

    def endpoint(self) -> str:
        return str(self._client.base_url).rstrip("/") + "/v1/messages"

    def _auth_hint(self) -> str:
        return " (check ANTHROPIC_API_KEY)"

    def build_request(self, messages: Sequence[Message], *, stop: list[str] | None,
                       max_tokens: int, temperature: float | None, seed: int | None,
                       extra: dict[str, Any]) -> dict[str, Any]:
        system, converted = to_anthropic(messages)
        kwargs: dict[str, Any] = {"model": self.model, "messages": converted,
                                  "max_tokens": max_tokens}
        optional = {"system": system, "stop_sequences": stop}
        kwargs.update({k: v for k, v in optional.items() if v is not None})
        # Recent anthropic releases dropped `temperature` from create()'s keywords, while the
        # wire field still exists for the models that take it: send it in the body directly.
        body_extra = {"temperature": temperature} if temperature is not None else {}
        body_extra.update(extra)
        if body_extra:
            kwargs["extra_body"] = body_extra
        if seed is not None:
            kwargs["_unsupported"] = {"seed": seed}
        return kwargs

    def loggable(self, request: dict[str, Any]) -> dict[str, Any]:
        body = {k: v for k, v in request.items() if k not in ("extra_body", "_unsupported")}
        body.update(request.get("extra_body", {}))
        if "_unsupported" in request:
            body["unsupported"] = request["_unsupported"]
        return body

    def attempt(self, request: dict[str, Any]) -> CallResult:
        kwargs = {k: v for k, v in request.items() if k != "_unsupported"}
        try:
            raw = self._client.messages.with_raw_response.create(**kwargs)
        except self._lib.APIError as exc:
            raise self._classify_library_error(exc, self._lib) from exc
        status, body = self._decode(raw)
        return self._parsed(status, body, _parse_message)

    def close(self) -> None:
        """Close the library client's connection pool."""
        self._client.close()


def _parse_message(body: Any) -> tuple[str, str, int, int]:
    """(text, finish reason, input tokens, output tokens) of a Messages API body.

    ``content`` must be an array of objects; the ``text`` of its ``text`` blocks (strings) is the
    reply, other block types (thinking, tool use) are skipped. ``stop_reason`` is a string or null,
    ``usage`` null or an object of non-negative integer counts (cache reads and writes count as
    input); anything else raises :class:`~.client.BadBody`.
    """
    expect(body, dict, "the body")
    blocks = expect(body.get("content"), list, "content")
    texts = []
    for i, block in enumerate(blocks):
        expect(block, dict, f"content[{i}]")
        if block.get("type") == "text":
            texts.append(expect(block.get("text"), str, f"content[{i}].text"))
    stop = optional_text(body.get("stop_reason"), "stop_reason", "stop") or "stop"
    n_in, n_cache_write, n_cache_read, n_out = token_counts(body.get("usage"), (
        "input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens"))
    return "".join(texts), _ANTHROPIC_STOP.get(stop, stop), n_in + n_cache_write + n_cache_read, n_out
