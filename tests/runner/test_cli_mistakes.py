"""Ordinary mistakes on the command line: one line on stderr, exit 2, nothing lost; and no hidden cost.

Every output path follows one policy (docs/runner.md, "Output paths"): missing parent folders are
created; a file standing where a folder must be, or a folder where the file must be, is refused
before any work.  Numbers are checked by the parser.  The per-step true distance is off unless
asked for, and says what it costs when it is on; no solver table build starts unannounced, and no
command or question suite here needs one (the table loader is made to fail where it matters).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import cubebench.solver.optimal.pruning as pruning
from cubebench.runner import run as run_module
from cubebench.runner.cli import build_parser, main
from helpers import missing, one_line_error


def _no_tables(monkeypatch: pytest.MonkeyPatch) -> None:
    """The exact solver's tables are absent and may not be built."""
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a solver table build was started")

    monkeypatch.setattr(pruning, "prune_table", refuse)
    monkeypatch.setattr(run_module, "optimal_tables_ready", lambda metric: False)
    monkeypatch.setattr("cubebench.runner.human_play.optimal_tables_ready", lambda metric: False)



@pytest.fixture(scope="module")
def run_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cli") / "smoke.sqlite"
    assert main(["run", "--suite", "smoke", "--agent", "random", "--tiers", "symbolic", "--out", str(path),
                 "--quiet"]) == 0
    return path


@pytest.fixture()
def afile(tmp_path: Path) -> Path:
    path = tmp_path / "afile"
    path.write_text("a file, not a folder")
    return path


@pytest.mark.parametrize("command, flag", [
    (["report", "RUN", "--html", "AFILE/r.html"], "--html"),
    (["report", "RUN", "--plots", "AFILE/plots"], "--plots"),
    (["view", "RUN", "--out", "AFILE/v.html"], "--out"),
    (["export", "RUN", "--format", "csv", "--out", "AFILE/x.csv"], "--out"),
    (["run", "--suite", "smoke", "--agent", "solver", "--out", "AFILE/x.sqlite"], "--out"),
])
def test_a_file_in_the_way_of_an_output_folder_is_one_line(command, flag, run_path, afile, capsys) -> None:
    if flag == "--plots" and missing("matplotlib"):
        pytest.skip("plots need the report extra")
    argv = [str(run_path) if w == "RUN" else w.replace("AFILE", str(afile)) for w in command]
    line = one_line_error(capsys, *argv)
    assert flag in line and f"{afile} is a file, not a folder" in line
    assert afile.read_text() == "a file, not a folder"


@pytest.mark.parametrize("command", [
    ["report", "RUN", "--html", "DIR"],
    ["view", "RUN", "--out", "DIR"],
    ["export", "RUN", "--format", "jsonl", "--out", "DIR"],
    ["run", "--suite", "smoke", "--agent", "solver", "--out", "DIR"],
])
def test_a_folder_where_the_output_file_goes_is_one_line(command, run_path, tmp_path, capsys) -> None:
    argv = [str(run_path) if w == "RUN" else str(tmp_path) if w == "DIR" else w for w in command]
    assert "is a folder; give a file name" in one_line_error(capsys, *argv)


def test_every_output_path_creates_its_missing_folders(run_path, tmp_path, capsys) -> None:
    """The one policy: ``run --out``, ``report --html/--plots``, ``view --out``, ``export --out``."""
    deep = tmp_path / "a" / "b"
    assert main(["run", "--suite", "smoke", "--agent", "random", "--tiers", "symbolic", "--depths", "1",
                 "--out", str(deep / "run" / "r.sqlite"), "--quiet"]) == 0
    assert main(["report", str(run_path), "--html", str(deep / "html" / "r.html")]) == 0
    assert main(["view", str(run_path), "--out", str(deep / "view" / "v.html")]) == 0
    assert main(["export", str(run_path), "--format", "csv", "--out", str(deep / "csv" / "x.csv")]) == 0
    made = ["run/r.sqlite", "html/r.html", "view/v.html", "csv/x.csv"]
    if not missing("matplotlib"):
        assert main(["report", str(run_path), "--plots", str(deep / "plots")]) == 0
        made.append("plots/pass_rate_by_depth.png")
    assert all((deep / m).is_file() for m in made)
    err = capsys.readouterr().err
    assert "Traceback" not in err


def test_an_html_report_that_cannot_be_written_fails_before_the_report(run_path, capsys) -> None:
    """``--html`` under a path that cannot be made (a file in /proc) is refused before the 50-line report."""
    one_line_error(capsys, "report", str(run_path), "--html", "/proc/version/r.html")


