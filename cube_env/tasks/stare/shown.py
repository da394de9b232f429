"""A net as the STARE items show it: oriented cells, face numbers, colours, a fold plan; its images and texts.

An item stores a :class:`ShownNet` as plain JSON (:meth:`ShownNet.to_data`); playing the item rebuilds
it (:meth:`ShownNet.from_data`) and renders from it, so images and texts are always those of the stored
item.  The numbers 1-6 and the six colours are shuffled over the cells per item (numbers in reading
order would make neighbours look consecutive), and the net is turned or mirrored by one of the 8
symmetries of the square at random, for folding and non-folding nets alike.

Every numbering of a net belongs to one of the :data:`NET_GROUPS` (one per STARE test, and one for the perturbed
steps), named by a hash of which numbers share an edge (:func:`net_key`), so no two groups ever show one net, in
any orientation or colouring, nor name the same joined faces; within a group, the test keeps its items from sharing
a net (docs/stare.md, "Fresh nets per setup").

The fold plan is a base face and the order the other five are folded in (:mod:`.folding`).  For a
non-folding net the plan is drawn among those whose first overlap or tear happens at the last (fifth)
step: the steps in words are always five, and the frames after steps 1-4 never show the failure (the
paper leaves out only the final frame that shows success or failure).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Sequence

import numpy as np

from ...render.camera import Camera
from ...render.fold import VIEW, fit_camera, render_flat_net, render_folded, tile
from .folding import Fold, fold, net_edges, plans
from .nets import LAST_STEP, shape_id
from .perturbed import Plan
from .polyomino import Cell, Cells, grid_text, transform

PALETTE: dict[str, tuple[int, int, int]] = {
    "red": (228, 60, 60), "orange": (245, 150, 40), "yellow": (240, 220, 60),
    "green": (70, 180, 85), "blue": (70, 120, 225), "purple": (160, 90, 200),
}
"""The six face colours, by the name a question uses: far apart in hue, each legible under black numbers."""
NET_PX = 384
"""Side of a flat net image (7 cells of 54 pixels across: room for any hexomino)."""
FRAME_PX = 320
"""Side of one panel in a tiled sequence of frames."""
SHOWN_FRAMES = LAST_STEP - 1
"""Frames shown in the ``frames`` setup: after steps 1-4, never the final one."""
FAR_VIEW = (-VIEW[0], VIEW[1], -VIEW[2])
"""The final-form probe's second camera: the usual one turned round to the north-west (:func:`~..render.fold.VIEW`)."""
NET_GROUPS = {"net-fold": 6, "net-fold/perturbed": 1, "net-choice": 3, "net-perception": 1}
"""The groups of numberings (module docstring), one per STARE test and one more for ``net-fold``'s perturbed steps,
with their shares: a numbering falls in a group with odds in these proportions (net-fold shows three nets of its
item's hexomino an item, net-choice four nets, net-perception one)."""
NUMBERING_DRAWS = 2000
"""Numberings drawn before :func:`numbering` gives up (a test finds every group reachable for every hexomino)."""
LINES = {0: ("east-west", "the east", 1), 1: ("vertical", "above", 1), 2: ("north-south", "the north", -1)}
"""How a turn about each world axis (x east, y up, z south; north is the top of the drawing) is put in words: the
line's name, the end it is seen from, and that end's sign (the north end is -z)."""


