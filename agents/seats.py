"""Model seats: a chat model plays one seat of a multi-agent env (``cubebench.envs.multi``).

A :class:`ModelSeat` is a :class:`~cubebench.agents.teams.Seat` (``reset()``, ``act(observation,
info)``), so a team may mix model seats and scripted ones. Its prompt is ReAct-style, per role:
the system text says who the seat is, what it sees and what it may do (:func:`role_text`,
:func:`action_docs`); each turn the model is shown :func:`seat_observation` (the seat's own
observation in words, its view as text or as the image, and what its last action caused) and
replies ``Thought: ...`` then ``Action: ...``, where the action is ``wait``, ``say <text>``, or one
of the seat's own action names (``U``, ``R'``, ``y``, ``pass``...). A reply that does not parse
is the model's failure: the seat waits (or passes) that turn and is told why next turn.

What a seat is shown is built from its observation and the bookkeeping of its ``info`` only
(refusals, message notes, conflicts), so a seat that sees nothing of the cube (the actor) is told
nothing of it: messages are its only channel.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from ..engine.facelets import COLOUR_LETTERS, FACES
from ..render.text import net_text_grid
from .base import Observation, Task, Turn
from .chat import PROMPTS, ChatAgent
from .llm import ModelClient
from .llm.grammar import seat_grammar

__all__ = ["ModelSeat", "parse_seat_reply", "seat_observation", "role_text", "action_docs",
           "MAX_CONSECUTIVE_ERRORS"]

MAX_CONSECUTIVE_ERRORS = 3
"""Failed model calls in a row after which a seat gives up (it waits from then on): its game is an error."""
FACE_COLOURS = ", ".join(f"{face} the {colour} centre" for face, colour in zip(FACES, COLOUR_LETTERS))
_ACTION = re.compile(r"^\s*Action\s*:\s*(?P<act>.*)$", re.MULTILINE)
_SAY = re.compile(r"^say\b\s*:?\s*(?P<text>.*)$", re.DOTALL | re.IGNORECASE)

_TURNS = (f"Face turns are named by the colour of the face's centre, whichever way anyone holds the cube: "
          f"{FACE_COLOURS} (colour letters: W white, R red, G green, Y yellow, O orange, B blue). "
          "X turns that face a quarter clockwise as seen looking at it, X' counter-clockwise, X2 a half turn.")


def role_text(game: Any, seat: str) -> str:
    """Who ``seat`` is, what it sees (tier and form) and the game's budgets, for its system prompt."""
    roles = game.GAME.roles
    if seat not in roles:
        raise ValueError(f"no role text for seat {seat!r} in {game.GAME.name}; its seats: {sorted(roles)}")
    parts = [roles[seat], _TURNS]
    view = game.seat_view(seat)
    if view is not None:
        parts.append(_view_text(view, any(n[0] in "xyz" for n in game.action_names(seat))))
    parts.append(_budgets(game))
    return "\n\n".join(parts)


def _view_text(view: Any, rotates: bool) -> str:
    """How a seat's view is shown to it (``rotates``: it may turn the whole cube to look at other faces)."""
    where = view.spec.seat_note
    if rotates:
        where += ", and you may turn the whole cube in your hands to look at others"
    form = ("an image" if view.form == "image" else
            view.spec.text_note if view.form == "text" else
            "an unfolded net of colour letters")
    return f"You see {where}, shown as {form}."


def _budgets(game: Any) -> str:
    items = []
    for attr, what in (("max_moves", "face turns"), ("max_cycles", "turns each (cycles)")):
        if getattr(game, attr, None) is not None:
            items.append(f"{getattr(game, attr)} {what}")
    channel = getattr(game, "channel", None)
    if channel is not None:
        items.append(f"{channel.max_messages} messages per player of at most {channel.max_message_chars} "
                     "characters of printable ASCII")
    return "Budgets of the game: " + "; ".join(items) + "."


def action_docs(names: tuple[str, ...], talking: bool) -> str:
    """The actions a seat may reply with, one per line (its ``action_names``, wait/say written out)."""
    lines = []
    if talking:
        lines += ["wait  (do nothing this turn)",
                  "say <text>  (send <text> to your partner; it may span the following lines)"]
        own = names[2:]
    else:
        lines.append("pass  (do nothing this turn; the only action outside your phase)")
        own = names[1:]
    turns = [n for n in own if n[0] in FACES]
    rotations = [n for n in own if n[0] in "xyz"]
    if turns:
        lines.append("one face turn: " + " ".join(turns))
    if rotations:
        lines.append("one view rotation (turns the whole cube in your hands; it changes only what you see): "
                     + " ".join(rotations))
    return "\n".join(lines)


