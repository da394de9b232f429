"""Which of these four nets folds into a cube?  A multiple-choice form of STARE's cube-net folding.

Four hexomino nets labelled A-D, exactly one of them a cube net; the other three are distinct
non-folding hexominoes from the depth's pool (:mod:`.nets`: depth 1 any, depth 2 look-alike
near-misses), each net turned or mirrored at random, numbered and coloured like the yes/no items.
The cube net's slot is balanced over A-D per depth.  Variants: ``image`` (the four nets tiled into
one image, each under its letter) and ``text`` (the four nets as blocks of digits).  The reply is one
line, ``B`` or ``<ANSWER> B </ANSWER>`` (``strict``), or reasoning ending in ``\\boxed{B}`` (``paper``); scored by accuracy and parse rate (chance 0.25).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...engine.facelets import SOLVED_FACELETS
from ...render.fold import tile
from ..items import Item, OneQuestionTest, Prompt, balanced_slot
from ..parsing import OPTION_LETTERS, LetterForm
from .asking import stare_ask
from .nets import invalid_pool, nets_like, shape_id
from .net_fold import NetItems
from .shown import FRAME_PX, ShownNet

SYSTEM = ("You decide which net folds into a cube. A net is six squares joined along the edges they share in the "
          "drawing; it folds into a cube when folding along those edges makes every square a different face of the "
          "cube. Exactly one of the four nets shown does.")
SEES = {
    "image": "The image shows four nets, each under its letter.\n",
    "text": "Four nets, one digit per face and '.' where there is no face:\n{nets}\n",
}
QUESTION = "\nWhich net folds into a cube?"
STRICT_ASK = "Reply with exactly one line: the letter of that net, as <ANSWER> X </ANSWER>, and nothing else."


class NetChoice(NetItems, OneQuestionTest):
    """Which of four nets folds into a cube (multiple choice)."""

    name = "net-choice"
    variants: tuple[str, ...] = ("image", "text")

    def split_key(self, item: Item) -> str:
        """The cube net's shape: no net is asked on both sides of a split (every item shows the solved state)."""
        return f"hexomino-{item.data['shapes'][OPTION_LETTERS.index(item.data['gold'])]}"

    def identities(self, item: Item) -> tuple[Any, ...]:
        """The four nets, by their keys: no net is shown by two items (nor by another STARE test: its own group)."""
        return tuple(ShownNet.from_data(data).key for data in item.data["options"])

    def build(self, depth: int, index: int, rng: np.random.Generator, seed: int, metric: str) -> Item | None:
        pool = invalid_pool(depth)
        distractors = [pool[int(k)] for k in rng.permutation(len(pool))[:3]]
        folding = nets_like(distractors[int(rng.integers(3))], depth)  # the net looks like one distractor
        valid = folding[int(rng.integers(len(folding)))]
        slot = balanced_slot(seed, self.name, depth, index, 4)
        shapes = distractors[:slot] + [valid] + distractors[slot:]
        nets = [ShownNet.draw(rng, s, fail_last=s is not valid, group=self.name) for s in shapes]
        if any(n is None for n in nets):
            return None
        shown = [n.to_data() for n in nets if n is not None]
        data = {"options": shown, "gold": OPTION_LETTERS[slot], "shapes": [shape_id(s) for s in shapes],
                "shown": {"options": [ShownNet.from_data(n).text() for n in shown]}}
        return Item(self.name, depth, index, metric, seed, SOLVED_FACELETS, data)

    def prompt(self, item: Item, variant: str) -> Prompt:
        nets = [ShownNet.from_data(n) for n in item.data["options"]]
        if variant == "text":
            text = SEES["text"].format(nets="\n\n".join(f"{c}:\n{n.text()}" for c, n in zip(OPTION_LETTERS, nets)))
            image = None
        else:
            text = SEES["image"]
            image = tile([n.image(FRAME_PX) for n in nets], list(OPTION_LETTERS), cols=2)
        ask, form = stare_ask(self.rules, QUESTION, STRICT_ASK, LetterForm(OPTION_LETTERS, ("tag", "bare")))
        return Prompt(SYSTEM, text + ask, image, form, gold=item.data["gold"], name=f"choose ({variant})")



__all__ = ["NetChoice"]
