"""The CodeAct sandbox: a persistent, isolated Python interpreter per episode.

See ``docs/sandbox.md`` for the guarantees and the layers. In short: the model's
code runs in a separate process started by ``_launcher.py`` (namespaces, minimal
read-only root, unprivileged uid, rlimits, no_new_privs, seccomp) and running
``_worker.py``; the host talks to it over two pipes only, and executes the real
tool callables itself when the code calls their stubs. The host trusts no frame it
reads (any pipe violation kills the interpreter) and keeps the interpreter frozen
(SIGSTOP) between blocks, so no code runs while no block does.
"""
from __future__ import annotations

import inspect
import json
import keyword
import os
import platform
import secrets
import select
import shutil
import signal
import subprocess
import sys
import threading
import time
import warnings
import weakref
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

from . import _seccomp
from ._channel import MAX_NESTING, Channel, ChannelClosed, ChannelTimeout, ProtocolViolation
from ._hostpython import host_python
from .limits import SandboxLimits
from .result import ExecResult, SandboxToolCall

__all__ = ["Sandbox", "SandboxError", "SandboxUnavailable", "ALL_LAYERS", "FAIRNESS_LAYERS"]

_HERE = Path(__file__).resolve().parent
ALL_LAYERS = (
    "process", "rlimits", "clean-environment", "isolated-python", "mount-namespace",
    "pid-namespace", "network-namespace", "ipc-namespace", "uts-namespace",
    "unprivileged-uid", "no-new-privs", "seccomp", "seccomp-exec",
)
"""Every isolation layer the sandbox knows; :attr:`Sandbox.layers` says which are active."""
FAIRNESS_LAYERS = ("mount-namespace", "network-namespace", "unprivileged-uid")
"""The layers without which the model's code could read the project or reach a solver:
pass them as ``require_layers`` where the benchmark's tool setting must be airtight."""
_DISABLEABLE = frozenset({"namespaces", "uid", "seccomp"})
_UID_BASE, _UID_SPAN = 200_000, 65_536
_LAUNCHER_ENV = {"PATH": os.defpath, "LANG": "C.UTF-8"}
TOOL_FRAME_BYTES = 1 << 20
"""Largest tool-call frame (bytes of JSON) the host accepts; the stubs refuse larger arguments
with a ``ValueError`` inside, so only a hand-written frame gets the interpreter killed."""
_CMD_FD = 3  # the interpreter's end of the command pipe: between blocks it waits in read() on it
_READ_SYSCALL = {"x86_64": 0, "aarch64": 63, "riscv64": 63}.get(platform.machine())
_IDLE_WAIT_SECONDS = 2.0  # at least this long for the worker to be seen waiting after its result
_IDLE_CPU_SECONDS = 0.5  # CPU it may use meanwhile (it needs microseconds)
_NONE = type(None)
_FRAME_FIELDS: dict[str, dict[str, tuple[type, ...]]] = {
    "tool": {"name": (str,), "args": (list,), "kwargs": (dict,)},
    "result": {"stdout": (str,), "dropped": (int,), "value_repr": (str, _NONE), "error": (str, _NONE),
               "stopped": (str, _NONE)},
}
"""The fields of the frames the host accepts during a block, and their JSON types."""
_WORKER_STOPS = (None, "wall", "cpu", "memory", "output")
_TEXT_SLACK = 1024  # a result's texts may exceed max_output_chars by a truncation notice


_UIDS_IN_USE: set[int] = set()
_UIDS_LOCK = threading.Lock()


def _allocate_uid() -> int:
    """A random unprivileged uid not used by another sandbox of this process.

    Each sandbox gets its own uid so that ``RLIMIT_NPROC`` (counted per uid) and the
    sweep of stray processes concern that sandbox alone.
    """
    with _UIDS_LOCK:
        while True:
            uid = _UID_BASE + secrets.randbelow(_UID_SPAN)
            if uid not in _UIDS_IN_USE:
                _UIDS_IN_USE.add(uid)
                return uid


class _CpuOverrun(Exception):
    """Raised by the CPU watchdog to abandon waiting for a block."""


class SandboxError(RuntimeError):
    """The sandbox could not be started or was used after ``close()``."""


