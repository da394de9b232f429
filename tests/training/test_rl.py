"""The RL baselines: learning happens, the shipped checkpoint plays, SB3 runs on the native env."""

from __future__ import annotations

import json
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

torch = pytest.importorskip("torch", reason="the RL baselines need the rl extra: pip install -e '.[rl]'")

import cubebench  # noqa: E402
from cubebench.agents.rl.evaluate import beam_search, eval_instances, policy_rollouts, rollouts  # noqa: E402
from cubebench.agents.rl.mlp_policy import (SHIPPED_CHECKPOINT, MLPPolicy, inverse_actions, load_checkpoint,  # noqa: E402
                                        save_checkpoint)
from cubebench.training.rl.schedule import DepthCurriculum  # noqa: E402
from cubebench.training.rl.train import main as train_main  # noqa: E402
from cubebench.envs.vector_env import CubeVectorEnv  # noqa: E402

torch.set_num_threads(1)


def _random_pass_rate(states: np.ndarray, seed: int = 0) -> float:
    rng = np.random.default_rng(seed)
    solved, _ = rollouts(lambda obs, prev: rng.integers(12, size=len(obs)), states)
    return float(solved.mean())


def _depth1_states(n: int = 200) -> np.ndarray:
    env = CubeVectorEnv(n, depth=1)
    env.reset(seed=123)
    return env.states.copy()


@pytest.mark.parametrize("algo", ["ppo", "reinforce"])
def test_short_training_learns_depth_one(algo, tmp_path):
    """A few seconds of training lifts the depth-1 pass rate far above a random agent's."""
    states = _depth1_states()
    random_rate = _random_pass_rate(states)
    train_main(["--algo", algo, "--seed", "0", "--num-envs", "128", "--env-steps", "12000", "--minutes", "5",
                "--hidden", "64", "64", "--max-depth", "1", "--eval-every", "1000", "--out", str(tmp_path),
                "--no-progress", "--lr", "3e-3"])
    policy, meta = load_checkpoint(tmp_path / "last.pt")
    solved, _ = policy_rollouts(policy, states)
    assert random_rate < 0.5  # a random agent, measured here: about one in four within 20 moves
    assert solved.mean() >= 0.9 and solved.mean() > random_rate + 0.4
    assert meta["env_steps"] >= 12000
    tags = {json.loads(line)["tag"] for line in (tmp_path / "scalars.jsonl").read_text().splitlines()}
    assert {"train/success", "loss/policy", "loss/value", "pass/d1", "curriculum/frontier"} <= tags


