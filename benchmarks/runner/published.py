"""The papers' published tables as data: what ``cubebench compare`` sets beside a run.

Each paper whose suite CubeBench builds has one JSON file in ``benchmarks/runner/published/`` (shipped in
the wheel as package data of ``cubebench.runner``), of schema ``cubebench-published/1``:

* ``paper``: title, authors, arXiv id (``null`` when the text we hold gives none) and the text the
  numbers were read from (``shared/seeds/...``: a copy beside the development checkout, which does not ship, so
  ``cubebench compare`` names the paper and this file instead);
* ``suites``: the suite names the file covers (a full suite and its smoke suite);
* ``tables``: each with its ``number`` ("Table 4"), ``section``, ``caption``, ``columns``, ``rows`` and
  ``notes``.  A column names the cell of a run it stands beside (``test``, ``variant``, ``depth`` as the
  paper prints it or ``null`` when it is not legible, ``pair_depth`` when it is set beside another depth
  of the suite), the report's ``metric`` name, the paper's own name for it, its ``unit`` and its
  ``denominator``; ``variant`` is the one that carries the paper's controls for that table, and
  ``uncontrolled`` names the test's variants without them (``compare`` lists their cells apart).  An
  episode paper's column (the CubeBench spine paper) names ``tiers`` and a ``horizon`` instead of a test
  and variant, its table a ``condition`` (``reward``, ``setting``) and a row may name its ``reward``.  A row
  is a model and its values *as printed* (strings: ``"+6.00"``, ``"0.00059"``; ``"–"`` where the paper
  reports none);
* ``figures``: correlations a set of runs can give (Cube Bench's Figure 3);
* ``not_transcribed``: what the paper reports that the file leaves out, and why.

:func:`check_published` validates a file (every number parses and lies in its unit's range); a damaged
file is a :class:`PublishedError` naming the file and the field.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from importlib import resources
from typing import Any

PUBLISHED_SCHEMA = "cubebench-published/1"
FILES = ("cube-bench.json", "inf-bench.json", "stare.json", "cubebench.json")
UNITS: dict[str, tuple[float, float]] = {
    "percent": (0.0, 100.0),
    "points": (-100.0, 100.0),
    "fraction": (0.0, 1.0),
    "kappa": (-1.0, 1.0),
    "level": (0.0, math.inf),
    "attempts": (0.0, math.inf),
    "interval": (0.0, 100.0),
}
"""Each unit's range: percent 0-100; points (a difference of percentages) -100-100; fraction 0-1; Cohen's κ -1-1;
a ladder level and a number of attempts >= 0; an interval is ``[lo, hi]`` as printed (percent or fraction)."""
COLUMN_KEYS = {"test", "variant", "depth", "pair_depth", "metric", "paper_metric", "unit", "denominator", "note",
               "uncontrolled"}
REQUIRED_COLUMN_KEYS = ("test", "variant", "metric", "paper_metric", "unit", "denominator")
EPISODE_COLUMN_KEYS = {"tiers", "horizon", "metric", "paper_metric", "unit", "denominator", "note"}
REQUIRED_EPISODE_KEYS = ("horizon", "metric", "paper_metric", "unit", "denominator")
NOT_REPORTED = "–"
"""A published value the paper leaves empty (the MLP row's visual tiers)."""
_INTERVAL = re.compile(r"^\[\s*([0-9.]+)\s*,\s*([0-9.]+)\s*\]$")


class PublishedError(ValueError):
    """A published-table file that does not read back."""


@dataclass(frozen=True)
class Column:
    """One published column and the run cell it stands beside: a question test's (``test``, ``variant``, depth), or
    an episode run's tiers at one horizon (``tiers``)."""

    test: str
    variant: str
    depth: int | None
    pair_depth: int | None
    metric: str
    paper_metric: str
    unit: str
    denominator: str
    note: str = ""
    uncontrolled: tuple[str, ...] = ()
    """The test's variants without the paper's controls for this table (their cells are listed apart)."""
    tiers: tuple[str, ...] = ()
    """An episode column's tiers (pooled); empty for a question column."""
    horizon: str | None = None
    """An episode column's horizon (``short``, ``long``)."""

    @property
    def cell(self) -> tuple[str, int | None, str]:
        """(test, depth of this suite it is set beside or ``None``, variant)."""
        return self.test, self.pair_depth, self.variant

    @property
    def depth_label(self) -> str:
        """``d=1``; ``d=?→3`` when the paper's depth is not legible and the column is set beside depth 3."""
        if self.depth is not None and self.pair_depth == self.depth:
            return f"d={self.depth}"
        paper = "?" if self.depth is None else str(self.depth)
        return f"d={paper}" + (f"→{self.pair_depth}" if self.pair_depth is not None else "")


@dataclass(frozen=True)
class Row:
    model: str
    values: tuple[str, ...]
    note: str = ""
    reward: str | None = None
    """An episode table's row condition (the spine paper's Exp 2 rows are its rewards)."""


@dataclass(frozen=True)
class PublishedTable:
    number: str
    section: str
    caption: str
    columns: tuple[Column, ...]
    rows: tuple[Row, ...]
    notes: tuple[str, ...]
    condition: tuple[tuple[str, str], ...] = ()
    """An episode table's condition, e.g. ``(("reward", "none"), ("setting", "basic"))``."""

    @property
    def episodes(self) -> bool:
        """Whether the table sets episode runs beside it (its columns name tiers)."""
        return any(c.tiers for c in self.columns)


@dataclass(frozen=True)
class Figure:
    """A correlation over models (Cube Bench's Figure 3: κ against TA), per depth."""

    number: str
    section: str
    x: dict[str, str]
    y: dict[str, str]
    depths: tuple[int, ...]
    paper_value: float | None
    description: str


@dataclass(frozen=True)
class Paper:
    key: str
    title: str
    authors: str
    arxiv: str | None
    text: str
    suites: tuple[str, ...]
    tables: tuple[PublishedTable, ...]
    figures: tuple[Figure, ...]
    not_transcribed: tuple[str, ...]

    @property
    def citation(self) -> str:
        """``"Title" by Authors, arXiv:ID`` (as far as the text gives them)."""
        by = f" by {self.authors}" if self.authors else ""
        return f'"{self.title}"{by}' + (f", arXiv:{self.arxiv}" if self.arxiv else "")


def value_of(text: str, unit: str) -> float | tuple[float, float] | None:
    """A printed value as a number (an ``interval``: its two ends; :data:`NOT_REPORTED`: ``None``); :class:`ValueError`
    when it does not parse."""
    if text == NOT_REPORTED:
        return None
    if unit == "interval":
        m = _INTERVAL.match(text)
        if not m:
            raise ValueError(f"an interval is printed [lo, hi], got {text!r}")
        return float(m.group(1)), float(m.group(2))
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"not a finite number: {text!r}")
    return value


