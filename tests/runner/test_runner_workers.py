"""The ``process`` backend's workers die with the driver: ``kill -9`` (the kernel's parent-death signal and
the workers' watchdog), and ``kill`` or Ctrl-C (the driver stops its pool at once instead of waiting for the
running episodes).

The driver is the ``cubebench run --backend process`` command in a subprocess, whose agent hangs in its
first step (a model that never answers) after leaving a mark: once both workers have marked, the test
signals the driver and watches every process it had started.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the process table in /proc")

DRIVER = '''
import os, sys, time
from pathlib import Path
from cubebench.agents import scripted

class HangingAgent(scripted.RandomAgent):
    def act(self, observation, tools):
        Path(os.environ["MARKS"], str(os.getpid())).touch()
        time.sleep(3600)

scripted.SCRIPTED_AGENTS["hanging"] = HangingAgent  # runs in the spawned workers too (their __mp_main__)

if __name__ == "__main__":
    from cubebench.runner.cli import main
    sys.exit(main(sys.argv[1:]))
'''


def _stat(pid: int) -> tuple[int, str] | None:
    """(parent pid, state letter) of a process, ``None`` when it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return int(fields[1]), fields[0]


def _children(pid: int) -> list[int]:
    return [int(d) for d in os.listdir("/proc") if d.isdigit() and (_stat(int(d)) or (0, ""))[0] == pid]


def _alive(pid: int) -> bool:
    stat = _stat(pid)
    return stat is not None and stat[1] not in "ZX"  # a zombie is dead (reparented to an init that may not reap)


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM, signal.SIGINT], ids=["kill-9", "kill", "ctrl-c"])
def test_workers_die_with_the_driver(tmp_path: Path, sig: int) -> None:
    suite, db, marks, driver_py = tmp_path / "suite.json", tmp_path / "run.sqlite", tmp_path / "marks", tmp_path / "driver.py"
    suite.write_text(json.dumps({"name": "workers", "tiers": ["symbolic"], "depths": [1], "instances": 4,
                                 "rewards": ["none"], "tool_settings": ["basic"]}))
    marks.mkdir()
    driver_py.write_text(DRIVER)
    cmd = [sys.executable, str(driver_py), "run", "--distance-budget", "0", "--suite", str(suite), "--agent", "hanging",
           "--out", str(db), "--backend", "process", "--concurrency", "2", "--no-progress", "--quiet"]
    driver = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env={**os.environ, "MARKS": str(marks)},
                              preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    started: list[int] = []
    try:
        deadline = time.monotonic() + 240
        while len(list(marks.iterdir())) < 2:  # both workers are playing an episode
            assert driver.poll() is None, f"the run ended early: {driver.stderr.read().decode()[-2000:]}"
            assert time.monotonic() < deadline, "the workers never started playing"
            time.sleep(0.05)
        started = _children(driver.pid)  # the workers (and multiprocessing's resource tracker)
        assert {int(p.name) for p in marks.iterdir()} <= set(started)
        driver.send_signal(sig)
        rc = driver.wait(timeout=60)  # not after the running episodes: they never end
        assert rc == (-signal.SIGKILL if sig == signal.SIGKILL else 130), driver.stderr.read().decode()[-2000:]
        deadline = time.monotonic() + 30
        while any(_alive(pid) for pid in started) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not [pid for pid in started if _alive(pid)], "workers outlived the driver"
    finally:
        if driver.poll() is None:
            driver.kill()
            driver.wait()
        for pid in started:  # what a failed test would leave running
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
