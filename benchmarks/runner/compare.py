"""``cubebench compare RUN [RUN ...]``: a paper's published tables beside the runs of its suite.

For a question run of a paper's suite (``cube-bench``, ``inf-bench``, ``stare`` and their smoke suites),
each of the paper's tables (:mod:`.published`: its number, section and the paper cited) is printed with
the paper's rows as printed and one row per run below them, in the same metric, unit and denominator:
a run's figure is the report's own (:func:`.protocols.questions.report.cell_metrics` for a test's cell,
:func:`.protocols.questions.report.ladder_score` for a ladder), converted to the paper's unit (a rate 0.25 is 25.0
in a percent column) and, for a rate, followed by its ``k/n``, so the denominator is on the page.  The
oracle and random runs are rows of their own; when none is given, the row says it is absent.  What the numbers
mean is kept the paper's:

* each column stands beside the variant that carries the paper's controls for that table (Cube Bench's Table 1
  beside ``uniform-prior`` and ``polarity``, Table 6 beside ``abstain-controlled``, STARE's ✓VSim beside
  ``frames-interleaved``); the cells of the test's variants without them are listed under the table as
  uncontrolled;
* the chance-corrected metric leads (κ before macro-F1 and micro accuracy; where the paper reports none, the
  report's balanced accuracy as a column of its own before STARE's F1 of Yes);
* below the runs, the best score a constant answer reaches on the run's own items, per column
  (:mod:`.protocols.questions.constant_answers`), so a figure a reply that never changes also reaches reads as what it is.

A run's cells that no column stands beside are listed under the table, and the paper's figures that a set of
runs can give (Cube Bench's Figure 3: Pearson r of move-effect κ against closed-loop TA over the runs'
models) follow the tables.  Episode runs of the CubeBench paper's suites (``exp1``, ``exp2``, ``full``,
``smoke``) are set beside its Exp 1 and Exp 2 tables with their blind floors (:mod:`.protocols.episodes.compare_episodes`).

Bad input (a run of another suite, runs of different suites, a missing or damaged file) is one line and
exit status 2 (:class:`CompareError`, or the store's own errors through the command's guard).
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Sequence

from cubebench.agents.llm import PROVIDERS
from cubebench.tasks.ladder import chance_score
from cubebench.tasks.metrics import Proportion
from cubebench.tasks.registry import TESTS

from .answering import decoding_text
from .execute import stored_rules
from .protocols import EpisodesProtocol, protocol_named
from .protocols.episodes.compare_episodes import EpisodeView, episode_header, episode_table, read_episode_view
from .protocols.questions.constant_answers import DESCRIPTIVE, Level, constant_ladder, constant_levels
from .protocols.questions.ladders import ladder_progress
from .protocols.questions.plan import ItemSpec
from .protocols.questions.report import Cell, cell_metrics, ladder_score, question_cells
from .protocols.questions.suite import QuestionSuite, question_suite_from_dict
from .published import NOT_REPORTED, Column, Figure, Paper, PublishedError, PublishedTable, load_papers, paper_for
from .specs import recorded_training
from .stats import as_float
from .store import open_run
from .suite_fields import SuiteError
from .tables import Table, render_markdown, render_text
from .trained import Training

CALIBRATION = ("oracle", "random")
"""The built-in answerers whose rows every comparison shows (or flags as absent)."""
COMPARE_FORMATS = ("text", "md")


class CompareError(Exception):
    """Runs that cannot be set beside a paper's tables (printed as one line, exit status 2)."""


@dataclass
class RunView:
    """What compare reads of one run: its suite and agent, and the report's figures per cell and ladder."""

    path: Path
    suite: dict[str, Any]
    agent: str
    decoding: str
    finished: int
    planned: int
    metrics: dict[Cell, dict[str, Any]] = field(default_factory=dict)
    items: dict[Cell, int] = field(default_factory=dict)
    ladders: dict[tuple[str, str], tuple[float | None, int, int]] = field(default_factory=dict)
    """(test, variant) -> (mean score, finished ladders, ladders)."""
    chance: dict[str, float] = field(default_factory=dict)
    """A ladder test's exact chance score under this run's rules."""
    label: str = ""
    rules: str = "strict"
    """The answer rules the run asked under (a run from before rules: ``strict``)."""
    specs: dict[Cell, list[ItemSpec]] = field(default_factory=dict)
    """The planned items of each fixed cell: what a constant answer is played on."""
    training: Training | None = None
    """What its agent was trained on in this environment (``None``: not trained here)."""


