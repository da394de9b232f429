"""Testing aid: a loopback HTTP server that replays scripted model replies and injects faults.

Not part of :mod:`cubebench.agents.llm`'s exports; import it from this module.

It speaks enough of OpenAI's ``/v1/chat/completions`` and Anthropic's ``/v1/messages`` for the
real ``openai`` and ``anthropic`` client libraries, so tests (and users debugging an agent) can
drive the whole model path without a network or an API key::

    script = [Step.http_error(429, retry_after=0.01), Step.text("Thought: t\\nAction: done()")]
    with ScriptedServer(script) as srv:
        client = OpenAIChatClient(model="scripted", base_url=srv.base_url, api_key="x")
        reply = client.complete([{"role": "user", "content": "hi"}])
        srv.requests  # what the server received, in order

Every request to either endpoint consumes the next :class:`Step`, whatever its path. Routing is by
path suffix (``.../chat/completions`` or ``.../messages``), so both ``srv.base_url`` (ending in
``/v1``, OpenAI style) and ``srv.root_url`` (Anthropic style) work as a client's base URL.
Streaming is not implemented: a request with ``"stream": true`` gets HTTP 400.

Each reply closes its connection unless ``keep_alive=True``: then a client's connection stays open for its
next request, as a provider's does (a benchmark that reconnects for every call charges each client a new
TCP connection per call, which an asynchronous client pays several times over a synchronous one); replies
that break the HTTP exchange (``Step.drop``, ``Step.truncated``) still close it.
"""

from __future__ import annotations

import json
import socket
import sys
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Sequence, Union

__all__ = ["Step", "RecordedRequest", "ScriptedServer"]


@dataclass(frozen=True)
class Step:
    """One scripted answer of the server: a reply, an HTTP error, or a transport fault.

    Build steps with the class methods; the fields are the low-level form.
    ``input_tokens``/``output_tokens`` default to whitespace word counts of the request's text
    and of ``text``, so usage figures are deterministic and non-zero.
    """

    text: str | None = ""
    finish_reason: str = "stop"
    status: int = 200
    retry_after: str | None = None
    fault: str | None = None
    delay_s: float = 0.0
    input_tokens: int | None = None
    output_tokens: int | None = None
    error_message: str = ""
    payload: Any = None

    @classmethod
    def reply(cls, text: str, *, input_tokens: int | None = None,
              output_tokens: int | None = None) -> "Step":
        """A normal reply with ``text`` as the assistant's content and finish reason ``stop``."""
        return cls(text=text, input_tokens=input_tokens, output_tokens=output_tokens)

    @classmethod
    def length(cls, text: str) -> "Step":
        """A reply cut off by the token limit (``length`` / Anthropic ``max_tokens``)."""
        return cls(text=text, finish_reason="length")

    @classmethod
    def empty(cls) -> "Step":
        """A well-formed reply whose content is empty (OpenAI ``null``, Anthropic ``[]``)."""
        return cls(text=None)

    @classmethod
    def http_error(cls, status: int, *, retry_after: float | str | None = None,
                   message: str = "") -> "Step":
        """An HTTP error with a provider-shaped JSON error body and optional ``Retry-After``."""
        ra = None if retry_after is None else str(retry_after)
        return cls(text=None, status=status, retry_after=ra,
                   error_message=message or f"scripted HTTP {status}")

    @classmethod
    def malformed(cls) -> "Step":
        """HTTP 200 with a body that is not valid JSON."""
        return cls(fault="malformed")

    @classmethod
    def body(cls, payload: Any) -> "Step":
        """HTTP 200 with ``payload`` (any JSON value) as the whole body, sent as it is.

        For replies that are valid JSON but not a valid reply: ``{"choices": []}``, content that
        is a number, ``usage`` that is a string, text with a lone surrogate (``"\\ud800"``), ...
        """
        return cls(fault="body", payload=payload)

    @classmethod
    def truncated(cls) -> "Step":
        """HTTP 200 whose body stops half way (Content-Length promises more), then a close."""
        return cls(fault="truncated")

    @classmethod
    def drop(cls) -> "Step":
        """The connection is closed after reading the request, without any response."""
        return cls(fault="drop")

    @classmethod
    def slow(cls, text: str, delay_s: float) -> "Step":
        """A normal reply sent only after ``delay_s`` seconds (to exceed a client timeout)."""
        return cls(text=text, delay_s=delay_s)


Responder = Callable[["RecordedRequest"], Step]
Script = Union[Sequence[Union[Step, str]], Responder]


