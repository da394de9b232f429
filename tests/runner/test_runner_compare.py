"""``cubebench compare``: the papers' published tables as data (schema, ranges, sources, and every number
against the paper's text where that text is at hand), compare on real oracle/random runs of the smoke suites,
the report's metric names lining up with every published column, Figure 3's correlation over three real runs,
and bad input as one line with exit status 2."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest

from cubebench.agents.llm.testing import ScriptedServer, Step
from cubebench.runner.cli import main
from cubebench.runner.compare import compare_runs, pearson_text
from cubebench.runner.published import UNITS, PublishedError, check_published, load_papers, paper_for, value_of
from cubebench.runner.protocols.questions.report import cell_metrics, question_cells
from cubebench.runner.store import open_run
from helpers import needs

REPO = Path(__file__).resolve().parents[2]
PUBLISHED = REPO / "benchmarks" / "runner" / "published"


def cubebench(*argv: str) -> int:
    return main(list(argv))


def run(out: Path, suite: str, agent: str, *extra: str) -> Path:
    assert cubebench("run", "--suite", suite, "--agent", agent, "--out", str(out), "--no-progress", "--quiet",
                     "--no-images", *extra) == 0
    return out


@pytest.fixture(scope="module")
def smoke_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Oracle and random runs of the three smoke suites (a few seconds: the smoke suites are small)."""
    folder = tmp_path_factory.mktemp("compare")
    runs = {}
    for suite in ("cube-bench-smoke", "inf-bench-smoke", "stare-smoke"):
        for agent in ("oracle", "random"):
            runs[f"{suite}/{agent}"] = run(folder / f"{suite}-{agent}.sqlite", suite, agent)
    return runs


def rows_of(comparison: Any, number: str) -> dict[str, list[str]]:
    table = next(t for t, _ in comparison.tables if f": {number} (" in t.title)
    return {row[0]: row[1:] for row in table.rows}


# --- the published data ------------------------------------------------------------------------------------
def test_the_published_files_validate_with_their_sources() -> None:
    papers = load_papers()
    assert [p.key for p in papers] == ["cube-bench", "inf-bench", "stare", "cubebench"]
    for paper in papers:
        assert paper.title and paper.authors and paper.text.startswith("shared/seeds/") and paper.tables
        for table in paper.tables:
            assert re.fullmatch(r"(Table|Exp) \d+", table.number) and table.section and table.caption
            for column in table.columns:
                assert column.unit in UNITS and column.denominator and column.paper_metric
            for row in table.rows:
                for value, column in zip(row.values, table.columns):
                    number = value_of(value, column.unit)
                    if number is None:
                        assert value == "–"  # the paper reports none (the MLP row's visual tiers)
                        continue
                    lo, hi = UNITS[column.unit]
                    assert all(lo <= x <= hi for x in (number if isinstance(number, tuple) else (number,)))
    assert {s: paper_for(s, papers).key for s in ("cube-bench", "cube-bench-smoke[move-effect]", "inf-bench-smoke",
                                                   "stare")} == {"cube-bench": "cube-bench",
                                                                 "cube-bench-smoke[move-effect]": "cube-bench",
                                                                 "inf-bench-smoke": "inf-bench", "stare": "stare"}
    assert paper_for("smoke", papers).key == "cubebench" and paper_for("exp2", papers).key == "cubebench"
    assert paper_for("multi-smoke", papers) is None
    figure = papers[0].figures[0]
    assert figure.number == "Figure 3" and figure.x["metric"] == "kappa" and figure.y["metric"] == "TA"


def _paper_text(relative: str) -> str | None:
    for parent in REPO.parents:
        path = parent / relative
        if path.is_file():
            return path.read_text(encoding="utf-8")
    return None


