"""Test 5, causal move-effect: does each of four moves bring the cube closer, leave it, or take it farther?

A state at exact distance d and four candidate moves; for each, the label is DECREASE, NO_CHANGE
or INCREASE from the exact distance after the move (in the quarter-turn metric every move changes
the distance's parity, so NO_CHANGE never occurs there).  The four options are on four different faces: on the face of a
DECREASE move, that move or (as often) another turn of the same face, and a random turn on each of
three other faces.  The paper's own construction (B.7: one move of each class, then a doubled one)
puts the NO_CHANGE moves beside the DECREASE move on one face in almost every item, and a rule that
never looks at the cube ("one of the two same-face moves DECREASE, the other NO_CHANGE, the rest
INCREASE") then reached kappa 0.47, Gemini 2.5 Pro's level; on distinct faces nothing in the
options' form tells the classes apart.  The reply is
four lines ``<A> DECREASE </A>`` ... ``<D> ... </D>``; every prediction is scored, by micro-accuracy,
macro-F1 over the classes and Cohen's kappa (parse failures count as wrong).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...engine.state import from_facelets, to_facelets
from ..items import Ask, Item, ItemResult, Prompt, QuestionTest, ask_and_judge
from ..metrics import Proportion, cohen_kappa, macro_f1
from ..protocols import PROTOCOLS
from ..parsing import LabelsForm
from .common import (
    COLOURS, LETTERS, NOTATION, certified_start, metric_words, move_classes, net_image, option_lines, state_text,
)

LABELS = ("DECREASE", "NO_CHANGE", "INCREASE")
SYSTEM = ("You are an expert Rubik's cube solver. For each candidate move you predict, without applying it, "
          "whether it changes the cube's distance to solved: DECREASE (one move closer), NO_CHANGE, or INCREASE. "
          + NOTATION + " " + COLOURS)
USER = ("{sees}\n\nThe cube is {d} moves from solved ({metric}).\nCandidate moves:\n{options}\n\nReply with exactly "
        "four lines, one per candidate in order, each the candidate's letter as a tag around its label, e.g.\n"
        "<A> DECREASE </A>\n<B> NO_CHANGE </B>\n<C> INCREASE </C>\n<D> INCREASE </D>\nand nothing else.")
SEES = {"text": "The cube as a net (each face's name above it):\n{state}",
        "image+text": "The image shows the cube as a net (each face's name above it); the same net as text:\n{state}"}


def label(before: int, after: int) -> str:
    return LABELS[0] if after < before else LABELS[1] if after == before else LABELS[2]


def distinct_face_options(rng: np.random.Generator, here: int, after: dict[str, int]) -> list[str] | None:
    """Four moves on four different faces, in a random order: on the face of a DECREASE move, that move or
    (as often) another turn of the same face; on three other faces, a random turn each."""
    decrease = [m for m, d in after.items() if d < here]
    if not decrease:
        return None
    key = decrease[int(rng.integers(len(decrease)))]
    siblings = [m for m in after if m[0] == key[0] and m != key]
    first = key if rng.random() < 0.5 else siblings[int(rng.integers(len(siblings)))]
    faces = [f for f in "URFDLB" if f != key[0]]
    options = [first]
    for face in (faces[i] for i in rng.permutation(len(faces))[:3]):
        turns = [m for m in after if m[0] == face]
        options.append(turns[int(rng.integers(len(turns)))])
    return [options[i] for i in rng.permutation(4)]


class MoveEffect(QuestionTest):
    """Causal move-effect (paper §3.1, §4.4, B.7)."""

    name = "move-effect"
    protocols = PROTOCOLS
    variants = ("text", "image+text")

    def build(self, depth: int, index: int, rng: np.random.Generator, seed: int, metric: str) -> Item | None:
        start = certified_start(rng, depth, metric)
        if start is None:
            return None
        state, scramble = start
        here, after = move_classes(state, metric)
        options = distinct_face_options(rng, here, after)
        if options is None:
            return None
        return Item(self.name, depth, index, metric, seed, to_facelets(state),
                    {"scramble": scramble, "distance": here, "shown": {"options": options},
                     "labels": [label(here, after[m]) for m in options], "after": {m: after[m] for m in options}})

    def play(self, item: Item, variant: str, ask: Ask) -> ItemResult:
        self.check_variant(variant)
        state = from_facelets(item.state)
        text = USER.format(sees=SEES[variant].format(state=state_text(state)), d=item.data["distance"],
                           metric=metric_words(item.metric), options=option_lines(item.data["shown"]["options"]))
        image = net_image(state) if variant == "image+text" else None
        gold = tuple(item.data["labels"])
        ex = ask_and_judge(ask, Prompt(SYSTEM, text, image, LabelsForm(LETTERS, LABELS), gold, name="effects"))
        pred = list(ex.answer) if ex.answer is not None else [None] * 4
        score = {"gold": list(gold), "pred": pred, "right": sum(p == g for p, g in zip(pred, gold))}
        return ItemResult([ex], score, passed=score["right"] == 4, error=ex.reply.error, end_state=item.state)

    def summarize(self, scores: list[dict[str, Any]]) -> dict[str, Any]:
        gold = [g for s in scores for g in s["gold"]]
        pred = [p for s in scores for p in s["pred"]]
        return {"micro acc": Proportion(sum(s["right"] for s in scores), len(gold)),
                "macro F1": macro_f1(gold, pred, LABELS), "kappa": cohen_kappa(gold, pred, LABELS),
                "parse": Proportion(sum(s["pred"][0] is not None for s in scores), len(scores))}
