"""The DeepCubeA-style trainer: value targets on cases checked by hand, resume, and no label from a solver."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from cubebench.agents.deepcube_net import load_value_net
from cubebench.agents.deepcube_search import QUARTER_MOVES
from cubebench.engine.apply import apply_sequence
from cubebench.engine.facelets import SOLVED
from cubebench.engine.moves import MOVE_INDEX, QUARTER_ACTIONS
from cubebench.training import deepcube

torch = pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[2]
FORBIDDEN = ("cubebench.solver.optimal", "cubebench.solver.oracle", "cubebench.solver.twophase", "kociemba")
DEEPCUBE_MODULES = ("cubebench.agents.deepcube_net", "cubebench.agents.deepcube_search",
                    "cubebench.agents.deepcube_agent", "cubebench.training.deepcube")


def turned(*names: str) -> np.ndarray:
    return apply_sequence(SOLVED, np.array([MOVE_INDEX[n] for n in names], dtype=np.int64))


def test_targets_of_a_one_turn_state_are_one_whatever_the_target_says() -> None:
    state = turned("R")
    # a target network that calls everything 7 (the solved child included): the solved child still counts 0
    assert deepcube.value_targets(state[None], lambda s: np.full(len(s), 7.0))[0] == pytest.approx(1.0)


def test_a_solved_state_has_target_zero_and_the_zero_target_gives_one_elsewhere() -> None:
    states = np.stack([SOLVED, turned("U", "R"), turned("F", "F", "L")])
    targets = deepcube.value_targets(states, deepcube.zero_target)
    assert targets.tolist() == [0.0, 1.0, 1.0]


def test_targets_take_the_best_child_plus_one() -> None:
    """A stub J: 5 for every state except the one-turn state ``R``, which it calls 2: the target of ``R U`` is
    1 + 2 = 3 (its child after U' is R), and negative estimates count as 0."""
    start, good = turned("R", "U"), turned("R").tobytes()
    stub = lambda s: np.array([2.0 if row.tobytes() == good else 5.0 for row in s])  # noqa: E731
    assert deepcube.value_targets(start[None], stub)[0] == pytest.approx(3.0)
    assert deepcube.value_targets(start[None], lambda s: np.full(len(s), -4.0))[0] == pytest.approx(1.0)


def test_random_walks_have_the_drawn_lengths_and_never_undo_a_turn() -> None:
    rng = np.random.default_rng(3)
    states, depths = deepcube.random_walk_states(rng, 200, 3)
    assert depths.min() >= 1 and depths.max() <= 3
    one = states[depths == 1]
    singles = {turned(a).tobytes() for a in QUARTER_ACTIONS}
    assert all(s.tobytes() in singles for s in one)
    two = states[depths == 2]  # two turns that never undo each other never give back the solved cube
    assert not any(np.array_equal(s, SOLVED) for s in two)
    assert len(QUARTER_MOVES) == 12


def run_trainer(out: Path, *extra: str) -> int:
    return deepcube.main(["--out", str(out), "--batch", "16", "--hidden", "8,8", "--res-blocks", "1",
                          "--check-every", "2", "--threshold", "10", "--save-every", "2", "--log-every", "100",
                          "--max-depth", "4", *extra])


def test_resume_gives_the_same_weights_as_an_uninterrupted_run(tmp_path: Path) -> None:
    assert run_trainer(tmp_path / "whole", "--steps", "6") == 0
    assert run_trainer(tmp_path / "split", "--steps", "3") == 0
    assert run_trainer(tmp_path / "split", "--steps", "6", "--resume") == 0
    whole, split = load_value_net(tmp_path / "whole" / "value.npz"), load_value_net(tmp_path / "split" / "value.npz")
    for a, b in zip(whole.weights + whole.biases, split.weights + split.biases):
        np.testing.assert_array_equal(a, b)
    rows = (tmp_path / "split" / "curve.csv").read_text().splitlines()
    assert rows[0].startswith("step,loss") and len(rows) == 7
    assert whole.meta["target_updates"] == 3  # refreshed at every check (threshold 10): steps 2, 4, 6


def test_a_run_folder_is_not_overwritten_and_resume_needs_a_checkpoint(tmp_path: Path, capsys) -> None:
    assert run_trainer(tmp_path / "a", "--resume", "--steps", "1") == 2
    assert "holds no checkpoint" in capsys.readouterr().err
    assert run_trainer(tmp_path / "a", "--steps", "1") == 0
    assert run_trainer(tmp_path / "a", "--steps", "2") == 2
    assert "pass --resume" in capsys.readouterr().err
    assert deepcube.main(["--out", str(tmp_path / "a"), "--resume", "--steps", "2", "--batch", "32", "--hidden", "8,8",
                          "--res-blocks", "1", "--max-depth", "4"]) == 2
    assert "other arguments" in capsys.readouterr().err


def test_the_trainer_and_agent_name_no_solver_or_oracle_in_their_imports() -> None:
    for module in DEEPCUBE_MODULES:
        path = ROOT / {"agents": "agents", "training": "benchmarks/training"}[module.split(".")[1]] / (
            module.rsplit(".", 1)[1] + ".py")
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                [node.module or ""] + [f"{node.module}.{a.name}" for a in node.names]
                if isinstance(node, ast.ImportFrom) else [])
            assert not [n for n in names if n.startswith(FORBIDDEN) or n.startswith("cubebench.solver")], (module, names)


POISONED = """
import sys, types
import cubebench.agents, cubebench.wrappers, cubebench.training  # the packages' own tool stacks load the solvers
class Poison(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise RuntimeError(self.__name__ + "." + name + " was used")
for name in FORBIDDEN:
    sys.modules[name] = Poison(name)
    parent, _, child = name.rpartition(".")
    if parent:
        setattr(sys.modules[parent], child, sys.modules[name])
"""


def poisoned_run(body: str) -> subprocess.CompletedProcess:
    code = f"FORBIDDEN = {FORBIDDEN!r}\n" + POISONED + body
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300)


def test_training_and_search_run_with_the_solvers_and_the_oracle_unusable(tmp_path: Path) -> None:
    """Importing ``cubebench.agents`` loads the solvers for its tools (``solve``): so the check replaces them
    with modules that raise on any use, then imports the trainer and the agent and runs both."""
    done = poisoned_run(f"""
import numpy as np
for name in {DEEPCUBE_MODULES!r}:
    assert name not in sys.modules, name
from cubebench.training import deepcube
from cubebench.agents.deepcube_agent import DeepCubeAgent
from cubebench.agents.deepcube_net import load_value_net
assert deepcube.main(["--out", {str(tmp_path / "run")!r}, "--steps", "3", "--batch", "8", "--hidden", "8",
                      "--res-blocks", "0", "--check-every", "1", "--threshold", "99", "--max-depth", "3"]) == 0
net = load_value_net({str(tmp_path / "run" / "value.npz")!r})
state = deepcube.random_walk_states(np.random.default_rng(0), 1, 2)[0][0]
assert DeepCubeAgent(net, max_expansions=500).search(state, 4).plan is not None
print("clean")
""")
    assert done.returncode == 0 and done.stdout.strip().endswith("clean"), done.stderr[-2000:]


def test_the_poisoned_check_sees_a_use_of_the_oracle() -> None:
    done = poisoned_run("from cubebench.solver.oracle import oracle\n")
    assert done.returncode != 0 and "cubebench.solver.oracle.oracle was used" in done.stderr
