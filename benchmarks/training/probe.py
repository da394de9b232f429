"""One-step accuracy of a policy model: is its greedy reply to a position one of that position's optimal moves?

The reply is generated and read exactly as the policy agent does (:func:`cubebench.agents.policy.policy_messages`,
:func:`~cubebench.agents.policy.parse_policy_reply`, greedy decoding in batches, in the precision the ``hf:`` client
uses on this machine); a reply that is not a move counts as wrong.  Measured on the probe set (:mod:`.positions`), it is accuracy on positions the training never
showed the model in any of their 48 spellings.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from pathlib import Path
from typing import Any

from cubebench.agents.llm.hf import inference_precision, load_hf_model, parse_hf_spec
from cubebench.agents.llm.hf_files import HFModelUnavailable
from cubebench.agents.llm.hf_batch import BatchedGenerator, GenerationRequest
from cubebench.agents.policy import POLICY_MAX_TOKENS, parse_policy_reply
from cubebench.runner import wilson_interval
from cubebench.runner.specs import SFT, shipped_adapter

from .policy_data import PolicyEncoder, read_positions
from .positions import Position
from .run_state import RunState

__all__ = ["one_step_accuracy", "accuracy_table", "measure_probe"]


def one_step_accuracy(model: Any, tokenizer: Any, positions: list[Position], metric: str, *, device: str = "cpu",
                      batch_size: int = 64) -> dict[int, tuple[int, int]]:
    """``{depth: (optimal replies, positions)}`` of ``model`` (put in eval mode; call ``model.train()`` after)."""
    model.eval()
    encoder = PolicyEncoder(tokenizer, metric)
    generator = BatchedGenerator(model, tokenizer, device, threading.Lock(), precision=inference_precision(device))
    counts: dict[int, list[int]] = {}
    for start in range(0, len(positions), batch_size):
        chunk = positions[start:start + batch_size]
        requests = [GenerationRequest(ids=tuple(encoder.prompt(p.facelets)), max_new_tokens=POLICY_MAX_TOKENS)
                    for p in chunk]
        for position, tokens in zip(chunk, generator.run_batch(requests)):
            seen = counts.setdefault(position.distance, [0, 0])
            seen[0] += _optimal(tokenizer.decode(tokens, skip_special_tokens=True), position, encoder.actions)
            seen[1] += 1
    return {depth: (right, total) for depth, (right, total) in sorted(counts.items())}


def _optimal(reply: str, position: Position, actions: tuple[str, ...]) -> bool:
    try:
        return parse_policy_reply(reply, actions) in position.moves
    except ValueError:
        return False


def accuracy_table(counts: dict[int, tuple[int, int]]) -> list[dict[str, Any]]:
    """Rows ``{depth, right, n, acc, low, high}`` (Wilson 95 % intervals), for ``training.json`` and the docs."""
    rows = []
    for depth, (right, total) in sorted(counts.items()):
        low, high = wilson_interval(right, total)
        rows.append({"depth": depth, "right": right, "n": total, "acc": round(right / total, 4) if total else None,
                     "low": round(low, 4), "high": round(high, 4)})
    return rows


def measure_probe(state: RunState, model: Any, tokenizer: Any, probe: list[Position], metric: str,
                  per_depth: int | None) -> None:
    """Measure one-step accuracy by depth on the first ``per_depth`` probe positions of each depth (``None``: all
    of them, the final measurement), log it in the run's history, and put the model back in training mode."""
    started = time.monotonic()
    chosen: list[Position] = []
    for depth in sorted({p.distance for p in probe}):
        of_depth = [p for p in probe if p.distance == depth]
        chosen += of_depth if per_depth is None else of_depth[:per_depth]
    print(f"probe at step {state.step}: measuring {len(chosen)} positions", flush=True)
    rows = accuracy_table(one_step_accuracy(model, tokenizer, chosen, metric))
    state.log_probe(rows, final=per_depth is None, seconds=time.monotonic() - started)
    model.train()


def main(argv: list[str] | None = None) -> int:
    """``python -m cubebench.training.probe MODEL --data DIR``: one-step accuracy of an ``hf:`` model spec (or
    ``sft``, the shipped adapter) on a data folder's probe set, as a table and as JSON (``--json FILE``)."""
    p = argparse.ArgumentParser(prog="python -m cubebench.training.probe", description=(main.__doc__ or "").split("\n")[0])
    p.add_argument("model", help="hf:<model folder, .gguf or adapter>[::<adapter>], or sft")
    p.add_argument("--data", type=Path, required=True, help="a policy data folder (policy_sft's OUT/data)")
    p.add_argument("--json", type=Path, default=None, help="also write the rows here")
    args = p.parse_args(argv)
    spec = f"hf:{shipped_adapter()}" if args.model == SFT else args.model
    try:
        if not spec.startswith("hf:"):
            raise ValueError(f"the probe measures an in-process model: hf:PATH or sft, not {args.model!r}")
        probe = read_positions(args.data / "probe.jsonl")
        loaded = load_hf_model(*parse_hf_spec(spec[3:]))
    except (HFModelUnavailable, ValueError, OSError) as err:
        print(f"probe: error: {err}", file=sys.stderr)
        return 2
    started = time.monotonic()
    rows = accuracy_table(one_step_accuracy(loaded.model, loaded.tokenizer, probe, "quarter", device=loaded.device))
    for row in rows:
        print(f"depth {row['depth']}: {row['right']}/{row['n']} = {row['acc']:.2f} [{row['low']:.2f}, {row['high']:.2f}]")
    print(f"({len(probe)} probe positions in {time.monotonic() - started:.0f} s; {args.model})")
    if args.json is not None:
        args.json.write_text(json.dumps({"model": args.model, "rows": rows}, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
