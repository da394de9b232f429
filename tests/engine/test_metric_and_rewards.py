"""One source of truth per concept: the metric's one spelling, the reward registry's one set of names,
and one potential computed the same by the vector env's kernels and the reward wrappers."""

from __future__ import annotations

import argparse
import warnings

import gymnasium as gym
import numpy as np
import pytest

from helpers import SCRAMBLES, extra_reason
from cubebench import CubeEnv, make_cube_env
from cubebench.engine_cli import add_subcommands as engine_subcommands
from cubebench.engine import MOVE_NAMES, SOLVED, TABLE, kernels, simd
from cubebench.engine.metric import METRICS, TURN_ACTIONS, check_metric, parse_metric, turn_actions
from cubebench.engine.rewards import (
    DENSE_REWARDS, NATIVE_REWARDS, REWARD_ALIASES, REWARD_SPECS, REWARDS, parse_reward, potential,
)
from cubebench.engine.scramble import scramble
from cubebench.envs import vector_kernels as vk
from cubebench.envs.vector_env import CubeVectorEnv
from cubebench.runner import suite_fields
from cubebench.runner.protocols.episodes import suite as suites
from cubebench.runner.cli import build_parser
from cubebench.wrappers.reward_wrappers import REWARD_WRAPPERS, make_reward_wrapper

SYMBOLIC = "CubeBench-Symbolic-v0"


# --- metric ------------------------------------------------------------------------------------------
def test_metric_has_one_spelling() -> None:
    assert METRICS == ("quarter", "half") and set(TURN_ACTIONS) == set(METRICS)
    assert len(turn_actions("quarter")) == 12 and len(turn_actions("half")) == 18
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the spellings themselves never warn
        assert [parse_metric(m) for m in METRICS] == list(METRICS)
        assert [check_metric(m) for m in METRICS] == list(METRICS)


@pytest.mark.parametrize("old, new", [("face", "half"), ("htm", "half"), ("qtm", "quarter")])
def test_old_metric_spellings_warn_and_name_the_new_one(old: str, new: str) -> None:
    with pytest.warns(FutureWarning, match=f"metric={new!r}"):
        assert parse_metric(old) == new
    with pytest.raises(ValueError, match="'quarter'.*'half'"):
        check_metric(old)  # the solver and the curriculum take the one spelling only


@pytest.mark.parametrize("bad", ["slice", "Half", "", None, 18])
def test_unknown_metric_is_a_clear_value_error(bad: object) -> None:
    with pytest.raises(ValueError, match="unknown metric.*metric='quarter'.*metric='half'"):
        parse_metric(bad)


@pytest.mark.parametrize("make", [
    lambda **kw: gym.make(SYMBOLIC, **kw).unwrapped,
    lambda **kw: make_cube_env("face", **kw).unwrapped,
    lambda **kw: CubeEnv(**kw),
    lambda **kw: CubeVectorEnv(2, **kw),
    lambda **kw: gym.make_vec(SYMBOLIC, num_envs=2, **kw),
])
def test_every_env_takes_metric_and_still_reads_moves(make) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        half = make(metric="half")
        quarter = make()
    assert half.metric == "half" and quarter.metric == "quarter"
    assert len(half.action_names) - len(quarter.action_names) == 6
    with pytest.warns(FutureWarning, match="moves='face' is deprecated; use metric='half'"):
        assert make(moves="face").metric == "half"
    with pytest.warns(FutureWarning, match="moves='quarter' is deprecated; use metric='quarter'"):
        assert make(moves="quarter").metric == "quarter"
    with pytest.warns(FutureWarning), pytest.raises(ValueError, match="disagree"):
        make(metric="half", moves="quarter")
    with pytest.raises(ValueError, match="unknown metric"):
        make(metric="slice")


def test_gym_make_half_metric_has_18_actions() -> None:
    env = gym.make(SYMBOLIC, metric="half")
    assert env.action_space.n == 18 and env.unwrapped.metric == "half"
    _, info = env.reset(seed=0, options={"instance": 0})
    assert info["distance"] == 1  # the half-turn shipped set
    assert gym.make(SYMBOLIC).action_space.n == 12


def test_scramble_and_generators_read_the_metric() -> None:
    assert len(scramble(5, "half", 0)) == 5
    with pytest.warns(FutureWarning, match="metric='half'"):
        assert scramble(5, "face", 0) == scramble(5, "half", 0)
    with pytest.raises(ValueError, match="unknown metric"):
        scramble(5, "slice", 0)
    assert SCRAMBLES(3, "half", np.random.default_rng(0)).metric == "half"


def test_solver_rejects_old_spellings_before_loading_tables() -> None:
    from cubebench.solver.optimal import lower_bound

    with pytest.raises(ValueError, match="unknown metric 'face'"):
        lower_bound(SOLVED, "face")


