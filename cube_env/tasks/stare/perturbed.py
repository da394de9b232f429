"""Perturbed fold plans worded exactly as a valid fold (STARE App. F.3): negatives the text cannot give away.

The ``perturbed`` setup of ``net-fold`` asks whether five turns, written in world terms (:meth:`.shown.ShownNet.
turns_text`), fold the drawn net into a cube.  What the words of a plan say, up to the face numbers, is its
*signature*: for each step, which face it is hinged on (the base, or the face turned at an earlier step), the
world line it turns about and the sense.  A valid fold's signature pins the net down (no two valid folds of the
cube nets, in any orientation, share one), and most perturbed plans have a signature no valid fold has: counting
the turns of each line told them apart from folds (issue 33: "Yes iff at most 3 east-west, 3 north-south and 2
vertical turns" scored 0.62).

So a No item's plan is drawn among the perturbed plans whose signature *is* a valid fold's, and its pair's Yes
item shows that valid fold: the two items' turns read the same, word for word up to the numbers, and only the
drawing tells which net they were written for.  :func:`matched_plans` enumerates every such (valid, perturbed)
couple over the depth's cube nets in all orientations, by walking the fold plans step by step with the fold
check's own :func:`.folding.fold_step` (a perturbed walk is cut as soon as its words leave every valid fold's).
The couples come in kinds by the two nets' free shapes, and every kind (x, y) has as many couples as (y, x)
(a test checks it), so Yes and No items show each shape equally often; a kind holds every orientation of its
couples, so the drawing's orientation says nothing either.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterator

import numpy as np

from .folding import (AXIS_CHOICES, FoldState, PERTURBATIONS, cell_corners, flat_state, fold, fold_step, line_and_sense,
                      net_edges, shared_edge, spanning_tree, turn_about)
from .nets import LAST_STEP, shape_id, valid_pool
from .polyomino import SYMMETRIES, Cell, Cells

Signature = tuple[tuple[int, int, int], ...]
"""What a plan's words say, step by step: (the hinge: 0 the base, k the face turned at step k; the world line,
0 east-west, 1 vertical, 2 north-south; the sense, +1 counterclockwise seen from the line's positive end)."""


@dataclass(frozen=True)
class Plan:
    """A fold plan of one oriented net: base cell, folding order, and at most one perturbed step."""

    cells: tuple[Cell, ...]
    base: Cell
    order: tuple[Cell, ...]
    perturb: tuple[Cell, str, int] | None
    """The perturbed step: its face, how (``inverted`` or ``axis``) and the axis choice; ``None``: a valid fold."""

    @property
    def shape(self) -> int:
        """The free hexomino's id (:func:`.nets.shape_id`)."""
        return shape_id(frozenset(self.cells))

    def signature(self) -> Signature:
        """The plan's words (module docstring), from the fold check."""
        perturb = None if self.perturb is None else {self.perturb[0]: self.perturb[1:]}
        played = fold(self.cells, self.base, self.order, perturb)
        at = {self.base: 0, **{face: k for k, face in enumerate(self.order, 1)}}
        return tuple((at[step.hinge], step.line, step.turn) for step in played.steps)


def _walk(cells: Cells, perturbing: bool, allowed: frozenset[Signature] | None) -> Iterator[tuple[Plan, Signature]]:
    """Every plan of the oriented net ``cells`` (valid ones, or those with exactly one perturbed step not hinged on
    the base when ``perturbing``), with its signature; a walk whose words so far are not in ``allowed`` (when given)
    is cut there."""
    edges = net_edges(cells)
    for base in sorted(cells):
        parent = spanning_tree(cells, base)
        state = flat_state(cells)
        state.placed.append(base)
        yield from _extend(tuple(sorted(cells)), base, parent, edges, state, (), (), None, perturbing, allowed)


def _extend(cells: tuple[Cell, ...], base: Cell, parent: dict[Cell, Cell], edges: list[tuple[Cell, Cell]],
            state: FoldState, order: tuple[Cell, ...], words: Signature, perturb: tuple[Cell, str, int] | None,
            perturbing: bool, allowed: frozenset[Signature] | None) -> Iterator[tuple[Plan, Signature]]:
    if len(order) == LAST_STEP:
        if (perturb is not None) == perturbing:
            yield Plan(cells, base, order, perturb), words
        return
    at = {base: 0, **{face: k for k, face in enumerate(order, 1)}}
    for face in sorted(parent):
        if face in at or parent[face] not in at:
            continue
        hows = [("fold", 0)]
        if perturbing and perturb is None and parent[face] != base:
            hows += [(how, choice) for how in PERTURBATIONS for choice in range(AXIS_CHOICES if how == "axis" else 1)]
        for how, choice in hows:
            try:  # the words first (cheap), the turn itself only where they can still be a valid fold's
                said = words + ((at[parent[face]], *line_and_sense(*turn_about(state, face, parent[face], how,
                                                                                choice)[1:])),)
            except ValueError:  # a face torn off earlier no longer shares its hinge edge
                continue
            if allowed is not None and said not in allowed:
                continue
            after, _ = fold_step(state, face, parent, edges, how, choice)
            yield from _extend(cells, base, parent, edges, after, order + (face,), said,
                               perturb if how == "fold" else (face, how, choice), perturbing, allowed)


def _world(symmetry: int) -> np.ndarray:
    """The 3x3 matrix by which symmetry ``symmetry`` of the drawing (:data:`.polyomino.SYMMETRIES`, acting on (row,
    col)) moves the world (x east = col, y up, z south = row); y stays."""
    f = SYMMETRIES[symmetry]
    matrix = np.zeros((3, 3), dtype=np.int64)
    matrix[1, 1] = 1
    for axis, (r, c) in ((0, (0, 1)), (2, (1, 0))):
        row, col = f(r, c)
        matrix[0, axis], matrix[2, axis] = col, row
    return matrix


