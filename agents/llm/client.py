"""The provider-independent model client: one small interface, retries, request logs.

``ModelClient.complete(messages, ...) -> ModelReply`` is all an agent needs. Subclasses implement
one HTTP attempt on an official library: :class:`~.openai_client.OpenAIChatClient` (OpenAI chat
completions and every server that speaks it: vLLM, Ollama, llama.cpp),
:class:`~.anthropic_client.AnthropicClient` (Messages API); the in-process clients
(:class:`~.hf.HFModelClient` and the embedded model's :class:`~.local.LocalModelClient`) implement an
attempt as a call to a model in memory; :func:`~.factory.make_client` builds one
from a spec string. The libraries' own retries are off; :class:`ModelClient` retries itself (see
:mod:`.retry`) so every attempt lands in ``ModelReply.log`` (or ``ModelError.log`` when the call
fails), sanitised: no API key, images replaced by their hash and size. A shared
:class:`~.budget.Budget` stops an episode's calls when its token or dollar limit is reached.

Every reply body is checked before anything is taken from it: a 200 whose body is not JSON, or
is JSON of the wrong shape (content that is not text, ``usage`` that is not an object of
non-negative integer counts, no choices, ...), is a *malformed* attempt, logged and retried like a
5xx; when the attempts run out the call raises :class:`~.reply.MalformedReply`. So a
:class:`~.reply.ModelReply` always has ``str`` text and ``int`` counts, and its text never holds a
lone surrogate (each is replaced by its ``\\uXXXX`` escape, noted in the log entry's ``repaired``).

A reply longer than the request's token limit allows (:mod:`.reply_bound`: 128 characters a token, at least 4,096)
is cut before anything keeps it: the reply's text, and every string of the logged bodies, so the request log, the
episode record and the next request's history stay bounded whatever a server sends; ``ModelReply.reply_cut`` and the
log entry say what was cut.
"""

from __future__ import annotations

from cubebench.extras import install_hint
import json
import random
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from .budget import Budget, cost_usd, price_for
from .messages import Message, count_surrogates, estimate_tokens, safe_text, sanitize, validate_messages
from .reply import MalformedReply, ModelError, ModelReply
from .reply_bound import cut_reply, cut_strings, reply_char_limit
from .retry import RETRYABLE_STATUS, RetryPolicy, parse_retry_after

__all__ = ["ModelClient", "CallResult"]

_LLM_EXTRA_HINT = install_hint("llm")
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


class BadBody(ValueError):
    """A reply body has the wrong shape; the message says where (raised by the clients' parsers)."""


