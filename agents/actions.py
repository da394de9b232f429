"""Parsing the action a model wrote: ``Action: move("R U R' U'")`` and its variants.

Models format tool calls loosely (backticks, single quotes, missing quotes,
``Action:`` in bold, text after the call).  The parser accepts those and
rejects anything else with a message that tells the model what is expected.

A reply is model output, so it may be anything: the parser takes time linear in
its length whatever it holds (no pattern is ever searched across the whole reply,
and each pattern is one a regex engine matches without backtracking over the same
text twice), and an action longer than :data:`MAX_ACTION_CHARS` is a parse error
that says so instead of being read.
"""

from __future__ import annotations

import re

from cubebench.engine.errors import excerpt

MAX_ACTION_CHARS = 10_000
"""The longest action the parser reads (the text after ``Action:``): some 3,000 moves, far more
than any plan, while a runaway reply is refused with a clear message at once."""
_HEAD_WINDOW = 256
"""How far into a line its ``Action:`` label may end (after bold markers, bullets, quotes)."""

_ACTION_HEAD = re.compile(r"[^\w\n]*action[^\w\n]*:", re.IGNORECASE)
# A tool name: ASCII identifier characters only, and only where no identifier character precedes
# it, so each name is read once (no restart inside a long word).
_CALL_HEAD = re.compile(r"(?<![A-Za-z0-9_])([A-Za-z_][A-Za-z0-9_]*)\s*\(")
_QUOTED = re.compile(r"""^\s*(?:[A-Za-z_]\w*\s*=\s*)?(["'“”‘’])(.*)\1\s*$|^\s*(?:[A-Za-z_]\w*\s*=\s*)?(["“])(.*)["”]\s*$""", re.DOTALL)

FORMAT_HINT = 'Reply with a line "Thought: ..." and then a line "Action: <tool>(<argument>)", e.g. Action: move("R U R\' U\'")'


class ActionParseError(ValueError):
    """The reply holds no well-formed action; the message is shown to the model."""


def _excerpt(text: str) -> str:
    return excerpt(text, 80)


def _last_action(reply: str) -> str | None:
    """The text of the last ``Action:`` line, or of the first non-blank line after it when the label
    ends its line; None when there is none.  One pass over the lines, from the end."""
    lines = reply.split("\n")
    next_filled: str | None = None  # the nearest non-blank line below the one being looked at
    for line in reversed(lines):
        head = _ACTION_HEAD.match(line, 0, _HEAD_WINDOW)
        if head is not None:
            rest = line[head.end():]
            if rest.strip():
                return rest
            if next_filled is not None:
                return next_filled
        if line.strip():
            next_filled = line
    return None


def _call(text: str) -> tuple[str, str] | None:
    """(tool name, raw argument text) of the first ``name(`` in ``text`` with a ``)`` after it; the
    argument text runs to the last ``)``."""
    head = _CALL_HEAD.search(text)
    if head is None:
        return None
    close = text.rfind(")")
    if close < head.end():  # no ")" after the first call: none after any later one either
        return None
    return head.group(1), text[head.end():close]


def parse_action(reply: str) -> tuple[str, list[str]]:
    """``(tool name, arguments)`` of the last ``Action:`` line of a reply."""
    line = _last_action(reply or "")
    if line is None:
        raise ActionParseError(f"no 'Action:' line found in your reply. {FORMAT_HINT}")
    text = line.strip().strip("*").strip()
    if len(text) > MAX_ACTION_CHARS:
        raise ActionParseError(f"your action is {len(text)} characters long; at most {MAX_ACTION_CHARS} are read: "
                               f"{_excerpt(text)}. {FORMAT_HINT}")
    call = _call(text)
    if call is None:
        raise ActionParseError(f"could not read the action {_excerpt(text)} as a tool call. {FORMAT_HINT}")
    name, raw = call[0], call[1].strip()
    if not raw:
        return name, []
    quoted = _QUOTED.match(raw)
    if quoted:
        return name, [quoted.group(2) if quoted.group(2) is not None else quoted.group(4)]
    if any(ch in raw for ch in "\"'(),"):
        if "'" in raw and not raw.startswith(("'", '"')):
            return name, [raw]  # unquoted moves containing primes: move(R U R')
        raise ActionParseError(f"could not read the argument {_excerpt(raw)}: pass one quoted string. {FORMAT_HINT}")
    return name, [raw]
