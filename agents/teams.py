"""Scripted teams for the multi-agent envs (``cubebench.envs.multi``): calibration seats.

They bound what each env allows, as the scripted baselines do for the single-agent tiers:

- **perfect**: the seat that sees reads the state off its own observation (pixels of an image
  at the renderer's sticker slots, letters of a text form; on Face and Vertex it first turns the
  cube with view actions until every face has been in view), sends the 54-letter facelet string,
  and the seat that turns validates the message with the engine, solves it with the two-phase
  solver and plays the solution one turn per step.  In the two-camera env ``camera_1`` sends the
  27 colours it sees and ``camera_0`` (the only one that turns, so no conflict) joins them to its
  own.  In the scrambler-solver game the perfect team is a greedy scrambler (each turn the one
  that leaves the exact distance largest) against the perfect solver.
- **silent**: the same seats with the channel unused: the seeing seat never speaks, and the
  turning seat, having heard nothing, turns at random (a blind guess).
- **random**: every seat samples its action space (masked where the env gives a mask).

Seats use the envs through PettingZoo's API (``reset``/``last``/``step``, or the Parallel
``step``) plus the documented rules of the env they are built for: ``action_names(seat)`` and
``seat_view(seat)`` (tier, form, the rotation a seat looks through), never the hidden state.
:func:`play_team` plays one episode of a team and returns its :class:`TeamOutcome`.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Callable, Mapping, Protocol

import numpy as np

from cubebench.engine import TABLE, kernels
from cubebench.engine.errors import CubeInputError
from cubebench.engine.facelets import COLOUR_LETTERS, COLOUR_RGB, N_STICKERS
from cubebench.engine.moves import MOVE_INDEX
from cubebench.envs.games import OBSERVER_ACTOR, SCRAMBLER_SOLVER, TWO_CAMERAS
from cubebench.engine.state import canonical, from_colour_indices, from_facelets, to_facelets
from cubebench.solver.twophase import solve_twophase
from cubebench.solver.oracle import oracle
from cubebench.tiers import TIER_SPECS

WAIT, SAY = 0, 1
"""The first two choices of a talking seat (``cubebench.envs.multi.channel``)."""
"""View rotations, one quarter turn per step, after which every face has been in view: the tier registry's
``looks`` (the single-agent solver's, one look per step) cut into the quarter turns a seat can make (Face: the
four side faces, then D, then U; Vertex: the opposite corner, ``x z2``)."""


class Seat(Protocol):
    """One seat's scripted policy: ``reset()`` before an episode, ``act(observation, info)`` each turn."""

    def reset(self) -> None: ...

    def act(self, observation: Any, info: dict[str, Any]) -> Any: ...


# --- perception: the held cube's colours read off a view ----------------------------------------


def read_view(view: Any, observation: Any) -> tuple[np.ndarray, np.ndarray]:
    """``(positions, colours)``: which held positions ``observation`` shows and their colour indices.

    ``view`` is the seat's ``SeatView`` (tier, form, the rotation it looks through); images are
    read at the renderer's sticker slots, text forms at their letters.
    """
    return np.asarray(view.gather)[np.asarray(view.visible)], read_colours(view.tier, view.form, observation)


def read_colours(tier: str, form: str, observation: Any) -> np.ndarray:
    """The colour indices a ``tier`` observation in ``form`` shows, in the order of the tier's visible stickers
    (its compact ``indices`` form): images read at the renderer's sticker slots, text forms at their letters."""
    if form == "onehot":
        shown = np.asarray(observation).argmax(axis=1)
    elif form == "indices":
        shown = np.asarray(observation)
    elif form == "image":
        shown = _read_image(np.asarray(observation), tier)
    else:
        shown = _letters("".join(observation[i] for i in _text_slots(tier)))
    return np.asarray(shown, dtype=np.int64)


def _letters(text: str) -> np.ndarray:
    lut = {c: k for k, c in enumerate(COLOUR_LETTERS)}
    return np.array([lut[c] for c in text], dtype=np.int64)


def _read_image(image: np.ndarray, tier: str) -> np.ndarray:
    """The colour index of every sticker slot of a rendered view (nearest shaded palette colour)."""
    canvas = TIER_SPECS[tier].canvas(image.shape[0])
    pixels = image.reshape(-1, 3).astype(np.int64)
    out = np.empty(canvas.n_slots, dtype=np.int64)
    for slot, pixel in enumerate(_slot_pixels(canvas)):
        expected = np.rint(COLOUR_RGB * canvas.shade[slot]).astype(np.int64)
        out[slot] = int(np.abs(expected - pixels[pixel]).sum(axis=1).argmin())
    return out


