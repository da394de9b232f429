"""Windows on a real X display: ``render_mode="human"`` and ``cubebench play`` with ``--window``.

A private Xvfb server stands in for the display (CI installs it; the tests skip
where it is missing).  Each case runs in a subprocess, so the display and the
GUI toolkit never leak into the rest of the suite.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers import extra_reason

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def display(tmp_path_factory: pytest.TempPathFactory):
    if shutil.which("Xvfb") is None:
        pytest.skip("Xvfb is not installed")
    pytest.importorskip("tkinter")
    pytest.importorskip("matplotlib", reason=extra_reason("matplotlib"))  # the windows are matplotlib figures
    number = 90 + os.getpid() % 100
    server = subprocess.Popen(["Xvfb", f":{number}", "-screen", "0", "800x600x24", "-nolisten", "tcp"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    socket = Path(f"/tmp/.X11-unix/X{number}")
    deadline = time.monotonic() + 10
    while not socket.exists() and server.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    if not socket.exists():
        server.kill()
        pytest.skip("Xvfb did not start")
    yield f":{number}"
    server.terminate()
    server.wait(5)


PRELUDE = """
import time, numpy as np, matplotlib.pyplot as plt
def mapped(window):
    deadline = time.monotonic() + 10
    while not window.winfo_ismapped() and time.monotonic() < deadline:
        plt.pause(0.05)  # the X server maps the window asynchronously
    return bool(window.winfo_ismapped())
def shown():
    fig = plt.gcf()
    return mapped(fig.canvas.manager.window), fig.axes[0].images[0].get_array().copy()
"""


def run_on(display: str, script: str) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("MPLBACKEND", "WAYLAND_DISPLAY")}
    env["DISPLAY"] = display
    done = subprocess.run([sys.executable, "-c", PRELUDE + script], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_human_render_mode_maps_a_window(display: str) -> None:
    out = run_on(display, """
import gymnasium as gym, cubebench
from cubebench.render.net import render_net
env = gym.make("CubeBench-Visual-v0", render_mode="human")
env.reset(seed=0)  # no render() call: a human-mode env draws itself
up, first = shown()
env.step(0)
_, second = shown()
print(plt.get_backend(), up, np.array_equal(second, render_net(env.unwrapped.state // 9)),
      not np.array_equal(first, second))
env.close()
""")
    assert out.split() == ["tkagg", "True", "True", "True"]


def test_play_shows_the_image_observation_in_a_window(display: str) -> None:
    out = run_on(display, """
import io
from cubebench.runner import human_play as p
seen = []
def read(prompt):
    seen.append(shown())
    return ['move("U\\'")', 'move("R\\'")'][len(seen) - 1]
out = io.StringIO()
record = p.play("face", scramble="R U", read=read, out=out, colour=False, window=None)
shown = [img for _, img in seen]
print(record.solved, all(m for m, _ in seen), shown[0].shape, int(np.abs(shown[0].astype(int) - shown[1]).sum() > 0),
      "observation is in the window" in out.getvalue())
""")
    solved, mapped, *shape, changed, said = out.split()
    assert solved == "True" and mapped == "True" and changed == "1" and said == "True"
