"""The questions protocol's plan: question items, generated once when the run is planned.

Every item is keyed ``<test>/<variant>/d<depth>/i<index>`` (e.g. ``move-choice/image/d2/i007``).  A ladder's items
are keyed ``<test>/<variant>/run<r>/t<round>/d<level>/i<k>``; its first round is planned with the run, each later one
when the round before it has finished (:mod:`.ladders`).

The whole item (state, options, labels) is part of its :class:`ItemSpec` and so of the stored plan, so workers and
resumes never regenerate it, and a test that cannot build the items asked for stops the run before it starts.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar, Iterator, cast

from cubebench.agents.records import check_form
from cubebench.tasks.items import Item, ItemGenerationError
from cubebench.tasks.registry import TESTS
from cubebench.tasks.ladder import LEVEL_CAP, LadderRules, max_rounds

from ...planning import PlannedSpec, agent_seed, check_plan_size
from ...rows import StoredRow, Word
from ...suite_fields import SuiteError
from .suite import QuestionSuite, configured_test


@dataclass(frozen=True)
class ItemRow(StoredRow):
    """A question item's stored summary row, its columns under the protocol's words."""

    test = Word[str]("part")
    index = Word[int]("instance")


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
    """The suite's options of the test (:func:`.suite.configured_test`)."""
    ladder_run: int | None = None
    """The ladder this item belongs to (``None``: a fixed item)."""
    ladder_round: int | None = None
    """Which round of its ladder (0 first); the round's level is :attr:`depth`."""

    protocol: ClassVar[str] = QuestionSuite.protocol
    stored_as: ClassVar[type[StoredRow]] = ItemRow

    @classmethod
    def from_row(cls, data: Any, where: str) -> "ItemSpec":
        """The row read back, its item too: the workers rebuild the item from it."""
        spec = super().from_row(data, where)
        check_form(data["item"], Item, f"{where}.item")
        return cast("ItemSpec", spec)

    def check_part(self) -> None:
        if self.test not in TESTS or self.item.get("test") != self.test:
            raise ValueError(f"test {str(self.test)[:40]!r} is not a question test of this version, or not its "
                             "item's")

    def to_item(self) -> Item:
        return Item(**self.item)

    def cell(self) -> tuple[str, int, int, str, str, str]:
        return self.test, self.depth, self.index, self.variant, "item", f"d{self.depth}"


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

