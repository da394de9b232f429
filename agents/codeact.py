"""The CodeAct agent: the model writes Python that runs in a sandbox and calls tools.

One code block is one interaction step; every tool call that moves the cube
is one or more env steps toward the move count.  The interpreter is the
:class:`~cubebench.agents.sandbox.Sandbox`: a separate, isolated process that reaches
the cube only through the tools of the episode's setting (no solver library
can be imported there; see docs/sandbox.md).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Callable

from .base import Task, Turn
from .chat import PROMPTS, ChatAgent
from .llm import ModelClient
from .sandbox import FAIRNESS_LAYERS, Sandbox, SandboxLimits
from .tool_registry import REGISTRY, tool_docs
from .tools import Toolbox

_BLOCK = re.compile(r"```(?:python|py)?[ \t]*\n(.*?)```", re.DOTALL | re.IGNORECASE)
_OPEN_BLOCK = re.compile(r"```(?:python|py)?[ \t]*\n(.*)$", re.DOTALL | re.IGNORECASE)


def extract_code(reply: str) -> str | None:
    """The last fenced code block of a reply (an unclosed final fence counts), else None."""
    blocks = _BLOCK.findall(reply or "")
    if blocks:
        return blocks[-1]
    tail = _OPEN_BLOCK.search(reply or "")
    return tail.group(1) if tail else None


class CodeActAgent(ChatAgent):
    """A chat model that acts by writing code for a persistent sandboxed interpreter."""

    def __init__(self, client: ModelClient, *, name: str | None = None,
                 system_prompt: str | Path = PROMPTS / "codeact_system.txt",
                 examples: str | Path | None = PROMPTS / "codeact_examples.txt",
                 max_tokens: int = 1024, limits: SandboxLimits | None = None, send_images: bool = True) -> None:
        super().__init__(client, name=name or f"codeact:{getattr(client, 'model', 'model')}",
                         system_prompt=system_prompt, examples=examples, max_tokens=max_tokens,
                         send_images=send_images)
        self.limits = limits or SandboxLimits()
        self.sandbox: Sandbox | None = None
        self._tools: Toolbox | None = None

    def system_prompt(self, task: Task) -> str:
        self._close_sandbox()
        # the fairness walls (no project files, no network, no privileges) are not optional
        self.sandbox = Sandbox(self._tool_functions(task.tools), self.limits, require_layers=FAIRNESS_LAYERS)
        return self.template.format(task=task.description, tool_docs=tool_docs(task.tools))

    def handle(self, reply: str, turn: Turn, tools: Toolbox) -> None:
        code = extract_code(reply)
        if code is None:
            turn.parse_error = "no code block found: write your code in a ```python ... ``` block"
            return
        self._tools = tools
        assert self.sandbox is not None
        result = self.sandbox.run(code)
        turn.action = code
        turn.feedback = result.observation() or "(the code ran and printed nothing)"

    def close(self) -> None:
        self._close_sandbox()
        super().close()

    def _tool_functions(self, names: tuple[str, ...]) -> dict[str, Callable[..., Any]]:
        """Host callables of the tools; the sandbox's stubs show their registry signature and summary."""
        def bind(name: str) -> Callable[..., str]:
            def tool(*args: Any, **kwargs: Any) -> str:
                if self._tools is None:
                    raise RuntimeError("no episode is running")
                return self._tools.invoke(name, list(args), kwargs)

            tool.__name__ = tool.__qualname__ = name
            tool.__signature__ = REGISTRY[name].python_signature()  # type: ignore[attr-defined]
            tool.__doc__ = REGISTRY[name].summary
            return tool

        return {name: bind(name) for name in names}

    def _close_sandbox(self) -> None:
        if self.sandbox is not None:
            self.sandbox.close()
            self.sandbox = None
