"""The native vector env on the partial tiers (Face, Vertex): sub-env i is ``make_cube_env`` seeded seed + i.

Every partial tier of the registry is checked in each of its batched forms (the compact ``indices`` form, the
colours of exactly the stickers the tier shows, and the painted ``image`` form): whole trajectories of random
face turns and view rotations, autoresets included, equal a ``SyncVectorEnv`` of single envs step for step;
the observation holds only the shown stickers and ``info`` no state; seeds; ``gym.make_vec`` on the ids.
"""

from __future__ import annotations

import dataclasses

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode, SyncVectorEnv

import cubebench
from cubebench.engine.moves import VIEW_ACTIONS
from cubebench.envs.vector_env import CubeVectorEnv
from cubebench.generators import CertifiedGenerator, ScrambleGenerator
from cubebench.tiers import PUBLIC_INFO_KEYS, TIER_SPECS

PARTIAL = [name for name, spec in TIER_SPECS.items() if spec.partial]
CASES = [pytest.param(tier, form, id=f"{tier}-{form}") for tier in PARTIAL for form in TIER_SPECS[tier].vector_forms]
SIZE = 32  # the smallest image every partial tier draws: fast, and every sticker still has its pixels


def _single(tier: str, **kwargs) -> gym.Env:
    """The single env the native one must equal: same kwargs, the native env's default scrambles."""
    kwargs.setdefault("generator", ScrambleGenerator())
    return cubebench.make_cube_env(tier, **kwargs)


def _sync(n: int, mode: AutoresetMode, tier: str, **kwargs) -> SyncVectorEnv:
    return SyncVectorEnv([lambda: _single(tier, **kwargs) for _ in range(n)], autoreset_mode=mode)


def _same_info(a: dict, b: dict, where: str) -> None:
    """The two infos have the same keys, masks and values (final_obs and final_info too)."""
    assert set(a) == set(b), f"{where}: keys {sorted(set(a) ^ set(b))} in only one info"
    for key in a:
        if key.startswith("_") or key in ("final_obs", "final_info"):
            continue
        m = a["_" + key]
        assert np.array_equal(m, b["_" + key]), f"{where}: mask of {key}"
        assert np.array_equal(np.asarray(a[key])[m], np.asarray(b[key])[m]), f"{where}: {key}"
    if "final_obs" in a:
        assert np.array_equal(a["_final_obs"], b["_final_obs"])
        for x, y in zip(a["final_obs"], b["final_obs"]):
            assert (x is None) == (y is None) and (x is None or np.array_equal(x, y)), f"{where}: final_obs"
        _same_info(a["final_info"], b["final_info"], where + " final_info")


def _compare(native: CubeVectorEnv, sync: SyncVectorEnv, steps: int, seed: int) -> tuple[int, int]:
    """Step both with the same random actions (view rotations among them): (episodes ended, rotations taken)."""
    n = native.num_envs
    assert native.single_action_space == sync.single_action_space
    o1, i1 = native.reset(seed=seed)
    o2, i2 = sync.reset(seed=seed)
    assert np.array_equal(o1, o2)
    _same_info(i1, i2, "reset")
    rng = np.random.default_rng(seed)
    ended = rotations = 0
    for t in range(steps):
        a = rng.integers(native.single_action_space.n, size=n)
        r1, r2 = native.step(a), sync.step(a)
        for k, name in enumerate(("obs", "reward", "terminated", "truncated")):
            assert np.array_equal(r1[k], r2[k]), f"step {t}: {name} differs"
        _same_info(r1[4], r2[4], f"step {t}")
        ended += int((r1[2] | r1[3]).sum())
        rotations += int((a >= native.n_turns).sum())
    return ended, rotations


@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP])
@pytest.mark.parametrize("tier, form", CASES)
def test_trajectories_equal_single_envs(tier: str, form: str, mode: AutoresetMode) -> None:
    n, kwargs = 5, dict(depth=1, max_steps=4, obs_format=form, image_size=SIZE, reward="sticker")
    native = CubeVectorEnv(n, tier=tier, autoreset_mode=mode, **kwargs)
    ended, rotations = _compare(native, _sync(n, mode, tier, **kwargs), 40, seed=7)
    assert ended > 20 and rotations > 20  # autoresets and view rotations were exercised


