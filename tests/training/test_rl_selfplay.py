"""Self-play with the scrambler-versus-solver env (``cubebench.training.rl.selfplay``, docs/rl.md).

Fast: the scramble phase runs through the PettingZoo env and its positions land in the
curriculum with their exact distances; a PPO round trains on those positions and changes the
policy; the command's ``--help`` and a tiny run whose checkpoint the ``mlp:<checkpoint>`` agent
loader and the evaluation code load.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="self-play trains the MLP policy: needs torch (the rl extra)")
pytest.importorskip("pettingzoo", reason="self-play plays the scrambler-versus-solver env: needs pettingzoo (the multi extra)")

from cubebench.training.rl import selfplay  # noqa: E402
from cubebench.agents.rl.evaluate import evaluate  # noqa: E402
from cubebench.agents.rl.mlp_policy import SHIPPED_CHECKPOINT, MLPPolicy, load_checkpoint  # noqa: E402
from cubebench.training.rl.ppo import PPOConfig  # noqa: E402
from cubebench.engine import TABLE, kernels  # noqa: E402
from cubebench.engine.facelets import SOLVED  # noqa: E402
from cubebench.engine.moves import MOVE_INDEX  # noqa: E402
from cubebench.envs.multi import SelfPlayCurriculum  # noqa: E402
from cubebench.generators import Instance  # noqa: E402
from cubebench.solver.oracle import oracle  # noqa: E402


class SpyCurriculum(SelfPlayCurriculum):
    """The env's curriculum, noting what the env records and what it serves."""

    def __init__(self) -> None:
        super().__init__()
        self.recorded: list[tuple[np.ndarray, str, int]] = []
        self.served: list[np.ndarray] = []

    def record(self, state: np.ndarray, scramble: str, distance: int, metric: Any) -> None:
        self.recorded.append((np.array(state), scramble, int(distance)))
        super().record(state, scramble, distance, metric)

    def __call__(self, depth: int, metric: str, rng: np.random.Generator) -> Instance:
        inst = super().__call__(depth, metric, rng)
        self.served.append(np.array(inst.state))
        return inst


def _scrambled(scramble: str) -> np.ndarray:
    return kernels.apply_moves(SOLVED, TABLE, np.array([MOVE_INDEX[m] for m in scramble.split()], dtype=np.int64))


@pytest.fixture(scope="module")
def shipped() -> MLPPolicy:
    return load_checkpoint(SHIPPED_CHECKPOINT)[0]


@pytest.mark.parametrize("kind", selfplay.SCRAMBLERS)
def test_scramble_phase_runs_through_the_env_into_the_curriculum(shipped: MLPPolicy, kind: str) -> None:
    curriculum = SpyCurriculum()
    phase = selfplay.ScramblePhase(shipped, curriculum, kind, seed=3)
    lengths = [1, 2, 3, 4, 3, 1]
    records = phase.play(lengths)
    # one game per length, each scrambled in the env, which recorded the position it reached
    assert [r.k for r in records] == lengths
    assert len(curriculum.recorded) == len(lengths)
    exact = oracle("quarter")
    for r, (state, scramble, distance) in zip(records, curriculum.recorded):
        assert len(scramble.split()) == r.k
        assert np.array_equal(state, _scrambled(scramble))  # the scramble the scrambler seat played
        assert distance == r.distance == exact.distance(state)  # exact, and what the game reports
        assert r.outcome in ("solved", "failed")  # the solver seat played the solve phase
        if kind == "adversarial":
            assert distance == r.k  # farthest turns only: k moves reach distance k near solved
    assert all(r.outcome == "solved" for r in records if r.distance == 1)  # the shipped policy solves depth 1
    # the curriculum serves those positions, each at exactly the distance asked for
    rng = np.random.default_rng(0)
    recorded = {s.tobytes() for s, _, _ in curriculum.recorded}
    for d, count in curriculum.counts("quarter").items():
        assert count > 0
        inst = curriculum(d, "quarter", rng)
        assert inst.distance == d == exact.distance(inst.state)
        assert inst.state.tobytes() in recorded


def test_adversarial_scrambler_prefers_what_the_critic_values_lowest(shipped: MLPPolicy) -> None:
    game, _ = selfplay.ScramblePhase(shipped, SelfPlayCurriculum()).env(2)
    cold = selfplay.make_scrambler("adversarial", game, shipped, temperature=1e-4)
    obs, infos = game.reset(seed=0)
    obs, *_ = game.step({"scrambler_0": 1, "solver_0": 0})  # U
    action = cold.act(obs["scrambler_0"], infos["scrambler_0"])
    state = _scrambled("U")
    names = game.action_names("scrambler_0")
    nxt = np.stack([kernels.apply_move(state, TABLE, MOVE_INDEX[n]) for n in names[1:]])
    far = [a for a, s in enumerate(nxt) if oracle("quarter").distance(s) == 2]
    with torch.no_grad():
        values = shipped(torch.as_tensor(selfplay.onehot(nxt[far])))[1].numpy()
    assert action == 1 + far[int(np.argmin(values))]


