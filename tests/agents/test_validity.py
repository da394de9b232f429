"""A pass must mean the agent reasoned: the tricks a clever model would try, played for real.

Each program below is what a model could send as one CodeAct block, run
through the real path (the openai client, a loopback scripted server, the
sandbox, the tools, the env): blind enumeration of short move sequences and
trial-and-error on the dense heuristic reward.  With the episode's default
move budget none of them solves a certified instance; each test also shows
the same program *does* solve with the budget lifted, so it can fail.
"""

from __future__ import annotations

import gymnasium as gym
import pytest

import cubebench
from cubebench.agents.codeact import CodeActAgent
from cubebench.agents.episode import run_episode
from cubebench.agents.llm import OpenAIChatClient, RetryPolicy
from cubebench.agents.llm.testing import ScriptedServer
from cubebench.agents.sandbox import SandboxLimits
from cubebench.budgets import DEFAULT_MAX_MOVES, DEFAULT_MAX_ROTATIONS, move_budget
from helpers import needs

OPENAI = needs("openai")
FAST = RetryPolicy(max_attempts=2, base_delay_s=0.001, max_delay_s=0.01)
TEXT_FORM = {"symbolic": "text", "visual": "text", "face": "text", "vertex": "text"}
"""Text observations: the tricks never look at the cube, and text keeps hundreds of steps cheap."""

PRELUDE = '''
import itertools, re
names = ["U", "U'", "D", "D'", "L", "L'", "R", "R'", "F", "F'", "B", "B'"]
inv = {n: n[0] if n.endswith("'") else n + "'" for n in names}
def seqs(longest):
    for n in range(1, longest + 1):
        for s in itertools.product(names, repeat=n):
            yield list(s) + [inv[m] for m in reversed(s)]
def finished(r):
    return "solved" in r or "over" in r
'''

ENUMERATIONS = {
    # every sequence in one move() call (what the issue found: 7,791 moves, one step)
    "one call": '''
try:
    print(move(" ".join(m for s in seqs({n}) for m in s)))
except Exception as e:
    print("refused:", e)
''',
    # the same, cut into calls under the argument cap
    "chunks": '''
chunk, r = [], ""
for s in seqs({n}):
    chunk += s
    if len(chunk) > 600:
        r = move(" ".join(chunk)); chunk = []
        if finished(r): break
print(r)
''',
    # one move() per sequence
    "loop": '''
r = ""
for s in seqs({n}):
    r = move(" ".join(s))
    if finished(r): break
print(r)
''',
}

GREEDY_PROBE = '''
r = ""
for _ in range(80):
    better = False
    for m in names:
        r = move(m)
        if finished(r): break
        gain = re.search(r"Reward ([-+][0-9.e]+)", r)
        if gain and float(gain.group(1)) > 0:
            better = True
            break
        r = move(inv[m])
        if finished(r): break
    if finished(r) or not better:
        break
print(r)
'''


def play_program(tier: str, depth: int, instance: int, program: str, reward: str = "none",
                 max_moves: int | None = None):
    """One episode whose only action is ``program`` (then ``done()``) on a certified instance."""
    env = gym.make(cubebench.TIERS[tier], depth=depth, reward=reward, max_steps=None, obs_format=TEXT_FORM[tier],
                   max_moves=max_moves)
    block = f"Thought: no need to look.\n```python\n{PRELUDE}\n{program}\n```"
    with ScriptedServer([block], default="```python\ndone()\n```") as srv:
        client = OpenAIChatClient("scripted", base_url=srv.base_url, api_key="x", retry=FAST)
        agent = CodeActAgent(client, limits=SandboxLimits(wall_seconds=60, cpu_seconds=30))
        try:
            return run_episode(agent, env, reset_options={"instance": instance}, max_steps=2, distance_budget_s=None)
        finally:
            agent.close()
            env.close()


@OPENAI
@pytest.mark.parametrize("form", list(ENUMERATIONS))
@pytest.mark.parametrize("tier", list(cubebench.TIERS))
@pytest.mark.parametrize("depth", [3, 4])
def test_blind_enumeration_solves_nothing(tier: str, depth: int, form: str) -> None:
    program = ENUMERATIONS[form].format(n=depth)
    for instance in range(3):
        record = play_program(tier, depth, instance, program)
        assert not record.solved, f"{form} enumeration solved {tier} d{depth} instance {instance} blind"
        assert record.n_moves <= move_budget(depth) == record.config["env"]["max_moves"]  # the depth's own (22, 40)


@OPENAI
@pytest.mark.slow
@pytest.mark.parametrize("form", ["chunks", "loop"])
@pytest.mark.parametrize("tier", list(cubebench.TIERS))
@pytest.mark.parametrize("depth", [3, 4])
def test_blind_enumeration_solves_no_certified_instance(tier: str, depth: int, form: str) -> None:
    program = ENUMERATIONS[form].format(n=depth)
    solved = [k for k in range(20) if play_program(tier, depth, k, program).solved]
    assert solved == []