def test_every_published_number_stands_in_the_papers_text_in_its_rows_order() -> None:
    """Each transcribed row is found on the line of the paper's text that the row's model names (its label: the
    line's first cell, which the model's name ends with), value by value and in order; a table printed with the
    settings as its rows (STARE's GPT-4o ablations) is found value by value on the line of each column's setting.
    Runs where the texts are beside the repository, as on the project's machines: a mistyped number fails here."""
    checked = 0
    for paper in load_papers():
        text = _paper_text(paper.text)
        if text is None:
            continue
        lines = []
        for line in text.splitlines():
            label = next((cell.strip() for cell in re.split(r"[|\t]", line) if cell.strip()), "")
            lines.append((label, re.findall(r"\[[^\]]*\]|[^\s|()]+", line)))
        for table in paper.tables:
            for row in table.rows:
                def in_order(tokens: list[str], values: tuple[str, ...] = row.values) -> bool:
                    it = iter(tokens)
                    return all(any(t == v for t in it) for v in values)

                def on_its_line(value: str, setting: str) -> bool:
                    return any(tokens[:1] == [setting.split()[0]] and value in tokens for _, tokens in lines)
                found = any(label and row.model.endswith(label) and in_order(tokens) for label, tokens in lines)
                assert found or all(on_its_line(v, c.paper_metric) for v, c in zip(row.values, table.columns)), \
                    f"{paper.key} {table.number} {row.model}: {row.values}"
                checked += 1
    if not checked:
        pytest.skip("the papers' texts (shared/seeds) are not beside this checkout")
    assert checked == sum(len(t.rows) for p in load_papers() for t in p.tables)


def _file(name: str) -> dict[str, Any]:
    return json.loads((PUBLISHED / name).read_text(encoding="utf-8"))


@pytest.mark.parametrize("damage, message", [
    (lambda d: d["tables"][3]["rows"][0]["values"].__setitem__(2, "1.7"), "outside the kappa range"),
    (lambda d: d["tables"][1]["rows"][0]["values"].__setitem__(0, "133.00"), "outside the percent range"),
    (lambda d: d["tables"][1]["rows"][0]["values"].__setitem__(0, "thirty"), "could not convert"),
    (lambda d: d["tables"][1]["rows"][0]["values"].pop(), "5 values for 6 columns"),
    (lambda d: d["tables"][4]["rows"][0]["values"].__setitem__(1, "[19.5, 0.7]"), "outside the interval range"),
    (lambda d: d["paper"].pop("text"), "missing field 'text'"),
    (lambda d: d["tables"][0].pop("section"), "missing field 'section'"),
    (lambda d: d["tables"][0]["columns"][0].pop("denominator"), "missing field 'denominator'"),
    (lambda d: d["tables"][0]["columns"][0].__setitem__("unit", "percentish"), "is not one of"),
    (lambda d: d["tables"][0]["columns"][0].__setitem__("pair_depth", 0), "a depth is an integer >= 1"),
    (lambda d: d.__setitem__("schema", "other/1"), "not a cubebench-published/1 file"),
])
def test_a_damaged_published_file_is_refused_by_name(damage: Any, message: str) -> None:
    data = copy.deepcopy(_file("cube-bench.json"))
    damage(data)
    with pytest.raises(PublishedError, match=re.escape(message)):
        check_published(data, "published/cube-bench.json")


# --- compare on real runs ------------------------------------------------------------------------------------
def test_every_published_column_names_a_metric_the_report_computes(smoke_runs: dict[str, Path]) -> None:
    """The report's metric names line up with the published columns: a rename in a test's summary fails here."""
    computed: dict[tuple[str, str], set[str]] = {}
    for key, path in smoke_runs.items():
        if key.endswith("/oracle"):
            with open_run(path) as store:
                for (test, _, variant), records in question_cells(store).items():
                    computed.setdefault((test, variant), set()).update(cell_metrics(test, records)[0])
    ladders = {("inf-forward", v) for v in ("image", "encoded")} | {("inf-inverse", v) for v in ("image", "encoded")}
    for paper in load_papers():
        for table in paper.tables:
            for c in table.columns:
                if c.tiers:  # an episode column: a pass rate, which every episode report computes
                    assert c.metric == "pass rate" and c.horizon in ("short", "long")
                elif (c.test, c.variant) in ladders:
                    assert c.metric == "score"
                else:
                    assert c.metric in computed[(c.test, c.variant)], (paper.key, table.number, c)


