"""AVX-512 VBMI kernels: one ``vpermb`` applies a whole move to a state.

A state (54 bytes) fits one 64-byte vector register, and a move is a byte
permutation, which ``vpermb`` performs in one instruction.  These kernels
are used when the CPU has AVX-512 VBMI (detected at import, overridable with
``CUBEBENCH_SIMD=0``); :mod:`.batch` falls back to the portable sparse
kernels otherwise.  Rows are loaded as 64 bytes (reading 10 bytes into the
next row, whose values are never used) and stored as exactly 54 bytes, so
neighbouring rows are never written; the last row goes through a padded copy.

The last section holds the building blocks of the vector env's step kernel
(:mod:`cubebench.envs.vector_kernels`): a move, the solved test and both reward
potentials, and the one-hot or colour observation row, each a few ``vpermb``
on states padded to 64 bytes a row.
"""

from __future__ import annotations

import os

import numba as nb
import numpy as np
from llvmlite import binding as llvm
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from .kernels import SOLVED_BITS
from .moves import TABLE

_V64 = ir.VectorType(ir.IntType(8), 64)
_PIECES = ((0, 32), (32, 16), (48, 4), (52, 2))  # 54 bytes as vector stores


def _host_has_vbmi() -> bool:
    if os.environ.get("CUBEBENCH_SIMD", "1") == "0":
        return False
    try:
        return bool(llvm.get_host_cpu_features().get("avx512vbmi", False))
    except RuntimeError:
        return False


HAS_VBMI = _host_has_vbmi()
"""True when the VBMI kernels can run on this CPU (and were not disabled)."""

INDEX64 = np.zeros((TABLE.shape[0], 64), dtype=np.uint8)
INDEX64[:, :54] = TABLE
INDEX64[:, 54:] = np.arange(54, 64)
"""Move tables padded to 64 bytes: the ``vpermb`` index vectors."""


def _vpermb(builder, table, index):
    """IR: ``table[index]`` lane by lane (one ``vpermb``; only the low 6 bits of each index count)."""
    fn = cgutils.get_or_insert_function(
        builder.module, ir.FunctionType(_V64, [_V64, _V64]), "llvm.x86.avx512.permvar.qi.512"
    )
    return builder.call(fn, [table, index])


def _load64(builder, addr):
    """IR: the 64 bytes at address ``addr``."""
    return builder.load(builder.inttoptr(addr, _V64.as_pointer()), align=1)


def _permuted(builder, s, i):
    """IR: the 64-byte vector at address ``s`` permuted by the index vector at ``i``."""
    return _vpermb(builder, _load64(builder, s), _load64(builder, i))


@intrinsic
def permute64(typingctx, src, dst, idx):
    """dst[0:64] = src[idx[0:64]] for raw addresses of 64-byte buffers (``dst`` may be ``src``)."""
    sig = types.void(types.intp, types.intp, types.intp)

    def codegen(context, builder, signature, args):
        s, d, i = args
        builder.store(_permuted(builder, s, i), builder.inttoptr(d, _V64.as_pointer()), align=1)
        return context.get_dummy_value()

    return sig, codegen


def _store_prefix(builder, vec, d, pieces):
    """IR: store the leading bytes of ``vec`` at address ``d`` as the vector ``pieces`` (start, length)."""
    undef = ir.Constant(_V64, ir.Undefined)
    for start, n in pieces:
        mask = ir.Constant(ir.VectorType(ir.IntType(32), n), list(range(start, start + n)))
        piece = builder.shuffle_vector(vec, undef, mask)
        addr = builder.add(d, ir.Constant(d.type, start))
        builder.store(piece, builder.inttoptr(addr, piece.type.as_pointer()), align=1)


@intrinsic
def _permute54(typingctx, src, dst, idx):
    """dst[0:54] = src[idx[0:54]] for raw addresses (src and idx readable for 64 bytes)."""
    sig = types.void(types.intp, types.intp, types.intp)

    def codegen(context, builder, signature, args):
        s, d, i = args
        _store_prefix(builder, _permuted(builder, s, i), d, _PIECES)
        return context.get_dummy_value()

    return sig, codegen


@nb.njit(cache=True, nogil=True)
def _last_row(states, out, b, m, index64):
    """Row ``b`` through a padded copy (a 64-byte load must not run past the array's end)."""
    if m < 0:
        out[b, :] = states[b, :]
        return
    pad = np.zeros(64, np.uint8)
    pad[:54] = states[b, :]
    _permute54(pad.ctypes.data, out.ctypes.data + 54 * b, index64.ctypes.data + 64 * m)


@nb.njit(cache=True, nogil=True)
def apply_batch_vbmi(states, moves, index64, out):
    """``out[b]`` = ``states[b]`` after move ``moves[b]`` (``-1``: copy); ``out`` may be ``states``."""
    n = states.shape[0]
    sbase, obase, ibase = states.ctypes.data, out.ctypes.data, index64.ctypes.data
    for b in range(n - 1):
        m = moves[b]
        if m >= 0:
            _permute54(sbase + 54 * b, obase + 54 * b, ibase + 64 * m)
        else:
            out[b, :] = states[b, :]
    if n > 0:
        _last_row(states, out, n - 1, moves[n - 1], index64)


