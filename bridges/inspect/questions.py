"""``cubebench/questions``: the question-style tests of the registry as an Inspect task.

Generic over :data:`cubebench.tasks.registry.TESTS` (Cube Bench's seven tests, and any test registered
there later): the dataset is the runner's plan of a question grid (:func:`~cubebench.runner.protocols.questions.plan.plan_items`:
items from each test's ``items(...)``, one sample per item and variant, keyed like a ``cubebench run`` item),
and the solver asks each sample with :func:`~cubebench.runner.protocols.questions.play.play_item`, i.e. the test's own
``play`` with an ``Ask`` callback that calls the eval's model (:class:`~cubebench.agents.answerers.ModelAnswerer`
over :class:`~.model_client.InspectModelClient`): the test's prompts, strict parsers and labels decide the score.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Iterable

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.log import EvalLog
from inspect_ai.model import ChatMessage, ChatMessageAssistant, ChatMessageUser, ModelOutput, get_model
from inspect_ai.scorer import Score, Scorer, Target, mean, scorer, stderr
from inspect_ai.solver import Generate, Solver, TaskState, solver

from cubebench.agents.records import EpisodeRecord
from cubebench.runner import check_plan_size, chosen_rules, ItemSpec, plan_items, play_item, PlaySettings, QuestionSuite
from cubebench.tasks.registry import get_test

from .model_client import in_worker_thread
from .task_errors import raise_if_error, refuse_unknown, task_parameters
from .agent_factory import stored_record, InspectAgentFactory
from .params import check_flag, question_suite

__all__ = ["questions", "question_dataset", "answer_cube_questions", "question_outcome", "question_table",
           "ITEM_RECORD_KEY"]

ITEM_RECORD_KEY = "cubebench:item"
"""Where a sample's store keeps its item record (the runner's record of an asked item)."""


def question_dataset(suite: QuestionSuite) -> MemoryDataset:
    """One sample per planned item and variant of ``suite``, its :class:`~cubebench.runner.protocols.questions.plan.ItemSpec` as metadata."""
    samples = [Sample(id=spec.key, input=f"Cube question {spec.key} ({spec.metric}-turn metric)",
                      metadata=spec.to_dict()) for spec in plan_items(suite)]
    return MemoryDataset(samples, name=suite.name)


@solver
def answer_cube_questions(send_images: bool = True, rules: str | None = None) -> Solver:
    """Ask the sample's item through its test's ``play``, under answer ``rules`` (``None``: the strict forms);
    each question is one call of the eval's model.

    An item that ended as an error (a model call that failed after Inspect's retries, a broken test) is the
    sample's error in Inspect's terms (:mod:`.task_errors`), its record kept in the store."""
    check_flag(send_images, "send_images")
    settings = PlaySettings(store_images=False, rules=rules)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        model = get_model()
        factory = InspectAgentFactory(model, send_images=send_images)
        spec = ItemSpec(**state.metadata)
        record = await in_worker_thread(play_item, spec, factory.for_runner(), settings)
        state.store.set(ITEM_RECORD_KEY, record.to_dict())
        state.messages = _transcript(record)
        last = record.steps[-1].reply if record.steps else ""
        state.output = ModelOutput.from_content(model=str(model), content=last)
        state.completed = True
        raise_if_error(record, f"item {spec.key}", factory.failed.error)
        return state

    return solve


def _transcript(record: EpisodeRecord) -> list[ChatMessage]:
    """Each question and reply of the item, as text (the images are in the model calls' events)."""
    messages: list[ChatMessage] = []
    for step in record.steps:
        messages += [ChatMessageUser(content=step.observation_text or "(image only)"),
                     ChatMessageAssistant(content=step.reply)]
    return messages


@scorer(metrics={"passed": [mean(), stderr()]})
def question_outcome() -> Scorer:
    """Whether the item passed by its test's own judgement (a correct answer, a perfect solve, a recovered cube);
    the metadata holds the test's per-item figures (``score``), which :func:`question_table` summarises."""

    async def score(state: TaskState, target: Target) -> Score:
        record = stored_record(state, ITEM_RECORD_KEY, "answer_cube_questions", "question_outcome")
        config = record.config
        gold = [ex["gold"] for ex in config["exchanges"] if ex["gold"] is not None]
        return Score(value={"passed": float(record.solved)}, answer=record.steps[-1].action if record.steps else "",
                     explanation=f"{record.status}: {len(record.steps)} question(s), gold {gold}",
                     metadata={"test": config["test"], "variant": config["variant"], "depth": config["depth"],
                               "index": config["index"], "status": record.status, "score": config["score"]})

    return score


def question_table(log: EvalLog | Iterable[dict[str, Any]]) -> dict[tuple[str, str, int], dict[str, Any]]:
    """Each test's own metrics (:meth:`~cubebench.tasks.items.QuestionTest.summarize`) per (test, variant, depth)
    cell, from an Inspect log of ``cubebench/questions`` (or its scores' metadata dicts); items that ended as
    errors have no score and are left out, as in ``cubebench report``."""
    rows = _score_metadata(log) if isinstance(log, EvalLog) else list(log)
    cells: dict[tuple[str, str, int], list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        if row.get("score") is not None:
            cells[(row["test"], row["variant"], row["depth"])].append(row["score"])
    return {cell: get_test(cell[0]).summarize(scores) for cell, scores in sorted(cells.items())}


def _score_metadata(log: EvalLog) -> list[dict[str, Any]]:
    found = []
    for sample in log.samples or []:
        for value in (sample.scores or {}).values():
            if value.metadata and "test" in value.metadata:
                found.append(value.metadata)
    return found


@task
def questions(suite: str | None = None, tests: Any = None, depths: Any = None, items: int | None = None,
              variants: Any = None, metric: str | None = None, seed: int | None = None,
              send_images: bool = True, rules: str | None = None, protocol: str | None = None,
              **unknown: Any) -> Task:
    """Question-style tests: a shipped question suite (``cube-bench``, ``cube-bench-smoke``) or, without one,
    the registered ``tests`` named (all by default), narrowed and overridden by the other parameters
    (docs/ecosystem.md); ``rules`` are the answer rules (default: the grid's, ``paper``; ``protocol`` is their old
    name, still read)."""
    refuse_unknown("cubebench/questions", unknown, questions)
    with task_parameters("cubebench/questions"):
        grid = question_suite(suite, tests=tests, depths=depths, items=items, variants=variants, metric=metric,
                              seed=seed)
        check_plan_size(grid, "item")  # a huge -T items= is one line, before any item is made
        chosen = chosen_rules(grid, rules or protocol)
        ask = answer_cube_questions(send_images, chosen)
    return Task(dataset=question_dataset(grid), solver=ask, scorer=question_outcome(),
                metadata={"suite": grid.to_dict(), "rules": chosen})