def test_cube_bench_smoke_oracle_and_random_stand_beside_the_papers_rows(smoke_runs: dict[str, Path]) -> None:
    comparison = compare_runs([smoke_runs["cube-bench-smoke/random"], smoke_runs["cube-bench-smoke/oracle"]])
    table2 = rows_of(comparison, "Table 2")
    assert table2["Gemini 2.5 Pro"] == ["96.00", "100.00", "92.00", "100.00", "80.00", "100.00"]
    assert table2["run 1: oracle"] == ["100.0 (2/2)"] * 6  # the oracle's row first, whatever order the runs came in
    assert all(re.fullmatch(r"\d+\.\d \([0-2]/2\)", v) for v in table2["run 2: random"])
    table4 = rows_of(comparison, "Table 4")  # κ leads: d1, d2, d3, then the paper's micro accuracy and macro-F1
    assert table4["run 1: oracle"] == ["1.000 (2 items)", "-", "-", "100.0 (8/8)", "1.000 (2 items)"] + ["-"] * 4
    assert rows_of(comparison, "Table 6")["run 1: oracle"] == ["·"] * 4  # no depth pairs with the paper's slice
    lines = next(lines for t, lines in comparison.tables if ": Table 6 (" in t.title)
    assert any(line.startswith("not in this table: run 1: oracle: closed-loop/abstain-controlled d=2") for line in lines)
    assert not any("absent" in h for h in comparison.header)
    assert any("move-effect/text (d=1): in no published table" in line for line in comparison.elsewhere)


def test_a_run_cut_short_by_limit_shows_what_it_has_and_dashes_for_the_rest(tmp_path: Path,
                                                                           smoke_runs: dict[str, Path]) -> None:
    partial = run(tmp_path / "partial.sqlite", "cube-bench-smoke", "random", "--limit", "6", "--protocol", "strict")
    comparison = compare_runs([smoke_runs["cube-bench-smoke/oracle"], partial])
    assert any(h.startswith("run 2: random = ") and "(6 of 46 items finished; rules strict)" in h
               for h in comparison.header), comparison.header
    assert any(h.startswith("run 1: oracle = ") and "rules paper)" in h for h in comparison.header)
    played = [v for n in ("Table 1", "Table 2", "Table 3", "Table 4", "Table 9")
              for v in rows_of(comparison, n)["run 2: random"]]
    assert "-" in played and any(v != "-" for v in played)  # 6 items: some cells played, the rest not yet
    assert rows_of(comparison, "Table 2")["run 1: oracle"] == ["100.0 (2/2)"] * 6


