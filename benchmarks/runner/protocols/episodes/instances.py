"""Where each episode's start state comes from: shipped certified instances or seeded scrambles.

The k-th instance of a depth is the same start state for every tier, reward
and tool setting of a run (the attribution compares settings on the same
instances).

``instance_source: "certified"``: instance k of depth d is the k-th instance of the certified curriculum
(:func:`cubebench.curriculum.certified_instances`) of the run's seed, a position whose optimal distance in the
suite's metric is certified to be d:

* seed 0 (:data:`PUBLIC_SEED`): the **public** shipped sets, that curriculum's draw of seed 0
  (``benchmarks/instances/<metric>-d<dd>-n<N>.jsonl``; smaller sets are prefixes of larger ones).  When the env
  can reset to one by index (``options={"instance": k}``, where ``info["distance"]`` is the certified distance)
  the episode does that; otherwise it resets to the instance's 54-letter state (``options={"state": ...}``) and the
  runner records the certified distance from the file.  A depth with fewer shipped instances than the suite asks
  for is an error.
* any other seed: a **private** draw, made when the run is planned (:func:`drawn_starts`): the same generator's
  candidates of that seed, certified by the table-free distance oracle up to its reach (9 half turns, 10 quarter
  turns: about a second for the oracle, milliseconds an instance) and by the exact optimal solver deeper (its
  tables are built once on first use, 2-15 minutes and about 0.9 GB per metric; docs/solver.md).  The episodes
  reset to the drawn states.  Half-turn depths 19-20 have no private draw (random scrambles do not reach them;
  the 2 known positions ship): a run asking for one is refused.  What a draw keeps private is the positions at
  depths where they are many: depth 1 has 12 (quarter) or 18 (half) positions and depth 2 114 or 243, so any
  draw there is mostly the public positions; the blind floor (:mod:`.floors`) says what that is worth.  Up to
  symmetry it keeps less: every quarter-turn class of depths 1-3 is public, and more than half of a depth-4 draw lies in
  a public class; the instance line counts them, and ``--private-classes`` keeps them out where other classes remain
  (:mod:`.private_classes`).

``"scramble"``: ``options={"depth": d}`` with a seed derived from (suite
seed, metric, d, k): a reproducible non-redundant d-move scramble whose
distance is at most d and not certified.
"""

from __future__ import annotations

import hashlib
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from cubebench import make_cube_env
from cubebench.curriculum import certified_instances, load_instance_file
from cubebench.engine.metric import check_metric
from cubebench.generators import NoInstanceSetError
from cubebench.shipped import asked_size, instances_dir, largest_instance_file

from ...suite_fields import SuiteError
from .private_classes import PRIVATE_CLASSES, private_class_starts, public_notes
from .suite import Suite

PUBLIC_SEED = 0
"""The seed of the shipped certified sets: a certified run of this seed plays them (public), any other a private draw."""
ALLOW_SCRAMBLE_FALLBACK = False
"""When no certified instance set can be found at all, fall back to seeded scrambles (and say so)
instead of stopping.  Off: the sets ship, and a certified suite must never run on uncertified states."""


@dataclass(frozen=True)
class Start:
    """One certified start state: its 54 letters and certified distance (from a shipped file)."""

    state: str
    distance: int


@dataclass(frozen=True)
class InstanceRef:
    """How to reset an env to the ``index``-th instance of ``depth``."""

    depth: int
    index: int
    seed: int
    source: str
    start: Start | None = None

    @property
    def reset_options(self) -> dict[str, Any]:
        if self.source == "scramble":
            return {"depth": self.depth}
        return {"state": self.start.state} if self.start is not None else {"instance": self.index}


