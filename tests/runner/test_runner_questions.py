"""Question suites through the runner: suites as data, the plan, ``cubebench run`` with the oracle, the random
baseline and a scripted model, resume, retry of error items, report, HTML report, viewer, export, the process
backend and the store's checks on a question run.

Most tests use :class:`Pick`, a fake question test injected into the registry, so they do not depend on the
real tests' numbers; the process backend and the oracle calibration use the real registry (spawned workers
import their own registry, which holds no injected test).
"""

from __future__ import annotations

import csv
import io
import json
import pickle
import sqlite3
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from cubebench.agents.llm.testing import RecordedRequest, ScriptedServer, Step
from cubebench.runner.protocols import protocol_named
from cubebench.runner.cli import main
from cubebench.runner.protocols.questions.ladders import ladder_progress, next_rounds
from cubebench.runner.protocols.questions.plan import ItemSpec, plan_items
from cubebench.runner.protocols.questions.report import ladder_table
from cubebench.runner.protocols.questions.suite import QuestionSuite, question_suite_from_dict, restrict_questions
from cubebench.runner.specs import AgentSpec, AgentSpecError
from cubebench.runner.store import StoreDamaged, open_run
from cubebench.runner.suites import SuiteError, available_suites, load_suite
from cubebench.runner.viewer import episode_view, viewer_html
from cubebench.tasks.cube_bench import CUBE_BENCH_TESTS
from cubebench.tasks.items import Ask, Item, ItemResult, Prompt, QuestionTest, ask_and_judge, balanced_slot
from cubebench.tasks.metrics import Proportion
from cubebench.tasks.parsing import LetterForm
from cubebench.tasks.registry import TESTS
from helpers import needs

SOLVED = "U" * 9 + "R" * 9 + "F" * 9 + "D" * 9 + "L" * 9 + "B" * 9
IMAGE = np.full((6, 6, 3), 200, np.uint8)


class Pick(QuestionTest):
    """A fake test: one A-D question per item, its gold balanced over the slots; depth 7 has a single
    distinct item (generation fails for two); an item listed in ``broken`` raises inside ``play``."""

    name = "fake-pick"
    variants = ("plain", "loud")
    max_candidates = 50
    broken: set[tuple[int, int]] = set()

    def build(self, depth: int, index: int, rng: np.random.Generator, seed: int, metric: str) -> Item | None:
        slot = balanced_slot(seed, self.name, depth, index, 4)
        shown = {"n": 0 if depth == 7 else index}
        return Item(self.name, depth, index, metric, seed, SOLVED, {"gold": "ABCD"[slot], "shown": shown})

    def play(self, item: Item, variant: str, ask: Ask) -> ItemResult:
        if (item.depth, item.index) in self.broken:
            raise RuntimeError(f"boom at item {item.index}")
        prompt = Prompt("Answer with a letter.", f"Pick ({variant}), depth {item.depth}", IMAGE, LetterForm(),
                        gold=item.data["gold"], name="pick")
        ex = ask_and_judge(ask, prompt)
        return ItemResult([ex], {"right": bool(ex.correct), "parsed": ex.answer is not None}, passed=bool(ex.correct),
                          error=ex.reply.error, end_state=item.state)

    def summarize(self, scores: list[dict[str, Any]]) -> dict[str, Any]:
        return {"acc": Proportion(sum(s["right"] for s in scores), len(scores)), "share": 0.5, "count": len(scores),
                "undefined": None}


@pytest.fixture
def pick(monkeypatch) -> Pick:
    test = Pick()
    monkeypatch.setitem(TESTS, test.name, test)
    monkeypatch.setattr(Pick, "broken", set())
    return test


def suite_file(tmp_path: Path, tests: dict[str, Any] | None = None, **extra: Any) -> Path:
    data = {"schema": "cubebench-questions/1", "name": "q", "seed": 3,
            "tests": tests or {"fake-pick": {"depths": [1, 2], "items": 3}}, **extra}
    path = tmp_path / "q.json"
    path.write_text(json.dumps(data))
    return path


def cubebench(*argv: str) -> int:
    return main(list(argv))


def run_cli(suite: Path, agent: str, out: Path, *extra: str) -> int:
    return cubebench("run", "--suite", str(suite), "--agent", agent, "--out", str(out), "--no-progress", "--quiet",
                     *extra)


# --- suites ------------------------------------------------------------------------------------------
def test_the_shipped_question_suites_load_with_the_tests_own_variants() -> None:
    assert {"cube-bench", "cube-bench-smoke", "smoke"} <= set(available_suites())
    for name in ("cube-bench", "cube-bench-smoke"):
        suite = load_suite(name)
        assert isinstance(suite, QuestionSuite) and suite.metric == "half"
        assert list(suite.tests) == [t.name for t in CUBE_BENCH_TESTS]  # every test, in the paper's order
        for test, grid in suite.tests.items():
            assert set(grid.variants) <= set(TESTS[test].variants)
        assert question_suite_from_dict(suite.to_dict()) == suite
    smoke = load_suite("cube-bench-smoke")
    assert isinstance(smoke, QuestionSuite)
    assert all(len(g.depths) <= 2 and 2 <= g.items <= 4 for g in smoke.tests.values()) and smoke.size <= 50
    assert all(g.variants == TESTS[t].variants for t, g in smoke.tests.items())  # default: all variants


def test_a_user_question_suite_loads_with_defaults(tmp_path: Path, pick: Pick) -> None:
    suite = load_suite(str(suite_file(tmp_path, {"fake-pick": {"depths": [2], "items": 4, "variants": ["loud"],
                                                               "options": {"max_candidates": 7}}})))
    assert isinstance(suite, QuestionSuite) and (suite.metric, suite.seed) == ("half", 3)
    grid = suite.tests["fake-pick"]
    assert (grid.depths, grid.items, grid.variants, grid.options) == ((2,), 4, ("loud",), {"max_candidates": 7})
    assert suite.size == 4 and question_suite_from_dict(suite.to_dict()) == suite


