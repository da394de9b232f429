"""The ReAct agent end to end: real openai/anthropic clients, a scripted loopback server."""

from __future__ import annotations

import gymnasium as gym
import pytest

import cubebench
from cubebench.agents.episode import run_episode
from cubebench.agents.llm import AnthropicClient, Budget, OpenAIChatClient, RetryPolicy
from cubebench.agents.llm.testing import ScriptedServer, Step
from cubebench.agents.react import ReActAgent
from conftest import needs

pytestmark = needs("openai")  # the real openai client (the llm extra) against a scripted server

FAST = RetryPolicy(max_attempts=3, base_delay_s=0.001, max_delay_s=0.01, max_retry_after_s=0.01)


def env(tier: str = "symbolic", **kw) -> gym.Env:
    if tier == "symbolic":
        kw.setdefault("obs_format", "text")
    return gym.make(cubebench.TIERS[tier], max_steps=None, **kw)


def openai_agent(srv: ScriptedServer, **kw) -> ReActAgent:
    client = OpenAIChatClient("scripted", base_url=srv.base_url, api_key="sk-test", retry=FAST, timeout_s=5, **kw)
    return ReActAgent(client)


def test_react_solves_with_scripted_replies_and_records_everything() -> None:
    script = ["Thought: undo U first\nAction: move(\"U'\")", "Thought: then R\nAction: move(\"R'\")"]
    with ScriptedServer(script) as srv:
        record = run_episode(openai_agent(srv), env(), reset_options={"scramble": "R U"}, distance_budget_s=None)
        requests = srv.requests
    assert record.status == "solved" and record.n_steps == 2 and record.n_moves == 2
    assert [s.action for s in record.steps] == ["move(\"U'\")", "move(\"R'\")"]
    assert record.steps[0].reply.startswith("Thought: undo U first")
    assert record.input_tokens > 0 and record.output_tokens > 0
    assert all(s.model_log and s.model_log[0]["attempts"] == 1 for s in record.steps)
    first = requests[0].body
    assert first["stop"] == ["Observation:"]
    system = first["messages"][0]["content"]
    assert "move(seq: str)" in system and "solve" not in system.replace("solved", "")
    # the second prompt carries the first action's result as its observation
    assert "Executed U'" in requests[1].body["messages"][-1]["content"]
    assert "sk-test" not in str(record.to_dict())


def test_unparseable_reply_becomes_an_observation_and_counts_as_a_step() -> None:
    script = ["I think I should turn R.", "Thought: fine\nAction: move(\"R'\")"]
    with ScriptedServer(script) as srv:
        record = run_episode(openai_agent(srv), env(), reset_options={"scramble": "R"}, distance_budget_s=None)
        second_prompt = srv.requests[1].body["messages"][-1]["content"]
    assert record.status == "solved" and record.n_steps == 2
    assert "no 'Action:' line" in record.steps[0].parse_error and record.steps[0].error is None
    assert "no 'Action:' line" in second_prompt
    assert record.parse_errors == 1 and record.errors == 0


def test_garbage_replies_are_the_models_failure_not_an_error_episode() -> None:
    garbage = "I would rather talk about the weather."
    with ScriptedServer([], default=garbage) as srv:
        record = run_episode(openai_agent(srv), env(), reset_options={"scramble": "R U"}, distance_budget_s=None)
        prompts = [r.body["messages"][-1]["content"] for r in srv.requests]
    # every garbage reply is a step the model spent: the whole budget, an ordinary unsolved episode
    assert record.n_steps == 20 and record.status == "failed" and not record.solved
    assert record.errors == 0 and record.parse_errors == 20
    assert all(s.reply == garbage and s.error is None and "no 'Action:' line" in s.parse_error
               and s.model_log for s in record.steps)
    # the model is told what was wrong, in the next observation (and the record holds that text)
    assert all("Error: no 'Action:' line" in s.observation_text for s in record.steps[1:])
    assert all("Error: no 'Action:' line" in p for p in prompts[1:]) and len(prompts) == 20


def test_unknown_tools_and_bad_arguments_are_parse_errors_shown_once() -> None:
    script = ["Thought: a\nAction: spin()", "Thought: b\nAction: move()", "Thought: c\nAction: observe(\"x\")",
              "Thought: d\nAction: move(\"R Q\")", "Thought: e\nAction: move(\"U' R'\")"]
    with ScriptedServer(script) as srv:
        record = run_episode(openai_agent(srv), env(), reset_options={"scramble": "R U"}, distance_budget_s=None)
        prompts = [r.body["messages"][-1]["content"] for r in srv.requests]
    assert record.status == "solved" and record.n_steps == 5 and record.errors == 0
    assert "unknown tool 'spin'" in record.steps[0].parse_error
    assert record.steps[1].parse_error == "bad arguments for move: move(seq: str) takes 1 argument, got 0"
    assert "observe() takes no arguments, got 1" in record.steps[2].parse_error
    # bad notation is a well-formed call the tool refused: its result says why, no parse error
    assert record.steps[3].parse_error is None and record.steps[3].tool_calls[0].error
    assert record.parse_errors == 3
    assert prompts[1].count("unknown tool 'spin'") == 1 and prompts[2].count("bad arguments") == 1


