"""Folding a net in 3D, one face at a time (STARE App. F.3): the geometry behind steps and frames.

The net lies on a table (the plane ``y = 0``; ``x`` east, ``z`` south, so north is the top of the
drawn net and ``y`` points up), cell ``(row, col)`` covering ``col..col+1`` by ``row..row+1``.  One
*base* face stays on the table.  Each step folds one face that is still unfolded and hinged to an
already placed face (the base or a folded one) by 90 degrees about their shared edge, towards the
inside of the cube (the side the placed face's inner normal points to: up, for faces hinged on the
base); every face attached beyond it (its subtree, seen from the base) turns with it.  The hinges
used are those of a breadth-first spanning tree from the base; a 2x2 block has one more shared edge,
which a fold then tears apart.

After every step the state is checked: an *overlap* is a newly placed face landing where a placed
face already is; a *tear* is two faces that share an edge in the net no longer sharing it in space.
A net folds into a cube exactly when no step overlaps or tears; the step where the first failure
happens is recorded, so a plan (base and order) can put it at the last step.

A step can also be *perturbed* (App. F.3: "inverting the rotation angle or modifying the rotation axis"):
``inverted`` folds the face by 90 degrees the other way (away from the inside); ``axis`` turns it by 90
degrees about one of its two *side* edges (the edges meeting its hinge edge) instead of the hinge, so it
comes off its hinge face (a tear: "disconnected faces").  A perturbed plan can also end without an overlap
or a tear but with a face off the cube (an inverted last fold): after the last step every face must sit
on a different face of the cube round the base, else that step fails as ``open``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from itertools import permutations
from typing import Iterable

import numpy as np

from .polyomino import STEPS, Cell, is_connected

CUBE_FACE_OF = {(1, 0, 0): "R", (-1, 0, 0): "L", (0, 1, 0): "U", (0, -1, 0): "D", (0, 0, 1): "F", (0, 0, -1): "B"}
"""The cube face a placed face sits on, from its direction out of the cube's centre (frame above)."""
ROUND = 9
"""Decimals kept after each 90-degree turn: corners stay on integer points, so rounding removes float drift."""


def cell_corners(cell: Cell) -> np.ndarray:
    """The 4 corners (4, 3) of ``cell`` lying on the table, going round the square (NW, NE, SE, SW)."""
    r, c = cell
    return np.array([[c, 0, r], [c + 1, 0, r], [c + 1, 0, r + 1], [c, 0, r + 1]], dtype=np.float64)


def corner_set(corners: np.ndarray) -> frozenset[tuple[int, int, int]]:
    """A square's corners as integer points (every fold keeps them on the integer lattice)."""
    return frozenset(map(tuple, np.rint(corners).astype(np.int64).tolist()))


def spanning_tree(cells: Iterable[Cell], base: Cell) -> dict[Cell, Cell]:
    """Each cell's parent on a breadth-first tree from ``base`` (neighbours in the order north, south,
    west, east): the hinge each face is folded about."""
    cells = set(cells)
    if base not in cells:
        raise ValueError(f"the base {base} is not one of the cells")
    parent: dict[Cell, Cell] = {}
    seen, queue = {base}, [base]
    while queue:
        cell = queue.pop(0)
        for dr, dc in STEPS.values():
            nxt = (cell[0] + dr, cell[1] + dc)
            if nxt in cells and nxt not in seen:
                seen.add(nxt)
                parent[nxt] = cell
                queue.append(nxt)
    return parent


def rotation(axis: np.ndarray, angle: float) -> np.ndarray:
    """The 3x3 matrix turning by ``angle`` radians about the unit vector ``axis`` (right-hand rule)."""
    x, y, z = axis / np.linalg.norm(axis)
    k = np.array([[0, -z, y], [z, 0, -x], [-y, x, 0]])
    return np.eye(3) + np.sin(angle) * k + (1 - np.cos(angle)) * (k @ k)


@dataclass
class FoldState:
    """Where every face is after some steps: corners (4, 3) and inner normal (3,), by cell."""

    corners: dict[Cell, np.ndarray]
    normals: dict[Cell, np.ndarray]
    placed: list[Cell] = field(default_factory=list)
    """The base and the faces folded so far, in order."""

    def copy(self) -> FoldState:
        return FoldState({c: v.copy() for c, v in self.corners.items()},
                         {c: v.copy() for c, v in self.normals.items()}, list(self.placed))

    def centre(self, cell: Cell) -> np.ndarray:
        return self.corners[cell].mean(axis=0)

    def is_flat(self, cell: Cell) -> bool:
        """Whether the face still lies on the table (every corner at height 0)."""
        return bool(np.all(np.rint(self.corners[cell][:, 1]) == 0))


