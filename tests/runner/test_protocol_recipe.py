"""The recipe for a run protocol holds: a protocol is its own code plus one registration line.

A synthetic fourth protocol (``coins``: flip coins, keyed per coin, depth and index) is written here the way
``CONTRIBUTING.md`` ("Adding a run protocol") says a protocol is written: a suite class with its schema, a plan
row type (a ``PlannedSpec`` subclass, registered by being defined) with its stored row's words, and a
``RunProtocol`` with its own ``cubebench run`` options.  Registered with one ``register(...)`` line (and one row of the agent table, so the
built-in ``random`` plays it), it is loaded from a suite file, planned, played, stored, reported, exported, viewed,
interrupted and resumed by the unchanged store, planner, suite loader and command.
"""

from __future__ import annotations

import argparse
import csv
import json
import random
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, ClassVar

import pytest

from cubebench.agents.records import EpisodeRecord
from cubebench.runner import planning as plan_module
from cubebench.runner import specs
from cubebench.runner.cli import main
from cubebench.runner.cli_values import csv_values
from cubebench.runner.planning import PlannedSpec, agent_seed
from cubebench.runner.protocols import PROTOCOLS, RunProtocol, register, unregister
from cubebench.runner.protocols.run_protocol import csv_named
from cubebench.runner.rows import StoredRow, Word
from cubebench.runner.store import open_run
from cubebench.runner.suite_fields import SuiteError
from cubebench.runner.tables import Table

SCHEMA = "test-coins/1"
SOLVED = "U" * 9 + "R" * 9 + "F" * 9 + "D" * 9 + "L" * 9 + "B" * 9


@dataclass(frozen=True)
class CoinSuite:
    """Flip each coin ``flips`` times at each depth."""

    protocol: ClassVar[str] = "coins"
    name: str
    coins: tuple[str, ...]
    flips: int
    depths: tuple[int, ...] = (1,)
    metric: str = "quarter"
    seed: int = 0

    @property
    def size(self) -> int:
        return len(self.coins) * self.flips * len(self.depths)

    @property
    def planned_at_start(self) -> int:
        return self.size

    def to_dict(self) -> dict[str, Any]:
        return {"schema": SCHEMA, "name": self.name, "coins": list(self.coins), "flips": self.flips,
                "depths": list(self.depths), "metric": self.metric, "seed": self.seed}


def _protocol_classes() -> type[RunProtocol]:
    """The protocol's row types and protocol class (defined on call: defining a row type registers it)."""

    @dataclass(frozen=True)
    class CoinRow(StoredRow):
        coin = Word[str]("part")

    @dataclass(frozen=True)
    class FlipSpec(PlannedSpec):
        protocol: ClassVar[str] = CoinSuite.protocol
        stored_as: ClassVar[type[StoredRow]] = CoinRow
        key: str
        coin: str
        depth: int
        index: int
        seed: int

        def cell(self) -> tuple[str, int, int, str, str, str]:
            return self.coin, self.depth, self.index, "fair", "flip", f"d{self.depth}"

    class CoinsProtocol(RunProtocol):
        name, unit, plays, selector = CoinSuite.protocol, "flip", "flips coins", "coins"
        schema, refused, kind_title, kept_options = SCHEMA, "flips no coins", "coin suites", ("coins",)
        csv_columns = csv_named("key", "coin", "depth", "index", None, None, "heads", None, None)

        def add_options(self, group: argparse._ArgumentGroup) -> None:
            group.add_argument("--coins", type=csv_values(str), default=None, metavar="C1,C2",
                               help="flip only these coins")

        def read_suite(self, data: Any, source: str) -> CoinSuite:
            if not isinstance(data.get("coins"), list) or not isinstance(data.get("flips"), int):
                raise SuiteError(f"{source}: a coin suite names its coins and flips")
            return CoinSuite(name=data["name"], coins=tuple(data["coins"]), flips=data["flips"],
                             depths=tuple(data.get("depths", [1])), seed=data.get("seed", 0))

        def restrict(self, suite: CoinSuite, chosen: list[str] | None, depths: list[int] | None,
                     variants: list[str] | None = None) -> CoinSuite:
            return replace(suite, coins=tuple(chosen or suite.coins), depths=tuple(depths or suite.depths))

        def plan(self, suite: CoinSuite, factory: Any) -> tuple[list[Any], dict[str, Any]]:
            keys = [(coin, d, k) for d in suite.depths for k in range(suite.flips) for coin in suite.coins]
            return [FlipSpec(key=f"{c}/d{d}/i{k}", coin=c, depth=d, index=k,
                             seed=agent_seed(suite.seed, f"{c}/d{d}/i{k}")) for c, d, k in keys], {}

        def play(self, spec: Any, factory: Any, settings: Any) -> EpisodeRecord:
            heads = random.Random(spec.seed).random() < 0.5
            return EpisodeRecord(agent=factory.spec.spec, config={"key": spec.key, "coin": spec.coin},
                                 start_facelets=SOLVED, end_facelets=SOLVED, solved=heads,
                                 status="solved" if heads else "failed")

        def tables(self, store: Any, suite: dict[str, Any], rows: list[Any]) -> list[Table]:
            coins = sorted({r.coin for r in rows})
            return [Table(title="Heads by coin", header=["coin", "heads"],
                          rows=[[c, str(sum(r.solved for r in rows if r.coin == c))] for c in coins])]

        def setup(self, report: Any) -> list[tuple[str, str]]:
            return [("suite", report.suite["name"]), ("agent", self.agent_text(report))]

    return CoinsProtocol