@pytest.mark.parametrize("tier", PARTIAL)
def test_sparse_reward_half_metric_and_global_frame_equal_single_envs(tier: str) -> None:
    """The other metric (24 actions), turns kept on their original faces after rotations, sparse reward; DISABLED
    autoreset with masked resets."""
    n, kwargs = 4, dict(depth=2, max_steps=5, obs_format="indices", metric="half", move_frame="global")
    native = CubeVectorEnv(n, tier=tier, **kwargs)
    assert native.single_action_space.n == 24 and native.action_names[-6:] == VIEW_ACTIONS
    _compare(native, _sync(n, AutoresetMode.NEXT_STEP, tier, **kwargs), 30, seed=3)
    native = CubeVectorEnv(n, tier=tier, autoreset_mode=AutoresetMode.DISABLED, **kwargs)
    sync = _sync(n, AutoresetMode.DISABLED, tier, **kwargs)
    assert np.array_equal(native.reset(seed=5)[0], sync.reset(seed=5)[0])
    rng = np.random.default_rng(5)
    for t in range(25):
        a = rng.integers(24, size=n)
        r1, r2 = native.step(a), sync.step(a)
        for x, y in zip(r1[:4], r2[:4]):
            assert np.array_equal(x, y), t
        done = r1[2] | r1[3]
        if done.any():
            assert np.array_equal(native.reset(options={"reset_mask": done})[0][done],
                                  sync.reset(options={"reset_mask": done.copy()})[0][done])


def test_the_global_frame_differs_from_the_held_one_after_a_rotation() -> None:
    """``R`` after ``y`` turns another face in the two frames (the comparisons above can tell them apart)."""
    held, glob = (CubeVectorEnv(1, tier=PARTIAL[0], obs_format="indices", depth=3, move_frame=f)
                  for f in ("held", "global"))
    y, r = held.action_names.index("y"), held.action_names.index("R")
    for env in (held, glob):
        env.reset(seed=0)
        env.step(np.array([y]))
        env.step(np.array([r]))
    assert held.facelets(0) != glob.facelets(0)


@pytest.mark.parametrize("tier", PARTIAL)
def test_python_generator_path_equals_single_envs(tier: str) -> None:
    """A generator the kernel does not draw itself (certified starts) resets from Python, with the same encoding."""
    n, kwargs = 3, dict(depth=1, max_steps=3, obs_format="indices", generator=CertifiedGenerator())
    _compare(CubeVectorEnv(n, tier=tier, **kwargs), _sync(n, AutoresetMode.NEXT_STEP, tier, **kwargs), 12, seed=1)


