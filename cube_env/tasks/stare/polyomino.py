"""Polyominoes on the square grid: exact enumeration and canonical forms under the 8 symmetries.

A polyomino is a frozenset of ``(row, col)`` cells, connected through shared edges; rows grow
downwards and columns rightwards, as a net is drawn.  Two polyominoes are the same *free*
polyomino when a rotation or reflection (the dihedral group of the square, 8 elements) and a
translation take one onto the other.  :func:`canonical` picks one representative per free
polyomino (the lexicographically least sorted cell tuple of the 8 images, each translated to the
origin), so enumeration is exact: grow every canonical (n-1)-omino by one cell and keep the
distinct canonical results (Redelmeier's counts: 1, 1, 2, 5, 12, 35 free polyominoes of 1..6 cells).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Callable, Iterable

Cell = tuple[int, int]
Cells = frozenset[Cell]

STEPS: dict[str, Cell] = {"north": (-1, 0), "south": (1, 0), "west": (0, -1), "east": (0, 1)}
"""The four grid directions as ``(d_row, d_col)``: north is up the drawn net, east to the right."""

SYMMETRIES: tuple[Callable[[int, int], Cell], ...] = (
    lambda r, c: (r, c), lambda r, c: (c, -r), lambda r, c: (-r, -c), lambda r, c: (-c, r),
    lambda r, c: (r, -c), lambda r, c: (-c, -r), lambda r, c: (-r, c), lambda r, c: (c, r),
)
"""The 8 symmetries of the square acting on a cell: 4 rotations by 90 degrees, then 4 reflections."""


def normalize(cells: Iterable[Cell]) -> Cells:
    """``cells`` translated so the least row and the least column are 0."""
    cells = list(cells)
    if not cells:
        raise ValueError("a polyomino needs at least one cell")
    r0, c0 = min(r for r, _ in cells), min(c for _, c in cells)
    return frozenset((r - r0, c - c0) for r, c in cells)


def transform(cells: Iterable[Cell], symmetry: int) -> Cells:
    """The image of ``cells`` under symmetry ``symmetry`` (0..7; 0 is the identity), normalized."""
    if not 0 <= symmetry < len(SYMMETRIES):
        raise ValueError(f"symmetry must be 0..7, got {symmetry!r}")
    f = SYMMETRIES[symmetry]
    return normalize(f(r, c) for r, c in cells)


def orientations(cells: Iterable[Cell]) -> list[Cells]:
    """The distinct images of ``cells`` under the 8 symmetries (1, 2, 4 or 8 of them), in symmetry order."""
    seen: list[Cells] = []
    for k in range(len(SYMMETRIES)):
        image = transform(cells, k)
        if image not in seen:
            seen.append(image)
    return seen


def canonical(cells: Iterable[Cell]) -> Cells:
    """The representative of ``cells``'s free polyomino: the least (as a sorted tuple) of its 8 images."""
    return min((transform(cells, k) for k in range(len(SYMMETRIES))), key=lambda p: sorted(p))


def neighbours(cell: Cell) -> list[Cell]:
    """The four edge neighbours of ``cell`` (north, south, west, east)."""
    r, c = cell
    return [(r + dr, c + dc) for dr, dc in STEPS.values()]


def is_connected(cells: Iterable[Cell]) -> bool:
    """Whether ``cells`` form one piece through shared edges."""
    cells = set(cells)
    if not cells:
        return False
    start = next(iter(cells))
    seen, stack = {start}, [start]
    while stack:
        for n in neighbours(stack.pop()):
            if n in cells and n not in seen:
                seen.add(n)
                stack.append(n)
    return len(seen) == len(cells)


@lru_cache(maxsize=None)
def free_polyominoes(n: int) -> tuple[Cells, ...]:
    """Every free polyomino of ``n`` cells, canonical and sorted (exact: grown cell by cell from the monomino)."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be an integer >= 1, got {n!r}")
    if n == 1:
        return (frozenset({(0, 0)}),)
    grown = {canonical(p | {cell}) for p in free_polyominoes(n - 1)
             for cell in {nb for c in p for nb in neighbours(c)} - p}
    return tuple(sorted(grown, key=lambda p: sorted(p)))


def bounding_box(cells: Iterable[Cell]) -> tuple[int, int]:
    """``(rows, cols)`` of the least rectangle holding ``cells``."""
    cells = list(cells)
    rows = [r for r, _ in cells]
    cols = [c for _, c in cells]
    return max(rows) - min(rows) + 1, max(cols) - min(cols) + 1


def longest_run(cells: Iterable[Cell]) -> int:
    """The most cells in one straight line of consecutive cells, in a row or a column."""
    cells = set(cells)
    best = 0
    for r, c in cells:
        for dr, dc in ((0, 1), (1, 0)):
            if (r - dr, c - dc) in cells:
                continue  # not the start of a run
            k = 1
            while (r + k * dr, c + k * dc) in cells:
                k += 1
            best = max(best, k)
    return best


def has_square(cells: Iterable[Cell]) -> bool:
    """Whether ``cells`` contain a 2x2 block (four faces around one vertex, which no cube corner allows)."""
    cells = set(cells)
    return any({(r, c + 1), (r + 1, c), (r + 1, c + 1)} <= cells for r, c in cells)


def one_cell_moves(cells: Iterable[Cell]) -> set[Cells]:
    """The connected polyominoes made by moving one cell of ``cells`` to an empty cell next to the rest
    (same number of cells), normalized; the free shapes one slip of the pen away."""
    cells = frozenset(cells)
    out: set[Cells] = set()
    for cell in cells:
        rest = cells - {cell}
        if not is_connected(rest):
            continue
        for target in {nb for c in rest for nb in neighbours(c)} - cells:
            out.add(normalize(rest | {target}))
    return out


def grid_text(cells: Iterable[Cell], labels: dict[Cell, str] | None = None, empty: str = ".") -> str:
    """The polyomino as rows of characters: ``labels[cell]`` (or ``#``) where a cell is, ``empty`` elsewhere."""
    cells = normalize(cells)
    rows, cols = bounding_box(cells)
    return "\n".join("".join((labels or {}).get((r, c), "#") if (r, c) in cells else empty for c in range(cols))
                     for r in range(rows))


__all__ = ["Cell", "Cells", "STEPS", "SYMMETRIES", "normalize", "transform", "orientations", "canonical",
           "neighbours", "is_connected", "free_polyominoes", "bounding_box", "longest_run", "has_square",
           "one_cell_moves", "grid_text"]
