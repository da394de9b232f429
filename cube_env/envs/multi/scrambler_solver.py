"""Scrambler versus solver (``CubeBench-ScramblerSolver-v0``): a zero-sum game on one cube, and its curriculum.

The rules are :class:`ScramblerSolverEnv`'s docstring, from which docs/environments.md is made
(``python docs/make_environments.py``); :class:`SelfPlayCurriculum` keeps the positions the games reach.
"""

from __future__ import annotations

import operator
import warnings
from dataclasses import dataclass
from typing import Any, ClassVar

import gymnasium
import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv, ParallelEnv
from pettingzoo.utils.conversions import parallel_to_aec, parallel_to_aec_wrapper

from ..games import SCRAMBLER_SOLVER, Game
from ...engine.facelets import SOLVED
from ...engine.metric import Metric, parse_metric
from ...engine.state import canonical
from ...generators import Instance, NoInstanceSetError
from ...render.net import render_net
from ...solver.oracle import oracle
from .channel import positive_int
from .panels import RENDER_MODES, Panel, render_panels, render_text, checked_render_mode
from .table import SharedCube
from .views import SeatView

GAME = SCRAMBLER_SOLVER
"""This env's row of the games table."""
NAME = GAME.env_id
SCRAMBLER, SOLVER = SEATS = GAME.seats
PASS = 0
SCRAMBLE, SOLVE = 0, 1
"""The phases, as the observations' ``phase`` says them."""


@dataclass(frozen=True)
class Position:
    """A scrambled position self-play reached: its state, the scrambler's moves and its exact distance."""

    state: np.ndarray
    scramble: str
    distance: int
    metric: Metric


class SelfPlayCurriculum:
    """The positions scramblers reached, by exact distance: a start-state generator (``Generator``).

    ``curriculum(d, metric, rng)`` draws one of the recorded positions at exactly distance ``d``
    in ``metric`` (an :class:`~cubebench.generators.Instance` with ``distance`` set), so any env
    built with ``generator=curriculum`` trains on what self-play found hard.  Positions are
    kept once each (up to orientation).
    """

    def __init__(self) -> None:
        self._positions: dict[tuple[Metric, int], list[Position]] = {}
        self._seen: set[bytes] = set()

    def record(self, state: np.ndarray, scramble: str, distance: int, metric: Metric) -> None:
        key = parse_metric(metric).encode() + canonical(state).tobytes()
        if key in self._seen:
            return
        self._seen.add(key)
        self._positions.setdefault((metric, distance), []).append(
            Position(np.array(state, dtype=np.uint8), scramble, int(distance), metric))

    def counts(self, metric: Metric | str = "quarter") -> dict[int, int]:
        """How many positions are recorded at each distance in ``metric``."""
        metric = parse_metric(metric)
        return {d: len(p) for (m, d), p in sorted(self._positions.items()) if m == metric}

    def hardest(self, metric: Metric | str = "quarter") -> int:
        """The largest distance recorded in ``metric`` (-1 if none)."""
        return max(self.counts(metric), default=-1)

    def __len__(self) -> int:
        return len(self._seen)

    def __call__(self, depth: int, metric: str, rng: np.random.Generator) -> Instance:
        found = self._positions.get((parse_metric(metric), depth), [])
        if not found:
            raise NoInstanceSetError(f"self-play has found no {metric}-turn position at distance {depth} yet "
                                     f"(found: {self.counts(metric) or 'none'})")
        pos = found[int(rng.integers(len(found)))]
        return Instance(pos.state.copy(), pos.scramble, depth, pos.metric, pos.distance)


