"""The CodeAct agent: model code runs in the sandbox and reaches the cube only through tools."""

from __future__ import annotations

import gymnasium as gym
import pytest

import cube_env
from agents.codeact import CodeActAgent, extract_code
from agents.episode import run_episode
from agents.llm import OpenAIChatClient, RetryPolicy, ScriptedServer
from agents.sandbox import SandboxLimits

FAST = RetryPolicy(max_attempts=2, base_delay_s=0.001, max_delay_s=0.01)


def play(script: list[str], setting: str = "basic", scramble: str = "R U", tier: str = "symbolic", **kw):
    env = gym.make(cube_env.TIERS[tier], max_steps=None, **({"obs_format": "text"} if tier == "symbolic" else {}))
    with ScriptedServer(script, default="```python\ndone()\n```") as srv:
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


def test_code_moves_the_cube_and_output_comes_back() -> None:
    record, requests = play([code("r = move(\"U'\")\nprint('first:', r)\nseq = \"R'\""), code("move(seq)")])
    assert record.status == "solved" and record.n_steps == 2 and record.n_moves == 2
    assert "first: Executed U'" in requests[1].body["messages"][-1]["content"]
    assert record.steps[0].tool_calls[0].actions == ["U'"]  # the tool call is in the step record
    assert record.steps[1].action.strip() == "move(seq)"  # variables persisted between blocks


def test_basic_setting_reaches_no_solver() -> None:
    probe = (
        "out = []\n"
        "for mod in ('kociemba', 'cube_env', 'numba', 'numpy'):\n"
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
    for mod in ("kociemba", "cube_env", "numba", "numpy"):
        assert f"{mod} blocked" in shown
    assert "no solve'" in shown and "no solve_current" in shown


def test_ideal_solver_is_reachable_only_through_its_tool() -> None:
    record, _ = play([code("move(solve_current())")], setting="ideal", scramble="R U F' D2 L")
    assert record.status == "solved"
    assert [c.name for c in record.steps[0].tool_calls] == ["solve_current", "move"]


def test_misbehaving_code_is_stopped_and_the_episode_goes_on() -> None:
    script = [code("while True:\n    pass"), code("print(undefined_name)"), "no code block at all",
              code("move(\"U'\")\nmove(\"R'\")")]
    record, requests = play(script)
    assert record.status == "solved" and record.n_steps == 4
    assert "limit" in requests[1].body["messages"][-1]["content"].lower()
    assert "NameError" in requests[2].body["messages"][-1]["content"]
    assert "no code block found" in record.steps[2].error


def test_tool_errors_raise_inside_the_sandbox() -> None:
    record, requests = play([code("try:\n    move('R Q')\nexcept Exception as e:\n    print('caught', e)")])
    assert "caught unknown move 'Q' at position 2" in requests[1].body["messages"][-1]["content"]
    assert record.steps[0].tool_calls[0].error
