"""Observer and actor (``CubeBench-ObserverActor-v0``): split perception, one pair of hands, a bounded text channel.

The rules are :class:`ObserverActorEnv`'s docstring, from which docs/environments.md is made
(``python docs/make_environments.py``); the channel and the action form are :mod:`.channel`'s.
"""

from __future__ import annotations

from typing import Any, ClassVar

import gymnasium
import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv, ParallelEnv
from pettingzoo.utils import AgentSelector, wrappers
from pettingzoo.utils.conversions import aec_to_parallel

from ..games import OBSERVER_ACTOR, Game
from ...engine.metric import Metric
from ...generators import Generator, Instance
from ...render.net import render_net
from .channel import (
    SAY, SEAT_ACTIONS, WAIT, Channel, parse_action, positive_int, talking_action_space, talking_entries, talking_spaces,
)
from .panels import RENDER_MODES, Panel, quote, render_panels, render_text, checked_render_mode
from .table import SharedCube
from .views import SeatView

GAME = OBSERVER_ACTOR
"""This env's row of the games table."""
NAME = GAME.env_id
OBSERVER, ACTOR = SEATS = GAME.seats


class ObserverActorEnv(AECEnv[str, dict[str, Any], Any]):
    """Observer and actor: one seat sees the cube, the other turns it, and they talk (turn-based, AEC).

    ## Description

    Two seats share one cube. `observer_0` sees it through any tier but cannot turn a face; `actor_0`
    turns faces but sees nothing of the cube. Messages are their only channel, so the env isolates
    translating perception into words another agent can act on. Success is solving within the move
    budget.

    Made by `cubebench.envs.multi.observer_actor.env()` (AEC, order-enforced), `raw_env()` (this class)
    or `parallel_env()`, or `make_multi_env("CubeBench-ObserverActor-v0")` (the `multi` extra). Agents:
    `observer_0`, `actor_0`, in turn order.

    A cycle is the observer's turn, then the actor's, who hears a message in the cycle it was sent. The
    Parallel form plays one cycle per step with both seats choosing at once, so there the actor hears
    it one step later.

    ## Action Space

    Each seat acts with `Dict(action=Discrete(2 + n), message=Text(0, max_message_chars))`. `action` 0
    waits, 1 says `message`, and from 2 on are the seat's own actions (`action_names(seat)`): the
    observer's view rotations `x x' y y' z z'` (Face and Vertex only), the actor's face turns of the
    metric, named by centre colour (`U` turns the white-centred face however the observer holds the
    cube). A message keeps printable ASCII, space and newline: a longer one is cut, other characters
    become `?` (`info["message_note"]` says so), one past `max_messages` is refused (`info["refused"]`),
    an empty one is not sent. A bare int stands for `{"action": k}`, a bare str says it.

    ## Observation Space

    A `Dict`. Both seats: `message` (the other seat's latest, `""` before the first), `received` (how
    many heard), `moves_left`, `messages_left` and `cycles_left`. The observer also: `view`, the cube
    through `tier` and `form` as the single-agent tiers show it (text in colour letters `WRGYOB`), and
    `rotations_left` on Face and Vertex. Nothing the actor observes is computed from the cube.
    `state()` gives runners and centralised training the held cube's 54 colour indices.

    ## Rewards

    Shared: 1.0 to both seats in the cycle that solves the cube, else 0.

    ## Starting State

    `reset(seed=s)` draws, with the seed, one of the shipped certified instances of `depth` and `metric`
    (a depth with no shipped set is certified on the spot, as `CubeEnv` does). The options `instance`,
    `depth`, `scramble` and `state` work as in `CubeEnv`; other keys are ignored with a warning.

    ## Episode End

    1. Termination: the cube is solved.
    2. Truncation: the move budget is spent without solving, or `max_cycles` cycles have passed.

    Each seat's `info` holds `cycle`, `moves`, `depth`, `is_success` and, where they apply, `refused`
    and `message_note`: never the state.

    ## Arguments

    | argument | default |
    |---|---|
    | `tier`, `form` | `symbolic`, the tier's first form |
    | `depth`, `metric` | 8, `quarter` |
    | `max_moves`, `max_rotations`, `max_cycles` | 40, 40, 100 |
    | `max_messages`, `max_message_chars` | 8, 256 |
    | `image_size` | 224 |
    | `render_mode` | `None`; `rgb_array` (a panel per seat, and the true cube) or `ansi` |
    | `generator` | `CurriculumGenerator()`: the shipped sets |
    """

    GAME: ClassVar[Game] = GAME
    """The games-table row of this env."""

    metadata = {"name": "cubebench_observer_actor_v0", "render_modes": list(RENDER_MODES), "render_fps": 4,
                "is_parallelizable": True}

    def __init__(
        self,
        tier: str = "symbolic",
        form: str = "",
        *,
        depth: int = 8,
        metric: Metric | str = "quarter",
        max_moves: int = GAME.budgets["max_moves"],
        max_rotations: int = GAME.budgets["max_rotations"],
        max_messages: int = GAME.budgets["max_messages"],
        max_message_chars: int = GAME.budgets["max_message_chars"],
        max_cycles: int = GAME.budgets["max_cycles"],
        image_size: int = 224,
        render_mode: str | None = None,
        generator: Generator | None = None,
    ) -> None:
        super().__init__()
        self.render_mode = checked_render_mode(render_mode)
        self.view = SeatView(tier, form, image_size)
        self.max_moves = positive_int(max_moves, "max_moves")
        self.max_rotations = positive_int(max_rotations, "max_rotations", 0)
        self.max_cycles = positive_int(max_cycles, "max_cycles")
        self.cube = SharedCube(depth, metric, self.view.partial, self.max_moves, self.max_rotations, generator)
        self.channel = Channel(SEATS, max_messages, max_message_chars)
        self.possible_agents = list(SEATS)
        self.agents: list[str] = []
        self._names = {OBSERVER: SEAT_ACTIONS + self.cube.view_names, ACTOR: SEAT_ACTIONS + self.cube.turn_names}
        self._action_spaces = {seat: talking_action_space(len(self._names[seat]) - 2, self.channel.max_message_chars)
                               for seat in SEATS}
        self._observation_spaces = self._make_observation_spaces()
        self.state_space = spaces.Box(0, 5, shape=(54,), dtype=np.uint8)
        self.instance: Instance | None = None
        self.cycle = 0
        self._solved_at_start = False
        self._notes: dict[str, dict[str, Any]] = {seat: {} for seat in SEATS}
        self._last = {seat: "" for seat in SEATS}

    def _make_observation_spaces(self) -> dict[str, spaces.Dict]:
        common = talking_spaces(self.channel, self.max_moves, self.max_cycles)
        observer: dict[str, spaces.Space] = {"view": self.view.space, **common}
        if self.view.partial:
            observer["rotations_left"] = spaces.Discrete(self.max_rotations + 1)
        return {OBSERVER: spaces.Dict(observer), ACTOR: spaces.Dict(talking_spaces(self.channel, self.max_moves,
                                                                                   self.max_cycles))}

    # --- the seats' spaces and rules -----------------------------------------
    def observation_space(self, agent: str) -> spaces.Space:
        return self._observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self._action_spaces[agent]

    def action_names(self, agent: str) -> tuple[str, ...]:
        """What each value of ``agent``'s ``action`` picks: ``wait``, ``say``, then its rotations or turns."""
        return self._names[agent]

    def seat_view(self, agent: str) -> SeatView | None:
        """The view ``agent`` sees the cube through (``None``: the actor sees nothing)."""
        return self.view if agent == OBSERVER else None

    # --- PettingZoo API --------------------------------------------------------
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        self.instance = self.cube.reset(seed, options)
        self.channel.reset()
        self.agents = list(SEATS)
        self.cycle = 0
        self._solved_at_start = self.cube.solved
        self._notes = {seat: {} for seat in SEATS}
        self._last = {seat: "" for seat in SEATS}
        self.rewards = {seat: 0.0 for seat in SEATS}
        self._cumulative_rewards = {seat: 0.0 for seat in SEATS}
        self.terminations = {seat: False for seat in SEATS}
        self.truncations = {seat: False for seat in SEATS}
        self.infos = {seat: self._info(seat) for seat in SEATS}
        self._selector = AgentSelector(self.agents)
        self.agent_selection = self._selector.reset()

    def observe(self, agent: str) -> dict[str, Any]:
        obs = talking_entries(self.channel, agent, self.cube.moves_left(), self.max_cycles - self.cycle)
        if agent == OBSERVER:
            obs["view"] = self.view.observe(self.cube.colours)
            if self.view.partial:
                obs["rotations_left"] = self.cube.rotations_left()
        return obs

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        choice, message = parse_action(action, len(self._names[agent]))
        self._cumulative_rewards[agent] = 0.0
        self._notes[agent] = self._act(agent, choice, message)
        if self._selector.is_last():
            self._end_cycle()
        else:
            self._clear_rewards()
        self.infos = {seat: self._info(seat) for seat in self.agents}
        self.agent_selection = self._selector.next()
        self._accumulate_rewards()

    def _act(self, agent: str, choice: int, message: str) -> dict[str, Any]:
        """Carry out one seat's choice; what that seat's ``info`` should say about it."""
        name = self._names[agent][choice]
        self._last[agent] = f"say {quote(message)}" if choice == SAY else name
        if choice == WAIT:
            return {}
        if choice == SAY:
            return self.channel.send(agent, message, self.cycle)
        outcome = self.cube.act(name)
        return {"refused": outcome.refused} if outcome.refused else {}

    def _end_cycle(self) -> None:
        self.cycle += 1
        solved = self.cube.solved
        over = not solved and (self.cube.spent() or self.cycle >= self.max_cycles)
        reward = 1.0 if solved and not self._solved_at_start else 0.0
        self.rewards = {seat: reward for seat in self.agents}
        self.terminations = {seat: solved for seat in self.agents}
        self.truncations = {seat: over for seat in self.agents}

    def _info(self, agent: str) -> dict[str, Any]:
        """Bookkeeping only: nothing computed from the cube but whether it is solved (termination says so anyway)."""
        assert self.instance is not None
        return {"cycle": self.cycle, "moves": self.cube.moves, "depth": self.instance.depth,
                "is_success": self.cube.solved, **self._notes[agent]}

    def state(self) -> np.ndarray:
        """The held cube's 54 colour indices: for centralised training and runners, never given to a seat."""
        return self.cube.colours.astype(np.uint8)

    def render(self) -> str | np.ndarray | None:
        if self.render_mode is None:
            gymnasium.logger.warn("render() was called without a render_mode; pass render_mode='rgb_array' or 'ansi'")
            return None
        truth = self.cube.reference_colours
        if self.render_mode == "ansi":
            return render_text(truth, [self._status()] + self._lines(OBSERVER) + self._lines(ACTOR))
        seen = self.view.image(self.cube.colours[self.view.gather])
        panels = [Panel("the cube (no seat sees this)", render_net(truth, self.view.size), [self._status()]),
                  Panel(f"{OBSERVER}: {self.view.tier} ({self.view.form})", seen, self._lines(OBSERVER)),
                  Panel(f"{ACTOR}: hears, turns", None, self._lines(ACTOR))]
        return render_panels(panels, self.view.size)

    def _status(self) -> str:
        return f"cycle {self.cycle}/{self.max_cycles}, moves {self.cube.moves}/{self.max_moves}"

    def _lines(self, agent: str) -> list[str]:
        heard = self.channel.latest_for(agent)
        return [f"{agent} last: {self._last[agent] or '-'}", f"heard: {quote(heard) if heard else '-'}",
                f"messages left: {self.channel.left(agent)}"]

    def close(self) -> None:
        """Nothing to release (the renderers keep no windows); safe to call twice."""


raw_env = ObserverActorEnv


def env(**kwargs: Any) -> AECEnv:
    """The AEC env, with PettingZoo's order-enforcing wrapper (reset before step, and so on)."""
    return wrappers.OrderEnforcingWrapper(ObserverActorEnv(**kwargs))


def parallel_env(**kwargs: Any) -> ParallelEnv:
    """The Parallel form: one step is one cycle (both seats choose at once)."""
    return aec_to_parallel(env(**kwargs))


__all__ = ["NAME", "SEATS", "OBSERVER", "ACTOR", "ObserverActorEnv", "raw_env", "env", "parallel_env"]