@pytest.mark.parametrize("flag, value, expected", [
    ("--limit", "-1", "whole number >= 0"),
    ("--limit", "two", "whole number"),
    ("--concurrency", "0", "whole number >= 1"),
    ("--max-cost", "-1", "number >= 0"),
    ("--max-cost", "nan", "number >= 0"),
    ("--episode-max-cost", "-0.5", "number >= 0"),
    ("--episode-max-tokens", "0", "whole number >= 1"),
    ("--model-attempts", "0", "whole number >= 1"),
    ("--reply-max-tokens", "0", "whole number >= 1"),
    ("--temperature", "-1", "number >= 0"),
    ("--distance-budget", "-1", "seconds per step"),
    ("--distance-budget", "soon", "seconds per step"),
])
def test_bad_numbers_are_one_line(flag, value, expected, tmp_path, capsys) -> None:
    line = one_line_error(capsys, "run", "--suite", "smoke", "--agent", "solver", "--out",
                          str(tmp_path / "r.sqlite"), flag, value)
    assert line.startswith("cubebench run: error: argument " + flag) and expected in line
    assert not (tmp_path / "r.sqlite").exists()


def test_view_max_episodes_and_other_parsers_are_one_line_too(run_path, capsys) -> None:
    one_line_error(capsys, "view", str(run_path), "--max-episodes", "-3")
    one_line_error(capsys, "report")
    one_line_error(capsys, "no-such-command")


def test_per_step_distances_are_off_by_default_and_never_start_a_build(monkeypatch, tmp_path, capsys) -> None:
    _no_tables(monkeypatch)
    monkeypatch.setattr(run_module, "optimal_tables_ready", lambda metric: True)  # even where tables exist
    assert main(["run", "--suite", "smoke", "--agent", "greedy", "--tiers", "symbolic", "--depths", "1",
                 "--out", str(tmp_path / "r.sqlite"), "--quiet"]) == 0
    assert "per-step true distances" not in capsys.readouterr().err
    from cubebench.runner.store import open_run

    with open_run(tmp_path / "r.sqlite") as store:
        assert all(row.status != "error" for row in store.rows()), \
            "no episode ended in error (a distance lookup would have hit the refused table build)"
    assert build_parser().parse_args(["run"]).distance_budget == 0


def test_a_distance_budget_says_what_it_costs(monkeypatch, capsys) -> None:
    monkeypatch.setattr(run_module, "optimal_tables_ready", lambda metric: True)
    assert run_module.resolve_distance_budget("auto", "quarter") == run_module.DEFAULT_DISTANCE_BUDGET_S
    err = capsys.readouterr().err
    assert "per-step true distances on" in err and "5-60x slower" in err and "--distance-budget 0" in err
    assert len(err.strip().splitlines()) == 1
    monkeypatch.setattr(run_module, "optimal_tables_ready", lambda metric: False)
    assert run_module.resolve_distance_budget("auto", "quarter") is None
    assert capsys.readouterr().err == ""


def test_a_distance_budget_without_tables_is_refused_not_built(monkeypatch, tmp_path, capsys) -> None:
    _no_tables(monkeypatch)
    line = one_line_error(capsys, "run", "--suite", "smoke", "--agent", "solver", "--distance-budget", "0.1",
                          "--out", str(tmp_path / "r.sqlite"))
    assert "0.9 GB" in line and "python -m cubebench.solver.optimal build" in line
    assert not (tmp_path / "r.sqlite").exists()


def test_a_table_build_is_announced_before_it_starts(monkeypatch, capsys) -> None:
    class Stop(Exception):
        pass

    def stop() -> None:
        assert "building the exact optimal solver's half-turn tables" in capsys.readouterr().err
        raise Stop

    monkeypatch.setattr(pruning, "_PRUNE", {})
    monkeypatch.setattr(pruning.table_cache, "load", lambda *a: None)
    monkeypatch.setattr(pruning, "small_tables", stop)
    with pytest.raises(Stop):
        pruning.prune_table("half", progress=False)


def test_play_by_default_starts_from_a_shipped_instance_without_tables(monkeypatch) -> None:
    from cubebench.runner.protocols.episodes.instances import shipped_starts
    from cubebench.runner.human_play import start_options

    _no_tables(monkeypatch)
    options, said = start_options(3, "quarter", None, None, seed=7)
    assert options["state"] in {s.state for s in shipped_starts(3, "quarter")}
    assert "certified instance" in said and start_options(3, "quarter", None, None, seed=7) == (options, said)


