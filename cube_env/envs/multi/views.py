"""What a seat sees: one of the four tiers, rendered from the shared cube's colours.

The same tiers as the single-agent ids (docs/tiers.md), read off the tier registry
(:mod:`cubebench.tiers`, below the envs layer): Symbolic (``onehot``,
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
from ...engine.facelets import SOLVED
from ...engine.moves import TABLE
from ...engine.notation import parse_array
from ...tiers import TIER_SPECS, TierSpec, tier_spec
HIDDEN_CHAR = "?"
"""What a hidden text observation is made of."""
_ONE_HOT = np.eye(6, dtype=np.uint8)


@dataclass(frozen=True)
class SeatView:
    """One seat's tier, form, image size and the rotation it looks at the held cube through."""

    tier: str = "symbolic"
    form: str = ""
    size: int = 224
    rotation: str = ""

    def __post_init__(self) -> None:
        forms = tier_spec(self.tier).forms
        if not self.form:
            object.__setattr__(self, "form", forms[0])
        if self.form not in forms:
            raise ValueError(f"the {self.tier} tier's forms are {forms}, got {self.form!r}")
        if isinstance(self.size, bool) or not isinstance(self.size, int) or self.size < 48:
            raise ValueError(f"image_size must be an int >= 48, got {self.size!r}")
        if not isinstance(self.rotation, str) or any(name[0] not in "xyz" for name in self.rotation.split()):
            raise ValueError(f"a view's rotation is whole-cube rotations x y z only, got {self.rotation!r}")
        parse_array(self.rotation)  # NotationError (a ValueError) on a bad token

    @property
    def spec(self) -> TierSpec:
        """The tier's registry entry."""
        return TIER_SPECS[self.tier]

    @property
    def partial(self) -> bool:
        """Whether this view shows part of the cube (Face, Vertex): its seat gets the view rotations."""
        return self.spec.partial

    @property
    def visible(self) -> np.ndarray:
        """The positions of the view that this tier shows (all 54, the F face's 9, or U, R, F's 27)."""
        return np.array(self.spec.visible)

    @cached_property
    def gather(self) -> np.ndarray:
        """Held position shown at each position of this view: the view's colours are ``colours[gather]``."""
        return kernels.apply_moves(SOLVED, TABLE, parse_array(self.rotation))

    @cached_property
    def space(self) -> spaces.Space:
        """The observation space of this view (one object per view)."""
        return self.spec.space(self.form, self.size, extra_chars=HIDDEN_CHAR)

    def observe(self, colours: np.ndarray) -> Any:
        """The observation of a held cube given as 54 colour indices (a new object every call)."""
        col = np.asarray(colours, dtype=np.uint8)[self.gather]
        if self.form == "onehot":
            return _ONE_HOT[col]
        if self.form == "indices":
            return col[self.visible]  # the stickers the tier shows (a new array): 54, or a partial view's 9 or 27
        if self.form == "image":
            return self.image(col)
        return self.spec.text(col)

    def image(self, col: np.ndarray) -> np.ndarray:
        """The tier's picture of these (already rotated) colours; the net for Symbolic (render panels use it)."""
        return self.spec.image(col, self.size)

    def hidden(self) -> Any:
        """A blank observation in :attr:`space`: zeros, or the form's length of ``?``."""
        space = self.space
        if isinstance(space, spaces.Text):
            return HIDDEN_CHAR * space.max_length
        assert isinstance(space, spaces.Box)
        return np.zeros(space.shape, dtype=space.dtype)


__all__ = ["SeatView", "HIDDEN_CHAR"]
