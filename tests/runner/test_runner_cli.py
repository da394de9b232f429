"""The runner end to end through ``cubebench`` (``cubebench.runner.cli.main``): smoke suite with the solver
agent and with a scripted model server, reports, export, limits, resume, retry of error episodes, play."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pytest

from cubebench.agents.llm.testing import RecordedRequest, ScriptedServer, Step
from cubebench.runner.protocols.episodes.attribution import attribute
from cubebench.runner.store import open_run
from cubebench.runner.cli import main
from cubebench.tiers import TIER_SPECS
from helpers import missing, needs

OPENAI = needs("openai")
"""Runs whose agent is ``openai-compatible:``, the real openai client (the llm extra)."""

FACELETS = re.compile(r"\b[URFDLB]{54}\b")


def cubebench(*argv: str) -> int:
    return main(list(argv))


def _text(content) -> str:
    return content if isinstance(content, str) else " ".join(p.get("text", "") for p in content if p.get("type") == "text")


def tool_user(req: RecordedRequest) -> Step:
    """A scripted model that uses whatever solver tool it has, on what its observation shows.

    standard: passes the 54-letter string when the observation holds one (symbolic tier only);
    ideal: calls solve_current(); then plays the returned solution; otherwise gives up with done().
    """
    msgs = req.body["messages"]
    system, last = _text(msgs[0]["content"]), _text(msgs[-1]["content"])
    replies = [_text(m["content"]) for m in msgs if m["role"] == "assistant"]
    if replies and ("solve(" in replies[-1] or "solve_current()" in replies[-1]):
        answer = last.removeprefix("Observation: ").splitlines()[0].strip()
        if answer.startswith("Error") or not answer:
            return Step.reply("Thought: cannot\nAction: done()")
        return Step.reply(f'Thought: play it\nAction: move("{answer}")')
    if "solve_current()" in system:
        return Step.reply("Thought: ask\nAction: solve_current()")
    state = FACELETS.search(last)
    if "solve(facelets" in system and state:
        return Step.reply(f'Thought: ask\nAction: solve("{state.group(0)}")')
    return Step.reply("Thought: no idea\nAction: done()")


def test_smoke_suite_with_the_solver_agent_reports_and_exports(tmp_path: Path, capsys) -> None:
    run = tmp_path / "smoke.sqlite"
    assert cubebench("run", "--distance-budget", "0", "--suite", "smoke", "--agent", "solver", "--out", str(run), "--no-progress") == 0
    out = capsys.readouterr().out
    assert "Pass rate by tier and horizon" in out and "Failure attribution" in out
    with open_run(run) as store:
        rows = store.rows()
        assert len(rows) == 72 and all(r.status == "solved" for r in rows)
        assert store.get_meta("versions")["python"] and store.get_meta("suite")["name"] == "smoke"
    html, plots = tmp_path / "report.html", tmp_path / "plots"
    if missing("matplotlib"):  # the core install: tables and report, plots say which extra draws them
        assert cubebench("report", str(run), "--plots", str(plots)) == 2
        assert 'pip install -e ".[report]"' in capsys.readouterr().err and not plots.exists()
        assert cubebench("report", str(run), "--html", str(html)) == 0
        assert "solver: ideal solver" in capsys.readouterr().out
        assert "plots need matplotlib" in html.read_text() and "data:image/png" not in html.read_text()
    else:
        assert cubebench("report", str(run), "--html", str(html), "--plots", str(plots)) == 0
        assert "solver: ideal solver" in capsys.readouterr().out
        assert html.read_text().count("data:image/png;base64,") == 2  # depth plot + tool-setting plot
        assert sorted(p.name for p in plots.iterdir()) == ["pass_rate_by_depth.png", "tool_settings.png"]
    csv_path, jsonl_path = tmp_path / "e.csv", tmp_path / "e.jsonl"
    assert cubebench("export", str(run), "--format", "csv", "--out", str(csv_path)) == 0
    assert cubebench("export", str(run), "--format", "jsonl", "--out", str(jsonl_path), "--no-images") == 0
    table = list(csv.DictReader(io.StringIO(csv_path.read_text())))
    assert len(table) == 72 and table[0]["key"] == "symbolic/d1/i00/none/basic" and table[0]["solved"] == "True"
    lines = [json.loads(line) for line in jsonl_path.read_text().splitlines()]
    assert [d["key"] for d in lines] == [r["key"] for r in table]
    assert all(s["observation_png_b64"] is None for d in lines for s in d["record"]["steps"])


@OPENAI
def test_smoke_suite_with_a_scripted_model_server_attributes_failures(tmp_path: Path, capsys) -> None:
    run = tmp_path / "llm.sqlite"
    with ScriptedServer(tool_user) as srv:
        rc = cubebench("run", "--distance-budget", "0", "--suite", "smoke", "--agent", f"openai-compatible:{srv.base_url}:scripted",
                       "--out", str(run), "--concurrency", "4", "--no-progress", "--model-attempts", "1")
        n_requests = len(srv.requests)
    assert rc == 0
    out = capsys.readouterr().out
    assert "openai-compatible" in out and "Failure attribution" in out
    with open_run(run) as store:
        rows = store.rows()
        assert len(rows) == 72 and len({r.key for r in rows}) == 72
        assert sum(r.input_tokens + r.output_tokens for r in rows) > 0
        assert n_requests == sum(r.n_steps for r in rows)
        solved = {(r.tier, r.setting) for r in rows if r.solved}
        assert solved == {("symbolic", "standard"), ("symbolic", "ideal"), ("visual", "ideal")}
        cells = {(a.tier, a.horizon): a for a in attribute(store, rows)}
    for horizon in ("short", "long"):
        sym, vis, face, vert = (cells[(t, horizon)] for t in TIER_SPECS)  # the registry's order: Tier 1, 2, 3a, 3b
        assert sym.planning.value == 1.0 and sym.translation.value == 0.0 and sym.exploration is None
        assert vis.planning.value == 0.0 and vis.translation.value == 1.0
        assert face.translation.value == 0.0 and face.exploration.value == 1.0
        assert vert.exploration.value == 1.0


def test_limit_then_resume_plays_each_episode_once(tmp_path: Path) -> None:
    run = tmp_path / "r.sqlite"
    assert cubebench("run", "--distance-budget", "0", "--suite", "smoke", "--agent", "random", "--out", str(run), "--limit", "10",
                     "--no-progress", "--quiet") == 0
    with open_run(run) as store:
        assert len(store.rows()) == 10
    assert cubebench("run", "--resume", str(run), "--no-progress", "--quiet") == 0
    with open_run(run) as store:
        assert len(store.rows()) == 72
        assert [s["outcome"] for s in store.sessions()] == ["partial: --limit 10", "complete"]


def test_an_existing_run_is_never_overwritten(tmp_path: Path, capsys) -> None:
    run = tmp_path / "r.sqlite"
    args = ("run", "--distance-budget", "0", "--suite", "smoke", "--agent", "solver", "--out", str(run), "--limit", "1", "--quiet",
            "--no-progress")
    assert cubebench(*args) == 0
    assert cubebench(*args) == 2
    assert "resume it" in capsys.readouterr().err


def test_bad_agent_specs_fail_before_anything_runs(tmp_path: Path, capsys) -> None:
    assert cubebench("run", "--distance-budget", "0", "--suite", "smoke", "--agent", "gpt4", "--out", str(tmp_path / "x.sqlite")) == 2
    assert "unknown agent spec" in capsys.readouterr().err
    assert not (tmp_path / "x.sqlite").exists()


@OPENAI
def test_error_episodes_stay_on_resume_and_replay_with_retry_errors(tmp_path: Path) -> None:
    suite = tmp_path / "tiny.json"
    suite.write_text(json.dumps({"name": "tiny", "tiers": ["symbolic"], "depths": [1], "instances": 2,
                                 "rewards": ["none"], "tool_settings": ["basic"]}))
    outage = {"on": True}

    def model(req: RecordedRequest) -> Step:
        return Step.http_error(503) if outage["on"] else Step.reply("Thought: t\nAction: done()")

    run = tmp_path / "e.sqlite"
    with ScriptedServer(model) as srv:
        spec = f"openai-compatible:{srv.base_url}:scripted"
        assert cubebench("run", "--distance-budget", "0", "--suite", str(suite), "--agent", spec, "--out", str(run), "--model-attempts", "1",
                         "--no-progress", "--quiet") == 1  # nothing was evaluated
        with open_run(run) as store:
            assert [r.status for r in store.rows()] == ["error", "error"]
        outage["on"] = False
        assert cubebench("run", "--resume", str(run), "--no-progress", "--quiet") == 1  # still nothing evaluated
        with open_run(run) as store:
            assert [r.status for r in store.rows()] == ["error", "error"]  # finished records are kept
        assert cubebench("run", "--resume", str(run), "--retry-errors", "--no-progress", "--quiet") == 0
    with open_run(run) as store:
        assert [r.status for r in store.rows()] == ["failed", "failed"]
        assert store.retired_count() == 2


def _tiny_suite(tmp_path: Path, **extra) -> Path:
    suite = tmp_path / "tiny1.json"
    suite.write_text(json.dumps({"name": "tiny1", "tiers": ["symbolic"], "depths": [1], "instances": 1,
                                 "rewards": ["none"], "tool_settings": ["basic"], **extra}))
    return suite


@OPENAI
def test_malformed_replies_end_as_failed_and_are_not_retried(tmp_path: Path) -> None:
    run = tmp_path / "g.sqlite"
    with ScriptedServer([], default="I refuse to use the format.") as srv:
        spec = f"openai-compatible:{srv.base_url}:scripted"
        assert cubebench("run", "--distance-budget", "0", "--suite", str(_tiny_suite(tmp_path, max_steps=5)),
                         "--agent", spec, "--out", str(run), "--no-progress", "--quiet") == 0
        assert cubebench("run", "--resume", str(run), "--retry-errors", "--no-progress", "--quiet") == 0
        n_requests = len(srv.requests)
    with open_run(run) as store:
        (key, record), = store.records()
        assert record.status == "failed" and record.n_steps == 5 and record.parse_errors == 5 and record.errors == 0
        assert store.retired_count() == 0 and n_requests == 5  # nothing to replay: the model's failure stands


@OPENAI
@pytest.mark.parametrize("style", ["react", "codeact"])
def test_system_prompt_and_examples_files_reach_the_model(tmp_path: Path, style: str) -> None:
    prompt, examples = tmp_path / "system.txt", tmp_path / "examples.txt"
    prompt.write_text("MY PROMPT {{literal}}\nTASK: {task}\nTOOLS:\n{tool_docs}\n")
    examples.write_text("MY EXAMPLE: done()\n")
    run = tmp_path / "p.sqlite"
    with ScriptedServer([], default="Thought: t\nAction: done()\n```python\ndone()\n```") as srv:
        spec = f"openai-compatible:{srv.base_url}:scripted"
        assert cubebench("run", "--distance-budget", "0", "--suite", str(_tiny_suite(tmp_path)), "--agent", spec,
                         "--style", style, "--system-prompt", str(prompt), "--examples", str(examples),
                         "--out", str(run), "--no-progress", "--quiet") == 0
        system = srv.requests[0].body["messages"][0]["content"]
    assert system.startswith("MY PROMPT {literal}\nTASK: You are solving a 3x3 Rubik's cube")
    assert "- move(seq: str)" in system and system.endswith("\n\nMY EXAMPLE: done()")
    with open_run(run) as store:  # the texts are stored with the run: a resume needs no file
        assert store.get_meta("config")["agent"]["examples"] == "MY EXAMPLE: done()\n"


def test_prompt_options_are_checked_before_the_run(tmp_path: Path, capsys) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_text("Solve it: {task} {state}")
    base = ("run", "--distance-budget", "0", "--suite", "smoke", "--out", str(tmp_path / "x.sqlite"))
    for text in ("Solve it: {task} {state}", "{task.foo}", "{0}", "{task"):  # key, attribute, index, syntax
        bad.write_text(text)
        assert cubebench(*base, "--agent", "openai-compatible:http://127.0.0.1:9/v1:m", "--system-prompt", str(bad)) == 2
        assert "only the placeholders {task} and {tool_docs}" in capsys.readouterr().err
    assert cubebench(*base, "--agent", "solver", "--examples", str(bad)) == 2
    assert "model agents only" in capsys.readouterr().err
    assert cubebench(*base, "--agent", "solver", "--system-prompt", str(tmp_path / "missing.txt")) == 2
    assert "--system-prompt: cannot read" in capsys.readouterr().err
    assert not (tmp_path / "x.sqlite").exists()
    assert cubebench("run", "--resume", str(tmp_path / "x.sqlite"), "--examples", str(bad)) == 2
    assert "drop --examples" in capsys.readouterr().err


def test_play_takes_typed_tool_calls(capsys) -> None:
    from cubebench.runner.human_play import play

    typed = iter(["hello", "spin()", 'move("U\'")', "observe()", 'move("R\'")'])
    out = io.StringIO()
    record = play("symbolic", scramble="R U", read=lambda prompt: next(typed), out=out, colour=False)
    text = out.getvalue()
    assert record.solved and record.n_steps == 3 and record.n_moves == 2
    assert "move(seq: str)" in text and "unknown tool 'spin'" in text and "Solved!" in text


def test_play_starts_from_a_certified_instance() -> None:
    from cubebench.runner.protocols.episodes.instances import shipped_starts
    from cubebench.runner.human_play import play

    starts = shipped_starts(8, "quarter")
    if len(starts) < 4:
        pytest.skip("no shipped quarter-turn depth-8 set")
    out = io.StringIO()
    record = play("symbolic", depth=8, instance=3, read=lambda prompt: "done()", out=out, colour=False)
    assert record.start_facelets == starts[3].state and record.n_steps == 1 and not record.solved
    assert starts[3].state in out.getvalue()


@pytest.mark.parametrize("argv, why", [
    (["--tier", "symbolic", "--window"], "observation is text"),
    (["--tier", "face", "--window"], "needs a display"),
])
def test_play_window_refusals_are_one_clear_line(monkeypatch, capsys, argv, why) -> None:
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    assert cubebench("play", *argv) == 2
    assert why in capsys.readouterr().err


def test_play_colours_sticker_letters() -> None:
    from cubebench.runner.human_play import colourise

    painted = colourise("Front face:\nW R G\nY O B\nLeft   Front\nO O O  G G G")
    assert painted.splitlines()[0] == "Front face:" and painted.splitlines()[3] == "Left   Front"
    assert painted.count("\x1b[0m") == 12
    assert colourise("UUUUUUUUURRRRRRRRRFFFFFFFFFDDDDDDDDDLLLLLLLLLBBBBBBBBB").count("\x1b[") == 108


@pytest.mark.slow
def test_process_backend_matches_the_inline_run(tmp_path: Path) -> None:
    suite = tmp_path / "tiny.json"
    suite.write_text(json.dumps({"name": "tiny", "tiers": ["symbolic", "face"], "depths": [1, 3], "instances": 2,
                                 "rewards": ["none"], "tool_settings": ["basic", "ideal"]}))
    a, b = tmp_path / "a.sqlite", tmp_path / "b.sqlite"
    assert cubebench("run", "--distance-budget", "0", "--suite", str(suite), "--agent", "random", "--out", str(a), "--quiet",
                     "--no-progress") == 0
    assert cubebench("run", "--distance-budget", "0", "--suite", str(suite), "--agent", "random", "--out", str(b), "--backend", "process",
                     "--concurrency", "2", "--quiet", "--no-progress") == 0
    with open_run(a) as sa, open_run(b) as sb:
        assert [(k, [s.action for s in r.steps]) for k, r in sa.records()] == \
               [(k, [s.action for s in r.steps]) for k, r in sb.records()]


def test_an_agent_limited_to_some_tiers_needs_a_restricted_suite(tmp_path: Path, capsys, monkeypatch) -> None:
    from cubebench.runner import specs
    from cubebench.agents.scripted import RandomAgent

    monkeypatch.setattr(specs, "_rl_builder", lambda: lambda checkpoint=None, *, seed=None: RandomAgent(seed))
    run = tmp_path / "mlp.sqlite"
    assert cubebench("run", "--distance-budget", "0", "--suite", "smoke", "--agent", "mlp", "--out", str(run), "--no-progress") == 2
    assert "--tiers symbolic" in capsys.readouterr().err and not run.exists()
    assert cubebench("run", "--distance-budget", "0", "--suite", "smoke", "--agent", "mlp", "--tiers", "symbolic", "--depths", "1",
                     "--out", str(run), "--no-progress", "--quiet") == 0
    with open_run(run) as store:
        assert {r.tier for r in store.rows()} == {"symbolic"} and len(store.rows()) == 6
        assert store.record("symbolic/d1/i00/none/basic").config["obs_format"] == "onehot"


def test_a_policy_that_cannot_load_fails_before_the_run(tmp_path: Path, capsys, monkeypatch) -> None:
    from cubebench.runner import specs

    def broken(checkpoint=None, *, seed=None):
        raise FileNotFoundError("no checkpoint")

    monkeypatch.setattr(specs, "_rl_builder", lambda: broken)
    assert cubebench("run", "--distance-budget", "0", "--suite", "smoke", "--agent", "mlp:/x.pt", "--tiers", "symbolic",
                     "--out", str(tmp_path / "m.sqlite")) == 2
    assert "cannot load the mlp policy (/x.pt)" in capsys.readouterr().err


@pytest.mark.slow
def test_true_distances_are_recorded_with_a_budget(tmp_path: Path) -> None:
    """``--distance-budget`` records the exact distance at the start and after every step.

    Slow: it needs the exact solver's quarter-turn tables (1.7 GB with the half-turn ones), which it
    builds when the cache lacks them; in CI's ``-m slow`` job tests/engine/test_optimal_solver.py has built them.
    """
    from cubebench.runner.run import optimal_tables_ready
    from cubebench.solver.optimal import ensure_tables

    ensure_tables("quarter", progress=False)
    assert optimal_tables_ready("quarter")
    suite = tmp_path / "d2.json"
    suite.write_text(json.dumps({"name": "d2", "tiers": ["symbolic"], "depths": [2], "instances": 1,
                                 "rewards": ["none"], "tool_settings": ["basic"]}))
    run = tmp_path / "d.sqlite"
    assert cubebench("run", "--distance-budget", "5", "--suite", str(suite), "--agent", "random",
                     "--out", str(run), "--no-progress", "--quiet") == 0
    with open_run(run) as store:
        record = store.record("symbolic/d2/i00/none/basic")
    distances = [record.distance_start] + [s.distance for s in record.steps]
    assert distances[0] == 2 and all(isinstance(d, int) for d in distances)
    # one quarter turn per step changes the quarter-turn distance by exactly one
    assert all(abs(a - b) == 1 for a, b in zip(distances, distances[1:]))


@pytest.mark.parametrize("agent", ["mlp", "rnn"])
def test_a_torch_agent_without_torch_names_the_extra(agent: str) -> None:
    """A core install has no torch: ``--agent mlp`` or ``rnn`` must say which extra to install, not show a
    traceback."""
    import subprocess
    import sys

    probe = ("import sys; sys.modules['torch'] = None\n"  # import torch now raises ImportError, as without the extra
             "from cubebench.runner.specs import AgentSpecError, make_agent\n"
             f"try:\n    make_agent({agent!r})\nexcept AgentSpecError as err:\n    print(err)\n")
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and f"the '{agent}' agent needs torch" in run.stdout, run.stderr[-2000:]
    assert 'pip install -e ".[rl]"' in run.stdout


@pytest.mark.parametrize("depth, budget", [(1, 5), (3, 22)])
def test_play_states_and_enforces_the_benchmarks_move_budget_of_the_depth(depth: int, budget: int) -> None:
    """Depth 3 plays under 22 quarter turns, as the suites do (it said 40: play passed no budget)."""
    from cubebench.budgets import move_budget
    from cubebench.runner.human_play import play

    assert move_budget(depth, "quarter") == budget
    typed = iter(['move("' + " ".join(["U"] * (budget + 1)) + '")', "done()"])
    out = io.StringIO()
    record = play("symbolic", depth=depth, seed=0, read=lambda prompt: next(typed), out=out, colour=False)
    text = out.getvalue()
    assert f"Move budget: at most {budget} quarter turns (the benchmark's budget at depth {depth})." in text
    assert f"at most {budget} quarter turns (a half turn counts two) in the whole episode" in text  # the task
    assert record.n_moves == budget and not record.solved  # the move that spent the budget ended the episode




def test_the_play_settings_renderer_reaches_only_the_tier_that_reads_it() -> None:
    """PlaySettings.renderer is set for a whole run, and only the Vertex tier reads it: the other tiers refuse an
    option they do not read (make_cube_env), so the episode's env gets it only where it is read."""
    from cubebench.runner.execute import PlaySettings
    from cubebench.runner.protocols.episodes.plan import EpisodeSpec
    from cubebench.runner.protocols.episodes.play import make_env

    for tier in ("symbolic", "visual", "face"):
        ep = EpisodeSpec(key=f"{tier}-d1", tier=tier, depth=1, instance=0, reward="none", setting="basic",
                         horizon="short", metric="quarter", max_steps=20, env_seed=0, agent_seed=0,
                         source="certified", reset_options={"instance": 0})
        make_env(ep, PlaySettings(renderer="pyrender")).close()
