"""The deepcube agent: search on shallow positions (hand-made heuristic and the shipped network), its move limit,
replanning, reading a cube held in another orientation, and the step budget of a whole episode."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from helpers import SCRAMBLES, apply

import cubebench
from cubebench.agents.base import Observation, Task
from cubebench.agents.deepcube_agent import DeepCubeAgent, make_deepcube_agent, state_from_colours
from cubebench.agents.deepcube_net import ValueNet, encode, load_value_net
from cubebench.agents.deepcube_search import QUARTER_MOVES, beam_search, weighted_astar
from cubebench.agents.episode import run_episode
from cubebench.engine import SOLVED, kernels
from cubebench.engine.apply import apply_sequence
from cubebench.engine.moves import QUARTER_ACTIONS
from cubebench.runner.cli import main
from cubebench.runner.compare import compare_runs, render
from cubebench.runner.specs import agent_training

SHALLOW = {1: ("R", "U'", "F"), 2: ("R U", "F' L", "D B"), 3: ("R U F", "L' D B'", "U R' U")}


def misplaced_bound(states: np.ndarray) -> np.ndarray:
    """An admissible heuristic made by hand: a quarter turn moves 20 stickers, so it puts at most 20 more in place."""
    return np.array([np.ceil((54 - kernels.stickers_in_place(s)) / 20) for s in states], dtype=np.float64)


def solves(state: np.ndarray, plan: list[int]) -> bool:
    end = apply_sequence(state, QUARTER_MOVES[plan]) if plan else state
    return bool(kernels.is_solved(end))


@pytest.mark.parametrize("depth", sorted(SHALLOW))
def test_weighted_astar_and_beam_solve_shallow_positions_with_a_hand_made_heuristic(depth: int) -> None:
    for scramble in SHALLOW[depth]:
        state = apply(scramble)
        found = weighted_astar(state, misplaced_bound, max_moves=20, weight=1.0, batch=1)
        assert found.plan is not None and solves(state, found.plan) and len(found.plan) <= depth + 2
        assert found.expansions >= 1 and found.generated == 12 * found.expansions
        beam = beam_search(state, misplaced_bound, max_moves=20, width=200)
        assert beam.plan is not None and solves(state, beam.plan)
    one = weighted_astar(apply("R"), misplaced_bound, max_moves=20, weight=1.0, batch=1)
    assert [QUARTER_ACTIONS[a] for a in one.plan] == ["R'"]


def test_no_plan_is_longer_than_the_move_limit() -> None:
    state = apply("R U F")
    for limit in (0, 1, 2):
        assert weighted_astar(state, misplaced_bound, max_moves=limit).plan is None
        assert beam_search(state, misplaced_bound, max_moves=limit).plan is None
    assert weighted_astar(state, misplaced_bound, max_moves=2).stopped == "exhausted"
    assert len(weighted_astar(state, misplaced_bound, max_moves=3, weight=1.0).plan) == 3
    assert weighted_astar(SOLVED.copy(), misplaced_bound, max_moves=0).plan == []


def test_the_search_budget_ends_a_search_without_a_plan() -> None:
    found = weighted_astar(apply("R U F L' D B' R2"), lambda s: np.zeros(len(s)), max_moves=20, batch=10,
                           max_expansions=30)
    assert found.plan is None and found.stopped == "expansions" and 30 <= found.expansions < 40


@pytest.mark.parametrize("depth", sorted(SHALLOW))
def test_the_shipped_network_solves_shallow_positions(depth: int) -> None:
    net = load_value_net()
    assert net.meta.get("by") == "python -m cubebench.training.deepcube"
    for scramble in SHALLOW[depth]:
        state = apply(scramble)
        found = weighted_astar(state, net, max_moves=20, max_expansions=2000)
        assert found.plan is not None and solves(state, found.plan) and len(found.plan) <= depth + 2


def test_the_network_forward_pass_and_its_encoding() -> None:
    x = encode(np.stack([SOLVED, apply("R")]))
    assert x.shape == (2, 288) and (x.sum(axis=1) == 48).all()
    rng = np.random.default_rng(0)
    w = [rng.normal(size=(4, 288)), rng.normal(size=(4, 4)), rng.normal(size=(4, 4)), rng.normal(size=(1, 4))]
    b = [np.zeros(4), np.zeros(4), np.zeros(4), np.array([0.5])]
    net = ValueNet((4,), 1, w, b)
    h = np.maximum(x @ w[0].T, 0)
    want = np.maximum(np.maximum(h + np.maximum(h @ w[1].T, 0) @ w[2].T, 0) @ w[3].T + 0.5, 0)[:, 0]
    np.testing.assert_allclose(net(np.stack([SOLVED, apply("R")])), want, rtol=1e-5)
    with pytest.raises(ValueError, match="linear layers"):
        ValueNet((4,), 2, w, b)


def test_a_missing_weights_file_is_a_clear_error(tmp_path) -> None:
    with pytest.raises(ValueError, match="no value network"):
        load_value_net(tmp_path / "none.npz")
    (tmp_path / "bad.npz").write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="not a value network"):
        load_value_net(tmp_path / "bad.npz")


def test_a_cube_held_in_another_orientation_reads_with_its_centres_in_place() -> None:
    """Read off a turned cube, the plan's face turns (named after the faces where they are held) solve it."""
    held = apply("y x'", apply("R U F"))
    state = state_from_colours(held // 9)
    plan = weighted_astar(state, misplaced_bound, max_moves=20, weight=1.0, batch=1).plan
    assert plan is not None and len(plan) <= 5
    assert kernels.is_solved(apply_sequence(held, QUARTER_MOVES[plan]))
    assert np.array_equal(state_from_colours(apply("y x'") // 9), SOLVED)


class Recorder:
    """A toolbox stand-in that records the moves the agent plays."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, list[str]]] = []

    def call(self, name: str, args: list[str] | None = None) -> str:
        self.calls.append((name, list(args or [])))
        return ""


def task(max_moves: int | None = None) -> Task:
    return Task(tier="symbolic", tool_setting="basic", tools=("move", "done"), action_names=QUARTER_ACTIONS,
                obs_format="onehot", reward="none", metric="quarter", max_steps=20, description="",
                max_moves=max_moves)


def observe(state: np.ndarray, steps_left: int = 20) -> Observation:
    return Observation(step=20 - steps_left, steps_left=steps_left, text="", image=None,
                       raw=np.eye(6, dtype=np.uint8)[state // 9])


def test_the_agent_plays_its_plan_one_turn_a_step_and_replans_when_the_state_differs() -> None:
    agent = DeepCubeAgent(load_value_net(), max_expansions=2000)
    agent.reset(task())
    tools = Recorder()
    state = apply("R U")
    agent.act(observe(state), tools)
    assert len(agent.searches) == 1 and tools.calls[-1][0] == "move" and len(tools.calls[-1][1][0].split()) == 1
    state = apply(tools.calls[-1][1][0], state)
    agent.act(observe(state, 19), tools)
    assert len(agent.searches) == 1  # on plan: no new search
    assert kernels.is_solved(apply(tools.calls[-1][1][0], state))
    agent.act(observe(apply("F"), 18), tools)  # not the state the plan expects: plan again
    assert len(agent.searches) == 2 and tools.calls[-1] == ("move", ["F'"])


def test_the_agent_refuses_other_tiers_and_metrics() -> None:
    agent = make_deepcube_agent()
    with pytest.raises(ValueError, match="Symbolic"):
        agent.reset(Task(**{**task().__dict__, "tier": "visual"}))
    with pytest.raises(ValueError, match="quarter"):
        agent.reset(Task(**{**task().__dict__, "metric": "half"}))
    with pytest.raises(ValueError, match="unknown search method"):
        DeepCubeAgent(load_value_net(), method="dfs")


@pytest.mark.parametrize("method", ["astar", "beam"])
def test_an_episode_never_plays_more_turns_than_its_steps(method: str) -> None:
    """A deep scramble and 3 steps: the agent plays at most 3 turns, one per step, whatever its search does."""
    env = gym.make(cubebench.TIERS["symbolic"], obs_format="onehot", max_steps=None, generator=SCRAMBLES)
    agent = DeepCubeAgent(load_value_net(), method=method, max_expansions=200, width=50)
    record = run_episode(agent, env, reset_options={"scramble": "R U F L' D B' R U2 F'"}, max_steps=3,
                         distance_budget_s=None)
    assert record.n_steps <= 3 and record.n_moves <= 3
    assert all(step.moves <= 1 for step in record.steps)
    shallow = run_episode(DeepCubeAgent(load_value_net(), method=method, max_expansions=2000), env,
                          reset_options={"scramble": "R U"}, max_steps=20, distance_budget_s=None)
    assert shallow.status == "solved" and shallow.n_moves == 2
    assert shallow.steps[0].model_log[0]["search"]["method"] == method


def test_a_deepcube_run_is_marked_trained_on_this_environment(tmp_path) -> None:
    """``cubebench compare`` marks its rows as trained here (depths 1-3: every public position is in its walks)."""
    training = agent_training("deepcube")
    assert training is not None and training.metric == "quarter" and training.public == (1, 2, 3)
    assert "no solver labels" in training.on and training.depths[0] == 1
    db = tmp_path / "deepcube.sqlite"
    assert main(["run", "--suite", "exp1", "--tiers", "symbolic", "--depths", "1", "--agent", "deepcube",
                 "--out", str(db), "--no-progress", "--quiet"]) == 0
    text = render(compare_runs([db]))
    assert "run 1: deepcube [trained on this environment, quarter-turn depths 1-" in text
    assert "1.00 (12/12)" in text
