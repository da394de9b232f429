"""Kociemba's two-phase solver (the ``kociemba`` C package), made safe to call.

The wrapper accepts any valid state, also a cube held in another
orientation (solutions act on the held cube's faces), returns the empty
solution for a solved cube, validates input with the engine (so errors are
:class:`InvalidStateError`, never the package's bare message) and checks every
solution with the engine before returning it.
"""

from __future__ import annotations

import kociemba
import numpy as np

from ..engine import kernels
from ..engine.errors import InvalidStateError
from ..engine.moves import TABLE
from ..engine.notation import parse_array
from ..engine.state import from_facelets, relabel_to_centres, validate_state

MAX_SOLUTION_LENGTH = 24
"""kociemba's search bound; never smaller (measured while CubeBench was built: small bounds block for minutes)."""


def _as_state(cube: np.ndarray | str) -> np.ndarray:
    if isinstance(cube, str):
        return from_facelets(cube)
    return validate_state(cube)


def solve_twophase(cube: np.ndarray | str) -> str:
    """A short (not necessarily optimal) solution of ``cube``, in face-turn notation."""
    state = _as_state(cube)
    if kernels.is_solved(state):
        return ""
    solution = kociemba.solve(relabel_to_centres(state), max_depth=MAX_SOLUTION_LENGTH)
    if not kernels.is_solved(kernels.apply_moves(state, TABLE, parse_array(solution))):
        raise InvalidStateError(f"two-phase solution {solution!r} does not solve the cube")
    return solution
