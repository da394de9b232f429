"""Interrupting a run (kill -9, Ctrl-C, kill) and resuming it gives exactly the episodes of an uninterrupted run.

The run plays in a subprocess (the ``cubebench`` CLI's ``main``, through a small driver script); the test
signals it once a few episodes are stored, resumes it, and compares every record (keys, statuses, actions)
with a run that was never interrupted.  The random agent is seeded per episode, so its actions do not
depend on scheduling or on which invocation played the episode.

The signal must land while the run is under way.  Seeing a few stored rows is no proof of that: the
run's 72 random episodes take 2-4 s, and on a loaded machine a polling test can fall behind until the run
has finished; a Ctrl-C that lands after ``main`` returned ends the process by SIGINT (-2) instead of 130.
So the driver holds the run inside its next episode once ``HANG_AFTER`` episodes are stored (the random
agent's next ``act`` waits, as a slow model would) and marks that it does: the test signals only after
the mark, and the run cannot end before the signal.
"""

from __future__ import annotations

from contextlib import closing

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cubebench.runner.store import open_run
from cubebench.runner.cli import main
from helpers import HANGING_DRIVER, comparable_records

SUITE = {"name": "resume", "tiers": ["symbolic", "face"], "depths": [1, 2, 3, 8], "instances": 3,
         "rewards": ["none"], "tool_settings": ["basic", "standard", "ideal"]}
PLANNED = 2 * 4 * 3 * 3
HANG_AFTER = 3

DRIVER = HANGING_DRIVER


def _stored(db: Path) -> int:
    with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10)) as con:
        return con.execute("SELECT COUNT(*) FROM episodes").fetchone()[0]


def _start(suite: Path, db: Path, mark: Path) -> subprocess.Popen:
    driver = db.with_name("driver.py")
    driver.write_text(DRIVER)
    cmd = [sys.executable, str(driver), "run", "--distance-budget", "0", "--suite", str(suite), "--agent", "random",
           "--out", str(db), "--no-progress", "--quiet"]
    # A shell starts background jobs with SIGINT ignored, and Python then installs no Ctrl-C handler:
    # restore the default so the test means the same however pytest itself was launched.
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env={**os.environ, "MARK": str(mark), "HANG_AFTER": str(HANG_AFTER)},
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def _interrupt_when_marked(proc: subprocess.Popen, mark: Path, sig: int) -> int:
    deadline = time.monotonic() + 240
    while not mark.exists():  # the run is inside episode HANG_AFTER + 1, its signal handling in place
        if proc.poll() is not None or time.monotonic() > deadline:
            raise AssertionError(f"the run ended before it could be interrupted: {proc.stderr.read().decode()}")
        time.sleep(0.01)
    proc.send_signal(sig)
    return proc.wait(timeout=60)


def _snapshot(db: Path) -> dict[str, tuple]:
    with open_run(db) as store:
        return {key: (rec.status, [s.action for s in rec.steps], [c.actions for s in rec.steps for c in s.tool_calls],
                      rec.start_facelets, rec.end_facelets) for key, rec in store.records()}


def _blobs(db: Path) -> dict[str, bytes]:
    with closing(sqlite3.connect(db)) as con:
        return dict(con.execute("SELECT key, record FROM episodes"))


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> dict[str, tuple]:
    root = tmp_path_factory.mktemp("reference")
    (root / "suite.json").write_text(json.dumps(SUITE))
    db = root / "ref.sqlite"
    assert main(["run", "--distance-budget", "0", "--suite", str(root / "suite.json"), "--agent", "random", "--out", str(db),
                 "--no-progress", "--quiet"]) == 0
    snap = _snapshot(db)
    assert len(snap) == PLANNED
    return snap


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT, signal.SIGTERM], ids=["kill-9", "ctrl-c", "kill"])
def test_interrupted_run_resumes_to_exactly_the_uninterrupted_episodes(tmp_path: Path, reference, sig) -> None:
    suite, db, mark = tmp_path / "suite.json", tmp_path / "run.sqlite", tmp_path / "under-way"
    suite.write_text(json.dumps(SUITE))
    proc = _start(suite, db, mark)
    rc = _interrupt_when_marked(proc, mark, sig)
    err = proc.stderr.read().decode()
    assert rc == (-signal.SIGKILL if sig == signal.SIGKILL else 130), err[-2000:]
    if sig != signal.SIGKILL:  # Ctrl-C and kill say how to go on
        assert err.strip().splitlines()[-1] == (f"cubebench: interrupted; every finished record is stored: resume with: "
                                                f"cubebench run --resume {db}"), err[-2000:]
    before = _blobs(db)
    assert len(before) == _stored(db) == HANG_AFTER  # interrupted mid-run, in the episode after these
    with closing(sqlite3.connect(db)) as con:
        assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"

    assert main(["run", "--resume", str(db), "--no-progress", "--quiet"]) == 0

    after = _blobs(db)
    assert {k: after[k] for k in before} == before  # finished episodes untouched by the resume
    assert _snapshot(db) == reference  # same keys, statuses, actions and states as an uninterrupted run
    with open_run(db) as store:
        sessions = store.sessions()
    expected_first = None if sig == signal.SIGKILL else "interrupted"
    assert [s["outcome"] for s in sessions] == [expected_first, "complete"]


