"""Bad input: every rejection names its fault, nothing is half-applied."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import apply

from cubebench.engine import (
    SOLVED, SOLVED_FACELETS, InvalidStateError, NotationError, from_facelets, to_facelets,
    validate_state,
)
from cubebench.engine.notation import parse


def swap(s: str, i: int, j: int) -> str:
    chars = list(s)
    chars[i], chars[j] = chars[j], chars[i]
    return "".join(chars)


def replace(s: str, at: dict[int, str]) -> str:
    return "".join(at.get(i, ch) for i, ch in enumerate(s))


@pytest.mark.parametrize(
    "text,fragment",
    [
        ("R Q U", "'Q' at position 2"),
        ("R U3", "'3' at position 3"),
        ("Rww", "'w' at position 2"),
        ("R U (R U)", "'(R' at position 4"),
        ("R, U", "',' at position 1"),
        ("Uw'' ", "\"'\" at position 3"),
    ],
)
def test_parser_names_bad_token_and_position(text: str, fragment: str) -> None:
    with pytest.raises(NotationError, match=None) as err:
        parse(text)
    assert fragment in str(err.value)


def test_parser_rejects_non_strings() -> None:
    with pytest.raises(NotationError, match="must be a string"):
        parse(["R"])  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "facelets,fragment",
    [
        (SOLVED_FACELETS[:-1], "54 characters, got 53"),
        (SOLVED_FACELETS[:-1] + "X", "found 'X'"),
        ("U" + SOLVED_FACELETS[1:-1] + "U", "U=10, B=8"),
        (swap(SOLVED_FACELETS, 4, 31), "not an orientation"),  # U and D centres swapped... mirrored
        (swap(SOLVED_FACELETS, 4, 13), "not an orientation"),  # U/R centres swapped
        (swap(SOLVED_FACELETS, 8, 9), "corner slot URF"),  # twist two stickers of one corner: mirrored
        (swap(SOLVED_FACELETS, 5, 10), "flipped edge"),  # flip the UR edge in place
        (swap(SOLVED_FACELETS, 10, 28), "edge slot UR holds stickers UD"),  # impossible edge
        (swap(SOLVED_FACELETS, 10, 46), "parity"),  # UR and UB edges exchanged
        (replace(SOLVED_FACELETS, {46: "R", 16: "B"}), "UR cubie appears 2 times"),  # UR, DB twice
    ],
)
def test_invalid_facelets_name_the_fault(facelets: str, fragment: str) -> None:
    with pytest.raises(InvalidStateError) as err:
        from_facelets(facelets)
    assert fragment in str(err.value)


def test_twisted_corner_detected() -> None:
    # rotate the URF corner's stickers in place: U9->R1->F3->U9
    s = list(SOLVED_FACELETS)
    s[8], s[9], s[20] = "F", "U", "R"
    with pytest.raises(InvalidStateError, match="twisted corner"):
        from_facelets("".join(s))


def test_flipped_edge_detected_on_scrambled_cube() -> None:
    text = to_facelets(apply("R U F' L2 D B'"))
    # flip the UF edge (U8 <-> F2)
    with pytest.raises(InvalidStateError, match="flipped edge"):
        from_facelets(swap(text, 7, 19))


def test_rotated_cube_is_accepted() -> None:
    state = apply("R U y x'")
    assert np.array_equal(from_facelets(to_facelets(state)), state)


def test_validate_state_arrays() -> None:
    good = apply("R U")
    assert np.array_equal(validate_state(good.astype(np.int64)), good)
    with pytest.raises(InvalidStateError, match="shape"):
        validate_state(good[:10])
    with pytest.raises(InvalidStateError, match="repeats"):
        validate_state(np.zeros(54, dtype=np.uint8))
    with pytest.raises(InvalidStateError, match="sticker ids 0..53"):
        validate_state(np.full(54, 60))
    bad = good.copy()
    bad[[0, 2]] = bad[[2, 0]]  # two corner stickers from different corners swapped
    with pytest.raises(InvalidStateError):
        validate_state(bad)
    assert isinstance(InvalidStateError("x"), ValueError)
    assert SOLVED.flags.writeable  # validation never mutated the shared solved state
