"""The provider-independent model client: one small interface, retries, request logs.

``ModelClient.complete(messages, ...) -> ModelReply`` is all an agent needs. Subclasses implement
one HTTP attempt on an official library: :class:`~.openai_client.OpenAIChatClient` (OpenAI chat
completions and every server that speaks it: vLLM, Ollama, llama.cpp),
:class:`~.anthropic_client.AnthropicClient` (Messages API) and
:class:`~.local.LocalModelClient` (the embedded model); :func:`~.factory.make_client` builds one
from a spec string. The libraries' own retries are off; :class:`ModelClient` retries itself (see
:mod:`.retry`) so every attempt lands in ``ModelReply.log`` (or ``ModelError.log`` when the call
fails), sanitised: no API key, images replaced by their hash and size. A shared
:class:`~.budget.Budget` stops an episode's calls when its token or dollar limit is reached.
"""

from __future__ import annotations

import json
import random
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from .budget import Budget, cost_usd, price_for
from .messages import Message, estimate_tokens, sanitize, validate_messages
from .reply import ModelError, ModelReply
from .retry import RETRYABLE_STATUS, RetryPolicy, parse_retry_after

__all__ = ["ModelClient"]

_LLM_EXTRA_HINT = "pip install 'cubebench[llm]'"
_MAX_LOGGED_TEXT = 4000


