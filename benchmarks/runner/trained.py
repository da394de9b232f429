"""What an agent trained on this environment was trained on: the mark its results carry.

A score of an agent trained on CubeBench's own positions (``sft``, ``mlp``, an ``hf:`` adapter made by the
project's training programs) is not a zero-shot score: at the depths its training data holds, the public
evaluation positions may be among what it learned.  The agent table (:data:`~.specs.AGENT_KINDS`) says, per kind,
how to find what an agent was trained on (:attr:`~.specs.AgentKind.trained`); a run records it when it starts
(meta ``agent_training``), and ``cubebench report`` and ``compare`` print it beside the agent with the run's
depths that lie in its training data.

Where it is read from (the runner may not import ``cubebench.training``: it reads what the programs write):

* an ``hf:`` adapter folder: the ``training.json`` its training program wrote beside it (``policy_sft``,
  ``policy_grpo``, ``react_sft``, ``react_grpo``; a GRPO adapter adds the SFT adapter it started from);
* ``mlp``: the checkpoint's ``meta`` (its curriculum's frontier, and the shipped sets it was measured on while
  training: ``cubebench.training.rl.train`` keeps ``best.pt`` by them, so a ``best.pt`` was chosen on them);
* ``rnn``: each tier's checkpoint's ``meta`` (``cubebench.training.rl.rnn_ppo`` writes it: the curriculum's frontier,
  env steps; its in-training evaluation uses seeded scrambles, not the shipped sets);
* ``deepcube``: the ``meta`` record of its weights file (``cubebench.training.deepcube`` writes it: the walks' longest
  length, steps and batch);
* ``sft``: the shipped adapter's ``training.json`` when the package carries one, else :data:`SHIPPED_SFT`, the
  manifest ``policy_sft`` wrote for the run that made it (docs/training.md: its defaults, seed 0).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterable

__all__ = ["Training", "SHIPPED_SFT", "ALL_PUBLIC_BELOW", "adapter_training", "mlp_training", "rnn_training",
           "deepcube_training", "training_from_dict", "depth_list"]

ALL_PUBLIC_BELOW = {"quarter": 4}
"""Per metric, the depth below which every position is a public (evaluated) one up to symmetry: a training path that
reaches solved passes through public positions at every depth under it (quarter turns: all 1, 5 and 25 symmetry
classes of depths 1, 2 and 3; tests/runner/test_private_classes.py counts them)."""
SUMMARY = "training.json"
"""The file each training program writes beside its adapter."""
MAX_SUMMARY_BYTES = 64 << 20
"""A larger ``training.json`` is not read (a summary holds a few MB of history at most)."""


@dataclass(frozen=True)
class Training:
    """What an agent learned from, as its results must say."""

    by: str
    """The program (or recipe) that trained it (``policy_sft``, ``the MLP's PPO curriculum``)."""
    on: str
    """Its training data, in words."""
    metric: str
    """The metric its depths are counted in."""
    depths: tuple[int, ...]
    """The distances (start depths, for scrambles) its training data holds."""
    public: tuple[int, ...] = ()
    """Of them, where its training data holds public (evaluated) positions, up to symmetry: no held-out figure there."""
    apart: tuple[int, ...] = ()
    """Of them, where its training positions are kept apart from the public ones (in all 48 spellings)."""
    measured_on: tuple[int, ...] = ()
    """Depths of the public shipped sets its training program measured it on while training."""
    selected: bool = False
    """Whether this checkpoint was chosen by those measurements (the MLP's ``best.pt``; its ``last.pt`` was not)."""
    source: str = ""
    """Where this was read (a file, or the declaration of a shipped agent)."""
    notes: tuple[str, ...] = field(default_factory=tuple)

    def to_dict(self) -> dict[str, Any]:
        return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()}

    @property
    def short(self) -> str:
        """The mark beside a result's label: ``trained here, depths 1-8``."""
        return f"trained on this environment, {self.metric}-turn depths {depth_list(self.depths) or '?'}"

    def text(self) -> str:
        """The whole description: by what, on what, and what it was measured on while training."""
        parts = [f"trained on this environment by {self.by}: {self.on}"]
        if self.measured_on:
            parts.append(f"its training program measured it on the public shipped sets of depths "
                         f"{depth_list(self.measured_on)} while training"
                         + (" and this checkpoint was chosen by them" if self.selected else ""))
        parts += list(self.notes)
        return "; ".join(parts)

    def depth_text(self, depths: Iterable[int], metric: str | None) -> str:
        """Which of a run's ``depths`` (in ``metric``) lie in its training data, and what that means at each."""
        run = sorted(set(int(d) for d in depths))
        if metric is not None and metric != self.metric:
            return (f"its training data counts {self.metric} turns and this run's depths are {metric} turns: "
                    "not compared depth by depth")
        if not self.depths:
            return "the depths of its training data are not recorded"
        inside = [d for d in run if d in self.depths]
        outside = [d for d in run if d not in self.depths]
        if not inside:
            return f"none of this run's depths ({depth_list(run)}) is in its training data"
        groups = []
        for kind, words in (("public", "its training data holds the public positions there, up to symmetry: not "
                                       "held out"),
                            ("apart", "training positions there are kept apart from the public sets, up to "
                                      "symmetry"),
                            ("other", "its training data may hold the public positions there")):
            chosen = [d for d in inside if _kind(self, d) == kind]
            if chosen:
                groups.append(f"{depth_list(chosen)} ({words})")
        text = "this run's depths in its training data: " + "; ".join(groups)
        measured = [d for d in run if d in self.measured_on]
        if measured and self.selected:
            text += f"; checkpoint chosen on the public sets of depth(s) {depth_list(measured)}"
        return text + (f"; outside it: {depth_list(outside)}" if outside else "")


