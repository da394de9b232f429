"""Question suites as data: which question tests to ask, at which depths, how many items, which variants.

A question suite is a JSON file of schema ``cubebench-questions/1`` (``docs/runner.md``, "Question
suites"), beside the episode suites; :func:`cubebench.runner.suites.load_suite` reads any kind,
dispatching on the file's ``schema``.  The tests and their variants are looked up in
:data:`cubebench.tasks.registry.TESTS`, so a suite can only name what exists and the variant names
come from the test objects.

A test may instead be played as Inf-Bench's *ladder* (:mod:`cubebench.tasks.ladder`): its entry holds
``ladder: {"runs": 10, "max_level": 20}`` in place of ``depths`` and ``items``; each run of each variant
climbs from level 1, its rounds planned one at a time as the previous one finishes (:mod:`.ladders`).

A test's ``depth_items`` asks fewer items at the depths it names (``{"1": 18}``: where fewer distinct
items exist), its ``variant_items`` fewer in the variants it names (the first ones of the depth's items).  A test's ``options`` override the attributes it lists in :attr:`QuestionTest.settable` (today
``max_candidates``), on a copy of the registered test (:func:`configured_test`); anything else is
refused by name.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, ClassVar

from cubebench.engine.metric import Metric
from cubebench.tasks.items import QuestionTest
from cubebench.tasks.ladder import LadderRules
from cubebench.tasks.registry import TESTS
from cubebench.tasks.rules import RULES

from ...suite_fields import SuiteError, check_int, check_ints, check_name, suite_metric

SCHEMA = "cubebench-questions/1"
GRID_FIELDS = ("depths", "items", "depth_items", "variant_items", "variants", "options")
"""The fields of one test's entry in ``tests`` (fixed items)."""
LADDER_FIELDS = ("ladder", "variants", "options")
"""The fields of a test's entry played as a ladder."""
LADDER_KEYS = ("runs", "max_level")


@dataclass(frozen=True)
class QuestionGrid:
    """One test's part of a suite: its depths, items per depth, the variants each item is asked in."""

    depths: tuple[int, ...]
    items: int
    variants: tuple[str, ...]
    options: dict[str, Any] = field(default_factory=dict)
    depth_items: dict[int, int] = field(default_factory=dict)
    """Fewer items at some depths (``{1: 18}``: half-turn depth 1 has only 18 start states); each depth asks
    ``min(items, depth_items.get(depth, items))`` (:meth:`items_at`)."""

    variant_items: dict[str, int] = field(default_factory=dict)
    """Fewer items in some variants (``{"frames": 120}``: STARE asks fewer nets with visual simulation); a
    variant asks the first of its depth's items, the same ones the other variants ask."""

    def items_at(self, depth: int, variant: str | None = None) -> int:
        """How many items ``depth`` asks (in ``variant``; ``None``: the most any variant asks)."""
        n = min(self.items, self.depth_items.get(depth, self.items))
        return n if variant is None else min(n, self.variant_items.get(variant, n))

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"depths": list(self.depths), "items": self.items, "variants": list(self.variants)}
        if self.depth_items:
            data["depth_items"] = {str(d): n for d, n in self.depth_items.items()}
        if self.variant_items:
            data["variant_items"] = dict(self.variant_items)
        return {**data, "options": dict(self.options)} if self.options else data


@dataclass(frozen=True)
class LadderGrid:
    """A test played as a ladder: ``runs`` ladders per variant, each to at most ``max_level``."""

    runs: int
    max_level: int
    variants: tuple[str, ...]
    options: dict[str, Any] = field(default_factory=dict)

    @property
    def rules(self) -> LadderRules:
        return LadderRules(max_level=self.max_level)

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"ladder": {"runs": self.runs, "max_level": self.max_level},
                                "variants": list(self.variants)}
        return {**data, "options": dict(self.options)} if self.options else data


Grid = QuestionGrid | LadderGrid


