"""Shared fixtures: engine helpers to build states from notation."""

from __future__ import annotations

import numpy as np
import pytest

from cube_env.engine import SOLVED, TABLE, kernels
from cube_env.engine.notation import parse_array


def apply(seq: str, state: np.ndarray = SOLVED) -> np.ndarray:
    """State after ``seq`` (notation) from ``state``."""
    return kernels.apply_moves(state, TABLE, parse_array(seq))


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(12345)
