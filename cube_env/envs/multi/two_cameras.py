"""Two cameras (``CubeBench-TwoCameras-v0``): one cube held between two agents at opposite corners.

The rules are :class:`TwoCamerasEnv`'s docstring, from which docs/environments.md is made
(``python docs/make_environments.py``).
"""

from __future__ import annotations

from typing import Any, ClassVar

import gymnasium
import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv, ParallelEnv
from pettingzoo.utils.conversions import parallel_to_aec, parallel_to_aec_wrapper

from ..games import TWO_CAMERAS, Game
from ...engine.metric import Metric
from ...generators import Generator, Instance
from ...render.net import render_net
from .channel import (
    SAY, SEAT_ACTIONS, WAIT, Channel, parse_action, positive_int, talking_action_space, talking_entries, talking_spaces,
)
from .panels import RENDER_MODES, Panel, quote, render_panels, render_text, checked_render_mode
from .table import SharedCube
from .views import SeatView

GAME = TWO_CAMERAS
"""This env's row of the games table."""
NAME = GAME.env_id
SEATS = GAME.seats
VIEW_TIER = str(GAME.tier)
"""The tier both cameras see through (the games table's: vertex)."""
OPPOSITE_VIEW = "y x2"
"""The rotation through which ``camera_1`` sees the cube: it brings D, L, B to where U, F, R are seen."""


