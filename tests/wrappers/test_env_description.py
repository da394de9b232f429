"""An env says what it is from its own wrapper stack, whichever public way built it; nothing is guessed.

The fairness bug this guards: an env without a ``spec`` (``make_cube_env("face")``)
used to be recorded as the symbolic tier, so its agent got no ``rotate`` tool
and the ideal solver answered without every face having been seen.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from helpers import SCRAMBLES

import cubebench
from cubebench import CubeEnv, make_cube_env
from cubebench.agents.episode import run_episode
from cubebench.agents.scripted import SolverAgent
from cubebench.wrappers import observations, reward_wrappers
from cubebench.wrappers.description import EnvDescriptionError, describe_env
from cubebench.wrappers.observations import SymbolicObservation, symbolic_colours

TIER_FORMS = {"symbolic": "onehot", "visual": "image", "face": "image", "vertex": "image"}


def _ways(tier: str) -> dict[str, gym.Env]:
    """Every public way to build ``tier``'s env, with the sticker reward and the half-turn metric."""
    env_id = cubebench.TIERS[tier]
    return {
        "gym.make": gym.make(env_id, reward="sticker", metric="half", generator=SCRAMBLES),
        "gym.make module:id": gym.make(f"cubebench:{env_id}", reward="sticker", metric="half", generator=SCRAMBLES),
        "make_cube_env (no spec)": make_cube_env(tier, reward="sticker", metric="half", generator=SCRAMBLES),
        "wrapped by hand": _by_hand(tier),
        "extra wrappers on top": gym.wrappers.RecordEpisodeStatistics(gym.wrappers.TimeLimit(
            make_cube_env(tier, reward="sticker", metric="half", generator=SCRAMBLES), max_episode_steps=50)),
    }


def _by_hand(tier: str) -> gym.Env:
    core = CubeEnv(metric="half", view_actions=tier in ("face", "vertex"), generator=SCRAMBLES)
    env = reward_wrappers.StickerReward(core)
    wrapper = {"symbolic": observations.SymbolicObservation, "visual": observations.NetObservation,
               "face": observations.FaceViewObservation, "vertex": observations.VertexViewObservation}[tier]
    return wrapper(env)


@pytest.mark.parametrize("tier", list(cubebench.TIERS))
def test_every_way_to_build_a_tier_describes_it(tier: str) -> None:
    for way, env in _ways(tier).items():
        got = describe_env(env)
        assert (got.tier, got.reward, got.metric, got.view_actions) == (
            tier, "sticker", "half", tier in ("face", "vertex")), way
        assert got.obs_format == TIER_FORMS[tier], way
        env.close()


def test_the_observation_form_and_step_limit_are_the_envs_own() -> None:
    got = describe_env(gym.make("CubeBench-Face-v0", obs_format="text", max_steps=7))
    assert (got.tier, got.obs_format, got.reward, got.metric, got.max_steps) == ("face", "text", "none", "quarter", 7)


def test_a_time_limit_on_top_is_the_step_limit_and_the_record_keeps_the_description() -> None:
    env = gym.wrappers.TimeLimit(make_cube_env("symbolic", reward="face", max_steps=20, generator=SCRAMBLES), 3)
    assert describe_env(env).max_steps == 3
    record = run_episode(SolverAgent(), env, reset_options={"scramble": "R"}, distance_budget_s=None)
    assert record.config["env"] == describe_env(env).as_dict()
    assert record.config["env"]["reward"] == "face" and record.config["env"]["metric"] == "quarter"


def test_what_cannot_be_described_raises() -> None:
    with pytest.raises(EnvDescriptionError, match="no tier"):
        describe_env(CubeEnv())
    with pytest.raises(EnvDescriptionError, match="no tier"):
        describe_env(reward_wrappers.StickerReward(CubeEnv()))
    with pytest.raises(EnvDescriptionError, match="not a CubeBench env"):
        describe_env(gym.make("CartPole-v1"))
    for outer in (gym.wrappers.FlattenObservation(gym.make("CubeBench-Symbolic-v0")),
                  gym.wrappers.FrameStackObservation(gym.make("CubeBench-Face-v0"), 2),  # a plain Wrapper
                  gym.wrappers.TransformObservation(gym.make("CubeBench-Visual-v0"), lambda o: o[::2, ::2],
                                                    gym.spaces.Box(0, 255, (112, 112, 3), np.uint8))):
        with pytest.raises(EnvDescriptionError, match="changes the observation.* image_size="):
            describe_env(outer)


def test_a_face_env_without_a_spec_is_played_as_the_face_tier() -> None:
    """The fairness rule holds for ``make_cube_env``: the record says face, rotate is offered, and the ideal
    solver answers only after every face was seen (the solver agent has to turn the cube)."""
    env = make_cube_env("face", max_steps=None, generator=SCRAMBLES)
    assert env.spec is None
    record = run_episode(SolverAgent(), env, tool_setting="ideal", reset_options={"scramble": "R U F"},
                         distance_budget_s=None)
    assert record.config["tier"] == "face"
    assert record.solved and record.n_rotations >= 3  # six faces seen one at a time: at least 3 turns of the cube
    assert any(c.name == "rotate" for s in record.steps for c in s.tool_calls)


def test_a_description_handed_to_run_episode_is_used_not_derived_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """The runner describes an episode's env once; run_episode plays under that description, budgets included."""
    from cubebench.agents import episode

    env = make_cube_env("vertex", generator=SCRAMBLES)
    description = describe_env(env)
    monkeypatch.setattr(episode, "describe_env", lambda env: pytest.fail("run_episode described the env again"))
    record = run_episode(SolverAgent(), env, description=description, reset_options={"scramble": "R"},
                         distances="none")
    assert record.solved and record.config["tier"] == "vertex"
    assert description.max_moves is None  # the env has no budget of its own: the episode's comes with the reset
    assert record.config["env"] == describe_env(env).as_dict() != description.as_dict()


@pytest.mark.parametrize("form,letters", [("onehot", "faces"), ("indices", "faces"), ("text", "faces"),
                                          ("text", "colours")])
def test_symbolic_colours_inverts_every_symbolic_form(form: str, letters: str) -> None:
    env = SymbolicObservation(CubeEnv(generator=SCRAMBLES), form=form, letters=letters)
    obs, _ = env.reset(seed=3, options={"scramble": "R U F' D2 L"})
    assert np.array_equal(symbolic_colours(obs), env.unwrapped.state // 9)  # reference orientation: letters = colours


@pytest.mark.parametrize("bad", [np.zeros(3), np.full(54, 6), np.zeros((54, 6)), "U" * 53, "X" * 54,
                                 "Ü" * 54, np.full((54, 6), 0.5)])
def test_symbolic_colours_refuses_what_is_not_a_symbolic_observation(bad: object) -> None:
    with pytest.raises(ValueError, match="not a Symbolic"):
        symbolic_colours(bad)