@dataclass(frozen=True)
class ShownNet:
    """One presented net: ``cells`` (sorted), the number and colour name of each, and a fold plan."""

    cells: tuple[Cell, ...]
    labels: tuple[int, ...]
    colours: tuple[str, ...]
    base: int
    """The number of the face that stays on the table."""
    order: tuple[int, ...]
    """The numbers of the other five faces, in folding order."""
    perturb: tuple[int, str, int] | None = None
    """A perturbed step (App. F.3): the number of the face whose fold is perturbed, how (``inverted`` or
    ``axis``, :mod:`.folding`) and the axis choice (0-3); ``None``: every step folds inwards."""

    # --- building and storing ----------------------------------------------------------------------------
    @classmethod
    def draw(cls, rng: np.random.Generator, shape: Cells, fail_last: bool, group: str) -> ShownNet | None:
        """``shape`` in a random orientation with shuffled numbers (a numbering of ``group``) and colours and a random
        plan (one failing only at the last step when ``fail_last``; ``None`` if the shape has no such plan)."""
        cells = tuple(sorted(transform(shape, int(rng.integers(8)))))
        labels, colours = numbering(rng, cells, group)
        label_of = dict(zip(cells, labels))
        options = plans(cells)
        for k in rng.permutation(len(options)):
            base, order = options[int(k)]
            outcome = fold(cells, base, order)
            if outcome.folds or (fail_last and outcome.first_failure == LAST_STEP):
                return cls(cells, labels, colours, label_of[base], tuple(label_of[c] for c in order))
        return None

    @classmethod
    def dress(cls, rng: np.random.Generator, plan: Plan, group: str) -> ShownNet:
        """The oriented net and fold plan ``plan`` (perturbed or not, :mod:`.perturbed`), numbered (in ``group``) and
        coloured at random."""
        labels, colours = numbering(rng, plan.cells, group)
        label_of = dict(zip(plan.cells, labels))
        perturb = None if plan.perturb is None else (label_of[plan.perturb[0]], plan.perturb[1], plan.perturb[2])
        return cls(plan.cells, labels, colours, label_of[plan.base], tuple(label_of[c] for c in plan.order), perturb)

    def to_data(self) -> dict[str, Any]:
        data = {"cells": [list(c) for c in self.cells], "labels": list(self.labels), "colours": list(self.colours),
                "base": self.base, "order": list(self.order)}
        return data if self.perturb is None else data | {"perturb": list(self.perturb)}

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> ShownNet:
        perturb = data.get("perturb")
        return cls(tuple((int(r), int(c)) for r, c in data["cells"]), tuple(data["labels"]), tuple(data["colours"]),
                   int(data["base"]), tuple(data["order"]),
                   None if perturb is None else (int(perturb[0]), str(perturb[1]), int(perturb[2])))

    # --- geometry -------------------------------------------------------------------------------------------
    def cell_of(self, label: int) -> Cell:
        return self.cells[self.labels.index(label)]

    @cached_property
    def folding(self) -> Fold:
        """The plan played out (states and steps)."""
        perturb = None if self.perturb is None else {self.cell_of(self.perturb[0]): self.perturb[1:]}
        return fold(self.cells, self.cell_of(self.base), [self.cell_of(k) for k in self.order], perturb)

    @property
    def key(self) -> tuple[int, tuple[tuple[int, int], ...]]:
        """The net up to turning, mirroring and colouring: its free hexomino and which numbers share an edge."""
        return shape_id(frozenset(self.cells)), net_key(self.cells, self.labels)

    def adjacent_pairs(self) -> set[frozenset[int]]:
        """The pairs of face numbers that share an edge in the flat net."""
        label = dict(zip(self.cells, self.labels))
        return {frozenset((label[a], label[b])) for a, b in net_edges(self.cells)}

    def folded_faces(self, step: int) -> set[int]:
        """The faces off the table (no longer lying flat) after ``step`` steps."""
        state = self.folding.states[step]
        return {k for c, k in zip(self.cells, self.labels) if not state.is_flat(c)}

    # --- texts ---------------------------------------------------------------------------------------------
    def text(self) -> str:
        """The net as a block of digits mirroring the drawing, ``.`` for no face (STARE App. G.4)."""
        return grid_text(self.cells, {c: str(k) for c, k in zip(self.cells, self.labels)})

    def steps_text(self) -> str:
        """The five folds in words: which face turns, about its edge with which face, which way."""
        parent = {step.face: step.hinge for step in self.folding.steps}
        label = dict(zip(self.cells, self.labels))
        base = self.cell_of(self.base)
        lines = [f"Face {self.base} stays flat on the table."]
        for n, k in enumerate(self.order, 1):
            hinge = parent[self.cell_of(k)]
            way = "up" if hinge == base else "inwards"
            lines.append(f"Step {n}: fold face {k} {way} by 90 degrees along its edge with face {label[hinge]}.")
        return "\n".join(lines)

    def turns_text(self) -> str:
        """The five turns in world terms (the ``perturbed`` setup): which world line each face turns about, through
        its edge with its hinge face, and which way.  A fold, an inverted fold and a turn about a side edge read
        alike; only following the turns in 3D (where each edge lies by then) tells them apart."""
        label = dict(zip(self.cells, self.labels))
        lines = [f"Face {self.base} stays flat on the table."]
        for n, (k, step) in enumerate(zip(self.order, self.folding.steps), 1):
            name, seen, sign = LINES[step.line]
            way = "counterclockwise" if step.turn * sign > 0 else "clockwise"
            lines.append(f"Step {n}: turn face {k} by 90 degrees {way} (seen from {seen}) about the {name} line through "
                         f"its edge with face {label[step.hinge]}.")
        return "\n".join(lines)

    # --- images --------------------------------------------------------------------------------------------
    def rgb(self) -> list[tuple[int, int, int]]:
        return [PALETTE[c] for c in self.colours]

    def image(self, size: int = NET_PX) -> np.ndarray:
        """The flat net, numbered and coloured."""
        return render_flat_net(self.cells, [str(k) for k in self.labels], self.rgb(), size=size)

    def frame(self, step: int, size: int = FRAME_PX) -> np.ndarray:
        """The net in 3D after ``step`` folds (0: flat on the table), through the plan's one camera."""
        if not 0 <= step <= LAST_STEP:
            raise ValueError(f"a net folds in {LAST_STEP} steps; no frame {step}")
        state = self.folding.states[step]
        faces = [state.corners[c] for c in self.cells]
        return render_folded(faces, [str(k) for k in self.labels], self.rgb(), self.camera(), size=size)

    def camera(self) -> Camera:
        """One camera for every frame of the plan, fitted to the 3D states that may be shown (after steps 1-4;
        never the last, whose extent could hint at the outcome)."""
        states = self.folding.states[1:SHOWN_FRAMES + 1]
        return fit_camera(np.concatenate([s.corners[c] for s in states for c in self.cells]))

    def frames_image(self, steps: Sequence[int] = tuple(range(1, SHOWN_FRAMES + 1))) -> np.ndarray:
        """The flat net, then the net after each of ``steps`` (default 1-4), tiled three across with captions."""
        panels = [self.image(FRAME_PX)] + self.frames(steps)
        captions = ["The net"] + [f"After step {k}" for k in steps]
        return tile(panels, captions, cols=3)

    def frames(self, steps: Sequence[int]) -> list[np.ndarray]:
        """The net after each of ``steps`` (1-4: never the final one), through the plan's one camera."""
        if any(not 1 <= k <= SHOWN_FRAMES for k in steps):
            raise ValueError(f"the intermediate frames are after steps 1-{SHOWN_FRAMES}, got {list(steps)}")
        return [self.frame(k) for k in steps]

    def final_image(self) -> np.ndarray:
        """The final-form probe (§3.3 Q3): the flat net, then the net after the last step from the south-east and from
        the north-west, each camera fitted to that state, so together they show the top and all four sides (a face
        missing, two faces in one place, or a face off the cube is in sight)."""
        state = self.folding.states[LAST_STEP]
        faces = [state.corners[c] for c in self.cells]
        points = np.concatenate(faces)
        views = [render_folded(faces, [str(k) for k in self.labels], self.rgb(), fit_camera(points, view), size=FRAME_PX)
                 for view in (VIEW, FAR_VIEW)]
        captions = ["The net", f"After step {LAST_STEP}, from the south-east", "... from the north-west"]
        return tile([self.image(FRAME_PX), *views], captions, cols=3)


