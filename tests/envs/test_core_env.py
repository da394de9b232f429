"""The core CubeEnv: Gymnasium API, options, determinism, frames."""

from __future__ import annotations

import copy
import pickle

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import cubebench
from cubebench import CubeEnv
from cubebench.engine import SOLVED, InvalidStateError, NotationError, to_facelets
from helpers import SCRAMBLES, apply


@pytest.mark.parametrize(
    "kwargs",
    [{}, {"metric": "half"}, {"view_actions": True}, {"view_actions": True, "move_frame": "global"},
     {"render_mode": "ansi"}, {"render_mode": "rgb_array"}, {"max_steps": None}, {"obs_format": "onehot"}],
)
def test_check_env_unwrapped(kwargs: dict) -> None:
    check_env(CubeEnv(**kwargs), skip_render_check="render_mode" not in kwargs)


def test_action_sets_are_documented_order() -> None:
    assert CubeEnv().action_names == ("U", "U'", "D", "D'", "L", "L'", "R", "R'", "F", "F'", "B", "B'")
    assert len(CubeEnv(metric="half").action_names) == 18
    assert CubeEnv(view_actions=True).action_names[-6:] == ("x", "x'", "y", "y'", "z", "z'")


def test_same_seed_same_episode() -> None:
    def episode(seed: int) -> list:
        env = CubeEnv(depth=6, max_steps=15, generator=SCRAMBLES)
        obs, info = env.reset(seed=seed)
        trace = [obs.tobytes(), info["scramble"]]
        env.action_space.seed(seed)
        for _ in range(15):
            obs, r, term, trunc, info = env.step(env.action_space.sample())
            trace.append((obs.tobytes(), r, term, trunc))
            if term or trunc:
                break
        return trace

    assert episode(3) == episode(3)
    assert episode(3) != episode(4)


def test_solving_terminates_with_reward_one() -> None:
    env = CubeEnv()
    env.reset(options={"scramble": "R U'"})
    names = env.action_names
    _, r, term, trunc, info = env.step(names.index("U"))
    assert (r, term, trunc, info["is_success"]) == (0.0, False, False, False)
    _, r, term, trunc, info = env.step(names.index("R'"))
    assert (r, term, trunc, info["is_success"]) == (1.0, True, False, True)
    assert type(term) is bool and type(trunc) is bool
    assert info["moves"] == 2 and info["steps"] == 2


def test_truncation_at_max_steps() -> None:
    env = CubeEnv(max_steps=3)
    env.reset(options={"scramble": "R U F"})
    flags = [env.step(0)[2:4] for _ in range(3)]
    assert flags == [(False, False), (False, False), (False, True)]


def test_reset_options() -> None:
    env = CubeEnv(generator=SCRAMBLES)
    text = to_facelets(apply("R U F' y"))
    _, info = env.reset(options={"state": text})
    assert info["facelets"] == text
    _, info = env.reset(options={"scramble": "R U F'"})
    assert info["facelets"] == to_facelets(apply("R U F'")) and info["scramble"] == "R U F'"
    _, info = env.reset(seed=1, options={"depth": 7})
    assert len(info["scramble"].split()) == 7 and info["depth"] == 7
    with pytest.raises(InvalidStateError):
        env.reset(options={"state": "U" * 54})
    with pytest.raises(NotationError):
        env.reset(options={"scramble": "R Q"})
    with pytest.raises(ValueError, match="conflict"):
        env.reset(options={"state": text, "depth": 3})
    with pytest.raises(ValueError, match="unknown reset option"):
        env.reset(options={"dept": 3})


def test_bad_input_leaves_env_unchanged() -> None:
    env = CubeEnv()
    _, info = env.reset(options={"scramble": "R U"})
    with pytest.raises(InvalidStateError):
        env.reset(options={"state": "X" * 54})
    assert env.facelets == info["facelets"]
    with pytest.raises(ValueError, match="not in Discrete"):
        env.step(99)
    assert env.facelets == info["facelets"] and env.steps == 0


def test_turn_after_y_acts_on_face_now_on_right() -> None:
    env = CubeEnv(view_actions=True)
    env.reset(options={"state": to_facelets(SOLVED)})
    env.step(env.action_names.index("y"))
    env.step(env.action_names.index("R"))
    assert env.facelets == to_facelets(apply("y R"))
    assert env.facelets == to_facelets(apply("B y"))  # the original B face was turned
    assert env.moves == 1 and env.steps == 2


def test_global_frame_turns_original_faces() -> None:
    env = CubeEnv(view_actions=True, move_frame="global")
    env.reset(options={"state": to_facelets(SOLVED)})
    env.step(env.action_names.index("y"))
    env.step(env.action_names.index("R"))
    assert env.facelets == to_facelets(apply("R y"))


def test_rotations_never_solve_or_unsolve() -> None:
    env = CubeEnv(view_actions=True)
    env.reset(options={"state": to_facelets(SOLVED)})
    for name in ("x", "y'", "z", "x'"):
        _, r, term, _, info = env.step(env.action_names.index(name))
        assert info["is_success"] and r == 0.0 and term
    assert env.moves == 0


def test_renders() -> None:
    env = CubeEnv(render_mode="ansi")
    env.reset(options={"scramble": "R"})
    text = env.render()
    assert isinstance(text, str) and text.count("\n") == 9
    env = CubeEnv(render_mode="rgb_array")
    env.reset(options={"scramble": "R"})
    img = env.render()
    assert img.dtype == np.uint8 and img.ndim == 3 and img.shape[2] == 3


