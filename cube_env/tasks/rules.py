"""Answer rules: how a question asks for its answer and how the reply is read.

The same item can be asked under several rules; the item, its options and its gold never change, only
the closing instruction (and Inf-Bench's persona) and the reply form (:mod:`.parsing`):

* ``paper``: each paper's own rules.  STARE (App. G.1): "Think step-by-step, and then put your final
  answer in \\boxed{}", read by :class:`~.parsing.BoxedForm`.  Inf-Bench (Fig. 11): the Rubik's-Cube-master
  persona asks for the letter *and why*, and the reply ends in the tagged choice, read by
  :class:`~.parsing.TaggedForm` (a bare one-letter reply, what the paper's user prompt asks for, is read too).
  Cube Bench (§3.2): its strict one-line forms.
* ``strict``: the strict one-line forms (Cube Bench §3.2) for every test: reasoning in the reply is a
  parse failure.
* ``release``: Cube Bench's public code release: each closed-loop and recovery step reasons inside
  ``<REASONING>...</REASONING>`` and ends in ``<ANSWER> X </ANSWER>`` (read by :class:`~.parsing.TaggedForm`);
  the release's other prompts are one-line, as in the paper.  Only Cube Bench's tests have it.

STARE's own closing text lives with its tests (:mod:`.stare.asking`), Inf-Bench's persona with its tests
(:mod:`.inf_bench.common`).  A test lists the rules it can be asked under (:attr:`~.items.QuestionTest.rule_sets`) and is asked
under its :attr:`~.items.QuestionTest.rules` (``strict`` unless set: the runner sets the suite's).
"""

from __future__ import annotations

__all__ = ["PAPER", "STRICT", "RELEASE", "RULES", "DESCRIPTIONS"]

PAPER, STRICT, RELEASE = "paper", "strict", "release"
RULES = (PAPER, STRICT, RELEASE)
"""Every set of answer rules, the default (``paper``) first."""
DESCRIPTIONS = {
    PAPER: ("each paper's own: STARE reasons step by step and boxes its answer; Inf-Bench gives the letter and why, "
            "ending in <ANSWER> X </ANSWER>; Cube Bench answers in its strict one-line forms"),
    STRICT: "the strict one-line forms (Cube Bench §3.2) for every test: any reasoning in a reply is a parse failure",
    RELEASE: ("Cube Bench's code release: closed-loop and recovery steps reason in <REASONING>...</REASONING>, then "
              "end in <ANSWER> X </ANSWER>; the other tests as in the paper"),
}