def test_runner_and_cli_use_the_engine_metric() -> None:
    assert suite_fields.METRICS is METRICS  # the suites' metric check (both schemas) is the engine's
    assert not hasattr(__import__("cubebench.runner.protocols.episodes.instances", fromlist=["x"]), "env_moves")
    data = {"name": "x", "tiers": ["symbolic"], "depths": [2], "instances": 1, "rewards": ["none"],
            "tool_settings": ["basic"]}
    with pytest.warns(FutureWarning, match="metric='half'"):
        assert suites.suite_from_dict({**data, "metric": "face"}).metric == "half"
    with pytest.raises(suites.SuiteError, match="metric"):
        suites.suite_from_dict({**data, "metric": "slice"})
    parser = build_parser()
    assert parser.parse_args(["play", "--metric", "half"]).metric == "half"
    assert parser.parse_args(["scramble", "--metric", "half"]).metric == "half"
    for argv in (["play", "--metric", "face"], ["scramble", "--metric", "htm"]):
        with pytest.raises(SystemExit):
            parser.parse_args(argv)
    engine = argparse.ArgumentParser()
    engine_subcommands(engine.add_subparsers())
    assert engine.parse_args(["solve", "R", "--metric", "quarter"]).metric == "quarter"


def test_rl_train_takes_metric_and_reads_moves() -> None:
    pytest.importorskip("torch", reason=extra_reason("torch"))
    from cubebench.training.rl.train import parse_args

    assert parse_args(["--metric", "half"]).metric == "half"
    assert parse_args([]).metric == "quarter" and parse_args(["--reward", "sparse"]).reward == "none"
    with pytest.warns(FutureWarning, match="metric='half'"):
        assert parse_args(["--moves", "face"]).metric == "half"


# --- rewards -----------------------------------------------------------------------------------------
def test_one_registry_of_reward_names() -> None:
    assert REWARDS == ("none", "sticker", "face", "heuristic", "oracle") and REWARD_ALIASES == {"sparse": "none"}
    assert set(REWARD_WRAPPERS) == set(DENSE_REWARDS) == set(REWARDS) - {"none"}
    assert NATIVE_REWARDS == ("none", "sticker", "face")
    assert suites.REWARDS is REWARDS
    assert [parse_reward(n) for n in REWARDS] == list(REWARDS) and parse_reward("sparse") == "none"
    with pytest.raises(ValueError, match="unknown reward 'dense'.*none, sticker, face, heuristic, oracle"):
        parse_reward("dense")


@pytest.mark.parametrize("reward", ["none", "sparse"])
def test_sparse_is_none_everywhere(reward: str) -> None:
    single = gym.make(SYMBOLIC, reward=reward, generator=SCRAMBLES)
    vector = gym.make_vec(SYMBOLIC, num_envs=2, reward=reward, generator=SCRAMBLES)
    sync = gym.make_vec(SYMBOLIC, num_envs=2, reward=reward, generator=SCRAMBLES, vectorization_mode="sync")
    assert isinstance(make_reward_wrapper(CubeEnv(), reward), CubeEnv)
    assert vector.reward == "none" and "reward_kind" not in vector.reset(seed=0)[1]
    for env in (single, sync):
        _, info = env.reset(seed=0, options={"scramble": "R"} if env is single else None)
        assert "reward_kind" not in info
    _, r, term, _, _ = single.step(single.unwrapped.action_names.index("R'"))
    assert (r, term) == (1.0, True)
    data = {"name": "x", "tiers": ["symbolic"], "depths": [2], "instances": 1, "rewards": [reward],
            "tool_settings": ["basic"]}
    assert suites.suite_from_dict(data).rewards == ("none",)
    assert build_parser().parse_args(["play", "--reward", reward]).reward == "none"


def test_unknown_rewards_fail_the_same_everywhere() -> None:
    for make in (lambda: gym.make(SYMBOLIC, reward="dense"), lambda: CubeVectorEnv(2, reward="dense"),
                 lambda: make_reward_wrapper(CubeEnv(), "dense")):
        with pytest.raises(ValueError, match="unknown reward 'dense'"):
            make()
    with pytest.raises(ValueError, match="not computed natively"):
        CubeVectorEnv(2, reward="heuristic")
    with pytest.raises(suites.SuiteError, match="rewards"):
        suites.suite_from_dict({"name": "x", "tiers": ["symbolic"], "depths": [2], "instances": 1,
                                "rewards": ["dense"], "tool_settings": ["basic"]})
    with pytest.raises(SystemExit):
        build_parser().parse_args(["play", "--reward", "dense"])


# --- one potential: the Numba path equals the Python path ---------------------------------------------
DENSE_NATIVE = [n for n in NATIVE_REWARDS if REWARD_SPECS[n].dense]