@dataclass(frozen=True)
class QuestionSuite:
    """A question-style benchmark: tests x depths x items x variants (see the module docstring)."""

    name: str
    tests: dict[str, Grid]
    metric: Metric = "half"
    seed: int = 0
    description: str = ""
    protocol: ClassVar[str] = "questions"

    @property
    def depths(self) -> tuple[int, ...]:
        """Every depth some test asks fixed items at, ascending (a ladder's levels are not fixed)."""
        return tuple(sorted({d for grid in self.fixed.values() for d in grid.depths}))

    @property
    def size(self) -> int:
        """Number of fixed items played (an item asked in two variants counts twice); a ladder's items are
        planned as it climbs, so they are not counted here."""
        return sum(g.items_at(d, v) for g in self.fixed.values() for d in g.depths for v in g.variants)

    @property
    def planned_at_start(self) -> int:
        """How many rows planning it makes at once (its size, and each ladder's first round)."""
        return self.size + sum(grid.runs * len(grid.variants) for grid in self.ladders.values())

    @property
    def fixed(self) -> dict[str, QuestionGrid]:
        """The tests asked at fixed depths."""
        return {name: grid for name, grid in self.tests.items() if isinstance(grid, QuestionGrid)}

    @property
    def ladders(self) -> dict[str, LadderGrid]:
        """The tests played as ladders."""
        return {name: grid for name, grid in self.tests.items() if isinstance(grid, LadderGrid)}

    @property
    def rule_sets(self) -> tuple[str, ...]:
        """The answer rules every test of the suite can be asked under (:mod:`cubebench.tasks.rules`), the
        default (``paper``) first."""
        return tuple(r for r in RULES if all(r in TESTS[name].rule_sets for name in self.tests))

    def to_dict(self) -> dict[str, Any]:
        """The suite as it would be written in a suite file."""
        return {"schema": SCHEMA, "name": self.name, "description": self.description, "metric": self.metric,
                "seed": self.seed, "tests": {name: grid.to_dict() for name, grid in self.tests.items()}}


def question_suite_from_dict(data: dict[str, Any], source: str = "<dict>") -> QuestionSuite:
    """Validate a question suite's JSON object and build the :class:`QuestionSuite`."""
    if not isinstance(data, dict):
        raise SuiteError(f"{source}: a suite is a JSON object")
    if data.get("schema") != SCHEMA:
        raise SuiteError(f"{source}: unknown schema {data.get('schema')!r}; expected {SCHEMA!r}")
    known = {"schema", "name", "description", "metric", "seed", "tests"}
    unknown = sorted(set(data) - known)
    if unknown:
        raise SuiteError(f"{source}: unknown field(s) {unknown}; allowed: {sorted(known)}")
    missing = [k for k in ("name", "tests") if k not in data]
    if missing:
        raise SuiteError(f"{source}: missing field(s) {missing}")
    tests = data["tests"]
    if not isinstance(tests, dict) or not tests:
        raise SuiteError(f"{source}: tests must be a non-empty object mapping a test name to its grid")
    metric = suite_metric(data.get("metric", "half"), source)
    return QuestionSuite(
        name=check_name(data["name"], source),
        tests={name: _grid(name, entry, source, metric) for name, entry in tests.items()},
        metric=metric,
        seed=check_int(data, "seed", source, minimum=0, default=0),
        description=str(data.get("description", "")),
    )


def _grid(name: str, entry: Any, source: str, metric: Metric) -> Grid:
    """One test's entry, checked against the registered test's variants and options."""
    if name not in TESTS:
        raise SuiteError(f"{source}: unknown test {name!r}; known: {', '.join(TESTS)}")
    where = f"{source} tests.{name}"
    if not isinstance(entry, dict):
        raise SuiteError(f"{where}: expected an object with {', '.join(GRID_FIELDS)} (or {', '.join(LADDER_FIELDS)})")
    if "ladder" in entry:
        return _ladder(name, entry, where, metric)
    unknown = sorted(set(entry) - set(GRID_FIELDS))
    missing = [k for k in ("depths", "items") if k not in entry]
    if unknown or missing:
        raise SuiteError(f"{where}: " + (f"unknown field(s) {unknown}; allowed: {list(GRID_FIELDS)}" if unknown
                                         else f"missing field(s) {missing}"))
    test = TESTS[name]
    depths = check_ints(entry, "depths", where, minimum=1)
    variants = _variants(test, entry.get("variants"), where)
    return QuestionGrid(depths=depths,
                        items=check_int(entry, "items", where, minimum=1),
                        variants=variants,
                        options=_options(test, entry.get("options", {}), where),
                        depth_items=_depth_items(entry.get("depth_items", {}), depths, where),
                        variant_items=_variant_items(entry.get("variant_items", {}), variants, where))


