"""``agents/example_agent.py``, the documented example of plugging in your own agent (docs/agents.md).

It is run as a user runs it, ``python -m cubebench.agents.example_agent`` in a fresh interpreter
outside the checkout, and its agent is checked against what its docstring promises.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import gymnasium as gym

import cubebench  # noqa: F401  (registers the ids)
from cubebench.agents.episode import run_episode
from cubebench.agents.example_agent import SexyMoveAgent


def test_python_dash_m_example_agent_solves_its_scramble_in_one_step(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "cubebench.agents.example_agent"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    # the scramble U R U' R' is the inverse of R U R' U': the first step solves it and ends the episode
    assert lines[0] == "status=solved steps=1 moves=4", done.stdout
    assert len(lines) == 2 and lines[1].startswith("0 move(\"R U R' U'\") -> Executed R U R' U' (4 actions)")
    assert "solved" in lines[1]


def test_on_another_scramble_the_example_agent_only_cycles() -> None:
    env = gym.make("CubeBench-Symbolic-v0", obs_format="text", max_steps=None)
    record = run_episode(SexyMoveAgent(), env, reset_options={"scramble": "F D"}, max_steps=6, distance_budget_s=None)
    assert record.status == "failed" and (record.n_steps, record.n_moves) == (6, 24)
    # six repetitions of R U R' U' return any cube to where it started
    assert record.end_facelets == record.start_facelets
    assert len({s.observation_text.splitlines()[-1] for s in record.steps}) == 6  # a 6-cycle, no repeats before