def test_a_round_trains_on_the_curriculum_positions_and_changes_the_policy() -> None:
    torch.manual_seed(0)
    policy = MLPPolicy(12, (32,), "quarter")
    curriculum = SpyCurriculum()
    trainer = selfplay.SelfPlayTrainer(policy, curriculum, scrambler="greedy", num_envs=16, max_depth=3,
                                       frontier=2, horizon=1, games=8,
                                       cfg=PPOConfig(n_steps=6, epochs=1, minibatch=48), seed=1)
    recorded = {s.tobytes() for s, _, _ in curriculum.recorded}
    assert len(curriculum.served) == 16  # PPO's first reset: every sub-env starts from a self-play position
    assert all(s.tobytes() in recorded for s in trainer.ppo.env.states)
    before = [p.detach().clone() for p in policy.parameters()]
    served = len(curriculum.served)
    stats = trainer.round(1)
    assert len(curriculum.served) > served  # episodes ended (horizon 3 < 6 steps) and restarted from the pool
    recorded = {s.tobytes() for s, _, _ in curriculum.recorded}
    assert all(s.tobytes() in recorded for s in curriculum.served)
    assert trainer.env_steps == 16 * 6 and stats["train/episodes"] > 0
    assert any(not torch.equal(b, p) for b, p in zip(before, policy.parameters()))
    assert trainer.covered() >= trainer.depths.frontier and trainer.depths.max_depth <= 3


def test_user_errors_are_refused_with_messages(shipped: MLPPolicy, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(ValueError, match="unknown scrambler"):
        selfplay.ScramblePhase(shipped, SelfPlayCurriculum(), "clever")
    with pytest.raises(ValueError, match="start frontier"):
        selfplay.SelfPlayTrainer(shipped, frontier=0)
    with pytest.raises(SystemExit):
        selfplay.parse_args(["--max-depth", "12"])
    assert "--max-depth must lie in 1..9" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        selfplay.parse_args(["--checkpoint", "/nonexistent.pt"])
    assert "does not exist" in capsys.readouterr().err


def test_cli_help() -> None:
    out = subprocess.run([sys.executable, "-m", "cubebench.training.rl.selfplay", "--help"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "--scrambler" in out.stdout and "scrambler-versus-solver" in out.stdout


def test_tiny_run_writes_a_checkpoint_the_mlp_loader_and_evaluate_load(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    selfplay.main(["--scratch", "--hidden", "32", "--rounds", "1", "--games", "6", "--updates", "1",
                   "--num-envs", "16", "--n-steps", "4", "--epochs", "1", "--minibatch", "32", "--max-depth", "3",
                   "--frontier", "2", "--eval-depths", "1", "--eval-n", "4", "--out", str(out), "--no-progress"])
    assert "| selfplay n=4 |" in capsys.readouterr().out
    result = json.loads((out / "result.json").read_text())
    assert result["rounds"] == 1 and result["env_steps"] == 16 * 4 and result["init"] == "scratch"
    assert set(result["eval"]) == {"shipped n=4", "selfplay n=4"}
    assert result["eval"]["shipped n=4"]["pass/d1"] == 1.0  # the shipped checkpoint, evaluated beside it
    policy, meta = load_checkpoint(out / "last.pt")
    assert policy.hidden == (32,) and meta["rounds"] == 1
    assert set(evaluate(policy, (1,), n=4)) == {"pass/d1"}
    from cubebench.runner.specs import make_agent

    agent = make_agent(f"mlp:{out / 'last.pt'}")
    assert agent.policy.hidden == (32,)


def test_mixed_starts_draw_self_play_positions_at_the_share_asked_for() -> None:
    curriculum = SpyCurriculum()
    selfplay.ScramblePhase(load_checkpoint(SHIPPED_CHECKPOINT)[0], curriculum, "greedy", seed=0).play([2] * 6)
    rng = np.random.default_rng(0)
    for share, low, high in ((0.0, 0, 0), (1.0, 200, 200), (0.5, 70, 130)):
        curriculum.served.clear()
        starts = selfplay.MixedStarts(curriculum, share)
        instances = [starts(2, "quarter", rng) for _ in range(200)]
        assert low <= len(curriculum.served) <= high
        assert all(oracle("quarter").distance(i.state) <= 2 for i in instances)
    with pytest.raises(ValueError, match="share"):
        selfplay.MixedStarts(curriculum, 1.5)


def test_heldout_positions_come_from_the_env_at_exact_distance(shipped: MLPPolicy) -> None:
    sets = selfplay.heldout_positions(shipped, [2, 3], 5, seed=7)
    exact = oracle("quarter")
    for d, (states, scrambles) in sets.items():
        assert 0 < len(states) <= 5 and len(scrambles) == len(states)
        assert len({s.tobytes() for s in states}) == len(states)  # distinct
        for state, scramble in zip(states, scrambles):
            assert len(scramble.split()) == d and np.array_equal(state, _scrambled(scramble))
            assert exact.distance(state) == d
    with pytest.raises(ValueError, match="1..9"):
        selfplay.heldout_positions(shipped, [12], 1)