class SandboxUnavailable(SandboxError):
    """A layer listed in ``require_layers`` could not be activated on this machine."""


def _tool_doc(name: str, fn: Callable[..., Any]) -> str:
    try:
        sig = str(inspect.signature(fn))
    except (TypeError, ValueError):
        sig = "(...)"
    doc = inspect.getdoc(fn) or ""
    return f"{name}{sig}\n\n{doc}".strip()


def _check_tools(tools: Mapping[str, Callable[..., Any]]) -> dict[str, Callable[..., Any]]:
    for name, fn in tools.items():
        if not (isinstance(name, str) and name.isidentifier()) or keyword.iskeyword(name) \
                or name.startswith("_") or name == "ToolError":
            raise ValueError(f"invalid tool name {name!r}")
        if not callable(fn):
            raise TypeError(f"tool {name!r} is not callable")
    return dict(tools)


def _cpu_seconds_of(pid: int) -> float | None:
    """CPU time (user + system) used so far by a live process, from /proc/<pid>/stat."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rfind(")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _tasks_of_uid(uid: int) -> dict[int, int]:
    """Host pids of the processes running as ``uid``, with their thread counts."""
    found: dict[int, int] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            status = Path(entry.path, "status").read_text()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        if int(fields.get("Uid", "-1").split()[0]) == uid:
            found[int(entry.name)] = int(fields.get("Threads", "1"))
    return found


def _proc_state(pid: int) -> str | None:
    """The process's state letter from /proc/<pid>/stat (``S`` sleeping, ``T`` stopped, ...)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat[stat.rfind(")") + 2:].split()[0]


def _waiting_for_commands(pid: int) -> bool:
    """Whether the process is blocked in read() on its command pipe, per /proc/<pid>/syscall.

    Where that file cannot be read (a kernel without it) this answers True while the
    process exists: the host then relies on freezing it alone.
    """
    try:
        fields = Path(f"/proc/{pid}/syscall").read_text().split()
    except OSError:
        return os.path.exists(f"/proc/{pid}")
    if len(fields) < 2 or not fields[0].isdigit():  # "running", or "-1 ..." (blocked outside a syscall)
        return False
    return int(fields[1], 16) == _CMD_FD and _READ_SYSCALL in (None, int(fields[0]))


def _wait_stopped(pid: int, deadline: float) -> bool:
    """Wait until the process is stopped (state ``T``); False if it ended or the deadline passed."""
    pause = 0.0001
    while (state := _proc_state(pid)) != "T":
        if state in (None, "Z", "X") or time.monotonic() >= deadline:
            return False
        time.sleep(pause)
        pause = min(2 * pause, 0.01)
    return True


def _malformed(msg: dict[str, Any], text_limit: int) -> str | None:
    """Why a frame read during a block is not a ``tool`` or ``result`` frame as the worker
    writes them (kind, field types, a known stop, texts within the output limit), or None."""
    kind = msg.get("type")
    fields = _FRAME_FIELDS.get(kind) if isinstance(kind, str) else None
    if fields is None:
        return f"an unexpected {str(kind)[:40]!r} message"
    for key, types in fields.items():
        value = msg.get(key)
        if not isinstance(value, types) or isinstance(value, bool):
            return f"a {kind!r} message whose {key!r} is a {type(value).__name__}"
    if kind == "tool":
        return None
    if msg["dropped"] < 0 or msg["stopped"] not in _WORKER_STOPS:
        return f"a 'result' message with dropped={msg['dropped']} and stopped={str(msg['stopped'])[:40]!r}"
    for key in ("stdout", "value_repr", "error"):
        if len(msg[key] or "") > text_limit + _TEXT_SLACK:
            return f"a 'result' message whose {key!r} is longer than the output limit"
    return None


def _pid_ns(pid: int) -> str | None:
    try:
        return os.readlink(f"/proc/{pid}/ns/pid")
    except OSError:
        return None


def _signal_name(num: int) -> str:
    try:
        return signal.Signals(num).name
    except ValueError:
        return f"signal {num}"