class TwoCamerasEnv(ParallelEnv[str, dict[str, Any], Any]):
    """Two cameras: two seats at opposite corners each see three faces; both turn and talk (simultaneous, Parallel).

    ## Description

    `camera_0` sees the Vertex View from the UFR corner (U, F, R); `camera_1` sees it from the opposite
    corner: the Vertex View of the cube turned by `y x2` (`OPPOSITE_VIEW`), with D where U was, L where
    F was and B where R was. Together they see all six faces, neither alone does. Neither can rotate
    the cube; both can turn faces and talk.

    Made by `cubebench.envs.multi.two_cameras.parallel_env()` (this class), `env()` (AEC: asks
    `camera_0`, then `camera_1`, and applies both choices together) or `raw_env()`, or by
    `make_multi_env("CubeBench-TwoCameras-v0", parallel=True)`. Agents: `camera_0`, `camera_1`.

    **Conflict rule.** If both seats turn in the same step and the turns differ, the turns cancel:
    neither is applied, no move is spent, and both seats' `info["conflict"]` is `True`. The same turn
    from both is applied once; one seat's turn is applied as it is. No seat has priority, so a team
    must agree who turns, which it can only do by talking.

    ## Action Space

    As in the observer-actor env: `Dict(action=Discrete(2 + n), message=Text(0, max_message_chars))`,
    0 waits, 1 says `message`, and from 2 on the metric's face turns, named by centre colour, so both
    seats name a turn alike. Messages sent in a step are heard in the next observation.

    ## Observation Space

    A `Dict`: `view` (the seat's Vertex View, `form="image"` or `"text"`), `message`, `received`,
    `moves_left`, `messages_left` and `cycles_left`.

    ## Rewards

    Shared: 1.0 to both seats in the step that solves the cube, else 0.

    ## Starting State

    As in the observer-actor env: a seeded draw from the shipped certified instances of `depth`, or an
    option.

    ## Episode End

    1. Termination: the cube is solved.
    2. Truncation: the team's move budget is spent without solving, or `max_cycles` steps have passed.

    Each seat's `info` holds `cycle`, `moves`, `depth`, `is_success`, `conflict` and, where they apply,
    `refused` and `message_note`.

    ## Arguments

    | argument | default |
    |---|---|
    | `form` | `image` |
    | `depth`, `metric` | 8, `quarter` |
    | `max_moves`, `max_cycles` | 40, 100 |
    | `max_messages`, `max_message_chars` | 8, 256 |
    | `image_size`, `render_mode`, `generator` | as in the observer-actor env |
    """

    GAME: ClassVar[Game] = GAME
    """The games-table row of this env."""

    metadata = {"name": "cubebench_two_cameras_v0", "render_modes": list(RENDER_MODES), "render_fps": 4,
                "is_parallelizable": True}

    def __init__(
        self,
        form: str = "image",
        *,
        depth: int = 8,
        metric: Metric | str = "quarter",
        max_moves: int = GAME.budgets["max_moves"],
        max_messages: int = GAME.budgets["max_messages"],
        max_message_chars: int = GAME.budgets["max_message_chars"],
        max_cycles: int = GAME.budgets["max_cycles"],
        image_size: int = 224,
        render_mode: str | None = None,
        generator: Generator | None = None,
    ) -> None:
        self.render_mode = checked_render_mode(render_mode)
        self.views = {SEATS[0]: SeatView(VIEW_TIER, form, image_size),
                      SEATS[1]: SeatView(VIEW_TIER, form, image_size, OPPOSITE_VIEW)}
        self.max_moves = positive_int(max_moves, "max_moves")
        self.max_cycles = positive_int(max_cycles, "max_cycles")
        self.cube = SharedCube(depth, metric, False, self.max_moves, None, generator)
        self.channel = Channel(SEATS, max_messages, max_message_chars)
        self.possible_agents = list(SEATS)
        self.agents: list[str] = []
        self._names = SEAT_ACTIONS + self.cube.turn_names
        self._action_spaces = {s: talking_action_space(len(self.cube.turn_names), self.channel.max_message_chars)
                               for s in SEATS}
        common = talking_spaces(self.channel, self.max_moves, self.max_cycles)
        self._observation_spaces = {s: spaces.Dict({"view": self.views[s].space, **common}) for s in SEATS}
        self.state_space = spaces.Box(0, 5, shape=(54,), dtype=np.uint8)
        self.instance: Instance | None = None
        self.cycle = 0
        self._last = {s: "" for s in SEATS}
        self._conflicts = 0
        self._solved_at_start = False

    # --- the seats' spaces and rules -----------------------------------------
    def observation_space(self, agent: str) -> spaces.Space:
        return self._observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self._action_spaces[agent]

    def action_names(self, agent: str) -> tuple[str, ...]:
        """What each value of a seat's ``action`` picks: ``wait``, ``say``, then the face turns."""
        return self._names

    def seat_view(self, agent: str) -> SeatView:
        """The view ``agent`` sees the cube through (``camera_1``'s carries the rotation :data:`OPPOSITE_VIEW`)."""
        return self.views[agent]

    # --- PettingZoo API --------------------------------------------------------
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[dict, dict]:
        self.instance = self.cube.reset(seed, options)
        self.channel.reset()
        self.agents = list(SEATS)
        self.cycle = 0
        self._conflicts = 0
        self._solved_at_start = self.cube.solved
        self._last = {s: "" for s in SEATS}
        return {s: self._observe(s) for s in SEATS}, {s: self._info(s, {}) for s in SEATS}

    def step(self, actions: dict[str, Any]) -> tuple[dict, dict, dict, dict, dict]:
        if not self.agents:
            raise RuntimeError("the episode is over: call reset()")
        chosen = {s: parse_action(actions.get(s, WAIT), len(self._names)) for s in self.agents}
        notes: dict[str, dict[str, Any]] = {s: {} for s in self.agents}
        for seat, (choice, message) in chosen.items():
            self._last[seat] = f"say {quote(message)}" if choice == SAY else self._names[choice]
            if choice == SAY:
                notes[seat] = self.channel.send(seat, message, self.cycle)
        conflict = self._turn({s: self._names[c] for s, (c, _) in chosen.items() if c > SAY})
        self.cycle += 1
        solved = self.cube.solved
        over = not solved and (self.cube.spent() or self.cycle >= self.max_cycles)
        reward = 1.0 if solved and not self._solved_at_start else 0.0
        seats = list(self.agents)
        observations = {s: self._observe(s) for s in seats}
        infos = {s: self._info(s, {**notes[s], "conflict": conflict}) for s in seats}
        if solved or over:
            self.agents = []
        return (observations, {s: reward for s in seats}, {s: solved for s in seats}, {s: over for s in seats}, infos)

    def _turn(self, turns: dict[str, str]) -> bool:
        """Apply the step's face turns by the conflict rule; whether they conflicted (and cancelled)."""
        if len(set(turns.values())) > 1:
            self._conflicts += 1
            return True
        if turns:
            self.cube.act(next(iter(turns.values())))
        return False

    def _observe(self, seat: str) -> dict[str, Any]:
        obs = talking_entries(self.channel, seat, self.cube.moves_left(), self.max_cycles - self.cycle)
        obs["view"] = self.views[seat].observe(self.cube.colours)
        return obs

    def _info(self, seat: str, notes: dict[str, Any]) -> dict[str, Any]:
        """Bookkeeping only, never the state."""
        assert self.instance is not None
        return {"cycle": self.cycle, "moves": self.cube.moves, "depth": self.instance.depth,
                "is_success": self.cube.solved, "conflict": False, **notes}

    def state(self) -> np.ndarray:
        """The held cube's 54 colour indices: for centralised training and runners, never given to a seat."""
        return self.cube.colours.astype(np.uint8)

    def render(self) -> str | np.ndarray | None:
        if self.render_mode is None:
            gymnasium.logger.warn("render() was called without a render_mode; pass render_mode='rgb_array' or 'ansi'")
            return None
        colours = self.cube.colours
        if self.render_mode == "ansi":
            return render_text(self.cube.reference_colours,
                               [self._status()] + [line for s in SEATS for line in self._lines(s)])
        size = self.views[SEATS[0]].size
        panels = [Panel(f"{s}: {'UFR' if s == SEATS[0] else 'DLB'} corner",
                        self.views[s].image(colours[self.views[s].gather]), self._lines(s)) for s in SEATS]
        panels.append(Panel("the cube (no seat sees this)", render_net(self.cube.reference_colours, size),
                            [self._status()]))
        return render_panels(panels, size)

    def _status(self) -> str:
        return (f"cycle {self.cycle}/{self.max_cycles}, moves {self.cube.moves}/{self.max_moves}, "
                f"conflicts {self._conflicts}")

    def _lines(self, seat: str) -> list[str]:
        heard = self.channel.latest_for(seat)
        return [f"{seat} last: {self._last[seat] or '-'}", f"heard: {quote(heard) if heard else '-'}",
                f"messages left: {self.channel.left(seat)}"]

    def close(self) -> None:
        """Nothing to release; safe to call twice."""


def parallel_env(**kwargs: Any) -> TwoCamerasEnv:
    """The native Parallel env."""
    return TwoCamerasEnv(**kwargs)


def raw_env(**kwargs: Any) -> AECEnv:
    """The AEC form without PettingZoo's order-enforcing wrapper."""
    return parallel_to_aec_wrapper(TwoCamerasEnv(**kwargs))


def env(**kwargs: Any) -> AECEnv:
    """The AEC form (PettingZoo's ``parallel_to_aec``): each cycle asks ``camera_0``, then ``camera_1``."""
    return parallel_to_aec(TwoCamerasEnv(**kwargs))

__all__ = ["NAME", "SEATS", "OPPOSITE_VIEW", "TwoCamerasEnv", "raw_env", "env", "parallel_env"]
