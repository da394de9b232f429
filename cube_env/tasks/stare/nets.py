"""The catalogue of hexominoes the STARE tests draw from: which fold, which are near-misses, pools per depth.

Every label here comes from the geometric check (:func:`.rolling.folds_to_cube`) over the exact
enumeration of the 35 free hexominoes; nothing lists the 11 cube nets by hand.

Two pools of non-folding hexominoes, one per depth (``docs/stare.md``):

* depth 1, *any*: every non-folding hexomino whose fold can be ordered so that the first overlap or tear
  happens at the last step (so the intermediate frames never show it); 21 of the 24.
* depth 2, *look-alikes*: non-folding hexominoes with no 2x2 block, the bounding box of a cube net
  (3x4 or 2x5) and no straight run of 5 or 6; all six are near-misses (one cell's move from a net).
  Each valid net is paired with a look-alike of its :func:`stratum` (bounding box, a run of 4, three or
  more leaf cells), so rules on those features stay at chance; the two nets with 4 leaf cells, which no
  non-net has, are not asked at this depth (:func:`valid_pool`).
"""

from __future__ import annotations

from functools import lru_cache

from .folding import fold, plans
from .polyomino import Cells, bounding_box, canonical, free_polyominoes, has_square, longest_run, neighbours
from .polyomino import one_cell_moves
from .rolling import folds_to_cube

DEPTHS = {1: "any", 2: "look-alike"}
"""What each depth's non-folding nets are (module docstring)."""
LAST_STEP = 5
"""A hexomino net folds in five steps (one base face stays put)."""


@lru_cache(maxsize=None)
def hexominoes() -> tuple[Cells, ...]:
    """The 35 free hexominoes, canonical and sorted."""
    return free_polyominoes(6)


@lru_cache(maxsize=None)
def cube_nets() -> tuple[Cells, ...]:
    """The free hexominoes that fold into a cube (11 of them), by the rolling check."""
    return tuple(p for p in hexominoes() if folds_to_cube(p))


@lru_cache(maxsize=None)
def non_nets() -> tuple[Cells, ...]:
    """The free hexominoes that do not fold into a cube (24)."""
    return tuple(p for p in hexominoes() if not folds_to_cube(p))


def leaves(cells: Cells) -> int:
    """How many cells touch only one other cell."""
    return sum(sum(n in cells for n in neighbours(c)) == 1 for c in cells)


def near_miss_of(cells: Cells) -> Cells | None:
    """A cube net that moving one cell of ``cells`` makes (the first in catalogue order), or ``None``."""
    nets = set(cube_nets())
    found = sorted({canonical(p) for p in one_cell_moves(cells)} & nets, key=lambda p: sorted(p))
    return found[0] if found else None


@lru_cache(maxsize=None)
def can_fail_last(cells: Cells) -> bool:
    """Whether some fold plan of the non-folding ``cells`` overlaps or tears only at the last step."""
    return any(fold(cells, base, order).first_failure == LAST_STEP for base, order in plans(cells))


def stratum(cells: Cells) -> tuple[object, ...]:
    """The features a shortcut could read off a net's outline: bounding box, a straight run of 4, 3+ leaves
    (2x5 nets form one stratum: the one 2x5 cube net has no look-alike with its run and leaves)."""
    box = tuple(sorted(bounding_box(cells)))
    if box == (2, 5):
        return (box,)
    return box, longest_run(cells) >= 4, leaves(cells) >= 3


def is_look_alike(cells: Cells) -> bool:
    """A non-folding hexomino shaped like a cube net: no 2x2 block, a 3x4 or 2x5 box, no run of 5 or 6."""
    return (not folds_to_cube(cells) and not has_square(cells) and tuple(sorted(bounding_box(cells))) in ((3, 4), (2, 5))
            and longest_run(cells) <= 4)


def check_depth(test: str, depth: object) -> None:
    """``ValueError`` unless ``depth`` is one of :data:`DEPTHS` (a net test's depth picks its non-folding nets)."""
    if isinstance(depth, bool) or depth not in DEPTHS:
        raise ValueError(f"{test}: depth must be one of {sorted(DEPTHS)} (the non-folding nets used: {DEPTHS}), "
                         f"got {depth!r}")


@lru_cache(maxsize=None)
def invalid_pool(depth: int) -> tuple[Cells, ...]:
    """The non-folding hexominoes items of ``depth`` draw from (module docstring)."""
    check_depth("STARE net tests", depth)
    if depth == 1:
        return tuple(p for p in non_nets() if can_fail_last(p))
    return tuple(p for p in non_nets() if is_look_alike(p))


@lru_cache(maxsize=None)
def valid_pool(depth: int) -> tuple[Cells, ...]:
    """The cube nets items of ``depth`` draw from: all 11 at depth 1; at depth 2 the nets some look-alike
    resembles, i.e. not those with more leaf cells than any non-net has (the cross and one 1-4-1 net have 4;
    no non-folding hexomino does, so "4 leaves means Yes" would be a free answer)."""
    check_depth("STARE net tests", depth)
    if depth == 1:
        return cube_nets()
    most = max(leaves(p) for p in invalid_pool(depth))
    return tuple(n for n in cube_nets() if leaves(n) <= most)


def partners(valid: Cells, depth: int) -> tuple[Cells, ...]:
    """The non-folding nets a valid net is paired with at ``depth``: any of the pool at depth 1, those of
    its stratum at depth 2."""
    return _like(valid, invalid_pool(depth), depth, "look-alike")


def nets_like(shape: Cells, depth: int) -> tuple[Cells, ...]:
    """The cube nets of ``depth`` that share ``shape``'s :func:`stratum` at depth 2 (all of them at depth 1):
    the converse of :func:`partners`, for drawing a net that looks like a given non-net."""
    return _like(shape, valid_pool(depth), depth, "cube net")


def _like(shape: Cells, pool: tuple[Cells, ...], depth: int, what: str) -> tuple[Cells, ...]:
    """The members of ``pool`` in ``shape``'s stratum at depth 2 (all of ``pool`` at depth 1)."""
    if depth == 1:
        return pool
    same = tuple(p for p in pool if stratum(p) == stratum(shape))
    if not same:
        raise RuntimeError(f"no {what} shares the stratum {stratum(shape)}")
    return same


def shape_id(cells: Cells) -> int:
    """The index of ``cells``'s free hexomino in :func:`hexominoes` (a stable name for records)."""
    return hexominoes().index(canonical(cells))


__all__ = ["DEPTHS", "check_depth", "LAST_STEP", "hexominoes", "cube_nets", "non_nets", "leaves", "near_miss_of", "can_fail_last",
           "stratum", "is_look_alike", "invalid_pool", "valid_pool", "partners", "nets_like", "shape_id"]
