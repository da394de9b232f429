"""What one code block did in the sandbox, and how it is shown to the model."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["ExecResult", "SandboxToolCall", "STOP_REASONS"]

STOP_REASONS = ("cpu", "wall", "memory", "output", "file_size", "crash", "killed", "exit", "pipe",
                "background")
"""Values of :attr:`ExecResult.killed_reason` (``None`` when the block ended normally)."""

FRESH_NOTICE = ("[Notice: the previous interpreter died, so this block ran in a fresh one: "
                "variables, functions and imports from earlier blocks are lost.]")
LOST_NOTICE = ("[The interpreter was stopped and will be restarted for the next block: "
               "its variables, functions and imports are lost.]")


@dataclass
class SandboxToolCall:
    """One tool call made by the code, in order. ``executed`` is False when the host
    refused it (unknown tool, bad arguments, or the block's time was up)."""

    name: str
    args: list[Any]
    kwargs: dict[str, Any]
    result: Any = None
    error: str | None = None
    executed: bool = True


@dataclass
class ExecResult:
    """The outcome of :meth:`Sandbox.run` for one code block."""

    stdout: str = ""
    """What the block printed (stdout and stderr together), cut to the output limit."""
    stdout_dropped_chars: int = 0
    """Characters printed beyond the limit and not kept."""
    value_repr: str | None = None
    """``repr`` of the block's final expression, as a REPL shows it (None if no value)."""
    error: str | None = None
    """Traceback of an exception that ended the block (sandbox-internal frames removed)."""
    timed_out: bool = False
    """True when the block was stopped by its wall-time or CPU-time limit."""
    killed_reason: str | None = None
    """Why the block was stopped early: one of :data:`STOP_REASONS`, or None."""
    stop_detail: str | None = None
    """A sentence explaining the stop, for people and for the model."""
    tool_calls: list[SandboxToolCall] = field(default_factory=list)
    """Tool calls made by the block, in order, with their results or errors."""
    fresh_interpreter: bool = False
    """This block ran in a fresh interpreter because the previous one had died."""
    interpreter_lost: bool = False
    """The interpreter died or was killed during this block; the next block starts fresh."""
    wall_time: float = 0.0
    """Seconds the block took, as seen by the host."""

    def observation(self) -> str:
        """The text shown to the model for this block."""
        parts: list[str] = []
        if self.fresh_interpreter:
            parts.append(FRESH_NOTICE)
        if self.stdout:
            parts.append(self.stdout.rstrip("\n"))
        if self.stdout_dropped_chars:
            parts.append(f"[output truncated: {self.stdout_dropped_chars} more characters not shown]")
        if self.value_repr is not None:
            parts.append(self.value_repr)
        if self.error:
            parts.append(self.error.rstrip("\n"))
        if self.stop_detail:
            parts.append(f"[Stopped: {self.stop_detail}.]")
        if self.interpreter_lost:
            parts.append(LOST_NOTICE)
        return "\n".join(parts) if parts else "[no output]"
