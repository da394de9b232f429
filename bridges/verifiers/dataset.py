"""The rollout datasets: the runner's plan of certified CubeBench episodes, one row per episode.

The grid is a runner :class:`~cubebench.runner.protocols.episodes.suite.Suite` built from the environment's arguments and
validated by :func:`~cubebench.runner.protocols.episodes.suite.suite_from_dict` (a bad value fails with the same
:class:`~cubebench.runner.suite_fields.SuiteError` a suite file would); its episodes are planned by
:func:`~cubebench.runner.protocols.episodes.plan.plan_episodes` on the certified instances that ship with the package
(``cubebench.instances``, made by :mod:`cubebench.curriculum`: optimal distance certified, seeded), or on
seeded scrambles when ``instance_source="scramble"``.  The train and eval rows are disjoint instances:
the first ``instances`` of each depth train, the next ``eval_instances`` evaluate.

When a depth has fewer distinct start states than the two splits ask for (quarter-turn depth 1 has 12,
half-turn depth 1 has 18), every one is used, the train split first, and :func:`split_plan` warns with a
:class:`RowShortfallWarning` that names the depth, what each split asked for and got, and why.  It is a
warning (the rows that exist are still usable); ``warnings.simplefilter("error", RowShortfallWarning)``
makes it an error.

Each row holds the episode's first prompt exactly as our ReAct agent sends it (:func:`.relay.first_prompt`),
and its :class:`~cubebench.runner.protocols.episodes.plan.EpisodeSpec` as JSON in ``info``, which the environment replays.
"""

from __future__ import annotations

import json
import warnings
from collections import Counter
from typing import Any, Sequence

from cubebench.runner import (
    EpisodeSpec, plan_episodes, PlaySettings, resolve_source, Suite, suite_from_dict, SuiteError,
)

from .relay import first_prompt

__all__ = ["RowShortfallWarning", "episode_grid", "split_plan", "episode_rows", "shortfall"]

LOADER_SOURCE = "cubebench.bridges.verifiers.load_environment"
"""How errors name where a bad value came from."""


def episode_grid(*, tier: str, depths: Sequence[int], instances: int, reward: str, tool_setting: str, metric: str,
                 max_steps: int, max_moves: int | None, max_rotations: int | None, seed: int,
                 instance_source: str) -> Suite:
    """The runner's suite for one tier, reward and tool setting over ``depths``, ``instances`` per depth."""
    if isinstance(depths, (str, bytes)) or not isinstance(depths, Sequence) or not depths:
        raise SuiteError(f"{LOADER_SOURCE}: depths must be a non-empty list of integers, got {depths!r}")
    data: dict[str, Any] = {
        "name": f"verifiers[{tier}]", "tiers": [tier], "depths": list(depths), "instances": instances,
        "rewards": [reward], "tool_settings": [tool_setting], "metric": metric, "max_steps": max_steps,
        "seed": seed, "instance_source": instance_source,
    }
    if max_moves is not None:
        data["max_moves"] = max_moves
    if max_rotations is not None:
        data["max_rotations"] = max_rotations
    return suite_from_dict(data, source=LOADER_SOURCE)


class RowShortfallWarning(UserWarning):
    """The environment has fewer rows than its arguments asked for (see the module docstring)."""


def split_plan(suite: Suite, n_train: int) -> tuple[list[EpisodeSpec], list[EpisodeSpec]]:
    """The suite's episodes, split by instance: instances ``0 .. n_train-1`` of each depth, then the rest
    (``suite.instances - n_train`` per depth).

    A depth with fewer positions than asked (quarter-turn depth 1 has 12) gives its train rows first, and
    a :class:`RowShortfallWarning` says so (:func:`shortfall`)."""
    plan = plan_episodes(suite, resolve_source(suite, warn=False))
    train, evaluate = [ep for ep in plan if ep.instance < n_train], [ep for ep in plan if ep.instance >= n_train]
    message = shortfall(suite, n_train, train, evaluate)
    if message:
        warnings.warn(message, RowShortfallWarning, stacklevel=2)
    return train, evaluate


def shortfall(suite: Suite, n_train: int, train: Sequence[EpisodeSpec], evaluate: Sequence[EpisodeSpec]) -> str | None:
    """What is missing when a depth gave fewer rows than asked, and why; ``None`` when every row is there."""
    n_eval = suite.instances - n_train
    got_train, got_eval = Counter(ep.depth for ep in train), Counter(ep.depth for ep in evaluate)
    short = [d for d in suite.depths if got_train[d] < n_train or got_eval[d] < n_eval]
    if not short:
        return None
    parts = []
    for d in short:
        have = got_train[d] + got_eval[d]
        parts.append(f"depth {d}: train {got_train[d]} of {n_train}, eval {got_eval[d]} of {n_eval} (only {have} "
                     f"distinct start states exist at {suite.metric}-turn distance {d}; train takes them first)")
    return (f"{LOADER_SOURCE}: fewer rows than asked: " + "; ".join(parts) + ". Ask for at most that many instances "
            "of these depths, or leave them out.")


def episode_rows(specs: Sequence[EpisodeSpec], settings: PlaySettings, max_tokens: int) -> list[dict[str, Any]]:
    """One dataset row per episode: ``prompt`` (the first model call's messages), ``answer`` (the certified
    distance, as text) and ``info`` (the episode spec as JSON)."""
    return [{"prompt": first_prompt(ep, settings, max_tokens=max_tokens),
             "answer": "" if ep.certified_distance is None else str(ep.certified_distance),
             "info": json.dumps(ep.to_dict())} for ep in specs]