@pytest.mark.parametrize("change, message", [
    ({"tests": {}}, "tests must be a non-empty object"),
    ({"tests": {"nope": {"depths": [1], "items": 1}}}, "unknown test 'nope'; known: reconstruction"),
    ({"tests": {"fake-pick": {"depths": [1], "items": 1, "variants": ["quiet"]}}},
     "unknown variant(s) ['quiet']; fake-pick has ['plain', 'loud']"),
    ({"tests": {"fake-pick": {"depths": [1], "items": 1, "variants": ["loud", "loud"]}}}, "lists a value twice"),
    ({"tests": {"fake-pick": {"depths": [1], "items": 1, "size": 3}}}, "tests.fake-pick: unknown field(s) ['size']"),
    ({"tests": {"fake-pick": {"depths": [1]}}}, "tests.fake-pick: missing field(s) ['items']"),
    ({"tests": {"fake-pick": {"depths": [1], "items": 0}}}, "items must be an integer >= 1"),
    ({"tests": {"fake-pick": {"depths": [], "items": 1}}}, "depths must be a non-empty list"),
    ({"tests": {"fake-pick": {"depths": [1], "items": 1, "options": {"speed": 2}}}},
     "unknown option 'speed'; fake-pick takes ['max_candidates']"),
    ({"tests": {"fake-pick": {"depths": [1], "items": 1, "options": {"max_candidates": "many"}}}},
     "option max_candidates must be of type int"),
    ({"tests": {"fake-pick": {"depths": [1], "items": 2, "depth_items": {"2": 1}}}},
     "depth_items names '2', which is not one of the depths [1]"),
    ({"tests": {"fake-pick": {"depths": [1], "items": 2, "depth_items": {"1": 0}}}},
     "depth_items['1'] must be an integer >= 1"),
    ({"tests": {"fake-pick": {"depths": [1], "items": 2, "depth_items": [1]}}}, "depth_items must be an object"),
    ({"tests": {"fake-pick": {"depths": [1], "items": 2, "variant_items": {"quiet": 1}}}},
     "variant_items names 'quiet', which is not one of the variants ['plain', 'loud']"),
    ({"tests": {"fake-pick": {"depths": [1], "items": 2, "variant_items": {"loud": "one"}}}},
     "variant_items['loud'] must be an integer >= 1"),
    ({"metric": "diagonal"}, "metric must be one of"),
    ({"seed": -1}, "seed must be an integer >= 0"),
    ({"tiers": ["face"]}, "unknown field(s) ['tiers']"),
])
def test_bad_question_suites_fail_with_a_message_naming_the_field(tmp_path: Path, pick: Pick, change: dict,
                                                                  message: str) -> None:
    path = suite_file(tmp_path)
    path.write_text(json.dumps({**json.loads(path.read_text()), **change}))
    with pytest.raises(SuiteError) as err:
        load_suite(str(path))
    assert message in str(err.value) and str(path) in str(err.value)


def test_fewer_items_at_some_depths_and_in_some_variants(tmp_path: Path, pick: Pick) -> None:
    """``depth_items`` caps a depth (half-turn depth 1 has 18 start states), ``variant_items`` a variant (STARE's
    frames); a capped variant asks the first of the items the others ask; both survive a round trip and a
    restriction, and ``--items``-style overrides of ``items`` still cap every depth."""
    suite = load_suite(str(suite_file(tmp_path, {"fake-pick": {
        "depths": [1, 2], "items": 5, "depth_items": {"1": 3}, "variant_items": {"loud": 2}}})))
    assert isinstance(suite, QuestionSuite)
    grid = suite.tests["fake-pick"]
    assert [grid.items_at(d, v) for d in (1, 2) for v in ("plain", "loud")] == [3, 2, 5, 2]
    assert suite.size == 12 and question_suite_from_dict(suite.to_dict()) == suite
    plan = plan_items(suite)
    asked = {(d, v): sorted(s.index for s in plan if (s.depth, s.variant) == (d, v))
             for d in (1, 2) for v in ("plain", "loud")}
    assert asked == {(1, "plain"): [0, 1, 2], (1, "loud"): [0, 1], (2, "plain"): [0, 1, 2, 3, 4], (2, "loud"): [0, 1]}
    loud = {s.index: s.item for s in plan if (s.depth, s.variant) == (2, "loud")}
    assert all(s.item == loud[s.index] for s in plan if (s.depth, s.variant) == (2, "plain") and s.index in loud)
    part = restrict_questions(suite, depths=[1])
    assert part.tests["fake-pick"].depth_items == {1: 3} and part.size == 5  # type: ignore[union-attr]
    fewer = question_suite_from_dict({**suite.to_dict(), "tests": {"fake-pick": {
        **suite.tests["fake-pick"].to_dict(), "items": 1}}})
    assert fewer.size == 4


NET_FOLD_VARIANTS = ("question", "steps", "frames", "text", "image-text", "frames-1", "frames-2", "frames-3",
                     "frames-partial", "frames-last", "final-form", "frames-interleaved", "perturbed")


