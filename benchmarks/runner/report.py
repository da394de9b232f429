"""``cubebench report``: the run's tables, failure attribution, plots and HTML report.

A question run (``protocol: questions``) has its own tables, one per test (:mod:`.question_report`),
under the same run facts; so has a multi-agent run (``protocol: multi``, :mod:`.multi_report`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cubebench.agents.llm import PROVIDERS
from cubebench.budgets import move_budget

from .aggregate import cell_of
from .answering import decoding_text, protocol_text
from .attribution import attribute
from .multi_report import multi_tables
from .question_report import question_tables
from .store import EpisodeRow, RunStore
from .tables import Table, attribution_table, depth_table, pass_rate_table, render_text


@dataclass
class Report:
    """Everything a report shows, computed once from a run's store."""

    path: Path
    suite: dict[str, Any]
    config: dict[str, Any]
    versions: dict[str, str]
    instance_source: str
    planned: int
    rows: list[EpisodeRow]
    retired: int
    damaged: int
    tables: list[Table]
    notes: list[str]
    protocol: str = "episodes"
    uncounted: frozenset[str] = frozenset()
    """Question items that asked nothing their headline can score (a recovery item whose closed loop never
    erred): counted apart from the share of items passed."""

    @property
    def questions(self) -> bool:
        return self.protocol == "questions"

    @property
    def multi(self) -> bool:
        return self.protocol == "multi"

    @property
    def unit(self) -> str:
        """What the run plays: ``episode``, ``item`` or ``game``."""
        return "item" if self.questions else "game" if self.multi else "episode"

    @property
    def agent(self) -> str:
        agent = self.config["agent"]
        if self.multi:
            given = ", ".join(f"{seat}: {team}" for seat, team in (agent.get("seats") or {}).items())
            model = agent["spec"].partition(":")[0] in PROVIDERS
            return agent["spec"] + (" (a ReAct-style model seat per seat)" if model else "") + (
                f"; seats given to a team's player: {given}" if given else "")
        if agent["spec"].partition(":")[0] not in PROVIDERS:
            return agent["spec"]
        if self.questions:
            return agent["spec"] + ("" if agent.get("send_images", True) else " (text only: no images sent)")
        return f"{agent['spec']} ({agent['style']})"

    @property
    def budget(self) -> str:
        """The episodes' move and rotation budgets, as the suite set them."""
        if "max_moves" not in self.suite:
            return ("not in the suite (a run from before move budgets); each episode's record holds the budget "
                    "it ran under (config['env'])")
        metric = self.suite.get("metric", "quarter")
        unit = "quarter turns" if metric == "quarter" else "face turns"
        rotations = f"{self.suite.get('max_rotations')} view rotations on Face and Vertex"
        moves = self.suite["max_moves"]
        if moves is not None:
            return f"{moves} {unit} per episode; {rotations}"
        by_budget: dict[int, list[int]] = {}
        for depth in self.suite.get("depths", []):
            by_budget.setdefault(move_budget(int(depth), metric), []).append(int(depth))
        per_depth = ", ".join(f"{b} at depth{'s' if len(ds) > 1 else ''} {','.join(map(str, ds))}"
                              for b, ds in by_budget.items())
        return f"{unit} per episode by depth (a blind walk solves at most 3.3 % of generated starts): {per_depth}; {rotations}"

    def setup(self) -> list[tuple[str, str]]:
        """What ran: the suite, the agent and (episodes) the budgets and instances."""
        if self.questions:
            tests = ", ".join(self.suite["tests"])
            agent = self.config["agent"]
            decoding = [("decoding", decoding_text(agent.get("temperature"), agent.get("reply_max_tokens")))] if \
                agent["spec"].partition(":")[0] in PROVIDERS else []
            return [("suite", f"{self.suite['name']} ({self.suite.get('metric', '?')}-turn metric; question tests: {tests})"),
                    ("protocol", protocol_text(self.config.get("play", {}).get("answer_protocol"))),
                    ("agent", self.agent), *decoding]
        if self.multi:
            games = ", ".join(f"{name} ({', '.join(g['views'])})" for name, g in self.suite["games"].items())
            return [("suite", f"{self.suite['name']} ({self.suite.get('metric', '?')}-turn metric; games: {games})"),
                    ("agent", self.agent), ("starts", "certified instances of each depth (scrambler-solver: solved)")]
        source = ("certified instances (start distance = certified optimal distance)"
                  if self.instance_source == "certified"
                  else "seeded scrambles of each depth (distance <= depth, not certified)")
        source += "".join(f"; {n}" for n in self.notes)
        return [("suite", f"{self.suite['name']} ({self.suite.get('metric', '?')}-turn metric, "
                          f"{self.suite['max_steps']} interaction steps)"),
                ("budget", self.budget), ("agent", self.agent), ("instances", source)]

    def summary(self) -> Table:
        """Run facts: what ran, how much of it, at what cost."""
        c = cell_of(self.rows)
        errors = f"{c.errors}" + (" (resume with --retry-errors to play them again)" if c.errors else "")
        facts = [
            ("run", str(self.path)), *self.setup(),
            (f"{self.unit}s", f"{len(self.rows)} of {self.planned} finished"),
            ("items passed", self.items_passed()) if self.questions else ("pass rate", c.rate.format()),
            ("errors", errors),
            ("moves", str(c.moves)), ("tokens", str(c.tokens)), ("cost", f"${c.cost_usd:.4f}"),
            (f"{self.unit} time", f"{sum(r.wall_s for r in self.rows):.1f} s"),
        ]
        if self.retired:
            facts.append(("retired records", f"{self.retired} error {self.unit}(s) replayed; kept in the store"))
        if self.damaged:
            facts.append(("damaged records", f"{self.damaged} damaged record(s) replayed; kept in the store"))
        return Table(title="Run", header=["", ""], rows=[list(f) for f in facts])

    def items_passed(self) -> str:
        """The share of items passed, over the items that asked something to pass; what it counts, and (where the
        suite has a recovery test) how many recovery items had nothing to recover."""
        rate = cell_of(r for r in self.rows if r.key not in self.uncounted).rate
        tests = self.suite.get("tests", {})
        recovers = "recovery" in tests
        headlines = ["a right answer", *(["a perfect solve"] if "closed-loop" in tests else []),
                     *(["a recovered cube"] if recovers else [])]
        text = rate.format() + f" (each test's headline: {', '.join(headlines)})"
        if recovers:
            apart = sum(r.key in self.uncounted for r in self.rows)
            text += (f"; {apart} recovery item(s) whose closed loop never erred had nothing to recover: "
                     "counted apart, neither passed nor failed")
        return text


