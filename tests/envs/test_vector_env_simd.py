"""The vector env's AVX-512 VBMI step kernels equal its portable ones, bit for bit.

The VBMI side is skipped where the CPU lacks VBMI (or ``CUBEBENCH_SIMD=0``);
the portable side always runs and is checked against the engine's reference
kernels, so both variants are pinned to the same semantics.
"""

from __future__ import annotations

import inspect

import numba as nb
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

from cubebench.engine import SOLVED, TABLE, kernels, simd
from cubebench.engine.moves import ORIENTATIONS, SPARSE_COUNT, SPARSE_DST, SPARSE_SRC
from cubebench.envs import vector_kernels as ve
from cubebench.envs.vector_env import CubeVectorEnv
from cubebench.tiers import TIER_SPECS

needs_vbmi = pytest.mark.skipif(not simd.HAS_VBMI, reason="CPU without AVX-512 VBMI (or CUBEBENCH_SIMD=0)")
VARIANTS = [pytest.param(False, id="portable"), pytest.param(True, id="vbmi", marks=needs_vbmi)]


def _random_states(n: int, rng: np.random.Generator) -> np.ndarray:
    """Padded states: solved, one move from solved, deep scrambles, some rotated (centres moved)."""
    states = simd.padded_states(n)
    for b in range(n):
        depth = (0, 1, 2, 25)[b % 4]
        moves = rng.integers(0, len(TABLE), size=depth).astype(np.int64)  # every move, rotations included
        row = kernels.apply_moves(SOLVED, TABLE, moves)
        states[b, :54] = row[ORIENTATIONS[b % len(ORIENTATIONS)]] if b % 3 == 0 else row
    return states


