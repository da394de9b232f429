"""What a report's labels say: cells that measured nothing, horizons apart, wall time beside summed time, and what
the blind floor is (issue 40, items 4 and 5)."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from cubebench.runner.cli import main
from cubebench.runner.report import build_report, text_report
from cubebench.runner.store import open_run
from helpers import needs

SUITE = {"name": "labels", "tiers": ["symbolic"], "depths": [1, 8], "instances": 2, "rewards": ["none"],
         "tool_settings": ["basic"]}


def _suite(tmp_path: Path, **fields: object) -> str:
    path = tmp_path / "suite.json"
    path.write_text(json.dumps({**SUITE, **fields}))
    return str(path)


@pytest.fixture(scope="module")
def random_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("labels")
    db = root / "run.sqlite"
    assert main(["run", "--suite", _suite(root), "--agent", "random", "--out", str(db), "--no-progress",
                 "--quiet", "--concurrency", "2"]) == 0
    return db


def test_a_run_mixing_horizons_gives_each_its_own_pass_rate(random_run: Path) -> None:
    with open_run(random_run) as store:
        facts = dict(build_report(store).summary().rows)
    short, long = facts["pass rate"].split("; ")[:2]
    assert short.startswith("short ") and short.endswith("/2)")
    assert long.startswith("long 0.00 [") and long.endswith("(0/2)")


def test_a_run_of_one_horizon_keeps_one_figure(tmp_path: Path) -> None:
    db = tmp_path / "one.sqlite"
    assert main(["run", "--suite", _suite(tmp_path, depths=[1]), "--agent", "solver", "--out", str(db),
                 "--no-progress", "--quiet"]) == 0
    with open_run(db) as store:
        assert dict(build_report(store).summary().rows)["pass rate"] == "1.00 [0.34, 1.00]"


def test_the_episode_time_says_it_is_summed_and_gives_the_wall_time_beside_it(random_run: Path) -> None:
    with open_run(random_run) as store:
        report = build_report(store)
        (session,) = store.sessions()
    summed = sum(r.wall_s for r in report.rows)
    text = dict(report.summary().rows)["episode time"]
    assert text.startswith(f"{summed:.1f} s summed over episodes; wall time ")
    wall = float(text.split("wall time ")[1].split()[0])
    assert wall == pytest.approx(session["ended_at"] - session["started_at"], abs=0.06)


def test_the_blind_floor_is_named_one_walk_not_a_bound(random_run: Path) -> None:
    with open_run(random_run) as store:
        text = text_report(build_report(store))
    assert "shows nothing the agent saw" not in text
    assert "not a bound" in text and "public sets" in text


@pytest.fixture
def dead_url() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


@needs("openai")
def test_cells_whose_every_episode_errored_say_n_a_in_every_table(tmp_path: Path, dead_url: str, capsys) -> None:
    db = tmp_path / "dead.sqlite"
    assert main(["run", "--suite", _suite(tmp_path, instances=1), "--agent", f"openai-compatible:{dead_url}:m",
                 "--out", str(db), "--model-attempts", "1", "--no-progress", "--quiet"]) == 1
    capsys.readouterr()
    with open_run(db) as store:
        report = build_report(store)
    assert [r.status for r in report.rows] == ["error", "error"]
    rates, depths = report.tables[0], report.tables[1]
    assert rates.rows[0][1:] == ["n/a", "n/a"] and "n/a: every episode of the cell ended in error" in rates.note
    assert depths.rows[0][2:] == ["n/a (1 error)", "n/a (1 error)"]
    text = text_report(report)
    assert ".00 [" not in text and "0/1" not in text
    assert main(["report", str(db)]) == 0 and ".00 [" not in capsys.readouterr().out