@pytest.fixture
def coins(monkeypatch, tmp_path: Path) -> Path:
    """The coins protocol registered (one line), ``random`` able to play it (one agent-table row); its suite file."""
    monkeypatch.setattr(plan_module, "_ROW_TYPES", dict(plan_module._ROW_TYPES))
    flipper = specs.AgentKind("flipper", ("random",), (), ("coins",), "a coin flipper", "random")
    monkeypatch.setattr(specs, "AGENT_KINDS", (*specs.AGENT_KINDS, flipper))
    register(_protocol_classes()())
    path = tmp_path / "coins.json"
    path.write_text(json.dumps({"schema": SCHEMA, "name": "coins", "coins": ["penny", "dime"], "flips": 3,
                                "depths": [1, 2]}))
    yield path
    unregister("coins")


def _cli(*argv: str) -> int:
    return main([*argv, "--no-progress", "--quiet"] if argv[0] == "run" else list(argv))


def _outcomes(path: Path) -> dict[str, tuple[str, bool]]:
    with open_run(path) as store:
        return {r.key: (r.coin, r.solved) for r in store.rows()}


def test_a_registered_protocol_runs_reports_exports_views_and_resumes(coins: Path, tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    whole, part = tmp_path / "whole.sqlite", tmp_path / "part.sqlite"
    assert _cli("run", "--suite", str(coins), "--agent", "random", "--out", str(whole)) == 0
    outcomes = _outcomes(whole)
    assert len(outcomes) == 12 and {coin for coin, _ in outcomes.values()} == {"penny", "dime"}
    capsys.readouterr()

    assert _cli("report", str(whole)) == 0
    report = capsys.readouterr().out
    assert "Heads by coin" in report and "pass rate" in report
    assert _cli("export", str(whole), "--format", "csv", "--out", str(tmp_path / "w.csv")) == 0
    rows = list(csv.reader((tmp_path / "w.csv").open()))
    assert rows[0][:5] == ["key", "coin", "depth", "index", "heads"] and len(rows) == 13
    assert _cli("view", str(whole), "--out", str(tmp_path / "w.html")) == 0
    assert "penny/d1/i0" in (tmp_path / "w.html").read_text()

    assert _cli("run", "--suite", str(coins), "--agent", "random", "--out", str(part), "--limit", "5") == 0
    assert len(_outcomes(part)) == 5
    assert _cli("run", "--resume", str(part)) == 0
    assert _outcomes(part) == outcomes  # the resumed run is the uninterrupted one


def test_its_options_selector_and_agent_refusal_come_from_the_protocol(coins: Path, tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    assert "coin suites" in capsys.readouterr().out
    out = tmp_path / "dime.sqlite"
    assert _cli("run", "--suite", str(coins), "--agent", "random", "--out", str(out), "--coins", "dime",
                "--depths", "2") == 0
    assert set(_outcomes(out)) == {"dime/d2/i0", "dime/d2/i1", "dime/d2/i2"}
    assert _cli("run", "--suite", str(coins), "--agent", "random", "--tiers", "face") == 2
    assert "--tiers is not for it; use --coins" in capsys.readouterr().err
    assert _cli("run", "--suite", str(coins), "--agent", "solver") == 2
    assert "'solver' is a scripted agent and flips no coins; coin suites take random or a model spec" in \
        capsys.readouterr().err
    assert _cli("run", "--resume", str(out), "--coins", "penny") == 2
    assert "drop --coins" in capsys.readouterr().err


def test_an_unregistered_protocol_leaves_nothing_behind(coins: Path) -> None:
    assert "coins" in PROTOCOLS
    unregister("coins")
    assert "coins" not in PROTOCOLS
    with pytest.raises(ValueError, match="ships with cubebench"):
        unregister("episodes")
    register(_protocol_classes()())  # the fixture unregisters it again
    twin = _protocol_classes()
    twin.name, twin.schema = "twin", "test-twin/1"  # its selector is --coins, as the registered one's
    with pytest.raises(ValueError, match="run protocol 'twin': its selector 'coins' is 'coins'"):
        register(twin())

    class Styled(twin):
        selector = "twins"

        def add_options(self, group: argparse._ArgumentGroup) -> None:
            group.add_argument("--style")  # the episodes' option
    with pytest.raises(ValueError, match="run protocol 'twin': its options clash"):
        register(Styled())
    assert "twin" not in PROTOCOLS


def test_an_unregistered_protocols_runs_are_from_no_version_this_one_knows(coins: Path, tmp_path: Path,
                                                                           capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "c.sqlite"
    assert _cli("run", "--suite", str(coins), "--agent", "random", "--out", str(run)) == 0
    unregister("coins")
    capsys.readouterr()
    for argv in (["report", str(run)], ["view", str(run), "--out", str(tmp_path / "v.html")],
                 ["run", "--resume", str(run), "--no-progress", "--quiet"]):
        assert main(argv) == 2, argv
        assert "a run of protocol 'coins'" in capsys.readouterr().err
    register(_protocol_classes()())  # the fixture unregisters it again
