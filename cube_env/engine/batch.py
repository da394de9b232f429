"""Batched moves from Python: one call per batch, serial or threaded by size.

numba's thread pool only pays off on large batches (and collapses when the
cores are oversubscribed, see FIELD-NOTES), so small batches run serially.
"""

from __future__ import annotations

import numpy as np

from . import kernels
from .moves import SPARSE_COUNT, SPARSE_DST, SPARSE_SRC

PARALLEL_MIN_BATCH = 1 << 16
"""Batches at least this large are split over numba's threads."""


def apply_batch(states: np.ndarray, moves: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """``states[b]`` after engine move ``moves[b]`` (``-1``: unchanged); ``out=states`` works in place."""
    moves = np.asarray(moves, dtype=np.int64)
    if states.ndim != 2 or states.shape[1] != 54 or states.dtype != np.uint8:
        raise ValueError(f"states must be a (B, 54) uint8 array, got {states.shape} {states.dtype}")
    if moves.shape != (states.shape[0],):
        raise ValueError(f"moves must have shape ({states.shape[0]},), got {moves.shape}")
    if out is None:
        out = np.empty_like(states)
    kernel = kernels.apply_batch_parallel if len(states) >= PARALLEL_MIN_BATCH else kernels.apply_batch_serial
    kernel(states, moves, SPARSE_DST, SPARSE_SRC, SPARSE_COUNT, out)
    return out
