"""Test 7, recovery after the first closed-loop error (the paper's learning curve).

The item plays the closed loop of test 6 until the model's first error (a non-progress move, or a
parse failure, which leaves the cube as it was).  From that post-error state the model gets at
most ``max_attempts`` more decisions (the paper's budget: 4, 5, 6, 7 at depths 1-4; d + 3 beyond),
each from four options: one move from the exact optimal action set and three that make no
progress (as in the closed loop), the optimal one's slot balanced per depth and attempt; every chosen
move is applied, good or bad, and a parse failure costs an attempt and changes nothing.  The item is
solved when the cube is.  Once the cube is farther from solved than the attempts left (``out_of_reach``),
no answer can solve it and the item ends unsolved at once: every metric is as it would be after the
remaining attempts, the model is not asked what cannot count, and every distance asked stays within the
oracle's exact range without tables (an answerer that drifts away, such as the random baseline, never
sends the oracle to the optimal solver).  Episodes whose closed loop
has no error have nothing to recover from: they are counted apart and left out of the metrics,
as in the paper.  Scored by solve rate (Wilson 95 %), P@1 and P@3 (solved within 1 and 3
attempts, over all recovery episodes), the median attempts of the solved ones and the mean over
all, unsolved counted as ``max_attempts``.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from ...engine.state import from_facelets, to_facelets
from ..items import EXACT_RANGE, Ask, Exchange, Item, ItemResult, ask_and_judge, balanced_slot, item_rng
from ..metrics import recovery_metrics
from ...solver.oracle import oracle
from .closed_loop import ClosedLoop, step_prompt, take

PAPER_BUDGET = {1: 4, 2: 5, 3: 6, 4: 7}


def max_attempts(depth: int) -> int:
    """The paper's recovery budget at ``depth`` (B.8.2), extended as d + 3."""
    return PAPER_BUDGET.get(depth, depth + 3)


class Recovery(ClosedLoop):
    """Learning curve / recovery (paper §3.1, §4.6, B.8)."""

    name = "recovery"
    variants: tuple[str, ...] = ("standard",)
    settable = ("max_candidates",)  # closed loop's confidence gate is for its gated variant, which recovery lacks
    items_of = "closed-loop"

    def build(self, depth: int, index: int, rng: np.random.Generator, seed: int, metric: str) -> Item | None:
        item = super().build(depth, index, rng, seed, metric)
        return None if item is None else replace(item, data={**item.data, "max_attempts": max_attempts(depth)})

    def check_depth(self, depth: int, metric: str) -> None:
        """Also refuse depths whose recovery could leave the oracle's exact range: a state asked about is
        at most d + 2 from solved (d + 1 after the error, then never farther than the attempts left), and
        its options one move farther."""
        super().check_depth(depth, metric)
        deepest = EXACT_RANGE.get(metric, 0) - 3
        if depth > deepest:
            raise ValueError(f"{self.name}: depth {depth} is beyond the {deepest} moves ({metric}-turn) within which "
                             "every recovery state is labelled without the optimal solver")

    def play(self, item: Item, variant: str, ask: Ask) -> ItemResult:
        self.check_variant(variant)
        loop = ClosedLoop.play(self, item, "standard", ask)
        if loop.error is not None or loop.score["halt"] is None:
            score = {"recovering": False, "solved_at": None, "max_attempts": item.data["max_attempts"],
                     "error_step": None}
            return ItemResult(loop.exchanges, score, passed=False, error=loop.error, end_state=loop.end_state,
                              moves=loop.moves, counted=loop.error is not None)
        state = from_facelets(loop.end_state)
        exchanges, solved_at, error, out_of_reach = list(loop.exchanges), None, None, False
        distance = oracle(item.metric).distance(state)
        budget = item.data["max_attempts"]
        for attempt in range(1, budget + 1):
            if distance > budget - attempt + 1:  # the attempts left cannot solve it: the outcome is decided
                out_of_reach = True
                break
            ex, options = self._attempt(item, state, attempt, ask)
            exchanges.append(ex)
            if ex.reply.error is not None:
                error = ex.reply.error
                break
            if ex.answer is not None:
                state = take(ex, options, state, item.metric)
                distance = distance if ex.distance is None else ex.distance  # take() sets it
            if distance == 0:
                solved_at = attempt
                break
        score = {"recovering": True, "solved_at": solved_at, "max_attempts": budget,
                 "error_step": len(loop.exchanges), "out_of_reach": out_of_reach}
        return ItemResult(exchanges, score, passed=solved_at is not None, error=error, end_state=to_facelets(state),
                          moves=sum(e.move is not None for e in exchanges))

    def _attempt(self, item: Item, state: np.ndarray, attempt: int, ask: Ask) -> tuple[Exchange, list[str]]:
        rng = item_rng(item.seed, f"{self.name}/attempt{attempt}", item.depth, item.index)
        slot = balanced_slot(item.seed, f"{self.name}/attempt{attempt}", item.depth, item.index, 4)
        progress = oracle(item.metric).progress_moves(state)
        built = step_prompt(item, state, progress[int(rng.integers(len(progress)))], rng, slot,
                            rules=self.rules)
        if built is None:
            raise RuntimeError(f"{item.key}: no three non-progress moves at attempt {attempt}")
        prompt, options = built
        ex = ask_and_judge(ask, prompt, f"attempt {attempt}")
        return ex, options

    def summarize(self, scores: list[dict[str, Any]]) -> dict[str, Any]:
        episodes = [s for s in scores if s["recovering"]]
        m = recovery_metrics([s["solved_at"] for s in episodes], [s["max_attempts"] for s in episodes])
        return {"episodes": len(episodes), "no error": len(scores) - len(episodes), "SR": m["solve_rate"],
                "P@1": m["p_at_1"], "P@3": m["p_at_3"], "Med@Solved": m["med_at_solved"], "Avg@All": m["avg_at_all"]}
