"""The CodeAct agent: model code runs in the sandbox and reaches the cube only through tools."""

from __future__ import annotations

import re

import gymnasium as gym
import pytest

import cubebench
from cubebench.agents.codeact import CodeActAgent, extract_code
from cubebench.agents.episode import run_episode
from cubebench.agents.llm import OpenAIChatClient, RetryPolicy
from cubebench.agents.llm.testing import ScriptedServer
from cubebench.agents.sandbox import SandboxLimits
from cubebench.engine import SOLVED, to_facelets
from cubebench.tiers import TIER_SPECS
from helpers import needs

FAST = RetryPolicy(max_attempts=2, base_delay_s=0.001, max_delay_s=0.01)
OPENAI = needs("openai")
"""The episodes talk to the scripted server through the real openai client (the llm extra)."""


def play(script: list[str], setting: str = "basic", scramble: str = "R U", tier: str = "symbolic",
         default: str = "```python\ndone()\n```", env_kw: dict | None = None, **kw):
    env_kw = {**({"obs_format": "text"} if not TIER_SPECS[tier].pictured else {}), **(env_kw or {})}
    env = gym.make(cubebench.TIERS[tier], max_steps=None, **env_kw)
    with ScriptedServer(script, default=default) as srv:
        client = OpenAIChatClient("scripted", base_url=srv.base_url, api_key="x", retry=FAST)
        agent = CodeActAgent(client, limits=SandboxLimits(wall_seconds=3, cpu_seconds=2))
        try:
            record = run_episode(agent, env, tool_setting=setting, reset_options={"scramble": scramble},
                                 distance_budget_s=None, **kw)
        finally:
            agent.close()
        return record, srv.requests


def code(body: str) -> str:
    return f"Thought: act\n```python\n{body}\n```"


def test_extract_code_variants() -> None:
    assert extract_code("x\n```python\na = 1\n```\ny\n```py\nb = 2\n```") == "b = 2\n"
    assert extract_code("```\nprint(1)\n```") == "print(1)\n"
    assert extract_code("```python\nunfinished = True") == "unfinished = True"
    assert extract_code("no code here") is None


@OPENAI
def test_code_moves_the_cube_and_output_comes_back() -> None:
    record, requests = play([code("r = move(\"U'\")\nprint('first:', r)\nseq = \"R'\""), code("move(seq)")])
    assert record.status == "solved" and record.n_steps == 2 and record.n_moves == 2
    assert "first: Executed U'" in requests[1].body["messages"][-1]["content"]
    assert record.steps[0].tool_calls[0].actions == ["U'"]  # the tool call is in the step record
    assert record.steps[1].action.strip() == "move(seq)"  # variables persisted between blocks


@OPENAI
def test_basic_setting_reaches_no_solver() -> None:
    probe = (
        "out = []\n"
        "for mod in ('cubebench', 'numba', 'numpy'):\n"
        "    try:\n"
        "        __import__(mod); out.append(mod + ' imported')\n"
        "    except ImportError as e:\n"
        "        out.append(mod + ' blocked')\n"
        "try:\n"
        "    solve('U' * 54)\n"
        "except NameError:\n"
        "    out.append('no solve')\n"
        "try:\n"
        "    solve_current()\n"
        "except NameError:\n"
        "    out.append('no solve_current')\n"
        "print(out)"
    )
    record, requests = play([code(probe)])
    shown = requests[1].body["messages"][-1]["content"]
    for mod in ("cubebench", "numba", "numpy"):
        assert f"{mod} blocked" in shown
    assert "no solve'" in shown and "no solve_current" in shown


@OPENAI
def test_ideal_solver_is_reachable_only_through_its_tool() -> None:
    record, _ = play([code("move(solve_current())")], setting="ideal", scramble="R U F' D2 L")
    assert record.status == "solved"
    assert [c.name for c in record.steps[0].tool_calls] == ["solve_current", "move"]


@OPENAI
def test_misbehaving_code_is_stopped_and_the_episode_goes_on() -> None:
    script = [code("while True:\n    pass"), code("print(undefined_name)"), "no code block at all",
              code("move(\"U'\")\nmove(\"R'\")")]
    record, requests = play(script)
    assert record.status == "solved" and record.n_steps == 4
    assert "limit" in requests[1].body["messages"][-1]["content"].lower()
    assert "NameError" in requests[2].body["messages"][-1]["content"]
    assert "no code block found" in record.steps[2].parse_error
    assert record.errors == 0 and record.parse_errors == 1


@OPENAI
def test_tools_take_their_documented_parameter_names() -> None:
    record, _ = play([code("print(move(seq=\"U'\"))\ntry:\n    move(sequence='R')\nexcept Exception as e:\n"
                                  "    print('caught', e)\nmove(seq=\"R'\")")])
    assert record.status == "solved"
    calls = record.steps[0].tool_calls
    assert [c.args for c in calls if not c.error] == [["U'"], ["R'"]]
    (bad,) = [c for c in calls if c.error]
    assert "move(seq: str)" in bad.result and "sequence" in bad.result