@nb.njit(cache=True, nogil=True, parallel=True)
def apply_batch_vbmi_parallel(states, moves, index64, out):
    """:func:`apply_batch_vbmi` split over numba's threads."""
    n = states.shape[0]
    sbase, obase, ibase = states.ctypes.data, out.ctypes.data, index64.ctypes.data
    for b in nb.prange(n - 1):
        m = moves[b]
        if m >= 0:
            _permute54(sbase + 54 * b, obase + 54 * b, ibase + 64 * m)
        else:
            out[b, :] = states[b, :]
    if n > 0:
        _last_row(states, out, n - 1, moves[n - 1], index64)


@nb.njit(cache=True, nogil=True)
def apply_moves_vbmi(state, moves, index64):
    """State after a whole move sequence, each move one ``vpermb`` on a padded buffer."""
    a = np.zeros(64, np.uint8)
    b = np.zeros(64, np.uint8)
    a[:54] = state
    for k in range(moves.shape[0]):
        permute64(a.ctypes.data, b.ctypes.data, index64.ctypes.data + 64 * moves[k])
        a, b = b, a
    return a[:54].copy()


# --- building blocks of the vector env's step kernel ----------------------------------
# States there are padded to 64 bytes per row (pad lanes hold 54..63, which every
# INDEX64 row maps to themselves), so a row is one aligned 64-byte load and store.
ONEHOT_BYTES = 6 * 54
"""Bytes of one flattened (54, 6) one-hot observation row."""


def _const(values):
    """IR: a constant 64-byte vector."""
    return ir.Constant(_V64, [int(v) for v in values])


_LANES = np.arange(64)
_COLOUR = _const(np.minimum(_LANES // 9, 6))  # colour of sticker id (lanes >= 54: unused)
_CENTRE = _const(np.where(_LANES < 54, 9 * (_LANES // 9) + 4, _LANES))  # lane -> its face's centre lane
_ONEHOT = [(_const(np.where(p < ONEHOT_BYTES, p // 6, 0)), _const(p % 6))
           for p in (64 * j + _LANES for j in range(6))]  # per 64-byte chunk: sticker of each byte, its colour slot


def _colours(builder, s):
    """IR: the colour (0..5) of each sticker of the state at address ``s``."""
    return _vpermb(builder, _COLOUR, _load64(builder, s))


@intrinsic
def centre_bits(typingctx, state):
    """Bit ``i`` set when sticker position ``i`` (< 54) has its face centre's colour (state: raw address).

    The same bits as the portable :func:`cubebench.engine.kernels.centre_bits`.
    A state is solved when all 54 bits are set (:data:`SOLVED_BITS`); the
    popcount is the stickers-in-place count, and face ``f`` is complete when
    bits ``9f..9f+8`` are all set.
    """
    sig = types.int64(types.intp)

    def codegen(context, builder, signature, args):
        col = _colours(builder, args[0])
        same = builder.icmp_unsigned("==", col, _vpermb(builder, col, _CENTRE))
        bits = builder.bitcast(same, ir.IntType(64))
        return builder.and_(bits, ir.Constant(ir.IntType(64), SOLVED_BITS))

    return sig, codegen


@intrinsic
def onehot_row(typingctx, state, out):
    """out[6 i + c] = (colour of sticker i == c): the 324-byte one-hot row (raw addresses)."""
    sig = types.void(types.intp, types.intp)

    def codegen(context, builder, signature, args):
        s, d = args
        col = _colours(builder, s)
        for j, (sticker, slot) in enumerate(_ONEHOT):
            hot = builder.icmp_unsigned("==", _vpermb(builder, col, sticker), slot)
            row = builder.zext(hot, _V64)
            at = builder.add(d, ir.Constant(d.type, 64 * j))
            if 64 * (j + 1) <= ONEHOT_BYTES:
                builder.store(row, builder.inttoptr(at, _V64.as_pointer()), align=1)
            else:
                _store_prefix(builder, row, at, ((0, ONEHOT_BYTES - 64 * j),))
        return context.get_dummy_value()

    return sig, codegen


@intrinsic
def colour_row(typingctx, state, out):
    """out[0:54] = colour of each sticker (raw addresses; exactly 54 bytes written)."""
    sig = types.void(types.intp, types.intp)

    def codegen(context, builder, signature, args):
        s, d = args
        _store_prefix(builder, _colours(builder, s), d, _PIECES)
        return context.get_dummy_value()

    return sig, codegen


def padded_states(n: int) -> np.ndarray:
    """A solved ``(n, 64)`` uint8 state array, 64-byte aligned, pad lanes 54..63 (the layout above)."""
    buf = np.empty(n * 64 + 64, dtype=np.uint8)
    start = -buf.ctypes.data % 64
    states = buf[start:start + n * 64].reshape(n, 64)
    states[:] = _LANES
    return states
