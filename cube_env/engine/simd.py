"""AVX-512 VBMI kernels: one ``vpermb`` applies a whole move to a state.

A state (54 bytes) fits one 64-byte vector register, and a move is a byte
permutation, which ``vpermb`` performs in one instruction.  These kernels
are used when the CPU has AVX-512 VBMI (detected at import, overridable with
``CUBEBENCH_SIMD=0``); :mod:`.batch` falls back to the portable sparse
kernels otherwise.  Rows are loaded as 64 bytes (reading 10 bytes into the
next row, whose values are never used) and stored as exactly 54 bytes, so
neighbouring rows are never written; the last row goes through a padded copy.
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


def _permuted(builder, s, i):
    """IR: the 64-byte vector at address ``s`` permuted by the index vector at ``i``."""
    vec = builder.load(builder.inttoptr(s, _V64.as_pointer()), align=1)
    perm = builder.load(builder.inttoptr(i, _V64.as_pointer()), align=1)
    fn = cgutils.get_or_insert_function(
        builder.module, ir.FunctionType(_V64, [_V64, _V64]), "llvm.x86.avx512.permvar.qi.512"
    )
    return builder.call(fn, [vec, perm])


@intrinsic
def _permute64(typingctx, src, dst, idx):
    """dst[0:64] = src[idx[0:64]] for raw addresses of 64-byte buffers."""
    sig = types.void(types.intp, types.intp, types.intp)

    def codegen(context, builder, signature, args):
        s, d, i = args
        builder.store(_permuted(builder, s, i), builder.inttoptr(d, _V64.as_pointer()), align=1)
        return context.get_dummy_value()

    return sig, codegen


@intrinsic
def _permute54(typingctx, src, dst, idx):
    """dst[0:54] = src[idx[0:54]] for raw addresses (src and idx readable for 64 bytes)."""
    sig = types.void(types.intp, types.intp, types.intp)

    def codegen(context, builder, signature, args):
        s, d, i = args
        res = _permuted(builder, s, i)
        undef = ir.Constant(_V64, ir.Undefined)
        for start, n in _PIECES:
            mask = ir.Constant(ir.VectorType(ir.IntType(32), n), list(range(start, start + n)))
            piece = builder.shuffle_vector(res, undef, mask)
            addr = builder.inttoptr(builder.add(d, ir.Constant(d.type, start)), ir.VectorType(ir.IntType(8), n).as_pointer())
            builder.store(piece, addr, align=1)
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
        _permute64(a.ctypes.data, b.ctypes.data, index64.ctypes.data + 64 * moves[k])
        a, b = b, a
    return a[:54].copy()
