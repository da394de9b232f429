"""Test 2, cross-modal verification: does a text grid match the image's Front face?

Each item pairs the net image with a text grid of the Front face.  Half the items (balanced per
depth) show the true face; the other half show a negative, in equal shares either a token edit (two
cells of different colours, never the fixed centre, swapped) or the Front face after one move
applied to the true state (a move that changes the Front face but not its colour counts and, where one
exists, keeps the cube's distance).  Both keep the true face's nine colours, only moved, so counting
colours in the text and the image tells nothing, and the shown grid's colours are distributed like a
true face's: an earlier version changed cells to random colours and used any move, and a text-only
rule ("Yes when six or more cells are green") then reached a balanced accuracy of 0.62 without the
image.  The reply is
``Answer: Yes`` or ``Answer: No``; scored by balanced accuracy, parse rate and the share of Yes answers (the paper's bias).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...engine.state import from_facelets, to_facelets
from ..items import Ask, Item, ItemResult, Prompt, QuestionTest, ask_and_judge, balanced_slot
from ..metrics import Proportion, balanced_accuracy, yes_bias
from ..parsing import YesNoForm
from .common import COLOURS, certified_start, front_face, grid_text, move_classes, net_image, turn

EDITABLE = (0, 1, 2, 3, 5, 6, 7, 8)
"""Cells a token edit may swap: never the centre, whose colour is fixed (an edited centre would give the
negative away from the text alone)."""
SYSTEM = ("You check whether a text description of a Rubik's cube face agrees with an image of the cube. "
          "Compare the two yourself, cell by cell; the text may be wrong. " + COLOURS)
USER = ("The image shows a Rubik's cube as a net (each face's name above it). This text claims to be its "
        "face labelled Front, row by row from the top:\n{grid}\n\nIf all nine cells match the image, reply "
        "exactly: Answer: Yes\nIf any cell differs, reply exactly: Answer: No")


def swap_two(cells: tuple[str, ...], rng: np.random.Generator) -> tuple[str, ...] | None:
    """``cells`` with two cells of different colours (never the centre) swapped: the colour counts stay
    those of a true face, so they say nothing about which grids are negatives."""
    pairs = [(a, b) for a in EDITABLE for b in EDITABLE if a < b and cells[a] != cells[b]]
    if not pairs:
        return None
    a, b = pairs[int(rng.integers(len(pairs)))]
    out = list(cells)
    out[a], out[b] = out[b], out[a]
    return tuple(out)


def same_distance_moves(state: np.ndarray, truth: tuple[str, ...], metric: str) -> list[str]:
    """Moves that change the Front face but not its colour counts, preferring those that leave the cube at
    its distance (one each way in the quarter-turn metric, where no move keeps it).

    Same colour counts: every negative, edit or move, then holds the nine colours of the true face, only
    placed differently, so comparing which colours the text and the image hold (without their places)
    says Yes to every item; when move negatives could bring new colours in, that comparison reached a
    balanced accuracy of 0.75 (right on every move negative, wrong on every edit).  A turn of the Front
    face itself always qualifies (it moves the face's stickers round), a side turn where the line it
    brings in holds the colours it takes out.  Same distance: the shown face is then the face of a cube
    as far from solved as the true one, so its colours do not give the negative away either."""
    here, after = move_classes(state, metric)
    shown = {m: front_face(turn(state, m)) for m in after}
    changes = [m for m in after if shown[m] != truth and sorted(shown[m]) == sorted(truth)]
    same = [m for m in changes if after[m] == here]
    return same or changes


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
        shown: tuple[str, ...] | None = truth
        if kind == "edit":
            shown = swap_two(truth, rng)
        elif kind == "move":
            moves = same_distance_moves(state, truth, metric)
            if not moves:
                return None
            data["move"] = moves[int(rng.integers(len(moves)))]
            shown = front_face(turn(state, data["move"]))
        if shown is None:
            return None
        data["shown"] = {"grid": "".join(shown)}
        return Item(self.name, depth, index, metric, seed, to_facelets(state), data)

    def play(self, item: Item, variant: str, ask: Ask) -> ItemResult:
        self.check_variant(variant)
        grid = tuple(item.data["shown"]["grid"])
        prompt = Prompt(SYSTEM, USER.format(grid=grid_text(grid)), net_image(from_facelets(item.state)), YesNoForm(),
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