def parse_seat_reply(reply: str, names: tuple[str, ...], talking: bool) -> tuple[int, str]:
    """``(choice, message)`` of a seat's reply: the last ``Action:`` line, ``wait``/``pass``, ``say <text>``
    (the text runs to the end of the reply) or one of ``names``. ``ValueError`` says what is wrong."""
    found = list(_ACTION.finditer(reply))
    if not found:
        raise ValueError('no "Action:" line; reply with "Thought: ..." then "Action: <action>"')
    last = found[-1]
    act = (last.group("act") + reply[last.end():]).strip().strip("`").strip()
    first = act.splitlines()[0].strip() if act else ""
    said = _SAY.match(act)
    if said:
        if not talking:
            raise ValueError("this game has no channel: you cannot say anything")
        text = _unquote(said.group("text"))
        if not text:
            raise ValueError("say needs a text: Action: say <text>")
        return 1, text
    if first.lower() in ("wait", "pass"):
        return 0, ""
    choice = _unquote(first.rstrip("."))
    if choice in names[(2 if talking else 1):]:
        return names.index(choice), ""
    allowed = ("wait, say <text>, " if talking else "pass, ") + " ".join(names[(2 if talking else 1):])
    raise ValueError(f"unknown action {first[:40]!r}; allowed: {allowed}")


def _unquote(text: str) -> str:
    """``text`` stripped, without quotes around the whole of it (a prime, as in ``R'``, stays)."""
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        return text[1:-1].strip()
    return text


def seat_observation(game: Any, seat: str, observation: Any, info: dict[str, Any]) -> tuple[str, np.ndarray | None]:
    """The text (and image) a model seat is shown for ``observation`` and ``info``: its view, the last
    message it heard, its budgets and what its last action caused; nothing else of the game."""
    lines, image = [], None
    obs = observation if isinstance(observation, dict) else {"view": observation}
    view = game.seat_view(seat)
    if "view" in obs and view is not None:
        shown, image = _shown_view(view, obs["view"])
        lines.append(shown)
    if "phase" in obs:
        lines.append("Phase: " + ("scramble" if int(obs["phase"]) == 0 else "solve") + ".")
    if "message" in obs:
        heard = int(obs.get("received", 0))
        lines.append(quoted_message(str(obs["message"]), heard) if heard else "No message from your partner yet.")
    budgets = [(k, label) for k, label in (("moves_left", "face turns"), ("rotations_left", "view rotations"),
                                           ("messages_left", "messages you may send"),
                                           ("cycles_left", "turns")) if k in obs]
    if budgets:
        lines.append("Left: " + ", ".join(f"{label} {int(obs[k])}" for k, label in budgets) + ".")
    mask = obs.get("action_mask")
    if mask is not None:
        allowed = [n for n, ok in zip(game.action_names(seat), np.asarray(mask)) if ok]
        lines.append("Allowed now: " + " ".join(allowed) + ".")
    lines += _feedback(info)
    return "\n".join(lines), image


def quoted_message(message: str, heard: int) -> str:
    """The partner's message as its seat is shown it: every line of it behind ``> ``, so nothing a seat says
    (a line such as ``Left: face turns 99.``, a closing quote mark) can pass for the runner's own text."""
    return (f"Last message from your partner (message {heard} received), each of its lines after '> ':\n"
            + "\n".join(f"> {line}" for line in message.split("\n")))


def _shown_view(view: Any, value: Any) -> tuple[str, np.ndarray | None]:
    hidden = view.hidden()
    if (isinstance(value, str) and value == hidden) or (not isinstance(value, str)
                                                        and np.array_equal(np.asarray(value), hidden)):
        return "You cannot see the cube now.", None
    if view.form == "image":
        return "Your view of the cube is the image.", np.asarray(value)
    if view.form in ("onehot", "indices"):
        colours = np.asarray(value).argmax(axis=1) if view.form == "onehot" else np.asarray(value)
        return "Your view of the cube (an unfolded net):\n" + net_text_grid(colours), None
    return "Your view of the cube:\n" + str(value), None


def _feedback(info: dict[str, Any]) -> list[str]:
    """What the seat's last action caused, from its info's notes (never the state)."""
    out = []
    if info.get("refused"):
        out.append(f"Your last action was refused: {info['refused']}.")
    if info.get("message_note"):
        out.append(f"Note on your last message: {info['message_note']}.")
    if info.get("conflict"):
        out.append("Last step both cameras turned different faces: both turns were cancelled.")
    return out


