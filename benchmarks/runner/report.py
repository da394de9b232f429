"""``cubebench report``: the run's tables, failure attribution, plots and HTML report.

The run's protocol (:mod:`.protocols`) gives its tables and what its facts say: a question run has one
table per test (:mod:`.protocols.questions.report`), a multi-agent run its games' (:mod:`.protocols.multi.report`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .aggregate import cell_of
from .failures import error_cause, nothing_evaluated, nothing_evaluated_text
from .protocols import RunProtocol, protocol_named
from .rows import StoredRow
from .specs import recorded_training
from .store import UNNAMED_PROTOCOL, RunStore
from .tables import Table, render_text
from .trained import Training


@dataclass
class Report:
    """Everything a report shows, computed once from a run's store."""

    path: Path
    suite: dict[str, Any]
    config: dict[str, Any]
    versions: dict[str, str]
    instance_source: str
    planned: int
    rows: list[StoredRow]
    retired: int
    damaged: int
    tables: list[Table]
    notes: list[str]
    protocol: str = UNNAMED_PROTOCOL
    instance_draw: str | None = None
    """Episode runs: ``public`` (the shipped sets), ``private`` (a draw of the run's seed) or ``scramble``; ``None`` in
    runs from before draws, which played the shipped sets."""
    uncounted: frozenset[str] = frozenset()
    """Question items that asked nothing their headline can score (a recovery item whose closed loop never
    erred): counted apart from the share of items passed."""
    first_error: str | None = None
    """The cause of the run's first ``error`` record (:func:`~.failures.error_cause`), shown beside the count."""
    training: Training | None = None
    """What the run's agent was trained on in this environment (:mod:`.trained`); ``None``: not trained here."""
    depths: tuple[int, ...] = ()
    """The depths the run planned (what the training mark compares with its training data)."""
    wall_s: float | None = None
    """The wall time of the run's sessions (:meth:`~.store.RunStore.wall_seconds`); ``None``: no session recorded."""

    @property
    def evaluated_nothing(self) -> bool:
        """Every finished record ended in error: the run has no score (its headline says ``n/a``, never 0)."""
        return nothing_evaluated(r.status for r in self.rows)

    @property
    def kind(self) -> RunProtocol:
        """The run's protocol, which says what its records mean."""
        return protocol_named(self.protocol)

    @property
    def unit(self) -> str:
        """What the run plays: ``episode``, ``item`` or ``game``."""
        return self.kind.unit

    @property
    def agent(self) -> str:
        return self.kind.agent_text(self)

    def setup(self) -> list[tuple[str, str]]:
        """What ran: the suite, the agent and what the protocol adds (episodes: the budgets and instances)."""
        return self.kind.setup(self)

    def summary(self) -> Table:
        """Run facts: what ran, how much of it, at what cost."""
        c = cell_of(self.rows)
        errors = f"{c.errors}" + (" (resume with --retry-errors to play them again)" if c.errors else "")
        if self.first_error:
            errors += f"; the first: {' '.join(self.first_error.split())[:300]}"
        headline = self.kind.headline(self)
        if self.evaluated_nothing:
            headline = (headline[0], nothing_evaluated_text(self.unit))
        facts = [
            ("run", str(self.path)), *self.trained_setup(),
            (f"{self.unit}s", f"{len(self.rows)} of {self.planned} finished"),
            headline,
            ("errors", errors),
            ("moves", str(c.moves)), ("tokens", str(c.tokens)), ("cost", f"${c.cost_usd:.4f}"),
            (f"{self.unit} time", self.time_text()),
        ]
        if self.retired:
            facts.append(("retired records", f"{self.retired} error {self.unit}(s) replayed; kept in the store"))
        if self.damaged:
            facts.append(("damaged records", f"{self.damaged} damaged record(s) replayed; kept in the store"))
        return Table(title="Run", header=["", ""], rows=[list(f) for f in facts])

    def trained_setup(self) -> list[tuple[str, str]]:
        """The protocol's setup facts, the agent marked as trained on this environment with a line that says on what
        and which of the run's depths lie in its training data (a trained agent's score is not a zero-shot one)."""
        facts = self.setup()
        if self.training is None:
            return facts
        marked = [(k, f"{v} [{self.training.short}]") if k == "agent" else (k, v) for k, v in facts]
        at = next((i + 1 for i, (k, _) in enumerate(marked) if k == "agent"), len(marked))
        detail = f"{self.training.text()}; {self.training.depth_text(self.depths, self.suite.get('metric'))}"
        return [*marked[:at], ("trained", detail), *marked[at:]]

    def time_text(self) -> str:
        """The records' own times summed, and beside them the sessions' wall time: concurrent records overlap, so
        their sum can be many times the time the run took."""
        summed = f"{sum(r.wall_s for r in self.rows):.1f} s summed over {self.unit}s"
        if self.wall_s is None:
            return summed
        return f"{summed}; wall time {self.wall_s:.1f} s (the run's sessions, start to end)"


def build_report(store: RunStore) -> Report:
    """Read a run and compute its tables."""
    suite = store.get_meta("suite")
    rows = store.rows()
    protocol = protocol_named(store.protocol)
    tables = protocol.tables(store, suite, rows)
    first = next((row.key for row in rows if row.status == "error"), None)
    return Report(path=store.path, suite=suite, config=store.get_meta("config"),
                  versions=store.get_meta("versions", {}), instance_source=store.get_meta("instance_source", "?"),
                  planned=len(store.plan()), rows=rows, retired=store.retired_count(),
                  damaged=store.damaged_count(), tables=tables,
                  notes=store.get_meta("instance_notes", []), protocol=store.protocol,
                  instance_draw=store.get_meta("instance_draw"),
                  uncounted=protocol.uncounted(store), wall_s=store.wall_seconds(),
                  training=recorded_training(store),
                  depths=tuple(sorted({int(s.cell()[1]) for s in store.plan()})),
                  first_error=error_cause(store.record(first)) if first is not None else None)


def text_report(report: Report) -> str:
    """The report as plain text (what ``cubebench report`` and the end of ``cubebench run`` print)."""
    parts = [_facts_text(report.summary())]
    if report.rows:
        parts += [render_text(t) for t in report.tables]
    else:
        parts.append(f"No finished {report.unit}s yet.")
    return "\n\n".join(parts)


def _facts_text(table: Table) -> str:
    width = max(len(k) for k, _ in table.rows)
    return "\n".join(f"{k.rjust(width)}: {v}" for k, v in table.rows)
