"""The one registry of the tools agents act through.

For each tool, :data:`REGISTRY` holds its name, its parameters with the pattern of what
each argument may be, the documented signature and sentence shown to models, and the tiers
and tool settings that expose it. Everything that names tools is generated from it:

- the tools of a tier and setting (:func:`tools_for`), which the :class:`~.tools.Toolbox`
  offers and the task lists;
- the tool list of both agents' prompts and of ``cubebench play`` (:func:`tool_docs`);
- the signatures and docstrings of the CodeAct stubs (:meth:`ToolSpec.python_signature`,
  :attr:`ToolSpec.summary`);
- the local model's GBNF grammar and its regex (:mod:`.llm.grammar`, from each argument's
  :class:`Tokens` or :class:`Letters` pattern).

It imports only the engine's face letters and the tier registry, so :mod:`.llm.grammar`
reads it without reaching up to the toolbox (and the engine's solver) above it.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass

from cubebench.engine.facelets import FACES
from cubebench.tiers import tier_spec

__all__ = ["TOOL_SETTINGS", "MAX_TOKENS", "Tokens", "Letters", "Param", "ToolSpec", "MOVES", "ROTATION_TOKENS",
           "FACELETS", "REGISTRY", "TOOL_NAMES", "tools_for", "tool_docs"]

TOOL_SETTINGS = ("basic", "standard", "ideal")
"""CubeBench's three diagnostic settings: no solver, a solver fed by the agent, a solver that reads the state."""

MAX_TOKENS = 40
"""The most tokens the grammar lets one move or rotation argument hold (keeps a small model from
rambling until ``max_tokens``); the toolbox itself takes any number."""


@dataclass(frozen=True)
class Tokens:
    """An argument of 1..``max_count`` tokens separated by single spaces: each token one letter
    of ``letters`` followed by at most one of ``suffixes`` (e.g. ``"R U2 F'"``)."""

    letters: str
    suffixes: tuple[str, ...] = ("'", "2")
    max_count: int = MAX_TOKENS

    def tokens(self) -> tuple[str, ...]:
        """Every token the pattern allows."""
        return tuple(letter + suffix for letter in self.letters for suffix in ("",) + self.suffixes)

    def gbnf(self, rule: str) -> tuple[str, list[str]]:
        """The argument as a GBNF expression, and the rules (named from ``rule``) it refers to."""
        token = f"[{self.letters}]"
        if self.suffixes:
            token += " (" + " | ".join(f'"{s}"' for s in self.suffixes) + ")?"
        return rule, [f'{rule} ::= {rule}-token (" " {rule}-token){{0,{self.max_count - 1}}}',
                      f"{rule}-token ::= {token}"]

    def regex(self) -> str:
        """The argument as a Python regex (no groups)."""
        token = f"[{re.escape(self.letters)}]"
        if self.suffixes:
            token += f"(?:{'|'.join(re.escape(s) for s in self.suffixes)})?"
        return f"{token}(?: {token}){{0,{self.max_count - 1}}}"


@dataclass(frozen=True)
class Letters:
    """An argument of exactly ``length`` letters of ``letters`` (e.g. a 54-letter cube)."""

    letters: str
    length: int

    def gbnf(self, rule: str) -> tuple[str, list[str]]:
        """The argument as a GBNF expression (it needs no rules of its own)."""
        return f"[{self.letters}]{{{self.length}}}", []

    def regex(self) -> str:
        """The argument as a Python regex (no groups)."""
        return f"[{re.escape(self.letters)}]{{{self.length}}}"


@dataclass(frozen=True)
class Param:
    """One parameter of a tool: a string whose canonical form is ``pattern``."""

    name: str
    pattern: Tokens | Letters


