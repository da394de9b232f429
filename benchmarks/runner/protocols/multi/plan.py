"""The multi protocol's plan: games keyed ``<game>/<tier>-<form>/d<depth>/i<instance>``.

For example ``observer-actor/face-text/d2/i01``; its start is a shipped certified instance.  The scrambler-solver
game starts solved (its depth is the scramble length) and is planned twice, once per seat the agent plays against
the perfect player on the other (``.../i00/solver_0``, ``.../i00/scrambler_0``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from cubebench.envs.games import GAMES

from ...planning import PlannedSpec, agent_seed, check_plan_size
from ...rows import StoredRow, Word
from ...suite_fields import SuiteError
from ..episodes.instances import shipped_starts
from .suite import MultiSuite, require_pettingzoo


@dataclass(frozen=True)
class GameRow(StoredRow):
    """A game's stored summary row, its columns under the protocol's words."""

    game = Word[str]("part")
    view = Word[str]("variant")
    seat = Word[str]("setting")


@dataclass(frozen=True)
class GameSpec(PlannedSpec):
    """One multi-agent game of a run: the game, the view, the start and the seeds."""

    key: str
    game: str
    view: str
    depth: int
    instance: int
    metric: str
    seed: int
    env_seed: int
    agent_seed: int
    options: dict[str, Any] = field(default_factory=dict)
    """The suite's env settings for the game (budgets)."""
    reset_options: dict[str, Any] = field(default_factory=dict)
    """``{"state": <54 letters>}`` of a certified start; empty for the scrambler-solver game."""
    certified_distance: int | None = None
    seat: str | None = None
    """The one seat the run's agent plays (the perfect team's player has the other); ``None``: every seat."""

    protocol: ClassVar[str] = MultiSuite.protocol
    stored_as: ClassVar[type[StoredRow]] = GameRow

    def cell(self) -> tuple[str, int, int, str, str, str]:
        return self.game, self.depth, self.instance, self.view, self.seat or "team", f"d{self.depth}"

    def check_part(self) -> None:
        if self.game not in GAMES:
            raise ValueError(f"game {str(self.game)[:40]!r} is not a multi-agent game ({', '.join(GAMES)})")


def plan_games(suite: MultiSuite) -> list[GameSpec]:
    """All games of ``suite``, instance-major (a partial run covers every game, view and depth evenly).
    Observer-actor and two-camera games start from the shipped certified instances of their depth."""
    check_plan_size(suite, "game")
    require_pettingzoo(f"suite {suite.name!r}")
    starts = {(name, d): _starts(suite, name, d, grid.instances)
              for name, grid in suite.games.items() for d in grid.depths}
    plan = []
    for k in range(max(grid.instances for grid in suite.games.values())):
        for name, grid in suite.games.items():
            for depth in grid.depths if k < grid.instances else ():
                for view in grid.views:
                    for seat in GAMES[name].plays:
                        key = f"{name}/{view.replace('/', '-')}/d{depth}/i{k:02d}" + (f"/{seat}" if seat else "")
                        start = starts[(name, depth)][k]
                        plan.append(GameSpec(
                            key=key, game=name, view=view, depth=depth, instance=k, metric=suite.metric,
                            seed=suite.seed, env_seed=agent_seed(suite.seed, "env/" + key),
                            agent_seed=agent_seed(suite.seed, key), options=dict(grid.options),
                            reset_options={"state": start} if start else {},
                            certified_distance=depth if start else None, seat=seat))
    return plan


def _starts(suite: MultiSuite, name: str, depth: int, n: int) -> list[str]:
    """The first ``n`` certified start states of ``depth`` (empty strings for the scrambler-solver game)."""
    if GAMES[name].scrambler is not None:
        return [""] * n
    starts = shipped_starts(depth, suite.metric)
    if len(starts) < n:
        raise SuiteError(f"suite {suite.name!r}: {name} at depth {depth} needs {n} certified instances; "
                         f"{len(starts)} ship for the {suite.metric}-turn metric (benchmarks/instances/)")
    return [s.state for s in starts[:n]]