def read_run(path: Path, papers: list[Paper]) -> tuple[RunView | EpisodeView, Paper]:
    """Read one run and find its paper; :class:`CompareError` when it is not a run of a paper's suite."""
    known = ", ".join(s for p in papers for s in p.suites)
    try:
        with open_run(path, readonly=True) as store:
            suite = store.get_meta("suite")
            name = suite.get("name", "?") if isinstance(suite, dict) else "?"
            if not protocol_named(store.protocol).comparable:
                raise CompareError(f"{path} is a run of suite {name!r} ({store.protocol}), which no paper's published "
                                   f"table covers; compare takes runs of {known}")
            paper = paper_for(name, papers)
            if paper is None:
                raise CompareError(f"{path} is a run of suite {name!r}, which no paper's published table covers; "
                                   f"compare takes runs of {known}")
            if store.protocol == EpisodesProtocol.name:
                return read_episode_view(path, store), paper
            config = store.get_meta("config", {})
            agent = config.get("agent", {})
            view = RunView(path, suite, str(agent.get("spec", "?")), _decoding(config), len(store.rows()),
                           len(store.plan()), rules=stored_rules(config) or "strict",
                           training=recorded_training(store))
            for spec in store.plan():
                if isinstance(spec, ItemSpec) and spec.ladder_run is None:
                    view.specs.setdefault((spec.test, spec.depth, spec.variant), []).append(spec)
            for cell, records in question_cells(store).items():
                view.metrics[cell], _ = cell_metrics(cell[0], records)
                view.items[cell] = sum(r.status != "error" for r in records)
            _read_ladders(view, store)
    except sqlite3.DatabaseError as err:
        raise CompareError(f"the run database {path} is damaged or unreadable: {err}") from None
    return view, paper


def _decoding(config: dict[str, Any]) -> str:
    """The answer rules the run recorded (a run from before rules asked the strict forms) and, for a model,
    its decoding, as the report prints them."""
    rules = stored_rules(config)
    agent = config.get("agent") or {}
    text = f"rules {rules or 'strict (recorded before answer rules)'}"
    if str(agent.get("spec", "")).partition(":")[0] in PROVIDERS:
        text += "; " + decoding_text(agent.get("temperature"), agent.get("reply_max_tokens"))
    return text


def _trained_text(view: RunView) -> str:
    """``; trained on this environment by ...: not a zero-shot score`` for a trained agent's question run."""
    if view.training is None:
        return ""
    depths = {cell[1] for cell in view.metrics} | {spec.depth for specs in view.specs.values() for spec in specs}
    return (f"; {view.training.text()}; {view.training.depth_text(depths, view.suite.get('metric'))}: not a "
            "zero-shot score")


def _read_ladders(view: RunView, store: Any) -> None:
    """Each ladder test and variant's score, the report's :func:`ladder_score`, and its exact chance level."""
    if not any("ladder" in grid for grid in view.suite.get("tests", {}).values() if isinstance(grid, dict)):
        return
    try:
        suite = question_suite_from_dict(view.suite, source=str(view.path))
    except SuiteError as err:
        raise CompareError(f"{view.path} is damaged: its question suite does not read back ({err})") from None
    progress = ladder_progress(suite, store.plan(), store.rows())
    for name, grid in suite.ladders.items():
        chance = TESTS[name].chance
        if chance is not None:
            view.chance[name] = float(chance_score(chance, grid.rules))
        for variant in grid.variants:
            runs = [progress[(name, variant, r)] for r in range(grid.runs)]
            view.ladders[(name, variant)] = (ladder_score(runs), sum(p.state == "finished" for p in runs), len(runs))