def test_the_text_and_markdown_outputs_name_the_table_the_paper_and_the_denominators(
        smoke_runs: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    assert cubebench("compare", str(smoke_runs["stare-smoke/random"])) == 0
    out = capsys.readouterr().out
    assert "stare: Table 1 (§3.2 Main Results) against this run" in out and "shared/seeds" not in out
    assert out.startswith('The published tables of "Unfolding Spatial Cognition: Evaluating Multimodal Models on Visual '
                          'Simulations (STARE)" by anonymous authors')
    assert "transcribed into cubebench's runner/published/stare.json" in out
    assert ("(d=?→2: the paper prints no legible depth for the column (or has none); it stands beside this suite's "
            "depth after the arrow; published rows:") in out  # the footnote of Table 1's headers, F1 d=?→2
    assert "oracle: absent (no oracle run given: cubebench run --suite stare-smoke --agent oracle)" in out
    assert "denominator: F1 of Yes = 2TP / (2TP + FP + FN)" in out and "o3-Auto" in out
    assert cubebench("compare", str(smoke_runs["inf-bench-smoke/oracle"]), str(smoke_runs["inf-bench-smoke/random"]),
                     "--format", "md") == 0
    md = capsys.readouterr().out
    assert "**inf-bench: Table 1 (" in md and "| run 1: oracle | 3.00 (2/2 ladders) | 3.00 (2/2 ladders) |" in md
    assert "| chance (exact, this suite's ladder) | 0.016 | 0.016 |" in md
    assert "| Gemini 3 Pro | 5.6 | 6.8 |" in md  # Table 2, encoded


@needs("openai")
def test_figure_3_correlates_kappa_with_teacher_adherence_over_three_real_runs(tmp_path: Path) -> None:
    suite = tmp_path / "cube-bench.json"
    suite.write_text(json.dumps({"schema": "cubebench-questions/1", "name": "cube-bench", "seed": 0, "tests": {
        "move-effect": {"depths": [1], "items": 4, "variants": ["image+text"]},
        "closed-loop": {"depths": [1], "items": 4, "variants": ["standard"]}}}))
    paths = [run(tmp_path / "o.sqlite", str(suite), "oracle"), run(tmp_path / "r.sqlite", str(suite), "random")]
    two = compare_runs(paths)
    assert any(line.startswith("d=1: r undefined (needs 3 or more runs") for line in two.figures)
    with ScriptedServer([Step.reply("<ANSWER> A </ANSWER>")] * 40) as srv:
        paths.append(run(tmp_path / "a.sqlite", str(suite), f"openai-compatible:{srv.base_url}:always-a",
                         "--model-attempts", "1"))
    three = compare_runs(paths)
    line = next(line for line in three.figures if line.startswith("d=1: "))
    r = float(re.match(r"d=1: r = (-?[0-9.]+) over 3 point", line).group(1))
    assert 0.8 < r <= 1.0  # the oracle is right on both; random and always-A are near chance on both
    assert "run 2: oracle (1.000, 1.000)" in line


def test_pearson_needs_three_points_and_spread() -> None:
    assert pearson_text([0.0, 1.0], [0.0, 1.0]).startswith("r undefined (needs 3")
    assert pearson_text([0.5, 0.5, 0.5], [0.1, 0.2, 0.3]).startswith("r undefined (a metric does not vary")
    assert pearson_text([0.0, 0.5, 1.0], [1.0, 0.5, 0.0]) == "r = -1.000"


# --- bad input ---------------------------------------------------------------------------------------------
def _one_line_error(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    capsys.readouterr()  # what making the runs printed
    assert cubebench("compare", *argv) == 2
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert "\n" not in err and err.startswith("cubebench: error: ") and "Traceback" not in captured.err
    assert captured.out == ""
    return err


def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, smoke_runs: dict[str, Path],
                                          capsys: pytest.CaptureFixture[str]) -> None:
    cube, stare = smoke_runs["cube-bench-smoke/oracle"], smoke_runs["stare-smoke/oracle"]
    assert "runs of different suites" in _one_line_error(capsys, str(cube), str(stare))
    assert "no run database at" in _one_line_error(capsys, str(tmp_path / "missing.sqlite"))
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"not a database at all" * 50)
    assert "junk.sqlite" in _one_line_error(capsys, str(junk))
    damaged = tmp_path / "damaged.sqlite"
    damaged.write_bytes(cube.read_bytes()[:4096])
    assert "damaged.sqlite" in _one_line_error(capsys, str(damaged))
    assert "given twice" in _one_line_error(capsys, str(cube), str(cube))
    own = tmp_path / "mine.json"
    own.write_text(json.dumps({"schema": "cubebench-questions/1", "name": "mine",
                               "tests": {"move-choice": {"depths": [1], "items": 2}}}))
    err = _one_line_error(capsys, str(run(tmp_path / "mine.sqlite", str(own), "oracle")))
    assert "suite 'mine', which no paper's published table covers; compare takes runs of cube-bench" in err
    games = tmp_path / "mine-episodes.json"
    games.write_text(json.dumps({"name": "mine-episodes", "tiers": ["symbolic"], "depths": [1], "instances": 1,
                                 "rewards": ["none"], "tool_settings": ["basic"]}))
    episodes = run(tmp_path / "ep.sqlite", str(games), "random", "--distance-budget", "0")
    assert "suite 'mine-episodes', which no paper's published table covers" in _one_line_error(capsys, str(episodes))
    smoke = run(tmp_path / "smoke.sqlite", "smoke", "random", "--limit", "1", "--distance-budget", "0")
    assert "an episode run and a question run" in _one_line_error(capsys, str(smoke), str(cube))


