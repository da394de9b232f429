"""Resource limits of the CodeAct sandbox."""
from __future__ import annotations

import os
from dataclasses import dataclass

__all__ = ["SandboxLimits"]

MiB = 1024 * 1024


@dataclass(frozen=True)
class SandboxLimits:
    """Limits applied to the sandboxed interpreter.

    Time limits apply to each code block; memory, file and process limits apply to
    the interpreter for the whole episode. The defaults suit a CodeAct step that
    moves a cube and perhaps runs a small search in pure Python.
    """

    cpu_seconds: float = 5.0
    """CPU time per block. The block is interrupted (``CpuTimeExceeded``, variables
    kept) when it has used this much; if it ignores that, the host kills the
    interpreter once it has used ``kill_grace_seconds`` more."""
    wall_seconds: float = 10.0
    """Wall-clock time per block, tool calls included."""
    kill_grace_seconds: float = 1.0
    """How long after ``wall_seconds`` (or ``cpu_seconds`` of CPU) the host waits for
    the block to stop on its own before it kills the interpreter (the model's
    variables are then lost)."""
    interpreter_cpu_seconds: float = 600.0
    """Kernel-enforced CPU budget of one interpreter over its whole life
    (``RLIMIT_CPU``): a backstop should the host's watchdog ever fail; when it is
    spent the interpreter is killed and the next block starts a fresh one."""
    memory_bytes: int = 512 * MiB
    """Address-space limit of the interpreter (``RLIMIT_AS``)."""
    max_output_chars: int = 10_000
    """Characters of stdout/stderr (and of a value's repr, and of a traceback) shown;
    a block that prints ten times this much is stopped."""
    file_size_bytes: int = 1 * MiB
    """Largest file the code may write (``RLIMIT_FSIZE``)."""
    disk_bytes: int = 16 * MiB
    """Size of the private tmpfs working directory ``/work``."""
    max_files: int = 256
    """Inodes (files and directories) in ``/work``."""
    max_open_files: int = 64
    """Open file descriptors (``RLIMIT_NOFILE``)."""
    max_processes: int = 1
    """Processes and threads of the sandbox uid (``RLIMIT_NPROC``); 1 means the
    interpreter alone: no ``fork``, no subprocess, no threads."""
    start_seconds: float = 20.0
    """Time allowed to start a fresh interpreter on an idle machine; a busy one gets more
    (:meth:`start_deadline_seconds`)."""
    start_max_seconds: float = 300.0
    """The most time a start may take, however busy the machine."""

    def start_deadline_seconds(self, load: float | None = None, cpus: int | None = None) -> float:
        """Wall time allowed for the start beginning now: ``start_seconds`` scaled by the runnable
        processes per CPU (the 1-minute load average over the CPUs this process may use) when that
        is above 1, and at most ``start_max_seconds``.

        Why: a start is CPU work (a fresh CPython, the sandbox layers, the helpers), and a machine
        with N runnable processes per core gives it about 1/N of a core, so a fixed wall deadline
        fails sound episodes under load (20 s failed them at load 17 on 2 cores; the deadline is
        now 170 s there).  The deadline still ends a start that hangs."""
        if load is None:
            try:
                load = os.getloadavg()[0]
            except OSError:  # no load average on this platform: no scaling
                load = 0.0
        if cpus is None:
            cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
        busy = max(1.0, load / max(1, cpus))
        return min(self.start_seconds * busy, max(self.start_max_seconds, self.start_seconds))

    def __post_init__(self) -> None:
        for name in ("cpu_seconds", "wall_seconds", "start_seconds", "start_max_seconds", "interpreter_cpu_seconds"):
            if not getattr(self, name) > 0:
                raise ValueError(f"SandboxLimits.{name} must be positive")
        if self.kill_grace_seconds < 0:
            raise ValueError("SandboxLimits.kill_grace_seconds must be >= 0")
        for name in ("memory_bytes", "max_output_chars", "file_size_bytes", "disk_bytes",
                     "max_files", "max_open_files", "max_processes"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"SandboxLimits.{name} must be a positive int")
        if self.memory_bytes < 64 * MiB:
            raise ValueError("SandboxLimits.memory_bytes below 64 MiB cannot start CPython")
        if self.max_open_files < 16:
            raise ValueError("SandboxLimits.max_open_files must be at least 16")