def _need(obj: Any, key: str, kind: type | tuple[type, ...], where: str) -> Any:
    if not isinstance(obj, dict) or key not in obj:
        raise PublishedError(f"{where}: missing field {key!r}")
    value = obj[key]
    if not isinstance(value, kind) or isinstance(value, bool):
        raise PublishedError(f"{where}.{key}: expected {kind}, got {value!r}")
    if isinstance(value, str) and not value.strip():
        raise PublishedError(f"{where}.{key}: empty")
    return value


def _column(data: Any, where: str) -> Column:
    if isinstance(data, dict) and "tiers" in data:
        return _episode_column(data, where)
    for key in REQUIRED_COLUMN_KEYS:
        _need(data, key, str, where)
    unknown = sorted(set(data) - COLUMN_KEYS)
    if unknown:
        raise PublishedError(f"{where}: unknown field(s) {unknown}")
    if data["unit"] not in UNITS:
        raise PublishedError(f"{where}.unit: {data['unit']!r} is not one of {sorted(UNITS)}")
    depths = {}
    for key in ("depth", "pair_depth"):
        value = data.get(key, data.get("depth") if key == "pair_depth" else None)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
            raise PublishedError(f"{where}.{key}: a depth is an integer >= 1 or null, got {value!r}")
        depths[key] = value
    uncontrolled = data.get("uncontrolled", [])
    if not isinstance(uncontrolled, list) or not all(isinstance(v, str) and v for v in uncontrolled) \
            or data["variant"] in uncontrolled:
        raise PublishedError(f"{where}.uncontrolled: a list of the test's other variants, got {uncontrolled!r}")
    return Column(data["test"], data["variant"], depths["depth"], depths["pair_depth"], data["metric"],
                  data["paper_metric"], data["unit"], data["denominator"], str(data.get("note", "")),
                  tuple(uncontrolled))