# --- what the numbers mean: controls, constant answers, the chance-corrected lead --------------------------------
def test_each_column_stands_beside_the_variant_with_the_papers_controls() -> None:
    """Cube Bench's Table 1 was made under B.1.2 and B.2.2, Table 6 under B.6.2's option set, STARE's ✓VSim shows the
    frames interleaved with the steps: each column names that variant, and the variant without the control as
    uncontrolled (listed apart)."""
    pairs = {(p.key, t.number, c.paper_metric): (c.variant, c.uncontrolled)
             for p in load_papers() for t in p.tables for c in t.columns if not c.tiers}
    assert pairs[("cube-bench", "Table 1", "Element-wise Acc. (1st depth)")] == ("uniform-prior", ("image",))
    assert pairs[("cube-bench", "Table 1", "Matrix Acc. (3rd depth)")] == ("uniform-prior", ("image",))
    assert pairs[("cube-bench", "Table 1", "Bal.")] == ("polarity", ("image+text",))
    assert pairs[("cube-bench", "Table 6", "APA (s = 0.25)")] == ("abstain-controlled", ("abstain-teacher",))
    for number, name in (("Table 1", "Cube Net ✓VSim (F1)"), ("Table 5", "All"), ("Table 11", "Cube Net w/ VSim")):
        assert pairs[("stare", number, name)] == ("frames-interleaved", ("frames",))
    assert all(v not in ("image", "frames", "abstain-teacher") or key[1] not in ("Table 1", "Table 6", "Table 11")
               for key, (v, _) in pairs.items() if key[0] != "inf-bench")


def _number_in(text: str) -> float | None:
    """The figure a compare cell starts with (``55.6 (18/18)``, ``+0.0 (A)``, ``1.000 (2 items)``), ``None`` for none."""
    match = re.match(r"[+-]?\d+(\.\d+)?", text)
    return float(match.group(0)) if match else None


def _published_rows(table: Any) -> list[list[str]]:
    rows = []
    for row in table.rows:
        if row[0].startswith(("run ", "constant answer", "chance (", "oracle: absent", "random: absent", "blind floor")):
            break
        rows.append(row)
    return rows


def assert_no_free_cell(comparison: Any, label: str) -> int:
    """Every cell of run ``label`` above the paper's weakest model is one a constant answer also reaches: at or
    below the constant row's level (within the span a descriptive figure's constants reach); every column whose
    cell the run has prints a constant level.  Returns how many cells were above the weakest model."""
    above = 0
    for table, _ in comparison.tables:
        level_row = next(r for r in table.rows if r[0].startswith(("constant answer", "blind floor")))
        run_row = next(r for r in table.rows if r[0].startswith(label))
        for j in range(1, len(table.header)):
            value = _number_in(run_row[j])
            if value is None:
                continue
            level = level_row[j]
            assert _number_in(level) is not None, (table.title, table.header[j], level)
            models = [_number_in(r[j]) for r in _published_rows(table)
                      if not r[0].startswith(("Random", "Human")) and _number_in(r[j]) is not None]
            if not models or value <= min(models) or "gap" in table.header[j]:
                continue
            above += 1
            span = re.fullmatch(r"([+-]?[\d.]+) to ([+-]?[\d.]+)", level)
            if span:
                assert float(span.group(1)) <= value <= float(span.group(2)), (table.title, table.header[j], level)
            elif any(m in table.header[j] for m in ("Avg@All", "Med@Solved", "OTR")):
                assert value >= _number_in(level), (table.title, table.header[j], run_row[j], level)
            else:
                assert value <= _number_in(level) + 1e-9, (table.title, table.header[j], run_row[j], level)
    return above


