"""The native CubeVectorEnv: trajectories equal N single envs, Gymnasium vector-API checks."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode, SyncVectorEnv

import cubebench
from cubebench.envs.vector_env import CubeVectorEnv
from cubebench.generators import ScrambleGenerator

COMMON_KEYS = ("depth", "steps", "moves", "is_success", "phi", "reward_kind")
TEST_ID = "CubeBenchTest-SymbolicVector-v0"


def _sync(n: int, mode: AutoresetMode, **kwargs) -> SyncVectorEnv:
    tier = kwargs.pop("tier", "symbolic")
    return SyncVectorEnv([lambda: cubebench.make_cube_env(tier, **kwargs) for _ in range(n)], autoreset_mode=mode)


def _same_info(a: dict, b: dict, where: str) -> None:
    """Every key the native env reports equals the single envs' (values and masks)."""
    for key in COMMON_KEYS:
        assert (key in a) == (key in b), f"{where}: key {key!r} present in only one info"
        if key in a:
            assert np.array_equal(a["_" + key], b["_" + key]), f"{where}: mask of {key}"
            m = a["_" + key]
            assert np.array_equal(np.asarray(a[key])[m], np.asarray(b[key])[m]), f"{where}: {key}"
    for key in ("final_obs", "final_info"):
        assert (key in a) == (key in b), f"{where}: {key} present in only one info"
    if "final_obs" in a:
        assert np.array_equal(a["_final_obs"], b["_final_obs"])
        for x, y in zip(a["final_obs"], b["final_obs"]):
            assert (x is None) == (y is None) and (x is None or np.array_equal(x, y)), f"{where}: final_obs"
        _same_info(a["final_info"], b["final_info"], where + " final_info")


def _compare(native, sync, n: int, steps: int, seed: int, n_actions: int = 12) -> int:
    """Step both with the same random actions; returns how many episodes ended (resets exercised)."""
    o1, i1 = native.reset(seed=seed)
    o2, i2 = sync.reset(seed=seed)
    assert np.array_equal(o1, o2)
    _same_info(i1, i2, "reset")
    rng = np.random.default_rng(seed)
    ended = 0
    for t in range(steps):
        a = rng.integers(n_actions, size=n)
        r1, r2 = native.step(a), sync.step(a)
        for k, name in enumerate(("obs", "reward", "terminated", "truncated")):
            assert np.array_equal(r1[k], r2[k]), f"step {t}: {name} differs"
        _same_info(r1[4], r2[4], f"step {t}")
        ended += int((r1[2] | r1[3]).sum())
    return ended


@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP])
@pytest.mark.parametrize("reward", ["none", "sticker", "face"])
def test_trajectories_equal_single_envs(mode, reward):
    n, kwargs = 6, dict(depth=2, reward=reward, max_steps=5)
    native = CubeVectorEnv(n, autoreset_mode=mode, **kwargs)
    ended = _compare(native, _sync(n, mode, **kwargs), n, 60, seed=11)
    assert ended > 20  # autoresets (solved and truncated) were exercised


def test_half_turn_metric_and_onehot_indices():
    n = 4
    for fmt in ("onehot", "indices"):
        kwargs = dict(depth=3, metric="half", max_steps=6, obs_format=fmt)
        native = CubeVectorEnv(n, **kwargs)
        assert native.single_action_space.n == 18
        _compare(native, _sync(n, AutoresetMode.NEXT_STEP, **kwargs), n, 30, seed=5, n_actions=18)


def test_parallel_kernel_equals_serial():
    a, b = CubeVectorEnv(64, depth=4, parallel=True), CubeVectorEnv(64, depth=4, parallel=False)
    assert np.array_equal(a.reset(seed=1)[0], b.reset(seed=1)[0])
    rng = np.random.default_rng(0)
    for _ in range(50):
        act = rng.integers(12, size=64)
        ra, rb = a.step(act), b.step(act)
        for x, y in zip(ra[:4], rb[:4]):
            assert np.array_equal(x, y)