def _onehot(states: np.ndarray) -> np.ndarray:
    return np.eye(6, dtype=np.uint8)[states[:, :54] // 9].reshape(len(states), -1)


@pytest.mark.parametrize("use_vbmi", VARIANTS)
def test_helpers_equal_the_engine_reference(use_vbmi: bool) -> None:
    """Solved test, both potentials and both observation forms against ``engine.kernels`` and NumPy."""
    rng = np.random.default_rng(0)
    states = _random_states(400, rng)
    vbmi = simd.INDEX64 if use_vbmi else None
    for b, row in enumerate(states[:, :54]):
        assert ve._status(states, b, 0, vbmi)[0] == kernels.is_solved(row)
        assert ve._status(states, b, 1, vbmi) == (kernels.is_solved(row), kernels.stickers_in_place(row))
        assert ve._status(states, b, 2, vbmi)[1] == kernels.faces_completed(row)
    hot, col = np.full((400, 324), 7, np.uint8), np.full((400, 54), 7, np.uint8)
    ve._all_obs(states, True, vbmi, None, hot)
    ve._all_obs(states, False, vbmi, None, col)  # None: all 54 stickers (the whole-cube tiers' fast path)
    assert np.array_equal(hot, _onehot(states)) and np.array_equal(col, states[:, :54] // 9)
    gathered = np.full((400, 54), 7, np.uint8)
    ve._all_obs(states, False, vbmi, np.arange(54, dtype=np.int64)[::-1].copy(), gathered)
    assert np.array_equal(gathered, states[:, 53::-1] // 9)
    for spec in (spec for spec in TIER_SPECS.values() if spec.partial):  # a partial view's stickers, gathered
        visible = np.array(spec.visible, dtype=np.int64)
        part = np.full((400, len(visible)), 7, np.uint8)
        ve._all_obs(states, False, vbmi, visible, part)
        assert np.array_equal(part, states[:, visible] // 9)


@pytest.mark.parametrize("use_vbmi", VARIANTS)
def test_turn_equals_the_move_table(use_vbmi: bool) -> None:
    rng = np.random.default_rng(1)
    states = _random_states(200, rng)
    moves = rng.integers(0, len(TABLE), size=200)
    expected = np.take_along_axis(states[:, :54], TABLE[moves], axis=1)
    tmp = np.empty(54, np.uint8)
    for b, m in enumerate(moves):
        ve._turn_env(states, b, m, simd.INDEX64 if use_vbmi else None, SPARSE_DST, SPARSE_SRC,
                     SPARSE_COUNT, tmp)
    assert np.array_equal(states[:, :54], expected)
    assert np.array_equal(states[:, 54:], np.tile(np.arange(54, 64, dtype=np.uint8), (200, 1)))


@needs_vbmi
@pytest.mark.parametrize("mode", list(AutoresetMode))
@pytest.mark.parametrize("reward", ["none", "sticker", "face"])
@pytest.mark.parametrize("obs_format", ["onehot", "indices"])
@pytest.mark.parametrize("parallel", [False, True])
def test_vbmi_env_equals_portable_env(mode, reward, obs_format, parallel) -> None:
    """Whole trajectories on random batches (random and solved states planted mid-run, all modes)."""
    n, kw = 97, dict(depth=3, reward=reward, max_steps=6, obs_format=obs_format, autoreset_mode=mode,
                     parallel=parallel)
    fast, slow = CubeVectorEnv(n, vbmi=True, **kw), CubeVectorEnv(n, vbmi=False, **kw)
    assert np.array_equal(fast.reset(seed=4)[0], slow.reset(seed=4)[0])
    rng = np.random.default_rng(2)
    for t in range(40):
        if t == 10:
            planted = _random_states(n, rng)[:, :54]
            fast.states[:], slow.states[:] = planted, planted
        act = rng.integers(12, size=n)
        a, b = fast.step(act), slow.step(act)
        for x, y in zip(a[:4], b[:4]):
            assert np.array_equal(x, y), t
        assert a[4].keys() == b[4].keys()
        for key in a[4]:
            if key not in ("final_obs", "final_info"):
                assert np.array_equal(a[4][key], b[4][key]), (t, key)
        assert np.array_equal(fast.states, slow.states)
        if mode == AutoresetMode.DISABLED and (a[2] | a[3]).any():
            done = a[2] | a[3]
            assert np.array_equal(fast.reset(options={"reset_mask": done})[0],
                                  slow.reset(options={"reset_mask": done})[0])


def test_vbmi_request_without_vbmi_is_an_error() -> None:
    if simd.HAS_VBMI:
        assert CubeVectorEnv(2, vbmi=True)._vbmi is simd.INDEX64
    else:
        with pytest.raises(ValueError):
            CubeVectorEnv(2, vbmi=True)
    assert CubeVectorEnv(2, vbmi=False)._vbmi is None


@pytest.mark.parametrize("helper", ["_turn_env", "_centre_bits", "_write_obs"])
def test_portable_variant_compiles_no_vbmi_instruction(helper: str) -> None:
    """With ``vbmi=None`` numba prunes the VBMI branch, so a CPU without VBMI never meets ``vpermb``."""
    states, obs, tmp = simd.padded_states(2), np.zeros((2, 324), np.uint8), np.empty(54, np.uint8)
    args = {"_turn_env": (states, 1, 3, None, SPARSE_DST, SPARSE_SRC, SPARSE_COUNT, tmp),
            "_centre_bits": (states, 1, None, False),
            "_write_obs": (states, 1, obs, True, None, None)}[helper]
    fresh = nb.njit(getattr(ve, helper).py_func)  # uncached, so its IR can be inspected
    fresh(*args)
    assert "permvar" not in "".join(fresh.inspect_llvm().values())
    if simd.HAS_VBMI:  # the other variant does use it (the check above can fail)
        at = list(inspect.signature(fresh.py_func).parameters).index("vbmi")
        vbmi_args = (*args[:at], simd.INDEX64, *args[at + 1:])
        fresh(*vbmi_args)
        assert sum("permvar" in ir for ir in fresh.inspect_llvm().values()) == 1