def _kind(training: Training, depth: int) -> str:
    if depth in training.public:
        return "public"
    return "apart" if depth in training.apart else "other"


def depth_list(depths: Iterable[int]) -> str:
    """``1-4, 8``: sorted depths with runs of consecutive ones as ranges."""
    values = sorted(set(depths))
    runs: list[list[int]] = []
    for d in values:
        if runs and d == runs[-1][-1] + 1:
            runs[-1].append(d)
        else:
            runs.append([d])
    return ", ".join(f"{r[0]}-{r[-1]}" if len(r) > 2 else ", ".join(map(str, r)) for r in runs)


def training_from_dict(data: Any) -> Training | None:
    """A stored :meth:`Training.to_dict` read back (``None`` for anything else: a run from before the mark)."""
    if not isinstance(data, dict):
        return None
    try:
        return Training(by=str(data["by"]), on=str(data["on"]), metric=str(data["metric"]),
                        depths=_ints(data.get("depths")), public=_ints(data.get("public")),
                        apart=_ints(data.get("apart")), measured_on=_ints(data.get("measured_on")),
                        selected=bool(data.get("selected", False)),
                        source=str(data.get("source", "")), notes=tuple(str(n) for n in data.get("notes") or ()))
    except (KeyError, TypeError, ValueError):
        return None


def _ints(values: Any) -> tuple[int, ...]:
    return tuple(sorted({int(v) for v in values or ()}))


# --- policy_sft's manifest and the shipped adapter ---------------------------------------------------------------
SHIPPED_SFT: dict[str, Any] = {
    "request": {"metric": "quarter", "starts_per_depth": 300, "probe_per_depth": 100, "seed": 0,
                "start_depths": [4, 5, 6, 7, 8], "probe_fraction": 0.2},
    "train": {"1": 12, "2": 102, "3": 515, "4": 1118, "5": 1164, "6": 899, "7": 600, "8": 300},
    "evaluated_in_train": {"1": [12, 12], "2": [102, 102], "3": [515, 515], "4": [0, 1118], "5": [0, 1164],
                           "6": [0, 899], "7": [0, 600], "8": [0, 300]},
}
"""The data manifest (``OUT/data/manifest.json``) of the ``policy_sft`` run that made the shipped adapter (its
defaults; docs/training.md prints the same counts): read as that adapter's ``training.json`` would be, until the
package carries the file itself."""


def policy_sft_training(manifest: dict[str, Any], source: str) -> Training:
    """``policy_sft``'s data: optimal next moves of every position on optimal paths from its training starts."""
    request = manifest["request"]
    counts = {int(d): int(n) for d, n in manifest["train"].items()}
    evaluated = {int(d): int(v[0]) for d, v in (manifest.get("evaluated_in_train") or {}).items()}
    starts = [int(d) for d in request["start_depths"]]
    on = (f"the optimal next moves of {sum(counts.values()):,} positions at {request['metric']}-turn distances "
          f"{depth_list(counts)}, every position on optimal paths from {request['starts_per_depth']} training starts "
          f"at each depth {depth_list(starts)} (seed {request['seed']}), shown as the policy prompt's 54 letters")
    return Training(by="policy_sft (LoRA on SmolLM2-135M-Instruct)", on=on, metric=str(request["metric"]),
                    depths=tuple(sorted(counts)), public=tuple(d for d, n in evaluated.items() if n > 0),
                    apart=tuple(d for d, n in evaluated.items() if n == 0 and d in counts), source=source)


