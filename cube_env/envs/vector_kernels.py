"""The Numba kernels of :class:`~cubebench.envs.vector_env.CubeVectorEnv`: one call steps every sub-env.

All sub-environments live in one uint8 state array (64-byte rows, the 54
stickers then padding), which these kernels turn, test, score, reset and
encode in place.  An action is an engine move: a face turn or, on the
partial tiers, a whole-cube view rotation (``x y z``, which turns the held
cube and so changes what the tier shows); an observation row is the one-hot
rows of all 54 stickers or the colour indices of the stickers the tier shows
(``visible``: 54, the Face tier's 9, the Vertex tier's 27), and
:func:`_paint_batch` paints a batch of those into the tier's images from the
renderer's pre-drawn template.  Where the CPU has AVX-512 VBMI
(:mod:`cubebench.engine.simd`) a sub-env's step is a handful of ``vpermb``:
the move, the sticker colours, the solved/potential bits and the one-hot row;
elsewhere portable loops compute the same results.

Resets draw from each sub-env's PCG64 bit stream through NumPy's own C
function (``bit_generator.ctypes.next_uint32``) with NumPy's bounded-integer
algorithm and :func:`cubebench.engine.scramble.scramble`'s rejection rules, so
a scramble is the one ``scramble`` draws with the same generator, bit for bit.

Internal to :mod:`cubebench.envs.vector_env` (and its tests): the env passes
the state, per-env bookkeeping and output arrays in, and the kernels write them.
"""

from __future__ import annotations

import ctypes

import numba as nb
import numpy as np
from gymnasium.vector import AutoresetMode

from ..engine import kernels, simd
from ..engine.rewards import SPARSE_KIND, potential_of_bits

_NEXT_STEP, _SAME_STEP, _DISABLED = 0, 1, 2
_MODES = {AutoresetMode.NEXT_STEP: _NEXT_STEP, AutoresetMode.SAME_STEP: _SAME_STEP, AutoresetMode.DISABLED: _DISABLED}

# NumPy's PCG64 ``next_uint32`` (the same C function for every PCG64 instance),
# typed so a jitted function can call it with a generator's state address.
_NEXT32_TYPE = ctypes.CFUNCTYPE(ctypes.c_uint32, ctypes.c_uint64)
_NEXT32 = _NEXT32_TYPE(
    ctypes.cast(np.random.PCG64(0).ctypes.next_uint32, ctypes.c_void_p).value
)
_OPTS = dict(cache=True, nogil=True)
_CHUNK = 4096  # sub-envs per task of the parallel step (one scratch buffer each)


# --- kernels -------------------------------------------------------------------------
@nb.njit(**_OPTS)
def _bounded(next32, addr, high):
    """``Generator.integers(high + 1)`` for high < 2**32 (NumPy's Lemire rejection, same stream)."""
    excl = np.uint64(high + 1)
    m = np.uint64(next32(addr)) * excl
    left = m & np.uint64(0xFFFFFFFF)
    if left < excl:
        threshold = (np.uint64(0xFFFFFFFF) - np.uint64(high)) % excl
        while left < threshold:
            m = np.uint64(next32(addr)) * excl
            left = m & np.uint64(0xFFFFFFFF)
    return np.int64(m >> np.uint64(32))


@nb.njit(**_OPTS)
def _turn_env(states, b, m, vbmi, dst, src, count, tmp):
    """Engine move ``m`` on sub-env ``b``: one ``vpermb`` when ``vbmi`` (``simd.INDEX64``) is given.

    Every helper taking ``vbmi`` is compiled twice: with ``None`` numba prunes the
    VBMI branch before typing (so its intrinsics are never compiled), with the
    table it runs the VBMI one on the 64-byte rows of :func:`~cubebench.engine.simd.padded_states`.
    The portable turn moves only the stickers that move (``tmp``: 54-byte scratch).
    """
    if vbmi is None:
        n = count[m]
        for k in range(n):
            tmp[k] = states[b, src[m, k]]
        for k in range(n):
            states[b, dst[m, k]] = tmp[k]
    else:
        row = states.ctypes.data + 64 * b
        simd.permute64(row, row, vbmi.ctypes.data + 64 * m)


@nb.njit(**_OPTS)
def _centre_bits(states, b, vbmi, early):
    """:func:`~cubebench.engine.kernels.centre_bits` of sub-env ``b``: one ``vpermb`` with ``vbmi``
    (:func:`~cubebench.engine.simd.centre_bits`), else the engine's portable loop."""
    if vbmi is not None:
        return simd.centre_bits(states.ctypes.data + 64 * b)
    return kernels.centre_bits(states[b], early)