def test_play_at_a_depth_without_shipped_instances_or_tables_is_one_line(monkeypatch, capsys) -> None:
    """Depth 11 quarter turns: none ship, and it is beyond the table-free oracle's 10."""
    from cubebench.runner.human_play import start_options

    _no_tables(monkeypatch)
    assert start_options(5, "quarter", None, None, seed=0)[0] == {"depth": 5}, "depth 5: the oracle certifies it"
    line = one_line_error(capsys, "play", "--depth", "11", "--no-window")
    assert "no shipped certified instances" in line and "0.9 GB" in line


def test_a_question_suite_needs_no_tables_even_when_the_answers_drift_away(monkeypatch, tmp_path, capsys) -> None:
    """The random answerer on recovery at depth 4 walks the cube away from solved (once, it built an 834 MB
    table there): recovery ends an item that is out of reach, and the oracle is exact up to one move past
    the deepest item."""
    _no_tables(monkeypatch)
    out = tmp_path / "q.sqlite"
    assert main(["run", "--suite", "cube-bench", "--agent", "random", "--tests", "recovery,closed-loop",
                 "--depths", "3,4", "--out", str(out), "--quiet"]) == 0
    err = capsys.readouterr().err
    assert re.search(r"complete: (\d+) item\(s\) played in [\d.]+ s; \1 of \1 planned items finished", err), err
    from cubebench.runner.store import open_run

    with open_run(out) as store:
        assert not [row.key for row in store.rows() if row.status == "error"]


def test_recovery_stops_once_the_attempts_left_cannot_solve_the_cube(monkeypatch) -> None:
    from cubebench.agents.answerers import RandomAnswerer
    from cubebench.tasks.registry import TESTS

    _no_tables(monkeypatch)
    test = TESTS["recovery"]
    results = [test.play(item, "standard", RandomAnswerer(seed=seed).answer)
               for item in test.items(4, 6, seed=0, metric="half") for seed in range(4)]
    stopped = [r for r in results if r.score.get("out_of_reach")]
    assert stopped and all(not r.passed and r.score["solved_at"] is None for r in stopped)
    with pytest.raises(ValueError, match="beyond the 6 moves"):
        test.items(7, 1, seed=0, metric="half")


def test_ladder_counts_agree(tmp_path, capsys) -> None:
    assert main(["run", "--suite", "inf-bench-smoke", "--agent", "random", "--out", str(tmp_path / "i.sqlite"),
                 "--quiet"]) == 0
    err = capsys.readouterr().err
    first = int(re.search(r"(\d+) items planned \(.*ladder", err).group(1))
    finished, planned, grown = map(int, re.search(
        r"(\d+) of (\d+) planned items finished \((\d+) of them planned as the ladders climbed\)", err).groups())
    assert finished == planned == first + grown


