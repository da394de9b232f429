"""The ReAct agent: Thought -> Action -> Observation with a chat model.

Each interaction step is one model call; the reply's ``Action:`` line is one
tool call.  The prompt template and few-shot examples are files
(``agents/prompts/``), overridable per agent.
"""

from __future__ import annotations

from pathlib import Path

from .actions import ActionParseError, parse_action
from .base import Task, Turn
from .chat import PROMPTS, ChatAgent
from .llm import ModelClient, react_grammar
from .tool_registry import tool_docs
from .tools import ToolCallError, Toolbox, ToolError


class ReActAgent(ChatAgent):
    """A chat model acting in the ReAct format through the episode's tools.

    ``grammar=True`` sends a GBNF grammar of the action format with every
    call (for a llama.cpp server reached through ``openai-compatible:``).
    """

    stop = ["Observation:"]
    reward_line = False  # the observation is the tool's result, and a move's result reports its reward

    def __init__(self, client: ModelClient, *, name: str | None = None,
                 system_prompt: str | Path = PROMPTS / "react_system.txt",
                 examples: str | Path | None = PROMPTS / "react_examples.txt",
                 max_tokens: int = 256, grammar: bool = False, send_images: bool = True) -> None:
        super().__init__(client, name=name or f"react:{getattr(client, 'model', 'model')}",
                         system_prompt=system_prompt, examples=examples, max_tokens=max_tokens,
                         send_images=send_images)
        self.grammar = grammar

    def system_prompt(self, task: Task) -> str:
        self.extra = {"grammar": react_grammar(task.tools)} if self.grammar else {}
        return self.template.format(task=task.description, tool_docs=tool_docs(task.tools))

    def handle(self, reply: str, turn: Turn, tools: Toolbox) -> None:
        try:
            name, args = parse_action(reply)
        except ActionParseError as err:
            turn.parse_error = str(err)
            return
        turn.action = f"{name}({', '.join(repr(a) for a in args)})"
        try:
            tools.invoke(name, args)
        except ToolCallError as err:  # unknown tool or bad arguments: the reply was malformed
            turn.parse_error = str(err)
        except ToolError:  # a well-formed call the tool refused (e.g. bad notation): its result says why
            pass
