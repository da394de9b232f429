"""Helpers the tests import (``from helpers import needs, apply, ...``): engine shortcuts to build states
from notation, and skips for optional extras.  Fixtures stay in conftest.py, which no test imports."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from cubebench.engine import SOLVED, TABLE, kernels
from cubebench.engine.notation import parse_array
from cubebench.generators import ScrambleGenerator

SCRAMBLES = ScrambleGenerator()
"""Uncertified seeded scrambles: for tests that need a scrambled cube but not a certified
distance, so the default suite never builds the optimal solver's tables."""


def apply(seq: str, state: np.ndarray = SOLVED) -> np.ndarray:
    """State after ``seq`` (notation) from ``state``."""
    return kernels.apply_moves(state, TABLE, parse_array(seq))


# --------------------------------------------------------------------------- optional extras

EXTRA_OF = {
    "openai": "llm", "anthropic": "llm", "httpx": "llm",
    "torch": "rl", "stable_baselines3": "rl",
    "matplotlib": "report",
    "pyrender": "render3d", "trimesh": "render3d",
    "pettingzoo": "multi", "ray": "ray", "llama_cpp": "local-llm", "inspect_ai": "inspect",
    "pyarrow": "export", "datasets": "export",
    "verifiers": "verifiers", "transformers": "hf", "tokenizers": "hf", "peft": "hf", "gguf": "hf",
    "accelerate": "hf", "trl": "train",
}
"""The extra of pyproject.toml that installs each optional dependency a test may need."""


def extra_reason(*modules: str) -> str:
    """Why a test is skipped without ``modules``: what is missing and which extra installs it."""
    extras = sorted({EXTRA_OF[m.split(".")[0]] for m in modules})
    which = " and ".join(f"the {e} extra" for e in extras)
    return f"needs {', '.join(modules)} ({which}): pip install 'cubebench[{','.join(extras)}]'"


def missing(*modules: str) -> list[str]:
    """The top-level modules among ``modules`` that are not installed (nothing is imported)."""
    return [m for m in modules if importlib.util.find_spec(m) is None]


def needs(*modules: str) -> pytest.MarkDecorator:
    """Skip marker for a test (or, as ``pytestmark``, a module) that needs optional dependencies;
    where they are installed the test runs unchanged. A module that must import one at its top uses
    ``pytest.importorskip(name, reason=extra_reason(name))`` instead."""
    gone = missing(*modules)
    return pytest.mark.skipif(bool(gone), reason=extra_reason(*gone) if gone else "")


HANGING_DRIVER = """
import os, sys, time
from pathlib import Path
from cubebench.agents import scripted
from cubebench.runner import store

stored = 0
add_episode, act = store.RunStore.add_episode, scripted.RandomAgent.act

def counting_add_episode(self, spec, record):
    global stored
    add_episode(self, spec, record)
    stored += 1

def act_or_wait(self, observation, tools):
    if stored == int(os.environ["HANG_AFTER"]):  # inside the next episode: touch MARK, wait for RELEASE (or a signal)
        Path(os.environ["MARK"]).touch()
        release = os.environ.get("RELEASE")
        while not (release and Path(release).exists()):
            time.sleep(0.05)
    return act(self, observation, tools)

store.RunStore.add_episode = counting_add_episode
scripted.RandomAgent.act = act_or_wait
from cubebench.runner.cli import main
sys.exit(main(sys.argv[1:]))
"""
"""A ``cubebench`` command line (``python driver.py run ...``) whose random agent stops inside the episode after
``$HANG_AFTER`` stored ones: it touches ``$MARK`` and waits there until ``$RELEASE`` exists (without
``RELEASE``, until the test signals or kills it)."""


def one_line_error(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """Run ``cubebench ARGV``; assert exit 2, one stderr line naming an error, no traceback, nothing on stdout; the
    line."""
    from cubebench.runner.cli import main

    try:
        code = main(list(argv))
    except SystemExit as end:
        code = end.code
    out, err = capsys.readouterr()
    assert code == 2, (argv, code, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1, f"{argv}: {err}"
    assert "Traceback" not in err and "error" in lines[0]
    assert out == "", f"{argv} printed before failing: {out[:200]}"
    return lines[0]


def comparable_records(db: Path) -> dict[str, dict[str, Any]]:
    """Every record of a run as a dict, its wall-clock times left out (the one thing a backend or a resume may
    change)."""
    from cubebench.runner.store import open_run

    with open_run(db) as store:
        out = {}
        for key, record in store.records():
            data = record.to_dict()
            data.pop("wall_s")
            for step in data["steps"]:
                step.pop("latency_s")
            out[key] = data
        return out
