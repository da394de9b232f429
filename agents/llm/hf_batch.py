"""Batched generation for an in-process model: concurrent callers share one forward pass.

The runner plays concurrent episodes on threads, and every episode's client of one ``hf:`` model calls the
same weights.  One call at a time leaves most of a CPU's matrix units idle (a 130-token prompt is a thin
matrix); a :class:`BatchedGenerator` gathers the requests that arrive together into one left-padded
``generate`` call and hands each caller its own tokens, so N episodes cost about one batch a step instead
of N calls (``benchmarks/bench_hf_batch.py``, docs/performance.md).

Greedy requests batch with each other, and so do sampled ones of one temperature that ask no seed; a
sampled request with a seed runs alone, so its seed still fixes its reply.  Greedy replies are the
unbatched ones up to floating-point rounding in the padded rows (the tests compare them).  A request
waits at most ``linger_s`` for company once the first of a batch has arrived, and never waits for more
callers than are open (each client opens a session for its episode and closes it at the end).
"""

from __future__ import annotations

import queue
import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

__all__ = ["GenerationRequest", "BatchedGenerator", "eos_ids"]


@dataclass(frozen=True)
class GenerationRequest:
    """One prompt, already tokenized, and how to continue it."""

    ids: tuple[int, ...]
    max_new_tokens: int
    temperature: float | None = None
    """``None`` or 0: greedy."""
    stop: tuple[str, ...] = ()
    seed: int | None = None

    @property
    def sampled(self) -> bool:
        return bool(self.temperature and self.temperature > 0)

    @property
    def batch_key(self) -> tuple[Any, ...] | None:
        """Requests with equal keys share a batch; ``None``: this one runs alone (seeded sampling)."""
        if self.sampled and self.seed is not None:
            return None
        return (self.temperature if self.sampled else None, self.stop)


class BatchedGenerator:
    """Runs ``generate`` for many threads, in batches (see the module docstring).  ``lock`` is held during
    every forward pass, so a trainer sharing the model (GRPO) can take it between rollouts."""

    def __init__(self, model: Any, tokenizer: Any, device: str, lock: threading.Lock, *, max_batch: int = 32,
                 linger_s: float = 0.05) -> None:
        self.model, self.tokenizer, self.device, self.lock = model, tokenizer, device, lock
        self.max_batch, self.linger_s = max_batch, linger_s
        self._queue: queue.Queue[tuple[GenerationRequest, Future]] = queue.Queue()
        self._sessions = 0
        self._count = threading.Lock()
        self._worker: threading.Thread | None = None
        self.batches: list[int] = []
        """The size of every batch run so far (what the benchmark and the tests read)."""

    def open_session(self) -> None:
        """One more caller that will keep asking (an episode's client); a batch waits for at most this many."""
        with self._count:
            self._sessions += 1

    def close_session(self) -> None:
        with self._count:
            self._sessions = max(0, self._sessions - 1)

    def generate(self, request: GenerationRequest) -> list[int]:
        """The new token ids of ``request`` (its prompt not included), ending at the first end-of-sequence
        token or at its own ``max_new_tokens``."""
        if request.batch_key is None:
            return self.run_batch([request])[0]
        done: Future = Future()
        self._queue.put((request, done))
        self._start()
        return done.result()

    def _start(self) -> None:
        with self._count:
            if self._worker is None:
                self._worker = threading.Thread(target=self._loop, name="cubebench-hf-batch", daemon=True)
                self._worker.start()

    def _loop(self) -> None:
        while True:
            batch = self._gather()
            for key in dict.fromkeys(r.batch_key for r, _ in batch):
                group = [(r, f) for r, f in batch if r.batch_key == key]
                try:
                    results = self.run_batch([r for r, _ in group])
                except BaseException as err:  # noqa: BLE001 - every caller of the batch gets the failure
                    for _, future in group:
                        future.set_exception(err)
                    continue
                for (_, future), tokens in zip(group, results):
                    future.set_result(tokens)

    def _gather(self) -> list[tuple[GenerationRequest, Future]]:
        batch = [self._queue.get()]
        deadline = time.monotonic() + self.linger_s
        while len(batch) < min(self.max_batch, max(1, self._sessions)):
            left = deadline - time.monotonic()
            try:
                batch.append(self._queue.get(timeout=left) if left > 0 else self._queue.get_nowait())
            except queue.Empty:
                break
        return batch

    def run_batch(self, requests: list[GenerationRequest]) -> list[list[int]]:
        """Generate for ``requests`` in one call now, in this thread (they must share a batch key)."""
        import torch

        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else self.tokenizer.eos_token_id
        width = max(len(r.ids) for r in requests)
        ids = torch.full((len(requests), width), pad, dtype=torch.long)
        mask = torch.zeros((len(requests), width), dtype=torch.long)
        for row, request in enumerate(requests):
            ids[row, width - len(request.ids):] = torch.tensor(request.ids, dtype=torch.long)
            mask[row, width - len(request.ids):] = 1
        first = requests[0]
        options = self._options(first, max(r.max_new_tokens for r in requests), pad)
        with self.lock, torch.inference_mode():
            if first.sampled and first.seed is not None:
                torch.manual_seed(int(first.seed))
            out = self.model.generate(input_ids=ids.to(self.device), attention_mask=mask.to(self.device), **options)
        self.batches.append(len(requests))
        eos = eos_ids(self.tokenizer, self.model)
        return [_trimmed(out[row, width:].tolist(), eos, pad, r.max_new_tokens) for row, r in enumerate(requests)]

    def _options(self, request: GenerationRequest, max_new_tokens: int, pad: int) -> dict[str, Any]:
        options: dict[str, Any] = {"max_new_tokens": max_new_tokens, "pad_token_id": pad, "do_sample": request.sampled}
        if request.sampled:
            options["temperature"] = float(request.temperature or 1.0)
        else:  # greedy: drop sampling defaults a model's generation_config may carry (they would only warn)
            options.update(temperature=None, top_p=None, top_k=None)
        if request.stop:
            options.update(stop_strings=list(request.stop), tokenizer=self.tokenizer)
        return options


def _trimmed(tokens: list[int], eos: set[int], pad: int, limit: int) -> list[int]:
    """A row's own tokens: up to its first end-of-sequence token (kept), else its limit, without the padding
    that follows a row finished before the others."""
    for k, token in enumerate(tokens[:limit]):
        if token in eos:
            return tokens[: k + 1]
    kept = tokens[:limit]
    while kept and kept[-1] == pad and pad not in eos:
        kept.pop()
    return kept


def eos_ids(tokenizer: Any, model: Any) -> set[int]:
    """Every id that ends a reply: the tokenizer's end-of-sequence and the model's generation config's."""
    ids = {tokenizer.eos_token_id}
    configured = getattr(getattr(model, "generation_config", None), "eos_token_id", None)
    ids.update(configured if isinstance(configured, list) else [configured])
    return {i for i in ids if i is not None}
