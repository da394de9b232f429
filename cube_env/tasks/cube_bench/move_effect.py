"""Test 5, causal move-effect: does each of four moves bring the cube closer, leave it, or take it farther?

A state at exact distance d and four candidate moves; for each, the label is DECREASE, NO_CHANGE
or INCREASE from the exact distance after the move (in the quarter-turn metric every move changes
the distance's parity, so NO_CHANGE never occurs there).  The four options are on four different
faces, chosen so that their labels follow the paper's B.7 mix as far as distinct faces allow: one of
each class and a second of a class that rotates over the three per depth
(:func:`distinct_face_options`).  At depth 1 only the face turned has moves that are not INCREASE,
so an item holds one DECREASE or one NO_CHANGE and three INCREASEs, and "always INCREASE" is right
on 3 of 4 predictions: that is why the headline is Cohen's kappa and macro-F1 (as in the paper's
§4.4), with micro-accuracy, the class mix and the macro-F1 of uniform guessing beside them.  The
paper's own construction (B.7) puts the NO_CHANGE moves beside the DECREASE move on one face in almost
every item, and a rule that never looks at the cube ("one of the two same-face moves DECREASE, the
other NO_CHANGE, the rest INCREASE") then reached kappa 0.47, Gemini 2.5 Pro's level; on distinct
faces nothing in the options' form tells the classes apart.  The reply is four lines
``<A> DECREASE </A>`` ... ``<D> ... </D>``; every prediction is scored (parse failures count as wrong).
"""

from __future__ import annotations

from collections import Counter
from itertools import combinations, product
from typing import Any

import numpy as np

from ...engine.state import from_facelets, to_facelets
from ..items import Ask, Item, ItemResult, Prompt, QuestionTest, ask_and_judge, balanced_slot
from ..metrics import Proportion, cohen_kappa, macro_f1
from ..rules import RULES
from ..parsing import OPTION_LETTERS, LabelsForm
from .common import (
    COLOURS, CUBE_BENCH_NOTATION, OPPOSITE_FACE, certified_start, metric_words, move_classes, net_image, option_lines, state_text,
)

LABELS = ("DECREASE", "NO_CHANGE", "INCREASE")
SYSTEM = ("You are an expert Rubik's cube solver. For each candidate move you predict, without applying it, "
          "whether it changes the cube's distance to solved: DECREASE (one move closer), NO_CHANGE, or INCREASE. "
          + CUBE_BENCH_NOTATION + " " + COLOURS)
USER = ("{sees}\n\nThe cube is {d} moves from solved ({metric}).\nCandidate moves:\n{options}\n\nReply with exactly "
        "four lines, one per candidate in order, each the candidate's letter as a tag around its label, e.g.\n"
        "<A> DECREASE </A>\n<B> NO_CHANGE </B>\n<C> INCREASE </C>\n<D> INCREASE </D>\nand nothing else.")
SEES = {"text": "The cube as a net (each face's name above it):\n{state}",
        "image+text": "The image shows the cube as a net (each face's name above it); the same net as text:\n{state}"}


def label(before: int, after: int) -> str:
    return LABELS[0] if after < before else LABELS[1] if after == before else LABELS[2]


def distinct_face_options(rng: np.random.Generator, here: int, after: dict[str, int], doubled: str) -> list[str] | None:
    """Four moves on four different faces, in a random order, whose labels follow the paper's B.7 mix as far as
    distinct faces allow: one move of each class (DECREASE, NO_CHANGE, INCREASE) and a second of ``doubled``.

    Of all ways to put one move on each of four faces, those matching that multiset best are kept (the most
    classes in common, then the most of ``doubled``, then faces in opposite pairs: a face turned last and its
    opposite have alike colour counts, so counting colours does not single out the face of a DECREASE), and
    one is drawn at random.  Shallow states have few faces with a move that is not an INCREASE (one at depth
    1: the face turned), so there an item holds one DECREASE or one NO_CHANGE and three INCREASEs; deeper
    states fill the mix a little more.  ``None`` when no move decreases the distance (never at distance >= 1)."""
    if not any(d < here for d in after.values()):
        return None
    by_face: dict[str, dict[str, list[str]]] = {}
    for move, d in after.items():
        by_face.setdefault(move[0], {}).setdefault(label(here, d), []).append(move)
    want = {c: 1 + (c == doubled) for c in LABELS}
    best: list[tuple[tuple[str, ...], tuple[str, ...]]] = []
    best_score = (-1, -1, -1)
    for faces in combinations(sorted(by_face), 4):
        for classes in product(*(sorted(by_face[f]) for f in faces)):
            counts = Counter(classes)
            axes = sum(OPPOSITE_FACE[f] in faces for f in faces) // 2
            score = (sum(min(counts[c], want[c]) for c in LABELS), min(counts[doubled], 2), axes)
            if score > best_score:
                best, best_score = [], score
            if score == best_score:
                best.append((faces, classes))
    chosen_faces, chosen_classes = best[int(rng.integers(len(best)))]
    options = [by_face[f][c][int(rng.integers(len(by_face[f][c])))] for f, c in zip(chosen_faces, chosen_classes)]
    return [options[i] for i in rng.permutation(4)]


class MoveEffect(QuestionTest):
    """Causal move-effect (paper §3.1, §4.4, B.7)."""

    name = "move-effect"
    rule_sets = RULES
    variants = ("text", "image+text")

    def build(self, depth: int, index: int, rng: np.random.Generator, seed: int, metric: str) -> Item | None:
        start = certified_start(rng, depth, metric)
        if start is None:
            return None
        state, scramble = start
        here, after = move_classes(state, metric)
        doubled = LABELS[balanced_slot(seed, f"{self.name}/doubled", depth, index, len(LABELS))]
        options = distinct_face_options(rng, here, after, doubled)
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
        ex = ask_and_judge(ask, Prompt(SYSTEM, text, image, LabelsForm(OPTION_LETTERS, LABELS), gold, name="effects"))
        pred = list(ex.answer) if ex.answer is not None else [None] * 4
        score = {"gold": list(gold), "pred": pred, "right": sum(p == g for p, g in zip(pred, gold))}
        return ItemResult([ex], score, passed=score["right"] == 4, error=ex.reply.error, end_state=item.state)

    def summarize(self, scores: list[dict[str, Any]]) -> dict[str, Any]:
        gold = [g for s in scores for g in s["gold"]]
        pred = [p for s in scores for p in s["pred"]]
        mix = Counter(gold)
        return {"kappa": cohen_kappa(gold, pred, LABELS), "macro F1": macro_f1(gold, pred, LABELS),
                "F1 chance": chance_macro_f1(gold),
                "micro acc": Proportion(sum(s["right"] for s in scores), len(gold)),
                "parse": Proportion(sum(s["pred"][0] is not None for s in scores), len(scores)),
                "D/N/I": "/".join(str(mix[c]) for c in LABELS)}


def chance_macro_f1(gold: list[str]) -> float | None:
    """The macro-F1 that uniform guessing among the three labels tends to on ``gold``'s class mix: class c
    with share p has F1 = 2 p q / (p + q), q = 1/3, averaged over the classes in gold (and the guessed ones,
    which score 0 where gold has none).  What a macro-F1 is read against; kappa's chance is 0."""
    if not gold:
        return None
    q = 1 / len(LABELS)
    shares = [gold.count(c) / len(gold) for c in LABELS]
    return sum(2 * p * q / (p + q) for p in shares) / len(LABELS)
