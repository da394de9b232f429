"""``cubebench compare`` for episode runs: the CubeBench paper's Exp 1 and Exp 2 tables beside runs of its suites.

A column of the spine paper's tables is a pass rate over some tiers at one horizon (``Sym-Short``, ``All
Long-hor.``), under the table's condition (basic tools; Exp 1 the sparse reward, Exp 2 a reward per row).  Each
run gives one row per condition the table has (Exp 2: one per reward it played), its pass rate with ``k/n``, and
below them the run's **blind floor** (:mod:`.floors`): the share of the same episodes' instances the blind agent
solves under the run's rules, the episode runs' constant-answer level.  The paper states 20 interaction steps
and no move cap, so its numbers are comparable with runs under ``paper``; a run under ``strict`` is listed apart,
with its figures.  The header says whether each run played the public shipped sets or a private draw.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from ...published import NOT_REPORTED, Column, Paper, PublishedTable
from ...stats import Rate
from ...store import RunStore
from ...specs import recorded_training
from ...tables import Table
from ...trained import Training
from .floors import BlindFloor, blind_floor, run_rules
from .plan import EpisodeRow
from .protocol import draw_text

__all__ = ["EpisodeView", "read_episode_view", "episode_table", "episode_header"]

COMPARABLE = "paper"
"""The rules whose runs stand beside the paper's numbers."""


@dataclass
class EpisodeView:
    """What compare reads of one episode run."""

    path: Path
    suite: dict[str, Any]
    agent: str
    rules: str
    draw: str
    rows: list[EpisodeRow]
    planned: int
    floor: BlindFloor
    label: str = ""
    training: Training | None = None
    """What its agent was trained on in this environment (``None``: not trained here)."""


def read_episode_view(path: Path, store: RunStore) -> EpisodeView:
    """An episode run as compare sets it beside the spine paper's tables."""
    config = store.get_meta("config", {})
    source = store.get_meta("instance_source", "certified")
    draw = store.get_meta("instance_draw") or ("public" if source == "certified" else "scramble")
    rows = cast(list[EpisodeRow], store.rows())
    return EpisodeView(path, store.get_meta("suite"), str((config.get("agent") or {}).get("spec", "?")),
                       run_rules(config), draw, rows, len(store.plan()), blind_floor(store),
                       training=recorded_training(store))


def episode_header(view: EpisodeView) -> str:
    """The header line of one run: what it played, under which rules, on which instances."""
    comparable = "" if view.rules == COMPARABLE else "; not the paper's budget: listed under each table"
    trained = ""
    if view.training is not None:
        depths = view.suite.get("depths") or sorted({r.depth for r in view.rows})
        trained = (f"; {view.training.text()}; {view.training.depth_text(depths, view.suite.get('metric'))}: not a "
                   "zero-shot score")
    return (f"{view.label} = {view.path} ({len(view.rows)} of {view.planned} episodes finished; rules "
            f"{view.rules}{comparable}; instances: {draw_text(view.draw, view.suite.get('seed', 0))}{trained})")


def _cell(rows: list[EpisodeRow], column: Column, condition: dict[str, str]) -> list[EpisodeRow]:
    return [r for r in rows if r.tier in column.tiers and r.horizon == column.horizon
            and all(getattr(r, key) == value for key, value in condition.items())]


def _rate(rows: list[EpisodeRow]) -> str:
    if not rows:
        return "-"
    rate = Rate(sum(r.solved for r in rows), len(rows))
    errors = sum(r.status == "error" for r in rows)
    if errors == len(rows):  # nothing measured: never a 0.00 beside the paper's figures
        return f"n/a ({errors} error{'s' if errors != 1 else ''})"
    return f"{rate.value:.2f} ({rate.k}/{rate.n})"


def _floor(view: EpisodeView, rows: list[EpisodeRow]) -> str:
    share = view.floor.share(rows)
    return "-" if share is None else f"{share:.2f}"


def _conditions(table: PublishedTable, view: EpisodeView) -> list[dict[str, str]]:
    """The conditions a run gives rows for: the table's, and per row reward the table names, those the run played."""
    base = dict(table.condition)
    rewards = [r.reward for r in table.rows if r.reward is not None]
    if not rewards:
        return [base]
    played = {r.reward for r in view.rows}
    return [{**base, "reward": reward} for reward in dict.fromkeys(rewards) if reward in played]


def episode_table(table: PublishedTable, paper: Paper, views: list[EpisodeView]) -> tuple[Table, list[str]]:
    """The published table with, for each run under ``paper``, a row per condition and its blind floor's row; a run
    under another rules is listed below the table."""
    header = ["model"] + [c.paper_metric for c in table.columns]
    rows = [[r.model, *r.values] for r in table.rows]
    apart: list[str] = []
    floors: dict[tuple[str, ...], list[str]] = {}
    for view in views:
        for condition in _conditions(table, view):
            cells = [_cell(view.rows, c, condition) for c in table.columns]
            label = view.label + ("" if len(condition) == len(table.condition) else f": reward={condition['reward']}")
            if view.rules == COMPARABLE:
                rows.append([label, *(_rate(c) for c in cells)])
            else:
                apart.append(f"{label} (rules {view.rules}, not the paper's budget): " + "; ".join(
                    f"{c.paper_metric} {_rate(cell)} (blind floor {_floor(view, cell)})"
                    for c, cell in zip(table.columns, cells)))
        if view.rules == COMPARABLE:
            floor = tuple(_floor(view, _cell(view.rows, c, dict(table.condition))) for c in table.columns)
            floors.setdefault(floor, []).append(view.label.split(":")[0])
    for floor, runs in floors.items():  # runs of one suite and rules share their instances: one row for all
        rows.append([f"blind floor ({COMPARABLE}): {', '.join(runs)}", *floor])
    title = f"{paper.key}: {table.number} ({table.section}) against this run"
    note = ("published rows: the paper's numbers as printed ('–': the paper reports none); run rows: the pass rate and "
            "its k/n over the column's tiers and horizon; blind floor: the share of the same instances the blind agent "
            "solves under the run's rules: what that one walk reaches, not a bound (a walk built from the public sets, which "
            "can be memorised, solves more; docs/runner.md)")
    said = ", ".join(f"{k} {v}" for k, v in table.condition) or "as each row says"
    lines = [table.caption, f"condition: {said}; the columns' tiers: " + "; ".join(
        f"{c.paper_metric} = {'+'.join(c.tiers)} at the {c.horizon} horizon" for c in table.columns),
        f"denominator: {table.columns[0].denominator}."]
    lines += [f"{r.model}: {r.note}" for r in table.rows if r.note]
    lines += [f"{c.paper_metric}: {c.note}" for c in table.columns if c.note]
    lines += list(table.notes) + apart
    if any(NOT_REPORTED in r.values for r in table.rows):
        lines.append(f"'{NOT_REPORTED}': the paper reports no figure there.")
    return Table(title=title, header=header, rows=rows, note=note), lines
