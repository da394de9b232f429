"""Reward wrappers: potentials, telescoping sums, rotation invariance, selection by id."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import cubebench
from helpers import SCRAMBLES
from cubebench import CubeEnv
from cubebench.engine import ORIENTATIONS, SOLVED, kernels
from cubebench.wrappers.reward_wrappers import FaceReward, StickerReward, make_reward_wrapper


@pytest.mark.parametrize("reward", ["sticker", "face"])
@pytest.mark.parametrize("tier", list(cubebench.TIERS))
def test_rewards_telescope_on_every_id(reward: str, tier: str) -> None:
    # phi is ground truth: the partial tiers show it only with debug=True
    kwargs = {} if tier == "symbolic" else {"debug": True}
    env = gym.make(cubebench.TIERS[tier], reward=reward, max_steps=40, generator=SCRAMBLES, **kwargs)
    _, info = env.reset(seed=7, options={"depth": 6})
    start, total = info["phi"], 0.0
    env.action_space.seed(7)
    for _ in range(40):
        _, r, term, trunc, info = env.step(env.action_space.sample())
        total += r
        if term or trunc:
            break
    assert total == pytest.approx(info["phi"] - start)
    assert info["reward_kind"] == reward


@pytest.mark.parametrize("tier", ["visual", "face", "vertex"])
def test_partial_tiers_hide_phi_but_not_the_reward(tier: str) -> None:
    env = gym.make(cubebench.TIERS[tier], reward="sticker")
    _, info = env.reset(options={"scramble": "R"})
    assert "phi" not in info and info["reward_kind"] == "sticker"
    _, r, _, _, info = env.step(env.unwrapped.action_names.index("R'"))
    assert r == 12.0 and "phi" not in info


def test_potentials_are_what_they_say() -> None:
    env = StickerReward(CubeEnv())
    _, info = env.reset(options={"scramble": "R"})
    assert info["phi"] == 54 - 12
    _, r, term, _, info = env.step(env.unwrapped.action_names.index("R'"))
    assert (r, term, info["phi"]) == (12.0, True, 54.0)
    env = FaceReward(CubeEnv())
    _, info = env.reset(options={"scramble": "R"})
    assert info["phi"] == 2.0


@pytest.mark.parametrize("cls", [StickerReward, FaceReward])
def test_view_rotations_never_change_phi(cls) -> None:
    env = cls(CubeEnv(view_actions=True, generator=SCRAMBLES))
    _, info = env.reset(seed=3, options={"depth": 5})
    names = env.unwrapped.action_names
    for view in ("x", "y", "z'", "x'", "y'", "y'"):
        _, r, _, _, step_info = env.step(names.index(view))
        assert r == 0.0 and step_info["phi"] == info["phi"]
    state = env.unwrapped.state
    assert {kernels.stickers_in_place(state[o]) for o in ORIENTATIONS} == {kernels.stickers_in_place(state)}


def test_sparse_default_and_unknown_reward() -> None:
    env = make_reward_wrapper(CubeEnv(), "none")
    assert isinstance(env, CubeEnv)
    with pytest.raises(ValueError, match="unknown reward"):
        make_reward_wrapper(CubeEnv(), "dense")
    with pytest.raises(ValueError, match="unknown reward"):
        gym.make("CubeBench-Face-v0", reward="stickers")
    assert np.array_equal(SOLVED, np.arange(54))