class _Session:
    """One live interpreter: the launcher process, the pipes and the child's pid."""

    def __init__(self, proc: subprocess.Popen, channel: Channel, uid: int, mirror_fd: int) -> None:
        self.uid = uid
        self.mirror_fd = mirror_fd  # memfd where the interpreter mirrors the output it keeps
        self.sweep_uid = False  # set when there is no PID namespace to take strays down with the child
        self.proc = proc
        self.channel = channel
        self.child_pid = 0
        self.pidfd = -1
        self.workdir = ""
        self.exit_info: dict[str, Any] | None = None
        self.dead = False

    def send_signal(self, sig: int) -> None:
        """Send ``sig`` to the interpreter through its pidfd (nothing if it is gone)."""
        if self.pidfd >= 0:
            try:
                signal.pidfd_send_signal(self.pidfd, sig)
            except (ProcessLookupError, OSError):
                pass

    def kill(self) -> None:
        """SIGKILL the interpreter (PID 1 of its namespace: everything in it dies)."""
        self.send_signal(signal.SIGKILL)
        if self.sweep_uid:
            for pid in _tasks_of_uid(self.uid):
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass

    def reap(self) -> dict[str, Any]:
        """Wait for the launcher to report how the interpreter ended; collect its status."""
        if self.exit_info is not None:
            return self.exit_info
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.kill()
            self.proc.kill()
            self.proc.wait()
        info: dict[str, Any] = {}
        for line in (self.proc.stdout.read() if self.proc.stdout else b"").splitlines():
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if event.get("event") == "exited":
                info = event
        self.exit_info = info
        return info

    def mirrored_output(self, limit: int) -> str:
        """The output the current block had printed (kept part), read from the mirror.

        Used when the interpreter died; the bytes are untrusted: length is bounded and
        invalid UTF-8 is replaced.
        """
        size = int.from_bytes(os.pread(self.mirror_fd, 8, 0), "little")
        data = os.pread(self.mirror_fd, min(size, 4 * limit), 8)
        return data.decode("utf-8", "replace")[:limit]

    def close(self) -> None:
        """Stop everything this session started and release its fds and temp dir."""
        if self.dead:
            return
        self.dead = True
        self.kill()
        if self.proc.stdin:
            try:
                self.proc.stdin.close()  # the launcher kills the child on EOF, too
            except OSError:
                pass
        self.reap()
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream:
                stream.close()
        self.channel.close()
        os.close(self.mirror_fd)
        if self.pidfd >= 0:
            os.close(self.pidfd)
            self.pidfd = -1
        if self.workdir and self.workdir != "/work":
            shutil.rmtree(self.workdir, ignore_errors=True)


