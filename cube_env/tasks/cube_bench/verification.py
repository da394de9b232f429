"""Test 2, cross-modal verification: does a text grid match the image's Front face?

Each item pairs the net image with a text grid of the Front face.  Half the items (balanced per depth) show the
true face; the other half a *look-alike*: the Front face of another cube at the same depth with the same nine
colours (:func:`look_alike`), drawn given those colours from a fixed seeded stream of cubes of that depth, so a
negative is a true face of its own: the grid's colours, their places, which cells are equal and the lines they
form are those of true faces, and the text alone tells nothing.  The paper's two kinds of negative both gave
the answer away without the image: one oracle move rolled out on the text brought new colours in (counting
colours: balanced accuracy 0.75), and a token edit (two cells swapped) broke a true face's lines (a logistic
regression on which cells are equal: 0.70 on the suite's items, issue 33).  Every item's face (Yes or No) has a
look-alike, so which faces are asked does not differ either.  The reply is ``Answer: Yes`` or ``Answer: No``;
scored by balanced accuracy, parse rate and the share of Yes answers (the paper's bias).

The ``polarity`` variant (the paper's B.2.2 controls) asks the same items with *polarity reversals* and
*randomised surface forms*: half the items of each truth value (balanced per depth) ask the reversed question
("does this description differ from the Front face in at least one cell?", so Yes means a mismatch); each
question is one of three wordings, each with its reversal (:data:`QUESTIONS`), balanced per truth and polarity
so the Yes/No prior is even per template; the grid is written in one of three forms (letters, colour words, rows
named), balanced per truth; the introduction is one of three.  A comparator blind to the reversal (answering
whether the grid matches, whatever was asked) lands at balanced accuracy 0.5, and no wording or grid form tells
Yes from No (tests/tasks/test_fairness.py).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np

from ...engine.state import from_facelets, to_facelets
from ..items import Ask, Item, ItemResult, Prompt, QuestionTest, ask_and_judge, balanced_slot, item_rng
from ..metrics import Proportion, balanced_accuracy, yes_bias
from ..rules import RULES
from ..parsing import YesNoForm
from ...solver.oracle import RADIUS, oracle
from ...engine.facelets import COLOUR_LETTERS, COLOUR_NAMES
from .common import COLOURS, certified_start, front_face, grid_text, net_image, scramble

SYSTEM = ("You check whether a text description of a Rubik's cube face agrees with an image of the cube. "
          "Compare the two yourself, cell by cell; the text may be wrong. " + COLOURS)
USER = ("The image shows a Rubik's cube as a net (each face's name above it). This text claims to be its "
        "face labelled Front, row by row from the top:\n{grid}\n\nIf all nine cells match the image, reply "
        "exactly: Answer: Yes\nIf any cell differs, reply exactly: Answer: No")

VARIANTS = ("image+text", "polarity")
INTROS = (
    "This text claims to be its face labelled Front, row by row from the top:",
    "Here is a description of the face labelled Front, one row per line, top row first:",
    "Someone wrote down the face labelled Front, each row from left to right, starting at the top:",
)
QUESTIONS = (
    ("Is this description exactly the Front face in the image?",
     "Is this description not exactly the Front face in the image?"),
    ("Do all nine cells of this description agree with the image?",
     "Does at least one cell of this description disagree with the image?"),
    ("Does the image's Front face match this description cell for cell?",
     "Does the image's Front face differ from this description in any cell?"),
)
"""Three wordings of the question, each as (kept, reversed): a Yes to the kept one says the grid matches, a Yes
to the reversed one says it does not (the paper's "is green" / "is not green")."""
POLARITY_USER = "The image shows a Rubik's cube as a net (each face's name above it). {intro}\n{grid}\n\n{question}\n" \
    "Reply exactly: Answer: Yes\nor exactly: Answer: No"
WORDS = dict(zip(COLOUR_LETTERS, COLOUR_NAMES))
ROWS = ("top row", "middle row", "bottom row")


def grid_in_form(cells: tuple[str, ...], form: int) -> str:
    """The nine cells as letter rows (0), colour-word rows (1) or letter rows named top/middle/bottom (2)."""
    rows = [cells[3 * r: 3 * r + 3] for r in range(3)]
    if form == 1:
        return "\n".join(", ".join(WORDS[c] for c in row) for row in rows)
    if form == 2:
        return "\n".join(f"{name}: {' '.join(row)}" for name, row in zip(ROWS, rows))
    return grid_text(cells)


def asked(seed: int, depth: int, index: int, truth: str) -> dict[str, Any]:
    """How the ``polarity`` variant asks item ``index``: reversed or not (balanced per truth value), the question's
    wording (balanced per truth and polarity), the grid's form (balanced per truth) and the introduction."""
    reversed_ = balanced_slot(seed, f"verification/polarity/{truth}", depth, index // 2, 2) == 1
    return {"reversed": reversed_,
            "question": balanced_slot(seed, f"verification/question/{truth}/{reversed_}", depth, index // 4, 3),
            "grid_form": balanced_slot(seed, f"verification/grid-form/{truth}", depth, index // 2, 3),
            "intro": int(item_rng(seed, "verification/intro", depth, index).integers(len(INTROS)))}


def polarity_prompt(item: Item) -> tuple[str, str]:
    """The ``polarity`` variant's question text and its gold (Yes/No as the question asks)."""
    truth = item.data["truth"]
    how = item.data.get("asked") or asked(item.seed, item.depth, item.index, truth)
    text = POLARITY_USER.format(intro=INTROS[how["intro"]],
                                grid=grid_in_form(tuple(item.data["shown"]["grid"]), how["grid_form"]),
                                question=QUESTIONS[how["question"]][int(how["reversed"])])
    gold = {"Yes": "No", "No": "Yes"}[truth] if how["reversed"] else truth
    return text, gold


STREAM_CAP = 20_000
"""The states of one depth a look-alike is drawn among (per seed and metric)."""


class FaceStream:
    """A fixed, seeded stream of :data:`STREAM_CAP` random states at one depth (with the scramble that made each),
    indexed by their Front face's colours: every search reads the same stream, so what it finds does not depend on
    which items were built before.  Within the distance oracle's ball (5 half turns, 6 quarter turns) the states are
    certified as items' states are; beyond it, where certifying costs milliseconds a state, they are plain
    scrambles of that many moves (almost all at that distance; one that becomes an item's state is certified then)."""

    def __init__(self, seed: int, depth: int, metric: str) -> None:
        rng = item_rng(seed, "verification/faces", depth, 0)
        self.certified = depth <= RADIUS[metric]
        self.by_colours: dict[str, list[tuple[str, str]]] = {}
        for _ in range(STREAM_CAP):
            start = certified_start(rng, depth, metric) if self.certified else scramble(rng, depth, metric)
            if start is not None:
                face = "".join(front_face(start[0]))
                self.by_colours.setdefault("".join(sorted(face)), []).append((to_facelets(start[0]), start[1]))

    def like(self, face: str) -> list[tuple[str, str]]:
        """The stream's states (facelets, scramble) whose Front face has ``face``'s colours, each as often as the
        stream holds it."""
        return self.by_colours.get("".join(sorted(face)), [])


@lru_cache(maxsize=16)
def face_stream(seed: int, depth: int, metric: str) -> FaceStream:
    return FaceStream(seed, depth, metric)


def look_alike(state: np.ndarray, rng: np.random.Generator, seed: int, depth: int, metric: str) -> tuple[str, str] | None:
    """Another cube at the same depth whose Front face has the same nine colours as ``state``'s, differently placed:
    a draw among the stream's states with those colours (:class:`FaceStream`), as (facelets, scramble); ``None``
    when the draw shows ``state``'s very face or the stream holds none (a handful of one-coloured or symmetric
    faces at shallow depths), and the caller draws another item.

    Why not the paper's negatives.  "One oracle move on the text": a move that changes the Front face brings new
    colours in, so comparing which colours the text and the image hold, never their places, reached a balanced
    accuracy of 0.75.  Keeping the colours by choosing the move (a turn of the Front face itself, or a side turn
    that swaps in the same colours) made the grid's *pattern* give it away instead: a text-only naive Bayes over
    the cells reached 0.58-0.61 at depth 3.  A token edit swapping two cells keeps the colours but breaks the lines
    a true face is made of: a logistic regression on which cells are equal caught 23 of 25 swaps on the suite's
    items (issue 33).  A true face of another cube, drawn given the colours, is one as true faces are, colours,
    places and lines alike."""
    face = "".join(front_face(state))
    found = face_stream(seed, depth, metric).like(face)
    if not found:
        return None
    facelets, moves = found[int(rng.integers(len(found)))]
    return None if "".join(front_face(from_facelets(facelets))) == face else (facelets, moves)


class Verification(QuestionTest):
    """Cross-modal verification (paper §3.1, B.2)."""

    name = "verification"
    rule_sets = RULES
    variants = VARIANTS
    too_many = (" (each verification item shows two cubes of its own with the same Front colours, so a test asks at "
                "most half the states at that distance, fewer where faces have no look-alike; docs/cube-bench.md)")

    def build(self, depth: int, index: int, rng: np.random.Generator, seed: int, metric: str) -> Item | None:
        """Every item, Yes or No, draws two cubes with the same Front colours, a certified start and a look-alike from
        the stream, and shows them in a random order: the first is the item's cube (the image), and the grid is its
        own Front face (Yes) or the second's (No).  The two are exchangeable, so the image and the grid are alike in
        distribution on Yes and on No items, and no cube is shown twice in a test (:meth:`identities`): a model
        that remembers grids or images gains nothing by construction.  (When the image was always the certified start
        and the No grid a stream face, a No grid could be the face of a cube shown before; "No when this grid was shown
        before" measured 0.52, 0.52 and 0.48 there, on 600 half-turn items of seeds 13, 14 and 0.)"""
        start = certified_start(rng, depth, metric)
        if start is None:
            return None
        other = look_alike(start[0], rng, seed, depth, metric)
        if other is None:
            return None
        pair = [(to_facelets(start[0]), start[1]), other]
        if rng.integers(2):
            pair.reverse()
        (facelets, moves), (second, _) = pair
        if not face_stream(seed, depth, metric).certified and oracle(metric).distance(from_facelets(facelets)) != depth:
            return None
        positive = balanced_slot(seed, self.name, depth, index, 2) == 0
        shown = front_face(from_facelets(facelets if positive else second))
        data: dict[str, Any] = {"scramble": moves, "distance": depth, "truth": "Yes" if positive else "No",
                                "negative": None if positive else "look-alike", "other": second,
                                "shown": {"grid": "".join(shown)}}
        data["asked"] = asked(seed, depth, index, data["truth"])
        return Item(self.name, depth, index, metric, seed, facelets, data)

    def identities(self, item: Item) -> tuple[Any, ...]:
        """Both cubes the item drew: no cube is shown twice in a test, as an item's image or as its look-alike."""
        return (item.state, item.data.get("other", item.state))

    def play(self, item: Item, variant: str, ask: Ask) -> ItemResult:
        self.check_variant(variant)
        if variant == "polarity":
            text, gold = polarity_prompt(item)
        else:
            text, gold = USER.format(grid=grid_text(tuple(item.data["shown"]["grid"]))), item.data["truth"]
        prompt = Prompt(SYSTEM, text, net_image(from_facelets(item.state)), YesNoForm(), gold=gold, name="verify")
        ex = ask_and_judge(ask, prompt)
        score = {"gold": gold, "answer": ex.answer, "correct": bool(ex.correct)}
        if variant == "polarity":
            score["reversed"] = gold != item.data["truth"]
        return ItemResult([ex], score, passed=bool(ex.correct), error=ex.reply.error, end_state=item.state)

    def summarize(self, scores: list[dict[str, Any]]) -> dict[str, Any]:
        gold = [s["gold"] for s in scores]
        pred = [s["answer"] for s in scores]
        return {
            "bal acc": balanced_accuracy(gold, pred),
            "acc": Proportion(sum(s["correct"] for s in scores), len(scores)),
            "parse": Proportion(sum(p is not None for p in pred), len(scores)),
            "yes bias": yes_bias(pred),
            "yes/no items": f"{gold.count('Yes')}/{gold.count('No')}",
            **_by_polarity(scores),
        }


def _by_polarity(scores: list[dict[str, Any]]) -> dict[str, Any]:
    """The ``polarity`` variant's balanced accuracy on the kept and on the reversed questions (nothing for items
    asked without reversals)."""
    if not any("reversed" in s for s in scores):
        return {}
    out = {}
    for name, flag in (("bal acc kept", False), ("bal acc reversed", True)):
        part = [s for s in scores if s.get("reversed") is flag]
        out[name] = balanced_accuracy([s["gold"] for s in part], [s["answer"] for s in part])
    return out
