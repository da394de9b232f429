"""The cube engine: facelet layout, move tables, notation, kernels, conversions.

See DESIGN.md for the conventions; :mod:`cubebench.engine.cube` offers a small
object API on top of the array functions.
"""

from .errors import CubeInputError, InvalidStateError, NotationError
from .facelets import COLOUR_LETTERS, COLOUR_RGB, FACES, SOLVED, SOLVED_FACELETS, colours
from .moves import (
    FACE_ACTIONS, MOVE_INDEX, MOVE_NAMES, ORIENTATION_NAMES, ORIENTATIONS, QUARTER_ACTIONS,
    TABLE, VIEW_ACTIONS,
)
from .notation import format_moves, invert_moves, parse
from .state import (
    canonical, from_colour_string, from_facelets, orientation_of, to_colour_string, to_cubie,
    to_facelets, validate_state,
)