@OPENAI
def test_tool_errors_raise_inside_the_sandbox() -> None:
    record, requests = play([code("try:\n    move('R Q')\nexcept Exception as e:\n    print('caught', e)")])
    assert "caught unknown move 'Q' at position 2" in requests[1].body["messages"][-1]["content"]
    assert record.steps[0].tool_calls[0].error


@OPENAI
def test_replies_without_code_are_the_models_failure_not_an_error_episode() -> None:
    prose = "Let me think about which face to turn first."
    record, requests = play([], default=prose)
    assert record.n_steps == 20 and record.status == "failed"  # the budget ran out; no `error` status
    assert record.errors == 0 and record.parse_errors == 20
    assert all(s.reply == prose and "no code block found" in s.parse_error for s in record.steps)
    assert all("Error: no code block found" in r.body["messages"][-1]["content"] for r in requests[1:])


@OPENAI
@pytest.mark.parametrize("reward", ["sticker", "none"])
def test_dense_rewards_are_shown_to_the_model(reward: str) -> None:
    record, requests = play([code("move(\"U'\")"), code("print('hi')")], env_kw={"reward": reward})
    prompts = [r.body["messages"][-1]["content"] for r in requests]
    assert record.n_steps == 3 and len(prompts) == 3
    if reward == "none":
        assert not any("Reward" in p for p in prompts)
        return
    assert record.steps[0].reward > 0 and "Reward:" not in prompts[0]
    # CodeAct's observation is the code's output, so the reward is shown on its own line
    assert f"Reward: {record.steps[0].reward:+g}\n" in prompts[1] and "Reward: +0\n" in prompts[2]


SOLVED_FACELETS = to_facelets(SOLVED)
FACELETS = re.compile(r"\b[URFDLB]{54}\b")


def matrix_model(tier: str, setting: str):
    """One code block that uses every tool of the setting, then done() (the default reply)."""

    def reply(req) -> str:
        if len(req.body["messages"]) > 2:
            return code("done()")
        first = req.body["messages"][-1]["content"]
        text = first if isinstance(first, str) else " ".join(p.get("text", "") for p in first if p["type"] == "text")
        lines = ["print(observe())"]
        if TIER_SPECS[tier].partial:
            lines.append("print(rotate('y'))")
        if setting == "standard":  # the symbolic tier shows the state; elsewhere any valid string proves the tool
            state = FACELETS.search(text)
            lines.append(f"print(move(solve('{state.group(0)}')))" if state else f"print(solve('{SOLVED_FACELETS}'))")
        if setting == "ideal":
            lines.append("try:\n    print(move(solve_current()))\nexcept Exception as e:\n    print('refused:', e)")
        return code("\n".join(lines))

    return reply


@OPENAI
@pytest.mark.parametrize("setting", ["basic", "standard", "ideal"])
@pytest.mark.parametrize("tier", list(cubebench.TIERS))
def test_codeact_plays_every_tier_and_tool_setting(tier: str, setting: str) -> None:
    env = gym.make(cubebench.TIERS[tier], max_steps=None)  # default observations: one-hot symbolic, images
    with ScriptedServer(matrix_model(tier, setting)) as srv:
        client = OpenAIChatClient("scripted", base_url=srv.base_url, api_key="x", retry=FAST)
        agent = CodeActAgent(client, limits=SandboxLimits(wall_seconds=5, cpu_seconds=3))
        try:
            record = run_episode(agent, env, tool_setting=setting, reset_options={"scramble": "R U"},
                                 max_steps=3, distance_budget_s=None)
        finally:
            agent.close()
        requests = srv.requests
    system, first = requests[0].body["messages"][0]["content"], requests[0].body["messages"][-1]["content"]
    spec = TIER_SPECS[tier]
    assert ("rotate(views: str)" in system) == spec.partial
    assert ("solve(facelets: str)" in system) == (setting == "standard")
    assert ("solve_current()" in system) == (setting == "ideal")
    if not spec.pictured:  # the one-hot observation is shown as its 54-letter text
        assert isinstance(first, str) and record.start_facelets in first
    else:
        assert [p["type"] for p in first] == ["text", "image_url"]
        assert first[1]["image_url"]["url"].startswith("data:image/png;base64,")
        assert not FACELETS.search(first[0]["text"])
        assert record.steps[0].observation_png_b64
    names = [c.name for c in record.steps[0].tool_calls]
    expected = ["observe"] + (["rotate"] if spec.partial else []) + \
               {"basic": [], "standard": ["solve"], "ideal": ["solve_current"]}[setting]
    assert names[:len(expected)] == expected and not any(c.error for c in record.steps[0].tool_calls[:-1])
    assert record.n_rotations == (1 if spec.partial else 0)
    # standard: only a tier that shows the state itself gives solve() its string; ideal: any tier that shows all of it
    solvable = (setting == "standard" and not spec.pictured) or (setting == "ideal" and not spec.partial)
    assert record.solved == solvable and record.status == ("solved" if solvable else "failed")
    assert record.n_steps == len(requests) == (1 if solvable else 2)
    assert record.errors == 0 and record.parse_errors == 0
    if not solvable:  # the block's output is the next observation
        assert record.steps[1].observation_text.startswith("Here is the current observation.")
    if setting == "ideal" and spec.partial:
        assert "still unseen" in record.steps[0].tool_calls[-1].result  # one rotation does not show every face
