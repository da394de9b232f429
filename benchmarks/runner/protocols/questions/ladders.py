"""Ladders in a run: where each one stands, rebuilt from its stored rounds, and which round comes next.

A ladder (:mod:`cubebench.tasks.ladder`) is adaptive, so its rounds cannot all be planned when the run
starts.  Its first round is planned with the run; every time the run's backend has played what was
pending, :func:`next_rounds` replays each ladder from the store (a round counts once all its items
have a record; the right answers are the items ``solved``) and plans the round its level calls for.
A resumed run does the same from whatever the store holds, so a ladder resumes mid-climb, at the
round it was playing.  A round with an ``error`` item (a failed model call) holds its ladder still:
``--retry-errors`` asks the item again and the ladder goes on.  A stored round that the replayed climb
does not reach, or reaches at another level (a damaged record played again with another answer changed
the climb below it), makes the ladder ``inconsistent``: it is reported as such and not continued, never
rescored silently.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from cubebench.tasks.ladder import Ladder

from ...planning import PlannedSpec
from .plan import ItemRow, ItemSpec, ladder_round
from .suite import QuestionSuite

LadderKey = tuple[str, str, int]
"""(test, variant, run)."""


@dataclass
class LadderProgress:
    """One ladder: the rounds it has finished, what state it is in, and the next round's number."""

    ladder: Ladder
    state: str
    """``finished``, ``playing`` (a round is planned and not yet all answered), ``stalled`` (a round holds
    an ``error`` item) or ``inconsistent`` (a stored round's level is not where the replayed ladder stands)."""
    next_round: int
    errors: int = 0


def ladder_progress(suite: QuestionSuite, plan: list[PlannedSpec], rows: list[ItemRow]) -> dict[LadderKey, LadderProgress]:
    """Every ladder of ``suite``, replayed from the planned rounds and the stored summary rows."""
    done = {row.key: row for row in rows}
    rounds: dict[LadderKey, dict[int, list[ItemSpec]]] = defaultdict(lambda: defaultdict(list))
    for spec in plan:
        if isinstance(spec, ItemSpec) and spec.ladder_run is not None and spec.ladder_round is not None:
            rounds[(spec.test, spec.variant, spec.ladder_run)][spec.ladder_round].append(spec)
    progress = {}
    for name, grid in suite.ladders.items():
        for variant in grid.variants:
            for run in range(grid.runs):
                key = (name, variant, run)
                progress[key] = _replay(Ladder(grid.rules), rounds.get(key, {}), done)
    return progress


def _replay(ladder: Ladder, rounds: dict[int, list[ItemSpec]], done: dict[str, ItemRow]) -> LadderProgress:
    """Record the ladder's rounds in order while they are complete; say where it stopped."""
    t = 0
    while not ladder.finished:
        specs = rounds.get(t)
        if not specs:
            return LadderProgress(ladder, "playing", t)
        if any(spec.depth != ladder.level for spec in specs):
            return LadderProgress(ladder, "inconsistent", t)
        got = [done.get(spec.key) for spec in specs]
        errors = sum(row is not None and row.status == "error" for row in got)
        if errors:
            return LadderProgress(ladder, "stalled", t, errors)
        if any(row is None for row in got):
            return LadderProgress(ladder, "playing", t)
        ladder.record(sum(bool(row.solved) for row in got if row is not None))
        t += 1
    return LadderProgress(ladder, "inconsistent" if any(r >= t for r in rounds) else "finished", t)


def next_rounds(suite: QuestionSuite, plan: list[PlannedSpec], rows: list[ItemRow]) -> list[ItemSpec]:
    """The rounds to plan now: one for every ladder whose planned rounds are all answered."""
    planned = {(s.test, s.variant, s.ladder_run, s.ladder_round) for s in plan
               if isinstance(s, ItemSpec) and s.ladder_run is not None}
    new: list[ItemSpec] = []
    for (name, variant, run), p in ladder_progress(suite, plan, rows).items():
        if p.state == "playing" and (name, variant, run, p.next_round) not in planned:
            new += ladder_round(suite, name, variant, run, p.next_round, p.ladder.level)
    return new