@pytest.mark.parametrize("tier", PARTIAL)
def test_the_observation_is_the_shown_stickers_and_nothing_else(tier: str) -> None:
    spec = TIER_SPECS[tier]
    visible = np.array(spec.visible)
    assert len(visible) < 54 and len(visible) == 9 * len(spec.visible_faces)
    env = CubeVectorEnv(6, tier=tier, obs_format="indices", depth=6, reward="face")
    assert env.single_observation_space == gym.spaces.Box(0, 5, (len(visible),), np.uint8)
    assert env.single_observation_space == _single(tier, obs_format="indices").observation_space
    obs, info = env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(30):
        assert np.array_equal(obs, env.states[:, visible] // 9)  # the held cube's shown stickers, facelet order
        assert {k.lstrip("_") for k in info} <= PUBLIC_INFO_KEYS  # no facelets, scramble, distance or phi
        obs, _, _, _, info = env.step(rng.integers(env.single_action_space.n, size=6))


@pytest.mark.parametrize("tier", PARTIAL)
def test_images_are_the_painters(tier: str) -> None:
    """The batch painter gives the single env's pixels at several sizes, and copy=False reuses one buffer."""
    spec = TIER_SPECS[tier]
    for size in (SIZE, 57, 224):
        env = CubeVectorEnv(3, tier=tier, depth=5, image_size=size)
        obs, _ = env.reset(seed=size)
        assert obs.shape == (3, size, size, 3)
        for b in range(3):
            assert np.array_equal(obs[b], spec.image(env.states[b] // 9, size))
    fast = CubeVectorEnv(2, tier=tier, depth=3, image_size=SIZE, copy=False)
    first = fast.reset(seed=0)[0]
    for step in range(6):  # a face turn and a view rotation each step; stickers repainted over the last frame
        frame = fast.step(np.array([step % fast.n_turns, fast.n_turns + step % 6]))[0]
        assert frame is first
        assert all(np.array_equal(frame[b], spec.image(fast.states[b] // 9, SIZE)) for b in range(2))


@pytest.mark.parametrize("tier", PARTIAL)
def test_seeding(tier: str) -> None:
    make = lambda: CubeVectorEnv(4, tier=tier, obs_format="indices", depth=6)  # noqa: E731
    a, b, c = make(), make(), make()
    oa, ob, oc = a.reset(seed=42)[0], b.reset(seed=42)[0], c.reset(seed=43)[0]
    assert np.array_equal(oa, ob) and not np.array_equal(oa, oc)
    assert np.array_equal(oa[1:], oc[:3])  # sub-env i is seeded seed + i
    assert np.array_equal(make().reset(seed=[42, 43, 44, 45])[0], oa)
    acts = np.random.default_rng(0).integers(18, size=(10, 4))
    assert all(np.array_equal(a.step(x)[0], b.step(x)[0]) for x in acts)


@pytest.mark.parametrize("tier", PARTIAL)
def test_make_vec_on_the_id_gives_the_native_env(tier: str) -> None:
    spec = TIER_SPECS[tier]
    assert gym.spec(spec.env_id).vector_entry_point is not None
    env = gym.make_vec(spec.env_id, num_envs=2, depth=1, obs_format="indices")
    assert isinstance(env, CubeVectorEnv) and env.observation_space.shape == (2, len(spec.visible))
    default = gym.make_vec(spec.env_id, num_envs=2, depth=1)  # the single env's default form: the image
    single = gym.make(spec.env_id, depth=1)
    assert default.single_observation_space == single.observation_space
    assert default.single_action_space == single.action_space
    with pytest.raises(ValueError, match="vectorization_mode='sync'"):
        gym.make_vec(spec.env_id, num_envs=2, obs_format="text")
    sync = gym.make_vec(spec.env_id, num_envs=2, vectorization_mode="sync", obs_format="text")
    assert isinstance(sync, SyncVectorEnv)


@pytest.mark.parametrize("tier", PARTIAL)
def test_render_shows_what_the_single_env_renders(tier: str) -> None:
    env = CubeVectorEnv(2, tier=tier, obs_format="indices", depth=3, image_size=SIZE, render_mode="rgb_array")
    single = _single(tier, obs_format="indices", depth=3, image_size=SIZE, render_mode="rgb_array")
    env.reset(seed=4)
    single.reset(seed=5)  # sub-env 1
    assert np.array_equal(env.render()[1], single.render())


def test_a_tier_whose_picture_is_not_its_shown_stickers_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """The batch paints the canvas with the shown stickers; a tier drawing something else gets an error, not
    wrong pixels (here: a view of the B face whose picture draws the F face)."""
    face = TIER_SPECS[PARTIAL[0]]
    assert face.visible_faces == "F"
    back = dataclasses.replace(face, name="back", visible_faces="B")  # the F face's picture, B's stickers
    monkeypatch.setitem(TIER_SPECS, "back", back)
    with pytest.raises(ValueError, match="cannot paint it in a batch"):
        CubeVectorEnv(2, tier="back", obs_format="image", image_size=SIZE)
    monkeypatch.setitem(TIER_SPECS, "back", dataclasses.replace(  # drawn right, it paints
        back, image=lambda col, size: face.image(np.roll(col, 27), size)))  # B's positions where F's were
    CubeVectorEnv(2, tier="back", obs_format="image", image_size=SIZE)
    assert CubeVectorEnv(2, tier="back", obs_format="indices").single_observation_space.shape == (9,)