@OPENAI
@pytest.mark.parametrize("form", ["chunks", "loop"])
def test_enumeration_solves_blind_without_the_budget(form: str) -> None:
    """The control: lift the budget and the same program solves a certified depth-3 instance."""
    record = play_program("symbolic", 3, 0, ENUMERATIONS[form].format(n=3), max_moves=10**6)
    assert record.solved and record.n_moves > DEFAULT_MAX_MOVES["quarter"]


@OPENAI
@pytest.mark.parametrize("tier", [pytest.param(t, marks=[pytest.mark.slow] if i else []) for i, t in enumerate(cubebench.TIERS)])
def test_following_the_heuristic_reward_by_trial_fails_at_depth_8(tier: str) -> None:
    for instance in range(20):
        record = play_program(tier, 8, instance, GREEDY_PROBE, reward="heuristic")
        assert not record.solved, f"reward probing solved {tier} d8 instance {instance}"
        assert record.n_moves == DEFAULT_MAX_MOVES["quarter"]  # it spent the whole budget


@OPENAI
def test_reward_probing_solves_depth_8_without_the_budget() -> None:
    """The control: the probe does follow the heuristic reward to solved when moves are free."""
    record = play_program("symbolic", 8, 0, GREEDY_PROBE, reward="heuristic", max_moves=10**6)
    assert record.solved and record.n_moves > DEFAULT_MAX_MOVES["quarter"]


# --- the budget itself ----------------------------------------------------------------------------
def test_a_face_turn_past_the_budget_is_refused_and_ends_the_episode() -> None:
    env = gym.make(cubebench.TIERS["face"], max_steps=None, max_moves=2, max_rotations=1, obs_format="text")
    obs, info = env.reset(options={"scramble": "R U F"})
    assert (info["moves_left"], info["rotations_left"]) == (2, 1)
    y = env.unwrapped.action_names.index("y")
    obs1, _, _, trunc, _ = env.step(y)
    assert trunc is False
    obs2, r, term, trunc, info = env.step(y)  # the second rotation is refused, the episode goes on
    assert (obs2, r, term, trunc) == (obs1, 0.0, False, False)
    assert "rotation budget (1 view rotations)" in info["refused"] and info["steps"] == 1
    facelets = env.unwrapped.facelets
    assert env.step(0)[3] is False
    _, _, _, trunc, info = env.step(0)  # the turn that spends the budget unsolved truncates
    assert trunc and info["moves_left"] == 0 and "refused" not in info
    before = env.unwrapped.facelets
    _, r, term, trunc, info = env.step(2)
    assert (r, term, trunc) == (0.0, False, True) and "move budget (2 quarter turns)" in info["refused"]
    assert env.unwrapped.facelets == before != facelets and env.unwrapped.moves == 2
    assert env.step(y)[3] is True  # with no turn left, a refused rotation ends the episode too


def test_bad_budgets_are_refused() -> None:
    for bad in (0, -1, 2.5, True, "40"):
        with pytest.raises(ValueError, match=r"max_moves \(None or an int\) must be an int >= 1"):
            gym.make(cubebench.TIERS["symbolic"], max_moves=bad)
    with pytest.raises(ValueError, match="max_rotations"):
        gym.make(cubebench.TIERS["face"], max_rotations=-1)
    assert gym.make(cubebench.TIERS["face"], max_rotations=0).unwrapped.max_rotations == 0


def test_refused_actions_count_toward_the_step_limit() -> None:
    """An RL agent that keeps choosing a refused rotation still reaches max_steps."""
    env = gym.make(cubebench.TIERS["face"], max_steps=20, max_rotations=0, obs_format="text")
    env.reset(options={"scramble": "R U"})
    y = env.unwrapped.action_names.index("y")
    for n in range(1, 21):
        _, _, _, truncated, info = env.step(y)
        assert "refused" in info and truncated == (n == 20)
    assert info["steps"] == 0


def test_run_episode_gives_an_unbudgeted_env_the_default_budget_and_says_so() -> None:
    from cubebench.agents.scripted import RandomAgent

    env = gym.make(cubebench.TIERS["vertex"], max_steps=None, obs_format="text")
    record = run_episode(RandomAgent(seed=0), env, reset_options={"scramble": "R U"}, distance_budget_s=None)
    assert record.config["env"]["max_moves"] == DEFAULT_MAX_MOVES["quarter"]
    assert record.config["env"]["max_rotations"] == DEFAULT_MAX_ROTATIONS
    half = gym.make(cubebench.TIERS["symbolic"], max_steps=None, metric="half", max_moves=7)
    record = run_episode(RandomAgent(seed=0), half, reset_options={"scramble": "R U"}, distance_budget_s=None)
    assert record.config["env"]["max_moves"] == 7 and record.config["env"]["max_rotations"] is None