def _slot_pixels(canvas: Any) -> list[int]:
    """One pixel (flat index) of each sticker slot."""
    first = np.full(canvas.n_slots, -1, dtype=np.int64)
    for pixel, owner in zip(canvas.pixels[::-1], canvas.owner[::-1]):
        first[owner] = pixel
    return [int(p) for p in first]


@lru_cache(maxsize=None)
def _text_slots(tier: str) -> tuple[int, ...]:
    """Character index of each sticker the tier's text form shows, in the order of its visible positions
    (found by writing one sticker at a time in another colour)."""
    spec = TIER_SPECS[tier]
    write = spec.text
    plain = write(np.zeros(N_STICKERS, dtype=np.int64))
    slots = []
    for k in spec.visible:
        marked = np.zeros(N_STICKERS, dtype=np.int64)
        marked[k] = 1
        slots.append(next(i for i, (a, b) in enumerate(zip(plain, write(marked))) if a != b))
    return tuple(slots)


class Perceiver:
    """The held cube's colours at the start, gathered from every view a seat has had.

    A seat that turns the cube to look (view rotations) tells the perceiver with
    :meth:`rotated`; positions seen after a rotation are put back where they were at the start.
    """

    def __init__(self, view: Any) -> None:
        self.view = view
        self.reset()

    def reset(self) -> None:
        self.turned = np.arange(N_STICKERS)
        self.colours = np.full(N_STICKERS, -1, dtype=np.int64)

    def look(self, observation: Any) -> None:
        positions, colours = read_view(self.view, observation)
        self.colours[self.turned[positions]] = colours

    def rotated(self, rotation: str) -> None:
        self.turned = self.turned[TABLE[MOVE_INDEX[rotation]]]

    def add(self, positions: np.ndarray, colours: np.ndarray) -> None:
        """Colours another seat reported, at start-held positions."""
        self.colours[positions] = colours

    @property
    def complete(self) -> bool:
        return bool((self.colours >= 0).all())

    def facelets(self) -> str:
        """The 54-letter string of the cube turned to reference orientation (centres home): what turns named by
        centre colour act on.  Raises ``CubeInputError`` if what was seen is not a cube."""
        return to_facelets(canonical(from_colour_indices(self.colours.astype(np.uint8))))


def _confirm(perceiver: Perceiver, rotation: str | None, info: dict[str, Any]) -> None:
    """Tell ``perceiver`` about the seat's last view rotation unless the env refused it (budget spent)."""
    if rotation is not None and not info.get("refused"):
        perceiver.rotated(rotation)


# --- playing a solution -----------------------------------------------------------------------


def plan_solution(cube: str | np.ndarray, names: tuple[str, ...]) -> list[str]:
    """The two-phase solution of ``cube`` (a facelet string or a state) as action names of ``names`` (a half
    turn is two quarter turns where the seat has no half-turn actions)."""
    plan: list[str] = []
    for move in solve_twophase(cube).split():
        plan += [move] if move in names else [move[0], move[0]]
    return plan


class _Turner:
    """A seat that turns faces from a plan, and otherwise waits or (blind) turns at random."""

    def __init__(self, names: tuple[str, ...], offset: int, blind_seed: int | None = None) -> None:
        self.names, self.offset = names, offset
        self.turns = names[offset:]
        self.blind_seed = blind_seed
        self.reset()

    def reset(self) -> None:
        self.plan: list[str] = []
        self.heard = 0
        self.rng = None if self.blind_seed is None else np.random.default_rng(self.blind_seed)

    def next_turn(self) -> int:
        """The action of the plan's next turn; else a blind random turn, or ``WAIT``."""
        if self.plan:
            return self.names.index(self.plan.pop(0))
        if self.rng is not None:
            return self.offset + int(self.rng.integers(len(self.turns)))
        return WAIT


class PerfectObserver:
    """Looks at every face (view rotations on partial tiers), then says the facelet string once."""

    def __init__(self, view: Any, names: tuple[str, ...], silent: bool = False) -> None:
        self.perceiver = Perceiver(view)
        self.names, self.silent = names, silent
        self.reset()

    def reset(self) -> None:
        self.perceiver.reset()
        self.plan = list(self.perceiver.view.spec.quarter_looks())
        self.pending: str | None = None
        self.sent = False

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> Any:
        _confirm(self.perceiver, self.pending, info)
        self.pending = None
        self.perceiver.look(observation["view"])
        if self.plan:
            self.pending = self.plan.pop(0)
            return {"action": self.names.index(self.pending), "message": ""}
        if self.sent or self.silent or not self.perceiver.complete:
            return {"action": WAIT, "message": ""}
        self.sent = True
        return {"action": SAY, "message": self.perceiver.facelets()}


