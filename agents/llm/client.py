"""Model clients behind one small provider-neutral interface.

``ModelClient.complete(messages, ...) -> ModelReply`` is all an agent needs. Two implementations
sit on the official libraries: :class:`OpenAIChatClient` (OpenAI chat completions and every
server that speaks it: vLLM, Ollama, llama.cpp) and :class:`AnthropicClient` (Messages API).
The libraries' own retries are off; :class:`ModelClient` retries itself (see :mod:`.retry`) so
every attempt lands in ``ModelReply.log`` (or ``ModelError.log`` when the call fails), sanitised:
no API key, images replaced by their hash and size. A shared :class:`~.budget.Budget` stops an
episode's calls when its token or dollar limit is reached.
"""

from __future__ import annotations

import json
import os
import random
import re
import time
from abc import ABC, abstractmethod
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Mapping, Sequence

from .budget import Budget, cost_usd, price_for
from .messages import Message, estimate_tokens, sanitize, to_anthropic, to_openai, validate_messages
from .retry import RETRYABLE_STATUS, RetryPolicy, parse_retry_after

__all__ = [
    "ModelClient", "ModelReply", "ModelError", "OpenAIChatClient", "AnthropicClient",
    "LocalModelClient", "make_client",
]

_LLM_EXTRA_HINT = "pip install 'cubebench[llm]'"
_MAX_LOGGED_TEXT = 4000


class ModelError(RuntimeError):
    """A model call failed for good: a non-retryable HTTP error, a missing key, or retries ran out.

    ``status`` is the last HTTP status (None for transport failures), ``kind`` a short label
    (``client_error``, ``rate_limit``, ``server_error``, ``timeout``, ``connection``,
    ``malformed``, ``config``), and ``log`` holds every attempt made, for the episode record.
    """

    def __init__(self, message: str, *, status: int | None = None, kind: str = "error",
                 log: list[dict[str, Any]] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.kind = kind
        self.log: list[dict[str, Any]] = log if log is not None else []


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
class ModelReply:
    """The outcome of one ``complete`` call.

    ``finish_reason`` is normalised to ``stop`` (natural end or stop sequence) and ``length``
    (token limit); other provider reasons pass through. ``latency_s`` is the wall time of the
    whole call including retries and waits; each attempt's own latency is in ``log``.
    ``cost_usd`` comes from the price table (0 for unknown models).
    """

    text: str
    finish_reason: str
    input_tokens: int
    output_tokens: int
    latency_s: float
    cost_usd: float
    attempts: int
    model: str = ""
    provider: str = ""
    log: list[dict[str, Any]] = field(default_factory=list)

    def as_record(self) -> dict[str, Any]:
        """A JSON-safe dict of every field (the log included) for the episode record."""
        return asdict(self)


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
        settings = {
            "stop": list(stop) if stop else None,
            "max_tokens": max_tokens if max_tokens is not None else self.max_tokens,
            "temperature": temperature if temperature is not None else self.temperature,
            "seed": seed if seed is not None else self.seed,
            "extra": dict(extra or {}),
        }
        request = self._build_request(messages, **settings)
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


def _import(name: str, extra_hint: str) -> Any:
    try:
        return __import__(name)
    except ImportError as exc:
        raise ModelError(f"the '{name}' package is not installed: {extra_hint}",
                         kind="config") from exc


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
        openai = _import("openai", _LLM_EXTRA_HINT)
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

    def _endpoint(self) -> str:
        return str(self._client.base_url).rstrip("/") + "/chat/completions"

    def _auth_hint(self) -> str:
        return " (check OPENAI_API_KEY)"

    def _build_request(self, messages: Sequence[Message], *, stop: list[str] | None,
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

    def _loggable(self, request: dict[str, Any]) -> dict[str, Any]:
        body = {k: v for k, v in request.items() if k != "extra_body"}
        return {**body, **request.get("extra_body", {})}

    def _attempt(self, request: dict[str, Any]) -> _Result:
        try:
            raw = self._client.chat.completions.with_raw_response.create(**request)
        except self._lib.APIError as exc:
            raise self._classify_library_error(exc, self._lib) from exc
        status, body = self._decode(raw)
        try:
            choice = body["choices"][0]
            text = choice["message"].get("content") or ""
            finish = choice.get("finish_reason") or "stop"
        except (KeyError, IndexError, TypeError, AttributeError) as exc:
            raise _Retryable(f"response without choices[0].message ({exc!r})", kind="malformed",
                             status=status, response=body) from exc
        usage = body.get("usage") or {}
        return _Result(text=text, finish_reason=finish,
                       input_tokens=int(usage.get("prompt_tokens") or 0),
                       output_tokens=int(usage.get("completion_tokens") or 0),
                       status=status, body=body)

    def close(self) -> None:
        """Close the library client's connection pool."""
        self._client.close()


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
        anthropic = _import("anthropic", _LLM_EXTRA_HINT)
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


class LocalModelClient(OpenAIChatClient):
    """The embedded SmolLM2 model: starts a :class:`~.local.LocalModelServer` and talks to it.

    The server runs until :meth:`close` (or interpreter exit). Pass a GBNF grammar per call
    (``extra={"grammar": react_grammar(tools)}``) or once as ``grammar=`` to keep replies in
    the ReAct action format.
    """

    provider = "local"

    def __init__(self, model_path: str | None = None, *, grammar: str | None = None,
                 server_args: Mapping[str, Any] | None = None, **settings: Any) -> None:
        from .local import LocalModelServer

        self.server = LocalModelServer(model_path, **dict(server_args or {})).start()
        extra = {"grammar": grammar} if grammar else {}
        settings.setdefault("price", (0.0, 0.0))
        try:
            super().__init__(self.server.model_name, base_url=self.server.base_url,
                             api_key="local", default_extra=extra, **settings)
        except BaseException:
            self.server.stop()
            raise

    def close(self) -> None:
        """Close the HTTP pool and stop the local server process."""
        try:
            super().close()
        finally:
            self.server.stop()


_COMPATIBLE = re.compile(r"^(https?://[^/:]+(?::\d+)?(?:/[^:]*)?):(.+)$")


def make_client(spec: str, **settings: Any) -> ModelClient:
    """Build a client from a spec string; ``settings`` go to the client's constructor.

    ``openai:<model>``, ``anthropic:<model>``, ``openai-compatible:<base_url>:<model>``
    (e.g. ``openai-compatible:http://localhost:11434/v1:llama3:8b``), ``local`` or
    ``local:<path/to/model.gguf>`` (the embedded model; needs the ``local-llm`` extra).
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
    raise ValueError(f"unknown model spec {spec!r}: use openai:<model>, anthropic:<model>, "
                     "openai-compatible:<base_url>:<model> or local")