class Sandbox:
    """A persistent per-episode Python interpreter in an isolated process.

    ``tools`` maps names to host callables; inside the sandbox each name is a
    function that sends the call over the pipe, and the host runs the callable and
    returns its JSON-serialisable result (an exception becomes ``ToolError`` inside,
    with the tool's message). Variables persist from one :meth:`run` to the next; if
    the interpreter dies, the next :meth:`run` starts a fresh one and says so.

    ``disable_layers`` (any of ``"namespaces"``, ``"uid"``, ``"seccomp"``) turns layers
    off, for tests and diagnosis. ``require_layers`` (names from :data:`ALL_LAYERS`,
    e.g. :data:`FAIRNESS_LAYERS`) makes the constructor raise
    :class:`SandboxUnavailable` instead of running with weaker isolation; without it,
    missing layers produce a ``RuntimeWarning`` and are listed by :meth:`describe`.

    Attributes: ``limits``; ``layers`` (layer name -> state sentence); ``uid`` (the
    sandbox's own unprivileged uid); ``interpreter_info``; ``blocks_run``; ``restarts``
    (how many times a dead interpreter was replaced).
    """

    def __init__(self, tools: Mapping[str, Callable[..., Any]] | None = None,
                 limits: SandboxLimits = SandboxLimits(), *,
                 disable_layers: Iterable[str] = (), require_layers: Iterable[str] = ()) -> None:
        if not sys.platform.startswith("linux"):
            raise SandboxUnavailable("the CodeAct sandbox needs Linux")
        self.limits = limits
        self._tools = _check_tools(tools or {})
        self._disable = set(disable_layers)
        if self._disable - _DISABLEABLE:
            raise ValueError(f"unknown layers to disable: {sorted(self._disable - _DISABLEABLE)}")
        self._require = tuple(require_layers)
        if set(self._require) - set(ALL_LAYERS):
            raise ValueError(f"unknown required layers: {sorted(set(self._require) - set(ALL_LAYERS))}")
        self.layers: dict[str, str] = {}
        """Each layer's state: a sentence starting with "active:", "unavailable:" or "disabled"."""
        self._own_uid = _allocate_uid()
        self.uid = self._own_uid
        """The interpreter's uid: a uid of its own when run as root, else the caller's."""
        self.blocks_run = 0
        self.restarts = 0
        self._session: _Session | None = None
        self._finalizer: weakref.finalize | None = None
        self._closed = False
        self.interpreter_info: dict[str, Any] = {}
        """What the current interpreter reported when it started (uid, pid, cwd, sys.path, env names)."""
        try:
            self._start()
        except BaseException:
            _UIDS_IN_USE.discard(self._own_uid)
            raise
        self._check_layers()

    # ------------------------------------------------------------------ public API

    @property
    def active_layers(self) -> list[str]:
        """Names of the layers that are active in the current interpreter."""
        return [name for name, state in self.layers.items() if state.startswith("active")]

    def describe(self) -> str:
        """One line per layer: whether it is active and how it is enforced."""
        lines = [f"CodeAct sandbox (uid {self.uid}), limits: {self.limits}"]
        for name in ALL_LAYERS:
            lines.append(f"- {name}: {self.layers.get(name, 'unavailable: not reported')}")
        return "\n".join(lines)

    def run(self, code: str) -> ExecResult:
        """Run one code block in the persistent interpreter and report what happened."""
        if self._closed:
            raise SandboxError("the sandbox is closed")
        if not isinstance(code, str):
            raise TypeError("code must be a str")
        fresh = self._ensure_alive()
        self.blocks_run += 1
        start = time.monotonic()
        soft = start + self.limits.wall_seconds
        hard = soft + self.limits.kill_grace_seconds
        request = {"type": "exec", "code": code, "number": self.blocks_run}
        try:
            watch = self._send_block(request, hard)
        except (ChannelClosed, ChannelTimeout):  # died between blocks: start afresh once
            self._restart()
            fresh = True
            try:
                watch = self._send_block(request, hard)
            except (ChannelClosed, ChannelTimeout):
                return self._lost([], "crash", "a fresh interpreter died before the block could start",
                                  started=False)
        result = self._serve_block(soft, hard, watch)
        result.fresh_interpreter = fresh
        result.wall_time = time.monotonic() - start
        return result

    def close(self) -> None:
        """Kill the interpreter (and anything it started) and release every resource."""
        self._closed = True
        if self._finalizer is not None:
            self._finalizer()
        _UIDS_IN_USE.discard(self._own_uid)

    def __enter__(self) -> "Sandbox":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ start-up

    def _config(self, cmd_r: int, msg_w: int) -> dict[str, Any]:
        py = host_python()
        base = None if "seccomp" in self._disable or not _seccomp.SUPPORTED else _seccomp.base_filter().hex()
        reason = "disabled by configuration" if "seccomp" in self._disable else \
            "unavailable: no filter for this CPU architecture"
        return {
            "cmd_fd": cmd_r, "msg_fd": msg_w, "python": py, "limits": self._limit_dict(),
            "uid": self._own_uid, "gid": self._own_uid, "disable": sorted(self._disable),
            "seccomp_base": base, "seccomp_reason": reason,
            "worker_source": (_HERE / "_worker.py").read_text(),
        }

    def _limit_dict(self) -> dict[str, Any]:
        lim = self.limits
        return {k: getattr(lim, k) for k in lim.__dataclass_fields__}

    def _start(self) -> None:
        cmd_r, cmd_w = os.pipe()
        msg_r, msg_w = os.pipe()
        mirror = os.memfd_create("cubebench-sandbox-output", os.MFD_CLOEXEC)
        try:
            os.ftruncate(mirror, 8 + 4 * self.limits.max_output_chars)
            proc = subprocess.Popen(
                [os.path.realpath(sys.executable), "-I", "-S", "-B", str(_HERE / "_launcher.py")],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                pass_fds=(cmd_r, msg_w, mirror), env=_LAUNCHER_ENV, cwd="/", start_new_session=True)
        except BaseException:
            for fd in (cmd_r, cmd_w, msg_r, msg_w, mirror):
                os.close(fd)
            raise
        os.close(cmd_r)
        os.close(msg_w)
        # a result carries up to three texts of max_output_chars, each \u-escaped (six characters per character) at worst
        max_frame = max(8 * 2**20, 3 * 12 * self.limits.max_output_chars + 2**20)
        channel = Channel(msg_r, cmd_w, max_frame, {"tool": TOOL_FRAME_BYTES})
        session = _Session(proc, channel, self._own_uid, mirror)
        self._session = session
        self._finalizer = weakref.finalize(self, session.close)
        try:
            self._handshake(session, cmd_r, msg_w, mirror)
        except SandboxError:
            self._finalizer()
            raise

    def _handshake(self, session: _Session, cmd_r: int, msg_w: int, mirror: int) -> None:
        deadline = time.monotonic() + self.limits.start_deadline_seconds()  # longer on a busy machine
        assert session.proc.stdin is not None
        config = {**self._config(cmd_r, msg_w), "mirror_fd": mirror}
        session.proc.stdin.write((json.dumps(config) + "\n").encode())
        session.proc.stdin.flush()
        started = self._read_started(session, deadline)
        session.child_pid = started["pid"]
        session.workdir = started.get("workdir", "")
        session.pidfd = os.pidfd_open(session.child_pid)
        setup = self._expect(session, deadline, "setup")
        self.layers = {name: state for name, state in setup["layers"].items()}
        init = {"type": "init", "limits": self._limit_dict(),
                "tool_bytes": TOOL_FRAME_BYTES, "tool_depth": MAX_NESTING,
                "tools": {n: _tool_doc(n, f) for n, f in self._tools.items()},
                "exec_filter": _seccomp.exec_filter().hex()
                if "seccomp" not in self._disable and _seccomp.SUPPORTED else None}
        try:
            session.channel.write(init, deadline)
        except (ChannelClosed, ChannelTimeout) as exc:
            raise self._start_failure(session, f"could not send the init message ({exc!r})") from None
        ready = self._expect(session, deadline, "ready")
        problem = self._freeze_between_blocks(session, deadline, _IDLE_CPU_SECONDS)
        if problem:
            raise self._start_failure(session, f"after 'ready' the interpreter {problem}")
        self.layers["seccomp-exec"] = ("disabled by configuration" if "seccomp" in self._disable
                                       else ready["exec_filter"])
        self.uid = int(ready.get("uid", -1))
        session.sweep_uid = (not self.layers.get("pid-namespace", "").startswith("active")
                             and self.uid == self._own_uid)
        self.interpreter_info = ready

    def _read_started(self, session: _Session, deadline: float) -> dict[str, Any]:
        out = session.proc.stdout
        assert out is not None
        ready, _, _ = select.select([out], [], [], max(0.0, deadline - time.monotonic()))
        line = out.readline() if ready else b""
        try:
            event = json.loads(line)
        except ValueError:
            event = {}
        if event.get("event") != "started":
            raise self._start_failure(session, "the launcher did not start the interpreter")
        return event

    def _expect(self, session: _Session, deadline: float, kind: str) -> dict[str, Any]:
        try:
            msg = session.channel.read(deadline)
        except (ChannelClosed, ChannelTimeout, ProtocolViolation) as exc:
            raise self._start_failure(session, f"no {kind!r} message ({type(exc).__name__})") from None
        if msg.get("type") == "setup_failed":
            raise self._start_failure(session, f"setting up the sandbox failed: {msg.get('error')}")
        if msg.get("type") != kind:
            raise self._start_failure(session, f"expected {kind!r}, got {msg.get('type')!r}")
        return msg

    def _start_failure(self, session: _Session, what: str) -> SandboxError:
        session.kill()
        if session.proc.stdin:
            session.proc.stdin.close()
        session.reap()
        err = session.proc.stderr.read().decode(errors="replace")[-2000:] if session.proc.stderr else ""
        return SandboxError(f"could not start the sandbox: {what}" + (f"\n{err}" if err else ""))

    def _check_layers(self) -> None:
        missing = [name for name in self._require if not self.layers.get(name, "").startswith("active")]
        if missing:
            self.close()
            raise SandboxUnavailable("required sandbox layers unavailable: "
                                     + "; ".join(f"{n} ({self.layers.get(n, 'not reported')})" for n in missing))
        weak = [name for name in ALL_LAYERS if not self.layers.get(name, "").startswith("active")
                and not self.layers.get(name, "").startswith("disabled")]
        if weak:
            warnings.warn(f"the CodeAct sandbox runs without these layers: {', '.join(weak)} "
                          f"(see Sandbox.describe())", RuntimeWarning, stacklevel=3)

    def _restart(self) -> None:
        if self._finalizer is not None:
            self._finalizer()
        self.restarts += 1
        self._start()

    def _ensure_alive(self) -> bool:
        """Start a fresh interpreter if the last one died; True if one was started."""
        session = self._session
        if session is not None and not session.dead and session.proc.poll() is None:
            return False
        self._restart()
        return True

    def _live_session(self) -> _Session:
        """The current interpreter's session (``_start`` makes one before any block runs)."""
        if self._session is None:
            raise SandboxError("the sandbox has no interpreter session")
        return self._session

    def _end_session(self) -> None:
        """Kill the current interpreter and release its resources (its finalizer)."""
        if self._finalizer is None:
            raise SandboxError("the sandbox has no interpreter session")
        self._finalizer()

    def _cpu_watchdog(self) -> Callable[[], None]:
        """A check, run while the host waits, that kills a block over its CPU limit."""
        pid = self._live_session().child_pid
        baseline = _cpu_seconds_of(pid) or 0.0
        budget = self.limits.cpu_seconds + self.limits.kill_grace_seconds

        def watch() -> None:
            used = _cpu_seconds_of(pid)
            if used is not None and used - baseline > budget:
                raise _CpuOverrun()
        return watch

    def _send_block(self, request: dict[str, Any], deadline: float) -> Callable[[], None]:
        """Thaw the interpreter (frozen since its last result) and send it a block; return the
        block's CPU watchdog, whose baseline is read while it is still frozen."""
        session = self._live_session()
        watch = self._cpu_watchdog()
        session.send_signal(signal.SIGCONT)
        session.channel.write(request, deadline)
        return watch

    def _freeze_between_blocks(self, session: _Session, deadline: float, cpu_allowance: float) -> str | None:
        """Stop (SIGSTOP) the interpreter once it waits for its next command; None, or what it did instead.

        The worker reads its command pipe right after sending a result, so code that forged the
        result is caught here: running, once it has used ``cpu_allowance`` more seconds of CPU;
        sleeping elsewhere, at ``deadline`` (a worker that is merely waiting for a CPU is
        runnable, and is waited for). Frozen, nothing of it runs until the next block thaws
        it: no signal handler, no timer, no thread. Bytes waiting on the pipe then can only
        be more forged frames. An interpreter that has ended is left to the next block.
        """
        pid = session.child_pid
        cpu_limit = (_cpu_seconds_of(pid) or 0.0) + cpu_allowance
        pause = 0.0001
        while True:
            if _waiting_for_commands(pid):
                session.send_signal(signal.SIGSTOP)
                if _wait_stopped(pid, max(deadline, time.monotonic() + _IDLE_WAIT_SECONDS)) \
                        and _waiting_for_commands(pid):
                    return "wrote more data after it" if session.channel.pending() else None
                session.send_signal(signal.SIGCONT)
            state, used = _proc_state(pid), _cpu_seconds_of(pid)
            if state in (None, "Z", "X"):
                return None
            if (used is not None and used > cpu_limit) or \
                    (time.monotonic() >= deadline and (state != "R" or used is None)):
                return "went on running instead of waiting for its next command"
            time.sleep(pause)
            pause = min(2 * pause, 0.01)

    # ------------------------------------------------------------------ one block

    def _serve_block(self, soft: float, hard: float, watch: Callable[[], None]) -> ExecResult:
        """Answer tool calls until the block's result arrives or the block must die.

        Every frame is checked (``_malformed``); a tool call that returns after the block's
        time limit ends the block as a wall-time stop (the code gets ``kill_grace_seconds``
        to stop on its own); a result counts only once the interpreter waits, frozen, for
        its next block. Anything else kills the interpreter as a pipe violation.
        """
        calls: list[SandboxToolCall] = []
        late_tool = False
        channel = self._live_session().channel
        while True:
            try:
                msg = channel.read(hard, watch)
            except _CpuOverrun:
                return self._lost(calls, "cpu", f"the code block used more than its CPU-time limit of "
                                  f"{self.limits.cpu_seconds:g} s and did not stop when interrupted, "
                                  f"so the interpreter was killed", killed_by_host=True)
            except ChannelTimeout:
                return self._lost(calls, "wall", f"the code block ran past its wall-time limit of "
                                  f"{self.limits.wall_seconds:g} s and did not stop when interrupted, "
                                  f"so the interpreter was killed", killed_by_host=True)
            except ProtocolViolation as exc:
                return self._violation(calls, str(exc))
            except ChannelClosed:
                return self._lost(calls, *self._death_reason())
            problem = _malformed(msg, self.limits.max_output_chars)
            if problem:
                return self._violation(calls, problem)
            if msg["type"] == "tool":
                if self._serve_tool(msg, soft, hard, calls):
                    late_tool = True
                    hard = max(hard, time.monotonic() + self.limits.kill_grace_seconds)
                continue
            idle_deadline = max(hard, time.monotonic() + _IDLE_WAIT_SECONDS)
            problem = self._freeze_between_blocks(self._live_session(), idle_deadline,
                                                  max(self.limits.kill_grace_seconds, _IDLE_CPU_SECONDS))
            if problem:
                return self._violation(calls, f"a 'result' message, but then the interpreter {problem}")
            return self._check_stragglers(self._finished(msg, calls, late_tool))

    def _violation(self, calls: list[SandboxToolCall], problem: str) -> ExecResult:
        return self._lost(calls, "pipe", f"the code wrote invalid data into the sandbox's control pipe "
                          f"({problem}), so the interpreter was killed", killed_by_host=True)

    def _serve_tool(self, msg: dict[str, Any], soft: float, hard: float, calls: list[SandboxToolCall]) -> bool:
        """Run one tool call and answer it; True when it returned after the block's time limit
        (the answer then tells the worker to stop the block)."""
        name = msg["name"]
        call = SandboxToolCall(name=name, args=msg["args"], kwargs=msg["kwargs"])
        calls.append(call)
        late = False
        if name not in self._tools:
            reply = self._refuse(call, f"there is no tool named {name!r}")
        elif time.monotonic() >= soft:
            reply = self._refuse(call, "the code block's time limit was reached; the tool was not called")
        else:
            reply = self._execute_tool(call, self._tools[name])
            late = time.monotonic() >= soft
        if late:
            reply["stop"] = "wall"
            hard = max(hard, time.monotonic() + self.limits.kill_grace_seconds)
        try:
            self._live_session().channel.write({"type": "tool_result", **reply}, hard)
        except (ChannelClosed, ChannelTimeout):
            pass  # the next read reports the death or the timeout
        return late

    @staticmethod
    def _refuse(call: SandboxToolCall, why: str) -> dict[str, Any]:
        call.executed, call.error = False, why
        return {"ok": False, "error": why}

    @staticmethod
    def _execute_tool(call: SandboxToolCall, fn: Callable[..., Any]) -> dict[str, Any]:
        try:
            value = fn(*call.args, **call.kwargs)
        except Exception as exc:  # the tool's own error, shown to the model as ToolError
            # a tool's ToolError is already the message for the model; other errors say their type
            is_tool_error = any(c.__name__ == "ToolError" for c in type(exc).__mro__)  # ToolCallError too
            call.error = str(exc) if is_tool_error else f"{type(exc).__name__}: {exc}"
            return {"ok": False, "error": call.error}
        try:
            json.dumps(value)
        except (TypeError, ValueError):
            call.error = f"the tool returned a {type(value).__name__}, which is not a JSON value"
            return {"ok": False, "error": call.error}
        call.result = value
        return {"ok": True, "result": value}

    def _finished(self, msg: dict[str, Any], calls: list[SandboxToolCall], late_tool: bool = False) -> ExecResult:
        """The result of a block that ended on its own (``msg`` has been checked by ``_malformed``).
        A block during which a tool call outlasted the time limit is a wall-time stop, whatever
        the worker says."""
        reason = "wall" if late_tool and msg["stopped"] is None else msg["stopped"]
        detail = None
        if reason == "wall":
            detail = f"the code block ran past its wall-time limit of {self.limits.wall_seconds:g} s"
            if late_tool:
                detail += " (a tool call was still running when it was reached)"
        elif reason == "cpu":
            detail = f"the code block used more than its CPU-time limit of {self.limits.cpu_seconds:g} s"
        elif reason == "memory":
            detail = f"the code ran out of memory (limit {self.limits.memory_bytes // 2**20} MiB)"
        elif reason == "output":
            detail = (f"the code block printed more than {10 * self.limits.max_output_chars} characters; "
                      f"only the first {self.limits.max_output_chars} are shown")
        return ExecResult(
            stdout=msg["stdout"], stdout_dropped_chars=msg["dropped"], value_repr=msg["value_repr"],
            error=msg["error"], timed_out=reason in ("wall", "cpu"), killed_reason=reason, stop_detail=detail,
            tool_calls=calls)

    def _check_stragglers(self, result: ExecResult) -> ExecResult:
        """Threads or processes must not outlive their block (only possible if max_processes > 1)."""
        if self.limits.max_processes <= 1:
            return result
        extra = self._sandbox_threads() - 1
        if extra > 0:
            self._live_session().kill()
            self._end_session()
            note = (f"the code block left {extra} thread(s) or process(es) running after it ended; "
                    "they are not allowed to outlive a block, so the interpreter was killed")
            result.stop_detail = f"{result.stop_detail}; then {note}" if result.stop_detail else note
            result.killed_reason = result.killed_reason or "background"
            result.interpreter_lost = True
        return result

    def _sandbox_threads(self) -> int:
        """Threads of every process of the sandbox: those of its PID namespace, or else
        those of its own uid (0 when neither can tell them apart from the host's)."""
        pid = self._live_session().child_pid
        if self.layers.get("pid-namespace", "").startswith("active"):
            try:
                ns = os.readlink(f"/proc/{pid}/ns/pid")
            except OSError:
                return 0
            return sum(n for p, n in _tasks_of_uid(self.uid).items() if _pid_ns(p) == ns)
        if self.uid == self._own_uid:
            return sum(_tasks_of_uid(self.uid).values())
        return 0

    def _death_reason(self) -> tuple[str, str]:
        """Why the interpreter died on its own, from the launcher's exit report."""
        info = self._live_session().reap()
        sig, code = info.get("signal"), info.get("code")
        cpu = float(info.get("cpu") or 0.0)
        if sig == signal.SIGXCPU or (sig == signal.SIGKILL and cpu >= self.limits.interpreter_cpu_seconds):
            return "cpu", (f"the interpreter used up its lifetime CPU budget of "
                           f"{self.limits.interpreter_cpu_seconds:g} s and was killed")
        if sig == signal.SIGXFSZ:
            return "file_size", (f"the code wrote a file larger than {self.limits.file_size_bytes} bytes "
                                 "and the interpreter was killed")
        if sig == signal.SIGKILL:
            return "killed", "the interpreter was killed (SIGKILL)"
        if sig is not None:
            return "crash", f"the interpreter crashed ({_signal_name(sig)})"
        if code == 75:
            return "pipe", "the code closed or broke the sandbox's control pipe, so the interpreter ended"
        return "exit", f"the interpreter exited with status {code}"

    def _lost(self, calls: list[SandboxToolCall], reason: str, detail: str, *,
              killed_by_host: bool = False, started: bool = True) -> ExecResult:
        session = self._live_session()
        if killed_by_host:
            session.kill()
        session.reap()
        stdout = session.mirrored_output(self.limits.max_output_chars) if started else ""
        self._end_session()
        return ExecResult(stdout=stdout, timed_out=reason in ("wall", "cpu"), killed_reason=reason,
                          stop_detail=detail, tool_calls=calls, interpreter_lost=True)
