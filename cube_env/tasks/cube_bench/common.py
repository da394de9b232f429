"""What Cube Bench's seven tests share: certified start states, the two state forms, options, prompt text.

The image is our net renderer's cross net (each face named above it, the centre one "Front"), as
in the paper's renders; the text form is the same net as colour letters (the Visual tier's text
form), the paper's "canonical" textual state.  Moves are Singmaster face turns in the run's
metric (18 half-turn-metric moves by default, as in the paper; the 12 quarter turns otherwise).
"""

from __future__ import annotations

import numpy as np

from ...engine.facelets import COLOUR_LETTERS, SOLVED, colours
from ...engine.kernels import apply_move, apply_moves
from ...engine.moves import MOVE_INDEX, TABLE
from ...render.net import render_net
from ...render.text import net_text_grid
from ..oracle import metric_moves, oracle

IMAGE_SIZE = 384
"""Side of the net image in pixels (stickers about 9 px: legible to a vision model)."""
LETTERS = "ABCD"
FRONT = slice(18, 27)
"""The Front face's nine facelets (URFDLB order)."""

NOTATION = (
    "Moves use Singmaster notation: U (up), D (down), L (left), R (right), F (front), B (back) name a face; "
    "a letter alone turns that face 90 degrees clockwise as seen looking at that face, a prime (') turns it "
    "counter-clockwise, and 2 turns it 180 degrees (one move in the half-turn metric).")
COLOURS = "Colours are written W (white), Y (yellow), R (red), O (orange), G (green), B (blue)."


def metric_words(metric: str) -> str:
    return "half-turn metric: every face turn, 90 or 180 degrees, is one move" if metric == "half" else \
        "quarter-turn metric: every 90-degree face turn is one move"


def certified_start(rng: np.random.Generator, depth: int, metric: str) -> tuple[np.ndarray, str] | None:
    """A random state at exact distance ``depth`` and the scramble that made it (``None``: this draw's
    scramble undoes itself to a shorter distance; the caller draws again)."""
    names = metric_moves(metric)
    seq: list[str] = []
    while len(seq) < depth:
        move = names[int(rng.integers(len(names)))]
        if seq and seq[-1][0] == move[0]:
            continue
        seq.append(move)
    state = apply_moves(SOLVED, TABLE, np.array([MOVE_INDEX[m] for m in seq], np.int64))
    if oracle(metric).distance(state) != depth:
        return None
    return state, " ".join(seq)


def turn(state: np.ndarray, move: str) -> np.ndarray:
    """The state after one face turn."""
    return apply_move(state, TABLE, MOVE_INDEX[move])


def net_image(state: np.ndarray) -> np.ndarray:
    """The cross-net image of ``state`` (faces named above them; the centre face is "Front")."""
    return render_net(colours(state), size=IMAGE_SIZE)


def state_text(state: np.ndarray) -> str:
    """The net as colour letters, each face under its name (the text form of the net image)."""
    return net_text_grid(colours(state))


def front_face(state: np.ndarray) -> tuple[str, ...]:
    """The Front face's nine colour letters, row by row."""
    return tuple(COLOUR_LETTERS[int(c)] for c in colours(state)[FRONT])


def grid_text(cells: tuple[str, ...]) -> str:
    """Nine letters as three rows ``"W R G"``."""
    return "\n".join(" ".join(cells[3 * r: 3 * r + 3]) for r in range(3))


def place(correct: str, distractors: list[str], slot: int) -> list[str]:
    """Options with ``correct`` at ``slot`` and the distractors, in order, around it."""
    options = list(distractors)
    options.insert(slot, correct)
    return options


def draw(rng: np.random.Generator, pool: list[str], k: int) -> list[str] | None:
    """``k`` distinct moves from ``pool`` (in ``pool``'s order shuffled), or ``None`` if it is too small."""
    if len(pool) < k:
        return None
    return [pool[i] for i in rng.permutation(len(pool))[:k]]


def option_lines(options: list[str]) -> str:
    return "\n".join(f"{LETTERS[i]}: {m}" for i, m in enumerate(options))


def move_classes(state: np.ndarray, metric: str) -> tuple[int, dict[str, int]]:
    """The exact distance of ``state`` and after each move of the metric."""
    o = oracle(metric)
    return o.distance(state), o.after_moves(state)
