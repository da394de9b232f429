"""Interrupting a run (kill -9, Ctrl-C, kill) and resuming it gives exactly the episodes of an uninterrupted run.

The run plays in a subprocess (``python -m cubebench.runner``, the ``cubebench`` CLI); the test watches its
SQLite file and kills it once a few episodes are stored, resumes it, and compares every record (keys,
statuses, actions) with a run that was never interrupted.  The random agent is seeded per episode, so
its actions do not depend on scheduling or on which invocation played the episode.
"""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cubebench.runner.store import open_run
from cubebench.runner.cli import main

SUITE = {"name": "resume", "tiers": ["symbolic", "face"], "depths": [1, 2, 3, 8], "instances": 3,
         "rewards": ["none"], "tool_settings": ["basic", "standard", "ideal"]}
PLANNED = 2 * 4 * 3 * 3


def _stored(db: Path) -> int:
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1) as con:
            return con.execute("SELECT COUNT(*) FROM episodes").fetchone()[0]
    except sqlite3.OperationalError:
        return 0  # the schema is not written yet


def _start(suite: Path, db: Path) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "cubebench.runner", "run", "--distance-budget", "0", "--suite", str(suite), "--agent", "random",
           "--out", str(db), "--no-progress", "--quiet"]
    # A shell starts background jobs with SIGINT ignored, and Python then installs no Ctrl-C handler:
    # restore the default so the test means the same however pytest itself was launched.
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def _interrupt_after(proc: subprocess.Popen, db: Path, episodes: int, sig: int) -> int:
    deadline = time.monotonic() + 120
    while _stored(db) < episodes:
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
    with sqlite3.connect(db) as con:
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
    suite, db = tmp_path / "suite.json", tmp_path / "run.sqlite"
    suite.write_text(json.dumps(SUITE))
    rc = _interrupt_after(_start(suite, db), db, 3, sig)
    assert rc == (-signal.SIGKILL if sig == signal.SIGKILL else 130)
    before = _blobs(db)
    assert 3 <= len(before) < PLANNED  # interrupted mid-run, some episodes stored
    with sqlite3.connect(db) as con:
        assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"

    assert main(["run", "--resume", str(db), "--no-progress", "--quiet"]) == 0

    after = _blobs(db)
    assert {k: after[k] for k in before} == before  # finished episodes untouched by the resume
    assert _snapshot(db) == reference  # same keys, statuses, actions and states as an uninterrupted run
    with open_run(db) as store:
        sessions = store.sessions()
    expected_first = None if sig == signal.SIGKILL else "interrupted"
    assert [s["outcome"] for s in sessions] == [expected_first, "complete"]