@dataclass(frozen=True)
class ToolSpec:
    """One tool: what models are told about it, what its arguments look like, who gets it."""

    name: str
    params: tuple[Param, ...]
    summary: str
    """What the tool does, as models read it after the signature."""
    settings: tuple[str, ...] = TOOL_SETTINGS
    """Tool settings that expose it."""
    partial_only: bool = False
    """Whether only a partial tier (one that shows part of the cube: :attr:`~cubebench.tiers.TierSpec.partial`)
    exposes it; otherwise every tier does."""
    returns: str = ""
    """Return type shown in the documented signature (``"str"`` for the solvers), or nothing."""

    @property
    def call(self) -> str:
        """``solve(facelets: str)``: the name and parameters, as error messages show them."""
        return f"{self.name}({', '.join(f'{p.name}: str' for p in self.params)})"

    @property
    def signature(self) -> str:
        """``move(seq: str)``, ``solve(facelets: str) -> str``: the documented signature."""
        return self.call + (f" -> {self.returns}" if self.returns else "")

    @property
    def doc(self) -> str:
        """The line models are shown: signature, then what the tool does."""
        return f"{self.signature} - {self.summary}"

    def python_signature(self) -> inspect.Signature:
        """:attr:`signature` as an :class:`inspect.Signature` (for the CodeAct stubs)."""
        params = [inspect.Parameter(p.name, inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=str)
                  for p in self.params]
        return inspect.Signature(params, return_annotation=str if self.returns else inspect.Signature.empty)

    def exposed(self, tier: str, setting: str) -> bool:
        """Whether a tier and tool setting offer this tool."""
        return setting in self.settings and (not self.partial_only or tier_spec(tier).partial)


MOVES = Tokens(FACES + "xyzMES" + FACES.lower())
"""Canonical move notation: face turns, whole-cube rotations, slices, wide turns, each with
``'`` or ``2`` (the engine's parser also takes ``Rw``, ``’``, ``2'`` and no spaces)."""
ROTATION_TOKENS = Tokens("xyz")
"""Whole-cube rotations ``x x' x2 y y' y2 z z' z2``, one or several."""
FACELETS = Letters(FACES, 54)
"""A cube as 54 facelet letters in URFDLB order."""

REGISTRY: dict[str, ToolSpec] = {spec.name: spec for spec in (
    ToolSpec("move", (Param("seq", MOVES),),
             'apply face turns in Singmaster notation, e.g. move("R U R\' U\'")'),
    ToolSpec("rotate", (Param("views", ROTATION_TOKENS),),
             "turn the whole cube to change your view: x, x', y, y', z, z' (e.g. rotate(\"y\"))",
             partial_only=True),
    ToolSpec("observe", (), "look at the cube again"),
    ToolSpec("done", (), "end the episode (when you believe the cube is solved)"),
    ToolSpec("solve", (Param("facelets", FACELETS),),
             f"a solver: give it the cube as 54 letters in {FACES} facelet order, it returns a solution",
             settings=("standard",), returns="str"),
    ToolSpec("solve_current", (),
             "a solver that reads the cube itself (every face must have been seen since your last face "
             "turn) and returns a solution",
             settings=("ideal",), returns="str"),
)}
"""Every tool, in the order prompts and the grammar list them."""

TOOL_NAMES = tuple(REGISTRY)
"""Every tool name, in registry order."""


def tools_for(tier: str, setting: str) -> tuple[str, ...]:
    """Names of the tools available in a tier and tool setting, in registry order."""
    if setting not in TOOL_SETTINGS:
        expected = f"{', '.join(TOOL_SETTINGS[:-1])} or {TOOL_SETTINGS[-1]}"
        raise ValueError(f"unknown tool setting {setting!r}; expected {expected}")
    return tuple(name for name, spec in REGISTRY.items() if spec.exposed(tier, setting))


def tool_docs(tools: tuple[str, ...]) -> str:
    """The prompt's list of ``tools``, one documented signature a line."""
    return "\n".join(f"- {REGISTRY[t].doc}" for t in tools)