# --- adapters ------------------------------------------------------------------------------------------------------
def adapter_training(folder: Path, seen: frozenset[Path] = frozenset()) -> Training | None:
    """What the adapter in ``folder`` was trained on, from the ``training.json`` its program wrote beside it; ``None``
    when it has none (not made by this project's programs) or one of no form they write."""
    summary = _summary(folder)
    if summary is None:
        return None
    source = str(folder / SUMMARY)
    args: dict[str, Any] = summary["args"] if isinstance(summary.get("args"), dict) else {}
    try:
        data = summary.get("data")
        if isinstance(data, dict) and isinstance(data.get("request"), dict) and "start_depths" in data["request"]:
            return policy_sft_training(data, source)
        manifest = summary.get("manifest")
        if isinstance(manifest, dict) and manifest.get("kind") == "sft":
            return _react_sft(manifest, args, source)
        if "adapter" in args and "depths" in args:
            return _grpo(Path(str(args["adapter"])), args, source, seen | {folder.resolve()})
    except (KeyError, TypeError, ValueError, AttributeError):
        return Training(by="a training program", on=f"{source} does not read as any training program's summary",
                        metric="quarter", depths=(), source=source)
    return None


def _summary(folder: Path) -> dict[str, Any] | None:
    path = folder / SUMMARY
    try:
        if not path.is_file() or path.stat().st_size > MAX_SUMMARY_BYTES:
            return None
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


def _react_sft(manifest: dict[str, Any], args: dict[str, Any], source: str) -> Training:
    """``react_sft``: whole optimal ReAct traces from training starts, each passing through every distance below."""
    depths = manifest.get("depths") or [int(d) for d in str(args.get("depths", "")).split(",") if d.strip()]
    metric = "quarter"
    starts = sorted(int(d) for d in depths)
    held = manifest.get("starts") == "training"
    covered = tuple(range(1, max(starts) + 1)) if starts else ()
    below = ALL_PUBLIC_BELOW.get(metric, 0)
    on = (f"optimal ReAct traces (symbolic text) from {manifest.get('instances') or '?'} "
          f"{'training' if held else 'EVALUATION'} starts at each {metric}-turn depth {depth_list(starts)}, "
          f"each passing through every distance below on its way to solved")
    return Training(by="react_sft (LoRA, TRL)", on=on, metric=metric, depths=covered,
                    public=tuple(d for d in covered if d < below or not held),
                    apart=tuple(d for d in covered if d >= below and held and d in starts), source=source)


def _grpo(parent: Path, args: dict[str, Any], source: str, seen: frozenset[Path]) -> Training:
    """A GRPO adapter: episodes from training starts of ``args["depths"]``, on top of the adapter it started from."""
    starts = tuple(sorted(int(d) for d in str(args["depths"]).split(",") if d.strip()))
    before = None if parent.resolve() in seen else adapter_training(parent, seen)
    on = f"GRPO episodes from training starts at depths {depth_list(starts)}"
    if before is None:
        return Training(by="GRPO", on=on + f", on top of {parent} (its training not recorded here)", metric="quarter",
                        depths=starts, apart=starts, source=source)
    return Training(by=f"GRPO on top of {before.by}", on=f"{on}, on top of: {before.on}", metric=before.metric,
                    depths=tuple(sorted(set(before.depths) | set(starts))), public=before.public,
                    apart=tuple(sorted((set(before.apart) | set(starts)) - set(before.public))),
                    measured_on=before.measured_on, source=source)


