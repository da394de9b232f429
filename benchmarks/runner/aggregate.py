"""Grouping stored episodes into the cells of the paper's tables.

A cell is a set of finished episodes sharing some of (tier, horizon, depth,
reward, setting); its pass rate is solved / finished (``error`` episodes
count as unsolved, and are also counted separately so a report can warn).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Callable, Hashable, Iterable, TypeVar

from .rows import StoredRow
from .stats import Rate

_K = TypeVar("_K", bound=Hashable)
_R = TypeVar("_R", bound=StoredRow)


@dataclass(frozen=True)
class Cell:
    """Pass rate and bookkeeping of one group of episodes."""

    rate: Rate
    errors: int
    moves: int
    tokens: int
    cost_usd: float


def cell_of(rows: Iterable[StoredRow]) -> Cell:
    rows = list(rows)
    return Cell(
        rate=Rate(sum(r.solved for r in rows), len(rows)),
        errors=sum(r.status == "error" for r in rows),
        moves=sum(r.n_moves for r in rows),
        tokens=sum(r.input_tokens + r.output_tokens for r in rows),
        cost_usd=sum(r.cost_usd for r in rows),
    )


def group(rows: Iterable[_R], key: Callable[[_R], _K]) -> dict[_K, Cell]:
    """Cells keyed by ``key(row)`` (rows of one protocol, in its words)."""
    buckets: dict[_K, list[_R]] = defaultdict(list)
    for r in rows:
        buckets[key(r)].append(r)
    return {k: cell_of(v) for k, v in buckets.items()}


def ordered(values: Iterable[str], order: Iterable[str]) -> list[str]:
    """``values`` (deduplicated) in ``order``, unknown ones after, sorted."""
    present = set(values)
    known = [v for v in order if v in present]
    return known + sorted(present - set(known))
