"""The agent interface: tools, language-action layer, run_episode, scripted baselines."""

from __future__ import annotations

from dataclasses import replace

import gymnasium as gym
import numpy as np
import pytest
from helpers import SCRAMBLES, apply

import cubebench
from cubebench.wrappers.description import EnvDescriptionError, describe_env
from cubebench.agents.base import Agent, Turn
from cubebench.agents.episode import run_episode
from cubebench.agents.records import EpisodeRecord
from cubebench.agents.scripted import GreedyAgent, ProberAgent, RandomAgent, SolverAgent
from cubebench.agents.tools import Toolbox, ToolError, tools_for
from cubebench.engine import SOLVED, kernels, to_facelets
from cubebench.tiers import tier_spec
from cubebench.wrappers.reward_wrappers import PotentialReward


def make(tier: str, **kw) -> gym.Env:
    kw.setdefault("max_steps", None)
    kw.setdefault("generator", SCRAMBLES)
    if tier == "symbolic":
        kw.setdefault("obs_format", "text")
    return gym.make(cubebench.TIERS[tier], **kw)


def toolbox(tier: str = "symbolic", setting: str = "basic", scramble: str = "R U", **kw) -> Toolbox:
    env = make(tier, **kw)
    obs, info = env.reset(options={"scramble": scramble})
    return Toolbox(env, tier, setting, obs, info)


def test_tool_sets_keep_solvers_out_of_basic() -> None:
    for tier in cubebench.TIERS:
        basic = tools_for(tier, "basic")
        assert "solve" not in basic and "solve_current" not in basic
        assert ("rotate" in basic) == (tier in ("face", "vertex"))
    assert "solve" in tools_for("face", "standard") and "solve_current" not in tools_for("face", "standard")
    assert "solve_current" in tools_for("vertex", "ideal") and "solve" not in tools_for("vertex", "ideal")
    with pytest.raises(ValueError):
        tools_for("symbolic", "oracle")


def test_move_sequence_and_quarter_expansion() -> None:
    tb = toolbox(scramble="D")
    result = tb.call("move", ["R U2 F'"])
    assert result.startswith("Executed R U U F' (4 actions)")
    assert tb.core.facelets == to_facelets(apply("D R U2 F'"))
    assert tb.moves == 4 and tb.calls[0].actions == ["R", "U", "U", "F'"]


def test_bad_notation_applies_nothing() -> None:
    tb = toolbox()
    before = tb.core.facelets
    result = tb.call("move", ["R U Q"])
    assert result.startswith("Error: unknown move 'Q' at position 4")
    assert tb.core.facelets == before and tb.moves == 0 and tb.calls[0].error


def test_unknown_tool_and_bad_arguments_are_errors_not_exceptions() -> None:
    tb = toolbox()
    assert tb.call("solve", ["UUU"]).startswith("Error: unknown tool 'solve'")
    assert tb.call("move", []).startswith("Error: bad arguments for move")
    assert tb.call("move", [""]).startswith("Error: move() needs at least one move")
    assert tb.call("move", [42]).startswith("Error: moves must be given as a string")
    with pytest.raises(ToolError):
        tb.invoke("rotate", ["y"])  # no view actions on the symbolic tier


def test_slice_and_wide_turns_in_view_tiers() -> None:
    tb = toolbox("face", scramble="R U F")
    tb.call("move", ["M' r2 E S' Rw' f"])
    expected = apply("R U F M' r2 E S' Rw' f")
    assert tb.core.facelets == to_facelets(expected)
    sym = toolbox("symbolic")
    assert "need view rotations" in sym.call("move", ["M"])


def test_solving_stops_a_sequence_early() -> None:
    tb = toolbox(scramble="R")
    result = tb.call("move", ["R' U U'"])
    assert "Stopped after 1 of 3: the cube is solved." in result
    assert tb.terminated and tb.over


def test_standard_solver_reports_validation_errors() -> None:
    tb = toolbox(setting="standard")
    assert tb.call("solve", ["U" * 54]).startswith("Error: invalid cube: each of the six letters")
    solution = tb.call("solve", [tb.core.facelets])
    tb.call("move", [solution])
    assert tb.terminated


