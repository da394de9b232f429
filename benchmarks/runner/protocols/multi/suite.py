"""Multi-agent suites as data: which games, through which views, at which depths, how many instances.

A multi-agent suite is a JSON file of schema ``cubebench-multi/1`` (``docs/runner.md``, "Multi-agent
suites") beside the episode and question suites; :func:`cubebench.runner.suites.load_suite` reads any kind,
dispatching on the file's ``schema``. Each entry of ``games`` names one of the multi-agent envs
(:data:`cubebench.envs.games.GAMES`, the games table) and its grid:

* ``views``: what the seeing seats see, ``<tier>/<form>`` (``symbolic/text``, ``face/image``...): the
  observer's view, the two cameras' form (``vertex/text`` or ``vertex/image``), the solver's view;
* ``depths``: the certified optimal distance of the start (observer-actor, two cameras: shipped
  certified instances, as the episode suites); for the scrambler-solver game, the scramble length k
  (at most the exact-distance oracle's range, 9 quarter or 8 half turns, and below ``max_cycles``);
* ``instances``: games per view and depth (the first k certified instances; scrambler-solver: k games);
* ``options``: the env's budgets (``max_moves``, ``max_messages``, ``max_message_chars``,
  ``max_cycles``, ``max_rotations`` where the env has them), checked by building the env.

Every seat is played by the run's agent (:mod:`.specs`: a model spec, or a calibration team), except the
seats ``--seat`` gives to a calibration team's player.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from cubebench.engine.metric import Metric
from cubebench.envs.games import BUDGET_FIELDS, GAMES
from cubebench.extras import install_hint
from cubebench.tasks.items import MAX_DEPTH

from ...suite_fields import SuiteError, check_int, check_ints, check_name, suite_metric

SCHEMA = "cubebench-multi/1"
MAX_INSTANCES = 1000
"""Games per view and depth a suite may ask for."""
MAX_IMAGE_SIZE = 1024
GAME_FIELDS = ("views", "depths", "instances", "options")
OPTIONS = (*BUDGET_FIELDS, "image_size")
"""Env settings a suite may set (those the game's env takes)."""


@dataclass(frozen=True)
class GameGrid:
    """One game's part of a suite: views x depths x instances, with the env's settings."""

    views: tuple[str, ...]
    depths: tuple[int, ...]
    instances: int
    options: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"views": list(self.views), "depths": list(self.depths), "instances": self.instances}
        return {**data, "options": dict(self.options)} if self.options else data


@dataclass(frozen=True)
class MultiSuite:
    """A multi-agent benchmark: games x views x depths x instances (see the module docstring)."""

    name: str
    games: dict[str, GameGrid]
    metric: Metric = "quarter"
    seed: int = 0
    description: str = ""
    protocol: ClassVar[str] = "multi"

    @property
    def depths(self) -> tuple[int, ...]:
        return tuple(sorted({d for grid in self.games.values() for d in grid.depths}))

    @property
    def size(self) -> int:
        """Number of games played (a scrambler-solver cell twice: the agent on each seat)."""
        return sum(len(g.views) * len(g.depths) * g.instances * len(GAMES[name].plays)
                   for name, g in self.games.items())

    @property
    def planned_at_start(self) -> int:
        """How many rows planning it makes at once (its size)."""
        return self.size

    def to_dict(self) -> dict[str, Any]:
        return {"schema": SCHEMA, "name": self.name, "description": self.description, "metric": self.metric,
                "seed": self.seed, "games": {name: grid.to_dict() for name, grid in self.games.items()}}


def env_kwargs(game: str, view: str, depth: int, metric: str, options: dict[str, Any]) -> dict[str, Any]:
    """The keyword arguments of ``make_multi_env`` for one cell of ``game``."""
    tier, _, form = view.partition("/")
    row = GAMES[game]
    kwargs: dict[str, Any] = {"metric": metric, **options, "form": form, row.depth_option: depth}
    if row.tier is None:
        kwargs["tier"] = tier
    return kwargs


def multi_suite_from_dict(data: dict[str, Any], source: str = "<dict>") -> MultiSuite:
    """Validate a multi-agent suite's JSON object and build the :class:`MultiSuite`."""
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        raise SuiteError(f"{source}: expected a JSON object with schema {SCHEMA!r}")
    known = {"schema", "name", "description", "metric", "seed", "games"}
    unknown = sorted(set(data) - known)
    if unknown:
        raise SuiteError(f"{source}: unknown field(s) {unknown}; allowed: {sorted(known)}")
    if "name" not in data or not isinstance(data.get("games"), dict) or not data["games"]:
        raise SuiteError(f"{source}: a multi-agent suite needs a name and a non-empty games object")
    metric = suite_metric(data.get("metric", "quarter"), source)
    suite = MultiSuite(name=check_name(data["name"], source),
                       games={name: _grid(name, entry, f"{source} games.{name}") for name, entry in data["games"].items()},
                       metric=metric, seed=check_int(data, "seed", source, minimum=0, default=0),
                       description=str(data.get("description", "")))
    for name, grid in suite.games.items():
        for view in grid.views:
            _check_env(name, view, grid, metric, f"{source} games.{name}")
    return suite


