"""Anthropic's Messages API."""

from __future__ import annotations

import os
from typing import Any, Sequence

from .client import ModelClient, _import, _Result, _Retryable
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

    def _endpoint(self) -> str:
        return str(self._client.base_url).rstrip("/") + "/v1/messages"

    def _auth_hint(self) -> str:
        return " (check ANTHROPIC_API_KEY)"

    def _build_request(self, messages: Sequence[Message], *, stop: list[str] | None,
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

    def _loggable(self, request: dict[str, Any]) -> dict[str, Any]:
        body = {k: v for k, v in request.items() if k not in ("extra_body", "_unsupported")}
        body.update(request.get("extra_body", {}))
        if "_unsupported" in request:
            body["unsupported"] = request["_unsupported"]
        return body

    def _attempt(self, request: dict[str, Any]) -> _Result:
        kwargs = {k: v for k, v in request.items() if k != "_unsupported"}
        try:
            raw = self._client.messages.with_raw_response.create(**kwargs)
        except self._lib.APIError as exc:
            raise self._classify_library_error(exc, self._lib) from exc
        status, body = self._decode(raw)
        if not isinstance(body, dict) or not isinstance(body.get("content"), list):
            raise _Retryable("response without a content list", kind="malformed",
                             status=status, response=body)
        text = "".join(b.get("text", "") for b in body["content"]
                       if isinstance(b, dict) and b.get("type") == "text")
        stop = body.get("stop_reason") or "stop"
        usage = body.get("usage") or {}
        n_in = sum(int(usage.get(k) or 0) for k in
                   ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"))
        return _Result(text=text, finish_reason=_ANTHROPIC_STOP.get(stop, stop),
                       input_tokens=n_in, output_tokens=int(usage.get("output_tokens") or 0),
                       status=status, body=body)

    def close(self) -> None:
        """Close the library client's connection pool."""
        self._client.close()