class _SeatChat(ChatAgent):
    """The conversation of one model seat: role prompt, one model call per turn, reply parsed to an action."""

    stop = ["Observation:"]
    steps_line = False  # a seat's observation lists its budgets left itself

    def __init__(self, client: ModelClient, names: tuple[str, ...], talking: bool, role: str, *,
                 max_tokens: int, send_images: bool, grammar: str | None) -> None:
        super().__init__(client, name=f"seat:{getattr(client, 'model', 'model')}",
                         system_prompt=PROMPTS / "seat_system.txt",
                         examples=PROMPTS / "seat_examples.txt" if talking else None,
                         max_tokens=max_tokens, send_images=send_images)
        self.names, self.talking, self.role, self.grammar = names, talking, role, grammar
        self.choice, self.message = 0, ""

    def system_prompt(self, task: Task) -> str:
        self.extra = {"grammar": self.grammar} if self.grammar else {}
        return self.template.format(role=self.role, actions=action_docs(self.names, self.talking))

    def handle(self, reply: str, turn: Turn, tools: Any) -> None:
        try:
            self.choice, self.message = parse_seat_reply(reply, self.names, self.talking)
        except ValueError as err:
            self.choice, self.message = 0, ""
            turn.parse_error = str(err)
            return
        turn.action = f"say {self.message}" if self.choice == 1 and self.talking else self.names[self.choice]


def _only_choice(observation: Any) -> int | None:
    """The one action an observation's ``action_mask`` allows, if it allows exactly one."""
    mask = observation.get("action_mask") if isinstance(observation, dict) else None
    if mask is None:
        return None
    allowed = np.flatnonzero(np.asarray(mask))
    return int(allowed[0]) if len(allowed) == 1 else None


class ModelSeat:
    """A chat model playing ``seat`` of ``env`` (any form of the three multi-agent envs).

    ``act`` returns the env's action (``{"action": k, "message": text}`` where the seat talks, else
    ``k``) and keeps the turn in :attr:`last` and what the seat was shown in :attr:`seen` (the runner
    records both). A failed model call makes the seat wait that turn; after
    :data:`MAX_CONSECUTIVE_ERRORS` in a row, or once its token or cost budget is spent, :attr:`out`
    is true and it only waits (the runner ends the game as an error).
    """

    def __init__(self, client: ModelClient, env: Any, seat: str, *, max_tokens: int = 256,
                 send_images: bool = True, grammar: bool = False) -> None:
        game = env.unwrapped
        self.game, self.seat = game, seat
        self.names: tuple[str, ...] = tuple(game.action_names(seat))
        self.talking = getattr(game, "channel", None) is not None
        rules = None
        if grammar:
            rules = seat_grammar(self.names, self.talking, game.channel.max_message_chars if self.talking else 0)
        self.chat = _SeatChat(client, self.names, self.talking, role_text(game, seat), max_tokens=max_tokens,
                              send_images=send_images, grammar=rules)
        self.name = f"{self.chat.name}@{seat}"
        self.last: Turn | None = None
        self.seen: tuple[str, np.ndarray | None] = ("", None)
        self.out = False
        self._failures = 0

    def reset(self) -> None:
        self.chat.reset(Task(tier="", tool_setting="", tools=(), action_names=self.names, obs_format="",
                             reward="none", metric="", max_steps=0, description=""))
        self.last, self.seen, self.out, self._failures = None, ("", None), False, 0

    def act(self, observation: Any, info: dict[str, Any]) -> Any:
        self.seen = seat_observation(self.game, self.seat, observation, info)
        if self.out:
            self.last = Turn(error="the seat has stopped (model failures or budget spent)")
            return self._action(0, "")
        forced = _only_choice(observation)
        if forced is not None:  # nothing to decide (the other seat's phase): the model is not asked
            self.last = Turn(action=f"{self.names[forced]} (the only action allowed)")
            return self._action(forced, "")
        text, image = self.seen
        if self.last is not None and self.last.parse_error:
            text += f"\nYour last reply did not parse: {self.last.parse_error}"
        if self.last is not None and self.last.error:
            text += f"\nYour last turn failed: {self.last.error}"
        self.seen = (text, image)
        turn = self.chat.act(Observation(step=0, steps_left=0, text=text, image=image, raw=None), None)
        ok = turn.error is None and not turn.parse_error
        self._failures = self._failures + 1 if turn.error is not None else 0
        self.out = turn.stop or self._failures >= MAX_CONSECUTIVE_ERRORS
        self.last = turn
        return self._action(self.chat.choice, self.chat.message) if ok else self._action(0, "")

    def _action(self, choice: int, message: str) -> Any:
        return {"action": choice, "message": message} if self.talking else choice

    def close(self) -> None:
        """Release the model client."""
        self.chat.close()
