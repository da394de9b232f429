"""The episodes protocol's report tables: pass rates by tier and horizon, by depth, with the blind floor, and
the failure attribution.
"""

from __future__ import annotations

from typing import Iterable

from cubebench.engine.rewards import REWARDS
from cubebench.tiers import tier_title

from ...aggregate import Cell, group, ordered
from ...tables import ALL_ERRORS_NOTE
from ...tables import Table, all_errors, compact, rate_text, short_number
from .attribution import Attribution
from .floors import BlindFloor
from .plan import EpisodeRow
from .suite import TIER_NAMES


SETTING_TITLES = {"basic": "basic tools", "standard": "standard solver", "ideal": "ideal solver"}
SETTINGS = ("basic", "standard", "ideal")


def conditions(rows: list[EpisodeRow]) -> list[tuple[str, str]]:
    """(reward, setting) pairs present, in the suite's canonical order."""
    rewards = ordered((r.reward for r in rows), REWARDS)
    settings = ordered((r.setting for r in rows), SETTINGS)
    present = {(r.reward, r.setting) for r in rows}
    return [(rw, st) for rw in rewards for st in settings if (rw, st) in present]


def condition_label(reward: str, setting: str, conds: list[tuple[str, str]]) -> str:
    """A row label naming only the dimensions that vary in the run."""
    parts = []
    if len({c[0] for c in conds}) > 1 or reward != "none":
        parts.append(f"reward={reward}")
    if len({c[1] for c in conds}) > 1 or setting != "basic":
        parts.append(SETTING_TITLES.get(setting, setting))
    return ", ".join(parts) or "sparse reward, basic tools"


def pass_rate_table(rows: list[EpisodeRow], agent: str, horizons: list[str], floor: BlindFloor | None = None) -> Table:
    """Pass rate per tier x horizon, one row per condition (the paper's main table), and the blind floor's row: the
    share of each cell's instances the blind agent solves under the run's rules (:mod:`.floors`)."""
    tiers = ordered((r.tier for r in rows), TIER_NAMES)
    cells = group(rows, lambda r: (r.reward, r.setting, r.tier, r.horizon))
    conds = conditions(rows)
    body = []
    for rw, st in conds:
        line = [f"{agent}: {condition_label(rw, st, conds)}"]
        line += [rate_text(cells[(rw, st, t, h)]) if (rw, st, t, h) in cells else "-"
                 for t in tiers for h in horizons]
        body.append(line)
    if floor is not None:
        by_cell: dict[tuple[str, str], list[EpisodeRow]] = {}
        for r in rows:
            by_cell.setdefault((r.tier, r.horizon), []).append(r)
        body.append([floor.label] + [_share(floor.share(by_cell.get((t, h), []))) for t in tiers for h in horizons])
    return Table(
        title="Pass rate by tier and horizon (Wilson 95% interval)",
        header=["condition"] + [h.capitalize() for _ in tiers for h in horizons],
        groups=[("", 1)] + [(tier_title(t), len(horizons)) for t in tiers],
        rows=body,
        note="pass rate = solved / finished episodes; error episodes count as unsolved"
             + (f"; {ALL_ERRORS}" if _any_all_errors(cells.values()) else "") + (FLOOR_NOTE if floor else ""),
    )


ALL_ERRORS = ALL_ERRORS_NOTE.format(unit="episode")
FLOOR_NOTE = ("; blind floor: the share of these instances that one blind agent (--agent blind, which never looks) "
              "solves under the run's rules, computed by playing its walk from every start: what that one walk "
              "reaches, not a bound on what needs no look at the cube (a walk built from the public sets, which can "
              "be memorised, solves more of them)")


def _any_all_errors(cells: Iterable[Cell]) -> bool:
    return any(all_errors(c) for c in cells)


def count_text(cell: Cell) -> str:
    """``solved/finished``, or ``n/a (N errors)`` when every episode of the cell ended in error."""
    return f"n/a ({cell.errors} error{'s' if cell.errors != 1 else ''})" if all_errors(cell) \
        else f"{cell.rate.k}/{cell.rate.n}"


def _share(value: float | None) -> str:
    return "-" if value is None else short_number(value)


def depth_table(rows: list[EpisodeRow], floor: BlindFloor | None = None) -> Table:
    """Solved/finished per tier and depth, one block of rows per condition, and the blind floor's share per depth."""
    depths = sorted({r.depth for r in rows})
    tiers = ordered((r.tier for r in rows), TIER_NAMES)
    cells = group(rows, lambda r: (r.reward, r.setting, r.tier, r.depth))
    conds = conditions(rows)
    body = []
    for rw, st in conds:
        for t in tiers:
            line = [condition_label(rw, st, conds), tier_title(t)]
            for d in depths:
                c = cells.get((rw, st, t, d))
                line.append(count_text(c) if c else "-")
            body.append(line)
    if floor is not None:
        body.append([floor.label, "every tier"] + [_share(floor.share(r for r in rows if r.depth == d)) for d in depths])
    return Table(title="Solved / finished by depth", header=["condition", "tier"] + [f"d={d}" for d in depths],
                 rows=body, note="; ".join(([ALL_ERRORS] if _any_all_errors(cells.values()) else [])
                                           + ([FLOOR_NOTE.lstrip("; ")] if floor else [])))


def attribution_table(items: list[Attribution], horizons: list[str]) -> Table:
    """Pass rates of the three settings beside the planning and translation gaps and exploration failures."""
    order = {t: i for i, t in enumerate(TIER_NAMES)}
    hor = {h: i for i, h in enumerate(horizons)}
    body = []
    for a in sorted(items, key=lambda a: (order.get(a.tier, 99), hor.get(a.horizon, 99))):
        body.append([tier_title(a.tier), a.horizon, compact(a.basic), compact(a.standard),
                     compact(a.ideal), a.planning.format(), a.translation.format(),
                     compact(a.exploration) if a.exploration is not None else "n/a"])
    return Table(
        title="Failure attribution (paired instances; see docs/runner.md)",
        header=["tier", "horizon", "basic", "standard", "ideal", "planning gap", "translation gap",
                "exploration fail."],
        rows=body,
        note="planning gap = P(standard) - P(basic); translation gap = P(ideal) - P(standard); "
             "(+a/-b): instances solved only with the better / only with the worse setting; exploration "
             "failures: ideal episodes on partial views that never got a solution from solve_current()",
    )