def check_same_suite(views: Sequence[RunView | EpisodeView]) -> None:
    """Every run must play the same suite (name, seed, metric and grid)."""
    first = views[0]
    for view in views[1:]:
        if view.suite.get("name") != first.suite.get("name"):
            raise CompareError(f"runs of different suites: {first.path} plays {first.suite.get('name')!r}, "
                               f"{view.path} plays {view.suite.get('name')!r}; compare runs of one suite")
        for key in ("seed", "metric", "tests", "tiers", "depths", "rewards", "tool_settings", "instances"):
            if view.suite.get(key) != first.suite.get(key):
                raise CompareError(f"{first.path} and {view.path} both play {first.suite.get('name')!r} but with "
                                   f"different {key}; compare runs of one suite file")


# --- values ------------------------------------------------------------------------------------------
def format_value(value: Any, unit: str) -> str:
    """A run's figure in a published column's unit: a rate with its ``k/n``; ``n/a`` when undefined."""
    if isinstance(value, Proportion):
        if value.value is None or value.interval is None:
            return f"n/a ({value.k}/{value.n})"
        if unit == "interval":
            lo, hi = value.interval
            return f"[{100 * lo:.1f}, {100 * hi:.1f}]"
        return f"{_number(value.value, unit)} ({value.k}/{value.n})"
    if value is None:
        return "n/a"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return _number(float(value), unit)
    return str(value)


def _number(x: float, unit: str) -> str:
    if unit == "percent":
        return f"{100 * x:.1f}"
    if unit == "points":
        return f"{100 * x:+.1f}"
    if unit in ("fraction", "kappa"):
        return f"{x:.3f}"
    return f"{x:.2f}"


# --- one published table --------------------------------------------------------------------------------
@dataclass
class Comparison:
    """What ``compare`` prints: the header lines, then per table its :class:`Table` and lines under it, then the
    figures' lines and the run cells in no table."""

    header: list[str]
    tables: list[tuple[Table, list[str]]]
    figures: list[str]
    elsewhere: list[str]


def _run_cell(view: RunView, column: Column) -> tuple[str, str | None]:
    """The run's figure for ``column`` and a problem to note (the report computes no such metric)."""
    if (column.test, column.variant) in view.ladders:
        score, finished, runs = view.ladders[(column.test, column.variant)]
        text = f"{score:.2f}" if score is not None else "n/a"
        return f"{text} ({finished}/{runs} ladders)", None
    if column.pair_depth is None:
        return "·", None
    cell = (column.test, column.pair_depth, column.variant)
    if cell not in view.metrics:
        return "-", None
    found = view.metrics[cell]
    if column.metric not in found:
        return "?", (f"{view.label}: the report computes no {column.metric!r} for {column.test}/{column.variant} "
                     f"d={column.pair_depth} (it has: {', '.join(found) or 'nothing'})")
    value = found[column.metric]
    text = format_value(value, column.unit)
    if not isinstance(value, Proportion) and as_float(value) is not None:  # a rate shows k/n; the rest their items
        text += f" ({view.items[cell]} items)"
    return text, None


def _groups(columns: tuple[Column, ...]) -> list[tuple[str, int]]:
    """Spanning header labels: consecutive columns of one test and variant."""
    groups: list[tuple[str, int]] = []
    for c in columns:
        label = f"{c.test} {c.variant}"
        if groups and groups[-1][0] == label:
            groups[-1] = (label, groups[-1][1] + 1)
        else:
            groups.append((label, 1))
    return [("", 1)] + groups


def _depth_footnotes(columns: tuple[Column, ...]) -> list[str]:
    """The footnotes of the headers of ``columns`` that set a column beside another depth: ``d=?→2`` (the paper's
    depth is not legible, or it has none) and ``d=3→4`` (the paper's depth 3 beside this suite's 4)."""
    shifted = list(dict.fromkeys((c.depth_label, c.depth, c.pair_depth) for c in columns if "→" in c.depth_label))
    unknown = [label for label, depth, _ in shifted if depth is None]
    notes = [f"{', '.join(unknown)}: the paper prints no legible depth for {'these columns' if len(unknown) > 1 else 'the column'} "
             f"(or has none); {'each' if len(unknown) > 1 else 'it'} stands beside this suite's depth after the arrow"] \
        if unknown else []
    notes += [f"{label}: the paper's depth {depth} stands beside this suite's depth {pair}"
              for label, depth, pair in shifted if depth is not None]
    return notes


CHANCE_CORRECTED = ("kappa", "bal acc")
"""The metrics a constant answer cannot lift (κ 0, balanced accuracy 0.5): a table leads with them where the report
computes one for its test."""