def test_inverse_masking_and_checkpoint_round_trip(tmp_path):
    inv = inverse_actions("quarter")
    assert all(inv[inv[a]] == a and inv[a] != a for a in range(12))
    policy = MLPPolicy(12, (32,))
    logits, values = policy(torch.zeros(4, 54, 6, dtype=torch.uint8), torch.tensor([-1, 0, 1, 11]))
    assert torch.isinf(logits[1, inv[0]]) and torch.isinf(logits[3, inv[11]]) and torch.isfinite(logits[0]).all()
    assert values.shape == (4,)
    save_checkpoint(policy, tmp_path / "p.pt", {"note": "x"})
    again, meta = load_checkpoint(tmp_path / "p.pt")
    obs = np.eye(6, dtype=np.uint8)[np.arange(54) // 9][None]
    assert meta == {"note": "x"}
    assert torch.equal(again(torch.as_tensor(obs))[0], policy(torch.as_tensor(obs))[0])


def test_beam_search_returns_a_real_solution():
    policy = MLPPolicy(12, (32,))
    states, _ = eval_instances(2)
    from cubebench.engine import kernels
    from cubebench.engine.moves import MOVE_INDEX, QUARTER_ACTIONS, TABLE

    for state in states[:3]:
        plan = beam_search(policy, state, width=144, budget=2)
        assert plan is not None and len(plan) == 2  # width 144 >= 12 * 11 keeps every 2-move sequence
        moves = np.array([MOVE_INDEX[QUARTER_ACTIONS[a]] for a in plan], dtype=np.int64)
        assert kernels.is_solved(kernels.apply_moves(state, TABLE, moves))


def test_curriculum_promotes_on_success_only():
    cur = DepthCurriculum(max_depth=3, min_episodes=10, promote_at=0.8)
    cur.record(np.ones(10, dtype=np.int64), np.array([True] * 7 + [False] * 3))
    assert not cur.update() and cur.frontier == 1
    cur.record(np.ones(10, dtype=np.int64), np.ones(10, dtype=np.bool_))
    assert cur.update() and cur.frontier == 2
    depths = cur.sample(1000, np.random.default_rng(0))
    assert set(np.unique(depths)) == {1, 2} and (depths == 2).mean() > 0.6


# --- the shipped checkpoint ------------------------------------------------------------
SHIPPED_DEPTH1_PASS = 1.0
"""The depth-1 pass rate docs/rl.md reports for the shipped checkpoint (greedy, 20-move budget)."""


def test_shipped_checkpoint_reaches_its_documented_depth1_pass_rate():
    policy, meta = load_checkpoint(SHIPPED_CHECKPOINT)
    assert SHIPPED_CHECKPOINT.stat().st_size < 4 * 2**20
    states, _ = eval_instances(1, "quarter", 20)
    solved, _ = policy_rollouts(policy, states)
    assert solved.mean() >= SHIPPED_DEPTH1_PASS
    assert "args" in meta and "seed" in meta["args"]  # how to reproduce it travels with it


def test_shipped_checkpoint_plays_as_an_agent_through_run_episode():
    from cubebench.agents.episode import run_episode
    from cubebench.agents.rl import make_policy_agent

    env = gym.make("CubeBench-Symbolic-v0", depth=1)
    for beam in (0, 8):
        agent = make_policy_agent(seed=0, beam_width=beam)
        record = run_episode(agent, env, seed=5, distance_budget_s=None)
        assert record.solved and record.n_moves >= 1


# --- Stable-Baselines3 ---------------------------------------------------------------
@pytest.mark.parametrize("env_id", sorted(cubebench.TIERS.values()))
def test_sb3_check_env_passes_on_every_id(env_id):
    from stable_baselines3.common.env_checker import check_env

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SB3 only *recommends* 1-D or image observations
        check_env(gym.make(env_id))


def test_sb3_vecenv_adapter_follows_sb3_conventions():
    from stable_baselines3.common.vec_env.util import obs_space_info  # noqa: F401  (SB3 importable)

    from cubebench.training.rl.sb3 import SB3VecEnv

    venv = CubeVectorEnv(4, depth=1, max_steps=3, autoreset_mode=AutoresetMode.SAME_STEP)
    env = SB3VecEnv(venv)
    env.seed(3)
    obs = env.reset()
    assert obs.shape == (4, 54, 6)
    ended = 0
    for _ in range(8):
        obs, rew, done, infos = env.step(np.zeros(4, dtype=np.int64))
        assert rew.dtype == np.float32 and done.dtype == np.bool_ and len(infos) == 4
        for i in np.flatnonzero(done):
            ended += 1
            assert infos[i]["terminal_observation"].shape == (54, 6)
            assert infos[i]["TimeLimit.truncated"] != infos[i]["is_success"]
    assert ended >= 4


@pytest.mark.parametrize("algo", ["ppo", "a2c", "dqn"])
def test_sb3_trains_on_the_native_env(algo, tmp_path):
    from cubebench.training.rl.sb3 import main as sb3_main

    result = sb3_main(["--algo", algo, "--timesteps", "2048", "--num-envs", "64", "--out", str(tmp_path)])
    assert set(result) >= {"pass/d1", "pass/d4", "frontier"}
    assert (tmp_path / f"sb3_{algo}.zip").exists()


@pytest.mark.slow
def test_sb3_ppo_learns_depth_one(tmp_path):
    from cubebench.training.rl.sb3 import main as sb3_main

    result = sb3_main(["--algo", "ppo", "--timesteps", "150000", "--num-envs", "128", "--max-depth", "1",
                       "--out", str(tmp_path)])
    assert result["pass/d1"] >= 0.8