def _variant_items(value: Any, variants: tuple[str, ...], where: str) -> dict[str, int]:
    """``variant_items``: an object from some of the entry's variants to item counts >= 1."""
    if not isinstance(value, dict):
        raise SuiteError(f"{where}: variant_items must be an object mapping a variant to its number of items, "
                         f"got {value!r}")
    for key, n in value.items():
        if key not in variants:
            raise SuiteError(f"{where}: variant_items names {key!r}, which is not one of the variants {list(variants)}")
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise SuiteError(f"{where}: variant_items[{key!r}] must be an integer >= 1, got {n!r}")
    return dict(value)


def _depth_items(value: Any, depths: tuple[int, ...], where: str) -> dict[int, int]:
    """``depth_items``: an object from some of the entry's depths (as strings, JSON's keys) to item counts >= 1."""
    if not isinstance(value, dict):
        raise SuiteError(f"{where}: depth_items must be an object mapping a depth to its number of items, "
                         f"got {value!r}")
    out: dict[int, int] = {}
    for key, n in value.items():
        depth = int(key) if isinstance(key, str) and key.isdigit() else None
        if depth not in depths:
            raise SuiteError(f"{where}: depth_items names {key!r}, which is not one of the depths {list(depths)}")
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise SuiteError(f"{where}: depth_items[{key!r}] must be an integer >= 1, got {n!r}")
        out[depth] = n
    return out


def _ladder(name: str, entry: dict[str, Any], where: str, metric: Metric) -> LadderGrid:
    """A ladder entry: runs and top level, checked against what the test can build."""
    unknown = sorted(set(entry) - set(LADDER_FIELDS))
    ladder = entry["ladder"]
    if unknown:
        raise SuiteError(f"{where}: unknown field(s) {unknown} beside ladder; allowed: {list(LADDER_FIELDS)}")
    if not isinstance(ladder, dict) or sorted(ladder) != sorted(LADDER_KEYS):
        raise SuiteError(f"{where}: ladder must be an object with exactly {list(LADDER_KEYS)}, got {ladder!r}")
    test = TESTS[name]
    runs = check_int(ladder, "runs", f"{where}.ladder", minimum=1)
    top = check_int(ladder, "max_level", f"{where}.ladder", minimum=1)
    try:
        test.check_depth(top, metric)
    except ValueError as err:
        raise SuiteError(f"{where}: {name} cannot be a ladder to level {top}: {err}") from None
    return LadderGrid(runs=runs, max_level=top, variants=_variants(test, entry.get("variants"), where),
                      options=_options(test, entry.get("options", {}), where))


def _variants(test: QuestionTest, value: Any, where: str) -> tuple[str, ...]:
    """The variants asked (default: all of the test's), each one of the test's, once."""
    if value is None:
        return tuple(test.variants)
    if not isinstance(value, list) or not value:
        raise SuiteError(f"{where}: variants must be a non-empty list, got {value!r}")
    bad = [v for v in value if v not in test.variants]
    if bad:
        raise SuiteError(f"{where}: unknown variant(s) {bad}; {test.name} has {list(test.variants)}")
    if len(set(value)) != len(value):
        raise SuiteError(f"{where}: variants lists a value twice: {value}")
    return tuple(value)


def option_defaults(test: QuestionTest) -> dict[str, Any]:
    """The options a suite may set on ``test`` (its :attr:`~QuestionTest.settable` attributes), with their
    current values."""
    return {n: getattr(test, n) for n in test.settable}


