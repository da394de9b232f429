"""Parsing the action a model wrote: ``Action: move("R U R' U'")`` and its variants.

Models format tool calls loosely (backticks, single quotes, missing quotes,
``Action:`` in bold, text after the call).  The parser accepts those and
rejects anything else with a message that tells the model what is expected.
"""

from __future__ import annotations

import re

_ACTION_LINE = re.compile(r"^\W*action\W*:\s*(.+)$", re.IGNORECASE | re.MULTILINE)
_CALL = re.compile(r"`*\s*([A-Za-z_]\w*)\s*\((.*)\)", re.DOTALL)
_QUOTED = re.compile(r"""^\s*(?:[A-Za-z_]\w*\s*=\s*)?(["'“”‘’])(.*)\1\s*$|^\s*(?:[A-Za-z_]\w*\s*=\s*)?(["“])(.*)["”]\s*$""", re.DOTALL)

FORMAT_HINT = 'Reply with a line "Thought: ..." and then a line "Action: <tool>(<argument>)", e.g. Action: move("R U R\' U\'")'


class ActionParseError(ValueError):
    """The reply holds no well-formed action; the message is shown to the model."""


def parse_action(reply: str) -> tuple[str, list[str]]:
    """``(tool name, arguments)`` of the last ``Action:`` line of a reply."""
    lines = _ACTION_LINE.findall(reply or "")
    if not lines:
        raise ActionParseError(f"no 'Action:' line found in your reply. {FORMAT_HINT}")
    text = lines[-1].strip().strip("*").strip()
    match = _CALL.search(text)
    if match is None:
        raise ActionParseError(f"could not read the action {text[:80]!r} as a tool call. {FORMAT_HINT}")
    name, raw = match.group(1), match.group(2).strip()
    if not raw:
        return name, []
    quoted = _QUOTED.match(raw)
    if quoted:
        return name, [quoted.group(2) if quoted.group(2) is not None else quoted.group(4)]
    if any(ch in raw for ch in "\"'(),"):
        if "'" in raw and not raw.startswith(("'", '"')):
            return name, [raw]  # unquoted moves containing primes: move(R U R')
        raise ActionParseError(f"could not read the argument {raw[:80]!r}: pass one quoted string. {FORMAT_HINT}")
    return name, [raw]