def test_run_episode_leaves_the_env_it_is_given_as_it_was() -> None:
    """The default budget bounds the episode through its reset options: the env keeps no budget, and its
    next plain reset (an RL rollout after an evaluation) is unbounded again."""
    from cubebench.agents.scripted import RandomAgent

    env = gym.make(cubebench.TIERS["face"], max_steps=None, obs_format="text")
    record = run_episode(RandomAgent(seed=0), env, reset_options={"depth": 3}, distance_budget_s=None)
    assert record.config["env"]["max_moves"] == move_budget(3, "quarter")
    assert record.config["reset_options"] == {"depth": 3}
    assert env.unwrapped.own_budget == (None, None)
    _, info = env.reset(options={"depth": 3})
    assert env.unwrapped.max_moves is None and "moves_left" not in info and "rotations_left" not in info
    with pytest.raises(ValueError, match="max_moves"):
        env.reset(options={"max_moves": 0})


def test_tools_stop_a_sequence_at_the_budget_and_say_what_is_left() -> None:
    from cubebench.agents.tools import Toolbox

    env = gym.make(cubebench.TIERS["vertex"], max_steps=None, max_moves=5, max_rotations=2, obs_format="text")
    obs, info = env.reset(options={"scramble": "R U F"})
    tools = Toolbox(env, "vertex", "basic", obs, info)
    assert tools.call("move", ["U2"]).endswith("Left: 3 quarter turns and 2 view rotations.")
    text = tools.call("rotate", ["y x z"])
    assert "Stopped after 2 of 3: the rotation budget (2 view rotations) is used up." in text and not tools.over
    text = tools.call("move", ["R U R' U'"])
    assert "Executed R U R' (3 actions). Stopped after 3 of 4: the move budget (5 quarter turns) is used up." in text
    assert "The episode is over." in text and tools.over and (tools.moves, tools.rotations) == (5, 2)
    assert tools.call("move", ["R"]).startswith("Executed nothing. Stopped after 0 of 1")


def test_an_over_long_tool_argument_is_refused_on_the_host_before_parsing() -> None:
    """The issue's ``move('M2' * 500000)`` held a CodeAct block 77 s; now it is refused at once."""
    from cubebench.agents.tools import MAX_ARG_CHARS, ToolError, Toolbox

    env = gym.make(cubebench.TIERS["face"], max_steps=None, obs_format="text")
    obs, info = env.reset(options={"scramble": "R U F"})
    tools = Toolbox(env, "face", "basic", obs, info)
    for call in (lambda: tools.invoke("move", ["M2" * 500_000]), lambda: tools.invoke("move", [], {"seq": "R " * 5000}),
                 lambda: tools.invoke("rotate", ["y " * MAX_ARG_CHARS])):
        with pytest.raises(ToolError, match=f"argument too long: .* characters \\(at most {MAX_ARG_CHARS}\\)"):
            call()
    assert tools.moves == 0 and env.unwrapped.steps == 0


def test_a_slice_move_that_does_not_fit_the_budgets_is_not_half_done() -> None:
    from cubebench.agents.tools import Toolbox

    env = gym.make(cubebench.TIERS["face"], max_steps=None, max_moves=40, max_rotations=0, obs_format="text")
    obs, info = env.reset(options={"scramble": "R U F"})
    tools = Toolbox(env, "face", "basic", obs, info)
    before = env.unwrapped.facelets
    text = tools.call("move", ["U M"])  # M is R L' x': two turns and a rotation, and no rotation is left
    assert "Executed U (1 action). Stopped after 1 of 4: the rotation budget (0 view rotations) is used up." in text
    assert tools.moves == 1 and tools.rotations == 0 and env.unwrapped.facelets != before
    env2 = gym.make(cubebench.TIERS["symbolic"], max_steps=None, max_moves=2, obs_format="text")
    obs, info = env2.reset(options={"scramble": "R U F"})
    tools = Toolbox(env2, "symbolic", "basic", obs, info)
    text = tools.call("move", ["F' U2 R'"])  # U2 is two quarter turns and only one is left: refused whole
    assert "Executed F' (1 action). Stopped after 1 of 4: the next move needs 2 quarter turns and only 1 is left." in text
    assert tools.moves == 1 and not tools.over


@pytest.mark.parametrize("reward", ["sticker", "face", "heuristic"])
@pytest.mark.parametrize("tier", ["face", "vertex"])
def test_view_rotations_pay_no_reward(tier: str, reward: str) -> None:
    """A rotation changes no potential: looking around is never progress, and leaks nothing."""
    env = gym.make(cubebench.TIERS[tier], depth=8, reward=reward, max_steps=None, obs_format="text")
    env.reset(options={"instance": 0})
    views = range(env.unwrapped.n_turns, env.unwrapped.n_turns + 6)
    for _ in range(4):
        for a in views:
            assert env.step(a)[1] == 0.0
        env.step(0)


@OPENAI
def test_an_enumeration_that_fits_one_call_is_stopped_by_the_budget() -> None:
    """Every 2-move sequence, each undone (576 moves, under the argument cap), in one move() call."""
    program = ENUMERATIONS["one call"].format(n=2)
    for k in range(5):
        record = play_program("symbolic", 2, k, program)
        assert not record.solved and record.n_moves == move_budget(2) == 5  # depth 2's own budget
    control = [play_program("symbolic", 2, k, program, max_moves=10**6).solved for k in range(5)]
    assert all(control)
