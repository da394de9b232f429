"""``cubebench export-tasks``: certified episodes, SFT traces and question items as training data.

Small exports are written, loaded back with Hugging Face ``datasets`` (where installed), and checked:
fields, byte-for-byte determinism, train/test disjointness by start state, every SFT trace solving
when replayed through the ReAct parser and the env, and each verifier reference accepting the gold
and rejecting a wrong answer.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from cubebench.agents.actions import parse_action
from cubebench.budgets import move_budget
from cubebench.engine import TABLE
from cubebench.engine.metric import metric_length
from cubebench.engine.notation import parse_array
from cubebench.engine.kernels import apply_moves
from cubebench.engine.state import from_facelets, to_facelets
from cubebench.runner.cli import main
from cubebench.runner.execute import PlaySettings
from cubebench.runner.protocols.questions.play import play_item
from cubebench.runner.export_tasks import ExportError, ExportRequest, episode_specs, export_tasks
from cubebench.runner.sft_traces import replay_trace
from cubebench.engine.facelets import SOLVED_FACELETS
from cubebench.runner.splits import SplitError, check_disjoint, split_of, state_key
from cubebench.runner.suites import load_suite
from cubebench.runner.verifier_refs import verify
from cubebench.tasks.stare.asking import STEP_BY_STEP
from helpers import missing, needs

DATASETS = needs("datasets", "pyarrow")


def rows_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def exported(out: Path, fmt: str = "jsonl") -> list[dict[str, Any]]:
    """Every row an export wrote, train then test (JSON Lines)."""
    return [row for split in ("train", "test") if (out / f"{split}.{fmt}").exists()
            for row in rows_of(out / f"{split}.{fmt}")]


def test_episode_rows_hold_prompt_certified_depth_optimal_solution_and_verifier(tmp_path: Path) -> None:
    summary = export_tasks(ExportRequest(kind="episodes", out=tmp_path, depths=(1, 4, 20), instances=3))
    rows = exported(tmp_path)
    assert sum(summary.counts.values()) == len(rows) == 9
    for row in rows:
        assert row["tier"] == "symbolic" and row["metric"] == "quarter" and row["depth"] in (1, 4, 20)
        assert row["state"] in row["prompt"], "the symbolic prompt shows the 54 letters"
        assert row["prompt"].startswith("Observation: Initial observation.")
        assert "Thought:" in row["system"] and "move(seq: str)" in row["system"]
        assert [m["role"] for m in row["messages"]] == ["system", "user"]
        assert metric_length(row["solution"], "quarter") == row["depth"]
        ref = json.loads(row["verifier"])
        assert ref == {"kind": "cube-episode", "tier": "symbolic", "state": row["state"], "metric": "quarter",
                       "max_moves": move_budget(row["depth"]), "max_rotations": None}
        assert verify(ref, row["solution"]).ok
        short = " ".join(row["solution"].split()[:-1])  # one move short of an optimal solution: never solved
        assert not verify(row["verifier"], short).ok
        assert not verify(row["verifier"], "not moves").ok and not verify(row["verifier"], "not moves").parsed
        assert verify(row["verifier"], short).parsed or not short  # an empty sequence is no move at all
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["counts"] == summary.counts and manifest["kind"] == "episodes"


def test_episode_verifier_enforces_the_move_budget(tmp_path: Path) -> None:
    export_tasks(ExportRequest(kind="episodes", out=tmp_path, depths=(1,), instances=1))
    row = exported(tmp_path)[0]
    wasted = "U U' " * 20  # 40 quarter turns spent without solving: the solution after them is refused
    assert verify(row["verifier"], row["solution"]).ok
    verdict = verify(row["verifier"], wasted + row["solution"])
    assert not verdict.ok and "budget" in verdict.detail


def test_sft_traces_solve_when_replayed_through_the_react_parser_and_env(tmp_path: Path) -> None:
    request = ExportRequest(kind="sft", out=tmp_path, tier="face", depths=(1, 20), instances=2, starts="evaluation")
    export_tasks(request)
    rows = exported(tmp_path)
    specs = {f"{s.metric}/{s.key}": s for s in episode_specs(request)}
    assert len(rows) == len(specs) == 4
    for row in rows:
        messages = row["messages"]
        assert messages[0]["role"] == "system" and messages[-1]["role"] == "assistant"
        replies = [m["content"] for m in messages if m["role"] == "assistant"]
        assert row["steps"] == len(replies) <= 20
        assert all(r.startswith("Thought: ") and "\nAction: " in r for r in replies)
        assert [parse_action(r)[0] for r in replies][:5] == ["rotate"] * 5, "a face-view trace looks first"
        assert replay_trace(specs[row["id"]], PlaySettings(obs_format="text"), messages) == ""
        played = " ".join(parse_action(r)[1][0] for r in replies if parse_action(r)[0] == "move")
        assert metric_length(played, "quarter") == row["depth"], "the trace plays an optimal solution"
        assert "unsolved" in replay_trace(specs[row["id"]], PlaySettings(obs_format="text"), messages[:-1])


@DATASETS
def test_exports_load_with_datasets_in_both_formats(tmp_path: Path) -> None:
    import datasets

    for fmt in ("jsonl", "parquet"):
        out = tmp_path / fmt
        assert main(["export-tasks", "--kind", "sft", "--tier", "vertex", "--obs-format", "image", "--depths", "1,2",
                     "--instances", "3", "--starts", "evaluation", "--format", fmt, "--out", str(out), "--split", "0.5"]) == 0
        files = {s: str(out / f"{s}.{fmt}") for s in ("train", "test") if (out / f"{s}.{fmt}").exists()}
        loaded = datasets.load_dataset("json" if fmt == "jsonl" else "parquet", data_files=files)
        assert sum(len(loaded[s]) for s in files) == 6
        row = loaded[next(iter(files))][0]
        users = [m for m in row["messages"] if m["role"] == "user"]
        assert all(any(p["type"] == "image" for p in m["content"]) for m in users), "each observation has its image"
        assert len(row["images"]) == len(users)
        png = row["images"][0] if fmt == "parquet" else base64.b64decode(row["images"][0])
        assert png.startswith(b"\x89PNG")
    items = tmp_path / "items"
    assert main(["export-tasks", "--kind", "items", "--suite", "cube-bench-smoke", "--tests", "move-choice,verification",
                 "--format", "parquet", "--out", str(items)]) == 0
    loaded = datasets.load_dataset("parquet", data_files=str(items / "train.parquet"))["train"]
    assert set(loaded["test"]) == {"move-choice", "verification"} and all(loaded["answer"])


def test_items_carry_gold_answers_that_their_verifier_accepts(tmp_path: Path) -> None:
    summary = export_tasks(ExportRequest(kind="items", out=tmp_path, suite="cube-bench-smoke"))
    rows = exported(tmp_path)
    tests = {row["test"] for row in rows}
    assert tests == {"reconstruction", "verification", "move-choice", "move-effect"}
    assert {"closed-loop", "recovery", "reflection"} <= {n.split()[0] for n in summary.notes}
    for row in rows:
        assert verify(row["verifier"], row["answer"]).ok, row["id"]
        assert not verify(row["verifier"], row["answer"] + " extra").ok
        assert row["answer"] not in row["prompt"] or row["test"] == "verification"
        assert bool(row["images"]) == (row["variant"] != "text")
    row = next(r for r in rows if r["test"] == "move-choice")
    gold = json.loads(row["verifier"])["item"]["data"]["gold"]
    verdict = verify(row["verifier"], row["answer"].replace(f" {gold} ", f" {next(c for c in 'ABCD' if c != gold)} "))
    assert not verdict.ok and verdict.detail.startswith("wrong answer")


def test_stare_items_are_split_by_their_net_not_by_the_solved_cube_they_all_show(tmp_path: Path) -> None:
    export_tasks(ExportRequest(kind="items", out=tmp_path, suite="stare-smoke", train_fraction=0.5, seed=1))
    rows = exported(tmp_path)
    assert {r["state"] for r in rows} == {SOLVED_FACELETS}  # one "state": a state split would put all on one side
    assert all(r["group"].startswith("hexomino-") for r in rows) and {r["split"] for r in rows} == {"train", "test"}
    check_disjoint(rows)
    sides: dict[str, set[str]] = {}
    for row in rows:
        sides.setdefault(row["group"], set()).add(row["split"])
    assert all(len(s) == 1 for s in sides.values()) and len(sides) > 2


def test_ladder_tests_export_at_fixed_levels_and_text_only_leaves_images_out(tmp_path: Path) -> None:
    with pytest.raises(ExportError, match="ladder"):
        export_tasks(ExportRequest(kind="items", out=tmp_path, suite="inf-bench"))
    export_tasks(ExportRequest(kind="items", out=tmp_path, suite="inf-bench", depths=(1, 2), items=2, images="none"))
    rows = exported(tmp_path)
    assert {(r["test"], r["variant"], r["depth"]) for r in rows} == {
        (t, "encoded", d) for t in ("inf-forward", "inf-inverse") for d in (1, 2)}
    assert all(isinstance(m["content"], str) for r in rows for m in r["messages"]) and not any(r["images"] for r in rows)
    assert all(verify(r["verifier"], r["answer"]).ok for r in rows)


@pytest.mark.parametrize("fmt", ["jsonl", pytest.param("parquet", marks=pytest.mark.slow)])
def test_same_arguments_write_identical_bytes(tmp_path: Path, fmt: str) -> None:
    if fmt == "parquet" and missing("pyarrow"):
        pytest.skip("parquet needs the export extra (pyarrow)")
    for kind, extra in (("sft", {"tier": "visual", "obs_format": "image"}), ("items", {"suite": "stare-smoke"})):
        written = []
        for copy in ("a", "b"):
            out = tmp_path / f"{kind}-{fmt}-{copy}"
            kwargs = dict(depths=(2,), instances=3, starts="evaluation") if kind == "sft" else {}
            export_tasks(ExportRequest(kind=kind, out=out, format=fmt, train_fraction=0.5, **kwargs, **extra))
            written.append({p.name: p.read_bytes() for p in sorted(out.iterdir()) if p.is_file()})
        assert written[0] == written[1] and len(written[0]) >= 2


def test_split_never_shares_a_start_state_even_across_metrics_and_exports(tmp_path: Path) -> None:
    half = tmp_path / "half.json"
    half.write_text(json.dumps({**load_suite("exp1").to_dict(), "name": "half", "metric": "half", "max_moves": 30}))
    rows = []
    for name, suite in (("quarter", "exp1"), ("half", str(half))):
        export_tasks(ExportRequest(kind="episodes", out=tmp_path / name, suite=suite, depths=(1, 2), instances=12,
                                   train_fraction=0.5, seed=3))
        rows += exported(tmp_path / name)
    keys = [state_key(r["state"]) for r in rows]
    assert len(set(keys)) < len(keys), "quarter-turn depth-1 positions are half-turn depth-1 positions too"
    assert {r["split"] for r in rows} == {"train", "test"}
    check_disjoint(rows)
    by_state: dict[str, set[str]] = {}
    for key, row in zip(keys, rows):
        by_state.setdefault(key, set()).add(row["split"])
    assert all(len(sides) == 1 for sides in by_state.values())
    # another seed moves states between sides; the check itself catches a shared state
    assert {split_of(r["state"], 4, 0.5) for r in rows} == {"train", "test"}
    mixed = [{"state": rows[0]["state"], "split": "train"}, {"state": rows[0]["state"], "split": "test"}]
    with pytest.raises(SplitError, match="both train and test"):
        check_disjoint(mixed)


def test_a_state_held_another_way_is_the_same_state_for_the_split() -> None:
    state = "FRFFUFFRFDDDRRRDDDLFLDFDLFLBLBBDBBLBUUULLLUUURBRUBURBR"
    held = to_facelets(apply_moves(from_facelets(state), TABLE, parse_array("y x2")))
    assert held != state and state_key(held) == state_key(state)
    assert all(split_of(held, seed, 0.5) == split_of(state, seed, 0.5) for seed in range(20))


def test_images_as_files_are_written_beside_the_rows(tmp_path: Path) -> None:
    export_tasks(ExportRequest(kind="episodes", out=tmp_path, tier="face", obs_format="image", depths=(1,),
                               instances=2, images="files"))
    rows = exported(tmp_path)
    assert all(len(r["images"]) == 1 and (tmp_path / r["images"][0]).read_bytes().startswith(b"\x89PNG") for r in rows)


@pytest.mark.parametrize("argv, message", [
    (["--kind", "items", "--tier", "face"], "--tier is for episodes and sft"),
    (["--kind", "episodes", "--tests", "move-choice"], "--tests is for --kind items"),
    (["--kind", "episodes", "--obs-format", "image"], "symbolic tier is text only"),
    (["--kind", "sft", "--tier", "visual", "--obs-format", "image", "--images", "none"], "observation is an image"),
    (["--kind", "episodes", "--depths", "5"], "has no depths [5]"),
    (["--kind", "episodes", "--split", "1.5"], "between 0 and 1"),
    (["--kind", "episodes", "--suite", "cube-bench"], "is not an episode suite"),
    (["--kind", "episodes", "--suite", "multi-smoke"], "is not an episode suite"),
    (["--kind", "items", "--suite", "multi-smoke"], "is not a question suite"),
    (["--kind", "items", "--suite", "exp1"], "is not a question suite"),
    (["--kind", "items", "--suite", "cube-bench-smoke", "--tests", "recovery"], "questions, each after the replies"),
    (["--kind", "items", "--suite", "cube-bench-smoke", "--tests", "nope"], "has no test ['nope']"),
    (["--kind", "items", "--suite", "stare-smoke", "--rules", "nope"],
     "--rules 'nope': no such answer rules; the rules are paper, strict, release"),
    (["--kind", "items", "--suite", "stare-smoke", "--rules", "release"],
     "suite 'stare-smoke' has no such answer rules; it has paper, strict"),
    (["--kind", "episodes", "--rules", "paper"], "--rules chooses how question items ask for their answers"),
])
def test_bad_arguments_get_one_clear_line(argv: list[str], message: str, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["export-tasks", *argv, "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("cubebench: error: ") and message in err and err.count("\n") == 1


def test_an_export_never_overwrites_an_earlier_one_without_force(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    argv = ["export-tasks", "--kind", "items", "--suite", "stare-smoke", "--images", "none", "--out", str(out)]
    assert main(argv) == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    capsys.readouterr()
    assert main(argv + ["--split", "0.5"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("cubebench: error: ") and "--force" in err and err.count("\n") == 1
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert main(argv + ["--split", "0.5", "--force"]) == 0
    assert json.loads((out / "manifest.json").read_text())["train_fraction"] == 0.5


@pytest.mark.skipif(missing("pyarrow"), reason="needs pyarrow (the export extra)")
def test_force_in_another_format_leaves_no_file_of_the_earlier_one(tmp_path: Path) -> None:
    export_tasks(ExportRequest(kind="items", out=tmp_path, suite="stare-smoke", images="none", train_fraction=0.5))
    export_tasks(ExportRequest(kind="items", out=tmp_path, suite="stare-smoke", images="none", train_fraction=0.5,
                               format="parquet", force=True))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["manifest.json", "test.parquet", "train.parquet"]


def test_a_failed_export_leaves_the_folder_as_it_was(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import cubebench.runner.export_tasks as export_module

    export_tasks(ExportRequest(kind="items", out=tmp_path, suite="cube-bench-smoke", images="none"))
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    calls, real = [], export_module.question_ref

    def failing_ref(*args: Any) -> Any:
        calls.append(args)
        if len(calls) == 3:  # rows are already written by then
            raise ExportError("the 3rd item could not be made")
        return real(*args)

    monkeypatch.setattr(export_module, "question_ref", failing_ref)
    with pytest.raises(ExportError, match="3rd"):
        export_tasks(ExportRequest(kind="items", out=tmp_path, suite="cube-bench-smoke", images="none",
                                   train_fraction=0.5, force=True))
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before


@pytest.mark.parametrize("suite", ["cube-bench", "stare"])
def test_every_test_of_the_suite_is_exported_or_named_as_left_out(suite: str, tmp_path: Path) -> None:
    summary = export_tasks(ExportRequest(kind="items", out=tmp_path, suite=suite, items=2))
    exported_tests = {row["test"] for row in exported(tmp_path)}
    named = {note.split(" left out")[0] for note in summary.notes if " left out" in note}
    tests = set(load_suite(suite).to_dict()["tests"])
    assert exported_tests | named == tests and not exported_tests & named
    if suite == "cube-bench":
        assert named == {"closed-loop", "recovery", "reflection"}


def test_items_are_made_one_at_a_time_so_memory_does_not_grow_with_the_count() -> None:
    from cubebench.runner.export_tasks import item_suite
    from cubebench.runner.protocols.questions.plan import iter_fixed_items, plan_items

    suite = item_suite(ExportRequest(kind="items", out=Path("unused"), suite="cube-bench", tests=("move-effect",),
                                     depths=(3,), items=10**9))
    first = [spec for _, spec in zip(range(6), iter_fixed_items(suite, "move-effect"))]  # a billion: lazy or hangs
    assert {s.index for s in first} == {0, 1, 2}  # two variants of each item
    small = item_suite(ExportRequest(kind="items", out=Path("unused"), suite="cube-bench", tests=("move-effect",),
                                     depths=(3,), items=3))
    assert {s.key: s.item for s in first} == {s.key: s.item for s in plan_items(small)}


# --- answer rules -----------------------------------------------------------------------------
RULES_EXPORTS = {"stare-smoke": {"items": 2}, "inf-bench-smoke": {"depths": (1, 2), "items": 2}}
"""Small exports of the two suites whose paper rules differs from the strict forms."""


def rules_export(out: Path, suite: str, rules: str | None, **extra: Any) -> tuple[Any, list[dict[str, Any]]]:
    """``(summary, rows)`` of a small export of ``suite`` under ``rules`` (``None``: the default), text only
    unless ``extra`` says otherwise."""
    chosen = {"images": "none", **RULES_EXPORTS[suite], **extra}
    summary = export_tasks(ExportRequest(kind="items", out=out, suite=suite, rules=rules, train_fraction=0.5,
                                         **chosen))
    return summary, exported(out)


@pytest.mark.parametrize("suite", sorted(RULES_EXPORTS))
@pytest.mark.parametrize("rules", ["paper", "strict"])
def test_item_rows_ask_as_a_run_under_the_same_rules_does(suite: str, rules: str, tmp_path: Path) -> None:
    from cubebench.runner.export_tasks import item_suite
    from cubebench.runner.protocols.questions.plan import iter_fixed_items
    from cubebench.runner.protocols import protocol_named
    from cubebench.runner.specs import AgentSpec

    summary, rows = rules_export(tmp_path, suite, rules)
    assert rows and summary.rules == rules and {r["rules"] for r in rows} == {rules}
    assert json.loads((tmp_path / "manifest.json").read_text())["rules"] == rules
    assert all(json.loads(r["verifier"])["rules"] == rules for r in rows)
    # each row is the first question the runner asks the item under that rules, and its answer the oracle's reply
    request = ExportRequest(kind="items", out=tmp_path, suite=suite, rules=rules, **RULES_EXPORTS[suite])
    cut, factory = item_suite(request), protocol_named("questions").factory(AgentSpec("oracle"))
    asked = {}
    for test in cut.fixed:
        for spec in iter_fixed_items(cut, test):
            if spec.variant in {r["variant"] for r in rows}:
                record = play_item(spec, factory, PlaySettings(store_images=False, rules=rules))
                asked[f"{spec.metric}/{spec.key}"] = record
    assert {r["id"] for r in rows} <= set(asked)
    for row in rows:
        step = asked[row["id"]].steps[0]
        assert (row["prompt"], row["answer"]) == (step.observation_text, step.reply), row["id"]
        assert asked[row["id"]].solved
    stare = suite.startswith("stare")
    if rules == "paper" and stare:
        assert all(r["prompt"].endswith(STEP_BY_STEP) and r["answer"].startswith("\\boxed{") for r in rows)
    elif rules == "paper":
        assert all("and why you choose it" in r["system"] and r["answer"].startswith("<ANSWER> ") for r in rows)
    else:
        assert not any(STEP_BY_STEP in r["prompt"] or "\\boxed" in r["answer"] for r in rows)
        assert not any("why you choose it" in r["system"] for r in rows)


def test_the_default_rules_is_the_suites_first_as_in_run(tmp_path: Path) -> None:
    summary, rows = rules_export(tmp_path, "stare-smoke", None)
    assert summary.rules == load_suite("stare-smoke").rule_sets[0] == "paper"
    assert {r["rules"] for r in rows} == {"paper"}


@pytest.mark.parametrize("suite", sorted(RULES_EXPORTS))
@pytest.mark.parametrize("rules", ["paper", "strict"])
def test_every_exported_answer_verifies_under_its_own_rules(suite: str, rules: str, tmp_path: Path) -> None:
    whole = {"items": None, "depths": (1, 2, 3) if suite.startswith("inf") else None}  # the whole smoke suite
    _, rows = rules_export(tmp_path, suite, rules, images="files", **whole)
    assert len(rows) >= 30 and any(r["images"] for r in rows)
    other = "strict" if rules == "paper" else "paper"
    for row in rows:
        assert verify(row["verifier"], row["answer"]).ok, row["id"]
        ref = json.loads(row["verifier"])
        if suite.startswith("stare"):  # a boxed answer is not a strict one-line form, nor "Answer: Yes" a box
            verdict = verify({**ref, "rules": other}, row["answer"])
            assert not verdict.ok and verdict.detail.startswith("not in the answer format"), row["id"]


STARE_REASONING = ("Let me fold the net. Squares 1 and 4 are opposite, so are 2 and 5, and 3 and 6: no two "
                   "squares meet on the same face.\n\nSo the answer is **\\boxed{{ {gold} }}**.")
INF_REASONING = ("Turning D twice swaps the bottom rows of F and B, and of L and R; only option {gold} shows that.\n"
                 "<ANSWER> {gold} </ANSWER>")


def gold_and_wrong(answer: str) -> tuple[str, str]:
    """The gold answer in a paper row's final-answer form (``\\boxed{Yes}``, ``<ANSWER> B </ANSWER>``), and another
    answer of the same kind."""
    gold = answer.removeprefix("\\boxed{").removeprefix("<ANSWER>").removesuffix("}").removesuffix("</ANSWER>").strip()
    assert gold in ("Yes", "No") or gold in "ABCDEFGH" and len(gold) == 1, answer
    return gold, next(a for a in (("No", "Yes") if gold in ("Yes", "No") else tuple("ABCD")) if a != gold)


@pytest.mark.parametrize("suite, template", [("stare-smoke", STARE_REASONING), ("inf-bench-smoke", INF_REASONING)])
def test_a_reasoning_reply_passes_under_paper_and_is_a_parse_failure_under_strict(suite: str, template: str,
                                                                                  tmp_path: Path) -> None:
    _, rows = rules_export(tmp_path, suite, "paper")
    for row in rows:
        ref = json.loads(row["verifier"])
        gold, wrong = gold_and_wrong(row["answer"])
        reasoned = template.format(gold=gold)
        assert verify(ref, reasoned).ok, (row["id"], verify(ref, reasoned))
        assert verify(ref, template.format(gold=wrong)).detail.startswith("wrong answer"), row["id"]
        strict = verify({**ref, "rules": "strict"}, reasoned)
        assert not strict.ok and strict.detail.startswith("not in the answer format"), row["id"]
    # a hedge: two different final answers is no answer under paper
    ref = json.loads(rows[0]["verifier"])
    gold, wrong = gold_and_wrong(rows[0]["answer"])
    hedge = template.format(gold=gold) + "\n" + template.format(gold=wrong)
    assert verify(ref, hedge).detail.startswith("not in the answer format")


def test_a_reference_without_a_rules_is_read_as_strict_as_exports_before_rules(tmp_path: Path) -> None:
    _, strict_rows = rules_export(tmp_path / "strict", "stare-smoke", "strict")
    _, paper_rows = rules_export(tmp_path / "paper", "stare-smoke", "paper")
    paper = {r["id"]: r for r in paper_rows}
    assert set(paper) == {r["id"] for r in strict_rows}
    for old in strict_rows:
        ref = json.loads(old["verifier"])
        named = {**{k: v for k, v in ref.items() if k != "rules"}, "protocol": "paper"}
        assert not verify(named, old["answer"]).ok  # exported before the rules were named: still read, here paper
        del ref["rules"]  # what an export written before rules holds
        assert verify(ref, old["answer"]).ok, old["id"]
        verdict = verify(ref, paper[old["id"]]["answer"])  # a boxed answer is not a strict form
        assert not verdict.ok and verdict.detail.startswith("not in the answer format"), old["id"]