def test_gym_make_by_module_prefix() -> None:
    env = gym.make("cubebench:CubeBench-Symbolic-v0", depth=2)
    obs, info = env.reset(seed=0)
    assert env.observation_space.contains(obs)
    assert gym.spec("CubeBench-Symbolic-v0").entry_point == "cubebench.wrappers.tier_envs:make_checked_env"
    assert cubebench.__version__


def test_human_mode_needs_a_display(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    with pytest.raises(ValueError, match="needs a display"):
        CubeEnv(render_mode="human")


def test_non_integer_actions_are_rejected() -> None:
    env = CubeEnv()
    env.reset(seed=0)
    with pytest.raises(ValueError, match="not an integer"):
        env.step(1.5)
    assert env.step(np.int64(0))[4]["steps"] == 1


def episode_trace(env: CubeEnv, seed: int, steps: int = 40) -> list:
    """Observations, step results, info and state of a seeded random episode."""
    obs, info = env.reset(seed=seed)
    env.action_space.seed(seed)
    trace = [(obs, info, env.state)]
    for _ in range(steps):
        obs, *result, info = env.step(env.action_space.sample())
        trace.append((obs, result, info, env.state))
    return trace


def test_onehot_observation_is_the_one_hot_of_the_indices() -> None:
    kwargs = dict(depth=6, metric="half", view_actions=True, max_steps=25, generator=SCRAMBLES)
    indices = episode_trace(CubeEnv(**kwargs), seed=5)
    onehot = episode_trace(CubeEnv(obs_format="onehot", **kwargs), seed=5)
    for (col, *rest_i), (hot, *rest_h) in zip(indices, onehot):
        assert hot.shape == (54, 6) and hot.dtype == np.uint8
        assert np.array_equal(hot, np.eye(6, dtype=np.uint8)[col])
        assert str(rest_i) == str(rest_h)  # rewards, flags, info and state alike
    assert CubeEnv(obs_format="onehot").observation_space.shape == (54, 6)
    with pytest.raises(ValueError, match="obs_format"):
        CubeEnv(obs_format="text")


@pytest.mark.parametrize("obs_format", ["indices", "onehot"])
def test_returned_arrays_never_change_afterwards(obs_format: str) -> None:
    env = CubeEnv(depth=5, max_steps=None, generator=SCRAMBLES, obs_format=obs_format)
    trace = episode_trace(env, seed=2, steps=10)
    kept = copy.deepcopy(trace)
    for _ in range(10):
        env.step(0)
    assert str(trace) == str(kept)
    arrays = [a for step in trace for a in (step[0], step[-1])]
    assert not any(np.shares_memory(a, b) for i, a in enumerate(arrays) for b in arrays[i + 1:])
    assert env.state is env.state  # one array per step, however often it is read


def test_assigning_the_state_moves_the_cube() -> None:
    env = CubeEnv()
    env.reset(options={"scramble": "U"})
    env.state = apply("R")
    assert not env.is_solved and env.facelets == to_facelets(apply("R"))
    _, r, term, _, info = env.step(env.action_names.index("R'"))
    assert (r, term) == (1.0, True) and env.is_solved and info["facelets"] == to_facelets(SOLVED)


@pytest.mark.parametrize("clone", [copy.deepcopy, lambda e: pickle.loads(pickle.dumps(e))])
def test_copies_step_on_their_own(clone) -> None:
    env = CubeEnv(obs_format="onehot")
    env.reset(options={"scramble": "R U"})
    twin = clone(env)
    for e in (env, twin):
        e.step(e.action_names.index("U'"))
    assert twin.facelets == env.facelets == to_facelets(apply("R"))
    _, r, term, _, _ = twin.step(twin.action_names.index("R'"))
    assert (r, term) == (1.0, True) and twin.is_solved and not env.is_solved


# --- reset options are checked, not coerced (issue 13, item 11) ---------------------------------
@pytest.mark.parametrize("options", [
    {"depth": "3"}, {"depth": 2.5}, {"depth": True}, {"depth": None}, {"depth": -1},
    {"instance": 1.5}, {"instance": None}, {"instance": "0"}, {"instance": False}, {"instance": -2},
    {"scramble": None}, {"scramble": 5}, {"scramble": ["R"]},
])
def test_reset_options_of_the_wrong_type_are_refused_with_a_message(options: dict) -> None:
    env = gym.make("CubeBench-Symbolic-v0")
    key = next(iter(options))
    with pytest.raises(ValueError, match=f"reset option '{key}' must be"):
        env.reset(options=options)


def test_reset_options_must_be_a_dict_and_numpy_ints_are_ints() -> None:
    env = CubeEnv(depth=1)
    with pytest.raises(ValueError, match="reset options must be a dict"):
        env.reset(options=[("depth", 2)])  # type: ignore[arg-type]
    assert env.reset(options={"depth": np.int64(2)})[1]["depth"] == 2
    assert env.reset(options={"instance": np.int32(3)})[1]["depth"] == 1
    with pytest.raises(ValueError, match="'depth' must be an int"):
        CubeEnv(depth="3")  # type: ignore[arg-type]


def test_a_refused_first_reset_does_not_break_the_env_checker() -> None:
    """Gymnasium 1.4's passive checker fails the first step after a refused first reset; the ids' checker does not."""
    env = gym.make("CubeBench-Symbolic-v0")
    with pytest.raises(ValueError, match="must be an int"):
        env.reset(options={"depth": "3"})
    env.reset(seed=0, options={"depth": 2})
    for _ in range(3):
        env.step(0)
    assert "RetryingPassiveEnvChecker" in str(env) and "<PassiveEnvChecker" not in str(env)
