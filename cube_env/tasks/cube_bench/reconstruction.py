"""Test 1, face reconstruction: read the Front face's nine colours off the net image.

Vision alone: no text state, no options.  The reply is the face as three rows of colour letters
(strict: three lines of three letters); scored per sticker (element-wise accuracy) and per face
(matrix accuracy), per depth, each with its Wilson 95 % interval.

Two variants ask the same certified states:

* ``image``: the cube held in the reference orientation, so the face labelled Front is always the green-centred
  face; at depths 2-4 it keeps its centre's colour on about half its cells, and "all green" scores 0.44-0.59.
* ``uniform-prior`` (the paper's B.1.2 control): each item holds its cube in one of the 24 orientations (a whole-cube
  rotation, the standard colour scheme kept), the Front face's centre colour balanced over the six colours in
  each run of six consecutive items of a depth (:func:`held_orientation`), its turn about the Front axis drawn
  from the item's own stream.  By the cube's symmetry every colour is then equally likely in every cell, and
  the colour-token prior of a depth's items stays within 0.05 of uniform (1/6) per colour (the report prints
  it: ``prior W/Y/R/O/G/B`` and its largest deviation ``prior dev``); a fixed answer lands at chance.
"""

from __future__ import annotations

from collections import Counter
from functools import lru_cache
from typing import Any

import numpy as np

from ...engine.facelets import SOLVED, colours
from ...engine.moves import ORIENTATION_NAMES, ORIENTATIONS
from ...engine.state import from_facelets, to_facelets
from ..items import Ask, Item, ItemResult, Prompt, QuestionTest, ask_and_judge, balanced_slot, item_rng
from ..metrics import Proportion
from ..parsing import GridForm
from ..rules import RULES
from ...tiers import FRONT
from .common import COLOURS, certified_start, front_face, net_image

SYSTEM = ("You read the colours of a Rubik's cube from an image of its net (the six faces unfolded flat, "
          "each face's name written above it). " + COLOURS)
USER = ("The image shows a Rubik's cube as a net. Report the nine colours of the face labelled Front, row by "
        "row from the top, each row left to right.\nReply with exactly three lines of three colour letters "
        "separated by spaces, e.g.\nW R G\nB B O\nY G W\nand nothing else.")
VARIANTS = ("image", "uniform-prior")
PRIOR_ORDER = "WYROGB"
"""The colour order the report prints the prior in (the paper's vocabulary order)."""
PRIOR_LIMIT = 0.05
"""B.1.2: no colour token's share may deviate from uniform (1/6) by more than this."""


@lru_cache(maxsize=1)
def _by_front() -> dict[int, tuple[int, ...]]:
    """The orientations (indices into ``ORIENTATIONS``) that put each colour's face in front."""
    out: dict[int, list[int]] = {}
    for r in range(len(ORIENTATIONS)):
        out.setdefault(int(colours(SOLVED[ORIENTATIONS[r]])[FRONT][4]), []).append(r)
    return {c: tuple(rs) for c, rs in out.items()}


def held_orientation(seed: int, depth: int, index: int) -> str:
    """The whole-cube rotation (``"x y'"``, ``""`` for none) item ``index`` of ``depth`` is shown in under
    ``uniform-prior``: its Front centre's colour balanced over the six in each run of six items, its turn about
    the Front axis one of four from its own stream.  A function of (seed, depth, index) only: the item's state
    and every other item are untouched."""
    colour = balanced_slot(seed, "reconstruction/front", depth, index, 6)
    spins = _by_front()[colour]
    return ORIENTATION_NAMES[spins[int(item_rng(seed, "reconstruction/spin", depth, index).integers(len(spins)))]]


def held_state(item: Item, variant: str) -> np.ndarray:
    """The cube as the item shows it in ``variant``: its state, rotated as a whole under ``uniform-prior``."""
    state = from_facelets(item.state)
    if variant != "uniform-prior":
        return state
    rotation = item.data.get("orientation")
    if rotation is None:
        rotation = held_orientation(item.seed, item.depth, item.index)
    return state[ORIENTATIONS[ORIENTATION_NAMES.index(rotation)]]


def colour_prior(golds: list[str]) -> dict[str, float]:
    """Each colour's share of the gold tokens (9 per item), in :data:`PRIOR_ORDER`."""
    counts = Counter("".join(golds))
    total = max(sum(counts.values()), 1)
    return {c: counts[c] / total for c in PRIOR_ORDER}


class Reconstruction(QuestionTest):
    """Face reconstruction (paper §3.1, B.1; ``uniform-prior``: B.1.2's colour-prior control)."""

    name = "reconstruction"
    rule_sets = RULES
    variants = VARIANTS

    def build(self, depth: int, index: int, rng: np.random.Generator, seed: int, metric: str) -> Item | None:
        start = certified_start(rng, depth, metric)
        if start is None:
            return None
        state, scramble = start
        return Item(self.name, depth, index, metric, seed, to_facelets(state),
                    {"scramble": scramble, "distance": depth, "gold": "".join(front_face(state)),
                     "orientation": held_orientation(seed, depth, index)})

    def prompt(self, item: Item, variant: str = "image") -> Prompt:
        held = held_state(item, variant)
        return Prompt(SYSTEM, USER, net_image(held), GridForm(), gold=front_face(held), name="front face")

    def play(self, item: Item, variant: str, ask: Ask) -> ItemResult:
        self.check_variant(variant)
        ex = ask_and_judge(ask, self.prompt(item, variant))
        gold = ex.prompt.gold
        right = sum(a == b for a, b in zip(ex.answer, gold)) if ex.answer is not None else 0
        score = {"cells_right": right, "exact": right == 9, "parsed": ex.answer is not None,
                 "cells_centre": sum(c == gold[4] for c in gold), "gold": "".join(gold)}
        return ItemResult([ex], score, passed=right == 9, error=ex.reply.error, end_state=item.state)

    def summarize(self, scores: list[dict[str, Any]]) -> dict[str, Any]:
        n = len(scores)
        row: dict[str, Any] = {
            "element acc": Proportion(sum(s["cells_right"] for s in scores), 9 * n),
            "matrix acc": Proportion(sum(s["exact"] for s in scores), n),
            "parse": Proportion(sum(s["parsed"] for s in scores), n),
            "centre baseline": Proportion(sum(s.get("cells_centre", 0) for s in scores), 9 * n),
        }
        golds = [s["gold"] for s in scores if "gold" in s]
        if golds:  # runs stored before the prior was recorded lack it
            prior = colour_prior(golds)
            row["prior " + "/".join(PRIOR_ORDER)] = "/".join(f"{prior[c]:.2f}" for c in PRIOR_ORDER)
            row["prior dev"] = max(abs(p - 1 / 6) for p in prior.values())
        return row
