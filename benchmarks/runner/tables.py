"""The report's tables as data (title, header, rows), rendered as text or HTML.

Layout follows the CubeBench paper's tables: one column per tier and horizon
(Symbolic / Visual / Face / Vertex, each Short and Long), one row per
condition of the run (its reward and tool-setting combinations), each cell a
pass rate with its Wilson 95 % interval.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field

from cubebench.tiers import TIER_SPECS

from .aggregate import group, ordered
from .attribution import Attribution
from .floors import BlindFloor
from .stats import Rate
from .store import EpisodeRow
from .suites import REWARDS, TIER_NAMES

def tier_title(tier: str) -> str:
    """A tier as tables and plots title it (its spec's ``title``; an unregistered name as it is)."""
    spec = TIER_SPECS.get(tier)
    return spec.title if spec else tier


SETTING_TITLES = {"basic": "basic tools", "standard": "standard solver", "ideal": "ideal solver"}
SETTINGS = ("basic", "standard", "ideal")


@dataclass
class Table:
    """A rectangular table; ``groups`` optionally spans header cells (label, width) above ``header``."""

    title: str
    header: list[str]
    rows: list[list[str]]
    groups: list[tuple[str, int]] = field(default_factory=list)
    note: str = ""


def compact(rate: Rate) -> str:
    """``.75 [.53,.89]``: a pass rate and its interval in 13 characters (``-`` when empty)."""
    if not rate.n:
        return "-"
    lo, hi = rate.interval  # type: ignore[misc]
    return f"{_short(rate.value)} [{_short(lo)},{_short(hi)}]"


def _short(x: float | None) -> str:
    return "1.0" if x is not None and x >= 0.995 else f"{x:.2f}".lstrip("0")


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
        line += [compact(cells[(rw, st, t, h)].rate) if (rw, st, t, h) in cells else "-"
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
        note="pass rate = solved / finished episodes; error episodes count as unsolved" + (FLOOR_NOTE if floor else ""),
    )


FLOOR_NOTE = ("; blind floor: the share of these instances the blind agent (--agent blind, which never looks) solves "
              "under the run's rules, computed by playing its walk from every start: a score at or below it shows "
              "nothing the agent saw")


def _share(value: float | None) -> str:
    return "-" if value is None else _short(value)


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
                line.append(f"{c.rate.k}/{c.rate.n}" if c else "-")
            body.append(line)
    if floor is not None:
        body.append([floor.label, "every tier"] + [_share(floor.share(r for r in rows if r.depth == d)) for d in depths])
    return Table(title="Solved / finished by depth", header=["condition", "tier"] + [f"d={d}" for d in depths],
                 rows=body, note=FLOOR_NOTE.lstrip("; ") if floor else "")


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


# --- rendering -----------------------------------------------------------------------------
def render_text(table: Table) -> str:
    """A plain-text table with aligned columns and an optional group header line."""
    widths = [max(len(str(x)) for x in col) for col in zip(table.header, *table.rows)]
    lines = [table.title, "=" * len(table.title)]
    if table.groups:
        spans, i = [], 0
        for label, width in table.groups:
            span = sum(widths[i:i + width]) + 2 * (width - 1)
            spans.append(label.center(span) if label else " " * span)
            i += width
        lines.append("  ".join(spans).rstrip())
    lines.append("  ".join(h.ljust(w) for h, w in zip(table.header, widths)).rstrip())
    lines.append("  ".join("-" * w for w in widths))
    for row in table.rows:
        lines.append("  ".join(str(c).ljust(w) for c, w in zip(row, widths)).rstrip())
    if table.note:
        lines.append(f"({table.note})")
    return "\n".join(lines)


def render_html(table: Table, css_class: str = "results") -> str:
    """An HTML ``<table>`` with a caption and spanning group headers."""
    out = [f'<table class="{css_class}"><caption>{html.escape(table.title)}</caption><thead>']
    if table.groups:
        out.append("<tr>" + "".join(f'<th colspan="{w}">{html.escape(g)}</th>' for g, w in table.groups) + "</tr>")
    out.append("<tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in table.header) + "</tr></thead><tbody>")
    for row in table.rows:
        out.append("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in row) + "</tr>")
    out.append("</tbody></table>")
    if table.note:
        out.append(f'<p class="note">{html.escape(table.note)}</p>')
    return "".join(out)


def render_markdown(table: Table) -> str:
    """A GitHub-flavoured Markdown table under its title in bold, the group labels folded into the header
    (``group: column``), the note in italics below."""
    header = list(table.header)
    if table.groups:
        i = 0
        for label, width in table.groups:
            for j in range(i, i + width):
                header[j] = f"{label}: {header[j]}" if label else header[j]
            i += width
    cells = lambda row: "| " + " | ".join(str(c).replace("|", "\\|") for c in row) + " |"  # noqa: E731
    lines = [f"**{table.title}**", "", cells(header), "|" + "---|" * len(header)]
    lines += [cells(row) for row in table.rows]
    if table.note:
        lines += ["", f"*{table.note}*"]
    return "\n".join(lines)
