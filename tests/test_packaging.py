"""The wheel: one distinctive import name, every module and data file, and a life beside other LLM SDKs.

The wheel installs ``cubebench`` only; the repository's folders map onto its
subpackages (pyproject.toml, docs/architecture.md).  The slow test installs it
into a fresh venv together with the OpenAI Agents SDK, whose import name is
``agents``, and checks that both work.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
GENERIC = {"agents", "wrappers", "benchmarks", "runner", "rl", "tests", "test", "envs", "engine", "render", "solver",
           "llm", "sandbox", "suites", "instances", "docs", "utils", "common", "cube_env", "cube", "src", "core"}
"""Top-level import names another distribution may also install (``agents`` is the OpenAI Agents SDK's)."""


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    source = out / "source"  # a copy: building in place would leave build/ and egg-info in the checkout
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(".git", "build", "runs", "*.egg-info", "__pycache__",
                                                                "*.nbi", "*.nbc", "venv", ".venv", ".mypy_cache",
                                                                ".ruff_cache", ".pytest_cache"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out),
                    str(source)], check=True, capture_output=True)
    (built,) = out.glob("cubebench-*.whl")
    return built


def top_level_names(wheel: Path) -> set[str]:
    """The import names the wheel puts into site-packages (every first path part but its metadata)."""
    return {name.split("/")[0].removesuffix(".py") for name in zipfile.ZipFile(wheel).namelist()
            if not name.split("/")[0].endswith((".dist-info", ".data"))}


def test_the_wheel_installs_one_distinctive_import_name(wheel: Path) -> None:
    names = top_level_names(wheel)
    assert names == {"cubebench"}, names
    assert not names & GENERIC


def test_top_level_check_catches_a_generic_name(tmp_path: Path) -> None:
    fake = tmp_path / "fake-0.1-py3-none-any.whl"
    with zipfile.ZipFile(fake, "w") as zf:
        for name in ("cubebench/__init__.py", "agents/__init__.py", "helper.py", "fake-0.1.dist-info/METADATA"):
            zf.writestr(name, "")
    assert top_level_names(fake) == {"cubebench", "agents", "helper"}


def test_wheel_ships_every_module_and_data_file(wheel: Path) -> None:
    """Each source file under a mapped folder lands at its ``cubebench/...`` path (nothing left behind)."""
    names = set(zipfile.ZipFile(wheel).namelist())
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    expected = set()
    for package, folder in config["package-dir"].items():
        prefix = package.replace(".", "/")
        for path in (ROOT / folder).rglob("*"):
            rel = path.relative_to(ROOT / folder)
            nested = any((ROOT / folder / rel.parts[0]).resolve() == (ROOT / d).resolve()
                         for d in config["package-dir"].values() if d != folder)
            if path.is_file() and "__pycache__" not in rel.parts and not nested and path.suffix in (
                    ".py", ".json", ".jsonl", ".txt", ".pt"):
                expected.add(f"{prefix}/{rel.as_posix()}")
    assert len(expected) > 150
    assert expected <= names, sorted(expected - names)[:10]
    for must in ("cubebench/suites/smoke.json", "cubebench/instances/half-d08-n100.jsonl",
                 "cubebench/agents/rl/checkpoints/mlp_qtm.pt", "cubebench/agents/prompts/react_system.txt",
                 "cubebench/runner/cli.py", "cubebench/wrappers/tier_envs.py"):
        assert must in names


def test_installed_package_finds_its_data_outside_a_checkout(wheel: Path, tmp_path: Path) -> None:
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target), str(wheel)],
                   check=True, capture_output=True)
    probe = ("from cubebench.runner.suites import load_suite, suites_dir; "
             "from cubebench.generators import shipped_instances; from cubebench.shipped import instances_dir; "
             "print(suites_dir()); print(instances_dir()); "
             "print(load_suite('smoke').name, len(shipped_instances('half', 8))); "
             "from cubebench.runner.published import load_papers; print(len(load_papers()))")
    run = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, env={"PYTHONPATH": str(target)},
                         capture_output=True, text=True, check=True)
    suites, instances, loaded, papers = run.stdout.splitlines()
    assert Path(suites).is_relative_to(target) and Path(instances).is_relative_to(target)
    assert loaded == "smoke 100" and papers == "4"  # the published tables of `cubebench compare` ship in the wheel


SDK_PROBE = textwrap.dedent('''
    """Both packages at once: the OpenAI Agents SDK (import name ``agents``) and CubeBench."""
    import asyncio, pathlib, sys

    import agents
    from agents import Agent, OpenAIChatCompletionsModel, Runner, set_tracing_disabled
    from openai import AsyncOpenAI

    assert "site-packages" in agents.__file__ and pathlib.Path(agents.__file__).parent.name == "agents"

    import gymnasium as gym
    env = gym.make("cubebench:CubeBench-Vertex-v0")  # the import-on-make form: no import of cubebench first
    obs, info = env.reset(seed=0)
    assert obs.shape == (224, 224, 3)
    obs, reward, terminated, truncated, info = env.step(0)

    from cubebench.agents.llm.testing import ScriptedServer

    set_tracing_disabled(True)
    with ScriptedServer(["The cube is fine."]) as server:
        model = OpenAIChatCompletionsModel(model="scripted", openai_client=AsyncOpenAI(base_url=server.base_url,
                                                                                       api_key="none"))
        result = Runner.run_sync(Agent(name="sdk", instructions="Say something.", model=model), "Hello")
    assert result.final_output == "The cube is fine.", result.final_output
    print("both ok")
''')


OPENAI_AGENTS = "openai-agents>=0.24,<0.25"
"""The SDK release line this test was written against (0.24.0: Agent, Runner, OpenAIChatCompletionsModel)."""


@pytest.mark.slow
@pytest.mark.ci
def test_wheel_lives_beside_the_openai_agents_sdk(wheel: Path, tmp_path: Path) -> None:
    """``pip install cubebench openai-agents`` in a fresh venv: the SDK's ``agents`` and ours both work."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    py = venv / "bin" / "python"
    install = subprocess.run([str(py), "-m", "pip", "install", "-q", f"{wheel}[llm]", OPENAI_AGENTS],
                             capture_output=True, text=True, timeout=900)
    assert install.returncode == 0, install.stderr[-3000:]
    work = tmp_path / "elsewhere"  # outside the checkout, so nothing resolves to the repository's folders
    work.mkdir()
    probe = subprocess.run([str(py), "-c", SDK_PROBE], cwd=work, capture_output=True, text=True, timeout=300)
    assert probe.returncode == 0 and probe.stdout.strip().endswith("both ok"), probe.stderr[-3000:]
    cli = venv / "bin" / "cubebench"
    run = subprocess.run([str(cli), "run", "--suite", "smoke", "--agent", "solver", "--tiers", "symbolic",
                          "--depths", "1", "--out", str(work / "smoke.sqlite")],
                         cwd=work, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    report = subprocess.run([str(cli), "report", str(work / "smoke.sqlite")], cwd=work, capture_output=True,
                            text=True, timeout=120)
    assert report.returncode == 0 and "symbolic" in report.stdout, report.stderr[-3000:]


def test_dir_of_the_package_lists_its_public_names_not_its_helpers() -> None:
    import cubebench

    names = set(dir(cubebench))
    assert set(cubebench.__all__) <= names and "engine" in names
    assert not {"Any", "importlib", "annotations", "version", "PackageNotFoundError",
                "register_when_gymnasium_loads"} & names, sorted(names)
