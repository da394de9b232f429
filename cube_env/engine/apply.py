"""Applying moves from Python with the fastest kernel this CPU has.

With AVX-512 VBMI (:mod:`.simd`) a move is one ``vpermb``; otherwise the
portable gather kernels of :mod:`.kernels` run.  numba's thread pool only pays off on large
batches (and collapses when the cores are oversubscribed, as measured while CubeBench was built),
so small batches run serially.
"""

from __future__ import annotations

import numpy as np

from . import kernels, simd
from .moves import TABLE

PARALLEL_MIN_BATCH = 1 << 16
"""Batches at least this large are split over numba's threads."""


def apply_sequence(state: np.ndarray, moves: np.ndarray) -> np.ndarray:
    """New state after engine moves ``moves`` (int64 indices into ``MOVE_NAMES``)."""
    moves = np.asarray(moves, dtype=np.int64)
    if simd.HAS_VBMI:
        return simd.apply_moves_vbmi(state, moves, simd.INDEX64)
    return kernels.apply_moves(state, TABLE, moves)


def apply_batch(states: np.ndarray, moves: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """``states[b]`` after engine move ``moves[b]`` (``-1``: unchanged); ``out=states`` works in place."""
    moves = np.asarray(moves, dtype=np.int64)
    if states.ndim != 2 or states.shape[1] != 54 or states.dtype != np.uint8 or not states.flags.c_contiguous:
        raise ValueError(f"states must be a C-contiguous (B, 54) uint8 array, got {states.shape} {states.dtype}")
    if moves.shape != (states.shape[0],):
        raise ValueError(f"moves must have shape ({states.shape[0]},), got {moves.shape}")
    if out is None:
        out = np.empty_like(states)
    elif out.shape != states.shape or out.dtype != np.uint8 or not out.flags.c_contiguous:
        raise ValueError("out must be a C-contiguous uint8 array shaped like states")
    parallel = len(states) >= PARALLEL_MIN_BATCH
    if simd.HAS_VBMI:
        kernel = simd.apply_batch_vbmi_parallel if parallel else simd.apply_batch_vbmi
        kernel(states, moves, simd.INDEX64, out)
    else:
        kernel = kernels.apply_batch_parallel if parallel else kernels.apply_batch_serial
        kernel(states, moves, TABLE, out)
    return out
