"""Test 3, optimal move prediction: which of four moves brings the cube one move closer to solved?

A state at exact distance d; four candidate moves, exactly one of them optimal (its exact distance
after the move is d - 1) and three legal moves that are not (distance d or d + 1): another turn of
the optimal move's face and two turns of the opposite face (:func:`.common.paired_options`, so the
faces' colour counts do not point at the answer), the optimal one's slot balanced over A-D per depth.
The same item is asked in three modalities: the net image with the text state (``image+text``), the image alone (``image``) and the text alone (``text``).
The reply is one line, ``B`` or ``<ANSWER> B </ANSWER>``; scored by accuracy and parse rate.
"""

from __future__ import annotations


import numpy as np

from ...engine.state import from_facelets, to_facelets
from ..items import Item, OneQuestionTest, Prompt, balanced_slot
from ..rules import RULES
from ..parsing import OPTION_LETTERS, LetterForm
from .common import (
    COLOURS, CUBE_BENCH_NOTATION, certified_start, four_options, metric_words, move_classes, net_image, option_lines,
    state_text,
)

MODALITIES = ("image+text", "image", "text")
SYSTEM = ("You are an expert Rubik's cube solver. You choose, among four candidate moves, the one that brings "
          "the cube one move closer to solved. Exactly one candidate does. " + CUBE_BENCH_NOTATION + " " + COLOURS)
SEES = {
    "image+text": "The image shows the cube as a net (each face's name above it); the same net as text:\n{state}\n",
    "image": "The image shows the cube as a net (each face's name above it).\n",
    "text": "The cube as a net (each face's name above it):\n{state}\n",
}
ASK = ("\nThe cube is {d} moves from solved ({metric}).\nCandidate moves:\n{options}\n\n"
       "Reply with exactly one line: the letter of the move that leaves the cube {d1} move(s) from solved, "
       "as <ANSWER> X </ANSWER>, and nothing else.")


class MoveChoice(OneQuestionTest):
    """Optimal move prediction (paper §3.1, B.3)."""

    name = "move-choice"
    rule_sets = RULES
    variants: tuple[str, ...] = MODALITIES

    def build(self, depth: int, index: int, rng: np.random.Generator, seed: int, metric: str) -> Item | None:
        if depth < 1:
            raise ValueError(f"{self.name}: depth must be at least 1 (a solved cube has no optimal move)")
        start = certified_start(rng, depth, metric)
        if start is None:
            return None
        state, scramble = start
        here, after = move_classes(state, metric)
        progress = [m for m, d in after.items() if d == here - 1]
        if not progress:
            return None
        correct = progress[int(rng.integers(len(progress)))]
        slot = balanced_slot(seed, self.stream, depth, index, 4)
        options = four_options(rng, correct, after, here, slot)
        if options is None:
            return None
        return Item(self.name, depth, index, metric, seed, to_facelets(state),
                    {"scramble": scramble, "distance": here, "shown": {"options": options},
                     "gold": OPTION_LETTERS[slot], "after": {m: after[m] for m in options}})

    def prompt(self, item: Item, modality: str) -> Prompt:
        state = from_facelets(item.state)
        d = item.data["distance"]
        text = SEES[modality].format(state=state_text(state)) + ASK.format(
            d=d, d1=d - 1, metric=metric_words(item.metric), options=option_lines(item.data["shown"]["options"]))
        image = None if modality == "text" else net_image(state)
        return Prompt(SYSTEM, text, image, LetterForm(OPTION_LETTERS, ("tag", "bare")), gold=item.data["gold"],
                      name=f"choose ({modality})")

