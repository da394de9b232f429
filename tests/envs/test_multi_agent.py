"""The multi-agent envs (cubebench.envs.multi) and their scripted teams (cubebench.agents.teams).

PettingZoo's own API, parallel-API, seed and max-cycles tests on every env; then what the
envs promise beyond the API: the actor hears messages and counters and nothing else, no seat's
``info`` carries the state, the perfect team solves the shipped certified instances and the
silent team does not, the two-camera conflict rule, the channel's bounds, and the zero-sum
scrambler-solver rewards against exact distances.
"""

from __future__ import annotations

import subprocess
import sys
import warnings
from functools import partial
from typing import Any

import numpy as np
import pytest

from helpers import extra_reason

pytest.importorskip("pettingzoo", reason=extra_reason("pettingzoo"))

from pettingzoo.test import api_test, max_cycles_test, parallel_api_test, parallel_seed_test, seed_test  # noqa: E402

from cubebench.agents.teams import perfect_team, play_team, random_team, silent_team  # noqa: E402
from cubebench.engine import FACES, SOLVED_FACELETS  # noqa: E402
from cubebench.engine.state import from_colour_indices  # noqa: E402
from cubebench.envs.multi import MULTI_ENVS, make_multi_env, observer_actor, scrambler_solver, two_cameras  # noqa: E402
from cubebench.envs.multi.channel import CHARSET  # noqa: E402
from cubebench.generators import NoInstanceSetError, shipped_instances  # noqa: E402
from cubebench.solver.oracle import oracle  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")  # api_test's advice (Dict observations, ...)

CASES = [
    (observer_actor, {"tier": "symbolic"}),
    (observer_actor, {"tier": "visual", "form": "text"}),
    (observer_actor, {"tier": "face", "image_size": 64}),
    (observer_actor, {"tier": "vertex", "form": "text", "metric": "half"}),
    (two_cameras, {"image_size": 64}),
    (two_cameras, {"form": "text", "metric": "half"}),
    (scrambler_solver, {"scramble_moves": 3, "max_moves": 6}),
    (scrambler_solver, {"tier": "vertex", "form": "text", "scramble_moves": 2, "max_moves": 4}),
]
IDS = [f"{m.__name__.rsplit('.', 1)[1]}-{'-'.join(map(str, kw.values()))}" for m, kw in CASES]
PUBLIC = {"cycle", "moves", "depth", "is_success", "refused", "message_note", "conflict", "phase", "outcome"}
"""Every key a seat's ``info`` may hold (the scrambler also gets ``distance`` at the end)."""


# --- PettingZoo's own tests ---------------------------------------------------------------------


@pytest.mark.parametrize("module,kwargs", CASES, ids=IDS)
def test_pettingzoo_api_tests_pass(module: Any, kwargs: dict[str, Any]) -> None:
    api_test(module.env(**kwargs), num_cycles=25)
    parallel_api_test(module.parallel_env(**kwargs), num_cycles=25)


@pytest.mark.parametrize("module,kwargs", CASES, ids=IDS)
def test_pettingzoo_seed_tests_pass(module: Any, kwargs: dict[str, Any]) -> None:
    seed_test(partial(module.env, **kwargs), num_cycles=25)
    parallel_seed_test(partial(module.parallel_env, **kwargs), num_cycles=25)


@pytest.mark.parametrize("module", list(MULTI_ENVS.values()), ids=list(MULTI_ENVS))
def test_pettingzoo_max_cycles_test_passes(module: Any) -> None:
    max_cycles_test(module)


def test_registered_names_build_both_forms() -> None:
    assert set(MULTI_ENVS) == {"CubeBench-ObserverActor-v0", "CubeBench-TwoCameras-v0", "CubeBench-ScramblerSolver-v0"}
    for name in MULTI_ENVS:
        aec, par = make_multi_env(name), make_multi_env(name, parallel=True)
        assert hasattr(aec, "agent_iter") and not hasattr(par, "agent_iter")
        assert aec.possible_agents == par.possible_agents
    with pytest.raises(ValueError, match="unknown multi-agent env"):
        make_multi_env("CubeBench-Nope-v0")