class _WrappedScrambles:
    """A generator the kernel does not know: forces the Python-side reset path."""

    def __init__(self) -> None:
        self.inner = ScrambleGenerator()
        self.calls = 0

    def __call__(self, depth, metric, rng):
        self.calls += 1
        return self.inner(depth, metric, rng)


@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP])
def test_python_generator_path_equals_single_envs(mode):
    n, gen = 5, _WrappedScrambles()
    native = CubeVectorEnv(n, depth=2, max_steps=4, generator=gen, autoreset_mode=mode)
    sync = SyncVectorEnv([lambda: cubebench.make_cube_env(depth=2, max_steps=4, generator=ScrambleGenerator())
                          for _ in range(n)], autoreset_mode=mode)
    _compare(native, sync, n, 30, seed=3)
    assert gen.calls > n  # resets went through the generator


def test_disabled_mode_and_reset_mask_equal_single_envs():
    n = 5
    native = CubeVectorEnv(n, depth=2, max_steps=4, autoreset_mode=AutoresetMode.DISABLED)
    sync = _sync(n, AutoresetMode.DISABLED, depth=2, max_steps=4)
    assert np.array_equal(native.reset(seed=7)[0], sync.reset(seed=7)[0])
    rng = np.random.default_rng(1)
    for t in range(40):
        a = rng.integers(12, size=n)
        r1, r2 = native.step(a), sync.step(a)
        for x, y in zip(r1[:4], r2[:4]):
            assert np.array_equal(x, y), t
        done = r1[2] | r1[3]
        if done.any():
            o1, i1 = native.reset(options={"reset_mask": done})
            o2, i2 = sync.reset(options={"reset_mask": done.copy()})
            assert np.array_equal(o1[done], o2[done])
            _same_info(i1, i2, f"masked reset {t}")


def test_reset_depth_option_and_set_depths():
    env = CubeVectorEnv(3, depth=1, max_steps=3)
    _, info = env.reset(seed=0, options={"depth": np.array([0, 2, 5])})
    assert info["depth"].tolist() == [0, 2, 5] and info["is_success"].tolist() == [True, False, False]
    assert env.depths.tolist() == [1, 1, 1]  # the option applies to this reset only, as in CubeEnv
    env.set_depths(np.array([3, 3, 3]))
    for _ in range(4):  # every episode ends by step 3, the next step autoresets at depth 3
        _, _, _, _, info = env.step(np.zeros(3, dtype=np.int64))
    assert info["depth"].tolist() == [3, 3, 3]
    with pytest.raises(ValueError):
        env.set_depths(-1)
    with pytest.raises(ValueError):
        env.reset(options={"state": "x"})


def test_visual_tier_image_batch_equals_single_envs():
    n, kwargs = 3, dict(tier="visual", depth=2, max_steps=4, image_size=64)
    native = CubeVectorEnv(n, **kwargs)
    assert native.single_observation_space.shape == (64, 64, 3)
    _compare(native, _sync(n, AutoresetMode.NEXT_STEP, **kwargs), n, 12, seed=2)


# --- Gymnasium vector-API checks (what check_env checks, for a VectorEnv) -------------
def test_spaces_dtypes_and_observation_containment():
    env = CubeVectorEnv(8, depth=3)
    assert env.single_observation_space == gym.spaces.Box(0, 1, (54, 6), np.uint8)
    assert env.observation_space.shape == (8, 54, 6) and env.action_space.shape == (8,)
    single = cubebench.make_cube_env("symbolic")
    assert env.single_observation_space == single.observation_space
    assert env.single_action_space == single.action_space
    obs, info = env.reset(seed=0)
    assert env.observation_space.contains(obs)
    obs, rew, term, trunc, info = env.step(env.action_space.sample())
    assert env.observation_space.contains(obs)
    assert rew.dtype == np.float64 and rew.shape == (8,)
    assert term.dtype == np.bool_ and trunc.dtype == np.bool_ and term.shape == trunc.shape == (8,)
    for key, value in info.items():
        assert len(value) == 8, key
    assert env.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP


