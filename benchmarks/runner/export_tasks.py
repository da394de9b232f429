"""``cubebench export-tasks``: certified episodes, question items and SFT traces as training data.

Three kinds of rows, each written as ``train`` and ``test`` files (JSON Lines or Parquet) that
Hugging Face ``datasets`` loads as they are (``load_dataset("json" | "parquet", data_files=...)``):

- ``episodes``: one row per planned episode of an episode suite (``exp1`` ...) on one tier (its evaluation starts
  unless ``--starts training``): the
  prompt the ReAct agent is shown first (system prompt with the task and tools, then the first
  ``Observation:`` in the tier's text form, or with its image), the certified start state and
  optimal depth, an optimal solution, and a verifier reference (:mod:`.verifier_refs`).
- ``sft``: whole ReAct conversations that solve the cube optimally (:mod:`.sft_traces`), each replayed through
  the ReAct parser and the env before it is written.  They are training data, so by default they start from
  training starts (``--starts training``: positions apart from every evaluated one in any of its 48 spellings, at
  the suite's depths that have them), never from the evaluation sets unless ``--starts evaluation`` asks.
- ``items``: one row per fixed item and variant of a question suite (Cube Bench, STARE; Inf-Bench's
  ladder tests at fixed levels), asked under answer rules (``--rules``; default the suite's first,
  ``paper``, as ``cubebench run``): the question as a model is asked it under those rules, its image, the
  gold answer in the rules' final-answer form (what the oracle replies: ``\\boxed{Yes}`` for STARE under
  ``paper``, ``Answer: Yes`` under ``strict``), and a verifier reference that reads replies with the same
  rules' parser.  A test is left out whole when any of its items asks
  more than one question, answered right (the oracle) or wrong (an unparsable reply): closed loop,
  recovery and reflection ask each question after the replies before it, and a row holds one
  question (closed loop at depth 1 is one question, and is exported).

Everything comes from the runner's own planning (suites, certified instances, item generation), so
an exported row is what ``cubebench run`` would ask.  Rows are split by their start state
(:mod:`.splits`); the same arguments write the same bytes.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import pickle
import tempfile
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import IO, Any, Iterator, Sequence, cast

from cubebench import __version__
from cubebench.agents.answerers import ModelAnswerer, OracleAnswerer
from cubebench.curriculum import Instance, load_instance_file
from cubebench.extras import install_hint
from cubebench.shipped import largest_instance_file
from cubebench.tiers import DEFAULT_TIER, TIER_SPECS, tier_names, tier_spec

from .answering import chosen_rules
from .execute import PlaySettings
from .planning import check_plan_size
from .protocols.episodes.instances import resolve_source
from .protocols.episodes.plan import EpisodeSpec, episode_key, plan_episodes
from .protocols.episodes.suite import Suite, restrict, suite_from_dict
from .protocols.questions.plan import ItemSpec, iter_fixed_items
from .protocols.questions.suite import QuestionSuite, configured_test, question_suite_from_dict, restrict_questions
from .sft_traces import ScriptedReplies, TraceError, optimal_solution, play_trace, replay_trace, trace_replies
from .splits import SPLITS, Sides, check_fraction, group_of, split_of
from .suite_fields import SuiteError
from .suites import load_suite
from .training_starts import MAX_TRAINING_DEPTH, SOURCE, TrainingStartError, check_apart, training_instances
from .verifier_refs import asked_prompts, episode_ref, question_ref

KINDS = ("episodes", "sft", "items")
EXPORT_FORMATS = ("jsonl", "parquet")
IMAGE_MODES = ("bytes", "files", "none")
STARTS = ("training", "evaluation")
"""Where episode and SFT rows start: ``training`` (fresh positions apart from every evaluated one, in any of its 48
spellings: :mod:`.training_starts`) or ``evaluation`` (the suite's certified starts, the evaluation sets: rows that
show a model the test set)."""
OLD_STARTS = {"certified": "evaluation"}
"""The earlier name of a ``--starts`` value, still read."""
DEFAULT_STARTS = {"episodes": "evaluation", "sft": "training"}
"""A kind's starts when none is asked: SFT traces are training data, so they never come from the evaluation sets
unless asked; ``episodes`` rows are the evaluation prompts themselves (what the Inspect and verifiers bridges ask)."""
EXPORT_OBS_FORMATS = ("text", "image")
DEFAULT_SUITES = {"episodes": "exp1", "sft": "exp1", "items": "cube-bench"}
LADDER_ITEMS = 5
"""Items per level when a ladder test is exported at fixed levels (a ladder round asks five)."""
EXPORT_SCHEMA = "cubebench-export/1"


class ExportError(ValueError):
    """Bad export arguments, or a suite that cannot be exported; the message says what to change."""


@dataclass(frozen=True)
class ExportRequest:
    """What to export (``None``: the kind's default or the suite's own value)."""

    kind: str
    out: Path
    format: str = "jsonl"
    suite: str | None = None
    tier: str | None = None
    obs_format: str | None = None
    depths: tuple[int, ...] | None = None
    instances: int | None = None
    tests: tuple[str, ...] | None = None
    variants: tuple[str, ...] | None = None
    """Only these variants of each test (``None``: the suite's)."""
    items: int | None = None
    train_fraction: float = 0.9
    seed: int = 0
    images: str = "bytes"
    force: bool = False
    """Replace the files of an earlier export in ``out`` (without it, an export never overwrites one)."""
    starts: str | None = None
    """``evaluation`` (``certified``, its earlier name): the suite's certified instances, the evaluation sets;
    ``training``: fresh positions apart from every evaluation start in any of its 48 spellings
    (:mod:`.training_starts`), ``instances`` per depth; ``None``: the kind's :data:`DEFAULT_STARTS`."""

    @property
    def chosen_starts(self) -> str:
        """The starts this export uses: the one asked (its current name), else the kind's default."""
        if self.starts is None:
            return DEFAULT_STARTS.get(self.kind, "evaluation")
        return OLD_STARTS.get(self.starts, self.starts)
    rules: str | None = None
    """Items: the answer rules the questions are asked under (``None``: the suite's first, as ``cubebench run``)."""


@dataclass
class ExportSummary:
    """What an export wrote: files per split, rows per split, and what it left out and why."""

    files: dict[str, Path] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    rules: str | None = None
    """Items: the answer rules the rows were asked under (``None`` for episodes and SFT traces)."""


def export_tasks(request: ExportRequest) -> ExportSummary:
    """Build the rows ``request`` asks for, split them, and write ``train``/``test`` files and ``manifest.json``.

    Rows are streamed: each is written as it is made (question items are made one at a time), so memory holds
    a row, a test's spool on disk and one key per start state, whatever the number of rows.  The files appear
    under their names only when every row is written and the split is checked: a failed export leaves the
    folder as it was."""
    _check(request)
    summary = ExportSummary()
    out = _out_folder(request)
    images = _ImageSink(request.images, out)
    rows = _item_rows(request, images, summary) if request.kind == "items" else _episode_rows(request, images, summary)
    with _SplitWriter(out, request.format, pngs=request.images == "bytes") as writer:
        for row in rows:
            writer.add(row)
        summary.files, summary.counts = writer.finish()
    summary.notes += [f"the {split} split is empty: no {split}.{request.format} written"
                      for split in SPLITS if not summary.counts[split]]
    manifest = {"schema": EXPORT_SCHEMA, "cubebench": __version__, "kind": request.kind, "format": request.format,
                "suite": request.suite or DEFAULT_SUITES[request.kind], "tier": request.tier,
                "obs_format": request.obs_format, "depths": request.depths, "instances": request.instances,
                "tests": request.tests, **({"variants": request.variants} if request.variants else {}),
                "items": request.items, "images": request.images,
                "train_fraction": request.train_fraction, "seed": request.seed,
                **({"starts": request.chosen_starts} if request.kind != "items" else {}),
                **({"rules": summary.rules} if summary.rules else {}), "counts": summary.counts,
                "files": {s: {"name": p.name, "sha256": _sha256(p)} for s, p in summary.files.items()},
                "notes": summary.notes}
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return summary


def _out_folder(request: ExportRequest) -> Path:
    """The export folder, made if missing; :class:`ExportError` if it is a file, or if it holds an earlier
    export's files and ``force`` is not given."""
    out = Path(request.out)
    if out.exists() and not out.is_dir():
        raise ExportError(f"--out {out} exists and is not a folder")
    earlier = sorted(p.name for p in out.glob("*") if p.name == "manifest.json" or p.name in _split_names())
    if earlier and not request.force:
        raise ExportError(f"--out {out} already holds an export ({', '.join(earlier)}): give --force to replace "
                          "it, or another folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise ExportError(f"--out {out}: cannot make the folder ({err.strerror or err})") from None
    return out


def _split_names() -> set[str]:
    return {f"{split}.{fmt}" for split in SPLITS for fmt in EXPORT_FORMATS}


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _check(request: ExportRequest) -> None:
    """:class:`ExportError` for an argument out of range or one that does not apply to the kind."""
    for name, value, allowed in (("kind", request.kind, KINDS), ("format", request.format, EXPORT_FORMATS),
                                 ("images", request.images, IMAGE_MODES),
                                 ("starts", request.starts, (*STARTS, *OLD_STARTS, None))):
        if value not in allowed:
            shown = ", ".join(str(a) for a in allowed if a is not None and a not in OLD_STARTS)
            raise ExportError(f"--{name} must be one of {shown}, got {value!r}")
    check_fraction(request.train_fraction)
    if request.items is not None and request.items < 1:
        raise ExportError(f"--items must be at least 1, got {request.items}")
    if request.kind != "items" and request.rules is not None:
        raise ExportError("--rules chooses how question items ask for their answers; --kind episodes and sft "
                          "ask none")
    if request.kind == "items":
        given = [f for f, v in (("tier", request.tier), ("obs-format", request.obs_format),
                                ("instances", request.instances),
                                ("starts", request.starts)) if v is not None]
        if given:
            raise ExportError(f"--{given[0]} is for episodes and sft; question items are chosen with --tests, "
                              "--depths and --items")
        return
    given = [f for f, v in (("tests", request.tests), ("variants", request.variants), ("items", request.items))
             if v is not None]
    if given:
        raise ExportError(f"--{given[0]} is for --kind items; episodes are chosen with --tier, --depths and --instances")
    tier, obs_format = request.tier or DEFAULT_TIER, request.obs_format or "text"
    if tier not in TIER_SPECS:
        raise ExportError(f"--tier must be one of {', '.join(TIER_SPECS)}, got {tier!r}")
    if obs_format not in EXPORT_OBS_FORMATS:
        raise ExportError(f"--obs-format must be one of {', '.join(EXPORT_OBS_FORMATS)}, got {obs_format!r}")
    if obs_format == "image" and not tier_spec(tier).pictured:
        raise ExportError(f"the {tier} tier is text only; --obs-format image is for {tier_names('pictured')}")
    if obs_format == "image" and request.images == "none":
        raise ExportError(f"the {tier} tier's observation is an image: give --images bytes or files, or "
                          "--obs-format text for its text form")
    if request.instances is not None and request.instances < 1:
        raise ExportError(f"--instances must be at least 1, got {request.instances}")


# --- episodes and SFT traces ----------------------------------------------------------------------
def episode_specs(request: ExportRequest) -> list[EpisodeSpec]:
    """The planned episodes of the request's suite on its tier, depths and instance count (certified only)."""
    name = request.suite or DEFAULT_SUITES[request.kind]
    try:
        suite = load_suite(name)
        if not isinstance(suite, Suite):
            raise ExportError(f"suite {name!r} is not an episode suite: export a question suite with --kind items "
                              "(multi-agent suites have no task export)")
        suite = restrict(suite, [request.tier or DEFAULT_TIER], list(request.depths) if request.depths else None)
        if request.instances is not None and request.chosen_starts == "evaluation":
            suite = suite_from_dict({**suite.to_dict(), "instances": request.instances}, source=f"{name} (export)")
        source = resolve_source(suite, warn=False)
    except SuiteError as err:
        raise ExportError(str(err)) from None
    if source != "certified":
        raise ExportError(f"suite {name!r} plays seeded scrambles, whose depths are not certified: exports hold "
                          "certified instances only")
    return plan_episodes(suite, source)


@lru_cache(maxsize=None)
def _shipped(metric: str, depth: int) -> tuple[Instance, ...]:
    """The largest shipped certified set of ``depth`` (the runner's instance ``k`` is its ``k``-th record)."""
    path = largest_instance_file(metric, depth)
    return tuple(load_instance_file(path)) if path is not None else ()


def certified_instance(spec: EpisodeSpec) -> Instance:
    """The certified instance a planned episode starts from."""
    shipped = _shipped(spec.metric, spec.depth)
    if spec.instance >= len(shipped):
        raise ExportError(f"{spec.key}: no shipped certified instance {spec.instance} of {spec.metric}-turn "
                          f"depth {spec.depth}")
    instance = shipped[spec.instance]
    if "state" in spec.reset_options and spec.reset_options["state"] != instance.state:
        raise ExportError(f"{spec.key}: the planned start state is not shipped instance {spec.instance}")
    return instance


def episode_starts(request: ExportRequest, notes: list[str] | None = None) -> list[tuple[EpisodeSpec, Instance]]:
    """Each planned episode with the instance it starts from: the suite's certified ones (``--starts evaluation``),
    or (``training``) as many training starts per depth as ``--instances`` asks, played in the suite's cells.  With
    no ``--depths``, training starts are drawn at the suite's depths that have them (:func:`training_depths`)."""
    specs = episode_specs(request)
    if request.chosen_starts == "evaluation":
        return [(spec, certified_instance(spec)) for spec in specs]
    templates = {spec.depth: spec for spec in specs if spec.instance == 0}
    if request.depths is None:
        templates = {d: t for d, t in templates.items() if d in training_depths(t.metric, list(templates), notes)}
        if not templates:
            raise ExportError(f"suite {request.suite or DEFAULT_SUITES[request.kind]!r} has no depth with training "
                              "starts: give --depths where they exist (quarter turns 4 to 9), or --starts evaluation")
    count = request.instances or 100
    pairs = []
    try:
        for depth, template in sorted(templates.items()):
            found = training_instances(template.metric, depth, count, seed=request.seed, at_most=True)
            if len(found) < count and notes is not None:
                notes.append(f"depth {depth}: only {len(found)} training start(s) exist apart from the evaluation "
                             f"sets (asked {count}); all of them are exported")
            for instance in found:
                key = f"train/{episode_key(template.tier, depth, instance.index, template.reward, template.setting)}"
                pairs.append((replace(template, key=key, instance=instance.index, source=SOURCE,
                                      reset_options={"state": instance.state}, certified_distance=depth), instance))
    except TrainingStartError as err:
        raise ExportError(str(err)) from None
    check_apart(instance.state for _, instance in pairs)
    return pairs


def _episode_rows(request: ExportRequest, images: "_ImageSink", summary: "ExportSummary") -> Iterator[dict[str, Any]]:
    settings = PlaySettings(obs_format=request.obs_format or "text", store_images=False)
    text_only = not tier_spec(request.tier or DEFAULT_TIER).pictured or settings.obs_format == "text"
    for spec, instance in episode_starts(request, summary.notes):
        solution = optimal_solution(instance)
        replies = trace_replies(spec.tier, instance.state, solution, spec.metric, spec.max_steps)
        messages, record = play_trace(spec, settings, replies)
        if record.start_facelets != instance.state:
            raise ExportError(f"{spec.key}: the env started from {record.start_facelets}, not the certified "
                              f"instance {instance.state}")
        if request.kind == "sft":
            problem = replay_trace(spec, settings, messages)
            if problem:
                raise TraceError(f"{spec.key}: the trace does not replay: {problem}")
        chat, pictures = images.chat(messages if request.kind == "sft" else messages[:2], text_only)
        row: dict[str, Any] = {
            "id": f"{spec.metric}/{spec.key}", "kind": request.kind, "split": "",
            "tier": spec.tier, "obs_format": settings.obs_format if tier_spec(spec.tier).pictured else "text",
            "metric": spec.metric, "depth": instance.distance, "instance": spec.instance, "reward": spec.reward,
            "setting": spec.setting, "state": instance.state, "solution": solution,
            "max_steps": spec.max_steps, "max_moves": spec.max_moves,
            "max_rotations": spec.max_rotations if tier_spec(spec.tier).partial else None,
            "messages": chat, "images": pictures,
            "verifier": json.dumps(episode_ref(spec.tier, instance.state, spec.metric, spec.max_moves,
                                               spec.max_rotations), sort_keys=True),
        }
        if request.kind == "sft":
            row["steps"] = len(record.steps)
        else:
            row["system"], row["prompt"] = _text(messages[0]["content"]), _text(messages[1]["content"])
        row["split"] = split_of(instance.state, request.seed, request.train_fraction)
        yield row


def training_depths(metric: str, depths: list[int], notes: list[str] | None = None) -> list[int]:
    """The ``depths`` at which training starts exist: within the exact labelling range
    (:data:`~.training_starts.MAX_TRAINING_DEPTH`) and holding a position apart from the evaluation sets (quarter
    turns 1-3 hold none); the others are named in ``notes``."""
    kept, empty, deep = [], [], []
    for depth in depths:
        if depth > MAX_TRAINING_DEPTH[metric]:
            deep.append(depth)
            continue
        try:
            training_instances(metric, depth, 1, at_most=True)
        except TrainingStartError:
            empty.append(depth)
            continue
        kept.append(depth)
    if notes is not None and empty:
        notes.append(f"depth(s) {', '.join(map(str, empty))} left out: every {metric}-turn position there is an "
                     "evaluated one up to symmetry, so no training start exists")
    if notes is not None and deep:
        notes.append(f"depth(s) {', '.join(map(str, deep))} left out: training starts are labelled exactly up to "
                     f"{MAX_TRAINING_DEPTH[metric]} {metric} turns")
    return kept


# --- question items -------------------------------------------------------------------------------
def item_suite(request: ExportRequest) -> QuestionSuite:
    """The request's question suite cut to its tests, depths and item count; a ladder test becomes fixed
    items at ``--depths`` (a ladder's rounds depend on the answers before them)."""
    name = request.suite or DEFAULT_SUITES["items"]
    try:
        suite = load_suite(name)
        if not isinstance(suite, QuestionSuite):
            raise ExportError(f"suite {name!r} is not a question suite: export an episode suite with --kind episodes "
                              "or sft (multi-agent suites have no task export)")
        data = suite.to_dict()
        grids: dict[str, Any] = data["tests"]
        missing = [t for t in request.tests or () if t not in grids]
        if missing:
            raise ExportError(f"suite {name!r} has no test {missing}; it has {list(grids)}")
        chosen = {}
        for test, grid in grids.items():
            if request.tests and test not in request.tests:
                continue
            if "ladder" in grid:
                if not request.depths:
                    raise ExportError(f"suite {name!r} plays {test} as a ladder, whose rounds depend on the answers "
                                      f"before them: export fixed levels with --depths (e.g. --depths 1,2,3)")
                grid = {k: v for k, v in grid.items() if k != "ladder"} | {"items": LADDER_ITEMS}
            chosen[test] = grid | ({"depths": list(request.depths)} if request.depths else {}) | (
                {"items": request.items} if request.items is not None else {})
        cut = question_suite_from_dict({**data, "tests": chosen}, source=f"{name} (export)")
        return restrict_questions(cut, variants=list(request.variants)) if request.variants else cut
    except SuiteError as err:
        raise ExportError(str(err)) from None


def item_rules(request: ExportRequest, suite: QuestionSuite) -> str:
    """The answer rules ``suite``'s items are exported under: ``--rules``, else the suite's first
    (``paper``), as ``cubebench run`` chooses it; :class:`ExportError` naming the choices for one it lacks."""
    try:
        return chosen_rules(suite, request.rules)
    except SuiteError as err:
        raise ExportError(str(err)) from None


def item_rows(request: ExportRequest) -> tuple[list[dict[str, Any]], ExportSummary]:
    """The rows ``export_tasks`` writes for a ``--kind items`` request, held in memory and written nowhere, with
    the summary of what was left out (``files`` empty): for callers that serve the rows themselves (the verifiers
    bridge).  ``images`` must be ``none`` (text only) or ``bytes``; the split is checked as an export's."""
    _check(request)
    if request.kind != "items" or request.images == "files":
        raise ExportError("item_rows makes --kind items rows with --images none or bytes, in memory")
    check_plan_size(item_suite(request), "item")  # held in memory: bounded as a run's plan is (an export streams)
    summary, sides = ExportSummary(), Sides()
    rows = list(_item_rows(request, _ImageSink(request.images, Path(request.out)), summary))
    for row in rows:
        sides.add(row)
    sides.check()
    summary.counts = {split: sum(r["split"] == split for r in rows) for split in SPLITS}
    return rows, summary


def _item_rows(request: ExportRequest, images: "_ImageSink", summary: ExportSummary) -> Iterator[dict[str, Any]]:
    """The rows of every test that asks one question per item, test by test.  A test is left out whole (and
    named in ``summary``), not by the luck of its items, when any item asks several questions: its rows wait
    in a spool on disk until its last item is made."""
    suite = item_suite(request)
    rules = summary.rules = item_rules(request, suite)
    answerer = ModelAnswerer(ScriptedReplies([]), send_images=request.images != "none")
    text_only = request.images == "none"
    for test in suite.fixed:
        with tempfile.TemporaryFile() as spool:
            kept, no_image, several = 0, 0, 0
            for spec in iter_fixed_items(suite, test):
                prompts = asked_prompts(spec.test, spec.options, spec.item, spec.variant, rules=rules)
                asked = max(len(prompts), len(asked_prompts(spec.test, spec.options, spec.item, spec.variant,
                                                            reply="", rules=rules)))
                if asked != 1:
                    several = asked
                    break
                if text_only and prompts[0].image is not None:
                    no_image += 1
                    continue
                pickle.dump(_item_row(request, spec, prompts[0], images, answerer, text_only, rules), spool)
                kept += 1
            if several:
                if request.tests and test in request.tests:
                    raise ExportError(f"{test} asks up to {several} questions, each after the replies before it: "
                                      "a row holds one question; play it with `cubebench run` or the Inspect bridge")
                summary.notes.append(f"{test} left out: it asks several questions, each after the replies before it")
                continue
            if no_image:
                summary.notes.append(f"{test}: {no_image} question(s) that show an image left out (--images none)")
            spool.seek(0)
            for _ in range(kept):
                yield pickle.load(spool)


def _item_row(request: ExportRequest, spec: ItemSpec, prompt: Any, images: "_ImageSink", answerer: ModelAnswerer,
              text_only: bool, rules: str) -> dict[str, Any]:
    """One item's row: its question as asked under ``rules``; ``answer`` is the oracle's reply, the gold in
    the rules' final-answer form (reasoning-free), which the row's verifier accepts."""
    chat, pictures = images.chat(answerer.messages(prompt), text_only)
    group = group_of(configured_test(spec.test, spec.options).split_key(spec.to_item()))
    return {
        "id": f"{spec.metric}/{spec.key}", "kind": "items", "group": group,
        "split": split_of(group, request.seed, request.train_fraction),
        "test": spec.test, "variant": spec.variant, "depth": spec.depth, "index": spec.index,
        "metric": spec.metric, "seed": spec.seed, "state": spec.item["state"], "rules": rules,
        "system": prompt.system, "prompt": prompt.text, "messages": chat, "images": pictures,
        "answer": OracleAnswerer().answer(prompt).text,
        "verifier": json.dumps(question_ref(spec.test, spec.variant, spec.options, spec.item, rules),
                               sort_keys=True),
    }


# --- messages, images and files -------------------------------------------------------------------
def _text(content: Any) -> str:
    """The text of a message's content (a string, or content parts)."""
    return content if isinstance(content, str) else "".join(p["text"] for p in content if p["type"] == "text")


class _ImageSink:
    """Turns chat messages into export rows' ``messages`` and ``images``; keeps or writes the PNGs."""

    def __init__(self, mode: str, out: Path) -> None:
        self.mode, self.out = mode, out

    def chat(self, messages: Sequence[dict[str, Any]], text_only: bool) -> tuple[list[dict[str, Any]], list[Any]]:
        """``(messages, images)``: content a string when ``text_only``, else parts ``{"type", "text"}`` with
        ``{"type": "image", "text": None}`` where each image goes; images in order (PNG bytes or paths)."""
        chat, images = [], []
        for message in messages:
            content = message["content"]
            parts = [{"type": "text", "text": content}] if isinstance(content, str) else content
            kept = []
            for part in parts:
                if part["type"] == "image":
                    images.append(self.keep(cast(bytes, part["png"])))
                    kept.append({"type": "image", "text": None})
                else:
                    kept.append({"type": "text", "text": part["text"]})
            chat.append({"role": message["role"], "content": _text(kept) if text_only else kept})
        return chat, images

    def keep(self, png: bytes) -> Any:
        """The PNG itself (``bytes``) or its path relative to the export folder (``files``)."""
        if self.mode == "bytes":
            return png
        name = Path("images") / f"{hashlib.sha256(png).hexdigest()[:20]}.png"
        (self.out / name).parent.mkdir(exist_ok=True)
        (self.out / name).write_bytes(png)
        return name.as_posix()


class _SplitWriter:
    """Writes rows to their split's file as they come, under a temporary name until :meth:`finish`; checks on
    the way that no start state (or item group) lands on both sides.  Leaving the ``with`` block without
    :meth:`finish` removes what was written."""

    BATCH = 256
    """Rows per Parquet row group (what memory holds while a Parquet file is written)."""

    def __init__(self, out: Path, fmt: str, pngs: bool) -> None:
        self.out, self.fmt, self.pngs = out, fmt, pngs
        self.sides = Sides()
        self.counts = {split: 0 for split in SPLITS}
        self.partial = {split: out / f".{split}.jsonl.partial" for split in SPLITS}
        self.handles: dict[str, IO[str]] = {}

    def __enter__(self) -> "_SplitWriter":
        return self

    def __exit__(self, *exc: object) -> None:
        self._close()
        for path in self.partial.values():
            path.unlink(missing_ok=True)

    def add(self, row: dict[str, Any]) -> None:
        """Write one row to its split's file."""
        split = str(row["split"])
        self.sides.add(row)
        if split not in self.handles:
            self.handles[split] = self.partial[split].open("w", encoding="utf-8")
        self.handles[split].write(_jsonl(row) + "\n")
        self.counts[split] += 1

    def finish(self) -> tuple[dict[str, Path], dict[str, int]]:
        """Check the split, then give each non-empty split its file (an empty one's stale file is removed, so
        it is not read as this export's); ``(files, counts)``."""
        self._close()
        self.sides.check()
        files = {}
        for split in SPLITS:
            final = self.out / f"{split}.{self.fmt}"
            if not self.counts[split]:
                continue
            if self.fmt == "jsonl":
                os.replace(self.partial[split], final)
            else:
                _jsonl_to_parquet(self.partial[split], final, self.BATCH, self.pngs)
            files[split] = final
        for name in _split_names() - {path.name for path in files.values()}:
            (self.out / name).unlink(missing_ok=True)  # an earlier export's other format, or an empty split's file
        return files, dict(self.counts)

    def _close(self) -> None:
        for handle in self.handles.values():
            handle.close()
        self.handles.clear()


def _jsonl(row: dict[str, Any]) -> str:
    """A row as one JSON line (PNG bytes as base64 text)."""
    images = [base64.b64encode(i).decode("ascii") if isinstance(i, bytes) else i for i in row["images"]]
    return json.dumps({**row, "images": images}, sort_keys=True, ensure_ascii=False)


def _jsonl_lines(path: Path, batch: int, pngs: bool) -> Iterator[list[dict[str, Any]]]:
    """The rows of a partial JSON Lines file in batches, PNG bytes decoded again where ``pngs``."""
    rows: list[dict[str, Any]] = []
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            if pngs:
                row["images"] = [base64.b64decode(i) for i in row["images"]]
            rows.append(row)
            if len(rows) == batch:
                yield rows
                rows = []
    if rows:
        yield rows


def _jsonl_to_parquet(source: Path, target: Path, batch: int, pngs: bool) -> None:
    """Parquet (PNG bytes as binary) from a partial JSON Lines file, one batch in memory at a time: a first
    pass settles the columns' types across every row, a second writes the row groups."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise ExportError(f"Parquet needs pyarrow: {install_hint('export')} (or use --format jsonl)") from None
    schema = None
    for rows in _jsonl_lines(source, batch, pngs):
        seen = pa.Table.from_pylist(rows).schema
        schema = seen if schema is None else pa.unify_schemas([schema, seen], promote_options="permissive")
    assert schema is not None  # finish() converts non-empty splits only
    partial = target.with_name(f".{target.name}.partial")
    try:
        with pq.ParquetWriter(partial, schema) as writer:
            for rows in _jsonl_lines(source, batch, pngs):
                writer.write_table(pa.Table.from_pylist(rows, schema=schema))
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