@dataclass
class CallResult:
    """One successful HTTP exchange, already decoded into neutral fields."""

    text: str
    finish_reason: str
    input_tokens: int
    output_tokens: int
    status: int
    body: Any
    repaired: str | None = None


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
        tokens = max_tokens if max_tokens is not None else self.max_tokens
        request = self.build_request(
            messages,
            stop=list(stop) if stop else None,
            max_tokens=tokens,
            temperature=temperature if temperature is not None else self.temperature,
            seed=seed if seed is not None else self.seed,
            extra=dict(extra or {}),
        )
        reply = self._call_with_retries(request, tokens)
        if budget is not None:
            budget.charge(reply)
        return reply

    def _call_with_retries(self, request: dict[str, Any], max_tokens: int) -> ModelReply:
        """Attempts until one succeeds or the policy gives up; ``max_tokens`` (the request's) bounds what is kept of
        each reply and logged body (:mod:`.reply_bound`)."""
        limit = reply_char_limit(max_tokens)
        logged_request = sanitize(self.loggable(request), self._secrets)
        log: list[dict[str, Any]] = []
        started = time.monotonic()
        for attempt in range(1, self.retry.max_attempts + 1):
            entry: dict[str, Any] = {"attempt": attempt, "provider": self.provider,
                                     "url": self.endpoint(), "request": logged_request,
                                     "started_at": time.time()}
            log.append(entry)
            t0 = time.monotonic()
            try:
                result = self.attempt(request)
            except _Retryable as exc:
                self._log_failure(entry, t0, exc.kind, str(exc), exc.status, exc.response, limit)
                entry["retry_after_s"] = exc.retry_after_s
                if attempt == self.retry.max_attempts:
                    message = (f"{self.provider} {self.model}: gave up after {attempt} attempts; "
                               f"last error: {safe_text(str(exc))}")
                    if exc.kind == "malformed":
                        raise MalformedReply(message, status=exc.status, log=log) from exc
                    raise ModelError(message, status=exc.status, kind=exc.kind, log=log) from exc
                entry["wait_s"] = self.retry.delay(attempt, exc.retry_after_s, self._rng)
                self._sleep(entry["wait_s"])
                continue
            except ModelError as exc:
                self._log_failure(entry, t0, exc.kind, str(exc), exc.status, None, limit)
                exc.log = log
                raise
            entry.update(status=result.status, latency_s=time.monotonic() - t0,
                         response=cut_strings(sanitize(result.body, self._secrets), limit), error=None)
            if result.repaired:
                entry["repaired"] = result.repaired
            text, cut = cut_reply(result.text, max_tokens)
            if cut:
                entry["reply_cut"] = cut
            reply = self._reply(result, attempt, time.monotonic() - started, log)
            reply.text, reply.reply_cut = text, cut
            return reply
        raise AssertionError("unreachable: the retry loop always returns or raises")

    def _log_failure(self, entry: dict[str, Any], t0: float, kind: str, message: str,
                     status: int | None, response: Any, limit: int) -> None:
        entry.update(status=status, latency_s=time.monotonic() - t0, error_kind=kind,
                     error=cut_strings(sanitize(message, self._secrets), limit),
                     response=cut_strings(sanitize(response, self._secrets), limit))

    def _reply(self, result: CallResult, attempts: int, latency_s: float,
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

    def _parsed(self, status: int, body: Any,
                parse: Callable[[Any], tuple[str, str, int, int]]) -> CallResult:
        """Run a client's body parser; any shape error becomes a retryable ``malformed`` attempt.

        ``parse(body)`` returns (text, finish reason, input tokens, output tokens) and raises
        :class:`BadBody` (or whatever a wrong type makes it raise) for a body of the wrong shape.
        The text's surrogates are escaped here, so none reaches a reply.
        """
        try:
            text, finish, n_in, n_out = parse(body)
        except BadBody as exc:
            raise _Retryable(f"malformed reply: {exc}", kind="malformed", status=status,
                             response=body) from exc
        except (TypeError, AttributeError, KeyError, IndexError, ValueError) as exc:
            raise _Retryable(f"malformed reply: {type(exc).__name__}: {exc}", kind="malformed",
                             status=status, response=body) from exc
        n_bad = count_surrogates(text) + count_surrogates(finish)
        repaired = None
        if n_bad:
            repaired = (f"{n_bad} lone surrogate{'s' if n_bad > 1 else ''} in the reply "
                        "written as \\uXXXX escapes")
        return CallResult(text=safe_text(text), finish_reason=safe_text(finish), input_tokens=n_in,
                       output_tokens=n_out, status=status, body=body, repaired=repaired)

    def _decode(self, raw: Any) -> tuple[int, Any]:
        """(status, JSON body) of a raw library response; a non-JSON body is retryable."""
        http = raw.http_response  # the httpx response; both libraries expose it
        text = http.text
        try:
            return http.status_code, json.loads(text)
        except (ValueError, RecursionError) as exc:  # RecursionError: JSON nested deeper than Python reads
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
        return f"{type(self).__name__}(model={self.model!r}, url={self.endpoint()!r})"

    @abstractmethod
    def build_request(self, messages: Sequence[Message], *, stop: list[str] | None,
                       max_tokens: int, temperature: float | None, seed: int | None,
                       extra: dict[str, Any]) -> dict[str, Any]:
        """Keyword arguments for the library's create call."""

    @abstractmethod
    def loggable(self, request: dict[str, Any]) -> dict[str, Any]:
        """The JSON body the request puts on the wire (before sanitising)."""

    @abstractmethod
    def attempt(self, request: dict[str, Any]) -> CallResult:
        """One HTTP attempt; raises :class:`_Retryable` or :class:`ModelError`."""

    @abstractmethod
    def endpoint(self) -> str:
        """The URL requests go to (for logs and messages)."""

    def _auth_hint(self) -> str:
        return ""


def json_type(value: Any) -> str:
    """The JSON type of a decoded value, with its article (``a number``, ``null``), for messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return f"a {type(value).__name__}"


def expect(value: Any, kind: type, where: str) -> Any:
    """``value`` if it is a ``kind`` (``dict``, ``list`` or ``str``), else :class:`BadBody`."""
    if not isinstance(value, kind):
        names: dict[type, str] = {dict: "an object", list: "an array", str: "a string"}
        raise BadBody(f"{where} is {json_type(value)}, not {names.get(kind, 'a ' + kind.__name__)}")
    return value


def optional_text(value: Any, where: str, default: str = "") -> str:
    """A string field that may be null or absent (``default``), else :class:`BadBody`."""
    return default if value is None else expect(value, str, where)


def token_counts(usage: Any, keys: Sequence[str], where: str = "usage") -> list[int]:
    """The counts under ``keys`` of a ``usage`` object: null/absent is 0 (no usage reported).

    A count must be a non-negative integer (an integral float such as ``12.0`` is taken as one);
    ``usage`` itself may be null or absent, or an object. Anything else is :class:`BadBody`.
    """
    if usage is None:
        usage = {}
    expect(usage, dict, where)
    counts = []
    for key in keys:
        value = usage.get(key)
        if value is None:
            counts.append(0)
            continue
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:40] + "…"
            raise BadBody(f"{where}.{key} is {json_type(value)} {shown}, not a non-negative integer")
        counts.append(value)
    return counts


def _response_body(response: Any) -> Any:
    try:
        return response.json()
    except Exception:  # noqa: BLE001 - any undecodable body is logged as text
        return response.text[:_MAX_LOGGED_TEXT]


def _error_text(body: Any) -> str:
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict) and err.get("message"):
            return str(err["message"])[:500]  # an error message is shown to the model and stored: never megabytes
    return str(body)[:500]


def _import(name: str, extra_hint: str = _LLM_EXTRA_HINT) -> Any:
    try:
        return __import__(name)
    except ImportError as exc:
        raise ModelError(f"the '{name}' package is not installed: {extra_hint}",
                         kind="config") from exc