def moved_words(words: Signature, symmetry: int) -> Signature:
    """The words of a plan after the drawing is turned or mirrored by ``symmetry``: a turn about world axis u by
    angle t becomes a turn about M u by det(M) t, so each line is mapped and its sense kept or flipped."""
    matrix = _world(symmetry)
    det = int(round(np.linalg.det(matrix)))
    out = []
    for hinge, line, turn in words:
        image = matrix[:, line]
        new = int(np.argmax(np.abs(image)))
        out.append((hinge, new, int(image[new]) * det * turn))
    return tuple(out)


def moved_plan(plan: Plan, symmetry: int) -> Plan:
    """``plan`` on its net turned or mirrored by ``symmetry`` (translated back to the origin), the same turns carried
    along: a perturbed step keeps its kind, and an axis turn the same side edge and sense (whose choice number, 0-3,
    depends on how the hinge edge's ends sort: recomputed from the fold before that step)."""
    f = SYMMETRIES[symmetry]
    images = {cell: f(*cell) for cell in plan.cells}
    r0, c0 = min(r for r, _ in images.values()), min(c for _, c in images.values())
    at = {cell: (r - r0, c - c0) for cell, (r, c) in images.items()}
    perturb = None if plan.perturb is None else (at[plan.perturb[0]], plan.perturb[1],
                                                 _moved_choice(plan, symmetry, at))
    return Plan(tuple(sorted(at.values())), at[plan.base], tuple(at[c] for c in plan.order), perturb)


@lru_cache(maxsize=4096)
def _hinge_edge(plan: Plan) -> tuple[np.ndarray, np.ndarray]:
    """The two ends (as the fold check sorts them) of the edge the perturbed face of ``plan`` shares with its hinge
    face just before its step."""
    face = plan.perturb[0]  # type: ignore[index]
    state = fold(plan.cells, plan.base, plan.order).states[plan.order.index(face)]
    ends = shared_edge(state.corners[face], state.corners[spanning_tree(plan.cells, plan.base)[face]])
    if ends is None:
        raise ValueError(f"the perturbed face of {plan} is not on its hinge face before its step")
    return ends


def _moved_choice(plan: Plan, symmetry: int, at: dict[Cell, Cell]) -> int:
    """The axis choice that names, on the moved net, the side edge and sense the perturbed step of ``plan`` turns about
    (:func:`.folding.turn_about`: choice // 2 picks the pivot among the hinge edge's two ends as sorted, choice % 2
    the sense, which a mirror flips)."""
    face, how, choice = plan.perturb  # type: ignore[misc]
    if how != "axis":
        return choice
    matrix, ends = _world(symmetry), _hinge_edge(plan)
    # where the drawing's symmetry puts a point: the linear part, then the shift that lands the base square on its cell
    base = cell_corners(plan.base) @ matrix.T
    shift = np.array([at[plan.base][1], 0, at[plan.base][0]]) - base.min(axis=0)
    moved = [tuple(int(v) for v in np.rint(p @ matrix.T + shift)) for p in ends]
    pivot = moved[choice // 2]
    sense = choice % 2 if round(np.linalg.det(matrix)) > 0 else 1 - choice % 2
    return 2 * sorted(moved).index(pivot) + sense


@lru_cache(maxsize=None)
def valid_plans(depth: int) -> dict[Signature, Plan]:
    """Every valid fold plan of every cube net ``depth`` asks (:func:`.nets.valid_pool`), in every orientation, by
    its signature (no two share one: ``ValueError`` otherwise).  The nets are walked as catalogued; the other
    orientations' plans and words are their images under the 8 symmetries (a test checks the images' words against
    the fold check's)."""
    out: dict[Signature, Plan] = {}
    for shape in valid_pool(depth):
        for plan, words in _walk(shape, perturbing=False, allowed=None):
            for symmetry in range(len(SYMMETRIES)):
                image, said = moved_plan(plan, symmetry), moved_words(words, symmetry)
                if out.setdefault(said, image) != image:
                    raise ValueError(f"two valid folds read alike: {out[said]} and {image}")
    return out


@lru_cache(maxsize=None)
def matched_plans(depth: int) -> dict[tuple[int, int], tuple[tuple[Plan, Plan], ...]]:
    """Every (valid plan, perturbed plan) couple of the cube nets of ``depth`` whose words are the same, grouped by
    kind: (the valid plan's free shape, the perturbed plan's), each kind in a fixed order.  The perturbed plans are
    walked on the nets as catalogued and carried to every orientation (:func:`moved_plan`)."""
    valid = valid_plans(depth)
    prefixes = frozenset(words[:k] for words in valid for k in range(1, LAST_STEP + 1))
    couples: set[tuple[Plan, Plan]] = set()
    for shape in valid_pool(depth):
        for plan, words in _walk(shape, perturbing=True, allowed=prefixes):
            if words not in valid:
                continue
            for symmetry in range(len(SYMMETRIES)):
                couples.add((valid[moved_words(words, symmetry)], moved_plan(plan, symmetry)))
    kinds: dict[tuple[int, int], list[tuple[Plan, Plan]]] = defaultdict(list)
    for couple in sorted(couples, key=repr):
        kinds[(couple[0].shape, couple[1].shape)].append(couple)
    return {kind: tuple(found) for kind, found in sorted(kinds.items())}


__all__ = ["Signature", "Plan", "moved_words", "moved_plan", "valid_plans", "matched_plans"]
