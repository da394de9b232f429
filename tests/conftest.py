"""Shared fixtures: engine helpers to build states from notation."""

from __future__ import annotations

import numpy as np
import pytest

from cubebench.engine import SOLVED, TABLE, kernels
from cubebench.engine.notation import parse_array
from cubebench.generators import ScrambleGenerator

SCRAMBLES = ScrambleGenerator()
"""Uncertified seeded scrambles: for tests that need a scrambled cube but not a certified
distance, so the default suite never builds the optimal solver's tables."""


def apply(seq: str, state: np.ndarray = SOLVED) -> np.ndarray:
    """State after ``seq`` (notation) from ``state``."""
    return kernels.apply_moves(state, TABLE, parse_array(seq))


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(12345)