def _grid(name: str, entry: Any, where: str) -> GameGrid:
    if name not in GAMES:
        raise SuiteError(f"{where}: unknown game {name!r}; known: {', '.join(GAMES)}")
    if not isinstance(entry, dict):
        raise SuiteError(f"{where}: expected an object with {', '.join(GAME_FIELDS)}")
    unknown = sorted(set(entry) - set(GAME_FIELDS))
    missing = [k for k in ("views", "depths", "instances") if k not in entry]
    if unknown or missing:
        raise SuiteError(f"{where}: " + (f"unknown field(s) {unknown}; allowed: {list(GAME_FIELDS)}" if unknown
                                         else f"missing field(s) {missing}"))
    views = entry["views"]
    if not isinstance(views, list) or not views or not all(isinstance(v, str) and "/" in v for v in views) \
            or len(set(views)) != len(views):
        raise SuiteError(f"{where}: views must be a non-empty list of distinct '<tier>/<form>', got {views!r}")
    options = entry.get("options", {})
    if not isinstance(options, dict) or sorted(set(options) - set(OPTIONS)):
        raise SuiteError(f"{where}: options must be an object with keys among {list(OPTIONS)}, got {options!r}")
    size = options.get("image_size", 224)
    if isinstance(size, int) and size > MAX_IMAGE_SIZE:
        raise SuiteError(f"{where}: options.image_size must be <= {MAX_IMAGE_SIZE}, got {size}")
    instances = check_int(entry, "instances", where, minimum=1)
    if instances > MAX_INSTANCES:
        raise SuiteError(f"{where}: instances must be <= {MAX_INSTANCES}, got {instances}")
    return GameGrid(views=tuple(views), depths=check_ints(entry, "depths", where, minimum=1),
                    instances=instances, options=dict(options))


def require_pettingzoo(what: str) -> Any:
    """``make_multi_env``; a :class:`SuiteError` naming the ``multi`` extra where PettingZoo is missing."""
    try:
        from cubebench.envs.multi import make_multi_env
    except ModuleNotFoundError:
        raise SuiteError(f"{what}: multi-agent suites need PettingZoo: {install_hint('multi')}") from None
    return make_multi_env


def _check_env(name: str, view: str, grid: GameGrid, metric: str, where: str) -> None:
    """Build the game's env once per view (with the first depth): its own checks say what is wrong.  Without
    PettingZoo only the fields are checked here (the suite still reads, e.g. to be refused by name);
    planning it needs the extra (:func:`require_pettingzoo`)."""
    try:
        make_multi_env = require_pettingzoo(where)
    except SuiteError:
        return
    row = GAMES[name]
    if row.scrambler is not None:
        cycles = grid.options.get("max_cycles", row.budgets["max_cycles"])
        too_long = [k for k in grid.depths if k > MAX_DEPTH[metric] or (isinstance(cycles, int) and k >= cycles)]
        if too_long:
            raise SuiteError(f"{where}: scramble length(s) {too_long}: k must be at most {MAX_DEPTH[metric]} "
                             f"({metric} turns: the exact-distance oracle's range) and below max_cycles ({cycles}), "
                             "so every scramble ends and its exact distance is known")
    if row.tier is not None and not view.startswith(f"{row.tier}/"):
        raise SuiteError(f"{where}: every seat of {name} sees {row.tier} views: views are {row.tier}/text or "
                         f"{row.tier}/image, got {view!r}")
    try:
        make_multi_env(row.env_id, **env_kwargs(name, view, grid.depths[0], metric, grid.options)).close()
    except (ValueError, TypeError) as err:  # TypeError: an option this env does not take
        raise SuiteError(f"{where}: view {view!r}: {row.env_id}: {err}") from None


def restrict_multi(suite: MultiSuite, games: list[str] | None = None, depths: list[int] | None = None) -> MultiSuite:
    """The part of ``suite`` on the given games and depths (``None`` keeps all); the name says so."""
    if not games and not depths:
        return suite
    for key, chosen, have in (("games", games, tuple(suite.games)), ("depths", depths, suite.depths)):
        unknown = [c for c in chosen or () if c not in have]
        if unknown:
            raise SuiteError(f"suite {suite.name!r} has no {key} {unknown}; it has {list(have)}")
    kept = {}
    for name, grid in suite.games.items():
        keep = tuple(d for d in grid.depths if not depths or d in depths)
        if (not games or name in games) and keep:
            kept[name] = GameGrid(grid.views, keep, grid.instances, grid.options)
    if not kept:
        raise SuiteError(f"suite {suite.name!r}: no game of {games or list(suite.games)} at depths {depths}")
    parts = (["+".join(kept)] if games else []) + (["-".join(map(str, depths))] if depths else [])
    data = {**suite.to_dict(), "name": f"{suite.name}[{','.join(parts)}]",
            "games": {n: g.to_dict() for n, g in kept.items()}}
    return multi_suite_from_dict(data, source=f"{suite.name} restricted")