def test_ideal_solver_needs_exploration_under_partial_views() -> None:
    tb = toolbox("face", "ideal", scramble="R U F")
    assert "5 face(s) are still unseen" in tb.call("solve_current")
    for view in ("y", "y", "y", "x", "x2"):  # one look a step: each view is shown at the next step's start
        tb.call("rotate", [view])
        tb.show()
    solution = tb.call("solve_current")
    assert not solution.startswith("Error")
    tb.call("move", ["U"])  # a face turn changes faces out of view
    assert "6 face(s) are still unseen" in tb.call("solve_current")
    tb.show()
    assert "5 face(s) are still unseen" in tb.call("solve_current")
    vertex = toolbox("vertex", "ideal", scramble="R U F")
    assert "3 face(s) are still unseen" in vertex.call("solve_current")
    vertex.call("rotate", [tier_spec("vertex").looks[0]])
    vertex.show()
    assert not vertex.call("solve_current").startswith("Error")


@pytest.mark.parametrize("tier,views", [("vertex", "x z2"), ("vertex", "x x z2"), ("face", "y y y x x2")])
def test_views_passed_inside_one_step_are_not_seen(tier: str, views: str) -> None:
    """A blind rotation sequence sweeps every face past the view within one step, but the agent is shown only
    where it ends: the ideal solver still refuses (a model must look, not recite a sweep)."""
    tb = toolbox(tier, "ideal", scramble="R U F")
    shown_at_start = len(tb._visible())
    tb.call("rotate", [views])
    assert f"{6 - shown_at_start} face(s) are still unseen" in tb.call("solve_current")


@pytest.mark.parametrize("tier", ["symbolic", "face"])
def test_dense_reward_is_reported_to_the_agent(tier: str) -> None:
    tb = toolbox(tier, scramble="R", reward="sticker")
    assert tb.call("move", ["R'"]).endswith("Reward +12.")
    assert not toolbox(tier, scramble="R").call("move", ["R'"]).endswith("Reward +12.")


class Exploding:
    name = "exploding"

    def reset(self, task) -> None:
        pass

    def act(self, observation, tools) -> Turn:
        tools.call("move", ["U"])
        raise RuntimeError("model fell over")


def test_agent_failures_are_recorded_not_raised() -> None:
    record = run_episode(Exploding(), make("symbolic"), reset_options={"scramble": "R"}, distance_budget_s=None)
    assert record.status == "error" and record.n_steps == 3 and record.errors == 3
    assert all("model fell over" in s.error for s in record.steps)
    assert all(s.tool_calls[0].actions == ["U"] for s in record.steps)  # the moves made are kept


class Interrupting:
    name = "interrupting"

    def reset(self, task) -> None:
        pass

    def act(self, observation, tools) -> Turn:
        if observation.step == 2:
            raise KeyboardInterrupt
        tools.call("move", ["U"])
        return Turn(action='move("U")')


def test_keyboard_interrupt_propagates_after_finished_steps_are_seen() -> None:
    seen = []
    with pytest.raises(KeyboardInterrupt):
        run_episode(Interrupting(), make("symbolic"), on_step=seen.append, distance_budget_s=None,
                    reset_options={"scramble": "R"})  # two U turns cannot solve it
    assert [s.index for s in seen] == [0, 1]


@pytest.mark.parametrize("tier", list(cubebench.TIERS))
@pytest.mark.parametrize("setting", ["basic", "standard", "ideal"])
def test_solver_agent_solves_every_tier_and_setting(tier: str, setting: str) -> None:
    for seed in range(3):
        record = run_episode(SolverAgent(), make(tier), tool_setting=setting, seed=seed,
                             reset_options={"depth": 8}, distance_budget_s=None)
        assert record.status == "solved", (tier, setting, [s.action for s in record.steps])