class ScramblerSolverEnv(ParallelEnv[str, dict[str, Any], Any]):
    """Scrambler versus solver: a zero-sum game on one cube, and the self-play curriculum it feeds (Parallel).

    ## Description

    Two phases on a solved cube. **Scramble**: `scrambler_0` makes exactly `scramble_moves` (k) face
    turns, seeing the whole cube (Symbolic); `solver_0` sees a blank view meanwhile (zeros, or `?`
    characters), so it cannot watch the scramble and undo it. **Solve**: `solver_0` plays from the
    position reached, through its `tier`, with `max_moves` face turns (and `max_rotations` view
    rotations on Face and Vertex).

    Made by `cubebench.envs.multi.scrambler_solver.parallel_env()` (this class), `env()` (AEC: the
    scrambler, then the solver) or `raw_env()`, or by `make_multi_env("CubeBench-ScramblerSolver-v0", parallel=True)`.
    Agents: `scrambler_0`, `solver_0`.

    Every scrambled position goes, with its exact distance, to `env.curriculum`, a `SelfPlayCurriculum`
    (or the one passed as `curriculum=`, to share it): a start-state generator, so
    `generator=env.curriculum` makes any env start from the positions self-play found at exactly its
    `depth` (`NoInstanceSetError` for a distance not found yet).

    ## Action Space

    `Discrete`: the scrambler 0 passes, then the metric's face turns; the solver 0 passes, then the face
    turns, then (Face and Vertex) the view rotations. Turns are named by centre colour. Both seats act
    every step (one step is one cycle); the seat whose phase it is not must pass, and an action its
    `action_mask` forbids (the scrambler may not pass) is ignored with `info["refused"]`.

    ## Observation Space

    A `Dict`: `view` (the scrambler's Symbolic one-hot; the solver's `tier` and `form`, blank while the
    scrambler plays), `phase` (0 scramble, 1 solve), `moves_left`, `action_mask` (int8, 1 where allowed)
    and, for a solver on Face or Vertex, `rotations_left`.

    ## Rewards

    Zero-sum, paid when the game is decided. With `d` the exact optimal distance of the scrambled
    position (`cubebench.solver.oracle`), the scrambler gets `d / k` plus 1 if the solver fails or minus
    1 if it solves, and the solver the negation; 0 to both at every other step.

    ## Starting State

    Always the solved cube: reset `options` are ignored with a warning (the scrambler makes the start).

    ## Episode End

    1. Termination (decided): the solver solves, its move budget is spent, or the scramble ends solved
       (`d = 0`: the solver wins at once).
    2. Truncation: `max_cycles` cycles; in the solve phase it counts as the solver's failure (rewards
       paid), during the scramble it is no game (0 to both).

    Each seat's `info` holds `cycle`, `phase`, `moves` (the solver's), `is_success` and `refused` where it
    applies; at the end both get `outcome` (`solved`, `failed` or `unfinished`) and the scrambler also
    `distance`. The solver's `info` never holds the state.

    ## Arguments

    | argument | default |
    |---|---|
    | `tier`, `form` | the solver's view: `symbolic`, the tier's first form |
    | `scramble_moves`, `metric` | 8, `quarter` |
    | `max_moves`, `max_rotations`, `max_cycles` | 40, 40, 100 |
    | `image_size`, `render_mode` | as in the observer-actor env |
    | `curriculum` | a new `SelfPlayCurriculum` |
    """

    GAME: ClassVar[Game] = GAME
    """The games-table row of this env."""

    metadata = {"name": "cubebench_scrambler_solver_v0", "render_modes": list(RENDER_MODES), "render_fps": 4,
                "is_parallelizable": True}

    def __init__(
        self,
        tier: str = "symbolic",
        form: str = "",
        *,
        scramble_moves: int = 8,
        metric: Metric | str = "quarter",
        max_moves: int = GAME.budgets["max_moves"],
        max_rotations: int = GAME.budgets["max_rotations"],
        max_cycles: int = GAME.budgets["max_cycles"],
        image_size: int = 224,
        render_mode: str | None = None,
        curriculum: SelfPlayCurriculum | None = None,
    ) -> None:
        self.render_mode = checked_render_mode(render_mode)
        self.scramble_moves = positive_int(scramble_moves, "scramble_moves")
        self.max_moves = positive_int(max_moves, "max_moves")
        self.max_rotations = positive_int(max_rotations, "max_rotations", 0)
        self.max_cycles = positive_int(max_cycles, "max_cycles")
        self.views = {SCRAMBLER: SeatView("symbolic", "", image_size), SOLVER: SeatView(tier, form, image_size)}
        self.cube = SharedCube(0, metric, self.views[SOLVER].partial, None, None)
        self.curriculum = curriculum if curriculum is not None else SelfPlayCurriculum()
        self.possible_agents = list(SEATS)
        self.agents: list[str] = []
        self._names = {SCRAMBLER: ("pass",) + self.cube.turn_names,
                       SOLVER: ("pass",) + self.cube.turn_names + self.cube.view_names}
        self._action_spaces = {s: spaces.Discrete(len(self._names[s])) for s in SEATS}
        self._observation_spaces = {s: self._observation_space(s) for s in SEATS}
        self.state_space = spaces.Box(0, 5, shape=(54,), dtype=np.uint8)
        self.cycle, self.phase, self.distance = 0, SCRAMBLE, -1
        self._scramble: list[str] = []
        self._last = {s: "" for s in SEATS}

    def _observation_space(self, seat: str) -> spaces.Dict:
        entries: dict[str, spaces.Space] = {
            "view": self.views[seat].space,
            "phase": spaces.Discrete(2),
            "moves_left": spaces.Discrete(max(self.scramble_moves, self.max_moves) + 1),
            "action_mask": spaces.Box(0, 1, shape=(len(self._names[seat]),), dtype=np.int8),
        }
        if seat == SOLVER and self.views[SOLVER].partial:
            entries["rotations_left"] = spaces.Discrete(self.max_rotations + 1)
        return spaces.Dict(entries)

    # --- the seats' spaces and rules -----------------------------------------
    def observation_space(self, agent: str) -> spaces.Space:
        return self._observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self._action_spaces[agent]

    def action_names(self, agent: str) -> tuple[str, ...]:
        """What each action of ``agent`` is: ``pass``, then its turns (and the solver's view rotations)."""
        return self._names[agent]

    def seat_view(self, agent: str) -> SeatView:
        return self.views[agent]

    # --- PettingZoo API --------------------------------------------------------
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[dict, dict]:
        """A new game on a solved cube (``options`` are not read: the scrambler makes the start)."""
        if options:
            warnings.warn(f"reset options {sorted(map(str, options))} are not read by this env: the scrambler "
                          "makes the start", stacklevel=2)
        self.cube.restart(SOLVED, None, None, seed=seed)
        self.agents = list(SEATS)
        self.cycle, self.phase, self.distance = 0, SCRAMBLE, -1
        self._scramble = []
        self._last = {s: "" for s in SEATS}
        return {s: self._observe(s) for s in SEATS}, {s: self._info(s) for s in SEATS}

    def step(self, actions: dict[str, Any]) -> tuple[dict, dict, dict, dict, dict]:
        if not self.agents:
            raise RuntimeError("the game is over: call reset()")
        notes = {s: self._act(s, actions.get(s, PASS)) for s in SEATS}
        self.cycle += 1
        scrambler_reward, decided = self._score()
        over = not decided and self.cycle >= self.max_cycles
        if over and self.phase == SOLVE:
            scrambler_reward = self.distance / self.scramble_moves + 1.0  # out of time: the solver failed
        done = decided or over
        observations = {s: self._observe(s) for s in SEATS}
        infos = {s: {**self._info(s, end=done), **notes[s]} for s in SEATS}
        rewards = {SCRAMBLER: scrambler_reward, SOLVER: 0.0 - scrambler_reward}
        if done:
            self.agents = []
        return observations, rewards, {s: decided for s in SEATS}, {s: over for s in SEATS}, infos

    def _act(self, seat: str, action: Any) -> dict[str, Any]:
        """Carry out ``seat``'s action if its mask allows it; what its ``info`` should say."""
        k = _index(action, len(self._names[seat]))
        self._last[seat] = self._names[seat][k]
        if not self._mask(seat)[k]:
            if k == PASS:
                return {"refused": f"the scrambler may not pass: it makes exactly {self.scramble_moves} turns"}
            phase = "scrambler" if self.phase == SCRAMBLE else "solver"
            return {"refused": f"{self._names[seat][k]!r} is ignored: it is the {phase}'s phase (pass)"}
        if k == PASS:
            return {}
        outcome = self.cube.act(self._names[seat][k])
        if seat == SCRAMBLER:
            self._scramble.append(self._names[seat][k])
        return {"refused": outcome.refused} if outcome.refused else {}

    def _score(self) -> tuple[float, bool]:
        """(the scrambler's reward this step, whether the game is decided); starts the solve phase when due."""
        if self.phase == SCRAMBLE:
            if len(self._scramble) < self.scramble_moves:
                return 0.0, False
            self._start_solving()
            if self.distance == 0:
                return -1.0, True  # scrambled back to solved: the solver wins at once
            return 0.0, False
        share = self.distance / self.scramble_moves
        if self.cube.solved:
            return share - 1.0, True
        if self.cube.spent():
            return share + 1.0, True
        return 0.0, False

    def _start_solving(self) -> None:
        state = self.cube.core.state
        self.distance = oracle(self.cube.metric).distance(state)
        self.curriculum.record(state, " ".join(self._scramble), self.distance, self.cube.metric)
        self.cube.restart(state, self.max_moves, self.max_rotations)
        self.phase = SOLVE

    def _mask(self, seat: str) -> np.ndarray:
        mask = np.zeros(len(self._names[seat]), dtype=np.int8)
        on_move = (seat == SCRAMBLER) == (self.phase == SCRAMBLE)
        if on_move:
            mask[1:] = 1
            mask[PASS] = seat == SOLVER  # the scrambler makes exactly k turns; the solver may wait
        else:
            mask[PASS] = 1
        return mask

    def _observe(self, seat: str) -> dict[str, Any]:
        view = self.views[seat]
        sees = seat == SCRAMBLER or self.phase == SOLVE
        left = self.scramble_moves - len(self._scramble) if seat == SCRAMBLER else self.max_moves - self._solver_moves()
        obs = {"view": view.observe(self.cube.colours) if sees else view.hidden(), "phase": self.phase,
               "moves_left": left, "action_mask": self._mask(seat)}
        if seat == SOLVER and view.partial:
            obs["rotations_left"] = self.max_rotations - (self.cube.core.rotations if self.phase == SOLVE else 0)
        return obs

    def _solver_moves(self) -> int:
        return self.cube.moves if self.phase == SOLVE else 0

    def _info(self, seat: str, end: bool = False) -> dict[str, Any]:
        """Bookkeeping; at the end the outcome (and, for the scrambler, the distance). Never the state."""
        info: dict[str, Any] = {"cycle": self.cycle, "phase": self.phase, "moves": self._solver_moves(),
                                "is_success": self.phase == SOLVE and self.cube.solved}
        if end:
            info["outcome"] = self._outcome()
            if seat == SCRAMBLER:
                info["distance"] = self.distance
        return info

    def _outcome(self) -> str:
        if self.phase == SCRAMBLE:
            return "unfinished"
        return "solved" if self.cube.solved else "failed"

    def state(self) -> np.ndarray:
        """The cube's 54 colour indices: for centralised training and runners, never given to a seat."""
        return self.cube.colours.astype(np.uint8)

    def render(self) -> str | np.ndarray | None:
        if self.render_mode is None:
            gymnasium.logger.warn("render() was called without a render_mode; pass render_mode='rgb_array' or 'ansi'")
            return None
        truth = self.cube.reference_colours
        if self.render_mode == "ansi":
            return render_text(truth, [self._status(), *(f"{s} last: {self._last[s] or '-'}" for s in SEATS)])
        solver = self.views[SOLVER]
        seen = solver.image(self.cube.colours[solver.gather]) if self.phase == SOLVE else None
        panels = [Panel(f"{SCRAMBLER}: symbolic", render_net(truth, solver.size),
                        [f"last: {self._last[SCRAMBLER] or '-'}", f"scramble: {' '.join(self._scramble) or '-'}"]),
                  Panel(f"{SOLVER}: {solver.tier} ({solver.form})", seen,
                        [f"last: {self._last[SOLVER] or '-'}", self._status()])]
        return render_panels(panels, solver.size)

    def _status(self) -> str:
        phase = "scramble" if self.phase == SCRAMBLE else f"solve (distance {self.distance})"
        return (f"cycle {self.cycle}/{self.max_cycles}, {phase}, scramble moves {len(self._scramble)}/"
                f"{self.scramble_moves}, solver moves {self._solver_moves()}/{self.max_moves}")

    def close(self) -> None:
        """Nothing to release; safe to call twice."""


