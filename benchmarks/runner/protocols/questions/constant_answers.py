"""The constant-answer level of a question cell: the most a reply that never changes scores on its items.

A model that writes the same reply to every question ("all green", "Answer: Yes", ``A``, four INCREASEs) reads
nothing, so whatever it scores is a property of the items, not of skill.  ``cubebench compare`` prints, beside
every published column, the best such score on the run's own items: a figure at or below it shows nothing.  The
level is measured, not assumed: each candidate constant is played through the test's own ``play`` on every item
of the cell (the stored items of the run's plan, as the runner asked them, under the run's answer rules) and
scored by the test's own metrics, and the best value of each metric is kept.

The candidates are the answers the question's reply form allows (:func:`candidates`): every option letter (and
IDK where the form allows it), Yes and No, a one-colour face for every colour, four equal labels for every
label, each with its confidence 1 or 0 under a confidence gate; and, where a reply has several parts (a face, four
labels), the constant that fits the cell's gold best part by part and the most common gold answer whole.  A
ladder (Inf-Bench) is climbed by each letter with :class:`~cubebench.tasks.ladder.Ladder` and the runner's own
rounds (:func:`constant_ladder`).
"""

from __future__ import annotations

import copy
from collections import Counter
from dataclasses import dataclass
from statistics import mean
from typing import Any, Callable

from cubebench.tasks.items import Item, Prompt, Reply
from cubebench.tasks.ladder import Ladder
from cubebench.tasks.metrics import Proportion
from cubebench.tasks.parsing import BoxedForm, ConfidenceForm, GridForm, LabelsForm, LetterForm, TaggedForm, YesNoForm

from ...stats import as_float
from .plan import ItemSpec, ladder_round
from .report import summarize
from .suite import QuestionSuite, configured_test

__all__ = ["Level", "LOWER_IS_BETTER", "DESCRIPTIVE", "candidates", "constant_levels", "constant_ladder", "better"]

LOWER_IS_BETTER = frozenset({"OTR", "Avg@All", "Med@Solved"})
"""Metrics a constant reaches its best at the low end of."""
DESCRIPTIVE = frozenset({"yes bias", "coverage", "IDK", "F1 chance", "prior dev", "centre baseline"})
"""Metrics that describe answers rather than grade them: their level is the span the constants reach."""


@dataclass(frozen=True)
class Level:
    """The best a constant reply reaches in one metric: its value, the constant (a short label), and for a
    descriptive metric the span every constant reaches (``low``, ``high``)."""

    value: float | None
    answer: str
    low: float | None = None
    high: float | None = None
    interval: tuple[float, float] | None = None
    """The Wilson 95 % interval of the best constant's rate (a rate's level only)."""


def better(metric: str, a: float, b: float) -> bool:
    """Whether ``a`` is a better score than ``b`` in ``metric`` (lower for :data:`LOWER_IS_BETTER`)."""
    return a < b if metric in LOWER_IS_BETTER else a > b


def _label(answer: Any) -> str:
    """A constant answer in a few characters: ``Yes``, ``A``, ``A@1.0``, ``all G``, ``GGW/RRO/BBY`` (a face by rows),
    ``IIDI`` (four labels by their initials)."""
    if isinstance(answer, tuple) and len(answer) == 2 and isinstance(answer[1], float):
        return f"{answer[0]}@{answer[1]:.1f}"
    if isinstance(answer, tuple):
        if len(set(answer)) == 1:
            return f"all {answer[0]}"
        if len(answer) == 9:
            return "/".join("".join(answer[r:r + 3]) for r in (0, 3, 6))
        return "".join(str(a)[0] for a in answer)
    return str(answer)


def _base(form: Any) -> Any:
    """The form whose answers a wrapping form (boxed, tagged, gated) formats."""
    return form.inner if isinstance(form, (BoxedForm, TaggedForm, ConfidenceForm)) else form


