"""Test 2, cross-modal verification: does a text grid match the image's Front face?

Each item pairs the net image with a text grid of the Front face.  Half the items (balanced per
depth) show the true face; the other half show a negative, in equal shares either a token edit
(one or two cells other than the fixed centre changed
to another colour) or the Front face after one move applied to the
true state (a move that changes the Front face).  The reply is ``Answer: Yes`` or ``Answer: No``;
scored by balanced accuracy, parse rate and the share of Yes answers (the paper's bias).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...engine.facelets import COLOUR_LETTERS
from ..items import Ask, Item, ItemResult, Prompt, QuestionTest, ask_and_judge, balanced_slot
from ..metrics import Proportion, balanced_accuracy, yes_bias
from ..oracle import metric_moves
from ..parsing import YesNoForm
from .common import COLOURS, certified_start, facelets, front_face, grid_text, net_image, state_of, turn

EDITABLE = np.array([0, 1, 2, 3, 5, 6, 7, 8])
"""Cells a token edit may change: never the centre, whose colour is fixed (an edited centre would give the
negative away from the text alone)."""
SYSTEM = ("You check whether a text description of a Rubik's cube face agrees with an image of the cube. "
          "Compare the two yourself, cell by cell; the text may be wrong. " + COLOURS)
USER = ("The image shows a Rubik's cube as a net (each face's name above it). This text claims to be its "
        "face labelled Front, row by row from the top:\n{grid}\n\nIf all nine cells match the image, reply "
        "exactly: Answer: Yes\nIf any cell differs, reply exactly: Answer: No")


class Verification(QuestionTest):
    """Cross-modal verification (paper §3.1, B.2)."""

    name = "verification"
    variants = ("image+text",)

    def build(self, depth: int, index: int, rng: np.random.Generator, seed: int, metric: str) -> Item | None:
        start = certified_start(rng, depth, metric)
        if start is None:
            return None
        state, scramble = start
        truth = front_face(state)
        positive = balanced_slot(seed, self.name, depth, index, 2) == 0
        kind = None if positive else ("edit", "move")[balanced_slot(seed, f"{self.name}/negatives", depth, index // 2, 2)]
        data: dict[str, Any] = {"scramble": scramble, "distance": depth, "truth": "Yes" if positive else "No",
                                "negative": kind}
        shown = truth
        if kind == "edit":
            cells = list(truth)
            for cell in rng.permutation(EDITABLE)[: int(rng.integers(1, 3))]:
                others = [c for c in COLOUR_LETTERS if c != cells[cell]]
                cells[cell] = others[int(rng.integers(len(others)))]
            shown = tuple(cells)
        elif kind == "move":
            moves = [m for m in metric_moves(metric) if front_face(turn(state, m)) != truth]
            data["move"] = moves[int(rng.integers(len(moves)))]
            shown = front_face(turn(state, data["move"]))
        data["shown"] = {"grid": "".join(shown)}
        return Item(self.name, depth, index, metric, seed, facelets(state), data)

    def play(self, item: Item, variant: str, ask: Ask) -> ItemResult:
        grid = tuple(item.data["shown"]["grid"])
        prompt = Prompt(SYSTEM, USER.format(grid=grid_text(grid)), net_image(state_of(item.state)), YesNoForm(),
                        gold=item.data["truth"], name="verify")
        ex = ask_and_judge(ask, prompt)
        score = {"gold": item.data["truth"], "answer": ex.answer, "correct": bool(ex.correct)}
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
        }
