"""The cube engine: facelet layout, move tables, notation, metric, kernels, conversions.

The conventions are in docs/conventions.md; :mod:`.kernels` holds the Numba
kernels, :mod:`.metric` the one spelling of the move metric and
:mod:`.rewards` the reward names and potentials.
"""

from .errors import CubeInputError, InvalidStateError, NotationError
from .facelets import COLOUR_LETTERS, COLOUR_RGB, FACES, SOLVED, SOLVED_FACELETS, colours
from .metric import METRICS, Metric, parse_metric
from .moves import (
    FACE_ACTIONS, MOVE_INDEX, MOVE_NAMES, ORIENTATION_NAMES, ORIENTATIONS, QUARTER_ACTIONS,
    TABLE, VIEW_ACTIONS,
)
from .notation import format_moves, invert_moves, parse
from .rewards import REWARDS, parse_reward
from .state import (
    canonical, from_colour_string, from_facelets, orientation_of, to_colour_string, to_cubie,
    to_facelets, validate_state,
)

__all__ = [
    "CubeInputError", "InvalidStateError", "NotationError",
    "COLOUR_LETTERS", "COLOUR_RGB", "FACES", "SOLVED", "SOLVED_FACELETS", "colours",
    "METRICS", "Metric", "parse_metric",
    "FACE_ACTIONS", "MOVE_INDEX", "MOVE_NAMES", "ORIENTATION_NAMES", "ORIENTATIONS", "QUARTER_ACTIONS",
    "TABLE", "VIEW_ACTIONS",
    "format_moves", "invert_moves", "parse",
    "REWARDS", "parse_reward",
    "canonical", "from_colour_string", "from_facelets", "orientation_of", "to_colour_string", "to_cubie",
    "to_facelets", "validate_state",
]