def test_a_kill_while_the_run_is_created_leaves_no_run_and_the_same_out_starts_over(tmp_path: Path) -> None:
    """A run killed after its file was made but before its plan was written must not leave a run that
    ``--resume`` calls complete (0 of 0) and ``--out`` refuses: creation is atomic."""
    suite, db = tmp_path / "suite.json", tmp_path / "run.sqlite"
    suite.write_text(json.dumps({**SUITE, "tiers": ["symbolic"], "depths": [1], "tool_settings": ["basic"]}))
    argv = ["run", "--distance-budget", "0", "--suite", str(suite), "--agent", "random", "--out", str(db),
            "--no-progress", "--quiet"]
    probe = ("import os, signal, sys\n"
             "from cubebench.runner import store\n"
             "def killed(self, plan):  # the moment between creating the run and writing its plan\n"
             "    os.kill(os.getpid(), signal.SIGKILL)\n"
             "store.RunStore.write_plan = killed\n"
             "from cubebench.runner.cli import main\n"
             f"sys.exit(main({argv!r}))\n")
    child = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300)
    assert child.returncode == -signal.SIGKILL, child.stderr[-2000:]
    assert not db.exists()  # no run at the path: nothing to resume, nothing in the way of --out
    assert [p.name for p in tmp_path.glob(".run.sqlite.creating-*")]  # the killed creator's partial file
    assert main(["run", "--resume", str(db), "--no-progress", "--quiet"]) == 2
    assert not list(tmp_path.glob(".*creating-*"))  # whoever next opens a run in the folder removes it
    assert main(argv) == 0  # the same --out starts over
    with open_run(db) as store:
        assert len(store.rows()) == len(store.plan()) == 3
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.sqlite", "suite.json"]  # the killed creator's file is gone


# --- a resume may choose where it plays ---------------------------------------------------------
SMALL = ["--suite", "smoke", "--tiers", "symbolic", "--depths", "1,3", "--distance-budget", "0", "--agent", "random"]



def test_a_resume_plays_on_the_backend_it_names_and_keeps_the_stored_configuration(tmp_path: Path, monkeypatch) -> None:
    from cubebench.runner import run as run_module

    inline, partial = tmp_path / "inline.sqlite", tmp_path / "partial.sqlite"
    assert main(["run", *SMALL, "--out", str(inline), "--no-progress", "--quiet"]) == 0
    assert main(["run", *SMALL, "--out", str(partial), "--limit", "3", "--no-progress", "--quiet"]) == 0
    used: list[tuple[str, int, str | None]] = []
    run_backend = run_module.run_backend

    def spy(backend, todo, factory, agent, play, concurrency, ray_address):
        used.append((backend, concurrency, ray_address))
        return run_backend(backend, todo, factory, agent, play, concurrency, ray_address)

    monkeypatch.setattr(run_module, "run_backend", spy)
    assert main(["run", "--resume", str(partial), "--backend", "process", "--concurrency", "2", "--no-progress",
                 "--quiet"]) == 0
    assert used == [("process", 2, None)]
    assert comparable_records(partial) == comparable_records(inline)  # nothing lost, duplicated or changed
    with open_run(partial) as store:
        assert store.get_meta("config")["backend"] == "local"  # the run as started
        assert [s["outcome"] for s in store.sessions()] == ["partial: --limit 3", "complete"]


def test_a_resume_refuses_a_ray_address_without_the_ray_backend_in_one_line(tmp_path: Path, capsys) -> None:
    partial = tmp_path / "partial.sqlite"
    assert main(["run", *SMALL, "--out", str(partial), "--limit", "2", "--no-progress", "--quiet"]) == 0
    capsys.readouterr()
    assert main(["run", "--resume", str(partial), "--ray-address", "127.0.0.1:1", "--no-progress", "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["cubebench: error: --ray-address needs the ray backend, and this run's backend is local: "
                   "add --backend ray"]
    with open_run(partial) as store:
        assert len(store.rows()) == 2  # nothing played, nothing lost
    assert main(["run", *SMALL, "--out", str(tmp_path / "x.sqlite"), "--ray-address", "127.0.0.1:1"]) == 2
    assert capsys.readouterr().err.strip().splitlines() == ["cubebench: error: --ray-address needs --backend ray"]
    assert not (tmp_path / "x.sqlite").exists()
