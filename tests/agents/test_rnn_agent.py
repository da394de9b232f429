"""The ``rnn`` agent (issue 41, item 3): the shipped partial-view policies played through the runner.

It is the policy ``benchmarks/rnn_eval.py`` scores, not a re-implementation: through ``run_episode`` it makes the
greedy choices the policy makes on the native vector env's compact form from the same starts, and solves exactly
what :func:`~cubebench.training.rl.rnn_ppo.evaluate_partial` counts.  It reads only the tier's text (or image)
form, starts every episode with no memory, refuses other tiers by name, and its runs carry the trained mark."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the rnn agent needs the rl extra: pip install -e '.[rl]'")

from gymnasium.vector import AutoresetMode  # noqa: E402

import cubebench  # noqa: E402
from cubebench.agents.episode import run_episode  # noqa: E402
from cubebench.agents.rl.rnn_agent import (CHECKPOINTS, RecurrentAgent, load_tier_policies,  # noqa: E402
                                           make_rnn_agent, visible_colours)
from cubebench.envs.vector_env import CubeVectorEnv  # noqa: E402
from cubebench.runner.cli import main  # noqa: E402
from cubebench.runner.compare import compare_runs, render  # noqa: E402
from cubebench.runner.report import build_report  # noqa: E402
from cubebench.runner.specs import AgentSpecError, agent_training, make_agent  # noqa: E402
from cubebench.runner.store import open_run  # noqa: E402
from cubebench.training.rl.rnn_ppo import evaluate_partial  # noqa: E402

torch.set_num_threads(1)
TIERS = ("face", "vertex")
QUIET = ["--no-progress", "--quiet"]


def _actions(record: Any) -> list[str]:
    return [a for step in record.steps for call in step.tool_calls for a in call.args]


def _play(agent: Any, tier: str, depth: int, seed: int) -> Any:
    env = gym.make(f"cube_env:{cubebench.TIERS[tier]}", depth=depth, obs_format="text", max_steps=None)
    try:
        return run_episode(agent, env, seed=seed, distances="none", capped=False)
    finally:
        env.close()


def _vector_greedy(tier: str, depth: int, seed: int, n: int) -> tuple[list[list[str]], np.ndarray]:
    """The greedy choices and solves of the shipped policy on the native vector env's compact form (the loop of
    ``evaluate_partial``, which ``rnn_eval.py`` runs), sub-env ``i`` seeded ``seed + i``."""
    policy = load_tier_policies()[tier][0]
    env = CubeVectorEnv(n, tier=tier, obs_format="indices", depth=depth, max_steps=20,
                        autoreset_mode=AutoresetMode.SAME_STEP)
    obs, _ = env.reset(seed=seed)
    prev, memory = np.full(n, -1, dtype=np.int64), policy.initial_memory(n)
    live, solved = np.ones(n, bool), np.zeros(n, bool)
    chosen: list[list[str]] = [[] for _ in range(n)]
    for _ in range(20):
        act, memory = policy.act(obs, prev, memory, prev < 0)
        for i in np.flatnonzero(live):
            chosen[i].append(policy.action_names[int(act[i])])
        obs, _, term, trunc, _ = env.step(act)
        solved |= term & live
        live &= ~(term | trunc)
        prev = np.where(term | trunc, -1, act)
        if not live.any():
            break
    env.close()
    return chosen, solved


@pytest.mark.parametrize("tier", TIERS)
def test_it_reads_the_text_and_image_forms_as_the_compact_form_the_policy_was_trained_on(tier: str) -> None:
    envs = {form: cubebench.make_cube_env(tier, depth=6, obs_format=form) for form in ("indices", "text", "image")}
    obs = {form: env.reset(seed=11)[0] for form, env in envs.items()}
    rng = np.random.default_rng(0)
    for _ in range(12):
        assert np.array_equal(visible_colours(tier, obs["text"]), obs["indices"])
        assert np.array_equal(visible_colours(tier, obs["image"]), obs["indices"])
        action = int(rng.integers(envs["text"].action_space.n))
        obs = {form: env.step(action)[0] for form, env in envs.items()}
    with pytest.raises(ValueError, match="text or image form"):
        visible_colours(tier, obs["indices"])


@pytest.mark.parametrize("tier", TIERS)
def test_through_run_episode_it_makes_the_policys_greedy_choices_of_rnn_eval(tier: str) -> None:
    """Same starts (sub-env i of the vector env is the single env seeded seed + i): the same actions, step by step,
    and exactly the solves ``evaluate_partial`` (rnn_eval.py's greedy rows) counts."""
    n, seed = 12, 424242
    for depth in (3, 4):
        start = seed + 10_000 * depth  # evaluate_partial's seeds
        chosen, solved = _vector_greedy(tier, depth, start, n)
        records = [_play(make_rnn_agent(), tier, depth, start + i) for i in range(n)]
        assert [_actions(r) for r in records] == chosen
        assert [r.solved for r in records] == solved.tolist()
        rate = evaluate_partial(load_tier_policies()[tier][0], tier, [depth], n, seed=seed)[f"pass/d{depth}"]
        assert rate == pytest.approx(np.mean([r.solved for r in records]))
    assert any(name[0] in "xyz" for moves in chosen for name in moves)  # it rotates the cube, through the tool


def test_every_episode_starts_with_no_memory_and_no_previous_action() -> None:
    """Two episodes in a row with one agent are two fresh agents' episodes; carrying the memory over would not be."""
    starts = [("face", 4, 424242 + 40_000 + i) for i in range(8)]
    fresh = [_actions(_play(make_rnn_agent(), *s)) for s in starts]
    agent = make_rnn_agent()
    assert [_actions(_play(agent, *s)) for s in starts] == fresh

    class Carrying(RecurrentAgent):  # what a missing reset would do: the last episode's memory goes on
        def reset(self, task: Any) -> None:
            memory, prev = self.memory, self.prev
            super().reset(task)
            if memory.numel():
                self.memory, self.prev = memory, prev

    carrying = Carrying(load_tier_policies())
    assert [_actions(_play(carrying, *s)) for s in starts] != fresh  # so the check above can fail


def test_other_tiers_are_refused_by_name(tmp_path: Path, capsys) -> None:
    record = _play_symbolic(make_rnn_agent())
    assert record.status == "error"
    assert "plays the face, vertex tier(s) only, not 'symbolic'" in record.config["reset_error"]
    capsys.readouterr()
    code = main(["run", "--suite", "exp1", "--tiers", "symbolic,face", "--depths", "1", "--agent", "rnn",
                 "--out", str(tmp_path / "r.sqlite"), *QUIET])
    err = capsys.readouterr().err
    assert code != 0 and "agent 'rnn' plays only the face, vertex tier(s), not symbolic; restrict the suite" in err
    assert len(err.strip().splitlines()) == 1


def _play_symbolic(agent: Any) -> Any:
    env = gym.make("CubeBench-Symbolic-v0", depth=1)
    try:
        return run_episode(agent, env, seed=0, distances="none")
    finally:
        env.close()


def test_a_missing_checkpoint_and_a_checkpoint_of_the_other_tier_are_refused(tmp_path: Path, capsys) -> None:
    with pytest.raises(AgentSpecError, match="no partial-view policy checkpoint at /no/such.pt"):
        make_agent("rnn:/no/such.pt")
    face = str(CHECKPOINTS / "rnn_face_gru.pt")
    agent = make_agent(f"rnn:{face}")
    record = _play(agent, "face", 1, 0)
    assert record.solved
    env = gym.make("CubeBench-Vertex-v0", depth=1, obs_format="text", max_steps=None)
    vertex = run_episode(make_agent(f"rnn:{face}"), env, seed=0, distances="none")
    assert vertex.status == "error" and "plays the face tier(s) only, not 'vertex'" in vertex.config["reset_error"]
    capsys.readouterr()
    code = main(["run", "--suite", "exp1", "--tiers", "vertex", "--depths", "1", "--agent", f"rnn:{face}",
                 "--out", str(tmp_path / "v.sqlite"), *QUIET])
    assert code != 0 and "plays only the face tier(s)" in capsys.readouterr().err


def test_the_shipped_checkpoints_are_the_documented_runs_last_checkpoints() -> None:
    """docs/results/rl.md: the GRU runs' last.pt (Face 1,185 updates, 9.71 M env steps; Vertex 801, 6.56 M) and the
    1-frame stacks' (Face 1,190, 9.75 M; Vertex 1,487, 12.18 M)."""
    expected = {("gru", "face"): (1185, 9_707_520), ("gru", "vertex"): (801, 6_561_792),
                ("stack1", "face"): (1190, 9_748_480), ("stack1", "vertex"): (1487, 12_181_504)}
    for (variant, tier), (update, steps) in expected.items():
        policy, meta, _ = load_tier_policies(variant)[tier]
        assert (meta["update"], meta["env_steps"], meta["args"]["tier"]) == (update, steps, tier)
        assert policy.memory == ("gru" if variant == "gru" else "stack") and (CHECKPOINTS / f"rnn_{tier}_{variant}.pt").stat().st_size < 2**20


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = {}
    for spec, rules in (("rnn", "paper"), ("rnn:stack1", "strict")):
        db = tmp_path_factory.mktemp("rnn") / f"{rules}.sqlite"
        assert main(["run", "--suite", "exp1", "--tiers", "face,vertex", "--depths", "1,2", "--agent", spec,
                     "--rules", rules, "--out", str(db), *QUIET]) == 0
        out[rules] = db
    return out


def test_runner_runs_under_both_rules_are_marked_trained_in_report_and_compare(runs: dict[str, Path]) -> None:
    for rules, db in runs.items():
        with open_run(db) as store:
            stored = store.get_meta("agent_training")
            report = build_report(store)
            facts = dict(report.summary().rows)
            assert store.get_meta("config")["play"]["rules"] == rules
        assert stored["depths"] == [1, 2, 3, 4] and stored["measured_on"] == [] and stored["public"] == [1, 2, 3]
        assert "[trained on this environment, quarter-turn depths 1-4]" in facts["agent"]
        assert "rnn_ppo" in facts["trained"] and "random scrambles of 1 to 4 quarter turns" in facts["trained"]
        assert "depths in its training data: 1, 2 (its training data holds the public positions" in facts["trained"]
        assert {getattr(r, "tier") for r in report.rows} == {"face", "vertex"}
        assert np.mean([r.solved for r in report.rows]) > 0.9  # depths 1-2
    text = render(compare_runs(list(runs.values())))
    assert "run 1: rnn [trained on this environment, quarter-turn depths 1-4]" in text
    assert "run 2: rnn:stack1 [trained on this environment" in text and "not a zero-shot score" in text


def test_view_export_and_html_report_read_the_runs(runs: dict[str, Path], tmp_path: Path) -> None:
    for rules, db in runs.items():
        assert main(["report", str(db), "--html", str(tmp_path / f"{rules}.html")]) == 0
        assert main(["view", str(db), "--out", str(tmp_path / f"{rules}-view.html")]) == 0
        assert main(["export", str(db), "--format", "jsonl", "--out", str(tmp_path / f"{rules}.jsonl")]) == 0
        lines = (tmp_path / f"{rules}.jsonl").read_text().splitlines()
        assert len(lines) == 2 * (12 + 20) and '"move"' in "".join(lines)
        assert "rnn" in (tmp_path / f"{rules}-view.html").read_text()


def test_the_trained_mark_reads_both_checkpoints() -> None:
    training = agent_training("rnn")
    assert training is not None and training.depths == (1, 2, 3, 4) and training.metric == "quarter"
    assert "face (gru)" in training.on and "vertex (gru)" in training.on
    assert "stack of 1 frame(s)" in agent_training("rnn:stack1").on  # type: ignore[union-attr]