def build_report(store: RunStore) -> Report:
    """Read a run and compute its tables."""
    suite = store.get_meta("suite")
    rows = store.rows()
    tables = (question_tables(store, suite) if store.protocol == "questions" else multi_tables(store, rows)
              if store.protocol == "multi" else episode_tables(store, suite, rows))
    return Report(path=store.path, suite=suite, config=store.get_meta("config"),
                  versions=store.get_meta("versions", {}), instance_source=store.get_meta("instance_source", "?"),
                  planned=len(store.plan()), rows=rows, retired=store.retired_count(),
                  damaged=store.damaged_count(), tables=tables,
                  notes=store.get_meta("instance_notes", []), protocol=store.protocol,
                  uncounted=uncounted_items(store) if store.protocol == "questions" else frozenset())


def uncounted_items(store: RunStore) -> frozenset[str]:
    """The keys of a question run's items that asked nothing their headline can score (their record's
    ``counted`` is false; records from before it existed count)."""
    return frozenset(key for key, record in store.records() if record.config.get("counted") is False)


def episode_tables(store: RunStore, suite: dict[str, Any], rows: list[EpisodeRow]) -> list[Table]:
    """The paper's tables: pass rate by tier and horizon, by depth, and the failure attribution."""
    horizons = list(suite.get("horizons", {"short": [], "long": []}))
    agent = store.get_meta("config")["agent"]["spec"]
    tables = [pass_rate_table(rows, agent, horizons), depth_table(rows)]
    attribution = attribute(store, rows)
    if attribution:
        tables.append(attribution_table(attribution, horizons))
    return tables


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
