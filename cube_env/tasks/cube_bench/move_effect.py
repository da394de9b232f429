"""Test 5, causal move-effect: does each of four moves bring the cube closer, leave it, or take it farther?

A state at exact distance d and four candidate moves; for each, the label is DECREASE, NO_CHANGE
or INCREASE from the exact distance after the move (in the quarter-turn metric every move changes
the distance's parity, so NO_CHANGE never occurs there).  Options follow the paper's fairness rule
(B.7): one move of each class present, then the remaining slots from a class with enough distinct
moves, the doubled class rotating with the item index (a random feasible one when the class in turn
has no second move: there is usually one DECREASE move only), so the class mix stays as even as the
cube allows.  The reply is
four lines ``<A> DECREASE </A>`` ... ``<D> ... </D>``; every prediction is scored, by micro-accuracy,
macro-F1 over the classes and Cohen's kappa (parse failures count as wrong).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..items import Ask, Item, ItemResult, Prompt, QuestionTest, ask_and_judge
from ..metrics import Proportion, cohen_kappa, macro_f1
from ..parsing import LabelsForm
from .common import (
    COLOURS, LETTERS, NOTATION, certified_start, facelets, metric_words, move_classes, net_image, option_lines,
    state_of, state_text,
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


class MoveEffect(QuestionTest):
    """Causal move-effect (paper §3.1, §4.4, B.7)."""

    name = "move-effect"
    variants = ("text", "image+text")

    def build(self, depth: int, index: int, rng: np.random.Generator, seed: int, metric: str) -> Item | None:
        start = certified_start(rng, depth, metric)
        if start is None:
            return None
        state, scramble = start
        here, after = move_classes(state, metric)
        pools = {c: [m for m, d in after.items() if label(here, d) == c] for c in LABELS}
        present = [c for c in LABELS if pools[c]]
        chosen = {c: [pools[c][i] for i in rng.permutation(len(pools[c]))] for c in present}
        options = [chosen[c].pop() for c in present]
        while len(options) < 4:
            turn_class = LABELS[(index + len(options)) % 3]
            feasible = [c for c in LABELS if chosen.get(c)]
            if not feasible:
                return None
            spare = turn_class if turn_class in feasible else feasible[int(rng.integers(len(feasible)))]
            options.append(chosen[spare].pop())
        options = [options[i] for i in rng.permutation(4)]
        return Item(self.name, depth, index, metric, seed, facelets(state),
                    {"scramble": scramble, "distance": here, "shown": {"options": options},
                     "labels": [label(here, after[m]) for m in options], "after": {m: after[m] for m in options}})

    def play(self, item: Item, variant: str, ask: Ask) -> ItemResult:
        state = state_of(item.state)
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
