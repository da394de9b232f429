"""Suite files and requests a user (or a hostile file) may hand the runner: one line each, never a traceback.

* A suite's ``name`` never chooses where a run goes: the default path is made from the cleaned name and always
  falls under ``runs/``; a name that is not printable text (a NUL) is one line.
* Planning is bounded: a request for more than :data:`~cubebench.runner.planning.MAX_PLANNED` episodes, items or
  games is refused at once in one line naming the limit (nothing is generated), in ``cubebench run``, in the
  in-memory item rows the verifiers bridge serves, and in the Inspect task's dataset.
* JSON nested deeper than Python reads is one line.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cubebench.runner import ExportRequest, item_rows
from cubebench.runner.planning import check_plan_size
from cubebench.runner.protocols.episodes import plan as episode_plan
from cubebench.runner.protocols.questions import plan as question_plan
from cubebench.runner.planning import MAX_PLANNED
from cubebench.runner.protocols.questions.plan import plan_items
from cubebench.runner.protocols.questions.suite import question_suite_from_dict
from cubebench.runner.suites import SuiteError
from helpers import needs, one_line_error

EPISODES = {"tiers": ["symbolic"], "depths": [1], "instances": 1, "rewards": ["none"], "tool_settings": ["basic"]}


@pytest.mark.parametrize("name, cleaned", [
    ("../../x", "_.._x"), ("/etc/x", "_etc_x"), ("..", "suite"), ("a\\b:c", "a_b_c"), ("smoke[symbolic]", "smoke_symbolic_"),
    ("ü b", "__b"), ("x" * 300, "x" * 60)])
def test_a_default_run_path_falls_under_runs_whatever_the_suite_is_called(name, cleaned, tmp_path, monkeypatch,
                                                                          capsys) -> None:
    if len(name) > 200:
        name = name[:200]
    monkeypatch.chdir(tmp_path)
    (tmp_path / "suite.json").write_text(json.dumps({"name": name, **EPISODES}))
    from cubebench.runner.cli import main

    assert main(["run", "--suite", "suite.json", "--agent", "solver", "--quiet", "--no-progress"]) == 0
    made = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.name != "suite.json")
    assert len(made) == 2 and made[0] == "runs", made  # runs/ and the run in it, nothing elsewhere
    assert made[1].startswith(f"runs/{cleaned}-solver-") and made[1].endswith(".sqlite"), made
    assert f"run {made[1]} (suite " in capsys.readouterr().err


@pytest.mark.parametrize("name", ["a\u0000b", "", "  ", "line\nbreak", 7, None, "x" * 201])
def test_a_suite_name_that_is_not_printable_text_is_one_line(name, tmp_path, capsys) -> None:
    for schema, body in ((None, EPISODES), ("cubebench-questions/1", {"tests": {"verification": {"depths": [1],
                                                                                              "items": 1}}})):
        path = tmp_path / "suite.json"
        path.write_text(json.dumps({"name": name, **({"schema": schema} if schema else {}), **body}))
        line = one_line_error(capsys, "run", "--suite", str(path), "--agent", "oracle" if schema else "solver")
        assert "name must be printable text of 1 to 200 characters" in line
    assert not (tmp_path / "runs").exists()


def test_json_nested_deeper_than_python_reads_is_one_line(tmp_path, capsys) -> None:
    path = tmp_path / "deep.json"
    path.write_text('{"name": "deep", "tiers": ' + "[" * 200_000 + "]" * 200_000 + "}")
    line = one_line_error(capsys, "run", "--suite", str(path), "--agent", "solver")
    assert line == f"cubebench: error: cannot read suite file {path}: its JSON nests deeper than Python reads"


@pytest.fixture
def nothing_generated(monkeypatch) -> None:
    """Planning may not make a single item or look up a single instance: a refusal must come first."""
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("planning started")

    monkeypatch.setattr(question_plan, "_generate", refuse)
    monkeypatch.setattr(episode_plan, "instance_refs", refuse)
    monkeypatch.setattr(question_plan, "iter_fixed_items", refuse)
    monkeypatch.setattr("cubebench.runner.export_tasks.iter_fixed_items", refuse)


HUGE = {
    "items": {"schema": "cubebench-questions/1", "tests": {"verification": {"depths": [1], "items": 10 ** 9}}},
    "ladder-runs": {"schema": "cubebench-questions/1",
                    "tests": {"inf-forward": {"ladder": {"runs": 10 ** 9, "max_level": 3}}}},
    "instances": {**EPISODES, "instances": 10 ** 9, "instance_source": "scramble"},
}


@pytest.mark.parametrize("case", list(HUGE))
def test_a_huge_plan_is_refused_at_once_naming_the_limit(case, tmp_path, capsys, nothing_generated) -> None:
    path = tmp_path / "huge.json"
    path.write_text(json.dumps({"name": "huge", **HUGE[case]}))
    agent = "solver" if case == "instances" else "oracle"
    line = one_line_error(capsys, "run", "--suite", str(path), "--agent", agent)
    assert "suite 'huge' plans 1,000,000,000 " in line or "suite 'huge' plans 2,000,000,000 " in line, line
    assert f"a plan holds at most {MAX_PLANNED:,}" in line
    assert not (tmp_path / "runs").exists()


def test_the_largest_plan_allowed_is_counted_as_planned(nothing_generated) -> None:
    """The bound counts what planning makes: variants, depths and first ladder rounds included."""
    grid = {"depths": [1, 2], "items": MAX_PLANNED // 4, "variants": ["image+text", "polarity"]}
    check_plan_size(question_suite_from_dict({"schema": "cubebench-questions/1", "name": "edge",
                                                         "tests": {"verification": grid}}), "item")
    with pytest.raises(SuiteError, match=f"plans {MAX_PLANNED + 2:,} items"):
        plan_items(question_suite_from_dict({"schema": "cubebench-questions/1", "name": "edge", "tests": {
            "verification": grid, "inf-forward": {"ladder": {"runs": 1, "max_level": 3}, "variants": ["image", "encoded"]}}}))


def test_the_in_memory_item_rows_of_the_verifiers_bridge_are_bounded(nothing_generated) -> None:
    """``question_options(items=10**6)`` made 440 MB of rows in 40 s before this bound: its rows are ``item_rows``."""
    with pytest.raises(ValueError, match=f"plans 43,000,108 items; a plan holds at most {MAX_PLANNED:,}"):
        item_rows(ExportRequest(kind="items", out=Path("."), suite="cube-bench", items=10 ** 6, images="none"))


@needs("inspect_ai")
def test_the_inspect_tasks_refuse_a_huge_grid_at_once_as_a_task_parameter(nothing_generated) -> None:
    """Inspect prints a task parameter error as its message alone: ``-T items=100000000`` is one line."""
    from cubebench.bridges.inspect import TaskParameterError, episode, questions

    with pytest.raises(TaskParameterError, match=f"cubebench/questions: .* a plan holds at most {MAX_PLANNED:,}"):
        questions(suite="cube-bench-smoke", items=10 ** 8)
    with pytest.raises(TaskParameterError, match=f"cubebench/episode: .* a plan holds at most {MAX_PLANNED:,}"):
        episode(tier="symbolic", instances=10 ** 8)
