"""``cubebench compare RUN [RUN ...]``: a paper's published tables beside the runs of its suite.

For a question run of a paper's suite (``cube-bench``, ``inf-bench``, ``stare`` and their smoke suites),
each of the paper's tables (:mod:`.published`: its number, section and the paper cited) is printed with
the paper's rows as printed and one row per run below them, in the same metric, unit and denominator:
a run's figure is the report's own (:func:`.question_report.cell_metrics` for a test's cell,
:func:`.question_report.ladder_score` for a ladder), converted to the paper's unit (a rate 0.25 is 25.0
in a percent column) and, for a rate, followed by its ``k/n``, so the denominator is on the page.  The
oracle and random runs are rows of their own; when none is given, the row says it is absent.  A run's
cells that no column stands beside are listed under the table, and the paper's figures that a set of
runs can give (Cube Bench's Figure 3: Pearson r of move-effect κ against closed-loop TA over the runs'
models) follow the tables.

Bad input (a run of another suite, runs of different suites, a missing or damaged file) is one line and
exit status 2 (:class:`CompareError`, or the store's own errors through the command's guard).
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from cubebench.agents.llm import PROVIDERS
from cubebench.tasks.ladder import chance_score
from cubebench.tasks.metrics import Proportion
from cubebench.tasks.registry import TESTS

from .answering import decoding_text
from .ladders import ladder_progress
from .published import Column, Figure, Paper, PublishedError, PublishedTable, load_papers, paper_for
from .protocols import protocol_named
from .question_report import Cell, cell_metrics, ladder_score, question_cells
from .question_suites import question_suite_from_dict
from .store import open_run
from .suite_fields import SuiteError
from .tables import Table, render_markdown, render_text

CALIBRATION = ("oracle", "random")
"""The built-in answerers whose rows every comparison shows (or flags as absent)."""
FORMATS = ("text", "md")


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


def read_run(path: Path, papers: list[Paper]) -> tuple[RunView, Paper]:
    """Read one run and find its paper; :class:`CompareError` when it is not a paper suite's question run."""
    known = ", ".join(s for p in papers for s in p.suites)
    try:
        with open_run(path, readonly=True) as store:
            suite = store.get_meta("suite")
            name = suite.get("name", "?") if isinstance(suite, dict) else "?"
            if not protocol_named(store.protocol).comparable:
                raise CompareError(f"{path} is a run of suite {name!r} ({store.protocol}), which no paper's published "
                                   f"table covers; compare takes question runs of {known}")
            paper = paper_for(name, papers)
            if paper is None:
                raise CompareError(f"{path} is a run of suite {name!r}, which no paper's published table covers; "
                                   f"compare takes runs of {known}")
            config = store.get_meta("config", {})
            agent = config.get("agent", {})
            view = RunView(path, suite, str(agent.get("spec", "?")), _decoding(config), len(store.rows()),
                           len(store.plan()))
            for cell, records in question_cells(store).items():
                view.metrics[cell], _ = cell_metrics(cell[0], records)
                view.items[cell] = sum(r.status != "error" for r in records)
            _read_ladders(view, store)
    except sqlite3.DatabaseError as err:
        raise CompareError(f"the run database {path} is damaged or unreadable: {err}") from None
    return view, paper


def _decoding(config: dict[str, Any]) -> str:
    """The answer protocol the run recorded (a run from before protocols asked the strict forms) and, for a model,
    its decoding, as the report prints them."""
    protocol = (config.get("play") or {}).get("answer_protocol")
    agent = config.get("agent") or {}
    text = f"protocol {protocol or 'strict (recorded before answer protocols)'}"
    if str(agent.get("spec", "")).partition(":")[0] in PROVIDERS:
        text += "; " + decoding_text(agent.get("temperature"), agent.get("reply_max_tokens"))
    return text


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


def check_same_suite(views: list[RunView]) -> None:
    """Every run must play the same suite (name, seed, metric and grid)."""
    first = views[0]
    for view in views[1:]:
        if view.suite.get("name") != first.suite.get("name"):
            raise CompareError(f"runs of different suites: {first.path} plays {first.suite.get('name')!r}, "
                               f"{view.path} plays {view.suite.get('name')!r}; compare runs of one suite")
        for key in ("seed", "metric", "tests"):
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


