"""Inf-Bench's 3D tasks: forward (start + operations -> which end state) and inverse (start + end ->
which operations), four-option multiple choice, the level being the number of operations.

An item is a random start, four operation lists of the level's length (see :mod:`.common` for how
they are drawn) and the gold's slot.  Forward shows the gold list and the four lists' end states;
inverse shows the gold's end state and the four lists.  Each direction draws its own items (its own
random stream): when both drew the same ones, an endpoint that kept state across requests paired the
forward and the inverse question of one start (the one shows the gold list, the other the gold end
state) and climbed every ladder without simulating anything.  The prompts are the
paper's (Fig. 11) with our notation and encoding spelled out.  Under the ``paper`` rules the system text is
the paper's persona ("output the letter ... and why") and the reply ends in ``<ANSWER> B </ANSWER>`` after its
reasons (:class:`~..parsing.TaggedForm`; a bare ``B`` is read too); under ``strict`` the reply is one line, ``B``
or ``<ANSWER> B </ANSWER>``.  Items are asked one at a time by the ladder (:mod:`..ladder`) or at fixed
levels like any question test.
"""

from __future__ import annotations


import numpy as np

from ...engine.state import from_facelets, to_facelets
from ..items import Item, OneQuestionTest, Prompt, QuestionTest, ReplyForm, balanced_slot
from ..ladder import LEVEL_CAP
from ..parsing import OPTION_LETTERS, LetterForm, TaggedForm
from ..rules import PAPER, STRICT
from .common import (
    ANSWER, ENCODING, IMAGE_WORDS, N_OPTIONS, INF_BENCH_NOTATION, ONLY_LETTER, PAPER_ANSWER, PERSONA, PRESENTATIONS,
    SYSTEM, encoded, option_lists, random_start, run, sheet,
)

MAX_LEVEL = LEVEL_CAP
"""The longest operation list an item may have: the ladder's hard cap (the paper's ladder has no top)."""


class Deformation(OneQuestionTest):
    """The shared item generator, player and metrics of the forward and inverse tests."""

    variants: tuple[str, ...] = PRESENTATIONS
    chance = 1 / N_OPTIONS
    reasoned: tuple[str, ...] = (PAPER,)
    """Inf-Bench's persona prompt asks for the choice and why (Fig. 11)."""

    def check_depth(self, depth: int, metric: str) -> None:
        if isinstance(depth, bool) or not isinstance(depth, int) or not 1 <= depth <= MAX_LEVEL:
            raise ValueError(f"{self.name}: depth must be an integer in 1..{MAX_LEVEL} (the level: the number of operations), "
                             f"got {depth!r}")

    def build(self, depth: int, index: int, rng: np.random.Generator, seed: int, metric: str) -> Item | None:
        start = random_start(rng)
        lists = option_lists(rng, depth, start)
        if lists is None:
            return None
        slot = balanced_slot(seed, self.stream, depth, index, N_OPTIONS)
        return Item(self.name, depth, index, metric, seed, to_facelets(start),
                    {"lists": lists, "gold": OPTION_LETTERS[slot], "shown": {"lists": [" ".join(o) for o in lists]}})


    def asking(self) -> tuple[str, str, str, ReplyForm]:
        """(system text, the sentence after "Please select ...", closing line, reply form) under the test's answer
        rules: ``strict``'s one-line tag, or (``paper``) the paper's persona and user sentence (Fig. 11) with
        the reasons first and the tagged choice last."""
        if self.rules == STRICT:
            return SYSTEM, "", ANSWER, _form()
        return PERSONA, ONLY_LETTER, PAPER_ANSWER, TaggedForm(_form())

    @staticmethod
    def parts(item: Item) -> tuple[np.ndarray, list[list[str]], int]:
        """The start state, the four lists and the gold's slot."""
        return from_facelets(item.state), item.data["lists"], OPTION_LETTERS.index(item.data["gold"])


def _form() -> LetterForm:
    return LetterForm(OPTION_LETTERS, ("tag", "bare"))


def _options_text(lines: list[str]) -> str:
    return "\n".join(f"{OPTION_LETTERS[k]}: {line}" for k, line in enumerate(lines))


class Forward(Deformation):
    """Forward reasoning: which state does the list of operations lead to?"""

    name = "inf-forward"

    def prompt(self, item: Item, presentation: str) -> Prompt:
        start, lists, slot = self.parts(item)
        ends = [run(start, ops) for ops in lists]
        ops = " ".join(lists[slot])
        n = item.depth
        system, only, closing, form = self.asking()
        if presentation == "image":
            image = sheet([start] + ends, ["Original"] + [f"Option {c}" for c in OPTION_LETTERS], columns=5)
            text = (f"{INF_BENCH_NOTATION} {IMAGE_WORDS}\nThis is the original shape: the first picture, 'Original'.\n"
                    f"If you perform {n} operations on this shape, what will the resulting configuration look "
                    f"like? The operations are: {ops}. Please select the correct answer from the options below. "
                    f"{only}The options are the pictures A to D.\n{closing}")
        else:
            image = None
            text = (f"{INF_BENCH_NOTATION} {ENCODING}\nThis is the original shape:\n{encoded(start)}\n\n"
                    f"If you perform {n} operations on this shape, what will the resulting configuration look "
                    f"like? The operations are: {ops}. Please select the correct answer from the options below. "
                    f"{only}The options are:\n" + "\n\n".join(f"{OPTION_LETTERS[k]}:\n{encoded(e)}" for k, e in enumerate(ends))
                    + f"\n{closing}")
        return Prompt(system, text, image, form, gold=item.data["gold"], name=f"forward ({presentation})")


class Inverse(Deformation):
    """Inverse reasoning: which list of operations turns the start into the target?"""

    name = "inf-inverse"

    def prompt(self, item: Item, presentation: str) -> Prompt:
        start, lists, slot = self.parts(item)
        target = run(start, lists[slot])
        n = item.depth
        system, only, closing, form = self.asking()
        options = _options_text([" ".join(ops) for ops in lists])
        ask = (f"If this shape is performed with {n} operations, and the result is {{target}}, can you infer "
               "what the operations are? Please select the correct answer from the options below. "
               f"{only}The options are:\n{options}\n{closing}")
        if presentation == "image":
            image = sheet([start, target], ["Original", "Result"], columns=2)
            text = (f"{INF_BENCH_NOTATION} {IMAGE_WORDS}\nThis is the original shape: the picture 'Original'.\n"
                    + ask.format(target="the picture 'Result'"))
        else:
            image = None
            text = (f"{INF_BENCH_NOTATION} {ENCODING}\nThis is the original shape:\n{encoded(start)}\n\n"
                    + ask.format(target=f"\n{encoded(target)}\n"))
        return Prompt(system, text, image, form, gold=item.data["gold"], name=f"inverse ({presentation})")


INF_BENCH_TESTS: tuple[QuestionTest, ...] = (Forward(), Inverse())
