"""What a seat sees: one of the four tiers, rendered from the shared cube's colours.

The same tiers as the single-agent ids (docs/tiers.md), built here from the engine's renderers
(``cubebench.render``), since the envs layer sits below the wrappers: Symbolic (``onehot``,
``indices`` or ``text``), Visual (the unfolded net: ``image`` or ``text``), Face (the held
cube's F face) and Vertex (U, F and R seen from the UFR corner).  Text forms write colours
``WRGYOB`` (the Symbolic text too, unlike the single-agent Symbolic text, which relabels by
centres): face turns in the multi-agent envs are named by centre colour, so a seat must be able
to tell the colours apart.

A view may look at the cube turned by a whole-cube ``rotation`` (notation, e.g. ``"y x2"``):
the second camera of the two-camera env sees the Vertex View of the cube so turned, which
shows the D, L and B faces.  :meth:`SeatView.hidden` is a blank observation of the same space,
for a seat that must not see the cube yet (the solver while the scrambler works).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
from gymnasium import spaces

from ...engine import kernels
from ...engine.facelets import COLOUR_LETTERS, N_STICKERS, SOLVED
from ...engine.moves import TABLE
from ...engine.notation import parse_array
from ...render.face import render_face
from ...render.net import render_net
from ...render.text import face_text_grid, net_text_grid, vertex_text_grids
from ...render.vertex import render_vertex

FORMS = {
    "symbolic": ("onehot", "indices", "text"),
    "visual": ("image", "text"),
    "face": ("image", "text"),
    "vertex": ("image", "text"),
}
"""Each tier's observation forms, the default first (as the single-agent ids)."""
PARTIAL_TIERS = ("face", "vertex")
"""Tiers that show part of the cube: their seat gets the view rotations ``x x' y y' z z'``."""
VISIBLE = {"symbolic": tuple(range(N_STICKERS)), "visual": tuple(range(N_STICKERS)),
           "face": tuple(range(18, 27)), "vertex": tuple(range(27))}
"""Positions of the (rotated) held cube that each tier shows."""
HIDDEN_CHAR = "?"
"""What a hidden text observation is made of."""
_F_FACE = slice(18, 27)
_ONE_HOT = np.eye(6, dtype=np.uint8)


@dataclass(frozen=True)
class SeatView:
    """One seat's tier, form, image size and the rotation it looks at the held cube through."""

    tier: str = "symbolic"
    form: str = ""
    size: int = 224
    rotation: str = ""

    def __post_init__(self) -> None:
        if self.tier not in FORMS:
            raise ValueError(f"unknown tier {self.tier!r}; expected one of {sorted(FORMS)}")
        if not self.form:
            object.__setattr__(self, "form", FORMS[self.tier][0])
        if self.form not in FORMS[self.tier]:
            raise ValueError(f"the {self.tier} tier's forms are {FORMS[self.tier]}, got {self.form!r}")
        if isinstance(self.size, bool) or not isinstance(self.size, int) or self.size < 48:
            raise ValueError(f"image_size must be an int >= 48, got {self.size!r}")
        if not isinstance(self.rotation, str) or any(name[0] not in "xyz" for name in self.rotation.split()):
            raise ValueError(f"a view's rotation is whole-cube rotations x y z only, got {self.rotation!r}")
        parse_array(self.rotation)  # NotationError (a ValueError) on a bad token

    @property
    def partial(self) -> bool:
        """Whether this view shows part of the cube (Face, Vertex)."""
        return self.tier in PARTIAL_TIERS

    @property
    def visible(self) -> np.ndarray:
        """The positions of the view that this tier shows (all 54, the F face's 9, or U, R, F's 27)."""
        return np.array(VISIBLE[self.tier])

    @cached_property
    def gather(self) -> np.ndarray:
        """Held position shown at each position of this view: the view's colours are ``colours[gather]``."""
        return kernels.apply_moves(SOLVED, TABLE, parse_array(self.rotation))

    @cached_property
    def space(self) -> spaces.Space:
        """The observation space of this view (one object per view)."""
        if self.form == "onehot":
            return spaces.Box(0, 1, shape=(N_STICKERS, 6), dtype=np.uint8)
        if self.form == "indices":
            return spaces.Box(0, 5, shape=(N_STICKERS,), dtype=np.uint8)
        if self.form == "image":
            return spaces.Box(0, 255, shape=(self.size, self.size, 3), dtype=np.uint8)
        sample = self._text(np.zeros(N_STICKERS, dtype=np.uint8))
        charset = "".join(sorted(set(sample) | set(COLOUR_LETTERS) | {HIDDEN_CHAR}))
        return spaces.Text(min_length=len(sample), max_length=len(sample), charset=charset)

    def observe(self, colours: np.ndarray) -> Any:
        """The observation of a held cube given as 54 colour indices (a new object every call)."""
        col = np.asarray(colours, dtype=np.uint8)[self.gather]
        if self.form == "onehot":
            return _ONE_HOT[col]
        if self.form == "indices":
            return col.copy()
        if self.form == "image":
            return self.image(col)
        return self._text(col)

    def image(self, col: np.ndarray) -> np.ndarray:
        """The tier's picture of these (already rotated) colours; the net for Symbolic (render panels use it)."""
        if self.tier == "face":
            return render_face(col[_F_FACE], self.size)
        if self.tier == "vertex":
            return render_vertex(col, self.size)
        return render_net(col, self.size)

    def _text(self, col: np.ndarray) -> str:
        if self.tier == "symbolic":
            return "".join(COLOUR_LETTERS[c] for c in col)
        if self.tier == "visual":
            return net_text_grid(col)
        if self.tier == "face":
            return face_text_grid(col[_F_FACE])
        return vertex_text_grids(col)

    def hidden(self) -> Any:
        """A blank observation in :attr:`space`: zeros, or the form's length of ``?``."""
        space = self.space
        if isinstance(space, spaces.Text):
            return HIDDEN_CHAR * space.max_length
        assert isinstance(space, spaces.Box)
        return np.zeros(space.shape, dtype=space.dtype)


__all__ = ["SeatView", "FORMS", "PARTIAL_TIERS", "VISIBLE", "HIDDEN_CHAR"]