@dataclass(frozen=True)
class Shown:
    """A column as compare prints it: the published column, or a run-only column (``source`` ``None``) leading a
    test the paper reports no chance-corrected figure for."""

    column: Column
    source: int | None


def shown_columns(table: PublishedTable, views: list[RunView]) -> list[Shown]:
    """The table's columns, the chance-corrected metric first within each test and variant: the paper's where it
    reports one (Cube Bench's κ before macro-F1 and micro accuracy), else the report's own as a run-only column
    (STARE's balanced accuracy before F1 of Yes, which a constant Yes lifts to 2/3)."""
    groups: dict[tuple[str, str], list[Shown]] = {}
    for i, c in enumerate(table.columns):
        groups.setdefault((c.test, c.variant), []).append(Shown(c, i))
    shown: list[Shown] = []
    for (test, variant), members in groups.items():
        if not any(m.column.metric in CHANCE_CORRECTED for m in members):
            computed = {m for v in views for cell, found in v.metrics.items() if cell[0] == test and cell[2] == variant
                        for m in found}
            lead = next((m for m in CHANCE_CORRECTED if m in computed), None)
            if lead is not None:
                for depth in dict.fromkeys(m.column.pair_depth for m in members):
                    like = next(m.column for m in members if m.column.pair_depth == depth)
                    members.append(Shown(replace(like, metric=lead, paper_metric=RUN_ONLY,
                                                 denominator=LEAD_DENOMINATORS[lead], note=""), None))
        shown += sorted(members, key=lambda m: m.column.metric not in CHANCE_CORRECTED)
    return shown


RUN_ONLY = "(none: ours, printed first)"
"""The paper's name of a run-only column."""
LEAD_DENOMINATORS = {
    "bal acc": "(TPR + TNR) / 2 over items, Yes the positive class; 0.5 for any constant answer; a parse failure is wrong",
    "kappa": "Cohen's κ over the predictions, empirical marginals; 0 for any constant answer",
}


def _published(row: Any, shown: list[Shown]) -> list[str]:
    return [row.values[s.source] if s.source is not None else NOT_REPORTED for s in shown]


class Constants:
    """The constant-answer levels of a comparison's cells, measured once on the first run's items
    (:mod:`.protocols.questions.constant_answers`): all runs of a comparison play the same suite, so the same items."""

    def __init__(self, view: RunView | None) -> None:
        self.view = view
        self._cells: dict[Cell, dict[str, Level]] = {}
        self._ladders: dict[tuple[str, str], Level | None] = {}

    def cell(self, cell: Cell) -> dict[str, Level]:
        if self.view is None:
            return {}
        if cell not in self._cells:
            self._cells[cell] = constant_levels(self.view.specs.get(cell, []), self.view.rules)
        return self._cells[cell]

    def ladder(self, test: str, variant: str) -> Level | None:
        if self.view is None:
            return None
        if (test, variant) not in self._ladders:
            suite: QuestionSuite = question_suite_from_dict(self.view.suite, source=str(self.view.path))
            self._ladders[(test, variant)] = constant_ladder(suite, test, variant, self.view.rules)
        return self._ladders[(test, variant)]

    def text(self, column: Column) -> str:
        """The level of ``column`` on the run's items, in its unit, and the constant that reaches it."""
        if self.view is not None and (column.test, column.variant) in self.view.ladders:
            level = self.ladder(column.test, column.variant)
            return "-" if level is None else f"{level.value:.2f} ({level.answer})"
        if column.pair_depth is None:
            return "·"
        level = self.cell((column.test, column.pair_depth, column.variant)).get(column.metric)
        if level is None or level.value is None:
            return "-"
        if column.metric in DESCRIPTIVE and level.low is not None and level.high is not None:
            return f"{_number(level.low, column.unit)} to {_number(level.high, column.unit)}"
        if column.unit == "interval":
            lo, hi = level.interval or (level.value, level.value)
            return f"[{100 * lo:.1f}, {100 * hi:.1f}] ({level.answer})"
        return f"{_number(level.value, column.unit)} ({level.answer})"


CONSTANT_ROW = "constant answer: the best on these items"


