"""The ReAct reply format, as a GBNF grammar for constrained decoding and as a matching regex.

A reply is exactly two lines::

    Thought: <one line of free text>
    Action: <call>

where ``<call>`` is one of the tools of the setting, each argument written in its canonical
form as the tool registry (:mod:`cubebench.agents.tool_registry`) describes it:
``move("<moves>")``, ``rotate("<rotations>")``, ``observe()``, ``done()``,
``solve("<54 letters URFDLB>")``, ``solve_current()``. A llama.cpp server given
:func:`react_grammar` (``extra={"grammar": ...}``) can only produce such replies. GBNF is used
rather than a JSON schema because a JSON-schema enum containing quotes crashes the llama.cpp
server. :func:`react_pattern` is the same language as a Python regex, for checking replies (it is
what the tests hold the grammar's output to).
"""

from __future__ import annotations

import re
from typing import Sequence

from ..tool_registry import REGISTRY, TOOL_NAMES, ToolSpec

__all__ = ["MAX_THOUGHT_CHARS", "react_grammar", "react_pattern", "seat_grammar"]

#: Upper bound on the thought that keeps a small model from rambling until ``max_tokens``.
MAX_THOUGHT_CHARS = 200


def _check_tools(tools: Sequence[str]) -> list[ToolSpec]:
    if isinstance(tools, str):
        raise TypeError("tools must be a sequence of tool names, not a single string")
    names = list(dict.fromkeys(tools))
    unknown = [t for t in names if t not in REGISTRY]
    if unknown:
        raise ValueError(f"unknown tool(s) {unknown}; known tools: {list(TOOL_NAMES)}")
    if not names:
        raise ValueError("at least one tool is needed")
    return [REGISTRY[n] for n in names]


def _rule(*parts: str) -> str:
    return "-".join(parts).replace("_", "-")


def _call_gbnf(spec: ToolSpec) -> tuple[str, list[str]]:
    """The GBNF of one call, ``"move(\\"" move-seq "\\")"``, and the rules its arguments need."""
    if not spec.params:
        return f'"{spec.name}()"', []
    args, rules = [], []
    for param in spec.params:
        expr, extra = param.pattern.gbnf(_rule(spec.name, param.name))
        args.append(expr)
        rules += extra
    return f'"{spec.name}(\\"" ' + ' "\\", \\"" '.join(args) + ' "\\")"', rules


def _call_regex(spec: ToolSpec) -> str:
    args = '", "'.join(param.pattern.regex() for param in spec.params)
    return re.escape(spec.name) + (rf'\("{args}"\)' if spec.params else r"\(\)")


def react_grammar(tools: Sequence[str]) -> str:
    """GBNF (llama.cpp grammar) for a ReAct reply restricted to ``tools``.

    The thought is one line of 1..MAX_THOUGHT_CHARS characters that starts with a non-blank;
    each argument follows its registry pattern (e.g. 1..40 space-separated moves).
    """
    specs = _check_tools(tools)
    lines = [
        'root ::= "Thought: " thought "\\nAction: " call',
        f"thought ::= [^\\n\\t ] [^\\n]{{0,{MAX_THOUGHT_CHARS - 1}}}",
        "call ::= " + " | ".join(_rule(s.name, "call") for s in specs),
    ]
    rules: list[str] = []
    for spec in specs:
        expr, extra = _call_gbnf(spec)
        lines.append(f"{_rule(spec.name, 'call')} ::= {expr}")
        rules += extra
    return "\n".join(lines + rules) + "\n"


def react_pattern(tools: Sequence[str]) -> re.Pattern[str]:
    """A compiled regex that fully matches exactly the replies :func:`react_grammar` allows.

    Use ``react_pattern(tools).fullmatch(reply)``; group ``call`` is the action call.
    """
    calls = [_call_regex(spec) for spec in _check_tools(tools)]
    thought = f"[^\\n\\t ][^\\n]{{0,{MAX_THOUGHT_CHARS - 1}}}"
    return re.compile(f"Thought: {thought}\nAction: (?P<call>{'|'.join(calls)})")


def seat_grammar(names: Sequence[str], talking: bool, max_message_chars: int) -> str:
    """GBNF for a multi-agent seat's reply (:mod:`cubebench.agents.seats`): a one-line thought, then
    ``wait``/``pass``, ``say <text>`` (printable ASCII, at most ``max_message_chars``, where the seat
    talks) or one of the seat's own action ``names`` (after wait and say, or after pass)."""
    own = list(names[2:] if talking else names[1:])
    acts = ['"wait"', '"say " message'] if talking else ['"pass"']
    acts += ['"' + n.replace("\\", "\\\\").replace('"', '\\"') + '"' for n in own]
    lines = [
        'root ::= "Thought: " thought "\\nAction: " act',
        f"thought ::= [^\\n\\t ] [^\\n]{{0,{MAX_THOUGHT_CHARS - 1}}}",
        "act ::= " + " | ".join(acts),
    ]
    if talking:
        lines.append(f"message ::= [!-~] [ -~]{{0,{max(0, min(max_message_chars, MAX_THOUGHT_CHARS) - 1)}}}")
    return "\n".join(lines) + "\n"
