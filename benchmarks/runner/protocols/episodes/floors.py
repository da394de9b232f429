"""The blind floor of an episode run: what the strongest blind agent we have solves of each cell's instances.

A blind agent never looks: it solves a start exactly when the one walk it plays passes through solved from
there.  ``--agent blind`` plays it (:class:`~cubebench.agents.scripted.BlindAgent`); here its walks are played
from every start of the run without an env (:func:`cubebench.budgets.solved_by`), so the report and ``compare``
print beside each cell's pass rate the share of the cell's instances a blind agent solves under the run's
rules and budget: the episode runs' chance row, as a question run prints chance (docs/runner.md, "Rules").

* ``paper`` (no move cap): the agent plays the sweep of every position within 4 turns of solved, cut into move
  calls of at most :data:`~cubebench.agents.tools.MAX_ARG_CHARS` characters, one per interaction step
  (:func:`~cubebench.agents.scripted.blind_calls`); the sweep is one fixed walk, so the floor is exactly what
  ``--agent blind`` scores.  The quarter-turn sweep (24,530 turns) takes 15 calls, so in 20 steps every start
  within 4 quarter turns is solved; the half-turn one (66,248 turns) takes 44, so 20 steps cover every start within
  3 face turns and part of depth 4.  Deeper starts are never solved: the sweep stays within 4 turns.
* ``strict`` (each depth's move budget): the seeded walk of :func:`~cubebench.budgets.blind_walk`, the mean over
  :data:`FLOOR_SEEDS` seeds (the agent draws its seed per episode, so a run's blind score scatters around it).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Iterable

import numpy as np
from cubebench import make_cube_env
from cubebench.agents.scripted import blind_calls
from cubebench.budgets import move_budget, solved_by
from cubebench.engine.state import from_facelets

from ...execute import stored_rules
from ...store import RunStore
from .instances import shipped_starts
from .plan import EpisodeRow, EpisodeSpec

__all__ = ["FLOOR_SEEDS", "BlindFloor", "blind_floor", "run_rules"]

FLOOR_SEEDS = 16
"""Walks a ``strict`` floor is the mean over (seeds 0-15)."""


def run_rules(config: dict[str, Any]) -> str:
    """The rules an episode run played under: the stored choice, ``strict`` for a run from before rules."""
    return stored_rules(config) or "strict"


@dataclass(frozen=True)
class BlindFloor:
    """The blind agent's chance of solving each start of a run, by (depth, instance)."""

    rules: str
    chance: dict[tuple[int, int], float]

    def share(self, rows: Iterable[EpisodeRow]) -> float | None:
        """The expected share of ``rows``' episodes a blind agent solves (``None``: no row, or a start not planned)."""
        values = [self.chance.get((r.depth, r.instance)) for r in rows]
        if not values or any(v is None for v in values):
            return None
        return float(np.mean([v for v in values if v is not None]))

    @property
    def label(self) -> str:
        """The row label the tables print."""
        return f"blind floor ({self.rules})"


def blind_floor(store: RunStore) -> BlindFloor:
    """The blind floor of every planned start of an episode run, under the rules it played."""
    rules = run_rules(store.get_meta("config", {}))
    specs = [s for s in store.plan() if isinstance(s, EpisodeSpec)]
    starts: dict[tuple[int, int], EpisodeSpec] = {}
    for spec in specs:
        starts.setdefault((spec.depth, spec.instance), spec)
    chance: dict[tuple[int, int], float] = {}
    by_walk: dict[tuple[str, int | None, int], list[tuple[int, int]]] = {}
    for key, spec in starts.items():
        budget = None if rules == "paper" else (spec.max_moves or move_budget(spec.depth, spec.metric))
        by_walk.setdefault((spec.metric, budget, spec.max_steps), []).append(key)
    for (metric, budget, steps), keys in by_walk.items():
        states = np.array([_start_state(starts[k]) for k in keys], np.uint8)
        solved = np.zeros(len(keys))
        walks = _walks(metric, budget, steps)
        for walk in walks:
            solved += solved_by(walk, states) >= 0
        chance.update(zip(keys, (solved / len(walks)).tolist()))
    return BlindFloor(rules, chance)


@lru_cache(maxsize=None)
def _walks(metric: str, budget: int | None, steps: int) -> tuple[tuple[str, ...], ...]:
    """The turns the blind agent plays: the sweep's first ``steps`` calls (no budget), else :data:`FLOOR_SEEDS`
    seeded walks of ``budget`` turns."""
    seeds = range(1) if budget is None else range(FLOOR_SEEDS)
    return tuple(tuple(t for call in blind_calls(metric, budget, steps, np.random.default_rng(seed)) for t in call.split())
                 for seed in seeds)


def _start_state(spec: EpisodeSpec) -> np.ndarray:
    """The start an episode resets to: its stored state, its shipped instance, or its seeded scramble."""
    options = spec.reset_options
    if "state" in options:
        return from_facelets(options["state"])
    if "instance" in options:
        return from_facelets(shipped_starts(spec.depth, spec.metric)[int(options["instance"])].state)
    env = make_cube_env("symbolic", depth=spec.depth, metric=spec.metric, max_steps=None, obs_format="indices")
    try:
        env.reset(seed=spec.env_seed, options=options)
        return np.asarray(env.unwrapped.state, np.uint8)
    finally:
        env.close()