def _index(action: Any, n: int) -> int:
    """A Discrete action as an int in 0..n-1; a ``ValueError`` otherwise."""
    try:
        k = operator.index(action)
    except TypeError:
        raise ValueError(f"an action is an int in 0..{n - 1}, got {type(action).__name__}") from None
    if not 0 <= k < n:
        raise ValueError(f"action {k} is not in 0..{n - 1}")
    return k


def raw_env(**kwargs: Any) -> AECEnv:
    """The AEC form without PettingZoo's order-enforcing wrapper."""
    return parallel_to_aec_wrapper(ScramblerSolverEnv(**kwargs))


def parallel_env(**kwargs: Any) -> ScramblerSolverEnv:
    """The native Parallel env."""
    return ScramblerSolverEnv(**kwargs)


def env(**kwargs: Any) -> AECEnv:
    """The AEC form (PettingZoo's ``parallel_to_aec``): each cycle asks the scrambler, then the solver."""
    return parallel_to_aec(ScramblerSolverEnv(**kwargs))


__all__ = ["NAME", "SEATS", "SCRAMBLER", "SOLVER", "PASS", "SCRAMBLE", "SOLVE", "Position", "SelfPlayCurriculum",
           "ScramblerSolverEnv", "raw_env", "env", "parallel_env"]
