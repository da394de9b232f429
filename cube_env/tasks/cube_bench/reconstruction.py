"""Test 1, face reconstruction: read the Front face's nine colours off the net image.

Vision alone: no text state, no options.  The reply is the face as three rows of colour letters
(strict: three lines of three letters); scored per sticker (element-wise accuracy) and per face
(matrix accuracy), per depth, each with its Wilson 95 % interval.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...engine.state import from_facelets, to_facelets
from ..items import Item, ItemResult, Prompt, QuestionTest, Ask, ask_and_judge
from ..metrics import Proportion
from ..protocols import PROTOCOLS
from ..parsing import GridForm
from .common import COLOURS, certified_start, front_face, net_image

SYSTEM = ("You read the colours of a Rubik's cube from an image of its net (the six faces unfolded flat, "
          "each face's name written above it). " + COLOURS)
USER = ("The image shows a Rubik's cube as a net. Report the nine colours of the face labelled Front, row by "
        "row from the top, each row left to right.\nReply with exactly three lines of three colour letters "
        "separated by spaces, e.g.\nW R G\nB B O\nY G W\nand nothing else.")


class Reconstruction(QuestionTest):
    """Face reconstruction (paper §3.1, B.1)."""

    name = "reconstruction"
    protocols = PROTOCOLS
    variants = ("image",)

    def build(self, depth: int, index: int, rng: np.random.Generator, seed: int, metric: str) -> Item | None:
        start = certified_start(rng, depth, metric)
        if start is None:
            return None
        state, scramble = start
        return Item(self.name, depth, index, metric, seed, to_facelets(state),
                    {"scramble": scramble, "distance": depth, "gold": "".join(front_face(state))})

    def prompt(self, item: Item) -> Prompt:
        state = from_facelets(item.state)
        return Prompt(SYSTEM, USER, net_image(state), GridForm(), gold=front_face(state), name="front face")

    def play(self, item: Item, variant: str, ask: Ask) -> ItemResult:
        self.check_variant(variant)
        ex = ask_and_judge(ask, self.prompt(item))
        gold = ex.prompt.gold
        right = sum(a == b for a, b in zip(ex.answer, gold)) if ex.answer is not None else 0
        score = {"cells_right": right, "exact": right == 9, "parsed": ex.answer is not None,
                 "cells_centre": sum(c == gold[4] for c in gold)}
        return ItemResult([ex], score, passed=right == 9, error=ex.reply.error, end_state=item.state)

    def summarize(self, scores: list[dict[str, Any]]) -> dict[str, Any]:
        n = len(scores)
        return {
            "element acc": Proportion(sum(s["cells_right"] for s in scores), 9 * n),
            "matrix acc": Proportion(sum(s["exact"] for s in scores), n),
            "parse": Proportion(sum(s["parsed"] for s in scores), n),
            "centre baseline": Proportion(sum(s.get("cells_centre", 0) for s in scores), 9 * n),
        }
