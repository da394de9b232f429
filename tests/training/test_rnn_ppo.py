"""The partial-view policy (GRU and frame stack) and its recurrent PPO trainer: shapes, memory resets at episode
starts, a loss that training lowers, a run that resumes where it stopped, and (slow) learning above chance."""

from __future__ import annotations

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the RL trainers need the rl extra: pip install -e '.[rl]'")

from cubebench.agents.rl.rnn_policy import (PartialViewPolicy, inverse_of, load_rnn_checkpoint,  # noqa: E402
                                            save_rnn_checkpoint)
from cubebench.envs.vector_env import CubeVectorEnv  # noqa: E402
from cubebench.training.rl.rnn_ppo import (RecurrentPPO, _run_args, _Weights, build, evaluate_partial,  # noqa: E402
                                           main, make_policy, parse_args)
from cubebench.training.run_state import RunState  # noqa: E402

torch.set_num_threads(1)

SMALL = ["--num-envs", "16", "--n-steps", "8", "--minibatch", "8", "--epochs", "2", "--hidden", "32",
         "--eval-episodes", "20", "--eval-every", "2", "--max-depth", "2"]


def _policy(tier: str, memory: str) -> PartialViewPolicy:
    torch.manual_seed(0)
    env = CubeVectorEnv(1, tier=tier, obs_format="indices")
    return PartialViewPolicy(env.single_observation_space.shape[0], env.action_names, memory, hidden=32, stack=3)


