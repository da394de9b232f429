"""The policy's training data on disk and in tensors: labelled positions as the policy agent's own prompts.

A data folder holds ``train.jsonl`` (one labelled position a line: state, distance, every optimal move),
``probe.jsonl`` (the probe set, :mod:`.positions`) and ``manifest.json`` (what made them, how long it took,
how many training positions are evaluated ones, by depth, and the size and SHA-256 of both files).  It is made
once from ``(metric, starts per depth, probe per depth, seed)`` and reused by a rerun with the same arguments,
once its files are checked whole (:func:`check_data`); a damaged one is made again, which gives the same files
(everything in it is drawn from the seed).  Making it takes minutes (most of it labelling the training paths);
a line every :data:`DATA_PROGRESS_SECONDS` says how far it is.

A batch is drawn by depth first (each depth present equally often), then a position of that depth, then one
of its optimal moves as the target: every optimal move is equally right, so the model learns them all and its
greedy reply is whichever it ranks first.  Prompts are :func:`cubebench.agents.policy.policy_messages` through
the model's chat template, exactly as the agent sends them; the loss is on the reply's tokens (the move and
the end-of-turn token) only.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np

from cubebench.agents.policy import policy_messages
from cubebench.runner import evaluation_keys
from cubebench.solver.oracle import metric_moves

from .integrity import DamagedFile, check_recorded, file_record, read_json, replace_text
from .positions import (PROBE_DEPTHS, PROBE_FRACTION, Position, overlap_by_depth, probe_positions,
                        training_paths)

__all__ = ["DataRequest", "make_data", "check_data", "read_positions", "PolicyEncoder", "sample_batch",
           "START_DEPTHS"]

DATA_PROGRESS_SECONDS = 30.0
"""The longest time between two progress lines while the data is made."""
DATA_FILES = ("train.jsonl", "probe.jsonl")

START_DEPTHS = (4, 5, 6, 7, 8)
"""Depths of the training starts: no quarter-turn position of depth 3 or less is apart from the evaluation
positions up to symmetry, so starts begin at 4 (their paths pass through 3, 2 and 1).  They end at 8, the long
horizon's first depth: a start of 9 costs ten times one of 8 to draw and label, and few paths from 9 avoid every
evaluated position on the way down."""
IGNORE = -100


@dataclass(frozen=True)
class DataRequest:
    """What a data folder is made from (its manifest records it; a rerun with another request remakes it)."""

    metric: str = "quarter"
    starts_per_depth: int = 300
    probe_per_depth: int = 100
    seed: int = 0
    start_depths: tuple[int, ...] = START_DEPTHS

    def to_dict(self) -> dict[str, Any]:
        return {"metric": self.metric, "starts_per_depth": self.starts_per_depth, "probe_per_depth": self.probe_per_depth,
                "seed": self.seed, "start_depths": list(self.start_depths), "probe_fraction": PROBE_FRACTION}


def make_data(folder: Path, request: DataRequest, log: Callable[[str], None] = print) -> dict[str, Any]:
    """The data folder for ``request`` (made now unless ``folder`` already holds it whole); its manifest."""
    manifest_path = folder / "manifest.json"
    if manifest_path.is_file():
        try:
            manifest = check_data(folder)
        except DamagedFile as err:
            log(f"data: {err}: making the data again (the same arguments make the same data)")
        else:
            if manifest.get("request") == request.to_dict():
                return manifest
    folder.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    progress = _Progress(log, started)
    probe: list[Position] = []
    for depth in PROBE_DEPTHS:
        probe += probe_positions(request.metric, depth, request.probe_per_depth, request.seed)
        progress.maybe(f"probe positions of depth {depth} done ({len(probe)} in all)")
    log(f"data: {len(probe)} probe positions ({time.monotonic() - started:.0f} s); listing the evaluated positions "
        "to keep out of training (up to a minute on a busy machine)")
    log(f"data: {len(evaluation_keys())} evaluated symmetry classes kept out ({time.monotonic() - started:.0f} s)")
    seen: dict[str, Position] = {}
    for depth in request.start_depths:
        made = 0
        for path in training_paths(request.metric, depth, request.starts_per_depth, request.seed):
            seen.update((p.facelets, p) for p in path)
            made += 1
            progress.maybe(f"starts of depth {depth}: {made}/{request.starts_per_depth}, {len(seen)} distinct positions")
        log(f"data: starts of depth {depth} done, {len(seen)} distinct positions ({time.monotonic() - started:.0f} s)")
        progress.last = time.monotonic()
    train = sorted(seen.values(), key=lambda p: (p.distance, p.facelets))
    _write_jsonl(folder / "train.jsonl", train)
    _write_jsonl(folder / "probe.jsonl", probe)
    manifest = {"request": request.to_dict(), "seconds": round(time.monotonic() - started, 1),
                "train": _by_depth(train), "probe": _by_depth(probe),
                "evaluated_in_train": {str(d): list(v) for d, v in overlap_by_depth(train).items()},
                "files": {name: file_record(folder / name) for name in DATA_FILES}}
    replace_text(manifest_path, json.dumps(manifest, indent=2) + "\n")
    return manifest


class _Progress:
    """A line at most every :data:`DATA_PROGRESS_SECONDS` (read when called, so a test may change it)."""

    def __init__(self, log: Callable[[str], None], started: float) -> None:
        self.log, self.started, self.last = log, started, started

    def maybe(self, what: str) -> None:
        now = time.monotonic()
        if now - self.last >= DATA_PROGRESS_SECONDS:
            self.log(f"data: {what} ({now - self.started:.0f} s)")
            self.last = now


def check_data(folder: Path) -> dict[str, Any]:
    """The manifest of the data folder ``folder`` once its files are checked whole (their recorded sizes and
    hashes; for a folder made before they were recorded, every line read and the counts by depth compared), else
    :class:`~.integrity.DamagedFile` naming the bad file."""
    manifest = read_json(folder / "manifest.json")
    if not isinstance(manifest, dict) or not isinstance(manifest.get("request"), dict):
        raise DamagedFile(folder / "manifest.json", "damaged (not a data manifest)")
    if "files" in manifest:
        check_recorded(folder, manifest["files"])
        return manifest
    for name, key in (("train.jsonl", "train"), ("probe.jsonl", "probe")):
        if _by_depth(read_positions(folder / name)) != manifest.get(key):
            raise DamagedFile(folder / name, f"damaged (its positions by depth differ from {folder / 'manifest.json'})")
    return manifest


def _by_depth(positions: list[Position]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for p in positions:
        counts[str(p.distance)] = counts.get(str(p.distance), 0) + 1
    return counts


def _write_jsonl(path: Path, positions: list[Position]) -> None:
    replace_text(path, "".join(json.dumps(p.to_dict()) + "\n" for p in positions))


def read_positions(path: Path) -> list[Position]:
    """The labelled positions of a ``train.jsonl`` or ``probe.jsonl``; :class:`~.integrity.DamagedFile` naming the
    file (and the line) if it is missing or a line is not a whole position."""
    if not path.is_file():
        raise DamagedFile(path, "missing")
    positions = []
    for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            positions.append(Position(str(row["state"]), int(row["distance"]), tuple(row["moves"])))
        except (json.JSONDecodeError, KeyError, TypeError, ValueError):
            raise DamagedFile(path, f"damaged (line {number} is not a whole position)") from None
    return positions


class PolicyEncoder:
    """Token ids of the policy's prompts and of each move's reply, for one tokenizer and metric."""

    def __init__(self, tokenizer: Any, metric: str) -> None:
        self.tokenizer = tokenizer
        self.actions = metric_moves(metric)
        self.replies = {move: self._reply(move) for move in self.actions}

    def prompt(self, facelets: str) -> list[int]:
        """The prompt the agent sends for ``facelets``, through the chat template, ready for the reply."""
        return list(self.tokenizer.apply_chat_template(policy_messages(facelets, self.actions),
                                                       add_generation_prompt=True, return_dict=True)["input_ids"])

    def _reply(self, move: str) -> list[int]:
        """The tokens the model writes for ``move``: the move and the end-of-turn token (what the template puts
        after the prompt, cut at the end of the turn)."""
        messages = policy_messages("U" * 54, self.actions)
        prompt = self.prompt("U" * 54)
        full = list(self.tokenizer.apply_chat_template(messages + [{"role": "assistant", "content": move}],
                                                       return_dict=True)["input_ids"])
        if full[:len(prompt)] != prompt:
            raise ValueError("the chat template does not write a reply after the prompt it makes; this tokenizer "
                             "cannot be trained as the policy")
        reply = full[len(prompt):]
        end = self.tokenizer.convert_tokens_to_ids(self.tokenizer.eos_token) if self.tokenizer.eos_token else None
        return reply[: reply.index(end) + 1] if end in reply else reply


def sample_batch(encoder: PolicyEncoder, by_depth: dict[int, list[Position]], size: int,
                 rng: np.random.Generator) -> dict[str, Any]:
    """A batch of ``size`` examples (depth, then position, then optimal move, all drawn from ``rng``):
    right-padded ``input_ids``, ``attention_mask`` and ``labels`` (the reply tokens only), as torch tensors."""
    import torch

    depths = sorted(by_depth)
    rows = []
    for _ in range(size):
        pool = by_depth[depths[int(rng.integers(len(depths)))]]
        position = pool[int(rng.integers(len(pool)))]
        move = position.moves[int(rng.integers(len(position.moves)))]
        prompt, reply = encoder.prompt(position.facelets), encoder.replies[move]
        rows.append((prompt + reply, [IGNORE] * len(prompt) + reply))
    width = max(len(ids) for ids, _ in rows)
    pad = encoder.tokenizer.pad_token_id if encoder.tokenizer.pad_token_id is not None else 0
    ids = torch.full((size, width), pad, dtype=torch.long)
    labels = torch.full((size, width), IGNORE, dtype=torch.long)
    mask = torch.zeros((size, width), dtype=torch.long)
    for row, (tokens, target) in enumerate(rows):
        ids[row, :len(tokens)] = torch.tensor(tokens)
        labels[row, :len(target)] = torch.tensor(target)
        mask[row, :len(tokens)] = 1
    return {"input_ids": ids, "attention_mask": mask, "labels": labels}