def test_the_shipped_grids_are_the_papers() -> None:
    """Cube Bench: 100 items per cell, closed loop and recovery 25 per depth (18 at depth 1, all the half-turn
    states there are); STARE's net folding: 193 nets without visual simulation and 120 with (its Tab. 13)."""
    cube = load_suite("cube-bench")
    assert isinstance(cube, QuestionSuite)
    for name in ("reconstruction", "verification", "move-choice", "reflection", "move-effect"):
        assert cube.fixed[name].items == 100
    for name in ("closed-loop", "recovery"):
        assert [cube.fixed[name].items_at(d) for d in cube.fixed[name].depths] == [18, 25, 25, 25]
    stare = load_suite("stare")
    assert isinstance(stare, QuestionSuite)
    fold = stare.fixed["net-fold"]
    shows_frames = ("frames", "frames-1", "frames-2", "frames-3", "frames-partial", "frames-last", "final-form",
                    "frames-interleaved")  # the paper's 120 with visual simulation; the final form is one
    assert {v: fold.items_at(2, v) for v in fold.variants} == {v: 120 if v in shows_frames else 193
                                                               for v in NET_FOLD_VARIANTS}


def test_restriction_by_tests_and_depths(tmp_path: Path, pick: Pick) -> None:
    suite = load_suite(str(suite_file(tmp_path, {"fake-pick": {"depths": [1, 2], "items": 2},
                                                 "move-choice": {"depths": [2, 3], "items": 2}})))
    assert isinstance(suite, QuestionSuite)
    part = restrict_questions(suite, depths=[1])
    assert part.name == "q[1]" and list(part.tests) == ["fake-pick"] and part.tests["fake-pick"].depths == (1,)
    part = restrict_questions(suite, tests=["move-choice"], depths=[2])
    assert part.name == "q[move-choice,2]" and part.tests["move-choice"].depths == (2,)
    assert restrict_questions(suite) is suite
    with pytest.raises(SuiteError, match=r"has no tests \['recovery'\]"):
        restrict_questions(suite, tests=["recovery"])
    with pytest.raises(SuiteError, match=r"has no depths \[4\]"):
        restrict_questions(suite, depths=[4])
    with pytest.raises(SuiteError, match="asks at depths"):
        restrict_questions(suite, tests=["move-choice"], depths=[1])


# --- plan ---------------------------------------------------------------------------------------------
def test_the_plan_is_deterministic_keyed_and_round_trips(tmp_path: Path, pick: Pick) -> None:
    suite = load_suite(str(suite_file(tmp_path)))
    assert isinstance(suite, QuestionSuite)
    plan = plan_items(suite)
    assert plan == plan_items(suite) and len(plan) == suite.size == 12
    assert plan[0].key == "fake-pick/plain/d1/i000" and plan[-1].key == "fake-pick/loud/d2/i002"
    assert [s.index for s in plan] == sorted(s.index for s in plan)  # index-major: partial runs cover every cell
    for spec in plan:
        assert spec.key == f"{spec.test}/{spec.variant}/d{spec.depth}/i{spec.index:03d}"
        assert ItemSpec(**json.loads(json.dumps(spec.to_dict()))) == spec == pickle.loads(pickle.dumps(spec))
        assert spec.to_item() == Item(**spec.item)
        assert spec.to_item().key == f"fake-pick/d{spec.depth}/i{spec.index:03d}"
    by_cell = {(s.depth, s.index): s.item for s in plan if s.variant == "plain"}
    assert all(s.item == by_cell[(s.depth, s.index)] for s in plan)  # every variant asks the same item
    assert len({s.agent_seed for s in plan}) == len(plan)
    for depth in (1, 2):  # balanced slots: the 3 items of a depth have 3 different golds
        assert len({s.item["data"]["gold"] for s in plan if s.depth == depth}) == 3


def test_an_item_generation_error_stops_the_run_before_it_starts(tmp_path: Path, pick: Pick, capsys) -> None:
    suite = suite_file(tmp_path, {"fake-pick": {"depths": [7], "items": 2, "options": {"max_candidates": 5}}})
    out = tmp_path / "run.sqlite"
    assert run_cli(suite, "oracle", out) == 2
    err = capsys.readouterr().err
    assert "cannot generate 2 fake-pick item(s) at depth 7" in err and "after 5 candidates" in err
    assert not out.exists() and pick.max_candidates == 50  # the option was set on a copy


# --- runs ---------------------------------------------------------------------------------------------
def test_the_oracle_passes_every_item_and_the_readers_work(tmp_path: Path, pick: Pick, capsys) -> None:
    run = tmp_path / "oracle.sqlite"
    assert cubebench("run", "--suite", str(suite_file(tmp_path)), "--agent", "oracle", "--out", str(run),
                     "--no-progress") == 0
    captured = capsys.readouterr()
    assert "12 items planned" in captured.err and "12 item(s) played" in captured.err
    assert "fake-pick (by depth and variant)" in captured.out and "1.00 [0.44, 1.00]" in captured.out
    with open_run(run) as store:
        assert store.protocol == "questions" and all(isinstance(s, ItemSpec) for s in store.plan())
        rows = store.rows()
        assert len(rows) == 12 and all(r.status == "solved" and r.solved for r in rows)
        assert {(r.test, r.variant, r.setting, r.horizon) for r in rows if r.depth == 2} == {
            ("fake-pick", v, "item", "d2") for v in ("plain", "loud")}
        key, record = next(store.records())
        config = record.config
        assert (config["protocol"], config["key"], config["test"], config["variant"]) == (
            "questions", key, "fake-pick", "plain")
        assert config["score"] == {"right": True, "parsed": True} and config["state"] == SOLVED
        assert config["exchanges"] == [{"name": "pick", "gold": config["item"]["gold"], "correct": True, "move": None}]
        step = record.steps[0]
        assert step.observation_text == "Pick (plain), depth 1" and step.observation_png_b64
        assert step.reply == step.action == config["item"]["gold"] and record.agent == "oracle"
    assert cubebench("report", str(run), "--html", str(tmp_path / "r.html")) == 0
    text = capsys.readouterr().out
    assert "items: 12 of 12 finished" in text and "question tests: fake-pick" in text
    header = next(line for line in text.splitlines() if line.startswith("depth"))
    assert header.split() == ["depth", "variant", "items", "acc", "share", "count", "undefined", "errors", "malformed"]
    html = (tmp_path / "r.html").read_text()
    assert "<caption>fake-pick (by depth and variant)</caption>" in html and "data:image/png" not in html
    assert cubebench("report", str(run), "--plots", str(tmp_path / "plots")) == 2
    assert cubebench("view", str(run), "--out", str(tmp_path / "v.html")) == 0
    viewer = (tmp_path / "v.html").read_text()
    assert '"gold": "' in viewer and '"question": {"score": {"right": true' in viewer
    assert cubebench("export", str(run), "--format", "csv", "--out", str(tmp_path / "e.csv")) == 0
    table = list(csv.DictReader(io.StringIO((tmp_path / "e.csv").read_text())))
    assert len(table) == 12 and table[0]["test"] == "fake-pick" and table[0]["variant"] and table[0]["passed"]
    assert not {"tier", "reward", "setting", "horizon", "instance"} & set(table[0])  # headers say what they hold
    assert cubebench("export", str(run), "--format", "jsonl", "--no-images") == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 12 and json.loads(lines[0])["record"]["steps"][0]["observation_png_b64"] is None


