"""An agent that acts through Inspect-native tool calls (function calling) on the episode's toolbox.

The tools are CubeBench's own: their names, parameters and descriptions come from the tool registry
(:data:`~cubebench.agents.tool_registry.REGISTRY`) for the episode's tier and tool setting, and every
call runs through the episode's :class:`~cubebench.agents.tools.Toolbox` (:meth:`~cubebench.agents.tools.Toolbox.invoke`),
so moves, rotations, solvers, budgets and refusals are exactly the ReAct agent's.  What differs is
only how the model names the call: a structured tool call instead of an ``Action:`` line.

One interaction step is one model turn with one tool call, as in ReAct: the model is asked not to make
parallel calls, and if it makes several anyway only the first runs (the others are answered "not run").
A turn without a tool call is the model's parse error, like a reply without an ``Action:`` line.
The tool's result and the next view come back as the tool message (the view's image, on the image
tiers, follows as a user message: not every provider takes images in tool results).
"""

from __future__ import annotations

from typing import Any

import anyio.from_thread
from inspect_ai.model import (
    ChatMessage,
    ChatMessageSystem,
    ChatMessageTool,
    ChatMessageUser,
    ContentImage,
    ContentText,
    GenerateConfig,
    Model,
    ModelOutput,
)
from inspect_ai.tool import ToolCall, ToolInfo, ToolParam, ToolParams

from cubebench.agents.base import Observation, Task, Turn
from cubebench.agents.llm.messages import image_part, safe_text, text_part
from cubebench.agents.records import png_bytes
from cubebench.agents.tool_registry import REGISTRY
from cubebench.agents.tools import ToolCallError, Toolbox, ToolError

from .model_client import FailedCall, describe_failure, output_usage, to_inspect_messages

__all__ = ["InspectToolAgent", "tool_info", "SYSTEM_PROMPT", "NO_TOOL_CALL", "NOT_RUN"]

SYSTEM_PROMPT = ("{task}\n\nAct by calling exactly one tool per reply. After each call you receive the tool's result "
                 "and the current observation.")
"""The system prompt: the task text every agent gets (:func:`~cubebench.agents.episode.describe_task`) and the protocol."""
NO_TOOL_CALL = "no tool call in your reply: call exactly one of the tools ({tools})"
"""The parse error of a turn without a tool call."""
NOT_RUN = "not run: one tool call per step; only the first call of a reply runs"
"""The result of every call of a reply after its first."""


def tool_info(name: str) -> ToolInfo:
    """The Inspect tool specification of a registered CubeBench tool (string parameters, the registry's text)."""
    spec = REGISTRY[name]
    params = ToolParams(
        properties={p.name: ToolParam(type="string", description=_param_text(p.name)) for p in spec.params},
        required=[p.name for p in spec.params])
    return ToolInfo(name=name, description=spec.summary, parameters=params)


def _param_text(name: str) -> str:
    return {"seq": "moves in Singmaster notation, separated by spaces, e.g. \"R U R' U'\"",
            "views": "whole-cube rotations x, x', y, y', z, z' (x2 ... too), separated by spaces",
            "facelets": "the cube as 54 letters of URFDLB in URFDLB facelet order"}.get(name, name)


class InspectToolAgent:
    """A CubeBench :class:`~cubebench.agents.base.Agent` whose model is the eval's Inspect model, calling
    the episode's tools as native tool calls; call it from a thread started by
    :func:`~.model_client.in_worker_thread` (the episode loop's)."""

    def __init__(self, model: Model, *, max_tokens: int = 256, send_images: bool = True,
                 failed: FailedCall | None = None) -> None:
        self.model = model
        self.failed = failed if failed is not None else FailedCall()
        self.name = f"inspect-tools:{model}"
        self.max_tokens = max_tokens
        self.send_images = send_images
        self.messages: list[ChatMessage] = []
        self._tools: list[ToolInfo] = []
        self._pending: list[ToolCall] = []

    def reset(self, task: Task) -> None:
        """A new conversation: the task's text as the system prompt, its tools as Inspect tools."""
        self._tools = [tool_info(name) for name in task.tools]
        self.messages = [ChatMessageSystem(content=SYSTEM_PROMPT.format(task=task.description))]
        self._pending = []

    def act(self, observation: Observation, tools: Toolbox) -> Turn:
        """Show the observation, ask the model for one tool call and run it on ``tools``."""
        self._show(observation)
        try:
            output = anyio.from_thread.run(self._generate)
        except Exception as err:  # noqa: BLE001 - Inspect already retried; a failed call is the step's error
            return Turn(error=f"model error: {describe_failure(err)}")
        if output.error:
            return Turn(error=f"model error: {safe_text(output.error)}")
        message = output.message
        self.messages.append(message)
        n_in, n_out = output_usage(output)
        calls = list(message.tool_calls or [])
        turn = Turn(reply=safe_text(output.completion), input_tokens=n_in, output_tokens=n_out,
                    model_log=[{"provider": "inspect", "model": output.model, "stop_reason": output.stop_reason,
                                "tool_calls": [{"function": c.function, "arguments": c.arguments} for c in calls]}])
        self._pending = calls
        if not calls:
            turn.parse_error = NO_TOOL_CALL.format(tools=", ".join(tools.names))
            return turn
        call = calls[0]
        turn.action = f"{call.function}({', '.join(f'{k}={v!r}' for k, v in call.arguments.items())})"
        if call.parse_error:
            turn.parse_error = f"could not read the arguments of {call.function}: {call.parse_error}"
            return turn
        try:
            tools.invoke(call.function, [], dict(call.arguments))
        except ToolCallError as err:  # unknown tool or bad arguments: the call was malformed
            turn.parse_error = str(err)
        except ToolError:  # a well-formed call the tool refused: its result says why
            pass
        return turn

    def close_pending(self, result: str) -> None:
        """Answer the last turn's calls with ``result`` (the episode ended after them): a complete transcript."""
        self._answer_pending(result)

    def close(self) -> None:
        """Nothing to release: the model belongs to the eval."""

    async def _generate(self) -> ModelOutput:
        return await self.failed.generate(self.model, self.messages, tools=self._tools,
                                          config=GenerateConfig(max_tokens=self.max_tokens, parallel_tool_calls=False))

    def _show(self, observation: Observation) -> None:
        text = f"Observation: {safe_text(observation.text)}\n({observation.steps_left} steps left)"
        if not self._answer_pending(text):
            parts: list[Any] = [text_part(text)]
            if observation.image is not None and self.send_images:
                parts.append(image_part(png_bytes(observation.image)))
            self.messages.extend(to_inspect_messages([{"role": "user", "content": parts}]))
        elif observation.image is not None and self.send_images:
            (image,) = to_inspect_messages([{"role": "user", "content": [image_part(png_bytes(observation.image))]}])
            self.messages.append(ChatMessageUser(content=[ContentText(text="The current view:"),
                                                          *[c for c in image.content if isinstance(c, ContentImage)]]))

    def _answer_pending(self, text: str) -> bool:
        """Tool messages for the last turn's calls (the first gets ``text``); False when there were none."""
        if not self._pending:
            return False
        first, *rest = self._pending
        self.messages.append(ChatMessageTool(content=text, tool_call_id=first.id, function=first.function))
        self.messages.extend(ChatMessageTool(content=f"Error: {NOT_RUN}", tool_call_id=c.id, function=c.function)
                             for c in rest)
        self._pending = []
        return True