@nb.njit(**_OPTS)
def _status(states, b, kind, vbmi):
    """(solved, reward potential of ``kind``) of sub-env ``b``'s state (the registry's
    :func:`~cubebench.engine.rewards.potential_of_bits`, as the reward wrappers compute it)."""
    bits = _centre_bits(states, b, vbmi, kind == SPARSE_KIND)
    return bits == kernels.SOLVED_BITS, potential_of_bits(bits, kind)


@nb.njit(**_OPTS)
def _write_obs(states, b, obs, onehot, vbmi, visible):
    """Observation of sub-env ``b`` into row ``b`` of the flat (num_envs, 324 or len(visible)) buffer:
    the one-hot rows of all 54 stickers, or the colours of the ``visible`` positions (in their order;
    ``None``: all 54, a branch numba prunes as it prunes ``vbmi``'s, so the whole-cube tiers pay nothing)."""
    if vbmi is None:
        if onehot:
            obs[b, :] = 0  # one vectorised fill, then a single store per sticker
            for i in range(54):
                obs[b, 6 * i + states[b, i] // 9] = 1
        elif visible is None:
            for i in range(54):
                obs[b, i] = states[b, i] // 9
        else:
            for k in range(visible.shape[0]):
                obs[b, k] = states[b, visible[k]] // 9
    elif onehot:
        simd.onehot_row(states.ctypes.data + 64 * b, obs.ctypes.data + simd.ONEHOT_BYTES * b)
    elif visible is None:
        simd.colour_row(states.ctypes.data + 64 * b, obs.ctypes.data + 54 * b)
    else:  # a partial view: 9 or 27 gathers
        for k in range(visible.shape[0]):
            obs[b, k] = states[b, visible[k]] // 9


@nb.njit(**_OPTS)
def _global_move(states, b, a, move, homes, frame_moves):
    """Engine move of action ``a`` (own move ``move``) on sub-env ``b`` with ``move_frame="global"``: for a face turn
    (``homes[a]``, the face it names, >= 0) the same turn of the held face whose centre has that face's colour, as
    ``CubeEnv._global_turn`` picks it (``frame_moves[a, f]``: the turn on held face ``f``)."""
    home = homes[a]
    if home >= 0:
        for f in range(6):
            if states[b, 9 * f + 4] // 9 == home:  # the centre of face f (facelet order)
                return frame_moves[a, f]
    return move


@nb.njit(**_OPTS)
def _scramble_row(states, b, next32, addr, depth, scr_moves, vbmi, dst, src, count, tmp):
    """Sub-env ``b`` = solved cube after :func:`~cubebench.engine.scramble.scramble` (same draws, same rules)."""
    for i in range(54):
        states[b, i] = i
    n_suffix = scr_moves.shape[1]
    prev = -1
    prev2 = -1
    k = 0
    while k < depth:
        f = _bounded(next32, addr, 5)
        if f == prev:
            continue
        if prev >= 0 and f % 3 == prev % 3 and (f < prev or prev2 == f):
            continue
        s = _bounded(next32, addr, n_suffix - 1)
        _turn_env(states, b, scr_moves[f, s], vbmi, dst, src, count, tmp)
        prev2 = prev
        prev = f
        k += 1


@nb.njit(**_OPTS)
def _advance(states, b, m, vbmi, reward_kind, dst, src, count, tmp):
    """Turn sub-env ``b`` by engine move ``m``: (solved before, solved after, potential after).

    "Solved before" is only needed (and only computed) for the sparse reward.
    """
    was_solved = reward_kind == SPARSE_KIND and _status(states, b, SPARSE_KIND, vbmi)[0]
    _turn_env(states, b, m, vbmi, dst, src, count, tmp)
    solved, phi = _status(states, b, reward_kind, vbmi)
    return was_solved, solved, phi


def _make_step_kernel(parallel: bool):
    """The step of every sub-env: ``CubeEnv.step`` plus its reward wrapper, and the autoreset bookkeeping.

    A sub-env whose episode starts now is only marked in ``pending``
    (``_reset_envs`` starts it).  The per-env body sits in the loop itself:
    calling a function with all these arrays per sub-env cost more than the
    step (numba passes each array as seven words and counts references).
    """
    @nb.njit(parallel=parallel, **_OPTS)
    def step_all(states, actions, action_moves, homes, frame_moves, n_turns, vbmi, dst, src, count, steps, moves,
                 max_steps, reward_kind, phi, mode, autoreset, onehot, visible, obs, final_obs, final_mask, rewards,
                 terms, truncs, pending, inst_depth, final_stats, final_phi):
        n = states.shape[0]
        for chunk in nb.prange((n + _CHUNK - 1) // _CHUNK):
            tmp = np.empty(54, np.uint8)
            for b in range(chunk * _CHUNK, min(n, (chunk + 1) * _CHUNK)):
                final_mask[b] = False
                pending[b] = mode == 0 and autoreset[b]
                if pending[b]:  # NEXT_STEP: the step after an episode ended only resets
                    rewards[b] = 0.0
                    terms[b] = truncs[b] = autoreset[b] = False
                    continue
                a = actions[b]
                m = action_moves[a]
                if homes is not None:  # move_frame="global" on a tier with view rotations (else pruned)
                    m = _global_move(states, b, a, m, homes, frame_moves)
                was_solved, solved, new_phi = _advance(states, b, m, vbmi, reward_kind, dst, src, count, tmp)
                steps[b] += 1
                if a < n_turns:  # a face turn; a view rotation is a step but not a move
                    moves[b] += 1
                if reward_kind == SPARSE_KIND:
                    rewards[b] = 1.0 if solved and not was_solved else 0.0
                else:
                    rewards[b] = new_phi - phi[b]
                    phi[b] = new_phi
                terms[b] = solved
                truncs[b] = max_steps > 0 and steps[b] >= max_steps and not solved
                done = terms[b] or truncs[b]
                if done and mode == 1:  # SAME_STEP: keep the last observation, reset in this step
                    _write_obs(states, b, final_obs, onehot, vbmi, visible)
                    final_mask[b] = pending[b] = True
                    final_stats[b, 0] = steps[b]
                    final_stats[b, 1] = moves[b]
                    final_stats[b, 2] = inst_depth[b]
                    final_phi[b] = phi[b]
                    continue
                if mode == 0:
                    autoreset[b] = done
                _write_obs(states, b, obs, onehot, vbmi, visible)

    return step_all


_step_serial = _make_step_kernel(False)
_step_parallel = _make_step_kernel(True)


@nb.njit(**_OPTS)
def _reset_envs(mask, states, next32, addrs, depths, scr_moves, vbmi, dst, src, count,
                steps, moves, phi, reward_kind, inst_depth, onehot, visible, obs):
    """Start a new seeded scramble episode in every sub-env of ``mask`` and write its observation.

    Separate from the step kernel: calling NumPy's bit generator through a
    function argument slows whatever kernel carries it, so only resets pay.
    """
    tmp = np.empty(54, np.uint8)
    for b in range(states.shape[0]):
        if mask[b]:
            steps[b] = 0
            moves[b] = 0
            _scramble_row(states, b, next32, addrs[b], depths[b], scr_moves, vbmi, dst, src, count, tmp)
            phi[b] = _status(states, b, reward_kind, vbmi)[1]
            inst_depth[b] = depths[b]
            _write_obs(states, b, obs, onehot, vbmi, visible)


@nb.njit(**_OPTS)
def _all_solved(states, vbmi, out):
    """Whether each sub-env is solved."""
    for b in range(states.shape[0]):
        out[b] = _status(states, b, SPARSE_KIND, vbmi)[0]


@nb.njit(**_OPTS)
def _all_obs(states, onehot, vbmi, visible, obs):
    """Every sub-env's observation (after a reset, which may leave rows unwritten)."""
    for b in range(states.shape[0]):
        _write_obs(states, b, obs, onehot, vbmi, visible)


@nb.njit(boundscheck=False, **_OPTS)
def _paint_batch(colours, template, runs, pattern, flat, stride, with_template):
    """Image ``b`` of the batch (bytes ``b * stride`` on of ``flat``, the (n, H, W, 3) buffer flattened) =
    :meth:`~cubebench.render.canvas.StickerCanvas.paint` of ``colours[b]`` (one colour per sticker slot).

    The canvas's sticker pixels come as runs of consecutive bytes (``runs[r]``: first byte, byte count, slot)
    and each slot's shaded colour as a byte pattern long enough for its longest run (``pattern[s, c]``), so
    painting is a few hundred short copies per image; ``with_template`` first copies the template (the
    background, which a buffer painted before already holds).  Unsigned indices: no negative-index wraparound,
    so the copies vectorise.
    """
    size = np.uint64(stride)
    for b in range(colours.shape[0]):
        base = np.uint64(b) * size
        if with_template:
            for k in range(size):
                flat[base + k] = template[k]
        for r in range(runs.shape[0]):
            start = base + np.uint64(runs[r, 0])
            s = runs[r, 2]
            pat = pattern[s, colours[b, s]]
            for k in range(np.uint64(runs[r, 1])):
                flat[start + k] = pat[k]