def test_the_random_baseline_fails_some_items_reproducibly(tmp_path: Path, pick: Pick) -> None:
    suite = suite_file(tmp_path, {"fake-pick": {"depths": [1], "items": 12}})
    outcomes = []
    for name in ("a", "b"):
        assert run_cli(suite, "random", tmp_path / f"{name}.sqlite") == 0
        with open_run(tmp_path / f"{name}.sqlite") as store:
            outcomes.append([(r.key, r.status) for r in store.rows()])
    statuses = [s for _, s in outcomes[0]]
    assert outcomes[0] == outcomes[1] and "failed" in statuses and "solved" in statuses


def test_a_limited_run_resumes_with_only_the_rest(tmp_path: Path, pick: Pick, capsys) -> None:
    run = tmp_path / "r.sqlite"
    assert run_cli(suite_file(tmp_path), "oracle", run, "--limit", "5") == 0
    assert "resume with: cubebench run --resume" in capsys.readouterr().err
    with open_run(run) as store:
        first = [r.key for r in store.rows()]
    assert len(first) == 5
    assert cubebench("run", "--resume", str(run), "--no-progress", "--quiet") == 0
    assert "7 item(s) played" in capsys.readouterr().err
    with open_run(run) as store:
        assert len(store.rows()) == 12
        assert [s["outcome"] for s in store.sessions()] == ["partial: --limit 5", "complete"]


def test_an_exception_in_play_is_an_error_record_and_retry_errors_replays_it(tmp_path: Path, pick: Pick) -> None:
    Pick.broken = {(2, 1)}
    run = tmp_path / "b.sqlite"
    assert run_cli(suite_file(tmp_path), "oracle", run) == 0
    with open_run(run) as store:
        errors = {r.key: store.record(r.key) for r in store.rows() if r.status == "error"}
        assert sorted(errors) == ["fake-pick/loud/d2/i001", "fake-pick/plain/d2/i001"]
        record = next(iter(errors.values()))
        assert record.config["play_error"] == "RuntimeError: boom at item 1" and record.config["score"] is None
        assert record.errors == 1 and record.n_steps == 0 and not record.solved
        assert len(store.rows()) == 12
    assert cubebench("report", str(run)) == 0
    Pick.broken = set()
    assert cubebench("run", "--resume", str(run), "--retry-errors", "--no-progress", "--quiet") == 0
    with open_run(run) as store:
        assert all(r.status == "solved" for r in store.rows()) and store.retired_count() == 2


def test_agents_that_cannot_play_the_protocol_are_refused(tmp_path: Path, pick: Pick, capsys) -> None:
    suite = suite_file(tmp_path)
    for agent, message in (("solver", "answers no questions"), ("mlp", "answers no questions")):
        assert run_cli(suite, agent, tmp_path / "x.sqlite") == 2
        assert message in capsys.readouterr().err
    assert run_cli(suite, "oracle", tmp_path / "x.sqlite", "--tiers", "face") == 2
    assert "use --tests" in capsys.readouterr().err
    episodes = tmp_path / "e.json"
    episodes.write_text(json.dumps({"name": "e", "tiers": ["symbolic"], "depths": [1], "instances": 1,
                                    "rewards": ["none"], "tool_settings": ["basic"]}))
    assert run_cli(episodes, "oracle", tmp_path / "x.sqlite") == 2
    assert "plays no episodes" in capsys.readouterr().err
    assert run_cli(episodes, "solver", tmp_path / "x.sqlite", "--tests", "fake-pick") == 2
    assert "use --tiers" in capsys.readouterr().err
    assert not (tmp_path / "x.sqlite").exists()
    with pytest.raises(AgentSpecError, match="each question test writes its own"):
        protocol_named("questions").factory(AgentSpec("openai:gpt-x", system_prompt="{task}"))
    with pytest.raises(AgentSpecError, match="answers no questions"):
        protocol_named("questions").factory(AgentSpec("greedy"))


