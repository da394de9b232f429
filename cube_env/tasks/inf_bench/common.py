"""What Inf-Bench's forward and inverse items share: operations, option sets, the two presentations.

**Operations.**  The paper's 54 basic operations (App. E.2.2): the 18 face turns, 18 wide turns, 9
slice turns and 9 whole-cube rotations, each clockwise, counter-clockwise or half; exactly the
engine's move set (:data:`~cubebench.engine.moves.MOVE_NAMES`).  A list never holds two operations of
one kind in a row (``R`` then ``R2``; ``y2`` then ``y``): those merge into one or cancel, and a level-n
list should be n operations.

**Options.**  The paper makes distractor lists by replacing some operations of the target list
(§4.2, step 3); our replacements move the centres as the operation they replace does
(:func:`centre_twins`), or tracking the six centres alone picks the gold (89% of items).  Done literally, the target is the *centre* of the option set: at every position
most options keep the target's operation, so a positional majority vote picks the gold list, and a
per-sticker majority vote picks the gold state, without simulating anything.  Here every option,
the gold included, is a replacement variant of one hidden *base* list (1 to ⌈n/4⌉ positions
replaced in each), so no option is the centre; the gold's slot is balanced over A-D.  Every option's
end state is computed by the engine and the options must end in four different states: two lists
that give the same cube are never both shown (the answer would be ambiguous).

**Presentations.**  ``image``: our net renderer's pictures (one image: the start, then the target
or the four option states, each under its caption, as the paper shows options in one image).
``encoded``: the paper's text encoding (App. C.1.3): each face a 3x3 matrix of colour letters
``y w r o g b`` under its face letter, U D L R F B.
"""

from __future__ import annotations


from functools import lru_cache

import numpy as np

from ...engine.facelets import CENTRES, COLOUR_NAMES, FACES, SOLVED, colours
from ...engine.kernels import apply_moves
from ...engine.moves import MOVE_INDEX, MOVE_NAMES, TABLE
from ...render.net import render_net
from ...render.sheet import contact_sheet
from ..parsing import OPTION_LETTERS

OPERATIONS: tuple[str, ...] = tuple(MOVE_NAMES)
"""The 54 basic operations (face, rotation, slice and wide turns, each ``''``, ``'`` and ``2``)."""
N_OPTIONS = len(OPTION_LETTERS)
SCRAMBLE_LENGTH = 25
"""Face turns in the random start state (the paper starts from a random cube, not a solved one)."""
PANEL = 256
"""Side of each net picture in the image presentation."""
PRESENTATIONS = ("image", "encoded")
COLOUR_CODE = {"white": "w", "red": "r", "green": "g", "yellow": "y", "orange": "o", "blue": "b"}
"""The paper's colour letters."""
ENCODED_ORDER = "UDLRFB"
"""The faces in the order the paper names them."""

SYSTEM = ("You are a Rubik's Cube master; you will answer my questions. You only need to output the letter "
          "corresponding to your choice.")
INF_BENCH_NOTATION = (
    "Operations use Singmaster notation on a cube held with Up (U), Down (D), Left (L), Right (R), Front (F) "
    "and Back (B) faces. U R F D L B turn that face 90 degrees clockwise as seen looking at the face; "
    "lower-case u r f d l b turn that face together with the middle layer beside it (two layers); "
    "M turns the middle layer between L and R as L does, E the layer between U and D as D does, S the layer "
    "between F and B as F does; x, y, z rotate the whole cube as R, U, F do. A prime (') means "
    "counter-clockwise and 2 means 180 degrees. Whole-cube rotations and slice turns change which colour is "
    "seen on which side: a face keeps its name (U is always the side on top).")
ENCODING = (
    "Each face is written as a 3x3 matrix of colours under its letter: y yellow, w white, r red, o orange, "
    "g green, b blue. Each face is drawn as seen from outside the cube: U from above with B at the top, D "
    "from below with F at the top, and L, F, R and B from the left, front, right and back with U at the top.")
IMAGE_WORDS = ("The pictures show the cube as a net: each face under its name, U above F, the ring L F R B "
               "across the middle and D below F.")
ANSWER = "Reply with exactly one line, the letter of your choice as <ANSWER> X </ANSWER>, and nothing else."
PERSONA = ("You are a Rubik's Cube master, you will answer my questions, and you should output the letter "
           "corresponding to your choice, and why you choose it as detailed as possible.")
"""The paper's system persona of the 3D tasks (Fig. 11), word for word: the ``paper`` rules' system text."""
ONLY_LETTER = "You only need to output the letter corresponding to your choice. "
"""The sentence of the paper's user prompts (Fig. 11) after "Please select the correct answer from the options below."."""
PAPER_ANSWER = ("After your reasons, end your reply with your choice on a line of its own as <ANSWER> X </ANSWER>, "
                "X the letter.")