class _Retryable(Exception):
    """One attempt failed in a way worth retrying (internal to the retry loop)."""

    def __init__(self, message: str, *, kind: str, status: int | None = None,
                 retry_after_s: float | None = None, response: Any = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.status = status
        self.retry_after_s = retry_after_s
        self.response = response


@dataclass
class _Result:
    """One successful HTTP exchange, already decoded into neutral fields."""

    text: str
    finish_reason: str
    input_tokens: int
    output_tokens: int
    status: int
    body: Any


class ModelClient(ABC):
    """Provider-neutral chat model client; subclasses implement one HTTP attempt.

    Settings given here are defaults for every call; ``complete`` may override them per call.
    ``sleep`` and ``rng_seed`` exist so tests and reproducible runs control the backoff.
    """

    provider: str = ""

    def __init__(self, model: str, *, temperature: float | None = None, seed: int | None = None,
                 max_tokens: int = 1024, timeout_s: float = 60.0, retry: RetryPolicy | None = None,
                 budget: Budget | None = None, price: tuple[float, float] | None = None,
                 sleep: Callable[[float], None] = time.sleep, rng_seed: int | None = None) -> None:
        self.model = model
        self.temperature = temperature
        self.seed = seed
        self.max_tokens = max_tokens
        self.timeout_s = timeout_s
        self.retry = retry or RetryPolicy()
        self.budget = budget
        self.price = price if price is not None else price_for(model)
        self._sleep = sleep
        self._rng = random.Random(rng_seed)
        self._secrets: tuple[str, ...] = ()

    def complete(self, messages: Sequence[Message], *, stop: Sequence[str] | None = None,
                 max_tokens: int | None = None, temperature: float | None = None,
                 seed: int | None = None, extra: Mapping[str, Any] | None = None,
                 budget: Budget | None = None) -> ModelReply:
        """Send ``messages`` and return the reply, retrying transient failures.

        ``extra`` is merged into the JSON request body as is (e.g. ``{"grammar": gbnf}`` for a
        llama.cpp server). ``budget`` overrides the client's shared budget for this call.
        Raises :class:`ModelError` (with ``log``) or :class:`~.budget.BudgetExceeded`.
        """
        validate_messages(messages)
        budget = budget if budget is not None else self.budget
        if budget is not None:
            budget.check_before(estimate_tokens(messages), self.price)
        request = self._build_request(
            messages,
            stop=list(stop) if stop else None,
            max_tokens=max_tokens if max_tokens is not None else self.max_tokens,
            temperature=temperature if temperature is not None else self.temperature,
            seed=seed if seed is not None else self.seed,
            extra=dict(extra or {}),
        )
        reply = self._call_with_retries(request)
        if budget is not None:
            budget.charge(reply)
        return reply

    def _call_with_retries(self, request: dict[str, Any]) -> ModelReply:
        logged_request = sanitize(self._loggable(request), self._secrets)
        log: list[dict[str, Any]] = []
        started = time.monotonic()
        for attempt in range(1, self.retry.max_attempts + 1):
            entry: dict[str, Any] = {"attempt": attempt, "provider": self.provider,
                                     "url": self._endpoint(), "request": logged_request,
                                     "started_at": time.time()}
            log.append(entry)
            t0 = time.monotonic()
            try:
                result = self._attempt(request)
            except _Retryable as exc:
                self._log_failure(entry, t0, exc.kind, str(exc), exc.status, exc.response)
                entry["retry_after_s"] = exc.retry_after_s
                if attempt == self.retry.max_attempts:
                    raise ModelError(f"{self.provider} {self.model}: gave up after {attempt} "
                                     f"attempts; last error: {exc}", status=exc.status,
                                     kind=exc.kind, log=log) from exc
                entry["wait_s"] = self.retry.delay(attempt, exc.retry_after_s, self._rng)
                self._sleep(entry["wait_s"])
                continue
            except ModelError as exc:
                self._log_failure(entry, t0, exc.kind, str(exc), exc.status, None)
                exc.log = log
                raise
            entry.update(status=result.status, latency_s=time.monotonic() - t0,
                         response=sanitize(result.body, self._secrets), error=None)
            return self._reply(result, attempt, time.monotonic() - started, log)
        raise AssertionError("unreachable: the retry loop always returns or raises")

    def _log_failure(self, entry: dict[str, Any], t0: float, kind: str, message: str,
                     status: int | None, response: Any) -> None:
        entry.update(status=status, latency_s=time.monotonic() - t0, error_kind=kind,
                     error=sanitize(message, self._secrets),
                     response=sanitize(response, self._secrets))

    def _reply(self, result: _Result, attempts: int, latency_s: float,
               log: list[dict[str, Any]]) -> ModelReply:
        return ModelReply(text=result.text, finish_reason=result.finish_reason,
                          input_tokens=result.input_tokens, output_tokens=result.output_tokens,
                          latency_s=latency_s,
                          cost_usd=cost_usd(self.price, result.input_tokens, result.output_tokens),
                          attempts=attempts, model=self.model, provider=self.provider, log=log)

    def _classify_library_error(self, exc: Exception, lib: Any) -> Exception:
        """Map an ``openai``/``anthropic`` exception to :class:`_Retryable` or :class:`ModelError`."""
        if isinstance(exc, lib.APITimeoutError):
            return _Retryable(f"timed out after {self.timeout_s} s", kind="timeout")
        if isinstance(exc, lib.APIConnectionError):
            cause = exc.__cause__ or exc.__context__
            detail = f"{type(cause).__name__}: {cause}" if cause else str(exc)
            return _Retryable(f"connection failed ({detail})", kind="connection")
        if isinstance(exc, lib.APIStatusError):
            status = exc.status_code
            body = _response_body(exc.response)
            message = f"HTTP {status}: {_error_text(body)}"
            if status in RETRYABLE_STATUS or status >= 500:
                kind = "rate_limit" if status == 429 else "server_error"
                return _Retryable(message, kind=kind, status=status, response=body,
                                  retry_after_s=parse_retry_after(exc.response.headers))
            hint = self._auth_hint() if status in (401, 403) else ""
            return ModelError(f"{self.provider} {self.model}: {message}{hint}", status=status,
                              kind="client_error")
        return ModelError(f"{self.provider} {self.model}: unexpected {type(exc).__name__}: {exc}",
                          kind="error")

    def _decode(self, raw: Any) -> tuple[int, Any]:
        """(status, JSON body) of a raw library response; a non-JSON body is retryable."""
        http = raw.http_response  # the httpx response; both libraries expose it
        text = http.text
        try:
            return http.status_code, json.loads(text)
        except ValueError as exc:
            raise _Retryable(f"malformed JSON in HTTP {http.status_code} response ({exc})",
                             kind="malformed", status=http.status_code,
                             response=text[:_MAX_LOGGED_TEXT]) from exc

    def close(self) -> None:
        """Release the HTTP connection pool (and any server the client owns)."""

    def __enter__(self) -> "ModelClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={self.model!r}, url={self._endpoint()!r})"

    @abstractmethod
    def _build_request(self, messages: Sequence[Message], *, stop: list[str] | None,
                       max_tokens: int, temperature: float | None, seed: int | None,
                       extra: dict[str, Any]) -> dict[str, Any]:
        """Keyword arguments for the library's create call."""

    @abstractmethod
    def _loggable(self, request: dict[str, Any]) -> dict[str, Any]:
        """The JSON body the request puts on the wire (before sanitising)."""

    @abstractmethod
    def _attempt(self, request: dict[str, Any]) -> _Result:
        """One HTTP attempt; raises :class:`_Retryable` or :class:`ModelError`."""

    @abstractmethod
    def _endpoint(self) -> str:
        """The URL requests go to (for logs and messages)."""

    def _auth_hint(self) -> str:
        return ""


def _response_body(response: Any) -> Any:
    try:
        return response.json()
    except Exception:  # noqa: BLE001 - any undecodable body is logged as text
        return response.text[:_MAX_LOGGED_TEXT]


def _error_text(body: Any) -> str:
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict) and err.get("message"):
            return str(err["message"])
    return str(body)[:500]


def _import(name: str, extra_hint: str = _LLM_EXTRA_HINT) -> Any:
    try:
        return __import__(name)
    except ImportError as exc:
        raise ModelError(f"the '{name}' package is not installed: {extra_hint}",
                         kind="config") from exc