def test_the_store_checks_a_question_run_like_an_episode_run(tmp_path: Path, pick: Pick) -> None:
    run = tmp_path / "d.sqlite"
    assert run_cli(suite_file(tmp_path), "oracle", run) == 0
    db = sqlite3.connect(run)
    db.execute("UPDATE episodes SET record = ? WHERE key = 'fake-pick/loud/d1/i000'", (zlib.compress(b"{}"),))
    db.commit()
    db.close()
    with pytest.raises(StoreDamaged, match="fake-pick/loud/d1/i000"):
        open_run(run)
    assert cubebench("run", "--resume", str(run), "--no-progress", "--quiet") == 0
    with open_run(run) as store:
        assert len(store.rows()) == 12 and store.damaged_count() == 1
    db = sqlite3.connect(run)
    spec = json.loads(db.execute("SELECT spec FROM plan WHERE position = 0").fetchone()[0])
    for damage, message in (({"item": {**spec["item"], "state": None}}, r"\.item\.state: expected str"),
                            ({"item": None}, "the field item is missing")):
        db.execute("UPDATE plan SET spec = ? WHERE position = 0",
                   (json.dumps({k: v for k, v in {**spec, **damage}.items() if v is not None}),))
        db.commit()
        with pytest.raises(StoreDamaged, match=message):
            open_run(run)
    db.close()


@needs("openai")
def test_a_model_answers_through_the_same_clients(tmp_path: Path, pick: Pick) -> None:
    seen: list[Any] = []

    def model(req: RecordedRequest) -> Step:
        seen.append(req.body["messages"])
        return Step.reply("<ANSWER> B </ANSWER>")

    run = tmp_path / "m.sqlite"
    with ScriptedServer(model) as srv:
        assert run_cli(suite_file(tmp_path), f"openai-compatible:{srv.base_url}:scripted", run,
                       "--concurrency", "3", "--model-attempts", "1") == 0
    with open_run(run) as store:
        rows = store.rows()
        golds = {key: record.config["item"]["gold"] for key, record in store.records()}
    assert len(seen) == 12 and all(m[0]["role"] == "system" for m in seen)
    assert all(any(p.get("type") == "image_url" for p in m[1]["content"]) for m in seen)  # images are sent
    assert all(r.solved == (golds[r.key] == "B") for r in rows) and sum(r.input_tokens for r in rows) > 0


# --- the real tests -----------------------------------------------------------------------------------
def test_the_oracle_answers_every_real_question_right_after_the_plan_round_trip(tmp_path: Path) -> None:
    run = tmp_path / "real.sqlite"
    assert cubebench("run", "--suite", "cube-bench-smoke", "--agent", "oracle", "--out", str(run), "--no-progress",
                     "--quiet", "--no-images") == 0
    with open_run(run) as store:
        records = [record for _, record in store.records()]
    assert len(records) == load_suite("cube-bench-smoke").size
    assert all(r.status != "error" for r in records)
    assert all(e["correct"] in (True, None) for r in records for e in r.config["exchanges"])
    assert {r.config["test"] for r in records} == {t.name for t in CUBE_BENCH_TESTS}


def test_the_process_backend_plays_real_items_like_the_inline_backend(tmp_path: Path) -> None:
    tests = {"move-choice": {"depths": [1], "items": 2, "variants": ["text"]},
             "closed-loop": {"depths": [2], "items": 2, "variants": ["standard"]}}
    suite = suite_file(tmp_path, tests)
    results = []
    for backend in ("local", "process"):
        run = tmp_path / f"{backend}.sqlite"
        assert run_cli(suite, "random", run, "--backend", backend, "--concurrency", "2") == 0
        with open_run(run) as store:
            results.append({key: (r.status, [s.reply for s in r.steps]) for key, r in store.records()})
    assert results[0] == results[1] and len(results[0]) == 4


# --- calibration through the command line: the oracle at 1, the random answerer at chance ----------------------
CALIBRATION = {"verification": {"depths": [3], "items": 120},
               "move-choice": {"depths": [2], "items": 120, "variants": ["text"]},
               "move-effect": {"depths": [2], "items": 60, "variants": ["text"]},
               "closed-loop": {"depths": [2], "items": 40, "variants": ["standard"]}}


def calibration_rows(tmp_path: Path, agent: str) -> dict[str, dict[str, Any]]:
    """``cubebench run`` of the calibration suite with ``agent``; each test's metrics from the stored records."""
    run = tmp_path / f"{agent}.sqlite"
    assert run_cli(suite_file(tmp_path, CALIBRATION), agent, run, "--no-images") == 0
    with open_run(run) as store:
        records = [record for _, record in store.records()]
    return {name: TESTS[name].summarize([r.config["score"] for r in records if r.config["test"] == name])
            for name in CALIBRATION}


def test_the_oracle_agent_scores_one_and_kappa_one_through_the_cli(tmp_path: Path) -> None:
    rows = calibration_rows(tmp_path, "oracle")
    assert rows["verification"]["bal acc"] == 1.0 and rows["move-choice"]["acc"].value == 1.0
    assert rows["move-effect"]["kappa"] == 1.0 and rows["move-effect"]["macro F1"] == 1.0
    assert rows["closed-loop"]["TA"].value == 1.0 and rows["closed-loop"]["perfect"].value == 1.0


