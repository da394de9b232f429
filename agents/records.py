"""Episode records: everything needed to replay what an agent saw and did.

Text in a record comes from a model or from the code it wrote, so it may hold anything Python's
``str`` can, lone surrogates included (``print(chr(0xd800))``; a JSON reply with ``"\\ud800"``),
which UTF-8 cannot encode.  The record's plain form (:meth:`EpisodeRecord.to_dict`, what the result
store, the worker backends, export and the viewer use) passes every string through
:func:`safe_text`: each lone surrogate becomes the six characters of its escape, e.g. ``\\ud800``,
so a stored record always encodes as UTF-8 and shows what was sent.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import io
import types
import typing
from dataclasses import MISSING, asdict, dataclass, field, fields, is_dataclass
from typing import Any, Callable

import numpy as np

from .llm.messages import safe_text
from .tools import ToolCall

STATUSES = ("solved", "failed", "error")
"""The statuses an episode ends with."""


class RecordError(ValueError):
    """A record's plain form (:meth:`EpisodeRecord.to_dict`) is malformed: a field missing, unknown or
    of the wrong type, or an unknown status."""


class NewerForm(RecordError):
    """A plain form holds a field (or a status) this version does not know: a newer cubebench wrote it.  Told apart
    from damage, so such a record is never called damaged nor replaced."""



def safe_strings(value: Any) -> Any:
    """``value`` (JSON-like: dicts, lists, tuples, strings, scalars) with :func:`safe_text` applied to
    every string, dict keys included (containers are copied)."""
    if isinstance(value, str):
        return safe_text(value)
    if isinstance(value, dict):
        return {safe_strings(k): safe_strings(v) for k, v in value.items()}
    if isinstance(value, list):
        return [safe_strings(v) for v in value]
    if isinstance(value, tuple):
        return tuple(safe_strings(v) for v in value)
    return value


def png_bytes(image: np.ndarray) -> bytes:
    """PNG encoding of an RGB uint8 image."""
    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(np.ascontiguousarray(image, dtype=np.uint8)).save(buf, format="PNG")
    return buf.getvalue()


@dataclass
class StepRecord:
    """One interaction step: the observation shown, the reply, the actions and their effects."""

    index: int
    observation_text: str
    observation_sha256: str
    observation_png_b64: str | None
    reply: str
    action: str
    tool_calls: list[ToolCall]
    moves: int
    reward: float
    input_tokens: int
    output_tokens: int
    cost_usd: float
    latency_s: float
    error: str | None
    model_log: list[dict[str, Any]] = field(default_factory=list)
    distance: int | None = None
    parse_error: str | None = None
    """The model's reply was malformed (see :attr:`cubebench.agents.base.Turn.parse_error`); ``error`` is
    kept for failures of the agent, its model client or the infrastructure."""
    reply_cut: str | None = None
    """The reply was longer than the request's token limit allows, and ``reply`` holds its first characters only
    (:mod:`cubebench.agents.llm.reply_bound`): what was cut, else ``None``."""


@dataclass
class EpisodeRecord:
    """A whole episode, with its configuration, its steps and its outcome.

    ``status`` is ``solved``, ``failed`` (budget used or done() without
    solving; malformed replies included: they are the model's failures) or
    ``error`` (the agent, its model client or the infrastructure kept
    failing, or a budget was spent; the steps recorded up to then are kept).
    ``errors`` counts steps with such a failure, ``parse_errors`` steps whose
    reply was malformed.
    """

    agent: str
    config: dict[str, Any]
    start_facelets: str
    steps: list[StepRecord] = field(default_factory=list)
    status: str = "failed"
    solved: bool = False
    n_steps: int = 0
    n_moves: int = 0
    n_rotations: int = 0
    total_reward: float = 0.0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    wall_s: float = 0.0
    end_facelets: str = ""
    distance_start: int | None = None
    distance_end: int | None = None
    errors: int = 0
    parse_errors: int = 0

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-serialisable form; every string is :func:`safe_text` (encodable as UTF-8)."""
        return safe_strings(asdict(self))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "EpisodeRecord":
        """The record of a :meth:`to_dict` form.

        The form is checked against the fields' types first (:func:`check_form`): a missing required
        field, an unknown field, a value of the wrong type or an unknown ``status`` raises
        :class:`RecordError` naming the field.
        """
        check_form(data, cls, "record")
        if data.get("status", "failed") not in STATUSES:
            raise NewerForm(f"record.status: {data['status']!r} is not one of {', '.join(STATUSES)}")
        steps = [
            StepRecord(**{**s, "tool_calls": [ToolCall(**c) for c in s["tool_calls"]]}) for s in data.get("steps", [])
        ]
        return cls(**{**data, "steps": steps})


def check_form(data: Any, cls: type, where: str) -> None:
    """Raise :class:`RecordError` (naming the place, ``where``) unless ``data``, as read from JSON, is
    the plain form of the dataclass ``cls``: an object with every required field, no unknown one, and
    values of the fields' annotated types (nested dataclasses, lists and ``X | None`` included; an
    ``int`` is a ``float``, a ``bool`` is not an ``int``; a type JSON has no form for is not checked)."""
    problem = _form_problem(data, cls)
    if problem is not None:
        raise (NewerForm if _UNKNOWN in problem else RecordError)(f"{where}{problem}")


_UNKNOWN = ": unknown field(s) "
"""How a form problem names fields the dataclass does not have (:class:`NewerForm` is told by it)."""
_Check = Callable[[Any], "str | None"]
"""A compiled check: ``None`` when the value fits, else the problem (a path suffix, ``: `` and why)."""


@functools.lru_cache(maxsize=None)
def _fields_of(cls: type) -> tuple[frozenset[str], tuple[tuple[str, bool, _Check], ...]]:
    hints = typing.get_type_hints(cls)
    table = tuple((f.name, f.default is MISSING and f.default_factory is MISSING, _checker(hints[f.name]))
                  for f in fields(cls))
    return frozenset(name for name, _, _ in table), table


def _form_problem(data: Any, cls: type) -> str | None:
    if not isinstance(data, dict):
        return f": expected an object, got {type(data).__name__}"
    names, table = _fields_of(cls)
    unknown = [str(k) for k in data if k not in names]
    if unknown:
        return f"{_UNKNOWN}{', '.join(sorted(unknown))}"
    for name, required, check in table:
        if name in data:
            problem = check(data[name])
            if problem is not None:
                return f".{name}{problem}"
        elif required:
            return f": the field {name} is missing"
    return None


_SCALARS: dict[Any, tuple[type, ...]] = {bool: (bool, np.bool_), int: (int, np.integer),
                                         float: (int, float, np.integer, np.floating), str: (str,)}
"""The values of each scalar type (NumPy's included: a record not yet through JSON may hold them)."""


@functools.lru_cache(maxsize=None)
def _checker(hint: Any) -> _Check:
    """The check of values of type ``hint`` (built once per type)."""
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        args = typing.get_args(hint)
        nullable = type(None) in args
        options = tuple(_checker(a) for a in args if a is not type(None))

        def union(value: Any) -> str | None:
            if value is None and nullable:
                return None
            if any(check(value) is None for check in options):
                return None
            return f": {type(value).__name__} is not {hint}"
        return union
    if origin in (list, tuple):  # a tuple is a list in JSON
        args = typing.get_args(hint)
        item = _checker(args[0]) if len(args) == 1 or (len(args) == 2 and args[1] is Ellipsis) else _checker(Any)

        def items(value: Any) -> str | None:
            if not isinstance(value, list):
                return f": expected a list, got {type(value).__name__}"
            for i, v in enumerate(value):
                problem = item(v)
                if problem is not None:
                    return f"[{i}]{problem}"
            return None
        return items
    if origin is dict or hint is dict:
        def mapping(value: Any) -> str | None:  # dict[str, Any]: the values are free-form
            if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
                return f": expected an object, got {type(value).__name__}"
            return None
        return mapping
    if isinstance(hint, type) and is_dataclass(hint):
        return functools.partial(_form_problem, cls=hint)
    if hint in _SCALARS:
        kinds = _SCALARS[hint]

        def scalar(value: Any) -> str | None:  # True is no int here, though bool subclasses int
            if isinstance(value, kinds) and (hint is bool or not isinstance(value, bool)):
                return None
            return f": expected {hint.__name__}, got {type(value).__name__}"
        return scalar
    return lambda value: None  # Any, or a type JSON has no form for


def observation_digest(text: str, image: np.ndarray | None, store_image: bool) -> tuple[str, str | None]:
    """SHA-256 of what was shown (text and image bytes) and the image as base64 PNG if stored."""
    h = hashlib.sha256(text.encode("utf-8", "surrogatepass"))  # any str, lone surrogates included
    png_b64 = None
    if image is not None:
        h.update(np.ascontiguousarray(image).tobytes())
        if store_image:
            png_b64 = base64.b64encode(png_bytes(image)).decode()
    return h.hexdigest(), png_b64