@dataclass(frozen=True)
class Step:
    """One fold: ``face`` turns 90 degrees about its edge with ``hinge`` (a placed face), with ``moved``
    (``face`` and the unfolded faces beyond it); ``failure`` is ``"overlap"``, ``"tear"`` or ``None``."""

    face: Cell
    hinge: Cell
    moved: tuple[Cell, ...]
    failure: str | None
    clash: Cell | None
    """The face it overlaps (``None`` unless ``failure == "overlap"``)."""
    how: str = "fold"
    """``fold`` (inwards about the hinge), or a perturbation: ``inverted`` or ``axis`` (module docstring)."""
    line: int = 0
    """The world axis (0 x east, 1 y up, 2 z south) the turn is about: what a step in world terms says."""
    turn: int = 1
    """The turn's sense: +1 counterclockwise seen from the positive end of :attr:`line`, -1 clockwise."""


@dataclass(frozen=True)
class Fold:
    """A whole fold plan played out: the states before and after each step, the steps, the outcome."""

    base: Cell
    order: tuple[Cell, ...]
    states: tuple[FoldState, ...]
    """``states[0]`` is the flat net, ``states[k]`` the net after step ``k``."""
    steps: tuple[Step, ...]

    @property
    def first_failure(self) -> int | None:
        """The 1-based step of the first overlap or tear, ``None`` when the net folds into a cube."""
        return next((k + 1 for k, s in enumerate(self.steps) if s.failure), None)

    @property
    def folds(self) -> bool:
        return self.first_failure is None

    def cube_faces(self) -> dict[Cell, str]:
        """The cube face (URFDLB) each cell ends on, from the final state."""
        return {cell: cube_face(self.states[-1], cell, self.base) for cell in self.states[-1].corners}


def cube_face(state: FoldState, cell: Cell, base: Cell) -> str:
    """The cube face ``cell`` sits on in ``state``, from its centre's direction out of the cube's centre."""
    centre = state.centre(base) + 0.5 * state.normals[base]
    direction = tuple(int(v) for v in np.rint(2 * (state.centre(cell) - centre)))
    if direction not in CUBE_FACE_OF:
        raise ValueError(f"face {cell} is not on the cube around the base (offset {direction})")
    return CUBE_FACE_OF[direction]


def flat_state(cells: Iterable[Cell]) -> FoldState:
    """The net lying on the table, every inner normal pointing up; nothing placed yet."""
    cells = sorted(set(cells))
    return FoldState({c: cell_corners(c) for c in cells}, {c: np.array([0.0, 1.0, 0.0]) for c in cells})


def subtree(parent: dict[Cell, Cell], root: Cell) -> list[Cell]:
    """``root`` and every cell whose path to the base passes through it."""
    out = [root]
    for cell in out:
        out.extend(c for c, p in parent.items() if p == cell)
    return out