def _random_inputs(policy: PartialViewPolicy, batch: int, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    obs = torch.randint(0, 6, (batch, policy.n_visible), generator=g, dtype=torch.uint8)
    prev = torch.randint(0, policy.n_actions, (batch,), generator=g)
    return obs, prev


@pytest.mark.parametrize("memory", ["gru", "stack"])
@pytest.mark.parametrize("tier,visible", [("face", 9), ("vertex", 27)])
def test_shapes_on_face_and_vertex(tier, visible, memory):
    policy = _policy(tier, memory)
    assert policy.n_visible == visible and policy.n_actions == 18  # 12 quarter turns + x x' y y' z z'
    env = CubeVectorEnv(5, tier=tier, obs_format="indices", depth=2)
    obs, _ = env.reset(seed=1)
    prev = np.full(5, -1)
    logits, values, memory_t = policy.step(torch.as_tensor(obs), torch.as_tensor(prev), policy.initial_memory(5),
                                           torch.ones(5, dtype=torch.bool))
    assert logits.shape == (5, 18) and values.shape == (5,) and memory_t.shape == (5, policy.memory_size)
    seq_obs = torch.as_tensor(np.stack([obs] * 4))
    seq_prev = torch.zeros(4, 5, dtype=torch.int64)
    seq_logits, seq_values = policy.unroll(seq_obs, seq_prev, torch.zeros(4, 5, dtype=torch.bool),
                                           policy.initial_memory(5))
    assert seq_logits.shape == (4, 5, 18) and seq_values.shape == (4, 5)
    with pytest.raises(ValueError, match="stickers"):
        policy.step(torch.zeros(5, visible + 1, dtype=torch.uint8), torch.as_tensor(prev), policy.initial_memory(5),
                    torch.ones(5, dtype=torch.bool))


@pytest.mark.parametrize("memory", ["gru", "stack"])
def test_an_episode_start_resets_the_memory(memory):
    """After some steps the memory changes the outputs; a step flagged as a start gives a fresh policy's outputs."""
    policy = _policy("face", memory)
    mem = policy.initial_memory(6)
    no = torch.zeros(6, dtype=torch.bool)
    for t in range(5):
        _, _, mem = policy.step(*_random_inputs(policy, 6, seed=t), mem, no)
    obs, prev = _random_inputs(policy, 6, seed=99)
    fresh_logits, fresh_values, fresh_mem = policy.step(obs, prev, policy.initial_memory(6), no)
    carried_logits, carried_values, _ = policy.step(obs, prev, mem, no)
    assert not torch.allclose(carried_values, fresh_values)  # the memory matters ...
    start = torch.tensor([True, False, True, False, True, False])
    logits, values, new_mem = policy.step(obs, prev, mem, start)
    assert torch.equal(logits[start], fresh_logits[start]) and torch.equal(values[start], fresh_values[start])
    assert torch.equal(new_mem[start], fresh_mem[start])  # ... and a start wipes it, row by row
    assert torch.equal(values[~start], carried_values[~start])
    # unroll applies the same resets inside a segment
    seq = [_random_inputs(policy, 6, seed=10 + t) for t in range(3)]
    starts = torch.zeros(3, 6, dtype=torch.bool)
    starts[2] = True
    _, seq_values = policy.unroll(torch.stack([o for o, _ in seq]), torch.stack([p for _, p in seq]), starts, mem)
    _, alone, _ = policy.step(seq[2][0], seq[2][1], policy.initial_memory(6), no)
    assert torch.allclose(seq_values[2], alone)


def test_inverse_masking_and_checkpoint_round_trip(tmp_path):
    policy = _policy("face", "gru")
    inv = inverse_of(policy.action_names)
    assert all(inv[inv[a]] == a and inv[a] != a for a in range(18))
    assert policy.action_names[inv[policy.action_names.index("x")]] == "x'"
    obs, _ = _random_inputs(policy, 3)
    logits, _, _ = policy.step(obs, torch.tensor([-1, 0, 12]), policy.initial_memory(3), torch.zeros(3, dtype=bool))
    assert torch.isfinite(logits[0]).all() and torch.isinf(logits[1, inv[0]]) and torch.isinf(logits[2, inv[12]])
    assert torch.isfinite(logits).sum() == 18 + 17 + 17
    save_rnn_checkpoint(policy, tmp_path / "p.pt", {"note": 1})
    loaded, meta = load_rnn_checkpoint(tmp_path / "p.pt")
    assert meta == {"note": 1} and loaded.config() == policy.config()
    assert all(torch.equal(a, b) for a, b in zip(policy.state_dict().values(), loaded.state_dict().values()))
    torch.save({"format": 1}, tmp_path / "other.pt")
    with pytest.raises(ValueError, match="not a CubeBench partial-view policy"):
        load_rnn_checkpoint(tmp_path / "other.pt")
    with pytest.raises(ValueError, match="memory must be one of"):
        PartialViewPolicy(9, policy.action_names, "lstm")


def _total_loss(algo: RecurrentPPO, data: dict[str, np.ndarray]) -> float:
    adv, ret = algo.advantages(data)
    prev = torch.as_tensor(data["prev"])
    with torch.no_grad():
        policy_loss, value_loss, ent = algo.segment_loss(
            torch.as_tensor(data["obs"]), prev, prev < 0, torch.as_tensor(data["memory0"]), torch.as_tensor(data["act"]),
            torch.as_tensor(data["logp"]).float(), torch.as_tensor(adv).float(), torch.as_tensor(ret).float())
    return float(policy_loss + algo.cfg.vf_coef * value_loss - algo.cfg.ent_coef * ent)


@pytest.mark.parametrize("memory", ["gru", "stack"])
def test_training_steps_lower_the_loss_on_a_fixed_batch(memory):
    args = parse_args([*SMALL, "--memory", memory, "--max-depth", "1", "--reward", "sticker"])
    algo = build(args)
    data, stats = algo.collect()
    assert data["obs"].shape == (8, 16, 9) and data["memory0"].shape == (16, algo.net.memory_size)
    assert stats["train/episodes"] > 0
    before = _total_loss(algo, data)
    for _ in range(3):
        algo.learn(data)
    assert _total_loss(algo, data) < before
    assert algo.updates == 3


def test_a_rerun_resumes_the_run_where_it_stopped(tmp_path, capsys):
    out = tmp_path / "run"
    assert main([*SMALL, "--updates", "2", "--out", str(out)]) == 0
    saved = json.loads((out / "checkpoint" / "state.json").read_text())
    assert saved["step"] == 2
    last, meta = load_rnn_checkpoint(out / "last.pt")
    assert meta["update"] == 2 and meta["env_steps"] == 2 * 16 * 8 and set(meta["eval"]) == {"pass/d1", "pass/d2"}
    # what a rerun restores: the weights, the optimizer, the counters and the curriculum of the checkpoint
    args = parse_args([*SMALL, "--updates", "4", "--out", str(out)])
    resumed = RunState.resumable(out, _run_args(args))
    assert resumed is not None
    algo = build(args, _Weights.load(out / "checkpoint"))
    state = RunState.start(out, _run_args(args), {}, {}, resumed)
    state.restore(algo.opt, algo)
    assert state.step == 2 and algo.updates == 2 and algo.env_steps == 2 * 16 * 8
    assert all(torch.equal(a, b) for a, b in zip(last.state_dict().values(), algo.net.state_dict().values()))
    assert int(algo.opt.state_dict()["state"][0]["step"]) == 2 * 2 * 2  # updates x epochs x minibatches
    assert algo.curriculum.frontier == saved["history"][-1]["frontier"]
    # and the rerun itself goes on from step 2 to 4 (a larger --updates trains the same run on)
    assert main([*SMALL, "--updates", "4", "--out", str(out)]) == 0
    summary = json.loads((out / "training.json").read_text())
    assert [h["step"] for h in summary["history"]] == [1, 2, 3, 4] and len(summary["sessions"]) == 2
    assert summary["sessions"][1]["from_step"] == 2
    assert load_rnn_checkpoint(out / "last.pt")[1]["env_steps"] == 4 * 16 * 8
    lines = [json.loads(line) for line in (out / "scalars.jsonl").read_text().splitlines()]
    assert sorted({r["step"] for r in lines if r["tag"] == "train/success"}) == [128, 256, 384, 512]
    assert "resuming" in capsys.readouterr().out
    # other arguments are refused in one line (exit status 2), the run left as it was
    assert main([*SMALL, "--updates", "4", "--hidden", "16", "--out", str(out)]) == 2
    assert "--hidden 32 (now 16)" in capsys.readouterr().err


def test_bad_arguments_are_refused():
    with pytest.raises(SystemExit):
        parse_args(["--tier", "symbolic"])
    with pytest.raises(SystemExit):
        parse_args(["--n-steps", "0"])


def test_random_play_is_the_chance_baseline():
    """``policy=None`` plays uniform random actions on the same seeded starts (what learning is measured against)."""
    a = evaluate_partial(None, "face", (1,), 100, seed=5)
    b = evaluate_partial(None, "face", (1,), 100, seed=5)
    assert a == b and 0.0 < a["pass/d1"] < 0.5


@pytest.mark.slow
def test_a_tiny_gru_policy_solves_depth_one_face_above_chance(tmp_path):
    """Trained on depth-1 Face starts, the GRU solves more of 300 fresh ones than random play does on the same."""
    chance = evaluate_partial(None, "face", (1,), 300, seed=11)["pass/d1"]
    assert main(["--tier", "face", "--max-depth", "1", "--num-envs", "128", "--n-steps", "16", "--hidden", "64",
                 "--updates", "80", "--eval-every", "40", "--eval-episodes", "50", "--lr", "2e-3",
                 "--out", str(tmp_path)]) == 0
    policy, _ = load_rnn_checkpoint(tmp_path / "last.pt")
    trained = evaluate_partial(policy, "face", (1,), 300, seed=11)["pass/d1"]
    assert trained > chance + 0.25, (trained, chance)
    assert make_policy(parse_args([])).n_visible == 9
