"""Text a model or its code sends may be any Python ``str``, lone surrogates included (``print(chr(0xd800))``,
a JSON reply holding ``"\\ud800"``); UTF-8 cannot encode them.  A run must still complete, store the episode
(each lone surrogate written as its escape, ``\\ud800``), and report, view, export and resume it."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from cubebench.agents.base import Task, Turn
from cubebench.agents.records import EpisodeRecord
from cubebench.agents.tools import Toolbox
from cubebench.runner import specs
from cubebench.runner.cli import main
from cubebench.runner.store import open_run
from helpers import needs

LONE = "\ud800"
LOW = "\udcff"


def test_safe_text_escapes_lone_surrogates_and_nothing_else() -> None:
    from cubebench.agents.records import safe_strings, safe_text

    assert safe_text(f"a{LONE}b{LOW}") == "a\\ud800b\\udcff"
    assert safe_text("é 😀 \\ud800 plain") == "é 😀 \\ud800 plain"
    assert safe_strings({f"k{LONE}": [f"v{LOW}", (1, None, 2.5)]}) == {"k\\ud800": ["v\\udcff", (1, None, 2.5)]}
    safe_text(f"{LONE}x{LOW}").encode("utf-8")  # encodable


class SurrogateAgent:
    """A scripted 'model' whose reply, action, tool arguments, code output, errors and logs hold lone surrogates."""

    def __init__(self, seed: int | None = None) -> None:
        self.name = f"surrogate{LONE}"

    def reset(self, task: Task) -> None:
        pass

    def act(self, observation, tools: Toolbox) -> Turn:
        result = tools.call("move", [f"R{LONE}"])  # refused: the error text repeats the argument
        return Turn(reply=f"Thought: {LONE} and {LOW}\n```python\nprint(chr(0xd800))\n```", action=f"code{LOW}",
                    input_tokens=3, output_tokens=4, model_log=[{"request": f"body {LONE}", f"k{LOW}": 1}],
                    parse_error=f"no action in {LOW}", feedback=f"{LONE}\n{result}")


@pytest.fixture
def surrogate_agent(monkeypatch):
    monkeypatch.setitem(specs.SCRIPTED_AGENTS, "surrogate", SurrogateAgent)


def _suite(tmp_path: Path) -> Path:
    suite = tmp_path / "s.json"
    suite.write_text(json.dumps({"name": "s", "tiers": ["symbolic", "face"], "depths": [1], "instances": 1,
                                 "rewards": ["none"], "tool_settings": ["basic"], "max_steps": 3}))
    return suite


def test_lone_surrogates_from_an_agent_are_stored_shown_and_resumed(tmp_path: Path, capsys, surrogate_agent) -> None:
    run = tmp_path / "r.sqlite"
    assert main(["run", "--distance-budget", "0", "--suite", str(_suite(tmp_path)), "--agent", "surrogate",
                 "--out", str(run), "--limit", "1", "--no-progress"]) == 0
    assert main(["run", "--resume", str(run), "--no-progress"]) == 0
    assert "Pass rate by tier" in capsys.readouterr().out
    with open_run(run) as store:
        assert [s["outcome"] for s in store.sessions()] == ["partial: --limit 1", "complete"]
        records = dict(store.records())
    assert len(records) == 2
    for record in records.values():
        assert record.agent == "surrogate\\ud800" and record.n_steps == 3 and record.parse_errors == 3
        step = record.steps[1]
        assert step.reply.startswith("Thought: \\ud800 and \\udcff") and step.action == "code\\udcff"
        assert step.observation_text.startswith("\\ud800\nError: ") and step.tool_calls[0].args == ["R\\ud800"]
        assert "\\ud800" in step.tool_calls[0].result and step.model_log == [{"request": "body \\ud800", "k\\udcff": 1}]
        json.dumps(record.to_dict(), ensure_ascii=False).encode("utf-8")  # no lone surrogate anywhere

    assert main(["report", str(run), "--html", str(tmp_path / "r.html")]) == 0
    assert main(["view", str(run), "--out", str(tmp_path / "v.html")]) == 0
    page = (tmp_path / "v.html").read_text(encoding="utf-8")
    assert "Thought: \\\\ud800 and \\\\udcff" in page  # the escape, as JSON text in the page
    assert main(["export", str(run), "--format", "jsonl", "--out", str(tmp_path / "e.jsonl")]) == 0
    lines = [json.loads(line) for line in (tmp_path / "e.jsonl").read_text(encoding="utf-8").splitlines()]
    assert {d["key"]: EpisodeRecord.from_dict(d["record"]) for d in lines} == records
    assert main(["export", str(run), "--format", "csv", "--out", str(tmp_path / "e.csv")]) == 0
    assert len(list(csv.DictReader((tmp_path / "e.csv").open()))) == 2
    assert main(["export", str(run), "--format", "jsonl"]) == 0  # to stdout
    assert "\\\\ud800" in capsys.readouterr().out


def test_the_observation_digest_takes_any_text() -> None:
    from cubebench.agents.records import observation_digest

    a, _ = observation_digest(f"x{LONE}", None, False)
    b, _ = observation_digest("x\\ud800", None, False)
    assert a != b  # the digest is of what was shown, not of its stored escape


@needs("openai")
@pytest.mark.parametrize("style, reply", [
    ("codeact", "```python\nprint(chr(0xd800))\nprint('x\\udcff y')\n```"),
    ("react", f"Thought: {LONE}\nAction: move(\"R{LOW}\")"),
], ids=["codeact", "react"])
def test_lone_surrogates_from_a_model_and_its_code(tmp_path: Path, style: str, reply: str) -> None:
    from cubebench.agents.llm.testing import ScriptedServer

    run = tmp_path / "m.sqlite"
    suite = tmp_path / "s.json"
    suite.write_text(json.dumps({"name": "s", "tiers": ["symbolic"], "depths": [1], "instances": 1,
                                 "rewards": ["none"], "tool_settings": ["basic"], "max_steps": 2}))
    with ScriptedServer([], default=reply) as srv:
        assert main(["run", "--distance-budget", "0", "--suite", str(suite), "--style", style, "--model-attempts", "1",
                     "--agent", f"openai-compatible:{srv.base_url}:m", "--out", str(run), "--no-progress"]) == 0
    with open_run(run) as store:
        (key, record), = store.records()
    shown = record.steps[1].observation_text if style == "codeact" else record.steps[0].reply
    assert "\\ud800" in shown
    if style == "codeact":  # the code's output reached the model escaped, as stored: no failed call
        assert record.errors == 0 and record.n_steps == 2
    assert main(["view", str(run), "--out", str(tmp_path / "v.html")]) == 0
    assert main(["export", str(run), "--format", "jsonl", "--out", str(tmp_path / "e.jsonl")]) == 0
