"""Engine: group identities, known positions, kernels, conversions."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import apply

from cubebench.engine import (
    MOVE_INDEX, MOVE_NAMES, ORIENTATIONS, SOLVED, TABLE, from_colour_string, from_facelets,
    kernels, orientation_of, to_colour_string, to_cubie, to_facelets,
)
from cubebench.engine import simd
from cubebench.engine.apply import apply_batch, apply_sequence
from cubebench.engine.cubie import to_state
from cubebench.engine.moves import INVERSE
from cubebench.engine.notation import format_moves, invert_moves, parse, parse_array
from cubebench.engine.scramble import scramble

SUPERFLIP = "U R2 F B R B2 R U2 L B2 R U' D' R2 F R' L B2 U2 F2"
SUPERFLIP_FACELETS = "UBULURUFURURFRBRDRFUFLFRFDFDFDLDRDBDLULBLFLDLBUBRBLBDB"


def order(seq: str) -> int:
    s, n = apply(seq), 1
    while not np.array_equal(s, SOLVED):
        s, n = apply(seq, s), n + 1
    return n


@pytest.mark.parametrize("name", MOVE_NAMES)
def test_every_move_has_order_4_or_2(name: str) -> None:
    expected = 2 if name.endswith("2") else 4
    assert order(name) == expected


def test_known_orders() -> None:
    assert order("R U") == 105
    assert order("R U R' U'") == 6
    assert order("R2 U2") == 6


@pytest.mark.parametrize("a,b", [("U", "D"), ("R", "L"), ("F", "B"), ("R", "L'"), ("U2", "D'")])
def test_opposite_faces_commute(a: str, b: str) -> None:
    assert np.array_equal(apply(f"{a} {b}"), apply(f"{b} {a}"))


def test_adjacent_faces_do_not_commute() -> None:
    assert not np.array_equal(apply("R U"), apply("U R"))


@pytest.mark.parametrize(
    "conjugated,face",
    [("y R y'", "B"), ("x U x'", "F"), ("z R z'", "U"), ("y' R y", "F"), ("x' U x", "B"), ("z' U z", "R")],
)
def test_rotations_conjugate_faces(conjugated: str, face: str) -> None:
    assert np.array_equal(apply(conjugated), apply(face))


@pytest.mark.parametrize(
    "move,expansion",
    [("M", "R L' x'"), ("E", "U D' y'"), ("S", "F' B z"), ("r", "L x"), ("Rw", "L x"), ("u", "D y"),
     ("f'", "B' z'"), ("M2", "R2 L2 x2"), ("x2", "x x"), ("Fw2", "B2 z2")],
)
def test_slices_and_wide_turns_expand(move: str, expansion: str) -> None:
    assert np.array_equal(apply(move), apply(expansion))


def test_superflip_facelets() -> None:
    state = apply(SUPERFLIP)
    assert to_facelets(state) == SUPERFLIP_FACELETS
    cc = to_cubie(state)
    assert (cc.eo == 1).all() and (cc.co == 0).all()
    assert list(cc.cp) == list(range(8)) and list(cc.ep) == list(range(12))


def test_single_moves_match_kociemba_strings() -> None:
    assert to_facelets(apply("R")) == "UUFUUFUUFRRRRRRRRRFFDFFDFFDDDBDDBDDBLLLLLLLLLUBBUBBUBB"
    assert to_facelets(apply("U")) == "UUUUUUUUUBBBRRRRRRRRRFFFFFFDDDDDDDDDFFFLLLLLLLLLBBBBBB"


def test_inverse_sequence_undoes(rng: np.random.Generator) -> None:
    for _ in range(50):
        moves = rng.integers(0, len(MOVE_NAMES), size=30)
        back = np.asarray(invert_moves(moves), dtype=np.int64)
        assert np.array_equal(kernels.apply_moves(kernels.apply_moves(SOLVED, TABLE, moves), TABLE, back), SOLVED)
        assert np.array_equal(back, kernels.invert_moves(moves.astype(np.int64), INVERSE))


def test_invert_state_is_group_inverse(rng: np.random.Generator) -> None:
    for _ in range(20):
        moves = rng.integers(0, 18, size=25).astype(np.int64)
        state = kernels.apply_moves(SOLVED, TABLE, moves)
        inv = kernels.invert_state(state)
        assert np.array_equal(state[inv], SOLVED)
        # the inverse state is what the inverse sequence produces
        assert np.array_equal(inv, kernels.apply_moves(SOLVED, TABLE, kernels.invert_moves(moves, INVERSE)))


@pytest.mark.parametrize("batch", [1, 2, 3, 64, 257])
def test_batch_kernels_at_batch_edges(batch: int, rng: np.random.Generator) -> None:
    states = np.stack([kernels.apply_moves(SOLVED, TABLE, rng.integers(0, 54, 9).astype(np.int64)) for _ in range(batch)])
    moves = rng.integers(-1, 54, size=batch).astype(np.int64)
    expected = np.stack([s if m < 0 else s[TABLE[m]] for s, m in zip(states, moves)])
    assert np.array_equal(apply_batch(states, moves), expected)
    assert np.array_equal(apply_batch(states.copy(), moves, out=None), expected)


def test_sequence_kernels_agree(rng: np.random.Generator) -> None:
    for n in (0, 1, 5, 1000):
        moves = rng.integers(0, 54, size=n).astype(np.int64)
        expected = kernels.apply_moves(SOLVED, TABLE, moves)
        assert np.array_equal(apply_sequence(SOLVED, moves), expected)
        if simd.HAS_VBMI:
            assert np.array_equal(simd.apply_moves_vbmi(SOLVED, moves, simd.INDEX64), expected)


def test_apply_move_equals_gather(rng: np.random.Generator) -> None:
    state = apply("R U F' D2 L B'")
    for m in range(len(MOVE_NAMES)):
        assert np.array_equal(kernels.apply_move(state, TABLE, m), state[TABLE[m]])


def test_batched_kernels_equal_single_state_kernel(rng: np.random.Generator) -> None:
    b = 257
    states = np.stack([kernels.apply_moves(SOLVED, TABLE, rng.integers(0, 54, 20).astype(np.int64)) for _ in range(b)])
    moves = rng.integers(-1, 54, size=b).astype(np.int64)  # -1: no-op slot
    expected = np.stack([s if m < 0 else kernels.apply_move(s, TABLE, m) for s, m in zip(states, moves)])
    out = np.empty_like(states)
    kernels.apply_batch_serial(states, moves, TABLE, out)
    assert np.array_equal(out, expected)
    par = np.empty_like(states)
    kernels.apply_batch_parallel(states, moves, TABLE, par)
    assert np.array_equal(par, expected)
    inplace = states.copy()
    assert apply_batch(inplace, moves, out=inplace) is inplace
    assert np.array_equal(inplace, expected)
    assert np.array_equal(apply_batch(states, moves), expected)
    if simd.HAS_VBMI:
        for kernel in (simd.apply_batch_vbmi, simd.apply_batch_vbmi_parallel):
            got = np.zeros_like(states)
            kernel(states, moves, simd.INDEX64, got)
            assert np.array_equal(got, expected)
            got = states.copy()
            kernel(got, moves, simd.INDEX64, got)
            assert np.array_equal(got, expected)
    for batch_fn, single_fn, dtype in (
        (kernels.batch_is_solved, kernels.is_solved, np.bool_),
        (kernels.batch_stickers_in_place, kernels.stickers_in_place, np.int64),
        (kernels.batch_faces_completed, kernels.faces_completed, np.int64),
    ):
        got = np.empty(b, dtype=dtype)
        batch_fn(expected, got)
        assert list(got) == [single_fn(s) for s in expected]


def test_solved_test_ignores_orientation() -> None:
    for rot in ORIENTATIONS:
        assert kernels.is_solved(SOLVED[rot])
        assert kernels.stickers_in_place(SOLVED[rot]) == 54
        assert kernels.faces_completed(SOLVED[rot]) == 6
    assert not kernels.is_solved(apply("R"))
    assert kernels.faces_completed(apply("R")) == 2
    assert kernels.stickers_in_place(apply("R")) == 54 - 12


def test_string_round_trips(rng: np.random.Generator) -> None:
    for _ in range(100):
        moves = rng.integers(0, len(MOVE_NAMES), size=25).astype(np.int64)
        state = kernels.apply_moves(SOLVED, TABLE, moves)
        assert np.array_equal(from_facelets(to_facelets(state)), state)
        assert np.array_equal(from_colour_string(to_colour_string(state)), state)
        assert np.array_equal(to_state(to_cubie(state))[ORIENTATIONS[orientation_of(state)]], state)


def test_orientations_are_24_distinct_rotations() -> None:
    keys = {rot.tobytes() for rot in ORIENTATIONS}
    assert len(keys) == 24
    assert sorted(orientation_of(SOLVED[rot]) for rot in ORIENTATIONS) == list(range(24))


def test_notation_round_trip_and_forms() -> None:
    assert format_moves(parse("R U R' U'")) == "R U R' U'"
    assert format_moves(parse("  RUR'U'  ")) == "R U R' U'"
    assert format_moves(parse("R2' Rw r' x  M2 Uw2 F’")) == "R2 r r' x M2 u2 F'"
    assert parse("") == []
    assert np.array_equal(parse_array("R U"), [MOVE_INDEX["R"], MOVE_INDEX["U"]])


def test_scramble_is_seeded_and_not_redundant() -> None:
    for metric, faces_only in (("quarter", True), ("half", False)):
        a = scramble(200, metric, 7)
        assert a == scramble(200, metric, 7) and a != scramble(200, metric, 8)
        names = [MOVE_NAMES[m] for m in a]
        if faces_only:
            assert not any(n.endswith("2") for n in names)
        for x, y in zip(names, names[1:]):
            assert x[0] != y[0], "same face twice in a row"
        axis = {f: i % 3 for i, f in enumerate("URFDLB")}
        for x, y, z in zip(names, names[1:], names[2:]):
            assert not (axis[x[0]] == axis[y[0]] == axis[z[0]]), "three turns on one axis"
        for x, y in zip(names, names[1:]):
            if axis[x[0]] == axis[y[0]]:
                assert "URFDLB".index(x[0]) < "URFDLB".index(y[0]), "opposite faces in non-canonical order"


def test_notation_errors_quote_a_bounded_excerpt_of_any_input() -> None:
    from cubebench.engine import NotationError

    cases = [("R U " * 250_000 + "Q", "unknown move 'Q' at position 1000000 in 'R U R U", "…(1000001 characters)"),
             ("R " + "Q" * 1_000_000, "unknown move 'QQQQQQQQQQQQQQQQQQQQ'… at position 2 in 'R QQQ", "…(1000002 characters)"),
             ("M2" * 500_000 + " Q\x00\x00", "unknown move 'Q\\x00\\x00' at position 1000001", "…(1000004 characters)"),
             ("\ud800" * 1_000_000, "unknown move '\\ud800\\ud800\\ud800'…", "…(1000000 characters)")]
    for text, start, length in cases:
        with pytest.raises(NotationError) as info:
            parse(text)
        message = str(info.value)
        assert message.startswith(start) and length in message, message[:200]
        assert len(message) < 300 and "expected face turns U R F D L B" in message
    with pytest.raises(NotationError) as info:
        parse("R U3")
    assert str(info.value).startswith("unknown move '3' at position 3 in 'R U3'; expected")
