"""The Inspect commands of README.md and docs/ecosystem.md, run as written, offline.

Each ``inspect eval ...`` command is read from the doc files (so the docs and this test cannot drift) and
run by the ``inspect`` command line against the scripted OpenAI-compatible server on 127.0.0.1, which
``OPENAI_BASE_URL`` (``--model openai/...``) or ``LOCAL_BASE_URL`` (``--model openai-api/local/...``) points
at.  The scripted model plays the depth 1-4 certified instances' own solutions (the inverse scramble of the
start state it is shown, as a native tool call or a ReAct ``Action:`` line), and answers every question
``A``; other starts get a legal move.  Each eval must end ``success`` with its samples scored and none in error.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from helpers import apply, extra_reason, needs

pytest.importorskip("inspect_ai", reason=extra_reason("inspect_ai"))
pytestmark = needs("openai")  # Inspect's openai providers use the openai package

from inspect_ai.log import read_eval_log  # noqa: E402

from cubebench.agents.llm.testing import RecordedRequest, ScriptedServer, Step  # noqa: E402
from cubebench.curriculum import load_instance_file  # noqa: E402
from cubebench.engine.state import to_colour_string, to_facelets  # noqa: E402
from cubebench.shipped import largest_instance_file  # noqa: E402
from test_inspect_bridge import undo  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
INSPECT = str(Path(sys.executable).with_name("inspect"))


def readme_commands() -> list[str]:
    """Every ``inspect eval`` command of the README (inline code, possibly wrapped over lines), whitespace normalised."""
    spans = re.findall(r"`[^`]*?(inspect eval [^`]+)`", (ROOT / "README.md").read_text())  # also after `pip ... &&`
    return [" ".join(c.split()) for c in spans if not c.endswith("...")]  # "`inspect eval cubebench/...`" names


def ecosystem_commands() -> list[str]:
    """Every ``inspect eval`` command of the shell blocks of docs/ecosystem.md's Inspect AI section."""
    text = (ROOT / "docs" / "ecosystem.md").read_text()
    section = text.split("## Inspect AI", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```bash\n(.*?)```", section, re.S)
    return [line.split("#")[0].strip() for block in blocks for line in block.splitlines()
            if line.startswith("inspect eval ")]


README_COMMANDS = readme_commands()
COMMANDS = README_COMMANDS + ecosystem_commands()


def solutions() -> dict[str, str]:
    """Start state (as 54 face letters and as 54 colour letters) -> its solution, for the certified
    quarter-turn instances 0-19 of depths 1-4 (the grids the documented commands play first)."""
    found: dict[str, str] = {}
    for depth in (1, 2, 3, 4):
        path = largest_instance_file("quarter", depth)
        assert path is not None
        for index in range(min(20, len(load_instance_file(path)))):
            state = apply(load_instance_file(path)[index].scramble)
            found[to_facelets(state)] = found[to_colour_string(state)] = undo(depth, index)
    return found


SOLUTIONS = solutions()


def scripted_model(request: RecordedRequest) -> Step:
    """Play the solution of the start state shown in the request's first user message, if it is one;
    answer ``A`` to a question (a request without tools whose system prompt is not an episode's)."""
    body = request.body if isinstance(request.body, dict) else {}
    messages = body.get("messages", [])
    text = json.dumps([m.get("content") for m in messages if m.get("role") == "user"][:1])
    moves = next((seq for state, seq in SOLUTIONS.items() if state in text), "U")
    if body.get("tools"):
        call = {"id": "call_1", "type": "function", "function": {"name": "move", "arguments": json.dumps({"seq": moves})}}
        return Step.body({"id": "scripted", "object": "chat.completion", "created": 0, "model": body.get("model", ""),
                          "choices": [{"index": 0, "finish_reason": "tool_calls",
                                       "message": {"role": "assistant", "content": None, "tool_calls": [call]}}],
                          "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})
    system = str(messages[0].get("content", "")) if messages else ""
    if "Action:" in system:  # our ReAct agent's protocol
        return Step.reply(f"Thought: I know this one.\nAction: move(\"{moves}\")")
    return Step.reply("<ANSWER> A </ANSWER>")


def test_the_docs_have_the_inspect_commands_this_test_runs() -> None:
    assert len(COMMANDS) >= 5 and len(README_COMMANDS) == 1, COMMANDS  # the README's "I want to..." row
    assert sum(c.startswith("inspect eval cubebench/questions") for c in COMMANDS) >= 1
    assert all("--model " in c for c in COMMANDS), COMMANDS  # no command leaves the model to chance


@pytest.mark.parametrize("command", [c if c in README_COMMANDS else pytest.param(c, marks=pytest.mark.slow)
                                     for c in COMMANDS])  # the README's by default, docs/ecosystem.md's as slow
def test_a_documented_inspect_command_runs_offline_end_to_end(tmp_path: Path, command: str) -> None:
    argv = shlex.split(command)
    assert argv[:2] == ["inspect", "eval"]
    with ScriptedServer(scripted_model) as server:
        env = {**os.environ, "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "none",
               "LOCAL_BASE_URL": server.base_url, "LOCAL_API_KEY": "none", "INSPECT_LOG_DIR": str(tmp_path / "logs"),
               "COLUMNS": "200"}
        done = subprocess.run([INSPECT, *argv[1:]], cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=400)
        calls = len(server.requests)
    out = done.stdout + done.stderr
    assert done.returncode == 0, out[-3000:]
    (path,) = (tmp_path / "logs").glob("*.eval")
    log = read_eval_log(str(path))
    assert log.status == "success", (log.error, out[-3000:])
    assert log.samples and all(s.error is None for s in log.samples) and calls >= len(log.samples)
    assert log.results is not None and log.results.completed_samples == len(log.samples)
    limit = re.search(r"--limit (\d+)", command)
    if limit:
        assert len(log.samples) == int(limit.group(1))
    if "cubebench/episode" in command:
        kept: list[dict[str, Any]] = [s.store["cubebench:record"] for s in log.samples]
        assert all(r["n_steps"] >= 1 for r in kept)
        if "tier=symbolic" in command:  # the scripted model sees the state: it solves every episode it plays
            assert all(r["status"] == "solved" for r in kept), [r["status"] for r in kept]
