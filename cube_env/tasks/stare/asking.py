"""How a STARE question closes under each set of answer rules (:mod:`cubebench.tasks.rules`).

Under ``paper`` every STARE question is reasoned step by step and its answer boxed, as the paper asks every model
(App. G.1); under ``strict`` it closes with the test's one-line instruction.
"""

from __future__ import annotations

from ..items import ReplyForm
from ..parsing import BoxedForm, LetterForm, YesNoForm
from ..rules import STRICT

__all__ = ["STEP_BY_STEP", "stare_ask"]

STEP_BY_STEP = 'Think step-by-step, and then put your final answer in "\\boxed{}".'
"""STARE's instruction to every model (App. G.1), word for word."""


def stare_ask(rules: str, question: str, strict: str, form: LetterForm | YesNoForm) -> tuple[str, ReplyForm]:
    """A STARE question's closing text and reply form: ``strict``'s one-line instruction, or (``paper``) what to
    answer and the paper's step-by-step instruction, the answer boxed (after ``question``, on its line or the next
    when ``question`` ends in a newline)."""
    sep = "" if question.endswith("\n") else " "
    if rules == STRICT:
        return f"{question}{sep}{strict}", form
    what = ("Answer Yes or No." if isinstance(form, YesNoForm)
            else f"Answer with the letter of your choice ({', '.join(form.letters)}).")
    return f"{question}{sep}{what} {STEP_BY_STEP}", BoxedForm(form)