@needs("openai")
@pytest.mark.parametrize("suite, reply", [
    ("cube-bench-smoke", "G G G\nG G G\nG G G"),
    ("cube-bench-smoke", "Answer: Yes"),
    pytest.param("cube-bench-smoke", "<A> INCREASE </A>\n<B> INCREASE </B>\n<C> INCREASE </C>\n<D> INCREASE </D>",
                 marks=pytest.mark.slow),
    pytest.param("cube-bench-smoke", "<ANSWER> A </ANSWER>", marks=pytest.mark.slow),
    pytest.param("stare-smoke", "\\boxed{Yes}", marks=[pytest.mark.slow, pytest.mark.ci]),  # the one STARE case
    ("inf-bench-smoke", "<ANSWER> A </ANSWER>"),
])
def test_a_constant_answer_reaches_no_cell_a_constant_could_not(tmp_path: Path, suite: str, reply: str) -> None:
    """A model that writes one reply to every question, played through the runner against the real client: no
    cell of compare's tables stands above the paper's weakest model unless the constant row beside it (the best
    constant measured on the same items) reaches it too, and every column the run has a cell in prints a level."""
    with ScriptedServer([], default=reply) as srv:
        path = run(tmp_path / "constant.sqlite", suite, f"openai-compatible:{srv.base_url}:constant",
                   "--model-attempts", "1")
    comparison = compare_runs([path])
    assert_no_free_cell(comparison, "run 1: ")


def test_the_constant_row_measures_what_a_constant_reaches_on_the_runs_items(smoke_runs: dict[str, Path]) -> None:
    """Where the paper reports a chance-corrected figure it leads and a constant reaches chance there (balanced
    accuracy 50, κ 0 or what a slot-fitted constant gets); STARE's F1 of Yes, which a constant Yes lifts to 66.7 on
    balanced items, follows the balanced-accuracy column the report adds."""
    stare = compare_runs([smoke_runs["stare-smoke/random"]])
    table = next(t for t, _ in stare.tables if ": Table 1 (" in t.title)
    assert table.header[1:] == ["bal acc d=?→2", "F1 d=?→2", "bal acc d=?→2", "F1 d=?→2"]
    assert [g for g, _ in table.groups] == ["", "net-fold question", "net-fold frames-interleaved"]
    constant = rows_of(stare, "Table 1")["constant answer: the best on these items"]
    assert constant == ["50.0 (Yes)", "66.7 (Yes)", "50.0 (Yes)", "66.7 (Yes)"]
    assert rows_of(stare, "Table 1")["GPT-4o"] == ["–", "50.3", "–", "52.2"]
    cube = compare_runs([smoke_runs["cube-bench-smoke/oracle"]])
    table1 = rows_of(cube, "Table 1")["constant answer: the best on these items"]
    assert table1[6:8] == ["50.0 (Yes)", "100.0 (Yes)"] and table1[8] == "0.0 to 100.0"  # bal acc, parse, yes bias
    lines = next(lines for t, lines in cube.tables if ": Table 1 (" in t.title)
    assert any(line.startswith("uncontrolled: run 1: oracle: reconstruction/image d=2: element acc 100.0 (18/18) "
                               "(constant answer ") for line in lines)
    assert not any("reconstruction/image" in line for line in cube.elsewhere)
