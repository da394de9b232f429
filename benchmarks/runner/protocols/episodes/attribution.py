"""Failure attribution from the three tool settings on the same instances.

For each tier and horizon, episodes are *paired*: an instance counts only
when it finished in every setting compared (same tier, depth, instance and
reward).  With P_basic, P_standard and P_ideal the pass rates on the paired
set (definitions in ``docs/runner.md``):

- planning gap     = P_standard - P_basic: what a solver fed by the agent's own
  54-letter state adds, i.e. failures of the agent's planning;
- translation gap  = P_ideal - P_standard: what a solver that reads the state
  itself adds, i.e. failures to translate perception into the solver's input;
- exploration failures (partial-view tiers only) = the share of ideal-setting
  episodes that ended unsolved without ever getting a solution from
  ``solve_current()`` (every call refused for unseen faces, or none made).

The discordant counts (solved in one setting, not the other) come with each
gap, since a gap of 0 can hide equal numbers of wins and losses.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Iterable

from cubebench.tiers import tier_spec

from ...stats import Rate
from ...store import RunStore
from .plan import EpisodeRow


@dataclass(frozen=True)
class Gap:
    """``better - worse`` pass rates on ``n`` paired instances, with discordant counts."""

    n: int
    gained: int
    lost: int

    @property
    def value(self) -> float | None:
        return (self.gained - self.lost) / self.n if self.n else None

    def format(self) -> str:
        if not self.n:
            return "-"
        return f"{self.value:+.2f} (+{self.gained}/-{self.lost})"


@dataclass(frozen=True)
class Attribution:
    """The attribution of one (tier, horizon) cell."""

    tier: str
    horizon: str
    basic: Rate
    standard: Rate
    ideal: Rate
    planning: Gap
    translation: Gap
    exploration: Rate | None


def _pairs(rows: Iterable[EpisodeRow]) -> dict[tuple, dict[str, bool]]:
    """(tier, horizon, depth, instance, reward) -> {setting: solved}."""
    table: dict[tuple, dict[str, bool]] = defaultdict(dict)
    for r in rows:
        table[(r.tier, r.horizon, r.depth, r.instance, r.reward)][r.setting] = r.solved
    return table


def _gap(outcomes: list[dict[str, bool]], better: str, worse: str) -> Gap:
    paired = [o for o in outcomes if better in o and worse in o]
    gained = sum(o[better] and not o[worse] for o in paired)
    lost = sum(o[worse] and not o[better] for o in paired)
    return Gap(len(paired), gained, lost)


def _rate(outcomes: list[dict[str, bool]], setting: str) -> Rate:
    full = [o for o in outcomes if {"basic", "standard", "ideal"} <= set(o)]
    return Rate(sum(o[setting] for o in full), len(full))


def exploration_failed(store: RunStore, key: str) -> bool:
    """An unsolved ideal episode that never got a solution from ``solve_current()``."""
    record = store.record(key)
    if record.solved:
        return False
    return not any(c.name == "solve_current" and not c.error for s in record.steps for c in s.tool_calls)


def attribute(store: RunStore, rows: list[EpisodeRow]) -> list[Attribution]:
    """Attribution per (tier, horizon) present with all three settings; empty when a setting is missing."""
    if not {"basic", "standard", "ideal"} <= {r.setting for r in rows}:
        return []
    pairs = _pairs(rows)
    cells: dict[tuple[str, str], list[dict[str, bool]]] = defaultdict(list)
    for (tier, horizon, *_), outcome in pairs.items():
        cells[(tier, horizon)].append(outcome)
    result = []
    for (tier, horizon), outcomes in cells.items():
        exploration = None
        if tier_spec(tier).partial:
            ideal = [r for r in rows if r.tier == tier and r.horizon == horizon and r.setting == "ideal"]
            exploration = Rate(sum(exploration_failed(store, r.key) for r in ideal), len(ideal))
        result.append(Attribution(
            tier=tier, horizon=horizon, basic=_rate(outcomes, "basic"), standard=_rate(outcomes, "standard"),
            ideal=_rate(outcomes, "ideal"), planning=_gap(outcomes, "standard", "basic"),
            translation=_gap(outcomes, "ideal", "standard"), exploration=exploration,
        ))
    return result
