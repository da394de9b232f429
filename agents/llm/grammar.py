"""The ReAct reply format, as a GBNF grammar for constrained decoding and as a matching regex.

A reply is exactly two lines::

    Thought: <one line of free text>
    Action: <call>

where ``<call>`` is one of the tools of the setting: ``move("<moves>")``, ``rotate("<view>")``,
``observe()``, ``done()``, ``solve("<54 letters URFDLB>")``, ``solve_current()``. A llama.cpp
server given :func:`react_grammar` (``extra={"grammar": ...}``) can only produce such replies.
GBNF is used rather than a JSON schema because a JSON-schema enum containing quotes crashes the
llama.cpp server. :func:`react_pattern` is the same language as a Python regex, for checking
replies (it is what the tests hold the grammar's output to).
"""

from __future__ import annotations

import re
from typing import Sequence

__all__ = ["TOOLS", "MOVE_LETTERS", "MAX_MOVES", "MAX_THOUGHT_CHARS", "react_grammar",
           "react_pattern"]

#: Every tool name the format knows, in the order the grammar lists them.
TOOLS = ("move", "rotate", "observe", "done", "solve", "solve_current")
#: Face turns, whole-cube rotations, slices and wide turns accepted in ``move("…")``.
MOVE_LETTERS = "URFDLBxyzMESurfdlb"
#: Upper bounds that keep a small model from rambling until ``max_tokens``.
MAX_MOVES = 40
MAX_THOUGHT_CHARS = 200

_CALL_RULES = {
    "move": r'"move(\"" moves "\")"',
    "rotate": r'''"rotate(\"" [xyz] "'"? "\")"''',
    "observe": r'"observe()"',
    "done": r'"done()"',
    "solve": r'"solve(\"" [URFDLB]{54} "\")"',
    "solve_current": r'"solve_current()"',
}

_CALL_REGEX = {
    "move": r'move\("(?:{tok})(?: (?:{tok})){{0,{more}}}"\)',
    "rotate": r"rotate\(\"[xyz]'?\"\)",
    "observe": r"observe\(\)",
    "done": r"done\(\)",
    "solve": r'solve\("[URFDLB]{54}"\)',
    "solve_current": r"solve_current\(\)",
}


def _check_tools(tools: Sequence[str]) -> list[str]:
    if isinstance(tools, str):
        raise TypeError("tools must be a sequence of tool names, not a single string")
    names = list(dict.fromkeys(tools))
    unknown = [t for t in names if t not in TOOLS]
    if unknown:
        raise ValueError(f"unknown tool(s) {unknown}; known tools: {list(TOOLS)}")
    if not names:
        raise ValueError("at least one tool is needed")
    return names


def react_grammar(tools: Sequence[str]) -> str:
    """GBNF (llama.cpp grammar) for a ReAct reply restricted to ``tools``.

    The thought is one line of 1..MAX_THOUGHT_CHARS characters that starts with a non-blank;
    a move sequence holds 1..MAX_MOVES space-separated moves.
    """
    names = _check_tools(tools)
    lines = [
        'root ::= "Thought: " thought "\\nAction: " call',
        f"thought ::= [^\\n\\t ] [^\\n]{{0,{MAX_THOUGHT_CHARS - 1}}}",
        "call ::= " + " | ".join(f"{n.replace('_', '-')}-call" for n in names),
    ]
    lines += [f"{n.replace('_', '-')}-call ::= {_CALL_RULES[n]}" for n in names]
    if "move" in names:
        lines.append(f'moves ::= move-token (" " move-token){{0,{MAX_MOVES - 1}}}')
        lines.append(f"move-token ::= [{MOVE_LETTERS}] (\"'\" | \"2\")?")
    return "\n".join(lines) + "\n"


def react_pattern(tools: Sequence[str]) -> re.Pattern[str]:
    """A compiled regex that fully matches exactly the replies :func:`react_grammar` allows.

    Use ``react_pattern(tools).fullmatch(reply)``; group ``call`` is the action call.
    """
    names = _check_tools(tools)
    token = f"[{MOVE_LETTERS}]['2]?"
    calls = [_CALL_REGEX[n].format(tok=token, more=MAX_MOVES - 1) if n == "move" else _CALL_REGEX[n]
             for n in names]
    thought = f"[^\\n\\t ][^\\n]{{0,{MAX_THOUGHT_CHARS - 1}}}"
    return re.compile(f"Thought: {thought}\nAction: (?P<call>{'|'.join(calls)})")