def compare_table(table: PublishedTable, paper: Paper, views: list[RunView], absent: list[str],
                  constants: Constants | None = None) -> tuple[Table, list[str]]:
    """The published table with a row per run (and a row per absent calibration answerer) below its rows, the
    chance-corrected metric leading, then the best constant answer's row; cells without the paper's controls are
    listed under it."""
    constants = constants or Constants(views[0] if views else None)
    shown = shown_columns(table, views)
    columns = tuple(s.column for s in shown)
    header = ["model"] + [f"{_name(c)} {c.depth_label}" if c.pair_depth or c.depth else _name(c) for c in columns]
    rows = [[r.model, *_published(r, shown)] for r in table.rows]
    problems: list[str] = []
    for view in views:
        cells = [_run_cell(view, c) for c in columns]
        rows.append([view.label, *(text for text, _ in cells)])
        problems += [p for _, p in cells if p]
    for agent in absent:
        rows.append([f"{agent}: absent", *(["(no run)"] * len(columns))])
    ladders = [c for c in columns if any((c.test, c.variant) in v.ladders for v in views)]
    if ladders and views and all(c.test in views[0].chance for c in columns):
        rows.append(["chance (exact, this suite's ladder)", *(f"{views[0].chance[c.test]:.3f}" for c in columns)])
    if views:
        rows.append([CONSTANT_ROW, *(constants.text(c) for c in columns)])
    title = f"{paper.key}: {table.number} ({table.section}) against this run"
    note = "; ".join([*_depth_footnotes(columns),
                      "published rows: the paper's numbers as printed; run rows: the report's figures in the same unit, "
                      "a rate followed by its k/n, any other figure by the items it is computed over; '-': the run has no "
                      "such cell; '·': no depth of this suite stands beside the column; '–': the paper reports none; "
                      "constant answer: the best score one reply repeated for every question reaches on the run's items "
                      "(a descriptive figure: the span constants reach), a figure at or below it shows no skill"])
    lines = [table.caption] + _legend(columns)
    lines += [f"{r.model}: {r.note}" for r in table.rows if r.note]
    lines += list(table.notes) + problems + _unpaired(table, views) + _uncontrolled(table, views, constants)
    return Table(title=title, header=header, rows=rows, groups=_groups(columns), note=note), lines


def _uncontrolled(table: PublishedTable, views: list[RunView], constants: Constants) -> list[str]:
    """The run cells of the variants without the paper's controls for this table, with the table's metrics and what
    a constant answer reaches in each: listed, never set beside the paper's numbers."""
    found: dict[tuple[str, str, str, int], list[str]] = {}
    controlled: dict[tuple[str, str], str] = {}
    for column in table.columns:
        for variant in column.uncontrolled:
            other = replace(column, variant=variant, uncontrolled=())
            controlled[(column.test, variant)] = column.variant
            for view in views:
                if other.pair_depth is None or other.cell not in view.metrics:
                    continue
                text, _ = _run_cell(view, other)
                figures = found.setdefault((view.label, column.test, variant, other.pair_depth), [])
                figure = f"{_name(other)} {text} (constant answer {constants.text(other)})"
                if figure not in figures:
                    figures.append(figure)
    return [f"uncontrolled: {label}: {test}/{variant} d={depth}: {', '.join(figures)}; without the paper's controls for "
            f"this table, which {controlled[(test, variant)]} carries" for (label, test, variant, depth), figures in found.items()]


def _name(c: Column) -> str:
    """The report's metric name, ``SR 95% CI`` for the interval of a rate."""
    return c.metric + (" 95% CI" if c.unit == "interval" else "")


def _legend(columns: tuple[Column, ...]) -> list[str]:
    """One line per report metric of the table: the paper's names for it, its unit and its denominator."""
    seen: dict[tuple[str, str], list[Column]] = {}
    for c in columns:
        seen.setdefault((c.test, _name(c)), []).append(c)
    lines = []
    for (test, name), cs in seen.items():
        if all(c.paper_metric == RUN_ONLY for c in cs):
            lines.append(f"{test} {name!r}: the paper reports none; ours, chance-corrected, so it leads ({cs[0].unit}); "
                         f"denominator: {cs[0].denominator}.")
            continue
        papers = " / ".join(dict.fromkeys(repr(c.paper_metric) for c in cs))
        lines.append(f"{test} {name!r} = the paper's {papers} ({cs[0].unit}); denominator: {cs[0].denominator}.")
    return lines


