"""The planner: a suite expanded into keyed episodes (or question items), in a stable order.

Every episode has a key built from what identifies it in the grid,
``<tier>/d<depth>/i<instance>/<reward>/<setting>`` (e.g.
``face/d8/i03/none/ideal``); every question item ``<test>/<variant>/d<depth>/i<index>``
(e.g. ``move-choice/image/d2/i007``).  The key is the result store's unique key, so a
resumed run recognises finished episodes whatever order they ran in.

A multi-agent game is keyed ``<game>/<tier>-<form>/d<depth>/i<instance>`` (e.g.
``observer-actor/face-text/d2/i01``); its start is a shipped certified instance.  The scrambler-solver
game starts solved (its depth is the scramble length) and is planned twice, once per seat the agent
plays against the perfect player on the other (``.../i00/solver_0``, ``.../i00/scrambler_0``).

A ladder's items are keyed ``<test>/<variant>/run<r>/t<round>/d<level>/i<k>``; its first round is planned
with the run, each later one when the round before it has finished (:mod:`.ladders`).

Question items are generated here, once, when the run is planned: the whole item (state, options,
labels) is part of its :class:`ItemSpec` and so of the stored plan, so workers and resumes never
regenerate it, and a test that cannot build the items asked for stops the run before it starts.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar, Iterator, cast

from cubebench.envs.games import GAMES
from cubebench.tasks.items import Item, ItemGenerationError
from cubebench.tasks.ladder import LEVEL_CAP, LadderRules, max_rounds

from .instances import instance_refs, shipped_starts
from .multi_suites import MultiSuite, require_pettingzoo
from .question_suites import QuestionSuite, configured_test
from .suites import Suite, SuiteError


@dataclass(frozen=True)
class PlannedSpec:
    """What every plan row has: the name of its protocol and its JSON form.  Each kind also has ``cell()``: its
    store summary columns tier, depth, instance, reward, setting, horizon (each protocol's meaning of them: the
    store's module docstring)."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    protocol: ClassVar[str]
    """The name of the protocol that plays it (its suite class's ``protocol``)."""


@dataclass(frozen=True)
class EpisodeCell:
    """Where an episode sits in its suite's grid: its key, tier, depth, instance, reward, tool setting and horizon.
    A plan row (:class:`EpisodeSpec`) and a stored summary row (``cubebench.runner.store.EpisodeRow``) begin with
    it, so the two name the cell alike."""

    key: str
    tier: str
    depth: int
    instance: int
    reward: str
    setting: str
    horizon: str


@dataclass(frozen=True)
class EpisodeSpec(PlannedSpec, EpisodeCell):
    """One episode of a run: the grid cell, the instance and the seeds."""

    metric: str
    max_steps: int
    env_seed: int
    agent_seed: int
    source: str
    reset_options: dict[str, Any] = field(default_factory=dict)
    """What ``env.reset(options=...)`` gets: ``{"instance": k}``, ``{"state": ...}`` or ``{"depth": d}``."""
    certified_distance: int | None = None
    """The instance's certified optimal distance (certified sources), else ``None``."""
    max_moves: int | None = None
    """The episode's move budget (the suite's at this depth); ``None`` in plans stored before budgets: the default applies."""
    max_rotations: int | None = None
    """The episode's view-rotation budget on the partial tiers (the suite's)."""

    protocol: ClassVar[str] = Suite.protocol

    def cell(self) -> tuple[str, int, int, str, str, str]:
        return self.tier, self.depth, self.instance, self.reward, self.setting, self.horizon


def episode_key(tier: str, depth: int, instance: int, reward: str, setting: str) -> str:
    """The stable key of a grid cell's episode."""
    return f"{tier}/d{depth}/i{instance:02d}/{reward}/{setting}"


def agent_seed(suite_seed: int, key: str) -> int:
    """A reproducible seed for the agent of one episode (independent of scheduling order)."""
    return int.from_bytes(hashlib.sha256(f"agent/{suite_seed}/{key}".encode()).digest()[:4], "big") & 0x7FFFFFFF


MAX_PLANNED = 50_000
"""The most episodes, items or games a plan holds at once: a run's plan, an Inspect task's dataset, a verifiers
environment's rows are made in memory before the first is played (question items: about 1 ms and up to 13 KB each,
measured on ``cube-bench`` and ``stare``).  16 times the largest shipped suite (``cube-bench``, 3,058 items); an
export (``cubebench export-tasks``) streams its rows to files and has no such limit."""


def planned_at_start(suite: Suite | QuestionSuite | MultiSuite) -> int:
    """How many specs planning ``suite`` makes at once: its size, and a question suite's first ladder rounds."""
    ladders = suite.ladders.values() if isinstance(suite, QuestionSuite) else ()
    return suite.size + sum(grid.runs * len(grid.variants) for grid in ladders)


def check_plan_size(suite: Suite | QuestionSuite | MultiSuite, unit: str) -> None:
    """:class:`SuiteError` at once, before anything is made, when ``suite`` plans more than :data:`MAX_PLANNED`
    of ``unit`` (``episode``, ``item``, ``game``)."""
    n = planned_at_start(suite)
    if n > MAX_PLANNED:
        raise SuiteError(f"suite {suite.name!r} plans {n:,} {unit}s; a plan holds at most {MAX_PLANNED:,} (made in "
                         "memory before the first is played): ask for fewer, or split the suite into several runs")


def plan_episodes(suite: Suite, source: str) -> list[EpisodeSpec]:
    """All episodes of ``suite``; depth-major so a partial run covers the easy depths first."""
    check_plan_size(suite, "episode")
    refs = instance_refs(suite, source)
    plan = []
    for depth in suite.depths:
        for k, ref in enumerate(refs[depth]):
            for tier in suite.tiers:
                for reward in suite.rewards:
                    for setting in suite.tool_settings:
                        key = episode_key(tier, depth, k, reward, setting)
                        plan.append(EpisodeSpec(
                            key=key, tier=tier, depth=depth, instance=k, reward=reward, setting=setting,
                            horizon=suite.horizon(depth), metric=suite.metric, max_steps=suite.max_steps,
                            env_seed=ref.seed, agent_seed=agent_seed(suite.seed, key), source=source,
                            reset_options=ref.reset_options,
                            certified_distance=ref.start.distance if ref.start else (depth if source == "certified" else None),
                            max_moves=suite.move_budget(depth), max_rotations=suite.max_rotations,
                        ))
    return plan


@dataclass(frozen=True)
class ItemSpec(PlannedSpec):
    """One question item of a run, as asked in one variant: the whole item travels with it."""

    key: str
    test: str
    variant: str
    depth: int
    index: int
    metric: str
    seed: int
    agent_seed: int
    item: dict[str, Any]
    """The :class:`~cubebench.tasks.items.Item`'s fields, as JSON gives them back."""
    options: dict[str, Any] = field(default_factory=dict)
    """The suite's options of the test (:func:`~.question_suites.configured_test`)."""
    ladder_run: int | None = None
    """The ladder this item belongs to (``None``: a fixed item)."""
    ladder_round: int | None = None
    """Which round of its ladder (0 first); the round's level is :attr:`depth`."""

    protocol: ClassVar[str] = QuestionSuite.protocol

    def to_item(self) -> Item:
        return Item(**self.item)

    def cell(self) -> tuple[str, int, int, str, str, str]:
        return self.test, self.depth, self.index, self.variant, "item", f"d{self.depth}"


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

    def cell(self) -> tuple[str, int, int, str, str, str]:
        return self.game, self.depth, self.instance, self.view, self.seat or "team", f"d{self.depth}"


Spec = EpisodeSpec | ItemSpec | GameSpec
"""What a run plans and its workers play."""


def protocol_of(spec: Spec) -> str:
    """The name of the protocol a planned spec belongs to (``episodes``, ``questions`` or ``multi``)."""
    return spec.protocol


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


def item_key(test: str, variant: str, depth: int, index: int) -> str:
    """The stable key of a question item asked in one variant."""
    return f"{test}/{variant}/d{depth}/i{index:03d}"


def plan_items(suite: QuestionSuite) -> list[ItemSpec]:
    """All fixed items of ``suite``, generated now, then the first round of every ladder.  Fixed items go
    index-major, so a partial run (``--limit``, a cost cap) covers every test, depth and variant evenly.
    Every variant of an item asks the same item."""
    check_plan_size(suite, "item")
    ladders = [spec for name, grid in suite.ladders.items() for variant in grid.variants
               for run in range(grid.runs) for spec in ladder_round(suite, name, variant, run, 0, 1)]
    return _plan_fixed(suite) + ladders


def _plan_fixed(suite: QuestionSuite) -> list[ItemSpec]:
    cells = {(name, depth): _generate(suite, name, depth)
             for name, grid in suite.fixed.items() for depth in grid.depths}
    plan: list[ItemSpec] = []
    for index in range(max((grid.items for grid in suite.fixed.values()), default=0)):
        for name, grid in suite.fixed.items():
            for depth in grid.depths:
                for variant in (v for v in grid.variants if index < grid.items_at(depth, v)):
                    plan.append(_fixed_spec(suite, name, variant, depth, index, cells[(name, depth)][index]))
    return plan


def iter_fixed_items(suite: QuestionSuite, name: str) -> Iterator[ItemSpec]:
    """The fixed items of one test of ``suite``, depth by depth, made one at a time (the same specs as
    :func:`plan_items` plans, in another order): an export of many items holds one item at a time."""
    grid = suite.fixed[name]
    for depth in grid.depths:
        n = grid.items_at(depth)
        try:
            items = configured_test(name, grid.options).iter_items(depth, n, seed=suite.seed, metric=suite.metric)
            for index, item in enumerate(items):
                for variant in (v for v in grid.variants if index < grid.items_at(depth, v)):
                    yield _fixed_spec(suite, name, variant, depth, index, _plain(item))
        except (ItemGenerationError, ValueError, TypeError) as err:
            raise SuiteError(f"suite {suite.name!r}: cannot generate {n} {name} item(s) at depth {depth}: "
                             f"{err}") from None


def _fixed_spec(suite: QuestionSuite, name: str, variant: str, depth: int, index: int,
                item: dict[str, Any]) -> ItemSpec:
    key = item_key(name, variant, depth, index)
    return ItemSpec(key=key, test=name, variant=variant, depth=depth, index=index, metric=suite.metric,
                    seed=suite.seed, agent_seed=agent_seed(suite.seed, key), item=item,
                    options=dict(suite.fixed[name].options))


def _plain(item: Any) -> dict[str, Any]:
    """An item as plain JSON data (what the store holds and workers rebuild)."""
    return cast(dict[str, Any], json.loads(json.dumps(asdict(item))))


LADDER_BLOCK = 8
"""Item indices reserved per ladder round (a multiple of 4: a round's first four items use every option slot)."""
MAX_ROUNDS = max_rounds(LadderRules(max_level=LEVEL_CAP))
"""Rounds one ladder may play before its run's indices would meet the next run's: the most a ladder to the
hard cap (level 1000) can play, 5,005."""


def ladder_round(suite: QuestionSuite, name: str, variant: str, run: int, round_: int, level: int) -> list[ItemSpec]:
    """The items of one round of one ladder, generated now: each (variant, run, round) asks its own block of
    item indices at the round's level, so no two rounds share items, no item is asked in two variants (a
    model shown the image and the text of one item could pair them) and a resume regenerates nothing."""
    if round_ >= MAX_ROUNDS:
        raise SuiteError(f"ladder {name}/{variant}/run{run}: more than {MAX_ROUNDS} rounds")
    grid = suite.ladders[name]
    ladder = grid.variants.index(variant) * grid.runs + run
    first = LADDER_BLOCK * (ladder * MAX_ROUNDS + round_)
    items = _generate(suite, name, level, grid.rules.per_level, first)
    specs = []
    for k, item in enumerate(items):
        key = f"{name}/{variant}/run{run:02d}/t{round_:02d}/d{level}/i{k}"
        specs.append(ItemSpec(key=key, test=name, variant=variant, depth=level, index=first + k,
                              metric=suite.metric, seed=suite.seed, agent_seed=agent_seed(suite.seed, key), item=item,
                              options=dict(grid.options), ladder_run=run, ladder_round=round_))
    return specs


def _generate(suite: QuestionSuite, name: str, depth: int, n: int | None = None, first: int = 0) -> list[dict[str, Any]]:
    """The items of one test and depth as plain JSON data (what the store holds and workers rebuild)."""
    grid = suite.tests[name]
    n = n if n is not None else suite.fixed[name].items_at(depth)
    try:
        items = configured_test(name, grid.options).items(depth, n, seed=suite.seed, metric=suite.metric, first=first)
        return [_plain(item) for item in items]
    except (ItemGenerationError, ValueError, TypeError) as err:
        raise SuiteError(f"suite {suite.name!r}: cannot generate {n} {name} item(s) at depth {depth}: "
                         f"{err}") from None