class PerfectActor(_Turner):
    """Waits for a message that is a valid facelet string, solves it, plays the solution one turn a step.

    With ``blind_seed`` it turns at random while it has no plan (the silent team's actor).
    """

    def __init__(self, names: tuple[str, ...], blind_seed: int | None = None) -> None:
        super().__init__(names, 2, blind_seed)

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> Any:
        if observation["received"] > self.heard:
            self.heard = observation["received"]
            try:
                state = from_facelets(observation["message"])  # the engine's validation: a cube, or an error
            except CubeInputError:
                pass  # not a cube: keep what was planned
            else:
                self.plan = plan_solution(state, self.names)
        return {"action": self.next_turn(), "message": ""}


class DescribingCamera:
    """``camera_1`` of a perfect team: says the 27 colours it sees (colour letters, in its view's order), once."""

    def __init__(self, view: Any, silent: bool = False) -> None:
        self.view, self.silent = view, silent
        self.sent = False

    def reset(self) -> None:
        self.sent = False

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> Any:
        if self.sent or self.silent:
            return {"action": WAIT, "message": ""}
        self.sent = True
        _, colours = read_view(self.view, observation["view"])
        return {"action": SAY, "message": "".join(COLOUR_LETTERS[c] for c in colours)}


class TurningCamera(_Turner):
    """``camera_0`` of a perfect team: joins its own view to ``camera_1``'s colours, solves, turns."""

    def __init__(self, view: Any, other_view: Any, names: tuple[str, ...], blind_seed: int | None = None) -> None:
        self.perceiver = Perceiver(view)
        self.other = other_view
        super().__init__(names, 2, blind_seed)

    def reset(self) -> None:
        super().reset()
        self.perceiver.reset()

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> Any:
        if observation["received"] > self.heard and not self.plan:
            self.heard = observation["received"]
            self.perceiver.look(observation["view"])
            message = observation["message"]
            positions = np.asarray(self.other.gather)[np.asarray(self.other.visible)]
            if len(message) == len(positions) and set(message) <= set(COLOUR_LETTERS):
                self.perceiver.add(positions, _letters(message))
                try:
                    self.plan = plan_solution(self.perceiver.facelets(), self.names)
                except CubeInputError:
                    pass
        return {"action": self.next_turn(), "message": ""}


class PerfectSolver:
    """The solver seat of the scrambler-solver game: passes until its phase, looks (exploring on partial
    tiers), then plays the two-phase solution."""

    def __init__(self, view: Any, names: tuple[str, ...]) -> None:
        self.perceiver = Perceiver(view)
        self.names = names
        self.reset()

    def reset(self) -> None:
        self.perceiver.reset()
        self.explore = list(self.perceiver.view.spec.quarter_looks())
        self.pending: str | None = None
        self.plan: list[str] | None = None

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> int:
        if observation["phase"] == 0:
            return 0
        if self.plan is None:
            _confirm(self.perceiver, self.pending, info)
            self.pending = None
            self.perceiver.look(observation["view"])
            if self.explore:
                self.pending = self.explore.pop(0)
                return self.names.index(self.pending)
            self.plan = plan_solution(self.perceiver.facelets(), self.names)
        return self.names.index(self.plan.pop(0)) if self.plan else 0


class GreedyScrambler:
    """Each scramble turn, the turn whose result is farthest from solved (exact distance, ties to the first)."""

    def __init__(self, names: tuple[str, ...], metric: str) -> None:
        self.names, self.metric = names, metric

    def reset(self) -> None:
        pass

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> int:
        if observation["phase"] != 0:
            return 0
        state = from_colour_indices(np.asarray(observation["view"]).argmax(axis=1).astype(np.uint8))
        exact = oracle(self.metric)
        distances = [exact.distance(kernels.apply_move(state, TABLE, MOVE_INDEX[name])) for name in self.names[1:]]
        return 1 + int(np.argmax(distances))


class RandomSeat:
    """Samples the seat's action space (with the observation's ``action_mask`` where there is one)."""

    def __init__(self, space: Any, seed: int | None = None) -> None:
        self.space, self.seed = space, seed

    def reset(self) -> None:
        self.space.seed(self.seed)

    def act(self, observation: Any, info: dict[str, Any]) -> Any:
        mask = observation.get("action_mask") if isinstance(observation, dict) else None
        return self.space.sample(mask) if mask is not None else self.space.sample()


# --- teams -------------------------------------------------------------------------------------


def perfect_team(env: Any) -> dict[str, Seat]:
    """The perfect team of ``env`` (any form of the three multi-agent envs)."""
    return _team(env, silent=False, seed=None)


def silent_team(env: Any, seed: int = 0) -> dict[str, Seat]:
    """The perfect team with the channel unused: the seeing seat never speaks, the turning one turns blind."""
    return _team(env, silent=True, seed=seed)


def random_team(env: Any, seed: int = 0) -> dict[str, Seat]:
    """Every seat samples its action space (seeded: seat ``k`` gets ``seed + k``)."""
    return {seat: RandomSeat(env.action_space(seat), seed + k) for k, seat in enumerate(env.possible_agents)}


