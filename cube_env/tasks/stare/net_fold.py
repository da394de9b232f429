"""STARE's cube-net folding (§2.2, Tab. 1/3/4/5): can this net be folded into a cube?  Yes or No.

Each item shows one hexomino net, its six faces numbered 1-6 and coloured.  Half the items of every
depth are cube nets (exactly one of each consecutive pair, :func:`~cubebench.tasks.items.balanced_slot`),
the other half non-folding hexominoes from the depth's pool (:mod:`.nets`: depth 1 any, depth 2
look-alike near-misses paired by stratum with the pair's cube net).  Every label comes from the
geometric fold check.  The same item is asked in the paper's three setups and its text form:

* ``question``: the net image only;
* ``steps``: the image and the five folding steps in words;
* ``frames``: the image, the steps, and the net rendered in 3D after steps 1-4, tiled into one image
  (the final frame, which would show success or failure, is left out as in the paper);
* ``text``: no image; the net as a block of digits (App. G.4).

The paper's ablations and probes, on the same items (``docs/stare.md``):

* ``image-text``: the image and the digit block (Tab. 3's Image+Text);
* ``frames-1``, ``frames-2``, ``frames-3``: the image, the steps and the first 1-3 intermediate frames (Tab. 10's
  0-3 simulations; 0 is ``steps``); ``frames-partial``: two of the four, drawn per item; ``frames-last``: only
  the last intermediate one (Tab. 5/21's Partial and Last; All is ``frames``);
* ``final-form``: the image, the steps and the fully folded outcome (§3.3 Q3's probe);
* ``frames-interleaved``: ``frames`` as one multi-image message, each frame after its step's text (§3.1);
* ``perturbed``: the question becomes whether *these* steps fold the net into a cube, in world directions; the
  Yes items show a cube net and a valid fold, the No items a cube net with one step perturbed (App. F.3: an angle
  inverted, or the turn about a side edge, tearing the face off: disconnected faces), the two items of a pair
  worded alike up to the face numbers (:mod:`.perturbed`).

Each item carries one net per set of setups (:data:`SETUP_SETS`): the setups without frames show one, as the
paper's Tables 3 and 4 ask one item in several forms; those with frames another (the paper's 120 nets with visual
simulation are other nets than its 193 without; its Tables 5 and 10 ask those 120 in several forms); the final
form, whose answer is in sight, and the perturbed steps each their own, all of the item's free hexomino but the
perturbed ones.  No net (nor the words of its steps) is shown by two items or two sets (:meth:`NetFold.identities`),
so no setup re-shows a net another setup shows unless the paper asks one item in both.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...engine.facelets import SOLVED_FACELETS
from ..items import Item, OneQuestionTest, Prompt, balanced_slot, interleaved, item_rng
from ..metrics import Proportion, balanced_accuracy, binary_f1, yes_bias
from ..parsing import YesNoForm
from ..rules import PAPER
from .asking import stare_ask
from .nets import DEPTHS, LAST_STEP, check_depth, near_miss_of, partners, shape_id, stratum, valid_pool
from .perturbed import matched_plans
from .polyomino import Cells
from ...render.fold import tile
from .shown import FRAME_PX, SHOWN_FRAMES, ShownNet

SETUPS = ("question", "steps", "frames", "text", "image-text", "frames-1", "frames-2", "frames-3", "frames-partial",
          "frames-last", "final-form", "frames-interleaved", "perturbed")
SHOWN = {"frames-1": (1,), "frames-2": (1, 2), "frames-3": (1, 2, 3), "frames-last": (SHOWN_FRAMES,),
         "final-form": (LAST_STEP,)}
"""The steps after which each frame setup shows the net in 3D (``frames-partial``: :func:`partial_steps`)."""
SETUP_SETS = {**{setup: "without-vsim" for setup in ("question", "steps", "text", "image-text")},
              **{setup: "with-vsim" for setup in ("frames", "frames-1", "frames-2", "frames-3", "frames-partial",
                                                  "frames-last", "frames-interleaved")},
              "final-form": "final-form", "perturbed": "perturbed"}
"""The set of nets each setup shows (module docstring): the paper's nets without visual simulation, its other nets
with it, the final form's own, the perturbed steps' own."""
PARTIAL = 2
"""How many of the four intermediate frames ``frames-partial`` shows."""
SYSTEM = ("You decide whether a net folds into a cube. A net is six squares, numbered 1 to 6, joined along the "
          "edges they share in the drawing. It folds into a cube when folding along those edges makes every "
          "square a different face of the cube: no two squares on the same face.")
SEES = {
    "question": "The image shows the net.\n",
    "steps": "The image shows the net. {folds}The folding steps:\n{steps}\n",
    "frames": ("The image shows the net, then the net in 3D after each of the first four folding steps (the result "
               "of the last step is not shown). {folds}The folding steps:\n{steps}\n"),
    "text": "The net, one digit per face and '.' where there is no face:\n{grid}\n",
    "image-text": "The image shows the net. The same net as digits, one per face and '.' where there is no face:\n{grid}\n",
    "some": ("The image shows the net, then the net in 3D after folding {shown} (the results of the other steps "
             "are not shown). {folds}The folding steps:\n{steps}\n"),
    "final-form": ("The image shows the net, then the net in 3D after all five folding steps, seen from the south-east and from "
                   "the north-west. {folds}"
                   "The folding steps:\n{steps}\n"),
    "perturbed": ("The image shows the net lying on a table, north at the top of the drawing and east to its right. "
                  "Each step turns one face by 90 degrees, and the faces attached beyond it (further from face {base}) "
                  "turn with it, about a line through the edge it shares with a face already turned (or the one that "
                  "stays flat). A step may turn a face the wrong way, or about a line that does not run along that edge, "
                  "tearing the face off it. The steps:\n{moves}\n"),
}
INTERLEAVED = ("The net:\n", "\n{folds}The folding steps, each of the first four followed by the net in 3D after it "
               "(the result of the last step is not shown):\n")
PERTURBED_QUESTION = ("\nTurned exactly as these steps say, does the net end up folded into a cube, with every face "
                      "still joined to its neighbours in the drawing?")
FOLDS = ("Each step turns one face by 90 degrees about the edge it shares with a face already in place, towards "
         "the inside of the cube; the faces attached beyond it turn with it. ")
QUESTION = "\nCan this net be folded into a cube?"
STRICT_ASK = "Reply with exactly one line: Answer: Yes or Answer: No"


def pair_net(seed: int, test: str, depth: int, index: int) -> int:
    """The cube net (index into :func:`valid_pool` of ``depth``) shared by items ``2b`` and ``2b + 1``: one
    shows it, the other a non-folding partner of its stratum.  Balanced like the answer slots: each run of
    ``len(valid_pool)`` consecutive pairs asks every net once, so no net (the one 2x5 net, whose look-alike
    alone differs from it by a run of 4) is asked more often than the others by the luck of the draw."""
    return balanced_slot(seed, f"{test}/pair", depth, index // 2, len(valid_pool(depth)))


def net_record(shape: Any, net: ShownNet, folds: bool) -> dict[str, Any]:
    """What an item keeps about its net: the net, the label and where the label comes from."""
    miss = None if folds else near_miss_of(shape)
    return {"net": net.to_data(), "truth": "Yes" if folds else "No", "shape": shape_id(shape),
            "stratum": repr(stratum(shape)), "near_miss": miss is not None,
            "near_miss_of": None if miss is None else shape_id(miss),
            "failure": None if folds else {"step": net.folding.first_failure,
                                           "kind": net.folding.steps[-1].failure}}


class NetItems:
    """What STARE's net tests share: their depths (the non-net pools) and how a split groups their items."""

    name: str
    too_many = (" (a STARE test shows every numbered net once, and each hexomino has 360 numberings or fewer, "
                "split among the tests: docs/stare.md, \"Fresh nets per setup\")")
    reasoned: tuple[str, ...] = (PAPER,)
    """STARE's paper rules ask every question to be reasoned step by step (App. G.1)."""

    def check_depth(self, depth: int, metric: str) -> None:
        check_depth(self.name, depth)

    def split_key(self, item: Item) -> str:
        """The net's shape: no hexomino is asked on both sides of a split (every item shows the solved state)."""
        return f"hexomino-{item.data['shape']}"