def candidates(form: Any, golds: list[Any]) -> list[Any]:
    """The constant answers of a reply ``form`` (see the module docstring), fitted to ``golds`` where a reply has
    parts."""
    base = _base(form)
    if isinstance(form, ConfidenceForm):
        return [(a, 1.0) for a in base.answers] + [(a, 0.0) for a in base.letters]
    if isinstance(base, LetterForm):
        return list(base.answers)
    if isinstance(base, YesNoForm):
        return ["Yes", "No"]
    if isinstance(base, (GridForm, LabelsForm)):
        symbols, width = (base.alphabet, 9) if isinstance(base, GridForm) else (base.labels, len(base.letters))
        found = [tuple(s for _ in range(width)) for s in symbols]
        wholes = [g for g in golds if isinstance(g, tuple) and len(g) == width]
        if wholes:
            found.append(tuple(Counter(g[k] for g in wholes).most_common(1)[0][0] for k in range(width)))
            found.append(Counter(wholes).most_common(1)[0][0])
        return list(dict.fromkeys(found))
    return []


def _prompts(test: Any, items: list[Item], variant: str) -> list[Prompt]:
    """The scored questions an answerer that never parses is asked (each item's first): their forms and golds."""
    seen: list[Prompt] = []

    def probe(prompt: Prompt) -> Reply:
        if prompt.scored:
            seen.append(prompt)
        return Reply(text="")

    for item in items:
        test.play(item, variant, probe)
    return seen


def _constant(text: str) -> Callable[[Prompt], Reply]:
    return lambda prompt: Reply(text=text)


def _replaying(test: Any) -> Any:
    """A copy of ``test`` whose questions are rendered once per item and variant: a constant's reply never changes
    what an item shows, so every candidate after the first is asked the same prompt objects (a pure function of the
    item and variant; rendering is most of a replay's cost)."""
    test = copy.copy(test)
    render = getattr(test, "prompt", None)
    if callable(render):
        shown: dict[tuple[int, str], Prompt] = {}

        def prompt(item: Item, variant: str) -> Prompt:
            key = (id(item), variant)
            if key not in shown:
                shown[key] = render(item, variant)
            return shown[key]

        test.prompt = prompt
    return test


def constant_levels(specs: list[ItemSpec], rules: str) -> dict[str, Level]:
    """Per metric of the test, the best a constant reply reaches on ``specs`` (the items of one cell: one test,
    variant and depth), asked under answer ``rules``; empty when the cell's form has no constant."""
    if not specs:
        return {}
    first = specs[0]
    test = _replaying(configured_test(first.test, first.options, rules))
    items = [s.to_item() for s in specs]
    prompts = _prompts(test, items[:1], first.variant)
    if not prompts:
        return {}
    form = prompts[0].form
    if isinstance(_base(form), (GridForm, LabelsForm)):  # fitted constants need every item's gold
        prompts = _prompts(test, items, first.variant)
    values: dict[str, list[tuple[float, str, tuple[float, float] | None]]] = {}
    for answer in candidates(form, [p.gold for p in prompts]):
        reply = _constant(form.format(answer))
        found, _ = summarize(first.test, [test.play(item, first.variant, reply).score for item in items])
        for metric, value in found.items():
            number = as_float(value)
            if number is not None:
                interval = value.interval if isinstance(value, Proportion) else None
                values.setdefault(metric, []).append((number, _label(answer), interval))
    levels = {}
    for metric, reached in values.items():
        best = reached[0]
        for candidate in reached[1:]:
            if better(metric, candidate[0], best[0]):
                best = candidate
        low, high = min(r[0] for r in reached), max(r[0] for r in reached)
        levels[metric] = Level(best[0], best[1], low, high, best[2])
    return levels


def constant_ladder(suite: QuestionSuite, name: str, variant: str, rules: str) -> Level | None:
    """The best mean ladder score a constant letter reaches over ``suite``'s ladders of ``name`` in ``variant``: each
    letter climbs every run's ladder with the rounds the runner would plan for it (:func:`.plan.ladder_round`)."""
    grid = suite.ladders[name]
    test = configured_test(name, grid.options, rules)
    opening = ladder_round(suite, name, variant, 0, 0, 1)
    prompts = _prompts(test, [s.to_item() for s in opening], variant)
    if not prompts:
        return None
    form = prompts[0].form
    best: Level | None = None
    for answer in candidates(form, []):
        reply = _constant(form.format(answer))
        scores = []
        for run in range(grid.runs):
            ladder, round_ = Ladder(grid.rules), 0
            while not ladder.finished:
                specs = ladder_round(suite, name, variant, run, round_, ladder.level)
                ladder.record(sum(test.play(s.to_item(), variant, reply).passed for s in specs))
                round_ += 1
            scores.append(ladder.score)
        score = mean(scores)
        if best is None or score > (best.value or 0.0):
            best = Level(score, _label(answer))
    return best