def test_the_same_seed_draws_the_same_certified_start() -> None:
    a, b = observer_actor.raw_env(), observer_actor.raw_env()
    a.reset(seed=7)
    b.reset(seed=7)
    assert a.instance is not None and b.instance is not None
    assert np.array_equal(a.instance.state, b.instance.state) and a.instance.distance == a.instance.depth == 8


# --- who sees what --------------------------------------------------------------------------------


def _scripted_actor_episode(instance: int) -> list[tuple[Any, dict[str, Any]]]:
    """What the actor observes over an episode where the observer says a fixed sentence and the actor turns
    through its actions in a fixed order: the same whatever the cube is, if the actor sees only messages."""
    env = observer_actor.env(tier="symbolic", max_cycles=30)
    env.reset(seed=0, options={"instance": instance})
    seen = []
    for step, agent in enumerate(env.agent_iter()):
        obs, _, terminated, truncated, info = env.last()
        if agent == observer_actor.ACTOR:
            seen.append((obs, info))
        if terminated or truncated:
            env.step(None)
        elif agent == observer_actor.OBSERVER:
            env.step("turn the red face" if step == 0 else 0)
        else:
            env.step(2 + step % 12)
    return seen


def test_the_actor_hears_messages_and_counters_and_nothing_else() -> None:
    first, second = _scripted_actor_episode(0), _scripted_actor_episode(1)
    assert first == second  # two different cubes, identical observations and infos for the actor
    for obs, info in first:
        assert set(obs) == {"message", "received", "moves_left", "messages_left", "cycles_left"}
        assert obs["message"] in ("", "turn the red face")
        assert all(isinstance(obs[k], int) for k in obs if k != "message")
        assert set(info) <= PUBLIC


def _infos_of(env: Any, team: dict[str, Any], seed: int) -> list[tuple[str, dict[str, Any]]]:
    """Every (seat, info) a team's episode shows, from the AEC form."""
    env.reset(seed=seed)
    for seat in team.values():
        seat.reset()
    seen = []
    for agent in env.agent_iter():
        obs, _, terminated, truncated, info = env.last()
        seen.append((agent, info))
        env.step(None if terminated or truncated else team[agent].act(obs, info))
    return seen


@pytest.mark.parametrize("name", list(MULTI_ENVS))
@pytest.mark.parametrize("team", ["perfect", "random"])
def test_no_seat_info_holds_the_state(name: str, team: str) -> None:
    kwargs = {"tier": "face", "form": "text"} if "TwoCameras" not in name else {"form": "text"}
    env = make_multi_env(name, **kwargs)
    seats = perfect_team(env) if team == "perfect" else random_team(env, seed=3)
    for agent, info in _infos_of(env, seats, seed=3):
        allowed = PUBLIC | ({"distance"} if agent == scrambler_solver.SCRAMBLER and "outcome" in info else set())
        assert set(info) <= allowed, (agent, info)
        for value in info.values():
            assert not isinstance(value, np.ndarray)
            assert not (isinstance(value, str) and len(value) >= 54), (agent, value)


def test_the_solver_sees_a_blank_view_while_the_scrambler_works() -> None:
    env = scrambler_solver.parallel_env(tier="symbolic", form="text", scramble_moves=4)
    obs, _ = env.reset(seed=0)
    blank = env.seat_view(scrambler_solver.SOLVER).hidden()
    views = []
    while obs[scrambler_solver.SOLVER]["phase"] == scrambler_solver.SCRAMBLE:
        views.append(obs[scrambler_solver.SOLVER]["view"])
        assert obs[scrambler_solver.SOLVER]["action_mask"].tolist() == [1] + [0] * 12
        obs, *_ = env.step({scrambler_solver.SCRAMBLER: 1 + len(views) % 12, scrambler_solver.SOLVER: 0})
    assert views == [blank] * 4 and obs[scrambler_solver.SOLVER]["view"] != blank


