"""Scripted baselines: random, blind walk, reward prober, greedy one-step lookahead, and the solver agent.

They act through the same :class:`~cubebench.agents.tools.Toolbox` as every agent.
``BlindAgent`` sees nothing at all (only that the episode ended): it is the
floor the per-depth move budget holds to 5 % at every depth >= 2, and with no
move cap (the paper's budget) it sweeps every start within 4 turns.
``ProberAgent`` reads nothing but the rewards the tools report: it is what a
dense reward is worth to an agent that cannot see the cube (Exp 2).  The
greedy and solver agents are *privileged calibration baselines*: they read
the true state from ``tools.core`` as a perfect perceiver would (a model never
can), so their pass rates bound what the tools allow:

- ``GreedyAgent`` turns the face that most increases the stickers in place
  (the sticker reward's potential), whatever reward the env gives: its plan
  never depends on the reward setting.
- ``SolverAgent`` explores first under partial views (rotating until every
  face has been in view, as the ideal solver demands), then gets a solution
  the way its tool setting allows — ``basic``: plans it itself (two-phase on
  the state it perceived); ``standard``: calls ``solve`` with the perceived
  54-character string; ``ideal``: calls ``solve_current()`` — and plays it in
  one ``move`` call.
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from cubebench.budgets import blind_target, blind_walk, sweep
from cubebench.engine import TABLE, kernels
from cubebench.engine.moves import MOVE_INDEX
from cubebench.engine.notation import invert_sequence
from cubebench.solver.twophase import solve_twophase
from cubebench.tiers import tier_spec

from .base import Agent, Task, Turn
from .tools import MAX_ARG_CHARS, Toolbox


"""Rotations (one per step) that bring every face into view once (the tier registry's ``looks``)."""


class RandomAgent:
    """Takes one uniformly random env action per step (rotations included where the tier has them)."""

    def __init__(self, seed: int | None = None) -> None:
        self.name = "random"
        self.rng = np.random.default_rng(seed)
        self.actions: tuple[str, ...] = ()

    def reset(self, task: Task) -> None:
        self.actions = task.action_names

    def act(self, observation, tools: Toolbox) -> Turn:
        action = self.actions[int(self.rng.integers(len(self.actions)))]
        tool = "rotate" if action[0] in "xyz" else "move"
        tools.call(tool, [action])
        return Turn(action=f'{tool}("{action}")')


class BlindAgent:
    """The strongest blind strategy we know: it never reads an observation or a reward, only its budgets.

    With a move budget (the ``strict`` rules) it takes the shallowest depth >= 2 that the budget is given at
    (:func:`~cubebench.budgets.blind_target`) and plays, in one ``move`` call, a seeded walk of the whole budget that
    passes through as many of the generator's likeliest positions of that depth as it can
    (:func:`~cubebench.budgets.blind_walk`): :func:`~cubebench.budgets.move_budget` holds what that solves to at most
    5 % at every depth >= 2.  With no move cap (the ``paper`` rules) it plays the sweep
    (:func:`~cubebench.budgets.sweep`), every position within 4 turns of solved, as move calls of at most
    :data:`~cubebench.agents.tools.MAX_ARG_CHARS` characters, one per interaction step (:func:`blind_calls`).  The env
    stops it when the cube is solved.  ``cubebench report`` prints what this agent solves of each cell as the blind
    floor (the runner's ``floors``).
    """

    def __init__(self, seed: int | None = None) -> None:
        self.name = "blind"
        self.rng = np.random.default_rng(seed)
        self.calls: list[str] = []

    def reset(self, task: Task) -> None:
        self.calls = blind_calls(task.metric, task.max_moves, task.max_steps, self.rng)

    def act(self, observation, tools: Toolbox) -> Turn:
        if not self.calls:
            tools.call("done")
            return Turn(action="done()")
        seq = self.calls.pop(0)
        tools.call("move", [seq])
        return Turn(action=f"move({len(seq.split())} turns)" if len(seq) > 200 else f'move("{seq}")')


def blind_calls(metric: str, max_moves: int | None, max_steps: int, rng: np.random.Generator) -> list[str]:
    """The ``move`` arguments :class:`BlindAgent` plays, one per interaction step: with a move budget, its whole
    walk in one call; with none, the sweep cut into calls of at most :data:`~cubebench.agents.tools.MAX_ARG_CHARS`
    characters, as many as ``max_steps`` allows."""
    if max_moves is not None:
        return [" ".join(blind_walk(metric, blind_target(max_moves, metric), max_moves, rng))]  # type: ignore[arg-type]
    return move_calls(sweep(metric))[:max_steps]


def move_calls(turns: Sequence[str], limit: int = MAX_ARG_CHARS) -> list[str]:
    """``turns`` as the fewest ``move`` arguments of at most ``limit`` characters each (turns joined by spaces), in
    order: what one tool call can carry."""
    calls: list[str] = []
    current: list[str] = []
    size = 0
    for turn in turns:
        if current and size + 1 + len(turn) > limit:
            calls.append(" ".join(current))
            current, size = [], 0
        size += len(turn) + (1 if current else 0)
        current.append(turn)
    if current:
        calls.append(" ".join(current))
    return calls


class ProberAgent:
    """Follows the reward by trial and error, blind: each step it tries turns in a seeded order,
    keeps the first whose reward is positive (or that solves) and undoes each other one.

    It never reads the observation, so what it solves the reward alone found, within the
    episode's move budget.  Under the sparse reward it only finds one-move solutions; a
    step where no turn pays ends the episode with ``done()``.
    """

    def __init__(self, seed: int | None = None) -> None:
        self.name = "prober"
        self.rng = np.random.default_rng(seed)
        self.turns: tuple[str, ...] = ()

    def reset(self, task: Task) -> None:
        self.turns = tuple(a for a in task.action_names if a[0] not in "xyz")

    def act(self, observation, tools: Toolbox) -> Turn:
        tried = 0
        for i in self.rng.permutation(len(self.turns)):
            turn = self.turns[int(i)]
            tools.call("move", [turn])
            tried += 1
            last = tools.calls[-1]
            if last.solved or last.reward > 0 or tools.over:
                return Turn(action=f"probed {tried} turn(s); kept {turn}")
            tools.call("move", [invert_sequence(turn)])
            if tools.over:
                return Turn(action=f"probed {tried} turn(s); the budget ran out")
        tools.call("done")
        return Turn(action=f"probed {tried} turn(s); none paid: done()")


class GreedyAgent:
    """One-step lookahead on stickers in place, never undoing its previous turn.

    It scores moves on its own sticker count, not on the env's reward: a baseline whose
    choices are the same under every reward setting (and that never pays for the
    heuristic and oracle rewards' solver calls to look ahead).
    """

    def __init__(self, seed: int | None = None) -> None:
        self.name = "greedy"
        self.rng = np.random.default_rng(seed)
        self.last: str | None = None
        self.turns: tuple[str, ...] = ()

    def reset(self, task: Task) -> None:
        self.turns = tuple(a for a in task.action_names if a[0] not in "xyz")
        self.last = None

    def act(self, observation, tools: Toolbox) -> Turn:
        state = tools.core.state
        scores = []
        for name in self.turns:
            undo = self.last is not None and name[0] == self.last[0] and name != self.last and "2" not in name
            nxt = kernels.apply_move(state, TABLE, MOVE_INDEX[name])
            scores.append(-np.inf if undo else kernels.stickers_in_place(nxt) + (1e6 if kernels.is_solved(nxt) else 0))
        best = np.flatnonzero(np.asarray(scores) == max(scores))
        choice = self.turns[int(self.rng.choice(best))]
        self.last = choice
        tools.call("move", [choice])
        return Turn(action=f'move("{choice}")')


class SolverAgent:
    """A perfect user of the setting's tools: explore, get a solution, play it."""

    def __init__(self, seed: int | None = None) -> None:
        self.name = "solver"
        self.plan: list[str] = []
        self.setting = "basic"

    def reset(self, task: Task) -> None:
        self.plan = list(tier_spec(task.tier).looks)
        self.setting = task.tool_setting

    def act(self, observation, tools: Toolbox) -> Turn:
        if self.plan:
            view = self.plan.pop(0)
            tools.call("rotate", [view])
            return Turn(action=f'rotate("{view}")')
        if self.setting == "ideal":
            solution = tools.call("solve_current")
            action = "solve_current()"
        elif self.setting == "standard":
            solution = tools.call("solve", [tools.core.facelets])
            action = 'solve("<perceived state>")'
        else:
            solution = solve_twophase(tools.core.state)
            action = "plan"
        if solution.startswith("Error") or not solution or solution.startswith("The cube"):
            tools.call("done")
            return Turn(action=action + "; done()", error=None if not solution.startswith("Error") else solution)
        tools.call("move", [solution])
        return Turn(action=f'{action}; move("{solution}")')


SCRIPTED_AGENTS: dict[str, Callable[..., Agent]] = {
    "random": RandomAgent, "blind": BlindAgent, "prober": ProberAgent, "greedy": GreedyAgent, "solver": SolverAgent}
