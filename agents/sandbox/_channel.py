"""Host side of the sandbox's pipe format: length-prefixed JSON frames, with deadlines.

Everything read here comes from the sandbox and is untrusted: a frame that is too big
(for its kind), not JSON, not an object, nested too deeply or holding an absurdly long
number raises :class:`ProtocolViolation` and never any other exception.
"""
from __future__ import annotations

import json
import os
import select
import time
from typing import Any, Callable, Mapping

MAX_FRAME = 8 * 1024 * 1024
MAX_NESTING = 32
"""Deepest nesting of lists and objects in a frame (the frame object itself is level 1)."""
MAX_INT_DIGITS = 4300
"""Longest integer literal accepted (CPython's own limit from 3.11; 3.10 would parse any length,
in time quadratic in it)."""
WATCH_INTERVAL = 0.1


class ChannelTimeout(Exception):
    """The deadline passed before a whole frame arrived or could be written."""


class ChannelClosed(Exception):
    """The other end is gone (EOF on read, EPIPE on write)."""


class ProtocolViolation(Exception):
    """The sandbox sent bytes that are not a valid frame."""


def _remaining_ms(deadline: float) -> int:
    return max(0, int((deadline - time.monotonic()) * 1000))


def _bounded_int(text: str) -> int:
    if len(text) > MAX_INT_DIGITS:
        raise ValueError(f"an integer of {len(text)} digits")
    return int(text)


def json_depth(value: Any, limit: int) -> int:
    """Nesting depth of a parsed JSON value (a scalar is 0, ``[1]`` is 1), counted level by
    level without recursion, and only until it exceeds ``limit``."""
    depth, level = 0, [value]
    while depth <= limit:
        containers = [v for v in level if isinstance(v, (list, dict))]
        if not containers:
            break
        depth += 1
        level = [child for v in containers for child in (v.values() if isinstance(v, dict) else v)]
    return depth


class Channel:
    """Reads frames from ``read_fd`` and writes frames to ``write_fd`` without ever
    blocking past a deadline (both fds are switched to non-blocking mode).

    ``max_frame`` caps every frame read; ``kind_limits`` caps frames of some kinds
    (their ``"type"``) further, e.g. tool calls.
    """

    def __init__(self, read_fd: int, write_fd: int, max_frame: int = MAX_FRAME,
                 kind_limits: Mapping[str, int] | None = None) -> None:
        self.read_fd, self.write_fd = read_fd, write_fd
        self.max_frame = max_frame
        self.kind_limits = dict(kind_limits or {})
        os.set_blocking(read_fd, False)
        os.set_blocking(write_fd, False)
        self._buf = bytearray()

    def close(self) -> None:
        for fd in (self.read_fd, self.write_fd):
            try:
                os.close(fd)
            except OSError:
                pass

    def _fill(self, want: int, deadline: float, watch: Callable[[], None] | None) -> None:
        poller = select.poll()
        poller.register(self.read_fd, select.POLLIN | select.POLLHUP)
        while len(self._buf) < want:
            wait = _remaining_ms(deadline)
            if watch is not None:
                watch()
                wait = min(wait, int(WATCH_INTERVAL * 1000))
            if not poller.poll(wait):
                if time.monotonic() >= deadline:
                    raise ChannelTimeout()
                continue
            try:
                chunk = os.read(self.read_fd, max(65536, want - len(self._buf)))
            except BlockingIOError:
                continue
            if not chunk:
                raise ChannelClosed()
            self._buf += chunk

    def read(self, deadline: float, watch: Callable[[], None] | None = None) -> dict[str, Any]:
        """The next frame as a dict; raises ChannelTimeout, ChannelClosed or ProtocolViolation.

        ``watch`` is called at least every ``WATCH_INTERVAL`` seconds while waiting; it may
        raise to abandon the read (the host's CPU-time watchdog does).
        """
        self._fill(4, deadline, watch)
        size = int.from_bytes(self._buf[:4], "big")
        if size > self.max_frame:
            raise ProtocolViolation(f"a frame announced {size} bytes (limit {self.max_frame})")
        self._fill(4 + size, deadline, watch)
        body = bytes(self._buf[4:4 + size])
        del self._buf[:4 + size]
        msg = self._parse(body)
        limit = self.kind_limits.get(str(msg.get("type")), self.max_frame)
        if size > limit:
            raise ProtocolViolation(f"a {msg.get('type')!r} frame of {size} bytes (limit {limit})")
        return msg

    @staticmethod
    def _parse(body: bytes) -> dict[str, Any]:
        """A frame's JSON object; anything else, or nesting deeper than MAX_NESTING, is a violation."""
        try:
            msg = json.loads(body, parse_int=_bounded_int)
        except RecursionError:
            raise ProtocolViolation("a frame was nested too deeply to parse") from None
        except (UnicodeDecodeError, ValueError) as exc:
            raise ProtocolViolation(f"a frame was not valid JSON ({str(exc)[:200]})") from None
        if not isinstance(msg, dict):
            raise ProtocolViolation("a frame was not a JSON object")
        if json_depth(msg, MAX_NESTING) > MAX_NESTING:
            raise ProtocolViolation(f"a frame was nested more than {MAX_NESTING} levels deep")
        return msg

    def pending(self) -> bool:
        """Whether bytes are waiting to be read (buffered, or in the pipe)."""
        poller = select.poll()
        poller.register(self.read_fd, select.POLLIN)
        return bool(self._buf) or any(events & select.POLLIN for _, events in poller.poll(0))

    def write(self, msg: dict[str, Any], deadline: float) -> None:
        """Send one frame; raises ChannelTimeout or ChannelClosed."""
        body = json.dumps(msg).encode()
        data = memoryview(len(body).to_bytes(4, "big") + body)
        poller = select.poll()
        poller.register(self.write_fd, select.POLLOUT)
        while data:
            try:
                data = data[os.write(self.write_fd, data):]
                continue
            except BlockingIOError:
                pass
            except (BrokenPipeError, OSError) as exc:
                raise ChannelClosed() from exc
            if not poller.poll(_remaining_ms(deadline)) and time.monotonic() >= deadline:
                raise ChannelTimeout()