@dataclass
class RecordedRequest:
    """One request as the server received it (headers lower-cased; body parsed as JSON)."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    step: Step | None = None
    received_at: float = field(default_factory=time.time)

    @property
    def api(self) -> str:
        """``"openai"`` or ``"anthropic"`` by path, ``"unknown"`` otherwise."""
        return _api_for(self.path)


def _api_for(path: str) -> str:
    path = path.split("?", 1)[0].rstrip("/")
    if path.endswith("/chat/completions"):
        return "openai"
    if path.endswith("/messages"):
        return "anthropic"
    return "unknown"


def _words(value: Any) -> int:
    """Whitespace word count of every string under ``value`` except base64 image data."""
    if isinstance(value, str):
        return 0 if value.startswith("data:") else len(value.split())
    if isinstance(value, dict):
        return sum(_words(v) for k, v in value.items() if k not in ("data", "url", "role", "type"))
    if isinstance(value, list):
        return sum(_words(v) for v in value)
    return 0


def _openai_body(step: Step, request: Any, model: str) -> dict[str, Any]:
    text = step.text
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": text},
            "finish_reason": step.finish_reason,
        }],
        "usage": _usage(step, request, "prompt_tokens", "completion_tokens", total=True),
    }


def _anthropic_body(step: Step, request: Any, model: str) -> dict[str, Any]:
    stop = {"stop": "end_turn", "length": "max_tokens"}.get(step.finish_reason, step.finish_reason)
    content = [] if step.text is None else [{"type": "text", "text": step.text}]
    return {
        "id": "msg_scripted",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": _usage(step, request, "input_tokens", "output_tokens", total=False),
    }


def _usage(step: Step, request: Any, in_key: str, out_key: str, *, total: bool) -> dict[str, int]:
    messages = request.get("messages", []) if isinstance(request, dict) else []
    system = request.get("system", "") if isinstance(request, dict) else ""
    n_in = step.input_tokens if step.input_tokens is not None else _words(messages) + _words(system)
    n_out = step.output_tokens if step.output_tokens is not None else _words(step.text or "")
    usage = {in_key: n_in, out_key: n_out}
    if total:
        usage["total_tokens"] = n_in + n_out
    return usage


def _error_body(api: str, status: int, message: str) -> dict[str, Any]:
    if api == "anthropic":
        return {"type": "error", "error": {"type": "api_error", "message": message}}
    return {"error": {"message": message, "type": "server_error", "code": str(status)}}


class _Handler(BaseHTTPRequestHandler):
    """Per-request handler; the owning :class:`ScriptedServer` is ``self.server.owner``."""

    protocol_version = "HTTP/1.1"
    server: "_Server"

    def setup(self) -> None:
        """Send each reply at once on a kept-alive connection (no Nagle delay waiting on the client's ACK)."""
        super().setup()
        if self.server.owner.keep_alive:
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, True)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        """Silence the default stderr access log."""

    def do_GET(self) -> None:  # noqa: N802 - stdlib naming
        """Answer ``GET .../models`` (used by readiness probes); anything else is 404."""
        if self.path.rstrip("/").endswith("/models"):
            self._send_json(200, {"object": "list", "data": [{"id": "scripted", "object": "model"}]})
        else:
            self._send_json(404, {"error": {"message": f"no route {self.path}"}})

    def do_POST(self) -> None:  # noqa: N802 - stdlib naming
        """Record the request, take the next scripted step and answer with it."""
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            body: Any = json.loads(raw or b"null")
        except ValueError:
            body = raw.decode("utf-8", "replace")
        api = _api_for(self.path)
        record = RecordedRequest("POST", self.path, {k.lower(): v for k, v in self.headers.items()},
                                 body)
        if api == "unknown":
            self.server.owner._record(record)
            self._send_json(404, _error_body("openai", 404, f"no route {self.path}"))
            return
        if isinstance(body, dict) and body.get("stream"):
            self.server.owner._record(record)
            self._send_json(400, _error_body(api, 400, "ScriptedServer does not implement streaming"))
            return
        step = self.server.owner._next_step(record)
        if step is None:
            self._send_json(400, _error_body(api, 400, "ScriptedServer: the script is exhausted"))
            return
        self._answer(step, api, body)

    def _answer(self, step: Step, api: str, request: Any) -> None:
        if step.delay_s and self.server.owner._stopping.wait(step.delay_s):
            return
        if step.fault == "drop":
            self.close_connection = True
            return
        if step.fault == "malformed":
            self._send_raw(200, b'{"id": "broken", "choices": [{"message": ', "application/json")
            return
        if step.fault == "body":
            self._send_raw(200, json.dumps(step.payload).encode(), "application/json")
            return
        if step.status != 200:
            headers = {"Retry-After": step.retry_after} if step.retry_after is not None else {}
            self._send_json(step.status, _error_body(api, step.status, step.error_message), headers)
            return
        model = request.get("model", "scripted") if isinstance(request, dict) else "scripted"
        build = _anthropic_body if api == "anthropic" else _openai_body
        payload = json.dumps(build(step, request, model)).encode()
        if step.fault == "truncated":
            self._send_raw(200, payload[: len(payload) // 2], "application/json",
                           content_length=len(payload))
            return
        self._send_raw(200, payload, "application/json")

    def _send_json(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        self._send_raw(status, json.dumps(body).encode(), "application/json", headers=headers)

    def _send_raw(self, status: int, payload: bytes, content_type: str, *,
                  headers: dict[str, str] | None = None, content_length: int | None = None) -> None:
        close = not self.server.owner.keep_alive or content_length is not None
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload) if content_length is None else content_length))
        if close:
            self.send_header("Connection", "close")
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(payload)
        self.wfile.flush()
        self.close_connection = close or self.close_connection


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    owner: "ScriptedServer"

    def process_request(self, request: Any, client_address: Any) -> None:
        """Count and keep the connection (so :meth:`ScriptedServer.stop` can end a kept-alive one)."""
        with self.owner._lock:
            self.owner._connections += 1
            self.owner._open.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self.owner._lock:
            self.owner._open.discard(request)
        super().shutdown_request(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Ignore clients that hung up (a timed-out client leaves a slow reply nowhere to go)."""
        if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            super().handle_error(request, client_address)


class ScriptedServer:
    """Context manager running the scripted server on ``127.0.0.1`` at a free port.

    ``script`` is a sequence of :class:`Step` (a plain ``str`` means ``Step.reply(str)``), consumed
    one per request; or a callable ``f(RecordedRequest) -> Step`` for replies that depend on the
    request. When a sequence runs out, requests get HTTP 400 "script exhausted" (a clear,
    non-retryable error) unless ``default`` is given, which is then replayed for ever.
    ``keep_alive=True`` keeps each client's connection open between requests (see the module docstring).
    """

    def __init__(self, script: Script, *, default: Step | str | None = None, keep_alive: bool = False) -> None:
        self._responder = script if callable(script) else None
        self._script = [] if callable(script) else [_as_step(s) for s in script]
        self._default = None if default is None else _as_step(default)
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._requests: list[RecordedRequest] = []
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None
        self.keep_alive = keep_alive
        self._connections = 0
        self._open: set[socket.socket] = set()

    def start(self) -> "ScriptedServer":
        """Bind to a free loopback port and serve in a daemon thread."""
        if self._httpd is not None:
            raise RuntimeError("ScriptedServer is already running")
        self._stopping.clear()
        self._httpd = _Server(("127.0.0.1", 0), _Handler)
        self._httpd.owner = self
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="ScriptedServer",
                                        kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, wake any delayed reply, and close the socket. Safe to call twice."""
        if self._httpd is None:
            return
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        with self._lock:
            kept, self._open = list(self._open), set()
        for conn in kept:  # a kept-alive connection's handler waits for the next request: end it
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = None
        self._thread = None

    def __enter__(self) -> "ScriptedServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        """The bound TCP port."""
        if self._httpd is None:
            raise RuntimeError("ScriptedServer is not running")
        return int(self._httpd.server_address[1])

    @property
    def root_url(self) -> str:
        """``http://127.0.0.1:PORT`` (the Anthropic client's base URL form)."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1`` (the OpenAI client's base URL form)."""
        return self.root_url + "/v1"

    @property
    def connections(self) -> int:
        """How many TCP connections the server has accepted."""
        with self._lock:
            return self._connections

    @property
    def requests(self) -> list[RecordedRequest]:
        """A copy of the requests received so far, in arrival order."""
        with self._lock:
            return list(self._requests)

    @property
    def remaining(self) -> int:
        """How many scripted steps have not been used yet."""
        with self._lock:
            return len(self._script)

    def _record(self, record: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(record)

    def _next_step(self, record: RecordedRequest) -> Step | None:
        with self._lock:
            self._requests.append(record)
            if self._responder is not None:
                step: Step | None = None
            elif self._script:
                step = self._script.pop(0)
            else:
                step = self._default
        if self._responder is not None:
            step = _as_step(self._responder(record))
        record.step = step
        return step


def _as_step(item: Step | str) -> Step:
    if isinstance(item, Step):
        return item
    if isinstance(item, str):
        return Step.reply(item)
    raise TypeError(f"a script item must be a Step or a str, not {type(item).__name__}")