def _unpaired(table: PublishedTable, views: list[RunView]) -> list[str]:
    """The run cells of the table's tests and variants that no column stands beside, with the table's metrics."""
    paired = {c.cell for c in table.columns}
    wanted: dict[tuple[str, str], list[Column]] = {}
    for c in table.columns:
        columns = wanted.setdefault((c.test, c.variant), [])
        if all(x.metric != c.metric or x.unit != c.unit for x in columns):
            columns.append(c)
    lines = []
    for view in views:
        for (test, depth, variant), found in sorted(view.metrics.items(), key=lambda kv: (kv[0][0], kv[0][2], kv[0][1])):
            if (test, variant) in wanted and (test, depth, variant) not in paired and (test, variant) not in view.ladders:
                figures = ", ".join(f"{_name(c)} {format_value(found.get(c.metric), c.unit)}"
                                    for c in wanted[(test, variant)] if c.metric in found)
                lines.append(f"not in this table: {view.label}: {test}/{variant} d={depth} "
                             f"({view.items[(test, depth, variant)]} items): {figures}")
    return lines


# --- figures and the rest -------------------------------------------------------------------------------
def figure_lines(figure: Figure, views: list[RunView]) -> list[str]:
    """Pearson r over the runs (one point per run: one model) at each depth of the figure."""
    lines = [f"{figure.number} ({figure.section}): {figure.description}",
             f"x = {figure.x['test']}/{figure.x['variant']} {figure.x['metric']}, y = {figure.y['test']}/"
             f"{figure.y['variant']} {figure.y['metric']}; one point per run (a run is one model); the paper's r: "
             + (f"{figure.paper_value}" if figure.paper_value is not None else "not legible in the text we hold")]
    for depth in figure.depths:
        points = []
        for view in views:
            x = as_float(view.metrics.get((figure.x["test"], depth, figure.x["variant"]), {}).get(figure.x["metric"]))
            y = as_float(view.metrics.get((figure.y["test"], depth, figure.y["variant"]), {}).get(figure.y["metric"]))
            if x is not None and y is not None:
                points.append((view.label, x, y))
        shown = "; ".join(f"{label} ({x:.3f}, {y:.3f})" for label, x, y in points) or "none"
        lines.append(f"d={depth}: {pearson_text([p[1] for p in points], [p[2] for p in points])} over "
                     f"{len(points)} point(s): {shown}")
    return lines


def pearson_text(xs: list[float], ys: list[float]) -> str:
    """``r = 0.981`` or why r is undefined (fewer than 3 points: two points always lie on a line; no spread)."""
    if len(xs) < 3:
        return "r undefined (needs 3 or more runs with both metrics)"
    if len(set(xs)) < 2 or len(set(ys)) < 2:
        return "r undefined (a metric does not vary over the runs)"
    return f"r = {statistics.correlation(xs, ys):.3f}"


def _elsewhere(paper: Paper, views: list[RunView]) -> list[str]:
    """The (test, variant) cells of the runs that no published table has a column for (nor lists as uncontrolled)."""
    covered = {(c.test, v) for t in paper.tables for c in t.columns for v in (c.variant, *c.uncontrolled)}
    cells: dict[tuple[str, str], set[int]] = {}
    for view in views:
        for test, depth, variant in view.metrics:
            if (test, variant) not in covered:
                cells.setdefault((test, variant), set()).add(depth)
    return [f"{test}/{variant} (d={','.join(map(str, sorted(d)))}): in no published table of this paper; "
            "`cubebench report RUN` prints it" for (test, variant), d in sorted(cells.items())]


