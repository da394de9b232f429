"""One driver plays a run at a time: a resume while the run's driver is still alive is refused in one line.

Issue 26: ``cubebench run --resume RUN`` after a "kill -9 of the driver" failed with ``episode ... is already
stored or not planned (UNIQUE constraint failed: episodes.key)``.  The cause: the driver was still alive
(the kill had hit a wrapper such as ``timeout``, or the resume was started from another terminal), so two
drivers played the same pending episodes and the second to store one failed (and the first would too).
Now the driver holds a lock on the run (:meth:`~cubebench.runner.store.RunStore.claim`), which the kernel
releases however it dies: the resume is refused while the driver lives, and works after ``kill -9``.

The driver runs in a subprocess that stops inside the episode after ``HANG_AFTER`` stored ones (the random
agent's next ``act`` waits) until the test creates the ``release`` file, so the test knows the run is under
way, with episodes still to store, whenever it acts.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path

from cubebench.runner.cli import main
from helpers import HANGING_DRIVER
from cubebench.runner.store import open_run

SUITE = {"name": "one-driver", "tiers": ["symbolic"], "depths": [1, 3], "instances": 2, "rewards": ["none"],
         "tool_settings": ["basic", "ideal"]}
PLANNED = 1 * 2 * 2 * 2
HANG_AFTER = 2

DRIVER = HANGING_DRIVER


def _start(tmp: Path) -> tuple[subprocess.Popen, Path, Path, Path]:
    suite, db, mark, release = tmp / "suite.json", tmp / "run.sqlite", tmp / "under-way", tmp / "release"
    suite.write_text(json.dumps(SUITE))
    (tmp / "driver.py").write_text(DRIVER)
    cmd = [sys.executable, str(tmp / "driver.py"), "run", "--distance-budget", "0", "--suite", str(suite),
           "--agent", "random", "--out", str(db), "--no-progress", "--quiet"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env={**os.environ, "MARK": str(mark), "RELEASE": str(release),
                                 "HANG_AFTER": str(HANG_AFTER)})
    deadline = time.monotonic() + 240
    while not mark.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            raise AssertionError(f"the run ended before it was under way: {proc.stderr.read().decode()[-2000:]}")
        time.sleep(0.02)
    return proc, db, release, suite


def _resume(db: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cubebench.runner", "run", "--resume", str(db), "--no-progress",
                           "--quiet"], capture_output=True, text=True, timeout=300)


def _records(db: Path) -> dict[str, tuple]:
    with open_run(db) as store:
        return {key: (rec.status, [s.action for s in rec.steps], rec.start_facelets, rec.end_facelets)
                for key, rec in store.records()}


def test_a_resume_while_the_driver_lives_is_refused_and_the_driver_finishes(tmp_path: Path) -> None:
    proc, db, release, _ = _start(tmp_path)
    try:
        refused = _resume(db)  # before the fix: it played the pending episodes beside the live driver
    finally:
        release.touch()
    assert proc.wait(timeout=300) == 0, proc.stderr.read().decode()[-2000:]  # before: UNIQUE constraint failed
    assert refused.returncode == 2, refused.stderr[-2000:]
    line = refused.stderr.strip()
    assert "\n" not in line and "Traceback" not in line
    assert line.startswith(f"cubebench: error: {db} is being played by another cubebench process (session 1, "), line
    with open_run(db) as store:
        assert len(store.rows()) == len(store.plan()) == PLANNED
        assert [s["outcome"] for s in store.sessions()] == ["complete"]  # the refused resume left no session
    assert not db.with_name(f".{db.name}.lock").exists()  # the driver removed its lock when it closed the run


def test_after_kill_9_of_the_driver_the_resume_finishes_the_uninterrupted_run(tmp_path: Path) -> None:
    reference = tmp_path / "reference"
    reference.mkdir()
    proc, db, _, suite = _start(tmp_path)
    proc.send_signal(signal.SIGKILL)
    assert proc.wait(timeout=60) == -signal.SIGKILL
    with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as con:
        assert con.execute("SELECT COUNT(*) FROM episodes").fetchone()[0] == HANG_AFTER
    assert db.with_name(f".{db.name}.lock").exists()  # left by the killed driver, no longer locked

    resumed = _resume(db)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert main(["run", "--distance-budget", "0", "--suite", str(suite), "--agent", "random",
                 "--out", str(reference / "run.sqlite"), "--no-progress", "--quiet"]) == 0
    assert _records(db) == _records(reference / "run.sqlite")  # nothing lost, doubled or changed
    assert not db.with_name(f".{db.name}.lock").exists()
