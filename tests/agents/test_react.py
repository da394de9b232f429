"""The ReAct agent end to end: real openai/anthropic clients, a scripted loopback server."""

from __future__ import annotations

import re

import gymnasium as gym
import pytest

import cubebench
from cubebench.agents.episode import run_episode
from cubebench.agents.llm import AnthropicClient, Budget, OpenAIChatClient, RetryPolicy
from cubebench.agents.llm.testing import ScriptedServer, Step
from cubebench.agents.react import ReActAgent
from helpers import needs

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


# ---------------------------------------------------------------------------- the action parser on any reply

def test_the_parser_reads_the_forms_models_write() -> None:
    from cubebench.agents.actions import ActionParseError, parse_action

    assert parse_action('Thought: x\n**Action:** `move("R U")`') == ("move", ["R U"])
    assert parse_action("Thought: x\nAction:\n\n   move(R U R')\nThought: done") == ("move", ["R U R'"])
    assert parse_action('Action: move("R")\nThought: no\nAction: observe()') == ("observe", [])
    assert parse_action("Action: move(\"R\")\nAction:\n") == ("move", ["R"])  # a bare last label: the one before
    assert parse_action("> action :: move(seq='U2')  # then look") == ("move", ["U2"])
    with pytest.raises(ActionParseError, match="no 'Action:' line"):
        parse_action("Thought: hmm\nmove(R)")
    with pytest.raises(ActionParseError, match="as a tool call"):
        parse_action("Action: move(R")


def test_a_runaway_action_is_refused_with_a_bounded_message() -> None:
    from cubebench.agents.actions import MAX_ACTION_CHARS, ActionParseError, parse_action

    moves = ("R U " * 50_000).strip()  # 200 kB, and no closing parenthesis
    with pytest.raises(ActionParseError) as info:
        parse_action(f'Thought: all of them\nAction: move("{moves}')
    message = str(info.value)
    assert f"your action is {len(moves) + 6} characters long; at most {MAX_ACTION_CHARS} are read" in message
    assert "'move(\"R U R U" in message and len(message) < 400
    # up to the bound an action is read as ever, closing parenthesis or not
    fits = ("R U " * (MAX_ACTION_CHARS // 4))[: MAX_ACTION_CHARS - 8].strip()
    assert parse_action(f'Action: move("{fits}")') == ("move", [fits])
    with pytest.raises(ActionParseError, match="as a tool call") as info:
        parse_action(f'Action: move("{fits}')
    assert len(str(info.value)) < 400


class _CountingPattern:
    """A compiled pattern that counts the characters each call may scan, and refuses a long scan
    before it starts (the unbounded scans were the quadratic ones)."""

    def __init__(self, pattern: "re.Pattern[str]", limit: int, calls: list[int]) -> None:
        self.pattern, self.limit, self.calls = pattern, limit, calls

    def _scan(self, name: str, string: str, pos: int = 0, endpos: int | None = None):
        span = min(len(string), len(string) if endpos is None else endpos) - pos
        self.calls.append(span)
        assert span <= self.limit, f"{self.pattern.pattern!r}.{name} over {span} characters"
        args = (string, pos) if endpos is None else (string, pos, endpos)
        return getattr(self.pattern, name)(*args)

    def match(self, *a):
        return self._scan("match", *a)

    def search(self, *a):
        return self._scan("search", *a)

    def fullmatch(self, *a):
        return self._scan("fullmatch", *a)

    def findall(self, *a):
        return self._scan("findall", *a)

    def finditer(self, *a):
        return self._scan("finditer", *a)


ADVERSARIAL = {  # each took time quadratic in its size (a 40 kB reply: 7 to 28 s)
    "no closing parenthesis": lambda n: 'Thought: x\nAction: move("' + "f(" * (n // 2),
    "one long word": lambda n: "Thought: x\nAction: " + "a" * n,
    "letters and digits": lambda n: "Action: " + "a1" * (n // 2),
    "blank lines": lambda n: "\n" * n,
    "punctuation lines": lambda n: "-\n" * (n // 2),
    "long prefix": lambda n: "-" * n + "Action: done()",
}


@pytest.mark.parametrize("family", ADVERSARIAL)
def test_the_parser_scans_each_reply_a_bounded_number_of_times(monkeypatch: pytest.MonkeyPatch, family: str) -> None:
    """An operation count instead of a timing: no pattern runs over more than a bounded stretch of
    the reply (the regex engine's backtracking cannot reach further), and the characters scanned grow
    like the reply (size N against 4N), so parsing is linear in the reply's length."""
    from cubebench.agents import actions

    calls: list[int] = []
    for name, value in list(vars(actions).items()):
        if isinstance(value, re.Pattern):
            monkeypatch.setattr(actions, name, _CountingPattern(value, actions.MAX_ACTION_CHARS, calls))
    scanned, outcomes = [], []
    for n in (50_000, 200_000):
        calls.clear()
        try:
            outcomes.append(actions.parse_action(ADVERSARIAL[family](n)))
        except actions.ActionParseError as err:
            outcomes.append(" ".join(str(err).split()[:3]))  # the kind of error, not its numbers
            assert len(str(err)) < 400
        scanned.append(sum(calls))
        assert len(calls) <= ADVERSARIAL[family](n).count("\n") + 3
    assert scanned[1] <= 4 * scanned[0] + 2 * actions.MAX_ACTION_CHARS
    assert outcomes[0] == outcomes[1]