def test_the_oracle_headline_is_one_and_recovery_items_with_nothing_to_recover_are_counted_apart(
        tmp_path: Path, capsys) -> None:
    """An item with nothing to recover (the closed loop never erred) is neither passed nor failed, so the oracle's
    headline is 1.00 (it read 0.89 on cube-bench-smoke); the note about such items is printed only where the
    suite has a recovery test."""
    tests = {"move-choice": {"depths": [1], "items": 4, "variants": ["text"]},
             "recovery": {"depths": [1, 2], "items": 2}}
    run = tmp_path / "with.sqlite"
    assert run_cli(suite_file(tmp_path, tests), "oracle", run, "--no-images") == 0
    capsys.readouterr()
    assert cubebench("report", str(run)) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if "items passed" in x)
    assert "items passed: 1.00 [0.51, 1.00]" in line and "a recovered cube" in line  # the 4 move-choice items
    assert "4 recovery item(s) whose closed loop never erred had nothing to recover: counted apart" in line
    with open_run(run) as store:
        counted = {r.config["test"]: r.config["counted"] for _, r in store.records()}
    assert counted == {"move-choice": True, "recovery": False}
    run = tmp_path / "without.sqlite"
    assert run_cli(suite_file(tmp_path, {"move-choice": tests["move-choice"]}), "oracle", run, "--no-images") == 0
    capsys.readouterr()
    assert cubebench("report", str(run)) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if "items passed" in x)
    assert line.strip() == "items passed: 1.00 [0.51, 1.00] (each test's headline: a right answer)"


def test_the_random_agent_lands_on_chance_through_the_cli(tmp_path: Path) -> None:
    """Chance, exactly: 1/4 for A-D; balanced accuracy 1/2; kappa 0; closed-loop TA at depth 2 is
    (1/4 + 1/16) / 2 = 0.15625 (the second step is reached only after a right first one).  The agent's
    seeds are fixed by the plan, so this is deterministic, not a flaky draw."""
    rows = calibration_rows(tmp_path, "random")
    lo, hi = rows["move-choice"]["acc"].interval
    assert lo <= 0.25 <= hi
    assert abs(rows["verification"]["bal acc"] - 0.5) < 0.12
    assert abs(rows["move-effect"]["kappa"]) < 0.12
    lo, hi = rows["closed-loop"]["TA"].interval
    assert lo <= 0.15625 <= hi


# --- review fixes: nothing a model or a test returns can crash the run or the viewer -----------------------------
def test_a_result_that_cannot_be_recorded_is_an_error_record_not_a_crash(tmp_path: Path, pick: Pick,
                                                                          monkeypatch) -> None:
    played = Pick.play

    def unstorable(self: Pick, item: Item, variant: str, ask: Ask) -> ItemResult:
        result = played(self, item, variant, ask)
        result.score = {"right": {1, 2}}  # a set: not JSON
        return result

    monkeypatch.setattr(Pick, "play", unstorable)
    run = tmp_path / "u.sqlite"
    assert run_cli(suite_file(tmp_path), "oracle", run) == 1  # played to the end, and nothing evaluated: exit 1
    with open_run(run) as store:
        records = [record for _, record in store.records()]
    assert len(records) == 12 and all(r.status == "error" and "cannot store set" in r.config["play_error"] for r in records)


@needs("openai")
def test_an_answerer_that_spends_its_own_budget_fails_the_item_and_is_scored(tmp_path: Path, pick: Pick) -> None:
    with ScriptedServer([Step.reply("<ANSWER> A </ANSWER>")] * 20) as srv:
        run = tmp_path / "b.sqlite"
        assert run_cli(suite_file(tmp_path, {"fake-pick": {"depths": [1], "items": 2, "variants": ["plain"]}}),
                       f"openai-compatible:{srv.base_url}:m", run, "--episode-max-tokens", "1") == 0
    with open_run(run) as store:
        records = [record for _, record in store.records()]
    assert [r.status for r in records] == ["failed", "failed"]
    assert all(r.steps[-1].error.startswith("budget:") and r.config["score"] is not None for r in records)


@needs("openai")
def test_the_cost_cap_counts_what_earlier_sessions_spent(tmp_path: Path, pick: Pick) -> None:
    """--max-cost stops the whole run, not each session: a resumed run that has spent its cap plays nothing."""
    run = tmp_path / "c.sqlite"
    with ScriptedServer([Step.reply("<ANSWER> A </ANSWER>", input_tokens=1000, output_tokens=0)] * 20) as srv:
        assert run_cli(suite_file(tmp_path), f"openai-compatible:{srv.base_url}:gpt-4o", run,
                       "--max-cost", "0.004") == 0  # $0.0025 an item at gpt-4o's price: the cap stops it at 2
        assert cubebench("run", "--resume", str(run), "--no-progress", "--quiet") == 0
    with open_run(run) as store:
        assert len(store.rows()) == 2 and abs(sum(r.cost_usd for r in store.rows()) - 0.005) < 1e-9
        assert [s["outcome"] for s in store.sessions()] == ["stopped: cost cap $0.004 reached"] * 2


def test_model_text_cannot_end_or_reopen_the_viewers_script() -> None:
    from cubebench.runner.viewer import script_json

    hostile = {"reply": "<!--<script></script>&amp;\u2028"}
    text = script_json(hostile)
    assert not set("<>&") & set(text) and json.loads(text) == hostile


def test_episode_only_flags_and_unreachable_depths_are_refused_for_questions(tmp_path: Path, pick: Pick) -> None:
    suite = suite_file(tmp_path)
    assert run_cli(suite, "oracle", tmp_path / "s.sqlite", "--style", "codeact") == 2
    assert run_cli(suite, "oracle", tmp_path / "d.sqlite", "--distance-budget", "5") == 2
    with pytest.raises(ValueError, match="beyond the 8 moves"):
        TESTS["move-choice"].items(9, 1)


# --- ladders (Inf-Bench's adaptive protocol) ----------------------------------------------------------------------
def ladder_suite(tmp_path: Path, runs: int = 2, top: int = 3, **entry: Any) -> Path:
    return suite_file(tmp_path, {"fake-pick": {"ladder": {"runs": runs, "max_level": top}, "variants": ["plain"],
                                               **entry}})


def ladder_rows(run: Path) -> dict[str, tuple[str, bool]]:
    with open_run(run) as store:
        return {r.key: (r.status, r.solved) for r in store.rows()}


