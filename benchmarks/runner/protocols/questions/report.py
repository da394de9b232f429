"""The tables of a question run: one per test, a row per (depth, variant), the test's own metrics.

Each row's figures are the test's :meth:`~cubebench.tasks.items.QuestionTest.summarize` over the
``score`` of the row's finished items (``record.config["score"]``): rates are printed as
``value [lo, hi]`` with their Wilson 95 % interval.  Beside them: how many items finished, how many
ended in ``error`` (a failed model call or a broken test: left out of the metrics, since nothing
was asked of the model's reasoning; ``--retry-errors`` asks them again), and how many replies were
not in the run's answer format (its rules': :mod:`cubebench.tasks.rules`).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, cast

from cubebench.agents.records import EpisodeRecord
from cubebench.tasks.ladder import CHANCE_TOLERANCE, EXACT_TOP, chance_score
from cubebench.tasks.metrics import Proportion
from cubebench.tasks.registry import TESTS

from ...store import RunStore, StoreDamaged
from ...suite_fields import SuiteError
from ...tables import Table
from .ladders import LadderProgress, ladder_progress
from .plan import ItemRow
from .suite import QuestionSuite, question_suite_from_dict

Cell = tuple[str, int, str]
"""(test, depth, variant)."""


def question_tables(store: RunStore, suite: dict[str, Any]) -> list[Table]:
    """One table per test of ``suite`` with finished items, in the suite's order; a ladder test's rows are
    the levels its ladders reached, and the ladders' scores come first in their own table."""
    cells = question_cells(store)
    try:
        grids = [(name, grid.get("depths"), list(grid["variants"])) for name, grid in suite["tests"].items()]
    except (KeyError, TypeError, AttributeError) as err:
        raise StoreDamaged(f"{store.path} is damaged: its question suite does not read back ({err!r})") from None
    tables = [ladder_table(_parsed(store, suite), store)] if any(depths is None for _, depths, _ in grids) else []
    for name, depths, variants in grids:
        levels = depths if depths is not None else sorted({d for (t, d, _) in cells if t == name})
        keys = [(name, d, v) for d in levels for v in variants if (name, d, v) in cells]
        if keys:
            tables.append(table_of(name, [(k, cells[k]) for k in keys]))
    return tables


def question_cells(store: RunStore) -> dict[Cell, list[EpisodeRecord]]:
    """Every stored item's record, by the (test, depth, variant) cell it names (:class:`StoreDamaged` when one
    names none)."""
    cells: dict[Cell, list[EpisodeRecord]] = defaultdict(list)
    for key, record in store.records():
        cells[_cell(store, key, record.config)].append(record)
    return cells


def _parsed(store: RunStore, suite: dict[str, Any]) -> QuestionSuite:
    """The run's suite as an object (what replaying its ladders needs)."""
    try:
        return question_suite_from_dict(suite, source=str(store.path))
    except SuiteError as err:
        raise StoreDamaged(f"{store.path} is damaged: its question suite does not read back ({err})") from None


def ladder_table(suite: QuestionSuite, store: RunStore) -> Table:
    """The ladders' scores: per test and variant, the mean final level over its runs (the Inf-Bench metric),
    with the exact level a uniform random answerer reaches on average beside it."""
    progress = ladder_progress(suite, store.plan(), cast(list[ItemRow], store.rows()))
    rows: list[list[str]] = []
    problems: list[str] = []
    for name, grid in suite.ladders.items():
        chance = TESTS[name].chance
        expected = f"{float(chance_score(chance, grid.rules)):.3f}" if chance is not None else "-"
        for variant in grid.variants:
            runs = [progress[(name, variant, r)] for r in range(grid.runs)]
            ended = [p.ladder.score for p in runs if p.state == "finished"]
            score = ladder_score(runs)
            mean = f"{score:.2f}" if score is not None else "-"
            spread = f"{min(ended)}-{max(ended)}" if ended else "-"
            rows.append([name, variant, f"{len(ended)}/{len(runs)}", mean, spread,
                         str(sum(p.ladder.topped for p in runs)), expected,
                         str(sum(p.state == "stalled" for p in runs)), " ".join(_run_text(p) for p in runs)])
            broken = [r for r, p in enumerate(runs) if p.state == "inconsistent"]
            if broken:
                problems.append(f"{name}/{variant}: run(s) {broken} inconsistent: a stored round's level is not where "
                                "the replayed ladder stands (a damaged record was played again with another answer); "
                                "those ladders are not continued or scored")
    note = ("score: the mean level the finished ladders ended at (Inf-Bench's R); topped: ladders that passed the "
            "top level (the suite's cap); chance: the mean score of uniform random answers (exact for a top up to "
            f"{EXACT_TOP}, within {CHANCE_TOLERANCE:g} above: the chance of climbing further shrinks geometrically); stalled: ladders held by an item "
            "that ended in error (`--retry-errors` asks it again); per run: final level, where it stands (+), or ! "
            "(inconsistent)")
    return Table(title="ladders (Inf-Bench's score: the level reached, mean over runs)",
                 header=["test", "variant", "finished", "score", "range", "topped", "chance", "stalled", "per run"],
                 rows=rows, note="; ".join([note, *problems]))