def test_run_help_is_grouped_with_the_teams_and_examples(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    text = capsys.readouterr().out
    assert text.startswith("usage: cubebench run --suite NAME|FILE --agent SPEC")
    for heading in ("what to run", "episode suites", "question suites", "multi-agent suites", "model agents",
                    "examples:"):
        assert heading in text
    flat = " ".join(text.split())  # argparse wraps the help to the terminal's width
    assert "perfect, silent, random" in flat and "oracle" in flat and "blind" in flat and "hf:PATH" in flat


def test_python_m_cubebench_is_the_command_and_the_engine_imports_no_runner() -> None:
    import subprocess
    import sys

    probe = "import sys, cubebench.__main__; print(any(m.startswith('cubebench.runner') for m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "False", done.stderr
    bad = subprocess.run([sys.executable, "-m", "cubebench", "run", "--limit", "-1"], capture_output=True, text=True,
                         timeout=120)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1 and "--limit" in bad.stderr


def test_every_help_example_parses() -> None:
    import shlex

    from cubebench.runner.cli import RUN_EXAMPLES

    examples = [line.split("   ")[0].strip() for line in RUN_EXAMPLES.splitlines() if line.startswith("  cubebench ")]
    assert len(examples) >= 6
    for example in examples:
        args = build_parser().parse_args(shlex.split(example)[1:])
        assert args.command == "run" and (args.resume or (args.suite and args.agent)), example


def test_a_bad_agent_spec_is_the_only_line(capsys) -> None:
    """Nothing is announced (``cubebench: run runs/...``) before the agent spec is known to build."""
    line = one_line_error(capsys, "run", "--suite", "smoke", "--agent", "gpt4")
    assert line.startswith("cubebench: error: unknown agent spec 'gpt4'")


@pytest.mark.parametrize("argv, meant", [
    (["run", "--suite", "smoke", "--agent", "solver", "--teirs", "symbolic"], "--tiers"),
    (["run", "--suite", "smoke", "--agent", "solver", "--detphs", "1"], "--depths"),
    (["solve", "R U", "--metrc", "half"], "--metric"),
    (["export", "x.sqlite", "--format", "csv", "--no-imgaes"], "--no-images"),
])
def test_a_mistyped_option_is_refused_by_its_subcommand_with_the_option_it_meant(argv, meant, capsys) -> None:
    line = one_line_error(capsys, *argv)
    assert line.startswith(f"cubebench {argv[0]}: error: unrecognized arguments: ")
    assert line.endswith(f"; did you mean {meant}? (see cubebench {argv[0]} --help)")


def test_an_option_like_nothing_gets_no_guess(capsys) -> None:
    line = one_line_error(capsys, "export", "x.sqlite", "--format", "csv", "--zzz")
    assert line == "cubebench export: error: unrecognized arguments: --zzz (see cubebench export --help)"


def test_depths_that_are_not_whole_numbers_say_so(capsys) -> None:
    line = one_line_error(capsys, "run", "--suite", "smoke", "--agent", "solver", "--depths", "x")
    assert "argument --depths: expected comma-separated whole numbers, e.g. 1,2,3, got 'x'" in line


@pytest.mark.parametrize("command, positional, described", [
    ("view", "run", "the run's .sqlite file"), ("export", "run", "the run's .sqlite file"),
    ("report", "run", "the run's .sqlite file"), ("solve", "cube", "the cube to solve")])
def test_every_positional_argument_is_described_in_help(command, positional, described, capsys) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args([command, "--help"])
    text = capsys.readouterr().out
    listed = text.split("positional arguments:")[1].split("options:")[0]
    assert re.search(rf"^\s+{positional}\s+{re.escape(described)}", listed, re.M), listed


def _without_ray(monkeypatch: pytest.MonkeyPatch) -> None:
    """``import ray`` fails here as it does where the ray extra is not installed."""
    import sys

    monkeypatch.setitem(sys.modules, "ray", None)  # None in sys.modules: ImportError on import


def test_the_ray_backend_without_ray_is_one_line_naming_the_extra_and_creates_nothing(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys) -> None:
    _without_ray(monkeypatch)
    out = tmp_path / "runs" / "r.sqlite"
    line = one_line_error(capsys, "run", "--suite", "smoke", "--agent", "solver", "--backend", "ray",
                          "--out", str(out))
    assert line == ('cubebench: error: --backend ray needs Ray, which is not installed: '
                    'pip install -e ".[ray]" in the CubeBench checkout')
    assert not out.exists()


def test_a_resume_on_the_ray_backend_without_ray_is_one_line_and_changes_nothing(
        monkeypatch: pytest.MonkeyPatch, run_path: Path, capsys) -> None:
    before = run_path.read_bytes()
    _without_ray(monkeypatch)
    line = one_line_error(capsys, "run", "--resume", str(run_path), "--backend", "ray")
    assert 'needs Ray, which is not installed: pip install -e ".[ray]"' in line
    assert run_path.read_bytes() == before


@pytest.mark.parametrize("argv", [
    ["--suite", "smoke", "--agent", "mlp"],  # refused by the plan: mlp plays the symbolic tier only
    ["--suite", "nosuch", "--agent", "solver"],
    ["--suite", "smoke", "--agent", "solver", "--tiers", "bogus"],
    ["--suite", "smoke", "--agent", "bogus"],
    ["--resume", "nothere.sqlite"],
])
def test_a_refused_run_names_no_run_file_and_leaves_none(argv, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                          capsys) -> None:
    """The ``cubebench: run PATH`` line is printed only once PATH is really created."""
    monkeypatch.chdir(tmp_path)
    out = [] if "--resume" in argv else ["--out", "runs/x.sqlite"]
    line = one_line_error(capsys, "run", *argv, *out)
    assert line.startswith("cubebench: error: ")
    assert list(tmp_path.rglob("*.sqlite")) == []


def test_a_created_run_is_announced_after_it_exists(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from cubebench.runner import run as run_module

    out = tmp_path / "r.sqlite"
    seen: list[bool] = []
    real_print = print

    def watching_print(*args: object, **kwargs: object) -> None:
        if args and str(args[0]).startswith(f"cubebench: run {out}"):
            seen.append(out.is_file())
        real_print(*args, **kwargs)

    monkeypatch.setattr(run_module, "print", watching_print, raising=False)
    assert main(["run", "--suite", "smoke", "--agent", "random", "--tiers", "symbolic", "--depths", "1",
                 "--out", str(out), "--quiet"]) == 0
    assert seen == [True]


def test_export_as_parquet_points_to_export_tasks_in_one_line(run_path: Path, capsys) -> None:
    line = one_line_error(capsys, "export", str(run_path), "--format", "parquet")
    assert line.startswith("cubebench export: error: argument --format: export writes a run's records as jsonl or csv")
    assert "cubebench export-tasks --format parquet" in line