def _episode_column(data: dict[str, Any], where: str) -> Column:
    """A column of an episode paper's table: the pass rate of some tiers at one horizon."""
    for key in REQUIRED_EPISODE_KEYS:
        _need(data, key, str, where)
    unknown = sorted(set(data) - EPISODE_COLUMN_KEYS)
    if unknown:
        raise PublishedError(f"{where}: unknown field(s) {unknown}")
    tiers = data["tiers"]
    if not isinstance(tiers, list) or not tiers or not all(isinstance(t, str) and t for t in tiers):
        raise PublishedError(f"{where}.tiers: a non-empty list of tier names, got {tiers!r}")
    if data["unit"] not in UNITS:
        raise PublishedError(f"{where}.unit: {data['unit']!r} is not one of {sorted(UNITS)}")
    return Column("episodes", "", None, None, data["metric"], data["paper_metric"], data["unit"], data["denominator"],
                  str(data.get("note", "")), tiers=tuple(tiers), horizon=data["horizon"])


def _row(data: Any, columns: tuple[Column, ...], where: str) -> Row:
    model = _need(data, "model", str, where)
    values = _need(data, "values", list, where)
    if len(values) != len(columns):
        raise PublishedError(f"{where} ({model}): {len(values)} values for {len(columns)} columns")
    for value, column in zip(values, columns):
        if not isinstance(value, str):
            raise PublishedError(f"{where} ({model}): values are strings as printed, got {value!r}")
        try:
            number = value_of(value, column.unit)
        except ValueError as err:
            raise PublishedError(f"{where} ({model}), {column.paper_metric}: {err}") from None
        if number is None:
            continue
        lo, hi = UNITS[column.unit]
        ends = number if isinstance(number, tuple) else (number,)
        if any(not lo <= x <= hi for x in ends) or (isinstance(number, tuple) and number[0] > number[1]):
            raise PublishedError(f"{where} ({model}), {column.paper_metric}: {value} is outside the {column.unit} "
                                 f"range [{lo}, {hi}]")
    reward = data.get("reward")
    if reward is not None and not (isinstance(reward, str) and reward):
        raise PublishedError(f"{where} ({model}): reward is a reward's name, got {reward!r}")
    return Row(model, tuple(values), str(data.get("note", "")), reward)


def _table(data: Any, where: str) -> PublishedTable:
    columns = tuple(_column(c, f"{where}.columns[{i}]") for i, c in enumerate(_need(data, "columns", list, where)))
    if not columns:
        raise PublishedError(f"{where}: no columns")
    rows = tuple(_row(r, columns, f"{where}.rows[{i}]") for i, r in enumerate(_need(data, "rows", list, where)))
    if not rows:
        raise PublishedError(f"{where}: no rows")
    notes = _need(data, "notes", list, where)
    if not all(isinstance(n, str) and n.strip() for n in notes):
        raise PublishedError(f"{where}.notes: a list of non-empty strings")
    condition = data.get("condition", {})
    if not isinstance(condition, dict) or not all(isinstance(v, str) for v in condition.values()) \
            or set(condition) - {"reward", "setting"}:
        raise PublishedError(f"{where}.condition: an object of reward and setting names, got {condition!r}")
    if any(c.tiers for c in columns) != all(c.tiers for c in columns):
        raise PublishedError(f"{where}: a table's columns are all episode columns (tiers) or all question columns")
    return PublishedTable(_need(data, "number", str, where), _need(data, "section", str, where),
                          _need(data, "caption", str, where), columns, rows, tuple(notes),
                          tuple(sorted(condition.items())))


