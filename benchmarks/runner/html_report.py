"""The self-contained HTML report: the run's facts, tables and plots (PNG embedded as data URIs); a question
run's report has its per-test tables and no plots."""

from __future__ import annotations

import base64
import html
import tempfile
from pathlib import Path

from .plots import PlotsUnavailable, write_plots
from .report import Report
from .tables import render_html

STYLE = """
body{font-family:system-ui,sans-serif;margin:24px;color:#222;max-width:1400px}
h1{font-size:22px} h2{font-size:17px;margin-top:28px}
table{border-collapse:collapse;margin:8px 0} caption{text-align:left;font-weight:600;font-size:17px;padding:18px 0 6px}
th,td{border:1px solid #bbb;padding:4px 8px;font-size:13px;text-align:left;white-space:nowrap}
th{background:#eef2f7} tbody tr:nth-child(even){background:#f8f8f8}
.note{font-size:12px;color:#555;margin:2px 0 12px} img.plot{max-width:100%;border:1px solid #ddd;margin:8px 0}
table.facts td{white-space:normal;overflow-wrap:anywhere} table.facts td:first-child{font-weight:600;white-space:nowrap}
"""


def data_uri(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode()


def report_html(report: Report, with_plots: bool = True) -> str:
    """The whole report page; plots are skipped (with a note) when matplotlib is missing."""
    facts = "".join(f"<tr><td>{html.escape(k)}</td><td>{html.escape(v)}</td></tr>" for k, v in report.summary().rows)
    parts = [f"<h1>CubeBench report: {html.escape(report.suite['name'])} &middot; {html.escape(report.agent)}</h1>",
             f'<table class="facts"><tbody>{facts}</tbody></table>']
    parts += [render_html(t) for t in report.tables] if report.rows else [f"<p>No finished {report.unit}s yet.</p>"]
    if with_plots and report.kind.plots:  # the plots draw episode pass rates
        parts.append("<h2>Plots</h2>" + _plots_html(report))
    versions = ", ".join(f"{k} {v}" for k, v in report.versions.items())
    parts.append(f'<p class="note">versions: {html.escape(versions)}</p>')
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>CubeBench report</title>"
            f"<style>{STYLE}</style></head><body>{''.join(parts)}</body></html>")


def _plots_html(report: Report) -> str:
    try:
        with tempfile.TemporaryDirectory() as tmp:
            paths = write_plots(report.rows, Path(tmp))
            images = [(p.stem.replace("_", " "), p.read_bytes()) for p in paths]
    except PlotsUnavailable as err:
        return f'<p class="note">{html.escape(str(err))}</p>'
    return "".join(f'<figure><img class="plot" alt="{html.escape(name)}" src="{data_uri(png)}">'
                   f"<figcaption>{html.escape(name)}</figcaption></figure>" for name, png in images)
