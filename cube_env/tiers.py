"""The tier registry: one :class:`TierSpec` per observation tier, the one home of every per-tier fact.

A tier is a function O(s) of the held cube's 54 colour indices (URFDLB order,
``cubebench.engine.facelets``).  Its spec says everything the layers above need
to know about it: its name and Gymnasium id, whether it shows part of the cube
(then its env has the view actions ``x y z`` and its agent the ``rotate``
tool), which faces it shows, its observation forms (default first) and their
spaces, its pure image and text functions, whether ``info`` hides the ground
truth, the rotations after which every face has been in view, and how the task
texts describe it.  The wrappers (``cubebench.wrappers``), the multi-agent
seats' views (``cubebench.envs.multi.views``), the tools, prompts, the episode
loop, the scripted agents and teams, the runner and the bridges all read it.

This module sits in the engine layer (it imports the engine and the
renderers only), so the envs can use it; it does not import Gymnasium at the
top (:meth:`TierSpec.space` does, when asked), so ``import cubebench``
registers the ids without loading Gymnasium or the wrappers
(:mod:`cubebench.registration`).

Adding a tier: write its renderer in ``cubebench.render`` (an image function
of 54 colour indices and a size, and a text function of 54 colour indices),
add one :class:`TierSpec` to :data:`TIER_SPECS`, and nothing else has to
change (docs/architecture.md, "Adding a tier").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from .engine import ORIENTATION_NAMES, ORIENTATIONS
from .engine.facelets import CENTRES, COLOUR_LETTERS, FACES, N_STICKERS, face_slice
from .render.canvas import StickerCanvas
from .render.face import face_canvas, render_face
from .render.net import net_canvas, render_net
from .render.text import face_text_grid, net_text_grid, vertex_text_grids
from .render.vertex import render_vertex, vertex_canvas

FRONT = face_slice("F")
"""Positions of the held cube's F face in the colour array (what the Face tier shows)."""

PUBLIC_INFO_KEYS = frozenset({"depth", "steps", "moves", "is_success", "reward_kind",
                              "moves_left", "rotations_left", "refused"})
"""``info`` keys a tier that hides the state passes on: episode bookkeeping (the budgets
left, a refused action's reason) and the task's curriculum depth, nothing
computed from the current or initial state beyond whether it is solved
(which termination reveals anyway).  The dense reward's potential ``phi`` is
hidden too (it is a function of the hidden state: minus the exact distance
with the oracle reward), and so is ``phi_source`` (whether the solver
answered in time depends on the distance); the reward itself is the agent's
to see."""