"""The ``paper`` rules' closing line: the final tagged choice is the answer (:class:`~..parsing.TaggedForm`)."""


def draw_operations(rng: np.random.Generator, n: int) -> list[str]:
    """``n`` random operations, no two of one kind in a row."""
    ops: list[str] = []
    while len(ops) < n:
        op = OPERATIONS[int(rng.integers(len(OPERATIONS)))]
        if not ops or op[0] != ops[-1][0]:
            ops.append(op)
    return ops


def has_merging_pair(ops: list[str]) -> bool:
    """Whether two operations of one kind (the same letter: ``R`` and ``R2``) stand in a row."""
    return any(a[0] == b[0] for a, b in zip(ops, ops[1:]))


def replace_some(rng: np.random.Generator, base: list[str]) -> list[str]:
    """``base`` with 1 to ⌈n/4⌉ positions given a different operation that moves the centres the same way
    (the paper's RandReplace, kept within :func:`centre_twins`)."""
    n = len(base)
    k = 1 + int(rng.integers(-(-n // 4)))
    out = list(base)
    for pos in rng.choice(n, size=k, replace=False):
        p = int(pos)
        choices = [op for op in centre_twins()[base[p]] if op != base[p]]
        pick = int(rng.integers(len(choices)))
        # never two operations of one kind in a row: a pick that would merge with a neighbour as it stands
        # now gives way to the next choice that does not (one always exists: two neighbours bar two kinds,
        # and a twin group spans at least three).  A pick with no such neighbour is the uniform draw it
        # always was, so every item that never met one is the same; long lists would otherwise almost never
        # come out clean (no list of 500 operations in 2,000 draws)
        kinds = {out[j][0] for j in (p - 1, p + 1) if 0 <= j < n}
        while choices[pick][0] in kinds:
            pick = (pick + 1) % len(choices)
        out[p] = choices[pick]
    return out


@lru_cache(maxsize=None)
def centre_twins() -> dict[str, tuple[str, ...]]:
    """For each operation, the operations that move the six centres exactly as it does (itself included):
    the 18 face turns (which leave them), and nine groups of four such as ``r l' M' x``.  Distractors only
    swap within a group, so every option ends with the same centres: tracking the centres (which way the
    cube faces) says nothing about the answer."""
    effect = {op: run(SOLVED, [op])[list(CENTRES)].tobytes() for op in OPERATIONS}
    return {op: tuple(o for o in OPERATIONS if effect[o] == effect[op]) for op in OPERATIONS}


def run(start: np.ndarray, ops: list[str]) -> np.ndarray:
    """The state after ``ops`` from ``start``."""
    return apply_moves(start, TABLE, np.array([MOVE_INDEX[o] for o in ops], np.int64))


def random_start(rng: np.random.Generator) -> np.ndarray:
    """A random scrambled cube in the standard orientation (white up, green front)."""
    faces = [f + s for f in FACES for s in ("", "'", "2")]
    seq = [faces[int(rng.integers(len(faces)))] for _ in range(SCRAMBLE_LENGTH)]
    return run(SOLVED, seq)


def option_lists(rng: np.random.Generator, n: int, start: np.ndarray) -> list[list[str]] | None:
    """Four operation lists of length ``n``, variants of one hidden base list, ending in four different
    states; ``None`` when this draw does not give that (the caller draws again)."""
    base = draw_operations(rng, n)
    lists = [replace_some(rng, base) for _ in range(N_OPTIONS)]
    if any(has_merging_pair(ops) for ops in lists) or not ends_distinct(start, lists):
        return None
    return lists


def ends_distinct(start: np.ndarray, lists: list[list[str]]) -> bool:
    """Whether the lists take ``start`` to pairwise different cubes (as coloured: what is shown)."""
    return len({colours(run(start, ops)).tobytes() for ops in lists}) == len(lists)


def encoded(state: np.ndarray) -> str:
    """The paper's text encoding: six 3x3 colour matrices, one per face, under ``U:``, ``D:``, ..."""
    col = colours(state)
    blocks = []
    for face in ENCODED_ORDER:
        k = FACES.index(face)
        letters = [COLOUR_CODE[COLOUR_NAMES[int(c)]] for c in col[9 * k: 9 * k + 9]]
        rows = ["[" + " ".join(letters[3 * r: 3 * r + 3]) + "]" for r in range(3)]
        blocks.append(f"{face}:\n" + "\n".join(rows))
    return "\n".join(blocks)


def sheet(states: list[np.ndarray], captions: list[str], columns: int) -> np.ndarray:
    """One image of several cube nets, each under its caption."""
    return contact_sheet([render_net(colours(s), size=PANEL) for s in states], captions, columns)
