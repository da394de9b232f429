"""STARE's perception probes on cube nets (Tab. 2, Fig. 14): 2D colour and connectivity, 3D "folded?".

Each item is one net of the net-fold pools (a cube net or not, half each per depth), and three probes
of it, one per variant:

* ``colour``: "What colour is face k?" four colour names A-D, the true one's slot balanced over A-D;
  shown the flat net.
* ``connectivity``: "Do faces a and b share an edge in the net?" Yes for half the items (balanced per
  depth), the pair drawn among the pairs that do, or among those that do not; shown the flat net.
* ``folded``: the net in 3D after step t of its fold (t in 1-4, never the last), "Has face k been folded
  off the table?" Yes for half the items: k drawn among the faces no longer lying flat, or among those
  still flat (the base face only when no other face is flat).

Labels come from the net's own data (its colours, its cells' shared edges, the fold's geometry).
Each probe closes with the strict one-line instruction, or (``paper``) STARE's step-by-step one, the answer
boxed (:mod:`..rules`).  Scored by accuracy and parse rate; balanced accuracy for the two yes/no probes.
"""

from __future__ import annotations

from itertools import combinations
from typing import Any

import numpy as np

from ...engine.facelets import SOLVED_FACELETS
from ..items import Ask, Item, ItemResult, Prompt, QuestionTest, ask_and_judge, balanced_slot
from ..metrics import Proportion, balanced_accuracy
from ..items import ReplyForm
from ..parsing import OPTION_LETTERS, LetterForm, YesNoForm
from .asking import stare_ask
from .net_fold import NetItems, draw_pair_net, net_record
from .shown import PALETTE, SHOWN_FRAMES, ShownNet

PROBES = ("colour", "connectivity", "folded")
SYSTEM = "You answer a question about a picture of a net: six squares, numbered 1 to 6, that can be folded along their edges."
QUESTIONS = {
    "colour": "The image shows a net. What colour is face {face}?\n{options}\n",
    "connectivity": "The image shows a net. Do faces {a} and {b} share an edge in this net?\n",
    "folded": ("The image shows a net lying on a table, partway through being folded into a cube: some faces have "
               "been folded up. Has face {face} been folded off the table (it no longer lies flat on the table)?\n"),
}
STRICT_ASK = {
    "colour": "Reply with exactly one line: the letter of the colour, as <ANSWER> X </ANSWER>, and nothing else.",
    "yes/no": "Reply with exactly one line: Answer: Yes or Answer: No",
}


def colour_probe(net: ShownNet, rng: np.random.Generator, slot: int) -> dict[str, Any]:
    """Face, four colour options with the true one at ``slot``, and the gold letter."""
    face = int(rng.integers(1, 7))
    true = net.colours[net.labels.index(face)]
    others = [c for c in PALETTE if c != true]
    options = [others[int(k)] for k in rng.permutation(len(others))[:3]]
    options.insert(slot, true)
    return {"face": face, "options": options, "gold": OPTION_LETTERS[slot]}


def connectivity_probe(net: ShownNet, rng: np.random.Generator, yes: bool) -> dict[str, Any]:
    """A pair of faces that share an edge (``yes``) or do not, and the gold answer."""
    joined = net.adjacent_pairs()
    pool = sorted(sorted(p) for p in map(frozenset, combinations(range(1, 7), 2)) if (p in joined) == yes)
    a, b = pool[int(rng.integers(len(pool)))]
    if rng.integers(2):
        a, b = b, a
    return {"faces": [a, b], "gold": "Yes" if yes else "No"}


def folded_probe(net: ShownNet, rng: np.random.Generator, yes: bool) -> dict[str, Any]:
    """A frame (after step 1-4), a face folded off the table (``yes``) or still flat, and the gold answer."""
    step = int(rng.integers(1, SHOWN_FRAMES + 1))
    folded = net.folded_faces(step)
    flat = set(net.labels) - folded
    pool = sorted(folded) if yes else sorted(flat - {net.base}) or [net.base]
    return {"step": step, "face": pool[int(rng.integers(len(pool)))], "gold": "Yes" if yes else "No"}


class NetPerception(NetItems, QuestionTest):
    """Perception probes on cube nets (STARE §3.3 Q3, Tab. 2)."""

    name = "net-perception"
    variants: tuple[str, ...] = PROBES

    def build(self, depth: int, index: int, rng: np.random.Generator, seed: int, metric: str) -> Item | None:
        folds = balanced_slot(seed, f"{self.name}/net", depth, index, 2) == 0
        drawn = draw_pair_net(self.name, seed, depth, index, rng, folds)
        if drawn is None:
            return None
        shape, net = drawn
        probes = {
            "colour": colour_probe(net, rng, balanced_slot(seed, f"{self.name}/colour", depth, index, 4)),
            "connectivity": connectivity_probe(net, rng, balanced_slot(seed, f"{self.name}/joined", depth, index, 2) == 0),
            "folded": folded_probe(net, rng, balanced_slot(seed, f"{self.name}/folded", depth, index, 2) == 0),
        }
        data = {**net_record(shape, net, folds), "probes": probes}
        data["shown"] = {"net": net.text(), "colours": ",".join(net.colours), "plan": repr((net.base, net.order)),
                         "probes": repr(sorted((k, sorted((f, repr(v)) for f, v in p.items() if f != "gold"))
                                               for k, p in probes.items()))}
        return Item(self.name, depth, index, metric, seed, SOLVED_FACELETS, data)

    def identities(self, item: Item) -> tuple[Any, ...]:
        """The item's net, by its key: no net is probed in two items (nor shown by another STARE test: its own group)."""
        return (ShownNet.from_data(item.data["net"]).key,)

    def prompt(self, item: Item, probe: str) -> Prompt:
        net = ShownNet.from_data(item.data["net"])
        p = item.data["probes"][probe]
        form: ReplyForm
        if probe == "colour":
            options = "\n".join(f"{c}: {name}" for c, name in zip(OPTION_LETTERS, p["options"]))
            question, image, form = QUESTIONS["colour"].format(face=p["face"], options=options), net.image(), \
                LetterForm(OPTION_LETTERS, ("tag", "bare"))
        elif probe == "connectivity":
            a, b = p["faces"]
            question, image, form = QUESTIONS["connectivity"].format(a=a, b=b), net.image(), YesNoForm()
        else:
            question, image, form = QUESTIONS["folded"].format(face=p["face"]), net.frame(p["step"]), YesNoForm()
        text, form = stare_ask(self.rules, question, STRICT_ASK["colour" if probe == "colour" else "yes/no"], form)
        return Prompt(SYSTEM, text, image, form, gold=p["gold"], name=probe)

    def play(self, item: Item, variant: str, ask: Ask) -> ItemResult:
        self.check_variant(variant)
        ex = ask_and_judge(ask, self.prompt(item, variant))
        score = {"probe": variant, "gold": ex.prompt.gold, "answer": ex.answer, "correct": bool(ex.correct)}
        return ItemResult([ex], score, passed=bool(ex.correct), error=ex.reply.error, end_state=item.state)

    def summarize(self, scores: list[dict[str, Any]]) -> dict[str, Any]:
        n = len(scores)
        row: dict[str, Any] = {"acc": Proportion(sum(s["correct"] for s in scores), n),
                               "parse": Proportion(sum(s["answer"] is not None for s in scores), n)}
        if scores and all(s["gold"] in ("Yes", "No") for s in scores):
            row["bal acc"] = balanced_accuracy([s["gold"] for s in scores], [s["answer"] for s in scores])
        return row


__all__ = ["NetPerception", "PROBES"]