def _reference_phi(state: np.ndarray, reward: str) -> float:
    """What the potential says it counts, in plain NumPy (a third, independent implementation)."""
    colours = (state // 9).reshape(6, 9)
    same = colours == colours[:, 4:5]
    return float(same.sum() if reward == "sticker" else same.all(axis=1).sum())


def _random_states(n: int, seed: int) -> np.ndarray:
    """Random reachable states of every kind: any held orientation, slices and wide turns too."""
    rng = np.random.default_rng(seed)
    out = [SOLVED.copy()]
    for _ in range(n - 1):
        moves = rng.integers(0, len(MOVE_NAMES), size=int(rng.integers(0, 30))).astype(np.int64)
        out.append(kernels.apply_moves(SOLVED, TABLE, moves))
    return np.stack(out)


@pytest.mark.parametrize("reward", DENSE_NATIVE)
def test_kernel_potential_equals_wrapper_potential_on_random_states(reward: str) -> None:
    states = _random_states(3000, seed=1)
    wrapper = REWARD_WRAPPERS[reward](CubeEnv())
    kind = REWARD_SPECS[reward].kind
    rows = simd.padded_states(len(states))
    rows[:, :54] = states
    variants = [None] + ([simd.INDEX64] if simd.HAS_VBMI else [])
    for b, state in enumerate(states):
        expected = _reference_phi(state, reward)
        assert wrapper.phi(state) == potential(state, kind) == expected
        for vbmi in variants:
            solved, phi = vk._status(rows, b, kind, vbmi)
            assert phi == expected and solved == kernels.is_solved(state)


@pytest.mark.parametrize("reward", DENSE_NATIVE)
@pytest.mark.parametrize("metric", METRICS)
def test_vector_env_rewards_equal_wrapper_rewards(reward: str, metric: str) -> None:
    """Every step of many sub-envs: the kernel's phi and reward are the reward wrapper's, state by state."""
    n = 256
    venv = CubeVectorEnv(n, reward=reward, metric=metric, depth=12, max_steps=None, generator=SCRAMBLES)
    wrapper = REWARD_WRAPPERS[reward](CubeEnv(metric=metric))
    _, info = venv.reset(seed=3)
    phi = np.array([wrapper.phi(s) for s in venv.states])
    assert np.array_equal(info["phi"], phi)
    rng = np.random.default_rng(3)
    for _ in range(25):
        _, rewards, _, _, info = venv.step(rng.integers(len(venv.action_names), size=n))
        new_phi = np.array([wrapper.phi(s) for s in venv.states])
        assert np.array_equal(info["phi"], new_phi) and np.array_equal(rewards, new_phi - phi)
        assert list(info["reward_kind"]) == [reward] * n
        phi = new_phi


@pytest.mark.parametrize("reward", DENSE_NATIVE + ["sparse"])
def test_vector_env_equals_gym_make_episodes(reward: str) -> None:
    """The same seeded episodes through gym.make (wrappers) and gym.make_vec (kernels)."""
    n, kwargs = 8, dict(reward=reward, depth=5, max_steps=12, generator=SCRAMBLES, metric="half")
    native = gym.make_vec(SYMBOLIC, num_envs=n, **kwargs)
    singles = [gym.make(SYMBOLIC, **kwargs) for _ in range(n)]
    obs, _ = native.reset(seed=9)
    assert np.array_equal(obs, np.stack([e.reset(seed=9 + i)[0] for i, e in enumerate(singles)]))
    rng, done = np.random.default_rng(9), np.zeros(n, dtype=bool)
    for _ in range(12):
        actions = rng.integers(18, size=n)
        _, rewards, terms, truncs, _ = native.step(actions)
        for i, env in enumerate(singles):
            if not done[i]:  # an ended episode's next native step is its autoreset
                _, r, term, trunc, _ = env.step(int(actions[i]))
                assert (r, term, trunc) == (rewards[i], terms[i], truncs[i])
                done[i] = term or trunc
    assert done.all()  # every episode reached its end (max_steps at the latest)


def test_an_old_spelling_in_a_suite_file_is_shown_to_the_user(tmp_path) -> None:
    """Python hides DeprecationWarnings raised outside ``__main__``; a user running a suite file must see it."""
    import json
    import subprocess
    import sys

    suite = tmp_path / "old.json"
    suite.write_text(json.dumps({"name": "old", "tiers": ["symbolic"], "depths": [1], "instances": 1,
                                 "rewards": ["none"], "tool_settings": ["basic"], "metric": "face"}))
    run = subprocess.run([sys.executable, "-c", f"from cubebench.runner.suites import load_suite; "
                          f"print(load_suite({str(suite)!r}).metric)"], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and run.stdout.strip() == "half"
    assert "metric='face' is deprecated; use metric='half'" in run.stderr


def test_an_explicit_quarter_metric_and_old_moves_face_disagree() -> None:
    """``metric="quarter"`` given on purpose must not be taken for the default and overruled by ``moves=``."""
    with pytest.warns(FutureWarning), pytest.raises(ValueError, match="disagree"):
        make_cube_env(metric="quarter", moves="face")
    with pytest.warns(FutureWarning, match="use metric='half'"):
        assert make_cube_env(moves="face").unwrapped.metric == "half"
    assert make_cube_env().unwrapped.metric == "quarter"