def test_the_two_cameras_see_opposite_halves_of_the_cube() -> None:
    env = two_cameras.parallel_env(form="text")
    obs, _ = env.reset(seed=0)
    centre = {s: [obs[s]["view"].splitlines()[k][2] for k in (2, 6, 10)] for s in two_cameras.SEATS}
    assert centre == {"camera_0": ["W", "G", "R"], "camera_1": ["Y", "O", "B"]}  # U F R; D L B


# --- calibration teams ----------------------------------------------------------------------------

SHIPPED = [(metric, depth) for metric in ("quarter", "half") for depth in (3, 8)]


@pytest.mark.parametrize("metric,depth", SHIPPED)
def test_the_perfect_team_solves_every_shipped_instance_on_the_symbolic_tier(metric: str, depth: int) -> None:
    env = observer_actor.env(tier="symbolic", form="text", metric=metric, depth=depth)
    team = perfect_team(env)
    for k in range(len(shipped_instances(metric, depth))):
        outcome = play_team(env, team, seed=k, options={"instance": k})
        assert outcome.solved and outcome.messages == 1 and outcome.returns == {"observer_0": 1.0, "actor_0": 1.0}


@pytest.mark.parametrize("metric,depth", SHIPPED)
@pytest.mark.parametrize("tier,form", [("visual", "image"), ("face", "image"), ("face", "text"), ("vertex", "image"),
                                       ("vertex", "text")])
def test_the_perfect_team_solves_and_the_silent_one_does_not(metric: str, depth: int, tier: str, form: str) -> None:
    env = observer_actor.env(tier=tier, form=form, metric=metric, depth=depth, image_size=96)
    for k in range(3):
        assert play_team(env, perfect_team(env), seed=k, options={"instance": k}).solved
        silent = play_team(env, silent_team(env, seed=k), seed=k, options={"instance": k})
        assert not silent.solved and silent.messages == 0 and silent.moves == 40  # it turned blind to the end


@pytest.mark.parametrize("form", ["image", "text"])
def test_two_cameras_perfect_team_solves_and_silent_does_not(form: str) -> None:
    for parallel in (False, True):
        env = make_multi_env("CubeBench-TwoCameras-v0", parallel=parallel, form=form, image_size=96)
        for k in range(3):
            outcome = play_team(env, perfect_team(env), seed=k, options={"instance": k})
            assert outcome.solved and outcome.messages == 1
            assert not play_team(env, silent_team(env, seed=k), seed=k, options={"instance": k}).solved


def test_the_perfect_team_also_plays_the_parallel_observer_actor() -> None:
    env = observer_actor.parallel_env(tier="vertex", image_size=96)
    outcome = play_team(env, perfect_team(env), seed=1, options={"instance": 1})
    assert outcome.solved and outcome.returns == {"observer_0": 1.0, "actor_0": 1.0}


def test_the_actor_ignores_a_message_that_is_not_a_cube() -> None:
    env = observer_actor.raw_env()
    env.reset(seed=0, options={"instance": 0})
    actor = perfect_team(env)["actor_0"]
    actor.reset()
    env.step({"action": 1, "message": SOLVED_FACELETS[::-1][:53] + "X"})
    assert actor.act(env.observe("actor_0"), {}) == {"action": 0, "message": ""}


# --- rules: conflicts, channel bounds, bad actions ---------------------------------------------------


