"""The strict reply forms: each accepts exactly its format, round-trips its answers and samples uniformly."""

from __future__ import annotations

import itertools
import pickle
import random
from collections import Counter
from typing import Any

import pytest

from cubebench.tasks.items import ParseFailure
from cubebench.tasks.parsing import (
    IDK, MAX_REPLY, FreeTextForm, GridForm, LabelsForm, LetterForm, YesNoForm,
)

LETTER = LetterForm()  # bare + tag, as in move choice
LOOP = LetterForm("ABCD", ("tag", "colon", "bare"))  # closed loop
ABSTAIN = LetterForm("ABCD", ("tag", "colon", "bare"), idk=True)
ABSTAIN_TAGGED = LetterForm("ABCD", ("tag", "colon"), idk=True)
GRID = GridForm()
LABELS = LabelsForm()
FORMS = [LETTER, LOOP, ABSTAIN, ABSTAIN_TAGGED, YesNoForm(), GRID, LABELS]

HOSTILE = [
    "", "   \n\t ", "\ud800", "B\ud800", "\x00", "B\x00", "\x00B", "B" + " " * 10**6, "B" * 10**6,
    "```\nB\n```", "Ｂ", "Β",  # fullwidth B, Greek capital beta
]
"""Replies no strict form accepts: empty, lone surrogates, NULs, 1 MB, a code fence, look-alike letters."""


def _accepts(form: Any, reply: str, answer: Any) -> None:
    assert form.parse(reply) == answer


def _rejects(form: Any, reply: Any) -> None:
    with pytest.raises(ParseFailure) as err:
        form.parse(reply)
    message = str(err.value)
    assert message.startswith("expected ") and len(message) < 600
    message.encode("utf-8")  # quotable anywhere: NULs and lone surrogates are escaped


@pytest.mark.parametrize("reply, answer", [
    ("B", "B"), ("b", "B"), ("  D \n", "D"), ("<ANSWER>A</ANSWER>", "A"), ("<ANSWER> C </ANSWER>", "C"),
    ("<answer>\tc\t</Answer>", "C"), ("\n\n<ANSWER> B </ANSWER>\n", "B"),
])
def test_letter_form_accepts_bare_and_tag(reply: str, answer: str) -> None:
    _accepts(LETTER, reply, answer)


@pytest.mark.parametrize("reply", HOSTILE + [
    "E", "F", "AB", "A B", "<ANSWER>AB</ANSWER>", "<ANSWER></ANSWER>", "<ANSWER> F </ANSWER>", "B.", "(B)", "'B'",
    "The answer is B", "Reasoning: B is best.\nB", "B\nC", "B\n\nB", "<ANSWER>B</ANSWER> because it is",
    "<ANSWER>B</ANSWER><ANSWER>C</ANSWER>", "<ANSWER>\nB\n</ANSWER>", "<ANSWER> B </ANSWER", "<ANSWER B>",
    "ANSWER: B",  # colon style not enabled here
    "IDK", "I don't know",  # no abstention here
])
def test_letter_form_rejects_everything_else(reply: str) -> None:
    _rejects(LETTER, reply)


@pytest.mark.parametrize("reply, answer", [
    ("ANSWER: B", "B"), ("answer:b", "B"), ("ANSWER : C", "C"), ("Answer:\tD", "D"), ("<ANSWER>A</ANSWER>", "A"),
    ("a", "A"),
])
def test_closed_loop_letter_form_also_reads_the_colon_style(reply: str, answer: str) -> None:
    _accepts(LOOP, reply, answer)


@pytest.mark.parametrize("reply", ["ANSWER: B.", "ANSWER: B C", "ANSWER B", "ANSWER:: B", "FINAL ANSWER: B",
                                   "ANSWER: E", "ANSWER: IDK"])
def test_closed_loop_letter_form_rejects_near_misses(reply: str) -> None:
    _rejects(LOOP, reply)


@pytest.mark.parametrize("reply", [
    "<ANSWER> IDK </ANSWER>", "<answer>idk</answer>", "ANSWER: IDK", "ANSWER: E", "answer: e", "<ANSWER> E </ANSWER>",
    "IDK", "E", "idk", "I don't know", "i don't know.", "I DON'T KNOW", "I don\u2019t know", "  I don't know \n",
])
def test_abstention_form_reads_idk_in_every_paper_spelling(reply: str) -> None:
    _accepts(ABSTAIN, reply, IDK)


@pytest.mark.parametrize("reply", [
    "I don't know B", "I do not know", "I don't know!", "I don't know..", "I dont know", "I  don't know",
    "<ANSWER> I don't know </ANSWER>", "F", "ANSWER: F", "ıdk", "ı don't know", "I don\u2018t know", "IDK.", "<ANSWER> IDK B </ANSWER>", "IDK\nB",
])
def test_abstention_form_rejects_other_abstentions(reply: str) -> None:
    _rejects(ABSTAIN, reply)