def test_records_round_trip_and_hold_what_was_shown() -> None:
    record = run_episode(RandomAgent(seed=1), make("visual"), seed=3, reset_options={"depth": 4},
                         distance_budget_s=None)
    assert record.n_steps == 20 and not record.solved
    assert all(s.observation_png_b64 for s in record.steps)
    assert len({s.observation_sha256 for s in record.steps}) > 1
    again = EpisodeRecord.from_dict(record.to_dict())
    assert again == record


def test_no_ground_truth_reaches_partial_tier_observations() -> None:
    for tier in ("visual", "face", "vertex"):
        record = run_episode(RandomAgent(seed=0), make(tier, obs_format="text"), seed=5,
                             reset_options={"depth": 6}, distance_budget_s=None)
        facelets = {record.start_facelets, record.end_facelets}
        for step in record.steps:
            assert not any(f in step.observation_text for f in facelets)


class Recorder:
    """Shows what run_episode shows an agent; turns U each step."""

    name = "recorder"

    def __init__(self) -> None:
        self.seen = []

    def reset(self, task) -> None:
        self.task = task

    def act(self, observation, tools) -> Turn:
        self.seen.append(observation)
        tools.call("move", ["U"])
        return Turn(action='move("U")')


@pytest.mark.parametrize("obs_format", [None, "onehot", "indices"])
def test_symbolic_arrays_are_shown_as_their_facelet_text(obs_format) -> None:
    env = gym.make(cubebench.TIERS["symbolic"], max_steps=None, **({"obs_format": obs_format} if obs_format else {}))
    agent = Recorder()
    record = run_episode(agent, env, reset_options={"scramble": "R F"}, max_steps=2, distance_budget_s=None)
    first, second = agent.seen
    assert first.text.endswith(to_facelets(apply("R F")))  # what the observation holds: the state, as text
    assert second.text.endswith(to_facelets(apply("R F U")))  # the observation after the step, not a stale one
    assert np.asarray(first.raw).shape == ((54,) if obs_format == "indices" else (54, 6))  # RL policies read raw
    assert record.steps[0].observation_text == first.text


def test_symbolic_arrays_use_the_envs_own_letters() -> None:
    env = gym.make(cubebench.TIERS["symbolic"], max_steps=None, obs_format="indices", letters="colours")
    agent = Recorder()
    run_episode(agent, env, reset_options={"scramble": "R"}, max_steps=1, distance_budget_s=None)
    shown = agent.seen[0].text.splitlines()[-1]
    assert len(shown) == 54 and set(shown) == set("WRGYOB") and shown[4] == "W"


def test_an_observation_no_model_can_be_shown_is_refused() -> None:
    onehot = gym.make(cubebench.TIERS["symbolic"], max_steps=None)
    as_face = replace(describe_env(onehot), tier="face")  # a description that lies: a state array is no face view
    with pytest.raises(ValueError, match="cannot show a face observation of type ndarray"):
        run_episode(Recorder(), onehot, description=as_face, reset_options={"scramble": "R"}, distance_budget_s=None)
    odd = gym.wrappers.TransformObservation(gym.make(cubebench.TIERS["symbolic"], max_steps=None),
                                            lambda o: np.zeros(3, dtype=np.float32),
                                            gym.spaces.Box(0, 1, (3,), np.float32))
    with pytest.raises(EnvDescriptionError, match="changes the observation"):
        run_episode(Recorder(), odd, reset_options={"scramble": "R"}, distance_budget_s=None)


class Babbling:
    """A model that never writes a usable action: every step a malformed reply."""

    name = "babbling"

    def reset(self, task) -> None:
        pass

    def act(self, observation, tools) -> Turn:
        return Turn(reply="la la la", parse_error="no 'Action:' line found in your reply")


def test_malformed_replies_count_as_steps_not_as_errors() -> None:
    record = run_episode(Babbling(), make("symbolic"), reset_options={"scramble": "R"}, distance_budget_s=None)
    assert record.n_steps == 20 and record.status == "failed"
    assert record.errors == 0 and record.parse_errors == 20
    assert all(s.reply == "la la la" and s.error is None for s in record.steps)
    assert all(s.observation_text.startswith("Error: no 'Action:' line") for s in record.steps[1:])
    assert EpisodeRecord.from_dict(record.to_dict()) == record


