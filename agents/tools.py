"""The tools an agent acts through, and the language-action layer behind them.

One :class:`Toolbox` is bound to one env for one episode.  Its tools are the
only way an agent changes the cube; each call is recorded (name, arguments,
result, env actions executed, reward) so the episode record shows exactly
what happened.  Which tools exist in a tier and tool setting, their
parameters and the texts models read about them are the registry's
(:mod:`.tool_registry`); this module implements them:

- ``basic``: ``move(seq)``, ``rotate(views)`` (Face and Vertex tiers only),
  ``observe()``, ``done()``;
- ``standard``: basic + ``solve(facelets)``, the two-phase solver run on
  exactly the 54-character string the agent passes;
- ``ideal``: basic + ``solve_current()``, the solver run on the true state.
  Under partial views it sees only what the agent has seen: it answers once
  every face has been shown to the agent since the last face turn, and
  otherwise says how many faces are still unseen.  A face is shown by an
  observation (:meth:`Toolbox.show`, at the start of each interaction step),
  not by a rotation inside a step: ``rotate("x z2")`` passes views the agent
  never sees.  A face turn changes faces out of view, so they must be shown
  again.

Each tool is the method ``_tool_<name>`` taking the registry's parameters
(``tests/agents/test_tool_registry.py`` holds them to it).

Every call is bounded on the host, whatever calls it (a parsed reply, code in
the sandbox): a string argument longer than :data:`MAX_ARG_CHARS` is refused
before it is parsed, and the env's move and rotation budgets
(:class:`~cubebench.envs.CubeEnv`) stop a sequence at the first action past
them, so one call never runs more than a budget's worth of actions.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any, Callable, cast

import gymnasium as gym

from cubebench.engine import CubeInputError
from cubebench.engine.facelets import CENTRES, FACES
from cubebench.engine.moves import MOVE_NAMES
from cubebench.engine.notation import parse
from cubebench.envs.cube_env import CubeEnv
from cubebench.solver.twophase import solve_twophase
from cubebench.tiers import tier_spec

from .tool_registry import REGISTRY, ROTATION_TOKENS, tool_docs, tools_for

__all__ = ["Toolbox", "ToolCall", "ToolError", "ToolCallError", "tools_for", "tool_docs"]

"""Positions (faces of the held cube) each tier shows (the tier registry's)."""
MAX_ARG_CHARS = 4096
"""Longest string argument a tool takes: a move sequence of a thousand turns, far past any budget."""
_ROTATION_NAMES = ROTATION_TOKENS.tokens()
"""What ``rotate`` takes: the registry's rotation tokens (x x' x2 y ...)."""

# Slice and wide turns as face turns plus a rotation (identities checked in tests/engine/test_engine.py).
_EXPANSIONS = {
    "M": "R L' x'", "E": "U D' y'", "S": "F' B z",
    "r": "L x", "l": "R x'", "u": "D y", "d": "U y'", "f": "B z", "b": "F z'",
}


class ToolError(Exception):
    """A tool was called with bad arguments, or is not available; the message is for the agent."""


class ToolCallError(ToolError):
    """The call itself was malformed: an unknown tool or arguments the tool does not take.

    A :class:`ToolError`, so code catching those catches it too; agents that read calls out
    of a model's reply (ReAct) record it as the reply's parse error.
    """


@dataclass
class ToolCall:
    """One recorded tool call."""

    name: str
    args: list[Any]
    result: str = ""
    error: bool = False
    actions: list[str] = field(default_factory=list)
    reward: float = 0.0
    solved: bool = False


class Toolbox:
    """The tools of one episode, bound to ``env`` (a CubeBench env, any wrappers)."""

    def __init__(self, env: gym.Env, tier: str, setting: str, obs: Any, info: dict[str, Any]) -> None:
        self.env = env
        self.core = cast(CubeEnv, env.unwrapped)  # the CubeBench env under the wrappers
        self.tier = tier
        self.setting = setting
        self.names = tools_for(tier, setting)
        self.obs, self.info = obs, info
        self.calls: list[ToolCall] = []
        self.finished = False
        self.terminated = False
        self.truncated = False
        self.moves = 0
        self.rotations = 0
        self.total_reward = 0.0
        self._seen: set[int] = self._visible()

    # --- dispatch ----------------------------------------------------------
    def call(self, name: str, args: list[Any] | tuple[Any, ...] = ()) -> str:
        """Run a tool by name; bad calls come back as an ``Error: ...`` text, never raise."""
        try:
            return self.invoke(name, list(args))
        except ToolError as err:
            return f"Error: {err}"

    def invoke(self, name: str, args: list[Any], kwargs: dict[str, Any] | None = None) -> str:
        """Run a tool by name and record it; raises :class:`ToolError` on bad calls.

        ``kwargs`` may name the documented parameters (``move(seq="R U")``, as code does).
        """
        record = ToolCall(name=name, args=list(args) + ([dict(kwargs)] if kwargs else []))
        self.calls.append(record)
        try:
            if name not in self.names:
                raise ToolCallError(f"unknown tool {name!r}; available tools: {', '.join(self.names)}")
            _check_sizes(name, args, kwargs)
            fn: Callable[..., str] = getattr(self, "_tool_" + name)
            try:
                bound = inspect.signature(fn).bind(record, *args, **(kwargs or {}))
            except TypeError:  # only a call that does not fit the signature; a TypeError inside is a bug
                raise ToolCallError(f"bad arguments for {name}: {_usage(name, args, kwargs)}") from None
            record.args = list(bound.args[1:])
            record.result = fn(*bound.args)
        except ToolError as err:
            record.error, record.result = True, f"Error: {err}"
            raise
        return record.result

    def show(self) -> None:
        """The agent is shown the current observation: the faces in view count as seen (for ``solve_current``)."""
        self._seen |= self._visible()

    def take_calls(self) -> list[ToolCall]:
        """The calls recorded since the last take (one interaction step's worth)."""
        calls, self.calls = self.calls, []
        return calls

    @property
    def over(self) -> bool:
        """True once the episode can take no more actions."""
        return self.finished or self.terminated or self.truncated

    # --- the tools -----------------------------------------------------------
    def _tool_move(self, record: ToolCall, seq: str) -> str:
        groups = self.expand(seq)
        if not groups:
            raise ToolError("move() needs at least one move, e.g. move(\"R U R' U'\")")
        return self._execute(record, groups)

    def _tool_rotate(self, record: ToolCall, views: str) -> str:
        tokens = views.split() if isinstance(views, str) else []
        if not tokens or any(t not in _ROTATION_NAMES for t in tokens):
            raise ToolError(f"rotate() takes whole-cube rotations {' '.join(_ROTATION_NAMES)} "
                            f"(e.g. \"y\" or \"x z2\"), got {views!r}")
        return self._execute(record, self.expand(views))

    def _tool_observe(self, record: ToolCall) -> str:
        return "Here is the current observation."

    def _tool_done(self, record: ToolCall) -> str:
        self.finished = True
        return "You declared the episode done."

    def _tool_solve(self, record: ToolCall, facelets: str) -> str:
        if not isinstance(facelets, str):
            raise ToolError(f"solve() takes the cube as one 54-character string of {FACES} letters")
        try:
            solution = solve_twophase(facelets)
        except CubeInputError as err:
            raise ToolError(f"invalid cube: {err}") from None
        return solution or "The cube is already solved."

    def _tool_solve_current(self, record: ToolCall) -> str:
        unseen = 6 - len(self._seen)
        if unseen:
            raise ToolError(
                f"the solver can only read faces you have looked at since the last face turn; "
                f"{unseen} face(s) are still unseen: rotate the cube to look at them first"
            )
        return solve_twophase(self.core.state) or "The cube is already solved."

    # --- language-action layer -------------------------------------------------
    def expand(self, seq: str) -> list[list[int]]:
        """Env action indices of each move of a sequence (a slice or wide move is a face turn or two
        and a rotation); raises ToolError before anything runs."""
        if not isinstance(seq, str):
            raise ToolError(f"moves must be given as a string like \"R U R' U'\", got {type(seq).__name__}")
        try:
            moves = parse(seq)
        except CubeInputError as err:
            raise ToolError(str(err)) from None
        return [self._actions_for(MOVE_NAMES[m]) for m in moves]

    def _actions_for(self, name: str) -> list[int]:
        names = self.core.action_names
        if name[0] in _EXPANSIONS:
            base = _EXPANSIONS[name[0]]
            if not self.core.view_actions:
                raise ToolError(f"{name}: slice and wide turns need view rotations, which this tier does not have")
            parts = base.split() if len(name) == 1 else parse_inverse_or_double(base, name[1:])
            return [a for part in parts for a in self._actions_for(part)]
        if name in names:
            return [names.index(name)]
        if name.endswith("2") and name[0] in names:
            return [names.index(name[0])] * 2
        if name[0] in "xyz":
            raise ToolError(f"{name}: this tier has no view rotations")
        raise ToolError(f"{name} is not an action of this env")

    def _execute(self, record: ToolCall, groups: list[list[int]]) -> str:
        """Run each move's actions in turn; a move that does not fit in what is left of a budget
        is refused whole (no slice move half done), and so is everything after it."""
        names = self.core.action_names
        done: list[str] = []
        refused = ""
        for group in groups:
            refused = self._refusal(group)
            if self.over or refused:
                break
            for a in group:
                obs, reward, self.terminated, self.truncated, info = self.env.step(a)
                if "refused" in info:  # past a budget the env knows and the toolbox did not foresee
                    refused = str(info["refused"])
                    break
                self.obs, self.info = obs, info
                record.reward += float(reward)
                done.append(names[a])
                self._count(a)
            if refused or self.over:
                break
        record.actions, record.solved = done, bool(self.terminated)
        self.total_reward += record.reward
        return self._describe(done, sum(map(len, groups)), record.reward, refused)

    def _refusal(self, group: list[int]) -> str:
        """Why a move's actions would not all fit in the budgets left ("" when they do)."""
        turns = sum(a < self.core.n_turns for a in group)
        views = len(group) - turns
        for need, kind, unit in ((turns, "moves", self.core.move_unit), (views, "rotations", "view rotations")):
            left = self.info.get(f"{kind}_left", need)
            if need > left:
                return self.core.budget_spent(kind) if left == 0 else \
                    f"the next move needs {need} {unit} and only {left} {'is' if left == 1 else 'are'} left"
        return ""

    def _count(self, action: int) -> None:
        if action < self.core.n_turns:
            self.moves += 1
            self._seen = set()  # the turn changed stickers out of view: seen again only when shown again
        else:
            self.rotations += 1

    def _describe(self, done: list[str], asked: int, reward: float, refused: str) -> str:
        text = f"Executed {' '.join(done)} ({len(done)} action{'s' if len(done) != 1 else ''})." if done \
            else "Executed nothing."
        if self.terminated:
            reason = "the cube is solved"
        elif refused or self.truncated:
            budget_spent = self.info.get("moves_left") == 0
            reason = refused or (self.core.budget_spent("moves") if budget_spent else "the step limit is reached")
        else:
            reason = ""
        if len(done) < asked:
            text += f" Stopped after {len(done)} of {asked}: {reason or 'the episode is over'}."
        elif reason:
            text += f" {reason[0].upper()}{reason[1:]}."
        if self.truncated and not self.terminated:
            text += " The episode is over."
        if "reward_kind" in self.info:
            text += f" Reward {reward:+g}."
        return text + self._budget_left()

    def _budget_left(self) -> str:
        """What is left of the budgets, as the agent should see it after each action tool."""
        left = [f"{self.info['moves_left']} {self.core.move_unit}"] if "moves_left" in self.info else []
        if "rotations_left" in self.info:
            left.append(f"{self.info['rotations_left']} view rotations")
        return f" Left: {' and '.join(left)}." if left else ""

    def _visible(self) -> set[int]:
        state = self.core.state
        return {int(state[CENTRES[FACES.index(f)]]) // 9 for f in tier_spec(self.tier).visible_faces}


def _check_sizes(name: str, args: list[Any], kwargs: dict[str, Any] | None) -> None:
    """Refuse an over-long string argument before anything parses it."""
    for value in [*args, *(kwargs or {}).values()]:
        if isinstance(value, str) and len(value) > MAX_ARG_CHARS:
            raise ToolError(f"{name}() argument too long: {len(value)} characters (at most {MAX_ARG_CHARS})")


def _usage(name: str, args: list[Any], kwargs: dict[str, Any] | None) -> str:
    """What a tool takes, in the model's terms (not the Python method's ``TypeError``)."""
    spec = REGISTRY[name]
    n = len(spec.params)
    taken = f"{n} argument{'s' if n != 1 else ''}" if n else "no arguments"
    given = f"{len(args)}" + (f" and keyword(s) {', '.join(sorted(kwargs))}" if kwargs else "")
    return f"{spec.call} takes {taken}, got {given}"


def parse_inverse_or_double(base: str, suffix: str) -> list[str]:
    """Face-turn parts of ``base`` inverted (``'``) or doubled (``2``)."""
    parts = base.split()
    if suffix == "2":
        return [p[0] + "2" for p in parts]
    return [p[0] if p.endswith("'") else p + "'" for p in reversed(parts)]