def test_determinism_and_seeding():
    a, b, c = CubeVectorEnv(4, depth=5), CubeVectorEnv(4, depth=5), CubeVectorEnv(4, depth=5)
    oa, ob, oc = a.reset(seed=42)[0], b.reset(seed=42)[0], c.reset(seed=43)[0]
    assert np.array_equal(oa, ob) and not np.array_equal(oa, oc)
    explicit = CubeVectorEnv(4, depth=5)
    assert np.array_equal(explicit.reset(seed=[42, 43, 44, 45])[0], oa)
    assert np.array_equal(c.reset(seed=[43, 44, 45, 46])[0], oc)
    assert np.array_equal(oa[1:], oc[:3])  # sub-env i is seeded seed + i


def test_observations_do_not_share_memory_unless_copy_false():
    env = CubeVectorEnv(2, depth=1)
    o0, _ = env.reset(seed=0)
    o1 = env.step(np.array([0, 1]))[0]
    assert not np.shares_memory(o0, o1)
    fast = CubeVectorEnv(2, depth=1, copy=False)
    f0, _ = fast.reset(seed=0)
    assert np.shares_memory(f0, fast.step(np.array([0, 1]))[0])


def test_errors_and_close():
    env = CubeVectorEnv(2)
    with pytest.raises(RuntimeError):
        env.step(np.zeros(2, dtype=np.int64))
    env.reset(seed=0)
    with pytest.raises(ValueError):
        env.step(np.array([0, 12]))
    with pytest.raises(ValueError):
        env.step(np.array([0]))
    with pytest.raises(TypeError):
        env.reset(options={"reset_mask": np.array([1, 0])})
    with pytest.raises(ValueError):
        env.reset(options={"reset_mask": np.zeros(2, dtype=np.bool_)})
    for bad in (dict(tier="hexagon"), dict(tier="face", obs_format="text"), dict(renderer="pyrender"),
                dict(move_frame="body"), dict(reward="heuristic"), dict(obs_format="text"), dict(num_envs=0), dict(max_moves=40), dict(max_rotations=4)):
        with pytest.raises(ValueError):
            CubeVectorEnv(**{"num_envs": 2, **bad})
    env.close()
    env.close()


def test_render_modes():
    env = CubeVectorEnv(2, render_mode="ansi")
    env.reset(seed=0)
    frames = env.render()
    assert len(frames) == 2 and all(isinstance(f, str) for f in frames)
    img = CubeVectorEnv(2, render_mode="rgb_array")
    img.reset(seed=0)
    assert img.render()[0].shape[2] == 3


def test_make_vec_uses_the_vector_entry_point():
    if TEST_ID not in gym.registry:
        gym.register(id=TEST_ID, entry_point="cubebench.wrappers.tier_envs:make_cube_env",
                     vector_entry_point="cubebench.envs.vector_env:CubeVectorEnv", kwargs={"tier": "symbolic"})
    env = gym.make_vec(TEST_ID, num_envs=3, vectorization_mode="vector_entry_point", depth=2, reward="sticker")
    assert isinstance(env, CubeVectorEnv) and env.num_envs == 3 and env.reward == "sticker"
    obs, info = env.reset(seed=0)
    assert obs.shape == (3, 54, 6) and info["depth"].tolist() == [2, 2, 2]
    registered = gym.spec("CubeBench-Symbolic-v0")
    if registered.vector_entry_point is not None:  # once registration.py carries it
        assert isinstance(gym.make_vec("CubeBench-Symbolic-v0", num_envs=2), CubeVectorEnv)


@pytest.mark.parametrize("env_id, option", [("CubeBench-Symbolic-v0", {"image_size": 64}),
                                            ("CubeBench-Symbolic-v0", {"letters": "colours"}),
                                            ("CubeBench-Visual-v0", {"letters": "colours"})])
def test_an_option_the_native_vector_env_does_not_read_is_refused(env_id: str, option: dict) -> None:
    [(name, value)] = option.items()
    with pytest.raises(ValueError, match=f"CubeVectorEnv does not read {name}={value!r}"):
        gym.make_vec(env_id, num_envs=2, **option)