def _figure(data: Any, where: str) -> Figure:
    axes = {}
    for axis in ("x", "y"):
        spec = _need(data, axis, dict, where)
        axes[axis] = {k: _need(spec, k, str, f"{where}.{axis}") for k in ("test", "variant", "metric")}
    depths = _need(data, "depths", list, where)
    if not depths or any(isinstance(d, bool) or not isinstance(d, int) or d < 1 for d in depths):
        raise PublishedError(f"{where}.depths: a non-empty list of depths >= 1")
    value = data.get("paper_value")
    if value is not None and (not isinstance(value, (int, float)) or not -1 <= value <= 1):
        raise PublishedError(f"{where}.paper_value: a correlation in [-1, 1] or null, got {value!r}")
    if _need(data, "kind", str, where) != "pearson":
        raise PublishedError(f"{where}.kind: only 'pearson' is known")
    return Figure(_need(data, "number", str, where), _need(data, "section", str, where), axes["x"], axes["y"],
                  tuple(depths), value, _need(data, "description", str, where))


def check_published(data: Any, source: str) -> Paper:
    """Validate one file's JSON object and build its :class:`Paper`."""
    if not isinstance(data, dict) or data.get("schema") != PUBLISHED_SCHEMA:
        raise PublishedError(f"{source}: not a {PUBLISHED_SCHEMA} file")
    paper = _need(data, "paper", dict, source)
    for key in ("key", "title", "authors", "text"):
        _need(paper, key, str, f"{source}.paper")
    arxiv = paper.get("arxiv")
    if arxiv is not None and not (isinstance(arxiv, str) and arxiv.strip()):
        raise PublishedError(f"{source}.paper.arxiv: an arXiv id or null")
    suites = _need(data, "suites", list, source)
    if not suites or not all(isinstance(s, str) and s for s in suites):
        raise PublishedError(f"{source}.suites: a non-empty list of suite names")
    tables = tuple(_table(t, f"{source} {t.get('number', i) if isinstance(t, dict) else i}")
                   for i, t in enumerate(_need(data, "tables", list, source)))
    figures = tuple(_figure(f, f"{source}.figures[{i}]") for i, f in enumerate(_need(data, "figures", list, source)))
    skipped = _need(data, "not_transcribed", list, source)
    return Paper(paper["key"], paper["title"], paper["authors"], arxiv, paper["text"], tuple(suites), tables, figures,
                 tuple(str(s) for s in skipped))


def load_papers() -> list[Paper]:
    """Every shipped published-table file, validated."""
    folder = resources.files("cubebench.runner").joinpath("published")
    papers = []
    for name in FILES:
        source = f"published/{name}"
        try:
            data = json.loads(folder.joinpath(name).read_text(encoding="utf-8"))
        except (OSError, ValueError) as err:
            raise PublishedError(f"{source}: does not read back ({err})") from None
        papers.append(check_published(data, source))
    return papers


def paper_for(suite: str, papers: list[Paper]) -> Paper | None:
    """The paper whose published tables cover ``suite`` (a restricted suite ``cube-bench[move-effect]``
    counts as its base suite), or ``None``."""
    base = suite.split("[", 1)[0]
    return next((p for p in papers if base in p.suites), None)


__all__ = ["Paper", "PublishedTable", "Column", "Row", "Figure", "PublishedError", "UNITS", "check_published",
           "load_papers", "paper_for", "value_of", "NOT_REPORTED"]
