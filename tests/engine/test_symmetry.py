"""The 48 symmetries: rotations and mirror images of a position keep its exact distance, and the classes
:func:`symmetry_key` names agree with classes built independently from scrambles (a mirrored scramble turns
each face the other way, with R and L swapped)."""

from __future__ import annotations

import numpy as np
import pytest

from helpers import apply

from cubebench.engine.state import from_facelets, to_facelets
from cubebench.engine.symmetry import N_SYMMETRIES, symmetric_facelets, symmetry_key, symmetry_permutations
from cubebench.solver.oracle import oracle

MIRROR_LR = {"R": "L", "L": "R", "U": "U", "D": "D", "F": "F", "B": "B"}


def mirrored(scramble: str) -> str:
    """The scramble seen in a mirror through the L-R plane: R and L swap and every turn reverses."""
    out = []
    for move in scramble.split():
        face, suffix = MIRROR_LR[move[0]], move[1:]
        out.append(face + {"": "'", "'": "", "2": "2"}[suffix])
    return " ".join(out)


def turned(scramble: str, rotation: str) -> str:
    """The position of ``scramble`` with the cube then turned by ``rotation`` (rotations are free)."""
    return to_facelets(apply(f"{scramble} {rotation}"))


def test_48_distinct_permutations_identity_rotations_then_mirrors() -> None:
    perms, mirror = symmetry_permutations()
    assert perms.shape == (N_SYMMETRIES, 54) and len({p.tobytes() for p in perms}) == N_SYMMETRIES
    assert (perms[0] == np.arange(54)).all() and not mirror[:24].any() and mirror[24:].all()
    for p in perms:
        assert sorted(p) == list(range(54))


@pytest.mark.parametrize("length", [1, 3, 6, 20])
def test_every_spelling_is_a_valid_cube_at_the_same_distance(length: int) -> None:
    rng = np.random.default_rng(length)
    faces = [f + s for f in "URFDLB" for s in ("", "'")]
    for _ in range(4):
        state = apply(" ".join(faces[int(k)] for k in rng.integers(0, 12, size=length)))
        spellings = symmetric_facelets(to_facelets(state))
        assert spellings[0] == to_facelets(state)
        states = [from_facelets(f) for f in spellings]  # validates twist, flip and parity of each
        if length <= 6:
            distances = {oracle("quarter").distance(s) for s in states}
            assert distances == {oracle("quarter").distance(state)}


@pytest.mark.parametrize("scramble", ["R", "R U", "R U' F", "F2 D L' B U R2", "U R2 F' L D' B2 R U' F L2"])
def test_mirror_and_rotation_images_built_from_scrambles_share_the_key(scramble: str) -> None:
    key = symmetry_key(to_facelets(apply(scramble)))
    assert symmetry_key(to_facelets(apply(mirrored(scramble)))) == key
    for rotation in ("y", "x y", "z2", "x' z"):  # the cube held another way, read with its centres as they are
        assert symmetry_key(turned(scramble, rotation)) == key
        assert symmetry_key(turned(mirrored(scramble), rotation)) == key


def test_distinct_classes_stay_apart() -> None:
    assert symmetry_key(to_facelets(apply("R U"))) != symmetry_key(to_facelets(apply("R L")))
    assert symmetry_key(to_facelets(apply("R U"))) != symmetry_key(to_facelets(apply("R U'")))  # not a twin either
    assert len({symmetry_key(to_facelets(apply(m))) for m in ("R", "L'", "U", "D'", "F2")}) == 2
