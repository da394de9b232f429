"""The report's tables as data (title, header, rows), rendered as text or HTML.

Layout follows the CubeBench paper's tables: one column per tier and horizon
(Symbolic / Visual / Face / Vertex, each Short and Long), one row per
condition of the run (its reward and tool-setting combinations), each cell a
pass rate with its Wilson 95 % interval.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field

from .aggregate import Cell
from .stats import Rate


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
    return f"{short_number(rate.value)} [{short_number(lo)},{short_number(hi)}]"


ALL_ERRORS_NOTE = "n/a: every {unit} of the cell ended in error, so it measured nothing"
"""The note under a table where a cell reads ``n/a`` (:func:`rate_text`)."""


def rate_text(cell: Cell) -> str:
    """A cell's pass rate and interval (:func:`compact`), or ``n/a`` when every record of it ended in error: nothing
    was measured there, which a 0 with its interval would hide (the headline says ``n/a`` for a run alike)."""
    return "n/a" if all_errors(cell) else compact(cell.rate)


def all_errors(cell: Cell) -> bool:
    """Whether the cell holds records and every one ended in error."""
    return bool(cell.rate.n) and cell.errors == cell.rate.n


def short_number(x: float | None) -> str:
    """A share in at most four characters (``.25``, ``1.0``)."""
    return "1.0" if x is not None and x >= 0.995 else f"{x:.2f}".lstrip("0")


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