def test_faults_are_retried_and_no_step_is_lost() -> None:
    script = [
        Step.http_error(500), "Thought: a\nAction: move(\"U\")",
        Step.malformed(), Step.truncated(), "Thought: b\nAction: move(\"U'\")",
        Step.http_error(429, retry_after=0.001), Step.empty(), "Thought: c\nAction: move(\"R'\")",
    ]
    with ScriptedServer(script) as srv:
        record = run_episode(openai_agent(srv), env(), reset_options={"scramble": "R"}, distance_budget_s=None)
    assert record.status == "solved"
    actions = [s.action for s in record.steps]
    assert "move(\"R'\")" in actions
    attempts = sum(len(s.model_log[0]["log"]) if s.model_log and "log" in s.model_log[0] else len(s.model_log)
                   for s in record.steps)
    assert attempts >= 8  # every attempt, failed or not, is in the record
    assert [s.index for s in record.steps] == list(range(record.n_steps))


def test_persistent_model_errors_end_the_episode_as_error_with_all_steps() -> None:
    with ScriptedServer([], default=Step.http_error(503)) as srv:
        record = run_episode(openai_agent(srv), env(), reset_options={"scramble": "R"}, distance_budget_s=None)
    assert record.status == "error" and record.n_steps == 3
    assert all("model error" in s.error and s.model_log for s in record.steps)
    assert record.errors == 3 and record.parse_errors == 0


def test_token_budget_stops_the_episode() -> None:
    reply = "Thought: spin\nAction: move(\"U\")"
    with ScriptedServer([], default=reply) as srv:
        client = OpenAIChatClient("scripted", base_url=srv.base_url, api_key="x", retry=FAST,
                                  budget=Budget(max_tokens=400))
        record = run_episode(ReActAgent(client), env(), reset_options={"scramble": "R"}, distance_budget_s=None)
    assert record.status == "error" and "budget" in record.steps[-1].error
    assert 0 < record.n_steps < 20


def test_images_reach_the_model_as_base64_parts() -> None:
    with ScriptedServer([], default="Thought: look\nAction: rotate(\"y\")") as srv:
        record = run_episode(openai_agent(srv), env("face"), reset_options={"scramble": "R"}, max_steps=2,
                             distance_budget_s=None)
        content = srv.requests[0].body["messages"][-1]["content"]
    assert record.n_rotations == 2
    image = [p for p in content if p["type"] == "image_url"][0]
    assert image["image_url"]["url"].startswith("data:image/png;base64,")


@needs("anthropic")
def test_anthropic_client_drives_the_same_agent() -> None:
    script = ["Thought: undo\nAction: move(\"R'\")"]
    with ScriptedServer(script) as srv:
        client = AnthropicClient("claude-scripted", base_url=srv.root_url, api_key="ak-test", retry=FAST)
        record = run_episode(ReActAgent(client), env("vertex", obs_format="text"), reset_options={"scramble": "R"},
                             distance_budget_s=None)
        body = srv.requests[0].body
    assert record.status == "solved"
    assert body["stop_sequences"] == ["Observation:"] and "rotate(views: str)" in body["system"]


@pytest.mark.parametrize("setting,tool", [("standard", "solve"), ("ideal", "solve_current")])
def test_solver_tools_are_offered_only_in_their_setting(setting: str, tool: str) -> None:
    with ScriptedServer([], default="Thought: x\nAction: done()") as srv:
        run_episode(openai_agent(srv), env(), tool_setting=setting, reset_options={"scramble": "R"},
                    distance_budget_s=None)
        system = srv.requests[0].body["messages"][0]["content"]
    assert f"- {tool}(" in system
    other = "solve_current" if tool == "solve" else "solve(facelets"
    assert other not in system


@pytest.mark.parametrize("reward", ["sticker", "none"])
def test_dense_rewards_are_shown_to_the_model(reward: str) -> None:
    script = ["Thought: undo U\nAction: move(\"U'\")", "Thought: look\nAction: observe()", "Thought: x\nAction: done()"]
    with ScriptedServer(script) as srv:
        record = run_episode(openai_agent(srv), env(reward=reward), reset_options={"scramble": "R U"},
                             distance_budget_s=None)
        prompts = [r.body["messages"][-1]["content"] for r in srv.requests]
    assert record.n_steps == 3
    if reward == "none":
        assert not any("Reward" in p for p in prompts)
        return
    assert record.steps[0].reward > 0
    assert "Reward" not in prompts[0]  # no step has been taken yet
    assert prompts[1].count("Reward") == 1  # the move's result reports it, once
    assert f"Reward {record.steps[0].reward:+g}." in prompts[1]
    assert "Reward" not in prompts[2]  # observe() earns nothing and moves nothing