def test_bare_idk_needs_the_bare_style_but_the_phrase_does_not() -> None:
    assert ABSTAIN_TAGGED.parse("ANSWER: e") == IDK and ABSTAIN_TAGGED.parse("I don't know.") == IDK
    for reply in ("IDK", "E", "B"):
        _rejects(ABSTAIN_TAGGED, reply)
    assert ABSTAIN.parse("B") == "B"


@pytest.mark.parametrize("reply, answer", [
    ("Answer: Yes", "Yes"), ("answer: no", "No"), ("ANSWER:YES", "Yes"), ("Answer:   No.", "No"),
    ("  Answer: Yes \n", "Yes"), ("Answer:\tno", "No"),
])
def test_yes_no_form_accepts_the_answer_line(reply: str, answer: str) -> None:
    _accepts(YesNoForm(), reply, answer)


@pytest.mark.parametrize("reply", HOSTILE + [
    "Yes", "No", "Answer: Yes!", "Answer: Yes..", "Answer: Yes\nbecause the faces match", "Answer: Maybe",
    "Answer: Y", "The Answer: Yes", "Answer - Yes", "Answer: Yes No", "Answer:\nYes", "Answer : Yes",
    "Answer: Yes\nAnswer: No", "Let me check each cell.\nAnswer: No", "**Answer: Yes**",
])
def test_yes_no_form_rejects_everything_else(reply: str) -> None:
    _rejects(YesNoForm(), reply)


@pytest.mark.parametrize("reply", [
    "G W R\nB B O\nY Y W", "g w r\nb b o\ny y w", "G  W  R\r\nB B O\r\nY Y W", "\n\nG W R\nB B O\nY Y W\n\n",
    "G W R \n B B O\nY\tY W",
])
def test_grid_form_accepts_three_rows_of_three(reply: str) -> None:
    _accepts(GRID, reply, ("G", "W", "R", "B", "B", "O", "Y", "Y", "W"))


@pytest.mark.parametrize("reply", HOSTILE + [
    "G W R\n\nB B O\nY Y W", "GWR\nBBO\nYYW", "G,W,R\nB,B,O\nY,Y,W", "G, W, R\nB, B, O\nY, Y, W", "G W R\nB B O",
    "G W R\nB B O\nY Y W\nG W R", "G W X\nB B O\nY Y W", "G W R B\nB B O\nY Y W", "G W\nB B O\nY Y W",
    "```\nG W R\nB B O\nY Y W\n```", "Front:\nG W R\nB B O\nY Y W", "G W R\nB B O\nY Y W\nDone.",
    "G W R B B O Y Y W", "[G W R]\n[B B O]\n[Y Y W]", "GG W R\nB B O\nY Y W",
])
def test_grid_form_rejects_everything_else(reply: str) -> None:
    _rejects(GRID, reply)


ALL_DEC = ("DECREASE",) * 4


@pytest.mark.parametrize("reply, answer", [
    ("<A> DECREASE </A>\n<B> NO_CHANGE </B>\n<C> INCREASE </C>\n<D> INCREASE </D>",
     ("DECREASE", "NO_CHANGE", "INCREASE", "INCREASE")),
    ("<a>decrease</a>\n<b>no change</b>\n<c>NOCHANGE</c>\n<D>\tIncrease\t</d>",
     ("DECREASE", "NO_CHANGE", "NO_CHANGE", "INCREASE")),
    ("\n<A> DECREASE </A>\r\n<B> DECREASE </B>\r\n<C> DECREASE </C>\r\n<D> DECREASE </D>\n\n", ALL_DEC),
])
def test_labels_form_accepts_one_tagged_line_per_letter(reply: str, answer: tuple[str, ...]) -> None:
    _accepts(LABELS, reply, answer)


GOOD_LABELS = "<A> DECREASE </A>\n<B> DECREASE </B>\n<C> DECREASE </C>\n<D> DECREASE </D>"


@pytest.mark.parametrize("reply", HOSTILE + [
    GOOD_LABELS.replace("<A>", "<B>").replace("</A>", "</B>", 1),  # two B lines
    GOOD_LABELS.replace("</A>", "</B>"),  # mismatched tags
    "\n".join(reversed(GOOD_LABELS.split("\n"))),  # wrong order
    "\n".join(GOOD_LABELS.split("\n")[:3]),  # a line short
    GOOD_LABELS + "\n<E> DECREASE </E>",  # a line too many
    GOOD_LABELS.replace("\n", "\n\n", 1),  # blank line between
    GOOD_LABELS + "\nThat is my answer.", "Here are the labels:\n" + GOOD_LABELS,
    GOOD_LABELS.replace("\n", " "),  # one line
    GOOD_LABELS.replace("DECREASE", "SAME", 1), GOOD_LABELS.replace("DECREASE", "NO__CHANGE", 1),
    GOOD_LABELS.replace("DECREASE", "NO  CHANGE", 1), GOOD_LABELS.replace("DECREASE", "DECREASE.", 1),
    GOOD_LABELS.replace("DECREASE", "", 1), GOOD_LABELS.replace("<A> DECREASE </A>", "A: DECREASE"),
    "```\n" + GOOD_LABELS + "\n```",
])
def test_labels_form_fails_the_whole_reply_on_any_wrong_line(reply: str) -> None:
    _rejects(LABELS, reply)


