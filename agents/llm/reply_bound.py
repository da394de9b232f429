"""How long a model's reply may be before it is cut: a bound derived from the request's token limit.

A server is asked for at most ``max_tokens`` tokens, but nothing makes it comply: a broken or hostile endpoint
may answer an 8-token request with megabytes.  Every reply passes through here before anything keeps it (the
reply's text, the request log, the episode record, the next request's history), so one such reply costs a bounded
record: without the bound, 4 MB replies to the policy agent's 8-token requests stored a 240 MB record for one
20-step episode (each reply three times: the step's reply, the reply in the model log, and the logged body).

The bound is generous on purpose, so that no reply a server could honestly send is ever cut:
:data:`CHARS_PER_TOKEN` characters per requested token, and never under :data:`MIN_REPLY_CHARS`.  The longest
token of SmolLM2's vocabulary (the project's local model; 49,152 tokens, read from its GGUF) is 81 characters
(a newline and 80 spaces; ``#`` x 80 is next), its mean 6.8; 128 per token leaves room for vocabularies with
longer tokens.  A reply over the bound keeps its first characters (a ReAct action or a move comes first) and the
call's :class:`~.reply.ModelReply` says so in ``reply_cut``; so do the log entry and the step's record.
"""

from __future__ import annotations

from typing import Any

__all__ = ["CHARS_PER_TOKEN", "MIN_REPLY_CHARS", "reply_char_limit", "cut_reply", "cut_strings"]

CHARS_PER_TOKEN = 128
"""Characters a requested token may bring (see the module docstring: SmolLM2's longest token is 81)."""
MIN_REPLY_CHARS = 4096
"""The bound of a request with few tokens (the policy's 8 would allow 1,024): room for any honest short reply."""
CUT_MARK = "…[cut]"
"""What ends a string of a logged body that was cut (the reply's own text is cut without a mark: it is parsed)."""


def reply_char_limit(max_tokens: int) -> int:
    """The most characters kept of a reply to a request for ``max_tokens`` tokens."""
    return max(MIN_REPLY_CHARS, CHARS_PER_TOKEN * max(0, int(max_tokens)))


def cut_reply(text: str, max_tokens: int) -> tuple[str, str | None]:
    """``(text, None)`` when ``text`` is within :func:`reply_char_limit`, else its first characters up to the
    bound and the note that says what was cut (stored as ``reply_cut``)."""
    limit = reply_char_limit(max_tokens)
    if len(text) <= limit:
        return text, None
    note = (f"the reply had {len(text):,} characters, more than the {limit:,} kept of a reply to a request for "
            f"{max_tokens} token(s); the rest was cut")
    return text[:limit], note


def cut_strings(value: Any, limit: int) -> Any:
    """A JSON-like ``value`` (a logged response body, an error message) with every string longer than ``limit`` cut
    to ``limit`` characters and :data:`CUT_MARK`, and every array or object of more than ``limit`` entries cut to its
    first ``limit`` (an array ends with :data:`CUT_MARK`; an object gains the key :data:`CUT_MARK`, its value the
    number of entries): a body of a wrong shape is as bounded as a reply (containers are copied)."""
    if isinstance(value, str):
        return value if len(value) <= limit else value[:limit] + CUT_MARK
    if isinstance(value, dict):
        items = list(value.items())
        kept = {k: cut_strings(v, limit) for k, v in items[:limit]}
        if len(items) > limit:
            kept[CUT_MARK] = len(items)
        return kept
    if isinstance(value, list):
        return [cut_strings(v, limit) for v in value[:limit]] + ([CUT_MARK] if len(value) > limit else [])
    return value