def net_key(cells: Sequence[Cell], labels: Sequence[int]) -> tuple[tuple[int, int], ...]:
    """The pairs of numbers that share an edge when ``labels`` number ``cells``, sorted."""
    label = dict(zip(cells, labels))
    return tuple(sorted((min(label[a], label[b]), max(label[a], label[b])) for a, b in net_edges(cells)))


def net_group(key: tuple[tuple[int, int], ...]) -> str:
    """The one of :data:`NET_GROUPS` a numbering falls in, by a hash of its :func:`net_key` (odds as the shares)."""
    digest = int.from_bytes(hashlib.sha256(repr(key).encode()).digest()[:8], "big") % sum(NET_GROUPS.values())
    for name, share in NET_GROUPS.items():
        if digest < share:
            return name
        digest -= share
    raise AssertionError("a share holds every hash")


def numbering(rng: np.random.Generator, cells: Sequence[Cell], group: str) -> tuple[tuple[int, ...], tuple[str, ...]]:
    """Numbers 1-6 shuffled over ``cells`` until the numbered net is in ``group``, then the six colours shuffled
    over them."""
    if group not in NET_GROUPS:
        raise ValueError(f"no net group {group!r}; the groups are {list(NET_GROUPS)}")
    for _ in range(NUMBERING_DRAWS):
        labels = tuple(int(v) + 1 for v in rng.permutation(6))
        if net_group(net_key(cells, labels)) == group:
            return labels, tuple(list(PALETTE)[int(v)] for v in rng.permutation(6))
    raise RuntimeError(f"no numbering of {list(cells)} in the group {group!r} after {NUMBERING_DRAWS} draws")


__all__ = ["PALETTE", "NET_PX", "FRAME_PX", "SHOWN_FRAMES", "NET_GROUPS", "ShownNet", "net_key", "net_group", "numbering"]
