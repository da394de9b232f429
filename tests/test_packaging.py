"""The wheel carries everything an installed ``cubebench`` needs, the benchmark data included."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    source = out / "source"  # a copy: building in place would leave build/ and egg-info in the checkout
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(".git", "build", "runs", "*.egg-info", "__pycache__",
                                                                "*.nbi", "*.nbc", "venv", ".venv"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out),
                    str(source)], check=True, capture_output=True)
    (built,) = out.glob("cubebench-*.whl")
    return built


def test_wheel_ships_every_suite_and_instance_set(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    for kind, pattern in (("suites", "*.json"), ("instances", "*.jsonl")):
        expected = {f"cube_env/shipped/{kind}/{p.name}" for p in (ROOT / "benchmarks" / kind).glob(pattern)}
        assert expected and expected <= names, kind
    assert "agents/rl/checkpoints/mlp_qtm.pt" in names


def test_installed_package_finds_its_data_outside_a_checkout(wheel: Path, tmp_path: Path) -> None:
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target), str(wheel)],
                   check=True, capture_output=True)
    probe = ("from agents.runner.suites import load_suite; from cube_env.generators import shipped_instances; "
             "from cube_env import shipped; "
             "print(shipped.suites_dir()); print(load_suite('smoke').name, len(shipped_instances('half', 8)))")
    run = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, env={"PYTHONPATH": str(target)},
                         capture_output=True, text=True, check=True)
    where, loaded = run.stdout.splitlines()
    assert Path(where).is_relative_to(target)
    assert loaded == "smoke 100"
