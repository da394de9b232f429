"""The compact policy's training, on a tiny random-weight model built here (no download): its examples are the
agent's own prompts, the loss is on the reply only, a run lowers the loss, resumes after an interruption with the
history an uninterrupted run has, writes ``training.json``, and its adapter plays through the runner; GRPO runs,
resumes and plays too (slow)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from helpers import needs

pytestmark = needs("transformers", "torch", "peft")

from cubebench.agents.llm.tiny_model import build_tiny_chat_model  # noqa: E402
from cubebench.agents.policy import policy_messages  # noqa: E402
from cubebench.solver.oracle import metric_moves  # noqa: E402
from cubebench.training.policy_data import IGNORE, DataRequest, PolicyEncoder, make_data, read_positions, sample_batch  # noqa: E402,E501

SMALL = DataRequest(starts_per_depth=3, probe_per_depth=3, start_depths=(4, 5))


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_chat_model(tmp_path_factory.mktemp("tiny") / "model", hidden_size=32, layers=2)


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("data") / "data"
    make_data(folder, SMALL, log=lambda _: None)
    return folder


def test_examples_are_the_agents_prompts_with_the_loss_on_the_reply_only(tiny: Path, data: Path) -> None:
    from cubebench.agents.llm.hf import load_hf_model

    tokenizer = load_hf_model(str(tiny)).tokenizer
    encoder = PolicyEncoder(tokenizer, "quarter")
    position = read_positions(data / "train.jsonl")[-1]
    sent = tokenizer.apply_chat_template(policy_messages(position.facelets, metric_moves("quarter")),
                                         add_generation_prompt=True, return_dict=True)["input_ids"]
    assert encoder.prompt(position.facelets) == list(sent)
    for move, reply in encoder.replies.items():
        assert tokenizer.decode(reply, skip_special_tokens=True) == move and reply[-1] == tokenizer.eos_token_id
    by_depth = {p.distance: [p] for p in read_positions(data / "train.jsonl")}
    batch = sample_batch(encoder, by_depth, 6, np.random.default_rng(3))
    again = sample_batch(encoder, by_depth, 6, np.random.default_rng(3))
    assert all((batch[k] == again[k]).all() for k in batch)
    for row in range(6):
        labelled = batch["labels"][row][batch["labels"][row] != IGNORE].tolist()
        ids = batch["input_ids"][row][batch["attention_mask"][row] == 1].tolist()
        assert ids[-len(labelled):] == labelled and labelled in list(encoder.replies.values())


def test_batched_reply_logprobs_equal_one_at_a_time(tiny: Path) -> None:
    import torch

    from cubebench.agents.llm.hf import load_hf_model
    from cubebench.training.grpo import group_advantages, policy_gradient_loss, reply_logprobs

    loaded = load_hf_model(str(tiny))
    encoder = PolicyEncoder(loaded.tokenizer, "quarter")
    pairs = [(encoder.prompt("U" * 54), encoder.replies["R"]), (encoder.prompt("U" * 54)[:-3], encoder.replies["B'"])]
    with torch.no_grad():
        together = reply_logprobs(loaded.model, pairs)
        alone = torch.cat([reply_logprobs(loaded.model, [p]) for p in pairs])
    assert torch.allclose(together, alone, atol=1e-5) and (together < 0).all()
    assert group_advantages([1.0, 0.0, 0.0, 1.0]) == pytest.approx([1.0, -1.0, -1.0, 1.0], abs=1e-3)
    assert group_advantages([0.3, 0.3]) == [0.0, 0.0]
    assert float(policy_gradient_loss(together, [1.0, -1.0])) == pytest.approx(float(-(together[0] - together[1]) / 2))


def sft(tiny: Path, data: Path, out: Path, *extra: str) -> int:
    from cubebench.training.policy_sft import main

    if not (out / "data").exists():
        out.mkdir(parents=True, exist_ok=True)
        shutil.copytree(data, out / "data")
    return main(["--base", str(tiny), "--out", str(out), "--starts-per-depth", "3", "--probe-per-depth", "3",
                 "--lr", "1e-2", "--batch-size", "8", "--save-every", "5", "--eval-every", "10", "--eval-slice", "2",
                 "--threads", "1", *extra])


@pytest.mark.slow
@pytest.mark.ci
def test_sft_lowers_the_loss_resumes_exactly_and_its_adapter_plays(tiny: Path, data: Path, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from cubebench.runner.cli import main
    from cubebench.training import run_state

    whole = tmp_path / "whole"
    assert sft(tiny, data, whole, "--steps", "30") == 0
    summary = json.loads((whole / "training.json").read_text())
    losses = [h["loss"] for h in summary["history"]]
    assert len(losses) == 30 and np.mean(losses[-5:]) < np.mean(losses[:5])
    assert [p["step"] for p in summary["probes"]] == [10, 20, 30] and summary["probes"][-1]["final"]
    assert summary["sessions"][0]["cpu"] and summary["data"]["request"]["starts_per_depth"] == 3

    cut = tmp_path / "cut"
    real = run_state.RunState.log_step

    def interrupted(self, **fields):
        real(self, **fields)
        if self.step == 17:
            raise KeyboardInterrupt

    monkeypatch.setattr(run_state.RunState, "log_step", interrupted)
    with pytest.raises(KeyboardInterrupt):
        sft(tiny, data, cut, "--steps", "30")
    monkeypatch.setattr(run_state.RunState, "log_step", real)
    assert sft(tiny, data, cut, "--steps", "30") == 0  # resumes at the step-15 checkpoint
    resumed = json.loads((cut / "training.json").read_text())
    assert [h["step"] for h in resumed["history"]] == list(range(1, 31))
    assert [h["loss"] for h in resumed["history"]] == pytest.approx(losses, rel=1e-4)
    assert len(resumed["sessions"]) == 2 and resumed["sessions"][1]["from_step"] == 15

    assert main(["run", "--suite", "smoke", "--tiers", "symbolic", "--depths", "1", "--agent", f"hf:{whole}",
                 "--style", "policy", "--out", str(tmp_path / "r.sqlite"), "--no-progress", "--quiet"]) == 0


@pytest.mark.slow
def test_grpo_from_the_sft_adapter_runs_resumes_and_plays(tiny: Path, data: Path, tmp_path: Path) -> None:
    from cubebench.runner.cli import main
    from cubebench.training.policy_grpo import main as grpo

    adapter = tmp_path / "sft"
    assert sft(tiny, data, adapter, "--steps", "5") == 0
    out = tmp_path / "grpo"
    argv = ["--adapter", str(adapter), "--out", str(out), "--group", "3", "--depths", "4", "--save-every", "1",
            "--threads", "1"]
    assert grpo([*argv, "--steps", "1"]) == 0
    assert grpo([*argv, "--steps", "1"]) == 0  # done: nothing more to play
    summary = json.loads((out / "training.json").read_text())
    assert [h["step"] for h in summary["history"]] == [1] and summary["probes"][-1]["final"]
    assert {"reward", "solved", "loss", "skipped"} <= set(summary["history"][0])
    assert main(["run", "--suite", "smoke", "--tiers", "symbolic", "--depths", "1", "--agent", f"hf:{out}",
                 "--style", "policy", "--out", str(tmp_path / "r.sqlite"), "--no-progress", "--quiet"]) == 0


def test_a_broken_base_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from cubebench.training.policy_sft import main

    broken = tmp_path / "model.gguf"
    broken.write_bytes(b"GGUF" + bytes(20))
    assert main(["--base", str(broken), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "damaged GGUF header" in err[0] and not (tmp_path / "out").exists()


def test_the_shared_prompt_prefix_is_run_once_with_the_same_loss_and_gradients(tiny: Path, data: Path,
                                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    from cubebench.training import policy_sft
    from cubebench.training.models import TrainingBase, load_trainable

    _, model = load_trainable(TrainingBase(tiny, str(tiny)), r=4)
    encoder = PolicyEncoder(load_trainable(TrainingBase(tiny, str(tiny)), r=4)[0], "quarter")
    by_depth: dict[int, list] = {}
    for position in read_positions(data / "train.jsonl"):
        by_depth.setdefault(position.distance, []).append(position)
    batch = sample_batch(encoder, by_depth, 6, np.random.default_rng(1))
    assert policy_sft._common_prefix(batch["input_ids"]) > 20

    def loss_and_grads() -> tuple[float, list]:
        model.zero_grad()
        loss = policy_sft._loss(model, batch, "fp32")
        loss.backward()
        return float(loss), [p.grad.clone() for p in model.parameters() if p.requires_grad]

    shared, grads = loss_and_grads()
    monkeypatch.setattr(policy_sft, "_common_prefix", lambda ids: 0)
    whole, plain = loss_and_grads()
    assert shared == pytest.approx(whole, abs=1e-6)
    assert max(float((a - b).abs().max()) for a, b in zip(grads, plain)) < 1e-5
