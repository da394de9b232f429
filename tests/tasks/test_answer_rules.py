"""Answer rules: the reply corpus (every test, every rules), the prompts each rules writes, the run.

The corpus holds replies shaped as real models write them (reasoning first, markdown bold, ``\\boxed{ Yes }``,
trailing text, two answers, an answer then a retraction, full-width punctuation, invisible characters) with
the verdict each must get: the answer it scores as (the gold, or a named wrong answer) or a parse failure.
Each is asked through :func:`~cubebench.tasks.items.ask_and_judge` against the first question of a real item
of every registered test, asked under every rules the test has.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any, Callable

import pytest

from cubebench.runner.protocols.questions.suite import configured_test
from cubebench.runner.suites import load_suite
from cubebench.tasks.items import ParseFailure, Prompt, Reply, ask_and_judge
from cubebench.tasks.parsing import (
    IDK, MAX_REASONED_REPLY, BoxedForm, GridForm, LabelsForm, LetterForm, TaggedForm, YesNoForm, read_choice,
)
from cubebench.tasks.rules import RELEASE, RULES, STRICT
from cubebench.tasks.stare.asking import STEP_BY_STEP
from cubebench.tasks.registry import TESTS

FAIL = "parse failure"
GOLD = "gold"
OTHER = "other"
"""Verdicts: a parse failure, the gold answer, or the named other (wrong) answer."""

SMOKE = ("cube-bench-smoke", "inf-bench-smoke", "stare-smoke")


def _depth(test: str) -> int:
    """The first depth (or level 1 of a ladder) the shipped smoke suites ask ``test`` at."""
    for name in SMOKE:
        grid = load_suite(name).tests.get(test)
        if grid is not None:
            return grid.depths[0] if hasattr(grid, "depths") else 1
    raise AssertionError(f"no smoke suite asks {test}")


def first_prompt(test: str, rules: str) -> Prompt:
    """The first question a real item of ``test`` asks under ``rules`` (its first variant)."""
    configured = configured_test(test, None, rules)
    item = configured.items(_depth(test), 1, seed=0, metric="half")[0]
    asked: list[Prompt] = []

    def ask(prompt: Prompt) -> Reply:
        asked.append(prompt)
        return Reply(text="")

    configured.play(item, configured.variants[0], ask)
    return asked[0]


CASES = [(test, rules) for test in TESTS for rules in TESTS[test].rule_sets]


@dataclass(frozen=True)
class Case:
    """A reply made from the gold answer ``g`` and another answer ``o`` (as words: ``B``, ``Yes``) and its verdict."""

    name: str
    reply: Callable[[str, str], str]
    verdict: str


def fw(text: str) -> str:
    """``text`` in full-width forms (letters, colons, brackets), as CJK keyboards write them."""
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


REASONING = ("Let me work through this step by step.\n\n1. First, I look at the state.\n2. Then I check each option "
             "against it: option A does not work, because the faces would overlap.\n3. ")

BOXED = [
    Case("reasoning then box", lambda g, o: f"{REASONING}So the answer follows.\n\nTherefore, the answer is \\boxed{{{g}}}.",
         GOLD),
    Case("box with spaces", lambda g, o: f"{REASONING}\\boxed{{ {g} }}", GOLD),
    Case("lower case", lambda g, o: f"{REASONING}\\boxed{{{g.lower()}}}", GOLD),
    Case("markdown bold and LaTeX text", lambda g, o: f"{REASONING}**Final answer:** $\\boxed{{\\textbf{{{g}}}}}$", GOLD),
    Case("trailing text", lambda g, o: f"{REASONING}\\boxed{{{g}}}\n\nLet me know if you want me to check another net.",
         GOLD),
    Case("instruction echoed, then the box", lambda g, o: f"I will put my final answer in \\boxed{{}}.\n{REASONING}"
                                                          f"\\boxed{{{g}}}", GOLD),
    Case("an answer then a retraction in words", lambda g, o: f"\\boxed{{{g}}}\n\nHmm, although I am not fully sure.",
         GOLD),
    Case("the other answer, reasoned", lambda g, o: f"{REASONING}\\boxed{{{o}}}", OTHER),
    Case("two different answers", lambda g, o: f"{REASONING}It is either \\boxed{{{g}}} or \\boxed{{{o}}}.", FAIL),
    Case("an answer then a boxed retraction", lambda g, o: f"\\boxed{{{o}}}\n\nWait, I made a mistake. \\boxed{{{g}}}",
         FAIL),
    Case("both in one box", lambda g, o: f"{REASONING}\\boxed{{{g}/{o}}}", FAIL),
    Case("the same answer boxed twice", lambda g, o: f"First guess: \\boxed{{{g}}}. {REASONING}\\boxed{{{g}}}", GOLD),
    Case("full-width letters and colon", lambda g, o: f"{REASONING}最终答案：\\boxed{{{fw(g)}}}", GOLD),
    Case("Spanish punctuation", lambda g, o: f"¿Se puede? Veamos paso a paso: ¡sí!\n\\boxed{{{g}}}", GOLD),
    Case("invisible characters", lambda g, o: f"\ufeff{REASONING}\\boxed{{{g[0]}\u200b{g[1:]}}}\u00ad", GOLD),
    Case("no box", lambda g, o: f"{REASONING}The answer is {g}.", FAIL),
    Case("an empty box", lambda g, o: f"{REASONING}\\boxed{{}}", FAIL),
    Case("a lone surrogate and a NUL", lambda g, o: f"\ud800{REASONING}\x00\\boxed{{{g}}}", GOLD),
]
TAGGED = [
    Case("reasoning then tag", lambda g, o: f"<REASONING>\n{REASONING}\n</REASONING>\n<ANSWER> {g} </ANSWER>", GOLD),
    Case("the bare letter only", lambda g, o: g, GOLD),
    Case("the strict tag only", lambda g, o: f"<ANSWER> {g} </ANSWER>", GOLD),
    Case("markdown bold last line", lambda g, o: f"{REASONING}\n\n**Answer: {g}**", GOLD),
    Case("bold inside the tag", lambda g, o: f"{REASONING}\n<ANSWER>**{g}**</ANSWER>", GOLD),
    Case("trailing text", lambda g, o: f"{REASONING}\n<ANSWER> {g} </ANSWER>\nI hope this helps!", GOLD),
    Case("the other answer, reasoned", lambda g, o: f"{REASONING}\n<ANSWER> {o} </ANSWER>", OTHER),
    Case("two different answers", lambda g, o: f"<ANSWER> {g} </ANSWER> or <ANSWER> {o} </ANSWER>", FAIL),
    Case("an answer then a tagged retraction",
         lambda g, o: f"<ANSWER> {o} </ANSWER>\nWait, that is wrong.\n<ANSWER> {g} </ANSWER>", FAIL),
    Case("a tag, then another letter on the last line", lambda g, o: f"<ANSWER> {g} </ANSWER>\n\nFinal answer: {o}",
         FAIL),
    Case("full-width brackets", lambda g, o: f"{REASONING}\n{fw('<ANSWER>')} {g} {fw('</ANSWER>')}", GOLD),
    Case("full-width colon and letter", lambda g, o: f"{REASONING}\nAnswer：{fw(g)}", GOLD),
    Case("a Chinese answer word", lambda g, o: f"{REASONING}\n答案：{fw(g)}", FAIL),
    Case("invisible characters", lambda g, o: f"\ufeff{REASONING}\n<ANSWER>\u200b{g}\u200b</ANSWER>", GOLD),
    Case("the placeholder echoed, then the tag",
         lambda g, o: f"I must end with <ANSWER> X </ANSWER>.\n{REASONING}\n<ANSWER> {g} </ANSWER>", GOLD),
    Case("the letter first, then why", lambda g, o: f"{g}\n\nBecause the first operation moves the right face.", FAIL),
    Case("prose only", lambda g, o: f"{REASONING}I think the second option is right.", FAIL),
]


def strict_replies(form: Any, gold: Any, other: Any) -> list[tuple[str, str, str]]:
    """Replies for a strict one-line form: its own format passes; reasoning before it, trailing text, markdown,
    or the paper's and the release's final-answer forms fail."""
    own, wrong = form.format(gold), form.format(other)
    word = gold if isinstance(gold, str) else " ".join(gold)
    return [
        ("the strict form", own, GOLD),
        ("the strict form, other answer", wrong, OTHER),
        ("reasoning, then the strict form", f"{REASONING}\n{own}", FAIL),
        ("the strict form, then trailing text", f"{own}\nI hope this helps!", FAIL),
        ("reasoning ending in the paper's box", f"{REASONING}\\boxed{{{word}}}", FAIL),
        ("reasoning ending in the release's tag", f"<REASONING>\n{REASONING}\n</REASONING>\n<ANSWER> {word} </ANSWER>",
         FAIL),
        ("markdown bold", f"**{own}**", FAIL),
        ("in a code fence", f"```\n{own}\n```", FAIL),
    ]


def other_answer(form: Any, gold: Any) -> Any:
    """A wrong answer the form allows (never IDK: abstaining is not an answer to score)."""
    rng = random.Random(0)
    while True:
        answer = form.sample(rng)
        if answer != gold and answer != IDK:
            return answer


def replies(form: Any, gold: Any, other: Any) -> list[tuple[str, str, str]]:
    """(case, reply, verdict) for every reply of the corpus that fits ``form``."""
    if isinstance(form, (BoxedForm, TaggedForm)):
        return [(c.name, c.reply(str(gold), str(other)), c.verdict) for c in (BOXED if isinstance(form, BoxedForm)
                                                                              else TAGGED)]
    return strict_replies(form, gold, other)


@pytest.mark.parametrize("test,rules", CASES)
def test_the_reply_corpus_gets_its_verdicts(test: str, rules: str) -> None:
    prompt = first_prompt(test, rules)
    form, gold = prompt.form, prompt.gold
    other = other_answer(form, gold)
    wrong = []
    for name, reply, verdict in replies(form, gold, other):
        ex = ask_and_judge(lambda _p, text=reply: Reply(text=text), prompt)
        got = FAIL if ex.parse_error is not None else GOLD if ex.answer == gold else OTHER if ex.answer == other \
            else f"unexpected {ex.answer!r}"
        if got != verdict:
            wrong.append(f"{name}: {reply!r} -> {got} ({ex.parse_error}), expected {verdict}")
        assert ex.correct is (got == GOLD)
    assert not wrong, f"{test} under {rules} ({type(form).__name__}):\n" + "\n".join(wrong)


@pytest.mark.parametrize("test", [t for t in TESTS if t.startswith(("net-", "inf-")) or t in ("closed-loop",
                                                                                              "recovery")])
def test_a_reasoned_reply_ending_in_the_final_answer_form_scores_under_it_and_fails_under_strict(test: str) -> None:
    reasoned = RELEASE if test in ("closed-loop", "recovery") else "paper"
    prompt = first_prompt(test, reasoned)
    reply = prompt.form.format(prompt.gold)
    reply = f"{REASONING}\n{reply}"
    assert ask_and_judge(lambda _p: Reply(text=reply), prompt).correct is True
    strict = first_prompt(test, STRICT)
    assert (strict.gold, strict.text.split("\n")[0]) == (prompt.gold, prompt.text.split("\n")[0])  # the same item
    ex = ask_and_judge(lambda _p: Reply(text=reply), strict)
    assert ex.correct is False and ex.parse_error is not None


def test_each_rules_writes_its_papers_prompt() -> None:
    for test in ("net-fold", "net-choice", "net-perception"):
        paper, strict = first_prompt(test, "paper"), first_prompt(test, STRICT)
        assert paper.text.endswith(STEP_BY_STEP) and isinstance(paper.form, BoxedForm)
        assert "Reply with exactly one line" in strict.text and STEP_BY_STEP not in strict.text
        assert paper.image is not None and (paper.image == strict.image).all()
    for test in ("inf-forward", "inf-inverse"):
        paper, strict = first_prompt(test, "paper"), first_prompt(test, STRICT)
        assert paper.system.startswith("You are a Rubik's Cube master") and "why you choose it" in paper.system
        assert "You only need to output the letter corresponding to your choice." in paper.text
        assert paper.text.rstrip().endswith("X the letter.") and isinstance(paper.form, TaggedForm)
        assert "why" not in strict.system and isinstance(strict.form, LetterForm)
    for test in ("closed-loop", "recovery"):
        release = first_prompt(test, RELEASE)
        assert "<REASONING>" in release.text and isinstance(release.form, TaggedForm)
        assert first_prompt(test, "paper").text == first_prompt(test, STRICT).text
    for test in ("reconstruction", "verification", "move-choice", "reflection", "move-effect"):
        prompts = {p: first_prompt(test, p) for p in RULES}
        assert len({(p.system, p.text, type(p.form)) for p in prompts.values()}) == 1  # one-line in all three


def test_rules_the_tests_lack_are_refused_by_name() -> None:
    with pytest.raises(ValueError, match=r"net-fold has no answer rules 'release'; it has \['paper', 'strict'\]"):
        configured_test("net-fold", None, RELEASE)
    assert configured_test("net-fold", None, None).rules == STRICT  # a test alone asks strictly
    assert TESTS["net-fold"].rules == STRICT  # configuring copies; the registry's test is untouched
    configured_test("net-fold", None, "paper")
    assert TESTS["net-fold"].rules == STRICT


@pytest.mark.parametrize("form", [BoxedForm(YesNoForm()), BoxedForm(LetterForm()), TaggedForm(LetterForm()),
                                  TaggedForm(LetterForm("ABCD", ("tag", "colon", "bare"), idk=True))])
def test_final_answer_forms_round_trip_sample_uniformly_and_refuse_junk(form: Any) -> None:
    rng = random.Random(1)
    for answer in form.answers:
        assert form.parse(form.format(answer)) == answer
    seen = {form.sample(rng) for _ in range(200)}
    assert seen == set(form.answers)
    for junk in ("", " \n ", None, 42, b"\\boxed{Yes}", "x" * (MAX_REASONED_REPLY + 1)):
        with pytest.raises(ParseFailure):
            form.parse(junk)  # type: ignore[arg-type]
    long = "Let me think. " * 4000 + form.format(form.answers[0])
    assert len(long) < MAX_REASONED_REPLY and form.parse(long) == form.answers[0]


ADVERSARIAL = [
    "A" + " " * 60_000 + "x", "\\" * 60_000, "\\text{" * 9_000, "\\boxed{" * 9_000, "<ANSWER>" * 7_000,
    ("<" + " " * 100) * 600, "the" + " " * 60_000 + "x", "\\boxed{" + "{" * 60_000, "Answer:" + "\t" * 60_000 + "B!",
]
"""Long runs that make a careless pattern backtrack quadratically (whitespace between two optional parts, runs
of backslashes, unclosed boxes and wrappers): each is read in linear time, and none names an answer."""


@pytest.mark.parametrize("form", [BoxedForm(YesNoForm()), TaggedForm(LetterForm())])
def test_hostile_replies_are_read_quickly_and_name_nothing(form: Any) -> None:
    for reply in ADVERSARIAL:
        with pytest.raises(ParseFailure):
            form.parse(reply)


def test_abstention_under_the_release_rules() -> None:
    form = TaggedForm(LetterForm("ABCD", ("tag", "colon", "bare"), idk=True))
    for reply in ("I don't know", "I don’t know.", "hmm\n<ANSWER> IDK </ANSWER>", "hmm\nANSWER: E", "<ANSWER> e </ANSWER>"):
        assert form.parse(reply) == IDK, reply
    with pytest.raises(ParseFailure):
        form.parse("<ANSWER> IDK </ANSWER>\n<ANSWER> B </ANSWER>")


@pytest.mark.parametrize("content,answer", [
    ("B", "B"), (" (b) ", "B"), ("Option C", "C"), ("B: R2", "B"), ("\\text{D}", "D"), ("**A**", "A"),
    ("A, B", None), ("A or B", None), ("X", None), ("AB", None), ("Β", None), ("", None),  # Greek capital beta
])
def test_read_choice(content: str, answer: str | None) -> None:
    assert read_choice(content, ("A", "B", "C", "D")) == answer


def test_strict_grid_and_label_forms_are_untouched() -> None:
    assert {type(first_prompt(t, p).form) for t in ("reconstruction",) for p in RULES} == {GridForm}
    assert {type(first_prompt(t, p).form) for t in ("move-effect",) for p in RULES} == {LabelsForm}
