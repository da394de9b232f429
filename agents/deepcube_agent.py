"""The ``deepcube`` agent: search over a learned cost-to-go, one quarter turn per interaction step.

It reads the cube off the Symbolic observation (``observation.raw``: one-hot, indices or text; nothing a model
could not see), plans once with batched weighted A* (or beam search) over the network of
:mod:`.deepcube_net` (NumPy only: no torch at play time), then plays the plan one ``move`` per step, so every
solution counts against the same step and move budgets as every agent's.  A plan is never longer than the
steps and moves left.  When the state it reads differs from the one its plan expects, it plans again from
there.  When a search finds nothing within its budget the agent plays the turn whose child the network rates
closest to solved (never straight back), without searching again.

Each planning step's search (method, expansions, generated nodes, wall time, plan length) is in that step's
``model_log`` (the episode record keeps it) and in its action text.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from cubebench.engine.apply import apply_sequence
from cubebench.engine.facelets import CENTRES, FACES
from cubebench.engine.moves import QUARTER_ACTIONS
from cubebench.engine.state import from_facelets
from cubebench.tiers import tier_spec
from cubebench.wrappers.observations import symbolic_colours

from .base import Task, Turn
from .deepcube_net import ValueNet, load_value_net
from .deepcube_search import QUARTER_MOVES, SearchResult, beam_search, quarter_children, solved_mask, weighted_astar

SEARCH_METHODS = ("astar", "beam")
"""How the agent plans: batched weighted A* (DeepCubeA's) or beam search over the network."""


def state_from_colours(colours: np.ndarray) -> np.ndarray:
    """The engine state (centres in place) of a cube given as 54 colour indices, each colour renamed after the face
    its centre is on (so a cube held in any orientation reads as the network was trained)."""
    colours = np.asarray(colours, dtype=np.int64)
    face_of = np.empty(6, dtype=np.int64)
    face_of[colours[list(CENTRES)]] = np.arange(6)
    return from_facelets("".join(FACES[f] for f in face_of[colours]))


class DeepCubeAgent:
    """Plans with a :class:`~.deepcube_net.ValueNet` heuristic and plays the plan one quarter turn a step."""

    def __init__(self, net: ValueNet, *, method: str = "astar", weight: float = 0.8, batch: int = 300,
                 width: int = 1000, max_expansions: int = 60_000, max_seconds: float = 30.0,
                 name: str = "deepcube") -> None:
        if method not in SEARCH_METHODS:
            raise ValueError(f"unknown search method {method!r}; expected one of {SEARCH_METHODS}")
        self.net, self.method, self.weight, self.batch, self.width = net, method, float(weight), int(batch), int(width)
        self.max_expansions, self.max_seconds, self.name = int(max_expansions), float(max_seconds), name
        self.plan: list[int] = []
        self.expected: bytes | None = None
        self.searched_out = False
        self.moves_played = 0
        self.max_moves: int | None = None
        self.searches: list[dict[str, Any]] = []
        self.last_action: int | None = None

    def reset(self, task: Task) -> None:
        if "onehot" not in tier_spec(task.tier).forms:
            raise ValueError(f"the deepcube agent reads the Symbolic tier's state only, not the {task.tier!r} tier")
        missing = [a for a in QUARTER_ACTIONS if a not in task.action_names]
        if task.metric != "quarter" or missing:
            raise ValueError(f"the deepcube network counts quarter turns; this task is in the {task.metric} metric "
                             f"(actions {', '.join(task.action_names)})")
        self.plan, self.expected, self.searched_out, self.moves_played = [], None, False, 0
        self.max_moves, self.searches, self.last_action = task.max_moves, [], None

    def act(self, observation: Any, tools: Any) -> Turn:
        state = state_from_colours(symbolic_colours(observation.raw))
        log: list[dict[str, Any]] = []
        note = ""
        if state.tobytes() != self.expected:
            self.plan = []
        if not self.plan and not self.searched_out:
            result = self.search(state, self.moves_left(observation.steps_left))
            self.searches.append(result.to_dict())
            log.append({"search": result.to_dict()})
            note = (f"{result.method}: plan of {len(result.plan)} turn(s)" if result.plan is not None else
                    f"{result.method}: no plan ({result.stopped})") + (
                    f", {result.expansions} expansions, {result.seconds:.2f} s; ")
            if result.plan is None:
                self.searched_out = True
            self.plan = list(result.plan or [])
        if not self.plan and not self.searched_out:  # a solved cube: nothing to play
            tools.call("done")
            return Turn(action=note + "done()", model_log=log)
        action = self.plan.pop(0) if self.plan else self.greedy(state)
        name = QUARTER_ACTIONS[action]
        self.expected = apply_sequence(state, QUARTER_MOVES[[action]]).tobytes()
        self.moves_played += 1
        self.last_action = action
        tools.call("move", [name])
        return Turn(action=f'{note}move("{name}")', model_log=log)

    def moves_left(self, steps_left: int) -> int:
        """Turns a plan may use: the interaction steps left (one turn each) and the move budget left."""
        left = int(steps_left)
        if self.max_moves is not None:
            left = min(left, self.max_moves - self.moves_played)
        return max(left, 0)

    def search(self, state: np.ndarray, max_moves: int) -> SearchResult:
        if self.method == "beam":
            return beam_search(state, self.net, max_moves=max_moves, width=self.width,
                               max_expansions=self.max_expansions, max_seconds=self.max_seconds)
        return weighted_astar(state, self.net, max_moves=max_moves, weight=self.weight, batch=self.batch,
                              max_expansions=self.max_expansions, max_seconds=self.max_seconds)

    def greedy(self, state: np.ndarray) -> int:
        """The turn whose child the network rates closest to solved (a solved child first), never undoing the turn
        played before it (``QUARTER_ACTIONS`` pairs each turn with its inverse: index ^ 1)."""
        kids = quarter_children(state[None])
        values = self.net(kids).astype(np.float64)
        values[solved_mask(kids)] = -1.0
        if self.last_action is not None:
            values[self.last_action ^ 1] = np.inf
        return int(np.argmin(values))


def make_deepcube_agent(weights: str | Path | None = None, *, seed: int | None = None,
                        **options: Any) -> DeepCubeAgent:
    """The runner's ``deepcube`` agent (``deepcube:<weights.npz>`` for another network); ``seed`` is unused (the
    search is deterministic)."""
    return DeepCubeAgent(load_value_net(weights), **options)
