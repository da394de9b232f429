"""The table of multi-agent games: one row per game, the one place its facts live.

Each row says what the rest of the suite needs to know about a game without importing PettingZoo:
its name in suites and records, the env it is, its seats in turn order, what each seat is told it is
(the role prompts of model seats), the seats an agent may take alone, whether the seats talk, what
the start is, and the env's default budgets.  The envs (``cubebench.envs.multi``) take their name,
seats and defaults from it; the runner's suites, plans and records, the scripted teams and the model
seats' prompts read it; ``tests/envs/test_games_table.py`` ties each row to its env.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Mapping

__all__ = ["Game", "GAMES", "GAMES_BY_ENV", "OBSERVER_ACTOR", "TWO_CAMERAS", "SCRAMBLER_SOLVER", "game_named",
           "BUDGET_FIELDS"]

BUDGET_FIELDS = ("max_moves", "max_rotations", "max_messages", "max_message_chars", "max_cycles")
"""The budgets a game's env may take (each game takes some of them)."""


@dataclass(frozen=True, eq=False)
class Game:
    """One multi-agent game (see the module docstring)."""

    name: str
    """Its name in suite files, plans and records (``observer-actor``)."""
    env_id: str
    """The registered env (``CubeBench-ObserverActor-v0``)."""
    seats: tuple[str, ...]
    """The seats, in turn order."""
    roles: Mapping[str, str]
    """What a model seat is told it is, per seat (the first part of its system prompt)."""
    budgets: Mapping[str, int]
    """The env's default budgets (keys among :data:`BUDGET_FIELDS`)."""
    scrambler: str | None = None
    """The seat that makes the start by scrambling a solved cube (as many turns as a suite cell's depth says);
    ``None``: the game starts from a shipped certified instance of the cell's depth."""
    channel: bool = True
    """Whether the seats talk (say/wait actions and a message budget)."""
    tier: str | None = None
    """The one tier every seeing seat uses, where the game fixes it (the two cameras: ``vertex``); else the
    suite's view picks it."""
    solo_seats: tuple[str, ...] = ()
    """In a zero-sum game, the seats an agent plays one at a time against the perfect player (a model on both
    seats could hand itself easy positions); empty: the agent plays every seat at once."""

    def __post_init__(self) -> None:
        if set(self.roles) != set(self.seats):
            raise ValueError(f"game {self.name}: roles for {sorted(self.roles)}, seats {list(self.seats)}")
        named = set(self.solo_seats) | ({self.scrambler} if self.scrambler else set())
        if not named <= set(self.seats) or not set(self.budgets) <= set(BUDGET_FIELDS):
            raise ValueError(f"game {self.name}: solo seats or budgets name something it lacks")
        object.__setattr__(self, "roles", MappingProxyType(dict(self.roles)))
        object.__setattr__(self, "budgets", MappingProxyType(dict(self.budgets)))

    @property
    def depth_option(self) -> str:
        """The env's keyword that a suite cell's depth sets."""
        return "depth" if self.scrambler is None else "scramble_moves"

    @property
    def plays(self) -> tuple[str | None, ...]:
        """One entry per game an agent plays in a cell: each solo seat, or ``None`` (every seat at once)."""
        return self.solo_seats or (None,)


OBSERVER_ACTOR = Game(
    name="observer-actor", env_id="CubeBench-ObserverActor-v0", seats=("observer_0", "actor_0"),
    roles={
        "observer_0": (
            "You are the OBSERVER of a two-player Rubik's cube team. You can see the cube, but you cannot turn "
            "its faces. Your partner, the ACTOR, turns faces but sees nothing: it knows only what you tell it. "
            "Together you must solve the cube within the move budget. Tell the actor what to turn (or what the "
            "cube looks like) in short messages; every message counts against your message budget."),
        "actor_0": (
            "You are the ACTOR of a two-player Rubik's cube team. You turn the cube's faces, but you see nothing "
            "of the cube: your only information is the messages of your partner, the OBSERVER, who sees the cube "
            "but cannot turn it. Together you must solve the cube within the move budget. Ask your partner with "
            "a message when you need to know something; turn faces when you know what to turn."),
    },
    budgets={"max_moves": 40, "max_rotations": 40, "max_messages": 8, "max_message_chars": 256, "max_cycles": 100},
)
TWO_CAMERAS = Game(
    name="two-cameras", env_id="CubeBench-TwoCameras-v0", seats=("camera_0", "camera_1"), tier="vertex",
    roles={
        "camera_0": (
            "You are CAMERA 0 of a two-player Rubik's cube team. You see the cube from the corner where its U, F "
            "and R faces meet; your partner, CAMERA 1, sees it from the opposite corner (the D, L and B faces). "
            "Neither of you sees the whole cube. Both of you may turn faces and send messages. If you both turn "
            "different faces in the same step, both turns are cancelled: agree who turns."),
        "camera_1": (
            "You are CAMERA 1 of a two-player Rubik's cube team. You see the cube from the corner where its D, B "
            "and L faces meet (held turned by y x2, so D is on top); your partner, CAMERA 0, sees the U, F and R "
            "faces. Neither of you sees the whole cube. Both of you may turn faces and send messages. If you both "
            "turn different faces in the same step, both turns are cancelled: agree who turns."),
    },
    budgets={"max_moves": 40, "max_messages": 8, "max_message_chars": 256, "max_cycles": 100},
)
SCRAMBLER_SOLVER = Game(
    name="scrambler-solver", env_id="CubeBench-ScramblerSolver-v0", seats=("scrambler_0", "solver_0"),
    scrambler="scrambler_0", channel=False, solo_seats=("solver_0", "scrambler_0"),
    roles={
        "scrambler_0": (
            "You are the SCRAMBLER in a two-player Rubik's cube game against a SOLVER. You see the whole cube. "
            "In your phase you make exactly the given number of face turns, starting from the solved cube, to "
            "leave a position as far from solved as you can (you score the exact optimal distance you reach, "
            "and more if the solver then fails). Then the solver plays; you pass."),
        "solver_0": (
            "You are the SOLVER in a two-player Rubik's cube game against a SCRAMBLER. While the scrambler "
            "turns faces you see nothing and must pass; then you solve the cube it left within your move "
            "budget."),
    },
    budgets={"max_moves": 40, "max_rotations": 40, "max_cycles": 100},
)

GAMES: Mapping[str, Game] = MappingProxyType({g.name: g for g in (OBSERVER_ACTOR, TWO_CAMERAS, SCRAMBLER_SOLVER)})
"""Every game by name, in the order suites list them."""
GAMES_BY_ENV: Mapping[str, Game] = MappingProxyType({g.env_id: g for g in GAMES.values()})
"""Every game by its env's id."""


def game_named(name: str) -> Game:
    """The game called ``name``; a ``ValueError`` naming the games otherwise."""
    if name not in GAMES:
        raise ValueError(f"unknown game {name!r}; known: {', '.join(GAMES)}")
    return GAMES[name]
