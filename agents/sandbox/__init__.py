"""A real sandbox for the CodeAct agent's Python code.

The model's code runs in a persistent per-episode interpreter in a separate,
isolated process (Linux namespaces, a minimal read-only root with the stdlib only,
an unprivileged uid, rlimits, no_new_privs, seccomp), talking to the host over a
pipe that carries code, results and tool calls. See ``docs/sandbox.md``.

>>> from cubebench.agents.sandbox import Sandbox, SandboxLimits
>>> with Sandbox({"observe": lambda: "UUUUUUUUU..."}) as sb:   # doctest: +SKIP
...     sb.run("x = observe()").observation()
...     sb.run("len(x)").value_repr
"""
from .limits import SandboxLimits
from .result import STOP_REASONS, ExecResult, SandboxToolCall
from .sandbox import ALL_LAYERS, FAIRNESS_LAYERS, Sandbox, SandboxError, SandboxUnavailable

__all__ = [
    "Sandbox", "SandboxLimits", "ExecResult", "SandboxToolCall", "SandboxError", "SandboxUnavailable",
    "ALL_LAYERS", "FAIRNESS_LAYERS", "STOP_REASONS",
]