def _options(test: QuestionTest, value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise SuiteError(f"{where}: options must be an object, got {value!r}")
    allowed = option_defaults(test)
    for key, v in value.items():
        if key not in allowed:
            raise SuiteError(f"{where}: unknown option {key!r}; {test.name} takes {sorted(allowed) or 'none'}")
        default = allowed[key]
        kinds = (int, float) if type(default) is float else (type(default),)
        if type(v) not in kinds:
            raise SuiteError(f"{where}: option {key} must be of type {type(default).__name__}, got {v!r}")
        if key == "max_candidates" and v < 1:
            raise SuiteError(f"{where}: option max_candidates must be >= 1, got {v!r}")
        if key == "confidence_gate" and not 0 <= v <= 1:
            raise SuiteError(f"{where}: option confidence_gate must be a number from 0 to 1, got {v!r}")
    return dict(value)


def configured_test(name: str, options: dict[str, Any] | None = None, rules: str | None = None) -> QuestionTest:
    """The registered test ``name`` with a suite's ``options`` set and asking under answer ``rules`` (``None``:
    the test's own, ``strict``), on a copy: the registry's stays as is."""
    test = TESTS[name]
    if not options and rules in (None, test.rules):
        return test
    test = copy.copy(test)
    for key, value in (options or {}).items():
        setattr(test, key, value)
    if rules is not None:
        test.check_rules(rules)
        test.rules = rules
    return test


def _restrict_variants(suite: QuestionSuite, tests: list[str] | None, variants: list[str]) -> QuestionSuite:
    """``suite`` asking each test only in the named variants it has (its other tests dropped); a variant none of
    the (named) tests asks in the suite is refused with each test's variants."""
    grids = {n: g for n, g in suite.tests.items() if not tests or n in tests}
    asked = {v for g in grids.values() for v in g.variants}
    unknown = [v for v in variants if v not in asked]
    if unknown:
        have = "; ".join(f"{n} has {list(g.variants)}" for n, g in grids.items())
        raise SuiteError(f"suite {suite.name!r} asks no variant {unknown} in {'those tests' if tests else 'any test'}: "
                         f"{have}")
    kept: dict[str, Any] = {}
    for name, grid in suite.tests.items():
        keep = [v for v in grid.variants if v in variants]
        if keep:
            kept[name] = {**grid.to_dict(), "variants": keep}
            if "variant_items" in kept[name]:
                kept[name]["variant_items"] = {v: n for v, n in kept[name]["variant_items"].items() if v in keep}
                if not kept[name]["variant_items"]:
                    del kept[name]["variant_items"]
    data = {**suite.to_dict(), "name": f"{suite.name}[{','.join(variants)}]", "tests": kept}
    return question_suite_from_dict(data, source=f"{suite.name} restricted")


def restrict_questions(suite: QuestionSuite, tests: list[str] | None = None,
                       depths: list[int] | None = None, variants: list[str] | None = None) -> QuestionSuite:
    """The part of ``suite`` on the given tests, depths and variants (``None`` keeps all); the name says so.

    A test none of whose depths (or variants) is kept is dropped; a test or depth the suite does not have is
    refused, and so is a variant that no kept test asks in this suite (the message names each test's)."""
    if variants:
        suite = _restrict_variants(suite, tests, variants)
    if not tests and not depths:
        return suite
    for key, chosen, have in (("tests", tests, tuple(suite.tests)), ("depths", depths, suite.depths)):
        unknown = [c for c in chosen or () if c not in have]
        if unknown:
            raise SuiteError(f"suite {suite.name!r} has no {key} {unknown}; it has {list(have)}")
    kept: dict[str, Grid] = {}
    for name, grid in suite.tests.items():
        if tests and name not in tests:
            continue
        if isinstance(grid, LadderGrid):  # a ladder has no fixed depths: --depths leaves it out
            if not depths:
                kept[name] = grid
            continue
        keep = tuple(d for d in grid.depths if not depths or d in depths)
        if keep:
            kept[name] = QuestionGrid(keep, grid.items, grid.variants, grid.options,
                                      {d: n for d, n in grid.depth_items.items() if d in keep}, grid.variant_items)
    if not kept:
        raise SuiteError(f"suite {suite.name!r}: no test of {tests or list(suite.tests)} asks at depths {depths}")
    parts = ["+".join(t for t in suite.tests if t in tests)] if tests else []
    parts += ["-".join(str(d) for d in suite.depths if d in depths)] if depths else []
    data = {**suite.to_dict(), "name": f"{suite.name}[{','.join(parts)}]",
            "tests": {n: g.to_dict() for n, g in kept.items()}}
    return question_suite_from_dict(data, source=f"{suite.name} restricted")