def _observer_actor(game: Any, silent: bool, seed: int | None) -> list[Seat]:
    observer, actor = game.GAME.seats
    return [PerfectObserver(game.seat_view(observer), game.action_names(observer), silent),
            PerfectActor(game.action_names(actor), blind_seed=seed if silent else None)]


def _two_cameras(game: Any, silent: bool, seed: int | None) -> list[Seat]:
    turning, describing = game.GAME.seats
    return [TurningCamera(game.seat_view(turning), game.seat_view(describing), game.action_names(turning),
                          blind_seed=seed if silent else None),
            DescribingCamera(game.seat_view(describing), silent)]


def _scrambler_solver(game: Any, silent: bool, seed: int | None) -> list[Seat]:
    scrambler, solver = game.GAME.seats
    return [GreedyScrambler(game.action_names(scrambler), game.cube.metric),
            PerfectSolver(game.seat_view(solver), game.action_names(solver))]


TEAM_BUILDERS: dict[str, Callable[[Any, bool, int | None], list[Seat]]] = {
    OBSERVER_ACTOR.name: _observer_actor, TWO_CAMERAS.name: _two_cameras, SCRAMBLER_SOLVER.name: _scrambler_solver}
"""The perfect (and silent) team's players of each game of the games table, one per seat in seat order."""


def _team(env: Any, silent: bool, seed: int | None) -> dict[str, Seat]:
    game = env.unwrapped
    row = getattr(game, "GAME", None)
    if row is None or row.name not in TEAM_BUILDERS:
        raise ValueError(f"no scripted team for {type(game).__name__}: not a game of the games table")
    if silent and not row.channel:
        raise ValueError(f"the {row.name} game has no channel, so no silent team")
    return dict(zip(row.seats, TEAM_BUILDERS[row.name](game, silent, seed), strict=True))


# --- playing -----------------------------------------------------------------------------------


@dataclass
class TeamOutcome:
    """One episode of a team: solved or not, each seat's return, and the bookkeeping at the end."""

    solved: bool
    returns: dict[str, float]
    cycles: int
    moves: int
    messages: int
    infos: dict[str, dict[str, Any]] = field(default_factory=dict)


def play_team(env: Any, seats: Mapping[str, Seat], seed: int | None = None,
              options: dict[str, Any] | None = None, max_iter: int = 100_000) -> TeamOutcome:
    """Play one episode of ``seats`` on ``env`` (AEC or Parallel form) from ``reset(seed, options)``."""
    for seat in seats.values():
        seat.reset()
    if hasattr(env, "agent_iter"):
        returns, infos = _play_aec(env, seats, seed, options, max_iter)
    else:
        returns, infos = _play_parallel(env, seats, seed, options, max_iter)
    channel = getattr(env.unwrapped, "channel", None)
    last = next(iter(infos.values()), {})
    return TeamOutcome(
        solved=any(bool(i.get("is_success")) for i in infos.values()), returns=dict(returns),
        cycles=int(last.get("cycle", 0)), moves=int(last.get("moves", 0)),
        messages=len(channel.log) if channel is not None else 0, infos=infos)


def _play_aec(env: Any, seats: Mapping[str, Seat], seed: int | None, options: dict[str, Any] | None,
              max_iter: int) -> tuple[dict[str, float], dict[str, dict[str, Any]]]:
    env.reset(seed=seed, options=options)
    returns: dict[str, float] = defaultdict(float)
    infos: dict[str, dict[str, Any]] = {}
    for agent in env.agent_iter(max_iter):
        observation, reward, terminated, truncated, info = env.last()
        returns[agent] += float(reward)
        infos[agent] = info
        env.step(None if terminated or truncated else seats[agent].act(observation, info))
    return returns, infos


def _play_parallel(env: Any, seats: Mapping[str, Seat], seed: int | None, options: dict[str, Any] | None,
                   max_iter: int) -> tuple[dict[str, float], dict[str, dict[str, Any]]]:
    observations, infos = env.reset(seed=seed, options=options)
    returns: dict[str, float] = defaultdict(float)
    for _ in range(max_iter):
        if not env.agents:
            break
        actions = {a: seats[a].act(observations[a], infos[a]) for a in env.agents}
        observations, rewards, _, _, infos = env.step(actions)
        for agent, reward in rewards.items():
            returns[agent] += float(reward)
    return returns, dict(infos)


__all__ = ["Seat", "TeamOutcome", "play_team", "perfect_team", "silent_team", "random_team", "read_view",
           "Perceiver", "PerfectObserver", "PerfectActor", "DescribingCamera", "TurningCamera", "PerfectSolver",
           "GreedyScrambler", "RandomSeat", "plan_solution"]
