"""OpenAI-compatible chat completions: OpenAI itself and every server that speaks its API."""

from __future__ import annotations

import os
from typing import Any, Mapping, Sequence

from .client import BadBody, ModelClient, _import, CallResult, expect, optional_text, token_counts
from .messages import Message, to_openai
from .reply import ModelError

__all__ = ["OpenAIChatClient"]


class OpenAIChatClient(ModelClient):
    """OpenAI-compatible chat completions (OpenAI, vLLM, Ollama, llama.cpp server).

    ``base_url``/``api_key`` default to ``OPENAI_BASE_URL``/``OPENAI_API_KEY``. Without a base URL
    the client talks to api.openai.com and needs a key; with one (a local server) a missing key
    is replaced by a dummy. ``max_tokens_param`` names the length field: OpenAI's own API wants
    ``max_completion_tokens`` (what :func:`make_client` uses for ``openai:``), most compatible
    servers ``max_tokens``. ``default_extra`` is merged into every request body (per-call
    ``extra`` wins), e.g. a GBNF ``grammar``.
    """

    provider = "openai"

    def __init__(self, model: str, *, base_url: str | None = None, api_key: str | None = None,
                 max_tokens_param: str = "max_tokens",
                 default_extra: Mapping[str, Any] | None = None, **settings: Any) -> None:
        super().__init__(model, **settings)
        openai = _import("openai")
        base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
        api_key = api_key or os.environ.get("OPENAI_API_KEY") or None
        if api_key is None and base_url is None:
            raise ModelError("OPENAI_API_KEY is not set (needed for api.openai.com; set "
                             "OPENAI_BASE_URL or pass base_url for a local server)", kind="config")
        self.max_tokens_param = max_tokens_param
        self.default_extra = dict(default_extra or {})
        self._lib = openai
        self._client = openai.OpenAI(api_key=api_key or "not-needed", base_url=base_url,
                                     max_retries=0, timeout=self.timeout_s)
        self._secrets = (api_key,) if api_key else ()

    def endpoint(self) -> str:
        return str(self._client.base_url).rstrip("/") + "/chat/completions"

    def _auth_hint(self) -> str:
        return " (check OPENAI_API_KEY)"

    def build_request(self, messages: Sequence[Message], *, stop: list[str] | None,
                       max_tokens: int, temperature: float | None, seed: int | None,
                       extra: dict[str, Any]) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"model": self.model, "messages": to_openai(messages),
                                  self.max_tokens_param: max_tokens}
        optional = {"stop": stop, "temperature": temperature, "seed": seed}
        kwargs.update({k: v for k, v in optional.items() if v is not None})
        body_extra = {**self.default_extra, **extra}
        if body_extra:
            kwargs["extra_body"] = body_extra
        return kwargs

    def loggable(self, request: dict[str, Any]) -> dict[str, Any]:
        body = {k: v for k, v in request.items() if k != "extra_body"}
        return {**body, **request.get("extra_body", {})}

    def attempt(self, request: dict[str, Any]) -> CallResult:
        try:
            raw = self._client.chat.completions.with_raw_response.create(**request)
        except self._lib.APIError as exc:
            raise self._classify_library_error(exc, self._lib) from exc
        status, body = self._decode(raw)
        return self._parsed(status, body, _parse_chat_completion)

    def close(self) -> None:
        """Close the library client's connection pool."""
        self._client.close()


def _parse_chat_completion(body: Any) -> tuple[str, str, int, int]:
    """(text, finish reason, prompt tokens, completion tokens) of a chat-completion body.

    ``choices[0].message.content`` must be a string or null (null is the empty reply),
    ``finish_reason`` a string or null (``stop``), ``usage`` null or an object of non-negative
    integer counts; anything else raises :class:`~.client.BadBody`.
    """
    expect(body, dict, "the body")
    choices = expect(body.get("choices"), list, "choices")
    if not choices:
        raise BadBody("choices is an empty array")
    choice = expect(choices[0], dict, "choices[0]")
    message = expect(choice.get("message"), dict, "choices[0].message")
    text = optional_text(message.get("content"), "choices[0].message.content")
    finish = optional_text(choice.get("finish_reason"), "choices[0].finish_reason", "stop") or "stop"
    n_in, n_out = token_counts(body.get("usage"), ("prompt_tokens", "completion_tokens"))
    return text, finish, n_in, n_out
