"""The question environment's rows and verdicts, the same under every verifiers API (:mod:`.questions` loads it).

The rows are what ``cubebench export-tasks --kind items --images none`` writes (:func:`cubebench.runner.item_rows`):
the runner's fixed items of a question suite (Cube Bench, STARE; Inf-Bench's ladders at fixed ``depths``), each
question asked as ``cubebench run`` asks it under the answer ``rules`` (default the suite's first, ``paper``,
as ``run``: STARE reasons step by step and boxes its answer, Inf-Bench gives the letter and why, Cube Bench its
one-line forms; ``strict`` is the one-line forms everywhere), split by start state or item group (``train``,
``eval``: the export's ``test``).  Tests whose items ask several questions (closed loop, recovery,
reflection) and questions that show an image are left out, and named (:attr:`QuestionOptions.notes`).

A reply is scored by the row's verifier reference (:func:`cubebench.runner.verify`), which rebuilds the question
under the same rules and reads the reply with that rules' parser: reward ``correct`` (1 for the exact
label, else 0), metric ``parsed`` (0 when the reply is not in the rules' answer form).  Nothing here parses
or prompts by itself.

:mod:`.multiturn` (verifiers 0.2-0.3) puts these rows behind a ``vf.SingleTurnEnv``, :mod:`.question_taskset`
(0.4) behind a ``verifiers.v1`` taskset.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from cubebench.runner import ExportRequest, Verdict, item_rows, reply_tokens, verify

__all__ = ["DEFAULT_SUITE", "QuestionOptions", "info_of", "judge", "question_options"]

DEFAULT_SUITE = "cube-bench"
"""The question suite of ``load_environment()`` without one (``export-tasks --kind items``'s default)."""
EXPORT_SPLIT_OF = {"train": "train", "eval": "test"}
"""The environment's splits and the export's split each holds."""


@dataclass(frozen=True)
class QuestionOptions:
    """The question environment's arguments, validated, with its rows (see :func:`question_options`)."""

    suite: str
    rules: str
    max_tokens: int
    rows: dict[str, list[dict[str, Any]]] = field(repr=False)
    """Each split's dataset rows: ``prompt`` (system and user message), ``answer`` (the gold in the rules'
    final-answer form: a label, never shown to the model), ``info`` (JSON: the item's id, test, variant, depth,
    rules and verifier reference)."""
    notes: tuple[str, ...] = ()
    """What the rows leave out, and why (as ``export-tasks`` names it)."""

    def env_args(self) -> dict[str, Any]:
        """The options as plain values (the rows left out)."""
        return {"suite": self.suite, "rules": self.rules, "max_tokens": self.max_tokens}


def _sequence(value: Any, name: str) -> tuple[Any, ...] | None:
    if value is None:
        return None
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence) or not value:
        raise ValueError(f"{name} must be a non-empty list, got {value!r}")
    return tuple(value)


def question_options(suite: str = DEFAULT_SUITE, rules: str | None = None, tests: Sequence[str] | None = None,
                     depths: Sequence[int] | None = None, items: int | None = None,
                     variants: Sequence[str] | None = None, train_fraction: float = 0.9, seed: int = 0,
                     max_tokens: int | None = None, protocol: str | None = None) -> QuestionOptions:
    """Validate the arguments and make the rows.  ``rules``: ``None`` is the suite's first (``paper``), and
    one the suite lacks raises ``ValueError`` naming its choices; ``max_tokens``: ``None`` is a run's default
    for the exported tests under the rules (room for the reasoning one of them asks for).  Any other bad value raises ``ValueError`` naming
    it, as ``export-tasks`` does.  ``protocol`` is the old name of ``rules``, still read."""
    rules = rules if rules is not None else protocol
    for name, value in (("max_tokens", max_tokens), ("items", items)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
            raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ValueError(f"seed must be an integer, got {seed!r}")
    if isinstance(train_fraction, bool) or not isinstance(train_fraction, (int, float)):
        raise ValueError(f"train_fraction must be a number in [0, 1], got {train_fraction!r}")
    request = ExportRequest(kind="items", out=Path("."), suite=suite, depths=_sequence(depths, "depths"),
                            tests=_sequence(tests, "tests"), variants=_sequence(variants, "variants"), items=items,
                            train_fraction=train_fraction, seed=seed, images="none", rules=rules)
    rows, summary = item_rows(request)  # ExportError, SplitError and SuiteError are ValueErrors naming the value
    assert summary.rules is not None  # item rows always have one
    by_split = {name: [_dataset_row(row) for row in rows if row["split"] == split] for name, split in EXPORT_SPLIT_OF.items()}
    if not any(by_split.values()):
        raise ValueError(f"suite {suite!r} has no text-only question of one turn in the tests, depths and variants "
                         f"asked: {'; '.join(summary.notes) or 'no rows'}")
    limit = max_tokens or reply_tokens(summary.rules, {row["test"] for row in rows})
    return QuestionOptions(suite=suite, rules=summary.rules, max_tokens=limit, rows=by_split,
                           notes=tuple(summary.notes))


def _dataset_row(row: Mapping[str, Any]) -> dict[str, Any]:
    info = {key: row[key] for key in ("id", "test", "variant", "depth", "index", "rules", "verifier")}
    return {"prompt": [{"role": m["role"], "content": m["content"]} for m in row["messages"]], "answer": row["answer"],
            "info": json.dumps(info, sort_keys=True)}


def info_of(info: Mapping[str, Any] | str) -> dict[str, Any]:
    """A row's ``info`` as a dict (the rows keep it as JSON text, as verifiers 0.3's datasets want it)."""
    return json.loads(info) if isinstance(info, str) else dict(info)


def judge(info: Mapping[str, Any] | str, reply: str, rules: str) -> Verdict:
    """The verdict on ``reply`` to a row (its ``info``): the row's verifier reference, which must be of ``rules``
    (the environment's), read with that rules' parser against the exact label."""
    data = info_of(info)
    ref = json.loads(data["verifier"])
    asked = ref.get("rules", ref.get("protocol"))  # "protocol": rows exported before the rules were named
    if asked != rules:
        raise ValueError(f"row {data.get('id')!r} was asked under rules {asked!r}, not {rules!r}")
    return verify(ref, reply if isinstance(reply, str) else "")