def draw_pair_net(test: str, seed: int, depth: int, index: int, rng: np.random.Generator,
                  folds: bool) -> tuple[Cells, ShownNet] | None:
    """Item ``index``'s net: its pair's cube net (:func:`pair_net`) when ``folds``, else a non-net of that net's
    stratum, drawn as shown, numbered in ``test``'s group (``None``: this draw has no fold plan that fails only at
    the last step)."""
    valid = valid_pool(depth)[pair_net(seed, test, depth, index)]
    pool = partners(valid, depth)
    shape = valid if folds else pool[int(rng.integers(len(pool)))]
    net = ShownNet.draw(rng, shape, fail_last=not folds, group=test)
    return None if net is None else (shape, net)


def perturbed_net(test: str, seed: int, depth: int, index: int, rng: np.random.Generator, folds: bool) -> ShownNet:
    """Item ``index``'s ``perturbed`` net: its pair's couple of plans worded alike (:func:`.perturbed.matched_plans`),
    the valid one when ``folds``, else the perturbed one, numbered and coloured from ``rng``.  The couple's kind (its
    two free shapes) is balanced like the answer slots, each run of as many pairs as kinds asking every kind once,
    so Yes and No items show every shape equally often; the couple is uniform within its kind (every orientation)."""
    kinds = matched_plans(depth)
    names = sorted(kinds)
    couples = kinds[names[balanced_slot(seed, f"{test}/perturbed-kind", depth, index // 2, len(names))]]
    valid, perturbed = couples[int(item_rng(seed, f"{test}/perturbed", depth, index // 2).integers(len(couples)))]
    return ShownNet.dress(rng, valid if folds else perturbed, f"{test}/perturbed")


class NetFold(NetItems, OneQuestionTest):
    """Cube-net folding, yes or no (STARE §2.2)."""

    name = "net-fold"
    variants: tuple[str, ...] = SETUPS

    def build(self, depth: int, index: int, rng: np.random.Generator, seed: int, metric: str) -> Item | None:
        folds = balanced_slot(seed, self.name, depth, index, 2) == 0
        drawn = draw_pair_net(self.name, seed, depth, index, rng, folds)
        if drawn is None:
            return None
        shape, net = drawn
        data = net_record(shape, net, folds)
        data["shown"] = {"net": net.text(), "colours": ",".join(net.colours), "plan": repr((net.base, net.order))}
        others = {name: ShownNet.draw(rng, shape, fail_last=not folds, group=self.name)
                  for name in ("with-vsim", "final-form")}  # the same free net, drawn anew in each set
        if any(other is None for other in others.values()):
            return None
        data["nets"] = {name: other.to_data() for name, other in others.items() if other is not None}
        data["perturbed"] = perturbed_net(self.name, seed, depth, index, rng, folds).to_data()
        return Item(self.name, depth, index, metric, seed, SOLVED_FACELETS, data)

    def identities(self, item: Item) -> tuple[Any, ...]:
        """The nets the item shows with and without frames and in its final form, by their keys, and the words of
        every plan shown (the steps, the perturbed setup's turns): no two items, nor two of these sets of one item,
        show one net or one plan's words (nets of different hexominoes can share numbered joins, and so words).
        The perturbed nets come from a group of their own (:data:`.shown.NET_GROUPS`) and may recur within it: its
        couples show every hexomino as often on Yes items as on No items (:func:`perturbed_net`), so a net seen
        before says nothing of the answer."""
        nets = [ShownNet.from_data(data) for data in (item.data["net"], *item.data.get("nets", {}).values())]
        perturbed = ShownNet.from_data(item.data.get("perturbed", item.data["net"]))
        return (*(net.key for net in nets), *(net.steps_text() for net in nets), perturbed.turns_text())

    def net(self, item: Item, setup: str) -> ShownNet:
        """The net ``setup`` shows of ``item`` (:data:`SETUP_SETS`); items stored before the sets (issue 33) show their
        one net in every setup."""
        name = SETUP_SETS[setup]
        if name == "perturbed":
            return ShownNet.from_data(item.data.get("perturbed", item.data["net"]))
        return ShownNet.from_data(item.data["net"] if name == "without-vsim" else
                                  item.data.get("nets", {}).get(name, item.data["net"]))

    def prompt(self, item: Item, setup: str) -> Prompt:
        self.check_variant(setup)
        net = self.net(item, setup)
        if setup == "perturbed":
            return self.perturbed_prompt(item)
        if setup == "frames-interleaved":
            return self.interleaved_prompt(item, net)
        ask, form = stare_ask(self.rules, QUESTION, STRICT_ASK, YesNoForm())
        steps = net.steps_text()
        image: np.ndarray | None
        shown = partial_steps(item) if setup == "frames-partial" else SHOWN.get(setup)
        if shown is not None:
            text = SEES["final-form" if setup == "final-form" else "some"].format(
                steps=steps, folds=FOLDS, shown=("step " if len(shown) == 1 else "steps ") + " and ".join(map(str, shown)))
            image = net.final_image() if setup == "final-form" else net.frames_image(shown)
        else:
            text = SEES[setup].format(steps=steps, grid=net.text(), folds=FOLDS)
            image = None if setup == "text" else net.frames_image() if setup == "frames" else net.image()
        return Prompt(SYSTEM, text + ask, image, form, gold=truth(net), name=f"fold ({setup})")

    def interleaved_prompt(self, item: Item, net: ShownNet) -> Prompt:
        """``frames`` as one multi-image message: the net, then each step's text followed by the frame after it."""
        ask, form = stare_ask(self.rules, QUESTION, STRICT_ASK, YesNoForm())
        lines = net.steps_text().split("\n")
        frames = net.frames(range(1, SHOWN_FRAMES + 1))
        parts: list[str | np.ndarray] = [INTERLEAVED[0], net.image(FRAME_PX), INTERLEAVED[1].format(folds=FOLDS),
                                         lines[0] + "\n"]
        for line, frame in zip(lines[1:], frames):
            parts += [line + "\n", frame]
        parts += ["\n".join(lines[1 + len(frames):]) + "\n" + ask]
        captions = ["The net"] + [f"After step {k}" for k in range(1, SHOWN_FRAMES + 1)]
        fields = interleaved(parts, lambda images: tile(images, captions, cols=3))
        return Prompt(SYSTEM, form=form, gold=truth(net), name="fold (frames-interleaved)", **fields)

    def perturbed_prompt(self, item: Item) -> Prompt:
        """Whether these steps fold the net into a cube: a Yes item's cube net and a valid fold, a No item's cube net
        with one step perturbed, worded as its pair's valid fold; the gold is the fold check of what is shown."""
        net = self.net(item, "perturbed")
        ask, form = stare_ask(self.rules, PERTURBED_QUESTION, STRICT_ASK, YesNoForm())
        text = SEES["perturbed"].format(base=net.base, moves=net.turns_text())
        return Prompt(SYSTEM, text + ask, net.image(), form, gold=truth(net),
                      name="fold (perturbed)")

    def summarize(self, scores: list[dict[str, Any]]) -> dict[str, Any]:
        return yes_no_summary(scores)


def truth(net: ShownNet) -> str:
    """The gold of a shown net and plan: whether the fold check makes a cube of it."""
    return "Yes" if net.folding.folds else "No"


def partial_steps(item: Item) -> tuple[int, ...]:
    """The intermediate frames ``frames-partial`` shows for ``item``: :data:`PARTIAL` of steps 1-4, drawn per item
    from a stream of its own (the item is unchanged)."""
    rng = item_rng(item.seed, f"{item.test}/partial", item.depth, item.index)
    return tuple(sorted(int(k) + 1 for k in rng.choice(SHOWN_FRAMES, PARTIAL, replace=False)))


def yes_no_summary(scores: list[dict[str, Any]]) -> dict[str, Any]:
    """F1 of Yes, accuracy, balanced accuracy, parse rate, Yes share and the gold balance of yes/no items."""
    gold = [s["gold"] for s in scores]
    pred = [s["answer"] for s in scores]
    return {
        "F1": binary_f1(gold, pred),
        "acc": Proportion(sum(s["correct"] for s in scores), len(scores)),
        "bal acc": balanced_accuracy(gold, pred),
        "parse": Proportion(sum(p is not None for p in pred), len(scores)),
        "yes bias": yes_bias(pred),
        "yes/no items": f"{gold.count('Yes')}/{gold.count('No')}",
    }


__all__ = ["NetFold", "NetItems", "SETUPS", "SETUP_SETS", "SHOWN", "partial_steps", "DEPTHS", "yes_no_summary", "net_record",
           "pair_net", "draw_pair_net", "perturbed_net"]