def test_conflicting_turns_cancel_and_agreeing_turns_apply_once() -> None:
    env = two_cameras.parallel_env(form="text")
    env.reset(seed=0)
    names = env.action_names("camera_0")
    r, r_prime = names.index("R"), names.index("R'")
    before = env.state()
    _, _, _, _, infos = env.step({"camera_0": r, "camera_1": r_prime})
    assert np.array_equal(env.state(), before) and infos["camera_0"]["conflict"] and infos["camera_1"]["moves"] == 0
    _, _, _, _, infos = env.step({"camera_0": r, "camera_1": r})
    assert not infos["camera_0"]["conflict"] and infos["camera_0"]["moves"] == 1
    _, _, _, _, infos = env.step({"camera_0": {"action": 1, "message": "hi"}, "camera_1": r_prime})
    assert infos["camera_0"]["moves"] == 2 and np.array_equal(env.state(), before)


def test_the_channel_cuts_cleans_and_counts_messages() -> None:
    env = observer_actor.raw_env(max_messages=2, max_message_chars=10)
    env.reset(seed=0)
    env.step({"action": 1, "message": "héllo\x00 world, and more"})
    obs = env.observe("actor_0")
    assert obs["message"] == "h?llo? wor" and obs["received"] == 1 and env.infos["observer_0"]["message_note"]
    assert env.observation_space("actor_0").contains(obs) and set(obs["message"]) <= set(CHARSET)
    env.step(0)
    env.step("second")
    env.step(0)
    env.step("third")  # past max_messages: refused, not delivered
    assert env.observe("actor_0")["message"] == "second" and "message budget" in env.infos["observer_0"]["refused"]
    assert env.observe("observer_0")["messages_left"] == 0


def test_bad_actions_and_configs_raise_with_a_message() -> None:
    env = observer_actor.raw_env()
    env.reset(seed=0)
    with pytest.raises(ValueError, match="not in 0"):
        env.step(99)
    with pytest.raises(ValueError, match="must be a str"):
        env.step({"action": 1, "message": 5})
    with pytest.raises(ValueError, match="a seat's action"):
        env.step(2.5)
    for kwargs in ({"tier": "hologram"}, {"tier": "face", "form": "onehot"}, {"max_messages": -1},
                   {"max_cycles": 0}, {"render_mode": "human"}, {"image_size": 8}):
        with pytest.raises(ValueError):
            observer_actor.raw_env(**kwargs)
    with pytest.warns(UserWarning, match="not read"):
        env.reset(seed=0, options={"depht": 3})


# --- the zero-sum game --------------------------------------------------------------------------------


def _play_game(env: Any, scramble: list[str] | None, seed: int) -> tuple[list[dict[str, float]], int, dict]:
    """Play one game (the scrambler's turns given or random, the solver random); the rewards of every step,
    the exact distance of the scrambled position (computed here) and the last infos."""
    obs, infos = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    names = env.action_names(scrambler_solver.SCRAMBLER)
    steps, distance = [], -1
    while env.agents:
        if obs[scrambler_solver.SCRAMBLER]["phase"] == scrambler_solver.SOLVE and distance < 0:
            distance = oracle(env.cube.metric).distance(from_colour_indices(env.state()))
        turn = names.index(scramble[len(steps)]) if scramble and len(steps) < len(scramble) else 0
        mask = obs[scrambler_solver.SOLVER]["action_mask"]
        actions = {scrambler_solver.SCRAMBLER: turn or int(rng.integers(1, len(names))),
                   scrambler_solver.SOLVER: int(rng.choice(np.flatnonzero(mask)))}
        obs, rewards, _, _, infos = env.step(actions)
        steps.append(rewards)
    return steps, distance, infos


@pytest.mark.parametrize("metric", ["quarter", "half"])
def test_scrambler_solver_rewards_are_zero_sum_and_follow_the_exact_distance(metric: str) -> None:
    env = scrambler_solver.parallel_env(scramble_moves=5, max_moves=6, metric=metric)
    for seed in range(4):
        steps, distance, infos = _play_game(env, None, seed)
        assert all(sum(r.values()) == 0 for r in steps)
        total = sum(r[scrambler_solver.SCRAMBLER] for r in steps)
        solved = infos[scrambler_solver.SOLVER]["outcome"] == "solved"
        assert infos[scrambler_solver.SCRAMBLER]["distance"] == distance <= 5
        assert total == pytest.approx(distance / 5 + (-1 if solved else 1))


