"""Where each episode's start state comes from: shipped certified instances or seeded scrambles.

The k-th instance of a depth is the same start state for every tier, reward
and tool setting of a run (the attribution compares settings on the same
instances).  With ``instance_source: "certified"`` an episode resets with
``options={"instance": k}`` (the k-th shipped instance whose optimal distance
is certified, ``info["distance"]``); with ``"scramble"`` it resets with
``options={"depth": d}`` and a seed derived from (suite seed, metric, depth,
k): a reproducible non-redundant scramble of d moves, whose distance is at
most d and not certified.
"""

from __future__ import annotations

import hashlib
import sys
from dataclasses import dataclass
from typing import Any

from cube_env import make_cube_env

from .suites import Suite, SuiteError

ALLOW_SCRAMBLE_FALLBACK = True
"""While no certified instance set ships (``cube_env.curriculum``), a ``certified`` suite falls back to
seeded scrambles and says so.  Set to ``False`` once the sets ship, so a certified suite never runs on
uncertified states (the one-line switch)."""

NO_CURRICULUM = "needs a generator with shipped instance sets"
"""The env's message when ``reset(options={"instance": k})`` has no instance set behind it."""


@dataclass(frozen=True)
class InstanceRef:
    """How to reset an env to the ``index``-th instance of ``depth``."""

    depth: int
    index: int
    seed: int
    source: str

    @property
    def reset_options(self) -> dict[str, Any]:
        return {"instance": self.index} if self.source == "certified" else {"depth": self.depth}


def env_moves(metric: str) -> str:
    """The env's ``moves`` kwarg for a suite metric (``half`` is the 18-move face-turn set)."""
    return "quarter" if metric == "quarter" else "face"


def instance_seed(suite_seed: int, metric: str, depth: int, index: int) -> int:
    """A reproducible 31-bit seed for one instance, independent of tier, reward and setting."""
    digest = hashlib.sha256(f"{suite_seed}/{metric}/{depth}/{index}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


def probe_certified(depth: int, metric: str, index: int) -> str | None:
    """``None`` if instance ``index`` of ``depth`` ships; else why not (``NO_CURRICULUM`` or the error)."""
    env = make_cube_env("symbolic", depth=depth, moves=env_moves(metric), max_steps=None, obs_format="indices")
    try:
        _, info = env.reset(seed=0, options={"instance": index})
    except Exception as err:  # noqa: BLE001 - any failure means the instance is not usable
        return NO_CURRICULUM if NO_CURRICULUM in str(err) else f"{type(err).__name__}: {err}"
    finally:
        env.close()
    if info.get("distance") != depth:
        return f"instance {index} has certified distance {info.get('distance')!r}, not {depth}"
    return None


def resolve_source(suite: Suite, warn: bool = True) -> str:
    """The source this run will actually use; raises :class:`SuiteError` when instances are missing."""
    if suite.instance_source == "scramble":
        return "scramble"
    problems = {d: probe_certified(d, suite.metric, suite.instances - 1) for d in suite.depths}
    if all(p == NO_CURRICULUM for p in problems.values()) and ALLOW_SCRAMBLE_FALLBACK:
        if warn:
            print("cubebench: no certified instance sets are installed (cube_env.curriculum); this run uses "
                  "seeded scrambles of each depth (distance <= depth, not certified)", file=sys.stderr)
        return "scramble"
    missing = {d: p for d, p in problems.items() if p is not None}
    if missing:
        detail = "; ".join(f"depth {d}: {p}" for d, p in missing.items())
        raise SuiteError(
            f"suite {suite.name!r} needs {suite.instances} certified instances per depth in the "
            f"{suite.metric}-turn metric, but some are missing ({detail}). Remove those depths, use "
            f"the metric that ships them, or set \"instance_source\": \"scramble\" in a copy of the suite.")
    return "certified"


def instance_refs(suite: Suite, source: str) -> dict[tuple[int, int], InstanceRef]:
    """Every (depth, index) of the suite mapped to its :class:`InstanceRef`."""
    return {
        (d, k): InstanceRef(depth=d, index=k, seed=instance_seed(suite.seed, suite.metric, d, k), source=source)
        for d in suite.depths for k in range(suite.instances)
    }