# --- the MLP policy -----------------------------------------------------------------------------------------------
def mlp_training(meta: dict[str, Any], source: str) -> Training:
    """The MLP policy's training from its checkpoint's ``meta``: seeded random scrambles of depth 1 to its
    curriculum's frontier (certified by nothing: a scramble of d turns lies at distance d or less), measured on the
    shipped sets of the depths its ``eval`` names."""
    args: dict[str, Any] = meta["args"] if isinstance(meta.get("args"), dict) else {}
    metric = {"face": "half"}.get(str(args.get("moves", args.get("metric", "quarter"))),
                                  str(args.get("moves", args.get("metric", "quarter"))))
    frontier = meta.get("frontier")
    evaluated = sorted(int(k.split("/d")[1]) for k in (meta.get("eval") or {}) if str(k).startswith("pass/d"))
    if not isinstance(frontier, int) or frontier < 1:
        return Training(by="the MLP's policy-gradient curriculum", on=f"random scrambles ({source} records no frontier)",
                        metric=metric, depths=(), measured_on=tuple(evaluated), source=source)
    on = (f"{meta.get('env_steps', '?'):,} env steps of {str(args.get('algo', 'policy-gradient')).upper()} on random "
          f"scrambles of 1 to {frontier} {metric} turns (its depth curriculum's frontier when saved; "
          f"max_depth {args.get('max_depth', '?')})") if isinstance(meta.get("env_steps"), int) else (
          f"random scrambles of 1 to {frontier} {metric} turns (its depth curriculum's frontier when saved)")
    return Training(by="the MLP's policy-gradient curriculum (cubebench.training.rl)", on=on, metric=metric,
                    depths=tuple(range(1, frontier + 1)), measured_on=tuple(evaluated),
                    selected=Path(source).name == "best.pt", source=source)


# --- the partial-view policies -----------------------------------------------------------------------------------
def rnn_training(checkpoints: list[tuple[str, dict[str, Any], str]]) -> Training:
    """The partial-view policies' training from each ``(tier, meta, source)`` checkpoint: recurrent PPO on that tier's
    view, from seeded random scrambles of 1 to its curriculum's frontier (certified by nothing: a scramble of d turns
    lies at distance d or less), measured while training on seeded scrambles, never on the shipped sets.  Every
    position under :data:`ALL_PUBLIC_BELOW` lies in a public class, so its training data holds public positions at
    those depths."""
    by = "cubebench.training.rl.rnn_ppo (recurrent PPO on the partial views)"
    parts, depths, metrics = [], set(), set()
    for tier, meta, source in checkpoints:
        args: dict[str, Any] = meta["args"] if isinstance(meta.get("args"), dict) else {}
        metric, frontier = str(args.get("metric", "quarter")), meta.get("frontier")
        metrics.add(metric)
        if not isinstance(frontier, int) or frontier < 1:
            parts.append(f"{tier}: random scrambles ({source} records no frontier)")
            continue
        depths |= set(range(1, frontier + 1))
        memory = str(args.get("memory", "?")) + (f" of {args.get('stack')} frame(s)" if args.get("memory") == "stack"
                                                  else "")
        steps = meta.get("env_steps")
        parts.append(f"{tier} ({memory}): " + (f"{steps:,} env steps" if isinstance(steps, int) else "env steps")
                     + f" on random scrambles of 1 to {frontier} {metric} turns (its depth curriculum's frontier "
                     f"when saved; max_depth {args.get('max_depth', '?')})")
    metric = metrics.pop() if len(metrics) == 1 else "quarter"
    below = ALL_PUBLIC_BELOW.get(metric, 0)
    return Training(by=by, on="; ".join(parts), metric=metric, depths=tuple(sorted(depths)),
                    public=tuple(d for d in sorted(depths) if d < below),
                    source=", ".join(source for _, _, source in checkpoints))


# --- the deepcube value network -----------------------------------------------------------------------------------
def deepcube_training(meta: dict[str, Any], source: str) -> Training:
    """The deepcube network's training from its weights file's ``meta``: random quarter-turn walks of 1 to
    ``max_depth`` turns from solved (a walk's length bounds its distance: every distance up to it may be in the data),
    labelled by the network's own one-step lookahead, never by a solver.  Walks reach every position of the depths
    under :data:`ALL_PUBLIC_BELOW`, so the public positions there are in its data."""
    args: dict[str, Any] = meta["args"] if isinstance(meta.get("args"), dict) else {}
    longest = args.get("max_depth")
    if not isinstance(longest, int) or longest < 1:
        return Training(by="cubebench.training.deepcube", on=f"random walks ({source} records no walk length)",
                        metric="quarter", depths=(), source=source)
    steps, batch = meta.get("step", "?"), args.get("batch", "?")
    on = (f"{steps} steps of {batch} states drawn by random walks of 1 to {longest} quarter turns from solved, "
          f"valued by approximate value iteration (the network's own one-step lookahead over the 12 quarter turns, "
          f"{meta.get('target_updates', '?')} target refreshes; no solver labels)")
    depths = tuple(range(1, longest + 1))
    below = ALL_PUBLIC_BELOW["quarter"]
    return Training(by="cubebench.training.deepcube (approximate value iteration)", on=on, metric="quarter",
                    depths=depths, public=tuple(d for d in depths if d < below), source=source)