def shared_edge(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """The two corners that squares ``a`` and ``b`` (4, 3) share, or ``None``."""
    common = sorted(corner_set(a) & corner_set(b))
    return (np.array(common[0], np.float64), np.array(common[1], np.float64)) if len(common) == 2 else None


PERTURBATIONS = ("inverted", "axis")
"""The ways a step can be perturbed (module docstring)."""
AXIS_CHOICES = 4
"""An ``axis`` perturbation turns about one of the 2 side edges, one of 2 ways: 4 choices."""


def turn_about(state: FoldState, face: Cell, hinge: Cell, how: str, axis_choice: int) -> tuple[np.ndarray, np.ndarray,
                                                                                           float]:
    """The pivot point, axis and angle of one step: inwards about the hinge edge (``fold``), the other way
    (``inverted``), or about a side edge (``axis``, ``axis_choice`` in 0-3: which side edge, which way)."""
    edge = shared_edge(state.corners[face], state.corners[hinge])
    if edge is None:
        raise ValueError(f"faces {face} and {hinge} no longer share an edge")
    a, b = edge
    if how == "axis":
        if not 0 <= axis_choice < AXIS_CHOICES:
            raise ValueError(f"an axis perturbation takes a choice in 0-{AXIS_CHOICES - 1}, got {axis_choice}")
        pivot, far = ((a, b), (b, a))[axis_choice // 2]
        corners = state.corners[face]  # on the lattice: the side edge's far corner is 1 step from the pivot, not `far`
        steps = np.abs(corners - pivot).sum(axis=1)
        other = next(p for p, n in zip(corners, steps) if abs(n - 1) < 1e-6 and np.abs(p - far).sum() > 1e-6)
        return pivot, other - pivot, (np.pi / 2, -np.pi / 2)[axis_choice % 2]
    if how not in ("fold", "inverted"):
        raise ValueError(f"a step is 'fold' or one of the perturbations {PERTURBATIONS}, got {how!r}")
    # A quarter turn by +-90 degrees about the unit edge d takes v to +-(d x v) + d (d . v): how far the face's centre
    # then lies along the hinge face's inner normal, for each sense.
    d, v, inward = b - a, state.centre(face) - (a + b) / 2, state.normals[hinge]
    cross = (d[1] * v[2] - d[2] * v[1], d[2] * v[0] - d[0] * v[2], d[0] * v[1] - d[1] * v[0])
    across, along = float(np.dot(cross, inward)), float(np.dot(d, v) * np.dot(d, inward))
    for angle, sin in ((np.pi / 2, 1.0), (-np.pi / 2, -1.0)):
        if (sin * across + along > 0.25) == (how == "fold"):
            return a, d, angle
    raise AssertionError("one of the two 90-degree turns about an edge moves the face inwards")


def line_and_sense(axis: np.ndarray, angle: float) -> tuple[int, int]:
    """How a turn by ``angle`` about ``axis`` is put in world terms: the world axis it runs along (0 x east, 1 y up,
    2 z south) and its sense, +1 counterclockwise seen from that axis's positive end, -1 clockwise."""
    line = int(np.argmax(np.abs(axis)))
    return line, int(np.sign(axis[line] * angle))


def fold_step(state: FoldState, face: Cell, parent: dict[Cell, Cell], edges: list[tuple[Cell, Cell]],
              how: str = "fold", axis_choice: int = 0) -> tuple[FoldState, Step]:
    """``state`` after folding ``face`` about its hinge with its (placed) parent (or as perturbed by ``how``),
    and the step's record."""
    hinge = parent[face]
    if hinge not in state.placed or face in state.placed:
        raise ValueError(f"face {face} cannot be folded now: its hinge face {hinge} must be placed and it must not")
    a, axis, angle = turn_about(state, face, hinge, how, axis_choice)
    rot = rotation(axis, angle)
    moved = [c for c in subtree(parent, face) if c not in state.placed]
    new = state.copy()
    for c in moved:
        new.corners[c] = np.round((state.corners[c] - a) @ rot.T + a, ROUND)
        new.normals[c] = np.round(state.normals[c] @ rot.T, ROUND)
    squares = {c: corner_set(v) for c, v in new.corners.items()}
    clash = next((p for p in state.placed if squares[p] == squares[face]), None)
    torn = any(len(squares[u] & squares[v]) != 2 for u, v in edges)
    new.placed.append(face)
    failure = "overlap" if clash is not None else "tear" if torn else None
    line, turn = line_and_sense(axis, angle)
    return new, Step(face, hinge, tuple(moved), failure, clash, how, line, turn)


def is_closed(state: FoldState, base: Cell) -> bool:
    """Whether every face sits on a different face of the cube round the base."""
    try:
        faces = [cube_face(state, cell, base) for cell in state.corners]
    except ValueError:
        return False
    return len(set(faces)) == len(faces)


def net_edges(cells: Iterable[Cell]) -> list[tuple[Cell, Cell]]:
    """Every pair of cells sharing an edge in the flat net."""
    cells = set(cells)
    return [(c, (c[0] + dr, c[1] + dc)) for c in sorted(cells) for dr, dc in ((1, 0), (0, 1))
            if (c[0] + dr, c[1] + dc) in cells]


def fold(cells: Iterable[Cell], base: Cell, order: Iterable[Cell] | None = None,
         perturb: dict[Cell, tuple[str, int]] | None = None) -> Fold:
    """Fold the net from ``base`` in ``order`` (default: breadth-first), every step checked; ``perturb`` maps a
    face to how its step is perturbed (``("inverted", 0)`` or ``("axis", choice)``)."""
    cells = set(cells)
    if not is_connected(cells):
        raise ValueError(f"the cells {sorted(cells)} are not connected through shared edges")
    parent = spanning_tree(cells, base)
    order = tuple(parent) if order is None else tuple(order)
    if sorted(order) != sorted(cells - {base}):
        raise ValueError(f"the order must name every cell but the base once, got {order}")
    state = flat_state(cells)
    state.placed.append(base)
    states, steps, edges = [state], [], net_edges(cells)
    perturb = perturb or {}
    if set(perturb) - set(order):
        raise ValueError(f"only folded faces can be perturbed, got {sorted(set(perturb) - set(order))}")
    for face in order:
        state, step = fold_step(state, face, parent, edges, *perturb.get(face, ("fold", 0)))
        states.append(state)
        steps.append(step)
    if not any(s.failure for s in steps) and not is_closed(state, base):
        steps[-1] = replace(steps[-1], failure="open")
    return Fold(base, order, tuple(states), tuple(steps))


def orders(cells: Iterable[Cell], base: Cell) -> list[tuple[Cell, ...]]:
    """Every order in which the faces can be folded from ``base`` (each face after its hinge face)."""
    parent = spanning_tree(cells, base)
    out = []
    for perm in permutations(sorted(parent)):
        done = {base}
        ok = True
        for c in perm:
            if parent[c] not in done:
                ok = False
                break
            done.add(c)
        if ok:
            out.append(perm)
    return out


def plans(cells: Iterable[Cell]) -> list[tuple[Cell, tuple[Cell, ...]]]:
    """Every (base, order) fold plan of ``cells``."""
    cells = sorted(set(cells))
    return [(base, order) for base in cells for order in orders(cells, base)]


__all__ = ["CUBE_FACE_OF", "cell_corners", "corner_set", "spanning_tree", "rotation", "FoldState", "Step", "Fold", "cube_face",
           "flat_state", "subtree", "shared_edge", "turn_about", "line_and_sense", "fold_step", "PERTURBATIONS", "AXIS_CHOICES", "is_closed", "net_edges", "fold", "orders", "plans"]