def test_the_reward_counts_the_distance_reached_not_the_scramble_length() -> None:
    env = scrambler_solver.parallel_env(scramble_moves=3, max_moves=4)
    _, distance, infos = _play_game(env, ["R", "R", "R"], 0)  # three quarter turns of R: one R' away
    assert distance == infos[scrambler_solver.SCRAMBLER]["distance"] == 1
    steps, _, infos = _play_game(scrambler_solver.parallel_env(scramble_moves=2), ["U", "U'"], 0)
    assert infos[scrambler_solver.SOLVER]["outcome"] == "solved" and len(steps) == 2  # back to solved: solver wins
    assert steps[-1] == {scrambler_solver.SCRAMBLER: -1.0, scrambler_solver.SOLVER: 1.0}


def test_the_perfect_solver_beats_the_greedy_scrambler_and_the_curriculum_keeps_the_positions() -> None:
    curriculum = scrambler_solver.SelfPlayCurriculum()
    for tier in ("symbolic", "face"):
        env = scrambler_solver.parallel_env(tier=tier, scramble_moves=6, curriculum=curriculum, image_size=64)
        outcome = play_team(env, perfect_team(env), seed=0)
        assert outcome.solved and outcome.infos[scrambler_solver.SCRAMBLER]["distance"] == 6  # greedy: no wasted turn
        assert outcome.returns[scrambler_solver.SCRAMBLER] == 0.0  # 6/6 - 1
    random_env = scrambler_solver.parallel_env(scramble_moves=6, curriculum=curriculum)
    for seed in range(3):
        play_team(random_env, random_team(random_env, seed=seed), seed=seed)
    counts = curriculum.counts("quarter")
    assert counts[6] >= 1 and sum(counts.values()) == len(curriculum) and curriculum.hardest() == 6
    with pytest.raises(NoInstanceSetError, match="no quarter-turn position at distance 11"):
        curriculum(11, "quarter", np.random.default_rng(0))
    game = observer_actor.env(tier="symbolic", depth=6, generator=curriculum)
    outcome = play_team(game, perfect_team(game), seed=0)
    assert outcome.solved and game.unwrapped.instance.distance == 6


# --- render, and the optional extra -------------------------------------------------------------------


@pytest.mark.parametrize("name", list(MULTI_ENVS))
def test_render_draws_every_seat(name: str) -> None:
    picture = make_multi_env(name, render_mode="rgb_array", image_size=64)
    picture.reset(seed=0)
    image = picture.render()
    assert image.dtype == np.uint8 and image.ndim == 3 and image.shape[1] >= 2 * 64
    text = make_multi_env(name, render_mode="ansi")
    text.reset(seed=0)
    rendered = text.render()
    assert isinstance(rendered, str) and all(seat in rendered for seat in text.possible_agents if seat != "solver_0")
    assert sum(rendered.count(face + " ") for face in FACES) >= 54
    none = make_multi_env(name)
    none.reset(seed=0)
    assert none.render() is None
    none.close()
    none.close()


def test_cubebench_and_the_teams_import_without_pettingzoo() -> None:
    code = ("import sys; sys.modules['pettingzoo'] = None\n"
            "import cubebench, cubebench.envs, cubebench.agents.teams\n"
            "try:\n    import cubebench.envs.multi\nexcept ModuleNotFoundError as err:\n"
            "    assert err.name == 'pettingzoo' and 'pip install -e \".[multi]\"' in str(err), err\nelse:\n    raise SystemExit(1)\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]


def test_a_plain_reset_warns_about_nothing() -> None:
    """The envs warn only about reset options they do not read (PettingZoo's api_test passes one)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for name in MULTI_ENVS:
            env = make_multi_env(name)
            env.reset(seed=0)
    assert not caught