def ladder_score(runs: list[LadderProgress]) -> float | None:
    """Inf-Bench's score of one test and variant: the mean level its finished ladders ended at (``None``: none
    finished)."""
    ended = [p.ladder.score for p in runs if p.state == "finished"]
    return sum(ended) / len(ended) if ended else None


def _run_text(p: LadderProgress) -> str:
    return {"finished": str(p.ladder.score), "inconsistent": "!"}.get(p.state, f"{p.ladder.level}+")


def _cell(store: RunStore, key: str, config: dict[str, Any]) -> Cell:
    """The (test, depth, variant) an item's record names; :class:`StoreDamaged` when it names none."""
    cell = (config.get("test"), config.get("depth"), config.get("variant"))
    if not (isinstance(cell[0], str) and isinstance(cell[1], int) and isinstance(cell[2], str)):
        raise StoreDamaged(f"{store.path}: item {key}: its record does not name its test, depth and variant; "
                           f"`cubebench run --resume {store.path}` cannot repair it, `cubebench export` still reads it")
    return cell  # type: ignore[return-value]


def table_of(name: str, cells: list[tuple[Cell, list[EpisodeRecord]]]) -> Table:
    """The table of one test: a row per cell, the union of the cells' metric columns in first-seen order."""
    figures, problems = [], []
    for _, records in cells:
        found, problem = cell_metrics(name, records)
        figures.append(found)
        problems += [problem] if problem else []
    columns = list(dict.fromkeys(col for found in figures for col in found))
    rows = []
    for ((_, depth, variant), records), found in zip(cells, figures):
        replies = sum(r.n_steps for r in records)
        rows.append([str(depth), variant, str(len(records)), *(cell_text(found.get(col)) for col in columns),
                     str(sum(r.status == "error" for r in records)),
                     f"{sum(r.parse_errors for r in records)}/{replies}"])
    note = ("rates: value [Wilson 95% interval]; errors: items ended by a failed call or a broken test, left out "
            "of the metrics (`cubebench run --resume RUN --retry-errors` asks them again); malformed: replies off "
            "the run's answer format / replies")
    return Table(title=f"{name} (by depth and variant)", header=["depth", "variant", "items", *columns, "errors",
                                                                 "malformed"],
                 rows=rows, note="; ".join([note, *dict.fromkeys(problems)]))


def cell_metrics(name: str, records: list[EpisodeRecord]) -> tuple[dict[str, Any], str | None]:
    """The test's metrics over one cell's scored items (``error`` items are left out), or nothing and why."""
    return summarize(name, [r.config["score"] for r in records
                            if r.status != "error" and r.config.get("score") is not None])


def summarize(name: str, scores: list[dict[str, Any]]) -> tuple[dict[str, Any], str | None]:
    """The test's metrics over ``scores``, or nothing and why (an unknown test, or its summary failing)."""
    if not scores:
        return {}, None
    test = TESTS.get(name)
    if test is None:
        return {}, f"{name} is not a known question test here: no metrics"
    try:
        return dict(test.summarize(scores)), None
    except Exception as err:  # noqa: BLE001 - a report never fails on one test's figures
        return {}, f"{name}'s metrics failed: {type(err).__name__}: {err}"


def cell_text(value: Any) -> str:
    """A metric as the tables print it: a proportion with its interval, a float to 3 places, ``-`` for none."""
    if isinstance(value, Proportion):
        return value.format()
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)

