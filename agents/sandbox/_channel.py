"""Host side of the sandbox's pipe protocol: length-prefixed JSON frames, with deadlines."""
from __future__ import annotations

import json
import os
import select
import time
from typing import Any, Callable

MAX_FRAME = 8 * 1024 * 1024
WATCH_INTERVAL = 0.1


class ChannelTimeout(Exception):
    """The deadline passed before a whole frame arrived or could be written."""


class ChannelClosed(Exception):
    """The other end is gone (EOF on read, EPIPE on write)."""


class ProtocolViolation(Exception):
    """The sandbox sent bytes that are not a valid frame."""


def _remaining_ms(deadline: float) -> int:
    return max(0, int((deadline - time.monotonic()) * 1000))


class Channel:
    """Reads frames from ``read_fd`` and writes frames to ``write_fd`` without ever
    blocking past a deadline (both fds are switched to non-blocking mode)."""

    def __init__(self, read_fd: int, write_fd: int, max_frame: int = MAX_FRAME) -> None:
        self.read_fd, self.write_fd = read_fd, write_fd
        self.max_frame = max_frame
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
        try:
            msg = json.loads(body)
        except (UnicodeDecodeError, ValueError) as exc:
            raise ProtocolViolation(f"a frame was not valid JSON ({exc})") from None
        if not isinstance(msg, dict):
            raise ProtocolViolation("a frame was not a JSON object")
        return msg

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