def compare_runs(paths: list[Path]) -> Comparison:
    """Read the runs, check they play one paper suite, and set them beside the paper's tables."""
    if len({p.resolve() for p in paths}) != len(paths):
        raise CompareError("a run is given twice")
    papers = load_papers()
    read = [read_run(p, papers) for p in paths]
    views = [v for v, _ in read]
    kinds = {type(v) for v in views}
    if len(kinds) > 1:
        raise CompareError("runs of different suites: an episode run and a question run; compare runs of one suite")
    check_same_suite(views)
    paper = read[0][1]
    ordered = ([v for v in views if v.agent not in CALIBRATION]
               + [v for agent in CALIBRATION for v in views if v.agent == agent])
    for i, view in enumerate(ordered, 1):
        view.label = f"run {i}: {view.agent}" + (f" [{view.training.short}]" if view.training is not None else "")
    suite = views[0].suite.get("name")
    lead = [f"The published tables of {paper.citation}, with your runs beside them (suite {suite!r})",
            f"numbers as the paper prints them, transcribed into cubebench's runner/published/{paper.key}.json"]
    if isinstance(views[0], EpisodeView):
        episodes = [v for v in ordered if isinstance(v, EpisodeView)]
        return Comparison(lead + [episode_header(v) for v in episodes],
                          [episode_table(t, paper, episodes) for t in paper.tables if t.episodes], [],
                          [f"not transcribed: {s}" for s in paper.not_transcribed])
    questions = [v for v in ordered if isinstance(v, RunView)]
    absent = [a for a in CALIBRATION if all(v.agent != a for v in questions)]
    header = lead + [*(f"{v.label} = {v.path} ({v.finished} of {v.planned} items finished; {v.decoding}"
                       f"{_trained_text(v)})" for v in questions),
                     *(f"{a}: absent (no {a} run given: cubebench run --suite {suite} --agent {a})" for a in absent)]
    constants = Constants(questions[0])
    tables = [compare_table(t, paper, questions, absent, constants) for t in paper.tables]
    figures = [line for f in paper.figures for line in figure_lines(f, questions)]
    elsewhere = _elsewhere(paper, questions) + [f"not transcribed: {s}" for s in paper.not_transcribed]
    return Comparison(header, tables, figures, elsewhere)


def render(comparison: Comparison, fmt: str = "text") -> str:
    """The comparison as plain text or Markdown."""
    md = fmt == "md"
    bullet = "- " if md else "  "
    parts = ["\n".join(([f"### {comparison.header[0]}", ""] + [f"{bullet}{h}" for h in comparison.header[1:]]) if md
                       else comparison.header)]
    for table, lines in comparison.tables:
        body = render_markdown(table) if md else render_text(table)
        parts.append(body + "\n\n" + "\n".join(f"{bullet}{line}" for line in lines))
    if comparison.figures:
        parts.append("\n".join([comparison.figures[0]] + [f"{bullet}{line}" for line in comparison.figures[1:]]))
    if comparison.elsewhere:
        parts.append("\n".join(f"{bullet}{line}" for line in comparison.elsewhere))
    return "\n\n".join(parts)


# --- the command ------------------------------------------------------------------------------------------
def _cmd_compare(args: argparse.Namespace) -> int:
    try:
        text = render(compare_runs([Path(p) for p in args.runs]), args.format)
    except (CompareError, PublishedError) as err:
        print(f"cubebench: error: {err}", file=sys.stderr)
        return 2
    print(text)
    return 0


def add_compare(sub: argparse._SubParsersAction,
                guard: Callable[[Callable[[argparse.Namespace], int]], Callable[[argparse.Namespace], int]]) -> None:
    """Add ``compare`` to the ``cubebench`` parser; ``guard`` turns the store's errors into one line."""
    p = sub.add_parser("compare", help="a paper's published tables beside runs of its suite",
                       description="Print the published tables of the paper a suite is built from (Cube Bench, "
                                   "Inf-Bench, STARE, and the CubeBench paper's Exp 1 and Exp 2 for episode runs) with "
                                   "each run's figures below the paper's rows, in the same metrics, units and "
                                   "denominators, the oracle and random rows, and what a constant answer (a blind "
                                   "agent, for episodes) reaches on the same items.")
    p.add_argument("runs", nargs="+", metavar="RUN", help="runs (.sqlite) of one paper suite")
    p.add_argument("--format", choices=COMPARE_FORMATS, default="text", help="text (default) or md (Markdown tables)")
    p.set_defaults(func=guard(_cmd_compare))


__all__ = ["CompareError", "Comparison", "RunView", "add_compare", "compare_runs", "compare_table", "figure_lines",
           "format_value", "pearson_text", "read_run", "render"]
