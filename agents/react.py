"""The ReAct agent: Thought -> Action -> Observation with a chat model.

Each interaction step is one model call; the reply's ``Action:`` line is one
tool call.  The prompt template and few-shot examples are files
(``agents/prompts/``), overridable per agent.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .actions import ActionParseError, parse_action
from .base import Observation, Task, Turn
from .llm import BudgetExceeded, ModelClient, ModelError, react_grammar, text_part
from .llm.messages import image_part
from .records import png_bytes
from .tools import Toolbox

PROMPTS = Path(__file__).with_name("prompts")

TOOL_DOCS = {
    "move": 'move(seq: str) - apply face turns in Singmaster notation, e.g. move("R U R\' U\'")',
    "rotate": 'rotate(views: str) - turn the whole cube to change your view: x, x\', y, y\', z, z\' (e.g. rotate("y"))',
    "observe": "observe() - look at the cube again",
    "done": "done() - end the episode (when you believe the cube is solved)",
    "solve": "solve(facelets: str) -> str - a solver: give it the cube as 54 letters in URFDLB facelet order, "
             "it returns a solution",
    "solve_current": "solve_current() -> str - a solver that reads the cube itself (every face must have been "
                     "seen since your last face turn) and returns a solution",
}
"""Exact documented names and signatures shown to models."""


def tool_docs(tools: tuple[str, ...]) -> str:
    return "\n".join(f"- {TOOL_DOCS[t]}" for t in tools)


class ReActAgent:
    """A chat model acting in the ReAct format through the episode's tools.

    ``grammar=True`` sends a GBNF grammar of the action format with every
    call (for llama.cpp servers, e.g. the embedded local model).
    """

    def __init__(
        self,
        client: ModelClient,
        *,
        name: str | None = None,
        system_prompt: str | Path = PROMPTS / "react_system.txt",
        examples: str | Path | None = PROMPTS / "react_examples.txt",
        max_tokens: int = 256,
        grammar: bool = False,
        send_images: bool = True,
    ) -> None:
        self.client = client
        self.name = name or f"react:{getattr(client, 'model', 'model')}"
        self.template = Path(system_prompt).read_text() if isinstance(system_prompt, Path) else system_prompt
        self.examples = (Path(examples).read_text() if isinstance(examples, Path) else examples) or ""
        self.max_tokens = max_tokens
        self.grammar = grammar
        self.send_images = send_images
        self.messages: list[dict[str, Any]] = []
        self.extra: dict[str, Any] = {}

    def reset(self, task: Task) -> None:
        system = self.template.format(task=task.description, tool_docs=tool_docs(task.tools))
        if self.examples:
            system += "\n\n" + self.examples.strip()
        self.messages = [{"role": "system", "content": system}]
        self.extra = {"grammar": react_grammar(task.tools)} if self.grammar else {}

    def act(self, observation: Observation, tools: Toolbox) -> Turn:
        self.messages.append({"role": "user", "content": self._content(observation)})
        try:
            reply = self.client.complete(self.messages, stop=["Observation:"], max_tokens=self.max_tokens,
                                         extra=self.extra)
        except BudgetExceeded as err:
            self.messages.pop()
            return Turn(error=f"budget exceeded: {err}", model_log=list(getattr(err, "log", []) or []), stop=True)
        except ModelError as err:
            self.messages.pop()
            return Turn(error=f"model error: {err}", model_log=list(getattr(err, "log", []) or []))
        self.messages.append({"role": "assistant", "content": reply.text})
        turn = Turn(reply=reply.text, input_tokens=reply.input_tokens, output_tokens=reply.output_tokens,
                    cost_usd=reply.cost_usd, model_log=[reply.as_record()])
        try:
            name, args = parse_action(reply.text)
        except ActionParseError as err:
            turn.error = str(err)
            return turn
        turn.action = f"{name}({', '.join(repr(a) for a in args)})"
        tools.call(name, args)
        return turn

    def _content(self, observation: Observation) -> Any:
        text = f"Observation: {observation.text}\n({observation.steps_left} steps left)"
        if observation.image is None or not self.send_images:
            return text
        return [text_part(text), image_part(png_bytes(observation.image))]