def as_float(value: Any) -> float | None:
    """A metric as a plain number (a rate's value), or ``None``."""
    if isinstance(value, Proportion):
        return value.value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return None


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


def compare_table(table: PublishedTable, paper: Paper, views: list[RunView], absent: list[str]) -> tuple[Table, list[str]]:
    """The published table with a row per run (and a row per absent calibration answerer) below its rows."""
    header = ["model"] + [f"{_name(c)} {c.depth_label}" if c.pair_depth or c.depth else _name(c) for c in table.columns]
    rows = [[r.model, *r.values] for r in table.rows]
    problems: list[str] = []
    for view in views:
        cells = [_run_cell(view, c) for c in table.columns]
        rows.append([view.label, *(text for text, _ in cells)])
        problems += [p for _, p in cells if p]
    for agent in absent:
        rows.append([f"{agent}: absent", *(["(no run)"] * len(table.columns))])
    ladders = [c for c in table.columns if any((c.test, c.variant) in v.ladders for v in views)]
    if ladders and views and all(c.test in views[0].chance for c in table.columns):
        rows.append(["chance (exact, this suite's ladder)", *(f"{views[0].chance[c.test]:.3f}" for c in table.columns)])
    title = f"{paper.key}: {table.number} ({table.section}) against this run"
    note = "; ".join([*_depth_footnotes(table.columns),
                      "published rows: the paper's numbers as printed; run rows: the report's figures in the same unit, "
                      "a rate followed by its k/n, any other figure by the items it is computed over; '-': the run has no "
                      "such cell; '·': no depth of this suite stands beside the column"])
    lines = [table.caption] + _legend(table.columns)
    lines += [f"{r.model}: {r.note}" for r in table.rows if r.note]
    lines += list(table.notes) + problems + _unpaired(table, views)
    return Table(title=title, header=header, rows=rows, groups=_groups(table.columns), note=note), lines


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
    """The (test, variant) cells of the runs that no published table has a column for."""
    covered = {(c.test, c.variant) for t in paper.tables for c in t.columns}
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
    check_same_suite(views)
    paper = read[0][1]
    ordered = ([v for v in views if v.agent not in CALIBRATION]
               + [v for agent in CALIBRATION for v in views if v.agent == agent])
    for i, view in enumerate(ordered, 1):
        view.label = f"run {i}: {view.agent}"
    absent = [a for a in CALIBRATION if all(v.agent != a for v in views)]
    suite = views[0].suite.get("name")
    header = [f"The published tables of {paper.citation}, with your runs beside them (suite {suite!r})",
              f"numbers as the paper prints them, transcribed into cubebench's runner/published/{paper.key}.json",
              *(f"{v.label} = {v.path} ({v.finished} of {v.planned} items finished; {v.decoding})" for v in ordered),
              *(f"{a}: absent (no {a} run given: cubebench run --suite {suite} --agent {a})" for a in absent)]
    tables = [compare_table(t, paper, ordered, absent) for t in paper.tables]
    figures = [line for f in paper.figures for line in figure_lines(f, ordered)]
    elsewhere = _elsewhere(paper, ordered) + [f"not transcribed: {s}" for s in paper.not_transcribed]
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
    p = sub.add_parser("compare", help="a paper's published tables beside question runs of its suite",
                       description="Print the published tables of the paper a suite is built from (Cube Bench, "
                                   "Inf-Bench, STARE) with each run's figures below the paper's rows, in the same "
                                   "metrics, units and denominators, and the oracle and random rows.")
    p.add_argument("runs", nargs="+", metavar="RUN", help="question runs (.sqlite) of one paper suite")
    p.add_argument("--format", choices=FORMATS, default="text", help="text (default) or md (Markdown tables)")
    p.set_defaults(func=guard(_cmd_compare))


__all__ = ["CompareError", "Comparison", "RunView", "add_compare", "compare_runs", "compare_table", "figure_lines",
           "format_value", "pearson_text", "read_run", "render"]
