"""Cube Bench's fairness-control variants (issue 24; the paper's B.1.2, B.2.2, B.6.2): how they are chosen, asked,
parsed, stored and reported.  What a model cannot exploit in them is tests/tasks/test_fairness_controls.py."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from helpers import one_line_error
from cubebench.runner.cli import main
from cubebench.runner.protocols.questions.suite import question_suite_from_dict, restrict_questions
from cubebench.runner.suite_fields import SuiteError
from cubebench.runner.suites import load_suite
from cubebench.tasks.cube_bench.closed_loop import coverage_by_step
from cubebench.tasks.cube_bench.reconstruction import held_orientation
from cubebench.tasks.items import Prompt, Reply
from cubebench.tasks.parsing import ConfidenceForm, LetterForm
from cubebench.tasks.items import ParseFailure
from cubebench.tasks.registry import TESTS



# --- choosing variants ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("argv, names", [
    (("--variants", "nope"), ["'nope'", "reconstruction has ['image', 'uniform-prior']",
                              "verification has ['image+text', 'polarity']", "abstain-gated"]),
    (("--tests", "verification", "--variants", "uniform-prior"), ["'uniform-prior'",
                                                                  "verification has ['image+text', 'polarity']"]),
    (("--tests", "verification,move-choice", "--variants", "polarity"), ["move-choice", "it has ['verification']"]),
])
def test_an_unknown_variant_or_one_a_test_lacks_is_one_line_naming_the_choices(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, argv: tuple[str, ...], names: list[str]) -> None:
    line = one_line_error(capsys, "run", "--suite", "cube-bench-smoke", "--agent", "oracle", "--out",
                          str(tmp_path / "r.sqlite"), *argv)
    assert all(n in line for n in names), line
    assert not (tmp_path / "r.sqlite").exists()


def test_variants_are_for_question_suites(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    line = one_line_error(capsys, "run", "--suite", "smoke", "--agent", "random", "--variants", "polarity", "--out",
                          str(tmp_path / "r.sqlite"))
    assert "--variants is for question suites" in line


def test_restricting_by_variants_keeps_the_tests_that_ask_them() -> None:
    suite = load_suite("cube-bench")
    part = restrict_questions(suite, variants=["uniform-prior", "polarity", "abstain-gated"])
    assert {n: g.variants for n, g in part.tests.items()} == {
        "reconstruction": ("uniform-prior",), "verification": ("polarity",), "closed-loop": ("abstain-gated",)}
    assert part.size == 300 + 100 + 18 + 75 and "uniform-prior,polarity,abstain-gated" in part.name
    assert restrict_questions(suite, tests=["closed-loop"], depths=[2], variants=["abstain-controlled"]).size == 25


def test_the_confidence_gate_is_a_suite_option_from_zero_to_one() -> None:
    base = {"schema": "cubebench-questions/1", "name": "g"}
    suite = question_suite_from_dict({**base, "tests": {"closed-loop": {
        "depths": [2], "items": 2, "variants": ["abstain-gated"], "options": {"confidence_gate": 0.8}}}})
    assert suite.fixed["closed-loop"].options == {"confidence_gate": 0.8}
    for bad in (1.5, -0.1, "0.5"):
        with pytest.raises(SuiteError, match="confidence_gate"):
            question_suite_from_dict({**base, "tests": {"closed-loop": {
                "depths": [2], "items": 2, "options": {"confidence_gate": bad}}}})


# --- asking and parsing --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("reply, answer", [
    ("<ANSWER> B </ANSWER> <CONFIDENCE> 0.8 </CONFIDENCE>", ("B", 0.8)),
    ("<answer>c</answer><confidence>1</confidence>", ("C", 1.0)),
    ("  <ANSWER> E </ANSWER> <CONFIDENCE> .25 </CONFIDENCE>\n", ("IDK", 0.25)),
    ("<ANSWER> IDK </ANSWER> <CONFIDENCE> 0 </CONFIDENCE>", ("IDK", 0.0)),
    ("<ANSWER> B </ANSWER>", None),
    ("<ANSWER> B </ANSWER> <CONFIDENCE> 1.5 </CONFIDENCE>", None),
    ("<ANSWER> B </ANSWER> <CONFIDENCE> 80% </CONFIDENCE>", None),
    ("<ANSWER> F </ANSWER> <CONFIDENCE> 0.5 </CONFIDENCE>", None),
    ("Reasoning first.\n<ANSWER> B </ANSWER> <CONFIDENCE> 0.5 </CONFIDENCE>", None),
    ("<ANSWER> Ｂ </ANSWER> <CONFIDENCE> 0.5 </CONFIDENCE>", None),
])
def test_the_confidence_form_reads_only_its_one_line(reply: str, answer: tuple[str, float] | None) -> None:
    form = ConfidenceForm(LetterForm("ABCD", ("tag",), idk=True))
    if answer is None:
        with pytest.raises(ParseFailure):
            form.parse(reply)
    else:
        assert form.parse(reply) == answer
    reasoned = ConfidenceForm(LetterForm("ABCD", ("tag",), idk=True), reasoned=True)
    assert reasoned.parse("Reasoning first.\n<ANSWER> B </ANSWER> <CONFIDENCE> 0.5 </CONFIDENCE>\n") == ("B", 0.5)
    rng = random.Random(1)
    for _ in range(20):
        sample = form.sample(rng)
        assert form.parse(form.format(sample)) == sample


def prompts_of(test: str, variant: str, index: int = 0, depth: int = 3) -> list[Prompt]:
    seen: list[Prompt] = []
    TESTS[test].play(TESTS[test].items(depth, index + 1)[index], variant,
                     lambda p: seen.append(p) or Reply(p.form.format(p.gold) if p.scored else "ok"))
    return seen


def test_the_gated_step_asks_for_the_confidence_and_names_the_threshold() -> None:
    text = prompts_of("closed-loop", "abstain-gated")[0].text
    assert "<ANSWER> X </ANSWER> <CONFIDENCE> P </CONFIDENCE>" in text and "below 0.5 counts as I don't know" in text
    assert "if several do, any of them" in prompts_of("closed-loop", "abstain-controlled")[0].text
    assert "if several do" not in prompts_of("closed-loop", "abstain-teacher")[0].text


def test_the_polarity_variant_reverses_the_gold_with_the_question() -> None:
    for index in range(8):
        item = TESTS["verification"].items(3, index + 1)[index]
        (prompt,) = prompts_of("verification", "polarity", index)
        reversed_ = item.data["asked"]["reversed"]
        assert prompt.gold == ({"Yes": "No", "No": "Yes"}[item.data["truth"]] if reversed_ else item.data["truth"])
        (plain,) = prompts_of("verification", "image+text", index)
        assert plain.gold == item.data["truth"] and (plain.image == prompt.image).all()


def test_the_uniform_prior_turns_the_picture_not_the_item() -> None:
    item = TESTS["reconstruction"].items(2, 2)[1]
    (turned,) = prompts_of("reconstruction", "uniform-prior", 1, depth=2)
    (plain,) = prompts_of("reconstruction", "image", 1, depth=2)
    assert item.data["orientation"] == held_orientation(0, 2, 1) != ""
    assert turned.gold != plain.gold and (turned.image != plain.image).any()
    assert sorted(turned.gold) != sorted("G" * 9)


def test_coverage_by_step_counts_the_decisions_made_at_each_step() -> None:
    assert coverage_by_step([["right", "idk"], ["idk"], ["right", "right", "wrong"]]) == "0.67/0.50/1.00"
    assert coverage_by_step([]) == "-"


# --- through the runner: store, report ---------------------------------------------------------------------------
def test_the_report_prints_the_prior_the_gate_and_coverage_by_step(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "r.sqlite"
    assert main(["run", "--suite", "cube-bench-smoke", "--agent", "random", "--out", str(out), "--no-progress",
                 "--quiet", "--no-images", "--variants", "uniform-prior,polarity,abstain-controlled,abstain-gated"]) == 0
    capsys.readouterr()
    assert main(["report", str(out)]) == 0
    report = capsys.readouterr().out
    assert "prior W/Y/R/O/G/B" in report and "prior dev" in report and "bal acc reversed" in report
    assert "coverage by step" in report and "abstain-gated" in report and " 0.5 " in report
    assert "items: 10 of 10 finished" in report  # 2 reconstruction, 4 verification, 2 + 2 closed-loop