@pytest.mark.parametrize("tier", list(cubebench.TIERS))
def test_greedy_agent_plays_every_tier(tier: str) -> None:
    for seed in range(3):
        record = run_episode(GreedyAgent(seed=seed), make(tier), seed=seed, reset_options={"depth": 2},
                             distance_budget_s=None)
        assert record.status == "solved" and record.n_rotations == 0, (tier, seed)
        assert all(s.action.startswith("move(") for s in record.steps)


class _AntiSticker(PotentialReward):
    """A dense reward that pays for scrambling: phi = minus the stickers in place."""

    name = "anti-sticker"

    def phi(self, state: np.ndarray) -> float:
        return -float(kernels.stickers_in_place(state))


def test_greedy_agent_plans_on_stickers_whatever_the_env_rewards() -> None:
    # docs/agents.md: it scores moves on its own sticker count, never on the env's reward, even with
    # the reward wrapper outermost (where ``env.phi`` is reachable); a greedy on this reward would scramble
    for seed in range(3):
        plain = run_episode(GreedyAgent(seed=seed), make("symbolic"), seed=seed, reset_options={"depth": 2},
                            distance_budget_s=None)
        paid = run_episode(GreedyAgent(seed=seed), _AntiSticker(make("symbolic")), seed=seed,
                           reset_options={"depth": 2}, distance_budget_s=None)
        assert [s.action for s in paid.steps] == [s.action for s in plain.steps], seed
        assert paid.start_facelets == plain.start_facelets and paid.solved and paid.total_reward < 0


def test_scripted_agents_follow_the_protocol() -> None:
    for cls in (RandomAgent, GreedyAgent, SolverAgent):
        assert isinstance(cls(), Agent)
    wins = sum(run_episode(GreedyAgent(seed=s), make("symbolic"), seed=s, reset_options={"depth": 2},
                           distance_budget_s=None).solved for s in range(10))
    assert wins == 10
    assert np.array_equal(SOLVED, np.arange(54))


class Refusing:
    name = "refusing"

    def reset(self, task) -> None:
        raise ValueError(f"cannot play the {task.tier} tier")

    def act(self, observation, tools) -> Turn:  # pragma: no cover - never reached
        raise AssertionError


def test_an_agent_that_fails_to_reset_gives_an_error_record() -> None:
    record = run_episode(Refusing(), make("face"), reset_options={"scramble": "R"}, distance_budget_s=None)
    assert record.status == "error" and record.n_steps == 0 and not record.solved
    assert "cannot play the face tier" in record.config["reset_error"]


@pytest.mark.parametrize("tier", ["symbolic", "face"])
def test_the_prober_follows_a_dense_reward_blind_and_stays_in_the_budget(tier: str) -> None:
    """It solves a short scramble with the heuristic reward, not without a dense reward."""
    results = {}
    for reward in ("heuristic", "none"):
        env = gym.make(cubebench.TIERS[tier], reward=reward, max_steps=None, obs_format="text")
        record = run_episode(ProberAgent(seed=3), env, reset_options={"scramble": "R U"}, distance_budget_s=None)
        results[reward] = record
        assert record.n_moves <= record.config["env"]["max_moves"] and record.n_rotations == 0
    assert results["heuristic"].solved and results["heuristic"].n_steps == 2
    assert not results["none"].solved and results["none"].steps[-1].action.endswith("none paid: done()")
    assert results["none"].n_moves == 24  # every turn tried and undone once


def test_the_prober_never_looks_at_the_observation() -> None:
    class Blindfold:
        def __getattr__(self, name):
            raise AssertionError(f"the prober read observation.{name}")

    env = gym.make(cubebench.TIERS["symbolic"], reward="sticker", max_steps=None)
    obs, info = env.reset(options={"scramble": "R U"})
    agent, tools = ProberAgent(seed=0), Toolbox(env, "symbolic", "basic", obs, info)
    agent.reset(type("T", (), {"action_names": env.unwrapped.action_names})())
    agent.act(Blindfold(), tools)
    assert tools.moves >= 1
