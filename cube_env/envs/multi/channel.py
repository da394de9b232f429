"""The bounded text channel between seats, and the one action form every talking seat uses.

Seats of the cooperative envs act with a ``Dict`` action: ``{"action": k, "message": text}``.
``k`` picks what the seat does this step: 0 waits, 1 says ``message``, 2 and up are the
seat's own actions (face turns or view rotations, see the env's ``action_names(seat)``);
``message`` is read only when ``k`` is 1.  The message part is a ``gymnasium.spaces.Text``
over :data:`CHARSET`, from 0 to ``max_message_chars`` characters, so ``action_space.sample()``
always gives a legal action.  Shorthands: a bare int is ``{"action": k}`` and a bare str is
"say this".

The channel is bounded twice, as the env's config says: a message longer than
``max_message_chars`` is cut to that length, characters outside :data:`CHARSET` become ``?``
(so no model output can crash the env or smuggle bytes), and each seat may send at most
``max_messages`` messages per episode; a message past that is refused (not delivered) and the
sender's ``info["refused"]`` says why.  An empty message is not sent and costs nothing.
"""

from __future__ import annotations

import operator
import string
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gymnasium import spaces

CHARSET = string.ascii_letters + string.digits + string.punctuation + " \n"
"""What a message may contain: printable ASCII, space and newline."""
WAIT, SAY = 0, 1
"""The first two choices of every talking seat's action: do nothing, send the message."""
SEAT_ACTIONS = ("wait", "say")
_ALLOWED = frozenset(CHARSET)


def positive_int(value: Any, what: str, minimum: int = 1) -> int:
    """``value`` as an int >= ``minimum``; a ``ValueError`` naming ``what`` otherwise (bools and floats too)."""
    if isinstance(value, bool) or not isinstance(value, int):
        try:
            value = operator.index(value)
        except TypeError:
            raise ValueError(f"{what} must be an int >= {minimum}, got {value!r}") from None
    if value < minimum:
        raise ValueError(f"{what} must be an int >= {minimum}, got {value}")
    return int(value)


def message_space(max_message_chars: int) -> spaces.Text:
    """The message part of an action (and of an observation): 0..``max_message_chars`` characters of :data:`CHARSET`."""
    return spaces.Text(max_length=max_message_chars, min_length=0, charset=CHARSET)


def talking_action_space(n_own: int, max_message_chars: int) -> spaces.Dict:
    """``{"action": Discrete(2 + n_own), "message": Text}``: wait, say, then the seat's ``n_own`` actions."""
    return spaces.Dict({"action": spaces.Discrete(2 + n_own), "message": message_space(max_message_chars)})


def parse_action(action: Any, n: int) -> tuple[int, str]:
    """``(choice, message)`` of a talking seat's action with ``n`` choices in all.

    Accepts the ``Dict`` form, a bare int (the choice) or a bare str (say it). Anything else,
    or a choice out of range, is a programming error: ``ValueError`` naming the accepted forms.
    """
    if isinstance(action, str):
        return SAY, action
    if isinstance(action, Mapping):
        unknown = set(action) - {"action", "message"}
        if unknown or "action" not in action:
            raise ValueError(f"a seat's action is {{'action': int, 'message': str}}; got keys {sorted(map(str, action))}")
        message = action.get("message", "")
        if not isinstance(message, str):
            raise ValueError(f"a message must be a str, got {type(message).__name__}")
        return _choice(action["action"], n), message
    return _choice(action, n), ""


def _choice(value: Any, n: int) -> int:
    try:
        k = operator.index(value)
    except TypeError:
        raise ValueError(f"a seat's action is an int in 0..{n - 1}, a str (say it) or "
                         f"{{'action': int, 'message': str}}; got {type(value).__name__}") from None
    if not 0 <= k < n:
        raise ValueError(f"action {k} is not in 0..{n - 1}")
    return k


def clean(text: str, max_chars: int) -> tuple[str, bool]:
    """``text`` cut to ``max_chars`` with characters outside :data:`CHARSET` as ``?``; and whether it changed."""
    cut = text[:max_chars]
    safe = "".join(ch if ch in _ALLOWED else "?" for ch in cut)
    return safe, safe != text


@dataclass(frozen=True)
class Message:
    """One delivered message: the cycle it was sent in, its sender and its (cleaned) text."""

    cycle: int
    sender: str
    text: str


class Channel:
    """The messages of one episode between ``seats``: each message goes to every other seat."""

    def __init__(self, seats: tuple[str, ...], max_messages: int, max_message_chars: int) -> None:
        self.seats = seats
        self.max_messages = positive_int(max_messages, "max_messages", 0)
        self.max_message_chars = positive_int(max_message_chars, "max_message_chars")
        self.log: list[Message] = []

    def reset(self) -> None:
        self.log = []

    def sent_by(self, seat: str) -> int:
        return sum(m.sender == seat for m in self.log)

    def left(self, seat: str) -> int:
        """Messages ``seat`` may still send this episode."""
        return self.max_messages - self.sent_by(seat)

    def received_by(self, seat: str) -> int:
        return sum(m.sender != seat for m in self.log)

    def latest_for(self, seat: str) -> str:
        """The last message any other seat sent (``""`` before the first)."""
        return next((m.text for m in reversed(self.log) if m.sender != seat), "")

    def send(self, sender: str, text: str, cycle: int) -> dict[str, Any]:
        """Deliver ``text`` from ``sender``; returns what ``sender``'s info should say about it (may be empty)."""
        if not text:
            return {"message_note": "an empty message is not sent"}
        if self.left(sender) <= 0:
            return {"refused": f"the message budget ({self.max_messages} messages) is used up"}
        safe, changed = clean(text, self.max_message_chars)
        self.log.append(Message(cycle, sender, safe))
        if changed:
            return {"message_note": f"message cut to {self.max_message_chars} characters of printable ASCII"}
        return {}




def talking_spaces(channel: Channel, max_moves: int, max_cycles: int) -> dict[str, spaces.Space]:
    """The observation entries every talking seat has: the last message heard, how many, and the budgets left."""
    return {
        "message": message_space(channel.max_message_chars),
        "received": spaces.Discrete(channel.max_messages * (len(channel.seats) - 1) + 1),
        "moves_left": spaces.Discrete(max_moves + 1),
        "messages_left": spaces.Discrete(channel.max_messages + 1),
        "cycles_left": spaces.Discrete(max_cycles + 1),
    }


def talking_entries(channel: Channel, seat: str, moves_left: int, cycles_left: int) -> dict[str, Any]:
    """The values of :func:`talking_spaces` for ``seat`` now: nothing in them is computed from the cube."""
    return {
        "message": channel.latest_for(seat),
        "received": channel.received_by(seat),
        "moves_left": moves_left,
        "messages_left": channel.left(seat),
        "cycles_left": cycles_left,
    }


__all__ = ["CHARSET", "WAIT", "SAY", "SEAT_ACTIONS", "Channel", "Message", "message_space", "talking_action_space",
           "talking_spaces", "talking_entries", "parse_action", "clean", "positive_int"]
