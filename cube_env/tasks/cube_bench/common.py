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
from ..parsing import OPTION_LETTERS
from ...solver.oracle import metric_moves, oracle
from ...tiers import FRONT

IMAGE_SIZE = 384
"""Side of the net image in pixels (stickers about 9 px: legible to a vision model)."""

CUBE_BENCH_NOTATION = (
    "Moves use Singmaster notation: U (up), D (down), L (left), R (right), F (front), B (back) name a face; "
    "a letter alone turns that face 90 degrees clockwise as seen looking at that face, a prime (') turns it "
    "counter-clockwise, and 2 turns it 180 degrees (one move in the half-turn metric).")
COLOURS = "Colours are written W (white), Y (yellow), R (red), O (orange), G (green), B (blue)."


def metric_words(metric: str) -> str:
    return "half-turn metric: every face turn, 90 or 180 degrees, is one move" if metric == "half" else \
        "quarter-turn metric: every 90-degree face turn is one move"


def scramble(rng: np.random.Generator, depth: int, metric: str) -> tuple[np.ndarray, str]:
    """A random scramble of ``depth`` moves of the metric, no face twice in a row, and the state it makes
    (its distance may be shorter: :func:`certified_start` checks it)."""
    names = metric_moves(metric)
    seq: list[str] = []
    while len(seq) < depth:
        move = names[int(rng.integers(len(names)))]
        if seq and seq[-1][0] == move[0]:
            continue
        seq.append(move)
    return apply_moves(SOLVED, TABLE, np.array([MOVE_INDEX[m] for m in seq], np.int64)), " ".join(seq)


def certified_start(rng: np.random.Generator, depth: int, metric: str) -> tuple[np.ndarray, str] | None:
    """A random state at exact distance ``depth`` and the scramble that made it (``None``: this draw's
    scramble undoes itself to a shorter distance; the caller draws again)."""
    state, seq = scramble(rng, depth, metric)
    if oracle(metric).distance(state) != depth:
        return None
    return state, seq


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


OPPOSITE_FACE = {"U": "D", "D": "U", "R": "L", "L": "R", "F": "B", "B": "F"}
"""Each face's opposite face."""


def paired_options(rng: np.random.Generator, correct: str, after: dict[str, int], here: int,
                   slot: int) -> list[str] | None:
    """Four options with ``correct`` at ``slot`` and three moves that make no progress (distance ``here`` or
    more after them): another turn of the correct move's face, and two turns of the opposite face.

    Why pairs on opposite faces: the correct move's face is the one turned last, and at shallow depths it
    is conspicuous by its colour counts alone (one colour on all nine stickers at depth 1).  Three
    distractors drawn from every legal move rarely touch that face, so "pick the move of the most
    one-coloured face" chose right 0.64 of the time at depth 1.  Its opposite face carries alike counts
    (a turn of a side face changes a line of both), and two options on each face leave the faces' colour
    counts no clue to which pair holds the answer (nor the options' form: at depth 1 the correct face's
    pair has the turn types of a random pair of turns, tests/tasks/test_fairness.py).  ``None`` when the correct
    face has no other non-progress turn or the opposite face fewer than two (the caller falls back to
    :func:`draw`)."""
    face = correct[0]
    stays = [m for m, d in after.items() if d >= here]
    partners = [m for m in stays if m[0] == face and m != correct]
    if not partners:
        return None
    partner = partners[int(rng.integers(len(partners)))]
    pair = draw(rng, [m for m in stays if m[0] == OPPOSITE_FACE[face]], 2)
    if pair is None:
        return None
    distractors = [partner, *pair]
    return place(correct, [distractors[i] for i in rng.permutation(3)], slot)


def four_options(rng: np.random.Generator, correct: str, after: dict[str, int], here: int,
                 slot: int) -> list[str] | None:
    """:func:`paired_options`, or where no such pairs exist (rare: every other turn of the face makes
    progress) ``correct`` and three non-progress moves from all legal moves; ``None`` if there are not
    three."""
    paired = paired_options(rng, correct, after, here, slot)
    if paired is not None:
        return paired
    distractors = draw(rng, [m for m, d in after.items() if d >= here], 3)
    return None if distractors is None else place(correct, distractors, slot)


def option_lines(options: list[str]) -> str:
    return "\n".join(f"{OPTION_LETTERS[i]}: {m}" for i, m in enumerate(options))


def move_classes(state: np.ndarray, metric: str) -> tuple[int, dict[str, int]]:
    """The exact distance of ``state`` and after each move of the metric."""
    o = oracle(metric)
    return o.distance(state), o.after_moves(state)