@pytest.mark.parametrize("form", FORMS, ids=repr)
def test_non_text_and_over_long_replies_fail_cheaply(form: Any) -> None:
    _rejects(form, None)
    _rejects(form, 42)
    _rejects(form, form.format(form.sample(random.Random(0))) + " " * MAX_REPLY)


def _answers(form: Any) -> list[Any]:
    if isinstance(form, LetterForm):
        return list(form.answers)
    if isinstance(form, YesNoForm):
        return ["Yes", "No"]
    if isinstance(form, LabelsForm):
        return list(itertools.product(form.labels, repeat=len(form.letters)))
    rng = random.Random(7)
    return [form.sample(rng) for _ in range(300)]


@pytest.mark.parametrize("form", FORMS + [LetterForm(styles=("colon",)), LetterForm("ABC", ("bare",), idk=True),
                                          GridForm("RG")], ids=repr)
def test_format_parse_round_trip_for_every_answer(form: Any) -> None:
    for answer in _answers(form):
        assert form.parse(form.format(answer)) == answer


def test_format_uses_the_first_style_and_rejects_answers_outside_the_form() -> None:
    assert LETTER.format("B") == "B" and LOOP.format("B") == "<ANSWER> B </ANSWER>"
    assert LetterForm(styles=("colon",), idk=True).format(IDK) == "ANSWER: IDK"
    assert GRID.format(tuple("GWRBBOYYW")) == "G W R\nB B O\nY Y W"
    assert YesNoForm().format("No") == "Answer: No"
    wrong = [(LETTER, "E"), (LETTER, IDK), (LETTER, "AB"), (YesNoForm(), "yes"), (GRID, tuple("GWRBBOYY")),
             (GRID, tuple("GWRBBOYYX")), (GRID, ("GW", *"RBBOYYWW")), (LABELS, ALL_DEC[:3]),
             (LABELS, ("DECREASE",) * 3 + ("SAME",))]
    for form, answer in wrong:
        with pytest.raises(ValueError):
            form.format(answer)


@pytest.mark.parametrize("form, support", [
    (LETTER, set("ABCD")), (ABSTAIN, set("ABCD") | {IDK}), (YesNoForm(), {"Yes", "No"}),
])
def test_sample_is_uniform_over_the_allowed_answers(form: Any, support: set[Any]) -> None:
    rng = random.Random(20240501)  # fixed: the bounds below cannot flake
    draws = [form.sample(rng) for _ in range(4000)]
    counts = Counter(draws)
    expected = 4000 / len(support)
    assert set(counts) == support
    assert all(abs(c - expected) < 0.15 * expected for c in counts.values()), counts
    assert all(form.parse(form.format(d)) == d for d in draws)


@pytest.mark.parametrize("form, values", [(GRID, set(GRID.alphabet)), (LABELS, set(LABELS.labels))])
def test_sample_draws_independent_uniform_cells(form: Any, values: set[str]) -> None:
    rng = random.Random(99)
    draws = [form.sample(rng) for _ in range(4000)]
    cells = Counter(c for d in draws for c in d)
    expected = sum(cells.values()) / len(values)
    assert set(cells) == values and all(abs(c - expected) < 0.1 * expected for c in cells.values()), cells
    assert len(set(draws)) > 3000 if form is GRID else len(set(draws)) == 81
    assert all(form.parse(form.format(d)) == d for d in draws)


@pytest.mark.parametrize("form", FORMS + [FreeTextForm()], ids=repr)
def test_forms_are_frozen_hashable_and_picklable(form: Any) -> None:
    assert pickle.loads(pickle.dumps(form)) == form and hash(form) == hash(pickle.loads(pickle.dumps(form)))
    with pytest.raises(AttributeError):
        form.x = 1


@pytest.mark.parametrize("make", [
    lambda: LetterForm("ABB"), lambda: LetterForm("abcd"), lambda: LetterForm(""), lambda: LetterForm(styles=()),
    lambda: LetterForm(styles=("json",)), lambda: LetterForm("XYZ", idk=True), lambda: LetterForm("BA", idk=True),
    lambda: GridForm("W Y"), lambda: LabelsForm(labels=("NO_CHANGE", "NOCHANGE")), lambda: LabelsForm(labels=()),
    lambda: LabelsForm("A1"),
])
def test_invalid_form_settings_are_refused(make: Any) -> None:
    with pytest.raises(ValueError):
        make()


def test_free_text_form_never_fails() -> None:
    form = FreeTextForm(max_chars=10)
    assert form.parse("  some reflection \n") == "some reflection"[:10]
    assert form.parse("") == "" and form.parse("\x00") == "\x00"
    assert form.parse("ab\ud800cd") == "ab?cd"  # a lone surrogate cannot be sent on in a later prompt
    assert len(FreeTextForm().parse("x" * 10**6)) == 4000
    assert form.format("anything") == "anything" and form.sample(random.Random(0)) == ""