def test_a_ladder_suite_climbs_round_by_round_and_reports_its_scores(tmp_path: Path, pick: Pick, capsys) -> None:
    run = tmp_path / "l.sqlite"
    assert run_cli(ladder_suite(tmp_path), "oracle", run) == 0
    rows = ladder_rows(run)
    assert len(rows) == 2 * 3 * 5 and all(status == "solved" for status, _ in rows.values())
    assert sorted(k for k in rows if "/run00/" in k)[:6] == [f"fake-pick/plain/run00/t00/d1/i{k}" for k in range(5)] + [
        "fake-pick/plain/run00/t01/d2/i0"]
    with open_run(run) as store:
        specs = [s for s in store.plan() if isinstance(s, ItemSpec)]
        assert {(s.ladder_run, s.ladder_round, s.depth) for s in specs} == {(r, t, t + 1) for r in (0, 1) for t in (0, 1, 2)}
        assert len({s.item["index"] for s in specs if s.depth == 2}) == 10  # every round asks its own items
    capsys.readouterr()
    assert cubebench("report", str(run)) == 0
    out = capsys.readouterr().out
    assert "ladders" in out and "3.00" in out and "2/2" in out and "3 3" in out


def test_a_ladder_run_resumed_mid_climb_ends_as_an_uninterrupted_one(tmp_path: Path, pick: Pick) -> None:
    whole, cut = tmp_path / "whole.sqlite", tmp_path / "cut.sqlite"
    suite = ladder_suite(tmp_path, runs=3, top=4)
    assert run_cli(suite, "random", whole) == 0
    assert run_cli(suite, "random", cut, "--limit", "7") == 0
    assert len(ladder_rows(cut)) == 7
    assert cubebench("run", "--resume", str(cut), "--limit", "6", "--no-progress", "--quiet") == 0
    assert len(ladder_rows(cut)) == 13
    assert cubebench("run", "--resume", str(cut), "--no-progress", "--quiet") == 0
    assert ladder_rows(cut) == ladder_rows(whole)
    with open_run(cut) as store:
        assert [s["outcome"] for s in store.sessions()] == ["partial: --limit 7", "partial: --limit 6", "complete"]


def test_an_error_item_holds_its_ladder_until_retry_errors_asks_it_again(tmp_path: Path, pick: Pick, capsys) -> None:
    Pick.broken = {(1, 0)}  # level 1, index 0: the first item of run 0's first round
    run = tmp_path / "e.sqlite"
    assert run_cli(ladder_suite(tmp_path), "oracle", run) == 0
    rows = ladder_rows(run)
    assert rows["fake-pick/plain/run00/t00/d1/i0"] == ("error", False)
    assert not any("/run00/t01/" in k for k in rows) and any("/run01/t02/" in k for k in rows)
    capsys.readouterr()
    assert cubebench("report", str(run)) == 0
    out = capsys.readouterr().out
    assert "1+ 3" in out  # run 0 stands at level 1, run 1 ended at 3
    Pick.broken = set()
    assert cubebench("run", "--resume", str(run), "--retry-errors", "--no-progress", "--quiet") == 0
    rows = ladder_rows(run)
    assert len(rows) == 30 and all(status == "solved" for status, _ in rows.values())


def inf_ladder_suite(tmp_path: Path, top: int) -> Path:
    return suite_file(tmp_path, {"inf-forward": {"ladder": {"runs": 1, "max_level": top}, "variants": ["encoded"]},
                                 "inf-inverse": {"ladder": {"runs": 1, "max_level": top}, "variants": ["encoded"]}})


def test_an_oracle_climbs_inf_bench_past_level_20_and_resumes_mid_climb_up_there(tmp_path: Path, capsys) -> None:
    """The paper's fine-tuned rows reach 71.9-273.2, so a ladder must not stop at 20: with a cap of 26 the
    oracle climbs every rung, items made round by round; a run cut at level 23 (and again at 25) resumes
    there and ends with exactly the records of an uninterrupted run."""
    suite = inf_ladder_suite(tmp_path, 26)
    whole, cut = tmp_path / "whole.sqlite", tmp_path / "cut.sqlite"
    assert run_cli(suite, "oracle", whole, "--no-images") == 0
    rows = ladder_rows(whole)
    assert len(rows) == 2 * 26 * 5 and all(status == "solved" for status, _ in rows.values())
    assert "inf-forward/encoded/run00/t25/d26/i4" in rows
    assert run_cli(suite, "oracle", cut, "--no-images", "--limit", str(2 * 22 * 5 + 3)) == 0
    with open_run(cut) as store:
        planned = {s.depth for s in store.plan() if isinstance(s, ItemSpec)}
    assert max(planned) == 23  # stopped mid-round at level 23: the next rounds are not planned yet
    assert cubebench("run", "--resume", str(cut), "--limit", "21", "--no-progress", "--quiet") == 0
    assert cubebench("run", "--resume", str(cut), "--no-progress", "--quiet") == 0
    assert ladder_rows(cut) == ladder_rows(whole)
    capsys.readouterr()
    assert cubebench("report", str(cut)) == 0
    out = capsys.readouterr().out
    assert "26.00" in out and "0.013" in out  # topped at 26; the chance level of the capped ladder


@pytest.mark.parametrize("entry, message", [
    ({"ladder": {"runs": 2}}, "exactly"),
    ({"ladder": {"runs": 0, "max_level": 3}}, "runs must be"),
    ({"ladder": {"runs": 1, "max_level": 9}}, "cannot be a ladder to level 9"),
    ({"ladder": {"runs": 1, "max_level": 3}, "depths": [1]}, "beside ladder"),
    ({"ladder": [1, 3]}, "exactly"),
])
def test_bad_ladder_entries_are_refused_by_name(tmp_path: Path, pick: Pick, entry: dict, message: str) -> None:
    with pytest.raises(SuiteError, match=message):
        load_suite(str(suite_file(tmp_path, {"fake-pick": entry})))


