"""The live progress line of a run: episodes done, pass rate so far, tokens, cost, ETA (tqdm)."""

from __future__ import annotations

import sys
import threading
import time
from typing import Any, TextIO

from cubebench.agents.records import EpisodeRecord


class Progress:
    """Counts finished episodes (items, games) and shows them on a tqdm bar (to stderr; off when ``enabled`` is
    False).  Its total is the run's plan, the same count the run's start and end lines give; a ladder's next
    rounds are added to it as they are planned (:meth:`grow`)."""

    def __init__(self, total: int, initial: int = 0, *, enabled: bool | None = None, unit: str = "episode",
                 stream: TextIO | None = None, spent: float = 0.0) -> None:
        from tqdm.auto import tqdm

        self.solved = 0
        self.played = 0
        self.steps = 0
        """Interaction steps taken in this session, counted as they happen (:meth:`step`)."""
        self._lock = threading.Lock()
        self._shown = 0.0
        self.errors = 0
        self.tokens = 0
        self.cost = spent
        """Dollars spent by the run: what earlier sessions spent (``spent``) and this one's episodes."""
        self.bar: Any = tqdm(total=total, initial=initial, desc=f"{unit}s", unit=unit, dynamic_ncols=True,
                             file=stream or sys.stderr, disable=(None if enabled is None else not enabled),
                             smoothing=0.1)

    def update(self, record: EpisodeRecord) -> None:
        """Count one finished episode."""
        self.played += 1
        self.solved += int(record.solved)
        self.errors += int(record.status == "error")
        self.tokens += record.input_tokens + record.output_tokens
        self.cost += record.cost_usd
        self.bar.set_postfix(self._postfix(), refresh=False)
        self.bar.update(1)

    def step(self) -> None:
        """Count one interaction step of a running episode; the bar shows the count at most once a second, so a
        long episode (or a slow model) still shows the run moving."""
        with self._lock:
            self.steps += 1
            now = time.monotonic()
            if now - self._shown < 1.0:
                return
            self._shown = now
        self.bar.set_postfix(self._postfix(), refresh=True)

    def _postfix(self) -> dict[str, str]:
        postfix = {"pass": f"{self.solved / self.played:.2f}"} if self.played else {}
        if self.steps:
            postfix["steps"] = str(self.steps)
        if self.tokens:
            postfix["tok"] = _si(self.tokens)
        if self.cost:
            postfix["$"] = f"{self.cost:.3f}"
        if self.errors:
            postfix["err"] = str(self.errors)
        return postfix

    def grow(self, more: int) -> None:
        """Count ``more`` newly planned items in the total (a ladder's next rounds)."""
        if more:
            self.bar.total = (self.bar.total or 0) + more
            self.bar.refresh()

    def close(self) -> None:
        self.bar.close()


def _si(n: int) -> str:
    for unit, size in (("M", 1_000_000), ("k", 1_000)):
        if n >= size:
            return f"{n / size:.1f}{unit}"
    return str(n)