def _opposite_corner_rotation() -> str:
    """The whole-cube rotation that brings the D, L and B faces to where U, F and R are seen."""
    for name, rot in zip(ORIENTATION_NAMES, ORIENTATIONS):
        if {int(rot[CENTRES[f]]) // 9 for f in (0, 2, 1)} == {3, 4, 5}:
            return name
    raise AssertionError("no rotation shows the opposite corner")


def _colour_string(colours: np.ndarray) -> str:
    """54 colour indices as 54 colour letters ``WRGYOB``."""
    return "".join(COLOUR_LETTERS[int(c)] for c in colours)


@dataclass(frozen=True)
class TierSpec:
    """Everything about one tier that does not depend on a layer above the engine."""

    name: str
    """As the ids, suites, records and command line spell it (``symbolic``)."""
    forms: tuple[str, ...]
    """Observation forms, the default first: ``onehot``, ``indices``, ``image``, ``text``.  ``indices`` is the colour
    indices of the stickers the tier shows (:attr:`visible`, in facelet order): all 54 on Symbolic, the F face's 9 on
    Face, U, R and F's 27 on Vertex (the compact form of a partial view, for RL)."""
    title: str
    """As tables and plots title it (``Symbolic``)."""
    env_id: str
    """The Gymnasium id (``CubeBench-Symbolic-v0``)."""
    visible_faces: str
    """Faces of the held cube the tier shows (``URFDLB`` for all of them)."""
    image: Callable[[np.ndarray, int], np.ndarray]
    """The tier's picture of 54 colour indices at a size (Symbolic: the net, for render panels)."""
    text: Callable[[np.ndarray], str]
    """The tier's text of 54 colour indices in colour letters ``WRGYOB`` (reads only what it shows)."""
    canvas: Callable[[int], StickerCanvas]
    """The sticker layout of :attr:`image` at a size (where each shown sticker is painted)."""
    task_note: str
    """How the episode task text says what the agent is shown (after "a 3x3 Rubik's cube")."""
    seat_note: str
    """How a multi-agent seat is told what it sees (after "You see")."""
    looks: tuple[str, ...] = ()
    """Whole-cube rotations, one per step, after which every face has been in view (partial tiers)."""
    hides_state: bool = True
    """Whether ``info`` keeps only :data:`PUBLIC_INFO_KEYS` (every tier but Symbolic, which is the state)."""
    vector_forms: tuple[str, ...] = ()
    """The forms the native batched env (``gym.make_vec(id, num_envs=N)``) steps in one Numba call, default first."""
    text_note: str = "grids of colour letters"
    """How a multi-agent seat is told what the text form looks like (after "shown as")."""
    wrapper: str = "TierObservation"
    """The observation wrapper class of ``cubebench.wrappers.observations`` that ``make_cube_env`` builds (by name:
    this layer does not import the wrappers); a tier needs a class of its own only for options of its own."""

    @property
    def pictured(self) -> bool:
        """Whether the tier shows a picture (an ``image`` form); otherwise it shows the state itself, as arrays or
        a string, and an episode shows it to a model as text."""
        return "image" in self.forms

    @property
    def vector(self) -> bool:
        """Whether the tier has a native batched env."""
        return bool(self.vector_forms)

    @property
    def partial(self) -> bool:
        """Whether the tier shows part of the cube: its env has the view actions, its agent ``rotate``."""
        return len(self.visible_faces) < len(FACES)

    @property
    def visible(self) -> tuple[int, ...]:
        """Positions of the held cube the tier shows, in facelet order."""
        return tuple(p for p in range(N_STICKERS) if FACES[p // 9] in self.visible_faces)

    def space(self, form: str, size: int = 224, extra_chars: str = "") -> Any:
        """The Gymnasium observation space of ``form`` (``size``: an image's side; ``extra_chars``:
        more characters a text form may hold, e.g. a hidden view's ``?``)."""
        from gymnasium import spaces

        if form not in self.forms:
            raise ValueError(f"the {self.name} tier's forms are {self.forms}, got {form!r}")
        if form == "onehot":
            return spaces.Box(0, 1, shape=(N_STICKERS, 6), dtype=np.uint8)
        if form == "indices":
            return spaces.Box(0, 5, shape=(len(self.visible),), dtype=np.uint8)
        if form == "image":
            return spaces.Box(0, 255, shape=(size, size, 3), dtype=np.uint8)
        sample = self.text(np.zeros(N_STICKERS, dtype=np.uint8))
        charset = "".join(sorted(set(sample) | set(COLOUR_LETTERS) | set(extra_chars)))
        return spaces.Text(min_length=len(sample), max_length=len(sample), charset=charset)

    def quarter_looks(self) -> tuple[str, ...]:
        """:attr:`looks` as single quarter rotations (``x2`` is ``x x``), for a seat that turns once a step."""
        out: list[str] = []
        for token in " ".join(self.looks).split():
            out += [token[0]] * 2 if token.endswith("2") else [token]
        return tuple(out)


TIER_SPECS: dict[str, TierSpec] = {spec.name: spec for spec in (
    TierSpec(
        name="symbolic", title="Symbolic", env_id="CubeBench-Symbolic-v0",
        forms=("onehot", "indices", "text"), visible_faces=FACES,
        image=render_net, text=_colour_string, canvas=net_canvas,
        task_note=f" given as a 54-letter facelet string in {FACES} order", seat_note="the whole cube",
        hides_state=False, vector_forms=("onehot", "indices"), wrapper="SymbolicObservation",
        text_note=(f"54 colour letters, faces {' '.join(FACES)} in that order, each face's 9 stickers row by row as "
                   "on the standard net")),
    TierSpec(
        name="visual", title="Visual", env_id="CubeBench-Visual-v0",
        forms=("image", "text"), visible_faces=FACES,
        image=render_net, text=net_text_grid, canvas=net_canvas,
        task_note=" shown as an unfolded net", seat_note="the whole cube as an unfolded net", vector_forms=("image",),
        wrapper="NetObservation"),
    TierSpec(
        name="face", title="Face", env_id="CubeBench-Face-v0",
        forms=("image", "text", "indices"), visible_faces="F", vector_forms=("image", "indices"),
        image=lambda col, size: render_face(col[FRONT], size), text=lambda col: face_text_grid(col[FRONT]),
        canvas=face_canvas,
        task_note=" of which you see only the front face", seat_note="one face (the front)",
        looks=("y", "y", "y", "x", "x2"), wrapper="FaceViewObservation"),
    TierSpec(
        name="vertex", title="Vertex", env_id="CubeBench-Vertex-v0",
        forms=("image", "text", "indices"), visible_faces="UFR", vector_forms=("image", "indices"),
        image=render_vertex, text=vertex_text_grids, canvas=vertex_canvas,
        task_note=" of which you see the up, front and right faces from a corner",
        seat_note="three faces from a corner", looks=(_opposite_corner_rotation(),), wrapper="VertexViewObservation"),
)}
"""Every tier, in the order of the papers (Tier 1, 2, 3a, 3b)."""

TIERS: dict[str, str] = {name: spec.env_id for name, spec in TIER_SPECS.items()}
"""Tier name -> Gymnasium id."""
PARTIAL_TIERS: tuple[str, ...] = tuple(name for name, spec in TIER_SPECS.items() if spec.partial)
"""Tiers that show part of the cube: their env has the view actions and their agent the ``rotate`` tool."""
VECTOR_TIERS: tuple[str, ...] = tuple(name for name, spec in TIER_SPECS.items() if spec.vector)
"""Tiers with a native batched env: ``gym.make_vec(id, num_envs=N)`` steps them in one Numba call."""


DEFAULT_TIER = "symbolic"
"""The tier played where none is named (the command line, the bridges, the exports): Tier 1, the state itself."""


def tier_title(tier: str) -> str:
    """``tier`` as tables and plots title it (its spec's :attr:`~TierSpec.title`; an unregistered name as it is,
    so a stored run of a tier this checkout lacks still reports)."""
    spec = TIER_SPECS.get(tier)
    return spec.title if spec else tier


def tier_names(having: str | None = None, *, titled: bool = False) -> str:
    """The registered tiers, or those whose boolean spec field ``having`` is true (``pictured``, ``partial``,
    ``hides_state``, ``vector``), as a sentence lists them: ``tier_names("pictured")`` is ``visual, face and
    vertex``, ``tier_names("partial", titled=True)`` is ``Face and Vertex``.  Read at call time, so every text
    made with it names a tier added to :data:`TIER_SPECS`."""
    if having is not None and not isinstance(getattr(TierSpec, having, None), property) \
            and having not in TierSpec.__dataclass_fields__:
        raise ValueError(f"TierSpec has no field {having!r}")
    names = [spec.title if titled else spec.name for spec in TIER_SPECS.values()
             if having is None or getattr(spec, having)]
    return " and ".join(filter(None, (", ".join(names[:-1]), names[-1]))) if names else "no tier"


def tier_spec(tier: str) -> TierSpec:
    """The spec of ``tier``; ``ValueError`` naming the tiers for anything else."""
    try:
        return TIER_SPECS[tier]
    except (KeyError, TypeError):
        raise ValueError(f"unknown tier {tier!r}; expected one of {sorted(TIER_SPECS)}") from None


__all__ = ["TierSpec", "TIER_SPECS", "TIERS", "PARTIAL_TIERS", "VECTOR_TIERS", "PUBLIC_INFO_KEYS", "FRONT",
           "DEFAULT_TIER", "tier_spec", "tier_title", "tier_names"]