def test_restricting_a_ladder_suite(tmp_path: Path, pick: Pick) -> None:
    suite = load_suite(str(suite_file(tmp_path, {"fake-pick": {"ladder": {"runs": 1, "max_level": 2}},
                                                 "reconstruction": {"depths": [1], "items": 2, "variants": ["image"]}})))
    assert isinstance(suite, QuestionSuite) and list(suite.ladders) == ["fake-pick"] and suite.size == 2
    assert list(restrict_questions(suite, tests=["fake-pick"]).tests) == ["fake-pick"]
    assert list(restrict_questions(suite, depths=[1]).tests) == ["reconstruction"]  # a ladder has no fixed depths
    assert question_suite_from_dict(suite.to_dict()) == suite
    first = plan_items(suite)
    assert [s.key for s in first if s.ladder_run is not None] == [f"fake-pick/{v}/run00/t00/d1/i{k}"
                                                                  for v in ("plain", "loud") for k in range(5)]


def test_the_shipped_inf_bench_smoke_suite_calibrates(tmp_path: Path, capsys) -> None:
    suite = load_suite("inf-bench-smoke")
    assert isinstance(suite, QuestionSuite) and set(suite.ladders) == {"inf-forward", "inf-inverse"}
    assert isinstance(load_suite("inf-bench"), QuestionSuite)
    run = tmp_path / "o.sqlite"
    assert cubebench("run", "--suite", "inf-bench-smoke", "--agent", "oracle", "--out", str(run), "--no-progress",
                     "--quiet", "--no-images") == 0
    capsys.readouterr()
    assert cubebench("report", str(run)) == 0
    out = capsys.readouterr().out
    assert out.count("3.00") == 4 and "0.016" in out  # every ladder tops level 3; chance 0.016 at a top of 3


def test_a_ladder_whose_stored_rounds_do_not_follow_its_replayed_climb_is_inconsistent(tmp_path: Path,
                                                                                      pick: Pick, capsys) -> None:
    """A damaged round-0 record played again with another answer would leave later rounds planned at levels
    the ladder no longer stands at: the ladder is reported inconsistent, not continued and not scored."""
    run = tmp_path / "i.sqlite"
    assert run_cli(ladder_suite(tmp_path, runs=1), "oracle", run) == 0
    with sqlite3.connect(run) as db:  # round 0 now reads as failed (2 right of 5): the climb below t01 changed
        db.execute("UPDATE episodes SET solved = 0 WHERE key IN ('fake-pick/plain/run00/t00/d1/i0', "
                   "'fake-pick/plain/run00/t00/d1/i1', 'fake-pick/plain/run00/t00/d1/i2')")
    with open_run(run, check_records=False) as store:
        suite = question_suite_from_dict(store.get_meta("suite"))
        progress = ladder_progress(suite, store.plan(), store.rows())[("fake-pick", "plain", 0)]
        assert progress.state == "inconsistent" and progress.next_round == 1
        assert next_rounds(suite, store.plan(), store.rows()) == []
    with sqlite3.connect(run) as db:  # round 0 passes again, round 1 (level 2) now fails: round 2 was planned at 3
        db.execute("UPDATE episodes SET solved = 1")
        db.execute("UPDATE episodes SET solved = 0 WHERE key LIKE 'fake-pick/plain/run00/t01/%' AND key NOT LIKE '%i4'")
    with open_run(run, check_records=False) as store:
        progress = ladder_progress(suite, store.plan(), store.rows())[("fake-pick", "plain", 0)]
        assert progress.state == "inconsistent" and progress.next_round == 2 and progress.ladder.level == 1
        table = ladder_table(suite, store)
        assert table.rows[0][2] == "0/1" and table.rows[0][-1] == "!" and "run(s) [0] inconsistent" in table.note


def test_an_item_with_nothing_to_recover_is_uncounted_in_the_report_the_viewer_and_the_csv(tmp_path: Path,
                                                                                         capsys) -> None:
    """The oracle's closed loop never errs, so its recovery items have nothing to recover: the report counts them
    apart (neither passed nor failed); the viewer and the CSV say the same, and title items in question words."""
    run = tmp_path / "r.sqlite"
    assert cubebench("run", "--suite", "cube-bench-smoke", "--tests", "verification,recovery", "--agent", "oracle",
                     "--out", str(run), "--no-progress") == 0
    out = capsys.readouterr().out
    assert "4 recovery item(s) whose closed loop never erred had nothing to recover" in out
    assert cubebench("export", str(run), "--format", "csv", "--out", str(tmp_path / "e.csv")) == 0
    table = list(csv.DictReader(io.StringIO((tmp_path / "e.csv").read_text())))
    recovery = [row for row in table if row["test"] == "recovery"]
    assert len(recovery) == 4 and all(row["passed"] == "" and row["status"] == "uncounted" for row in recovery)
    assert {row["status"] for row in table if row["test"] == "verification"} == {"passed"}
    with open_run(run) as store:
        views = {key: episode_view(key, record) for key, record in store.records()}
    assert {v["status"] for k, v in views.items() if k.startswith("recovery")} == {"uncounted"}
    assert all(v["question"]["summary"].startswith("not counted: its closed loop never erred")
               for k, v in views.items() if k.startswith("recovery"))
    assert views["verification/polarity/d3/i000"]["question"]["summary"] == "passed, 1 question"
    with open_run(run, readonly=True) as store:
        page = viewer_html(store)
    assert "e.question.summary" in page and ".uncounted{" in page