def instance_seed(suite_seed: int, metric: str, depth: int, index: int) -> int:
    """A reproducible 31-bit seed for one instance, independent of tier, reward and setting."""
    digest = hashlib.sha256(f"{suite_seed}/{metric}/{depth}/{index}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


def probe_certified(depth: int, metric: str, index: int) -> str | None:
    """``None`` if the env resets to instance ``index`` of ``depth`` itself; else why not."""
    env = make_cube_env("symbolic", depth=depth, metric=check_metric(metric), max_steps=None, obs_format="indices")
    try:
        _, info = env.reset(seed=0, options={"instance": index})
    except NoInstanceSetError as err:
        return str(err)
    except Exception as err:  # noqa: BLE001 - any failure means the env cannot do it
        return f"{type(err).__name__}: {err}"
    finally:
        env.close()
    if info.get("distance") != depth:
        return f"instance {index} has certified distance {info.get('distance')!r}, not {depth}"
    return None


def shipped_starts(depth: int, metric: str, directory: Path | None = None) -> tuple[Start, ...]:
    """The certified starts of ``depth`` in ``metric`` from the largest shipped file (empty if none)."""
    return _starts_in(depth, metric, directory or instances_dir())


@lru_cache(maxsize=None)
def _starts_in(depth: int, metric: str, directory: Path) -> tuple[Start, ...]:
    largest = largest_instance_file(metric, depth, directory)
    if largest is None:
        return ()
    starts = []
    for k, inst in enumerate(load_instance_file(largest)):
        if inst.index != k or inst.distance != depth or inst.metric != metric:
            raise SuiteError(f"{largest}: instance {k} is index {inst.index}, distance {inst.distance}, "
                             f"metric {inst.metric}; expected index {k}, distance {depth}, metric {metric}")
        starts.append(Start(inst.state, inst.distance))
    return tuple(starts)


def shipped_set_size(depth: int, metric: str, directory: Path | None = None) -> int:
    """The size the largest shipped file of ``depth`` was asked for (its name's ``n``), 0 if none."""
    largest = largest_instance_file(metric, depth, directory)
    return asked_size(largest) if largest is not None else 0


def drawn_starts(depth: int, metric: str, seed: int, count: int) -> tuple[Start, ...]:
    """A private draw: the first ``count`` instances of the certified curriculum of ``seed`` at ``depth`` (fewer where
    fewer positions exist), certified table-free within the oracle's reach, by the optimal solver beyond."""
    return _drawn(depth, check_metric(metric), seed, count)


@lru_cache(maxsize=None)
def _drawn(depth: int, metric: str, seed: int, count: int) -> tuple[Start, ...]:
    if metric == "half" and depth >= 19:
        raise SuiteError(f"half-turn depth {depth} has no private draw: random scrambles do not reach it and the 2 "
                         "known distance-20 positions ship publicly; play it with seed 0 or leave it out (--depths)")
    return tuple(Start(i.state, i.distance)
                 for i in certified_instances(depth, metric, seed, count, table_free=True))


def certified_route(depth: int, metric: str, count: int, seed: int = PUBLIC_SEED,
                    private_classes: bool = False) -> tuple[str, tuple[Start, ...], str]:
    """``("env", (), "")``, ``("file", starts, note)``, ``("draw", starts, note)`` or ``("missing", (), why)`` for
    ``count`` instances of the run's ``seed``: the shipped sets for :data:`PUBLIC_SEED`, a private draw otherwise.

    A file asked for ``n >= count`` instances that holds fewer is complete: the depth has no
    more distinct positions (quarter-turn depth 1 has 12, half-turn depth 1 has 18); all are used,
    and the note says so; a draw of fewer than asked likewise.
    """
    if seed != PUBLIC_SEED:
        try:
            starts = (tuple(Start(state, distance) for state, distance in
                            private_class_starts(depth, check_metric(metric), seed, count))
                      if private_classes and not (metric == "half" and depth >= 19)
                      else drawn_starts(depth, metric, seed, count))
        except SuiteError as err:
            return "missing", (), str(err)
        few = (f"depth {depth}: {len(starts)} instances, every position at {metric}-turn distance {depth} "
               f"(fewer than {count} exist)") if len(starts) < count else ""
        return "draw", starts, few
    env_says = probe_certified(depth, metric, count - 1)
    if env_says is None:
        return "env", (), ""
    starts = shipped_starts(depth, metric)
    if len(starts) >= count:
        return "file", starts[:count], ""
    if starts and shipped_set_size(depth, metric) >= count:
        return "file", starts, (f"depth {depth}: {len(starts)} instances, every position at {metric}-turn "
                                f"distance {depth} (fewer than {count} exist)")
    where = instances_dir()
    found = f"{len(starts)} shipped in {where}" if starts else f"no {metric}-d{depth:02d}-n*.jsonl in {where}"
    return "missing", (), f"{found}; env: {env_says}"


def instance_draw(suite: Suite) -> str:
    """``public`` (the shipped certified sets), ``private`` (a certified draw of the run's own seed),
    ``private-classes`` (one that keeps out the public symmetry classes: ``--private-classes``) or ``scramble``."""
    if suite.instance_source != "certified":
        return "scramble"
    if suite.seed == PUBLIC_SEED:
        return "public"
    return "private-classes" if suite.instance_classes == PRIVATE_CLASSES else "private"


def check_classes(suite: Suite) -> None:
    """:class:`SuiteError` for ``--private-classes`` where there is no private draw to keep apart (seed 0 plays the
    public sets; seeded scrambles are drawn by no curriculum)."""
    if suite.instance_classes != PRIVATE_CLASSES:
        return
    if suite.instance_source != "certified":
        raise SuiteError("--private-classes (instance_classes \"private\") draws certified instances; this suite "
                         "plays seeded scrambles")
    if suite.seed == PUBLIC_SEED:
        raise SuiteError("--private-classes keeps a private draw out of the public symmetry classes: give it a "
                         "private draw with --seed N (N not 0; seed 0 plays the public shipped sets)")


def resolve_source(suite: Suite, warn: bool = True) -> str:
    """The source this run will use; raises :class:`SuiteError` when certified instances are missing."""
    if suite.instance_source == "scramble":
        return "scramble"
    missing = {}
    for d in suite.depths:
        kind, _, why = certified_route(d, suite.metric, suite.instances, suite.seed, _classes(suite))
        if kind in ("file", "draw") and why and warn:
            print(f"cubebench: {why}", file=sys.stderr)
        if kind == "missing":
            missing[d] = why
    if not missing:
        return "certified"
    if len(missing) == len(suite.depths) and ALLOW_SCRAMBLE_FALLBACK:
        if warn:
            print("cubebench: no certified instance sets found; this run uses seeded scrambles of each depth "
                  "(distance <= depth, not certified)", file=sys.stderr)
        return "scramble"
    keep = ",".join(str(d) for d in suite.depths if d not in missing)
    detail = "; ".join(f"depth {d}: {why}" for d, why in missing.items())
    hint = f"play the others with --depths {keep}, " if keep else ""
    raise SuiteError(
        f"suite {suite.name!r} needs {suite.instances} certified instances per depth in the {suite.metric}-turn "
        f"metric, but depth(s) {sorted(missing)} lack them ({detail}). To go on: {hint}use the metric that ships "
        f"them, or set \"instance_source\": \"scramble\" in a copy of the suite.")


def instance_refs(suite: Suite, source: str) -> dict[int, list[InstanceRef]]:
    """The instances of every depth of the suite (fewer than asked where no more positions exist)."""
    refs: dict[int, list[InstanceRef]] = {}
    for d in suite.depths:
        starts: tuple[Start, ...] = ()
        count = suite.instances
        if source == "certified":
            kind, starts, why = certified_route(d, suite.metric, suite.instances, suite.seed, _classes(suite))
            if kind == "missing":
                raise SuiteError(f"depth {d}: {why}")
            count = len(starts) if kind in ("file", "draw") else count
        refs[d] = [InstanceRef(depth=d, index=k, seed=instance_seed(suite.seed, suite.metric, d, k),
                               source=source, start=starts[k] if starts else None) for k in range(count)]
    return refs


def source_notes(suite: Suite, source: str) -> list[str]:
    """What a report should say about the instances beyond their source: complete small depths, and for a private
    draw how many of each depth's starts lie in a public symmetry class (:func:`.private_classes.public_notes`)."""
    if source != "certified":
        return []
    notes, drawn = [], {}
    for d in suite.depths:
        kind, starts, note = certified_route(d, suite.metric, suite.instances, suite.seed, _classes(suite))
        if kind in ("file", "draw") and note:
            notes.append(note)
        if kind == "draw":
            drawn[d] = [start.state for start in starts]
    return notes + public_notes(suite.metric, drawn, _classes(suite))


def _classes(suite: Suite) -> bool:
    return suite.instance_classes == PRIVATE_CLASSES
