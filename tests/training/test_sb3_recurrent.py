"""sb3-contrib's RecurrentPPO through the SB3 adapter on the partial views: the observation with the previous
action, a short training run per tier, the LSTM state reset at episode starts in the evaluation, refusals."""

from __future__ import annotations

import json

import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

from cubebench.extras import install_hint

pytest.importorskip("torch", reason=f"needs torch (the rl extra): {install_hint('rl')}")
pytest.importorskip("stable_baselines3", reason=f"needs stable_baselines3 (the rl extra): {install_hint('rl')}")
pytest.importorskip("sb3_contrib", reason=f"needs sb3_contrib (the rl extra): {install_hint('rl')}")

import torch  # noqa: E402

from cubebench.agents.rl.rnn_agent import CHECKPOINTS  # noqa: E402
from cubebench.agents.rl.rnn_policy import load_rnn_checkpoint  # noqa: E402
from cubebench.envs.vector_env import CubeVectorEnv  # noqa: E402
from cubebench.training.rl.rnn_ppo import evaluate_partial  # noqa: E402
from cubebench.training.rl.sb3 import main as sb3_main  # noqa: E402
from cubebench.training.rl.sb3_recurrent import (PartialSB3VecEnv, evaluate_partial_sb3, make_recurrent,  # noqa: E402
                                                 play, with_prev)

torch.set_num_threads(1)


def _face(n: int, max_steps: int = 20) -> CubeVectorEnv:
    return CubeVectorEnv(n, tier="face", obs_format="indices", depth=1, max_steps=max_steps,
                         autoreset_mode=AutoresetMode.SAME_STEP)


def test_the_adapter_appends_the_previous_action():
    env = PartialSB3VecEnv(_face(4, max_steps=2))
    env.seed(5)
    obs = env.reset()
    assert obs.shape == (4, 10) and list(env.observation_space.nvec) == [6] * 9 + [19]
    assert (obs[:, -1] == 0).all() and all(env.observation_space.contains(o) for o in obs)
    ended = 0
    for t in range(4):
        act = np.array([t, 12, 5, 17])  # 12 and 17: view rotations
        obs, _, done, infos = env.step(act)
        assert (obs[:, -1] == np.where(done, 0, act + 1)).all()
        for i in np.flatnonzero(done):
            ended += 1
            assert infos[i]["terminal_observation"][-1] == act[i] + 1
            assert env.observation_space.contains(infos[i]["terminal_observation"])
    assert ended >= 4  # every sub-env ends within two steps (budget 2)


@pytest.mark.parametrize("tier", ["face", "vertex"])
def test_recurrent_ppo_trains_on_the_partial_view(tier, tmp_path):
    result = sb3_main(["--algo", "recurrent-ppo", "--tier", tier, "--timesteps", "512", "--num-envs", "16",
                       "--eval-episodes", "8", "--max-depth", "4", "--out", str(tmp_path)])
    assert set(result) >= {"pass/d1", "pass/d4", "pass/d8", "frontier", "env_steps"}
    rates = [result[f"pass/d{d}"] for d in (1, 2, 3, 4, 8)]
    assert result["env_steps"] >= 512 and all(abs(r * 8 - round(r * 8)) < 1e-9 for r in rates)  # 8 starts a depth
    assert (tmp_path / "sb3_recurrent-ppo.zip").exists()
    assert json.loads((tmp_path / "eval.json").read_text())["env_steps"] == result["env_steps"]
    from sb3_contrib import RecurrentPPO

    model = RecurrentPPO.load(str(tmp_path / "sb3_recurrent-ppo.zip"), device="cpu")
    assert model.policy.lstm_actor.hidden_size == 128
    assert list(model.observation_space.nvec) == [6] * (9 if tier == "face" else 27) + [19]


def test_the_evaluation_resets_the_lstm_state_at_every_episode_start():
    """Play several episodes per sub-env in one batch (autoresets inside), then replay each episode's inputs alone
    from a fresh state: the actions must agree, and carrying the state across the boundary instead must not."""
    env = PartialSB3VecEnv(_face(8))
    model = make_recurrent(env, seed=0, hidden=32)
    batch = _face(8, max_steps=3)
    obs, _ = batch.reset(seed=11)
    steps = list(play(model, batch, obs, 9))
    episodes: list[list[tuple[np.ndarray, int]]] = [[] for _ in range(8)]
    whole: list[list[tuple[np.ndarray, int]]] = []
    for x, act, term, trunc in steps:
        for i in range(8):
            episodes[i].append((x[i], int(act[i])))
            if term[i] or trunc[i]:
                whole.append(episodes[i])
                episodes[i] = []
    assert len(whole) >= 16  # every sub-env ended at least twice (budget 3, 9 steps)
    for episode in whole:
        state = None
        for k, (x, a) in enumerate(episode):
            act, state = model.predict(x[None], state=state, episode_start=np.array([k == 0]), deterministic=True)
            assert int(act[0]) == a
    # the test can fail: the same inputs read with the state the previous episode left give other actions
    state, differ = None, 0
    for episode in whole:
        for k, (x, a) in enumerate(episode):
            act, state = model.predict(x[None], state=state, episode_start=np.array([False]), deterministic=True)
            differ += int(act[0]) != a
    assert differ > 0


class _GRUAsSB3:
    """The shipped Face GRU behind SB3's ``predict``: it reads the colours and the previous action off the input."""

    def __init__(self) -> None:
        self.policy, _ = load_rnn_checkpoint(CHECKPOINTS / "rnn_face_gru.pt")

    def predict(self, x, state, episode_start, deterministic):
        memory = self.policy.initial_memory(len(x)) if state is None else state
        return self.policy.act(x[:, :-1], x[:, -1] - 1, memory, episode_start, greedy=deterministic)


def test_the_evaluation_plays_the_starts_and_protocol_of_rnn_ppos():
    """A GRU played through the SB3 evaluation solves exactly what rnn_ppo's evaluation says it solves (the same
    seeded starts, budget, previous-action input and memory reset), so the two tables compare row by row."""
    gru = _GRUAsSB3()
    sb3_rates = evaluate_partial_sb3(gru, "face", [1, 2, 3], 64, seed=424242)
    assert sb3_rates == evaluate_partial(gru.policy, "face", [1, 2, 3], 64, seed=424242)
    assert sb3_rates["pass/d2"] > 0.5 > evaluate_partial(None, "face", [2], 64, seed=424242)["pass/d2"]


def test_bad_combinations_are_refused(capsys):
    with pytest.raises(SystemExit) as end:
        sb3_main(["--algo", "recurrent-ppo", "--tier", "symbolic"])
    assert end.value.code == 2
    assert "recurrent-ppo is for the partial views" in capsys.readouterr().err
    with pytest.raises(ValueError, match="Face or Vertex"):
        PartialSB3VecEnv(CubeVectorEnv(2, autoreset_mode=AutoresetMode.SAME_STEP))
    with pytest.raises(ValueError, match="obs_format='indices'"):
        PartialSB3VecEnv(CubeVectorEnv(2, tier="face", image_size=32, autoreset_mode=AutoresetMode.SAME_STEP))
    assert with_prev(np.zeros((2, 9), np.uint8), np.array([-1, 17])).tolist()[1][-1] == 18
