"""Helpers the tests import (``from helpers import needs, apply, ...``): engine shortcuts to build states
from notation, skips for optional extras, and learned shortcut models for the no-free-points tests.  Fixtures
stay in conftest.py, which no test imports."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from cubebench.engine import SOLVED, TABLE, kernels
from cubebench.engine.notation import parse_array
from cubebench.generators import ScrambleGenerator
from cubebench.tasks.metrics import Proportion

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


# --------------------------------------------------------------------------- learned shortcut models
# What a model that reads part of a prompt could learn from many items without doing the task (numpy only): a test
# turns what such a model reads (a verification item's text grid, a perturbed STARE item's turn words) into named
# features, fits a learner on items of one seed and scores it on fresh items of another; held-out accuracy within
# chance's interval means the part read gives the answer away to neither learner.  `logistic_regression`:
# L2-regularised, Newton's method; `boosted_stumps`: AdaBoost over one-feature threshold rules (it finds the
# combinations of counts a hand-made rule would, and weights them).

Features = Mapping[str, float]
Learner = Callable[[np.ndarray, np.ndarray], Callable[[np.ndarray], np.ndarray]]
"""Fits on (X, y in {0, 1}) and returns a predictor of 0/1 labels."""


class Vocabulary:
    """The feature names seen in training, in a fixed order; features unseen in training are dropped."""

    def __init__(self, rows: Iterable[Features]) -> None:
        self.names = sorted({name for row in rows for name in row})
        self.index = {name: k for k, name in enumerate(self.names)}

    def matrix(self, rows: Sequence[Features]) -> np.ndarray:
        out = np.zeros((len(rows), len(self.names)))
        for r, row in enumerate(rows):
            for name, value in row.items():
                if name in self.index:
                    out[r, self.index[name]] = value
        return out


def logistic_regression(x: np.ndarray, y: np.ndarray, l2: float = 1.0, steps: int = 25) -> Callable[[np.ndarray],
                                                                                                   np.ndarray]:
    """L2-regularised logistic regression (with an intercept), Newton's method on standardised features."""
    mean, scale = x.mean(axis=0), x.std(axis=0)
    scale[scale == 0] = 1.0

    def design(data: np.ndarray) -> np.ndarray:
        return np.hstack([np.ones((len(data), 1)), (data - mean) / scale])

    a = design(x)
    w = np.zeros(a.shape[1])
    penalty = np.full(a.shape[1], l2)
    penalty[0] = 0.0
    for _ in range(steps):
        p = 1 / (1 + np.exp(-a @ w))
        gradient = a.T @ (p - y) + penalty * w
        hessian = (a * (p * (1 - p))[:, None]).T @ a + np.diag(penalty) + 1e-9 * np.eye(len(w))
        w -= np.linalg.solve(hessian, gradient)
    return lambda data: (design(data) @ w > 0).astype(int)


def boosted_stumps(x: np.ndarray, y: np.ndarray, rounds: int = 60) -> Callable[[np.ndarray], np.ndarray]:
    """AdaBoost over stumps "feature >= t" (either way), ``rounds`` rounds."""
    n = len(y)
    sign = 2 * y - 1
    weight = np.full(n, 1 / n)
    cuts = [np.unique(x[:, j]) for j in range(x.shape[1])]
    model: list[tuple[int, float, int, float]] = []
    for _ in range(rounds):
        best = (0.5, 0, 0.0, 1)
        for j, values in enumerate(cuts):
            for t in values[1:]:
                fires = x[:, j] >= t
                err = weight[fires != (sign > 0)].sum()  # the stump "Yes when it fires"
                for e, direction in ((err, 1), (1 - err, -1)):
                    if e < best[0]:
                        best = (e, j, float(t), direction)
        err, j, t, direction = best
        if err >= 0.5 - 1e-12:
            break
        err = max(err, 1e-12)
        alpha = 0.5 * np.log((1 - err) / err)
        vote = direction * np.where(x[:, j] >= t, 1, -1)
        weight *= np.exp(-alpha * sign * vote)
        weight /= weight.sum()
        model.append((j, t, direction, alpha))

    def predict(data: np.ndarray) -> np.ndarray:
        score = np.zeros(len(data))
        for j, t, direction, alpha in model:
            score += alpha * direction * np.where(data[:, j] >= t, 1, -1)
        return (score > 0).astype(int)
    return predict


LEARNERS: dict[str, Learner] = {"logistic regression": logistic_regression, "boosted stumps": boosted_stumps}


def held_out(train: Sequence[tuple[Features, bool]], test: Sequence[tuple[Features, bool]],
             learner: Learner) -> Proportion:
    """Right answers of ``learner`` fitted on ``train`` and scored on ``test`` (rows of (features, is Yes))."""
    vocabulary = Vocabulary(f for f, _ in train)
    predict = learner(vocabulary.matrix([f for f, _ in train]), np.array([int(y) for _, y in train]))
    guesses = predict(vocabulary.matrix([f for f, _ in test]))
    return Proportion(int(sum(int(g) == int(y) for g, (_, y) in zip(guesses, test))), len(test))


def covers(rate: Proportion, chance: float) -> bool:
    """Whether ``rate``'s Wilson 95 % interval holds ``chance``."""
    lo, hi = rate.interval or (0.0, 1.0)
    return lo <= chance <= hi
