"""Report pieces: the paper-layout tables, the report without matplotlib, an empty run."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from cubebench.runner.html_report import report_html
from cubebench.runner.plots import PlotsUnavailable, write_plots
from cubebench.runner.report import build_report, text_report
from cubebench.runner.store import open_run
from cubebench.runner.tables import render_text
from cubebench.runner.cli import main
from helpers import needs

SUITE = {"name": "rep", "tiers": ["symbolic", "vertex"], "depths": [1, 8], "instances": 2,
         "rewards": ["none", "face"], "tool_settings": ["basic"]}


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("rep")
    (root / "suite.json").write_text(json.dumps(SUITE))
    db = root / "run.sqlite"
    assert main(["run", "--distance-budget", "0", "--suite", str(root / "suite.json"), "--agent", "random", "--out", str(db),
                 "--no-progress", "--quiet", "--protocol", "strict"]) == 0
    return db


def test_pass_rate_table_has_the_paper_layout(run: Path) -> None:
    with open_run(run) as store:
        report = build_report(store)
    main_table = report.tables[0]
    assert [g for g, _ in main_table.groups] == ["", "Symbolic", "Vertex"]
    assert main_table.header == ["condition", "Short", "Long", "Short", "Long"]
    assert [row[0] for row in main_table.rows] == ["random: reward=none", "random: reward=face", "blind floor (strict)"]
    text = render_text(main_table)
    assert text.splitlines()[2].split() == ["Symbolic", "Vertex"]
    assert not any("attribution" in t.title.lower() for t in report.tables)  # one tool setting: no attribution
    by_depth = report.tables[1]
    assert all(cell.count("/") == 1 and cell.endswith("/2") for row in by_depth.rows[:-1] for cell in row[2:])
    assert by_depth.rows[-1][:2] == ["blind floor (strict)", "every tier"] and by_depth.rows[-1][3] == ".00"


def test_report_without_matplotlib_still_renders_and_says_why(run: Path, monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib now raises ImportError
    with open_run(run) as store:
        report = build_report(store)
    with pytest.raises(PlotsUnavailable, match=r'pip install -e "\.\[report\]"'):
        write_plots(report.rows, Path("unused"))
    page = report_html(report)
    assert "plots need matplotlib" in page and "<table" in page and "data:image/png" not in page
    assert main(["report", str(run), "--plots", "x"]) == 2


@needs("matplotlib")
def test_reward_comparison_plot_is_written_when_rewards_vary(run: Path, tmp_path: Path) -> None:
    with open_run(run) as store:
        made = write_plots(store.rows(), tmp_path)
    assert sorted(p.name for p in made) == ["pass_rate_by_depth.png", "reward_settings.png"]
    assert all(p.stat().st_size > 5000 for p in made)


def test_an_empty_run_reports_that_nothing_finished(tmp_path: Path) -> None:
    (tmp_path / "suite.json").write_text(json.dumps(SUITE))
    db = tmp_path / "empty.sqlite"
    assert main(["run", "--distance-budget", "0", "--suite", str(tmp_path / "suite.json"), "--agent", "random", "--out", str(db),
                 "--limit", "0", "--no-progress", "--quiet"]) == 0
    with open_run(db) as store:
        report = build_report(store)
    text = text_report(report)
    assert "0 of 16 finished" in text and "No finished episodes yet." in text
    assert "No finished episodes yet." in report_html(report)


def test_the_report_states_the_move_budget_each_episode_ran_under(run: Path) -> None:
    with open_run(run) as store:
        report = build_report(store)
        configs = [record.config["env"] for _, record in store.records()]
    assert dict(report.summary().rows)["budget"] == (
        "quarter turns per episode by depth (at every depth >= 2 a blind agent solves at most 5 % of a run's "
        "instances, 3.3 % of generated starts): "
        "5 at depth 1, 40 at depth 8; 40 view rotations on Face and Vertex")
    assert len(configs) == 16
    for env in configs:
        assert env["max_moves"] in (5, 40) and env["max_rotations"] == (40 if env["tier"] == "vertex" else None)
    with open_run(run) as store:
        depth = {spec.key: spec.depth for spec in store.plan()}
        budgets = {(depth[key], record.config["env"]["max_moves"]) for key, record in store.records()}
    assert budgets == {(1, 5), (8, 40)}


def test_the_paper_protocol_plays_with_no_cap_and_prints_its_blind_floor(tmp_path: Path) -> None:
    """The default protocol, ``paper``: the paper's 20 interaction steps and no move or rotation budget; the report
    says so and prints the blind agent's floor: every start within 4 quarter turns, none at depth 8."""
    (tmp_path / "suite.json").write_text(json.dumps({**SUITE, "rewards": ["none"]}))
    db = tmp_path / "paper.sqlite"
    assert main(["run", "--distance-budget", "0", "--suite", str(tmp_path / "suite.json"), "--agent", "random",
                 "--out", str(db), "--no-progress", "--quiet"]) == 0
    with open_run(db) as store:
        report = build_report(store)
        envs = [record.config["env"] for _, record in store.records()]
        assert store.get_meta("config")["play"]["rules"] == "paper"
    facts = dict(report.summary().rows)
    assert facts["rules"].startswith("paper: the CubeBench paper's budget") and facts["budget"].startswith(
        "no move or view-rotation cap: 20 interaction steps")
    assert {(env["max_moves"], env["max_rotations"]) for env in envs} == {(None, None)}
    assert report.tables[0].rows[-1] == ["blind floor (paper)", "1.0", ".00", "1.0", ".00"]
    assert report.tables[1].rows[-1] == ["blind floor (paper)", "every tier", "1.0", ".00"]
