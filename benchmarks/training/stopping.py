"""Ctrl-C and SIGTERM as a request to stop a training run: within a second, in any phase, with one line.

Python's own Ctrl-C raises ``KeyboardInterrupt`` only between bytecodes, and torch runs a backward pass in C++
without returning to the interpreter: a step of a minute on a loaded machine ignored Ctrl-C for up to 100 s, then
printed a long traceback; SIGTERM ended the process without a word.  :class:`StopSignals` catches both and raises
:class:`StopRequested` at once, and :func:`interruptible` adds a no-op gradient hook to every trainable parameter
so that the backward pass runs Python code (where the handler can raise) every few milliseconds.  Code that must
not be cut in the middle (an optimizer step, a checkpoint write) runs in :meth:`StopSignals.deferred`: the
request waits for the end of the block.  A second signal always raises at once.

A job started in the background by a non-interactive shell starts with SIGINT ignored (POSIX): such a job still
stops on SIGTERM; to send it Ctrl-C start it with ``setsid`` or ``set -m``.
"""

from __future__ import annotations

import signal
import threading
from contextlib import contextmanager
from types import FrameType
from typing import Any, Iterable, Iterator

__all__ = ["StopRequested", "StopSignals", "interruptible", "exit_status"]

NAMES = {signal.SIGINT: "Ctrl-C (SIGINT)", signal.SIGTERM: "SIGTERM"}


class StopRequested(BaseException):
    """A stop signal arrived: ``signum`` is the signal, ``again`` whether it is the second one (leave now).  Like
    ``KeyboardInterrupt``, not an ``Exception``: library code that catches every error does not swallow it."""

    def __init__(self, signum: int, again: bool = False) -> None:
        super().__init__(NAMES.get(signal.Signals(signum), signal.Signals(signum).name))
        self.signum = signum
        self.again = again

    @property
    def name(self) -> str:
        return str(self.args[0])


def exit_status(signum: int) -> int:
    """The shell's status for a process ended by ``signum`` (130 for Ctrl-C, 143 for SIGTERM)."""
    return 128 + int(signum)


class StopSignals:
    """While entered (in the main thread), SIGINT and SIGTERM raise :class:`StopRequested` instead of
    ``KeyboardInterrupt`` or ending the process; the previous handlers are put back on exit.  A signal the process
    was started ignoring stays ignored (a shell does that to SIGINT for a script's background jobs, so that a
    Ctrl-C meant for the script leaves them running).  In any other thread it does nothing (Python delivers
    signals to the main thread only)."""

    def __init__(self) -> None:
        self.signum: int | None = None
        self._deferred = 0
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> "StopSignals":
        if threading.current_thread() is threading.main_thread():
            for signum in NAMES:
                if signal.getsignal(signum) is not signal.SIG_IGN:  # a background job of a script: leave it ignored
                    self._previous[signum] = signal.signal(signum, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)
        self._previous.clear()

    @property
    def requested(self) -> bool:
        return self.signum is not None

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        again = self.signum is not None
        self.signum = signum
        if again or not self._deferred:
            raise StopRequested(signum, again)

    def check(self) -> None:
        """Raise the pending request, if any (between steps, and at the end of a deferred block)."""
        if self.signum is not None:
            raise StopRequested(self.signum)

    @contextmanager
    def deferred(self) -> Iterator[None]:
        """A block that a first stop signal does not cut: the request is raised when it ends."""
        self._deferred += 1
        try:
            yield
        finally:
            self._deferred -= 1
        if not self._deferred:
            self.check()


def interruptible(parameters: Iterable[Any]) -> list[Any]:
    """A no-op gradient hook on each of ``parameters`` (torch tensors), so that a signal handler can raise during
    a backward pass; the hook handles (``.remove()`` them to undo)."""
    return [p.register_hook(_same) for p in parameters if getattr(p, "requires_grad", False)]


def _same(grad: Any) -> Any:
    return grad
