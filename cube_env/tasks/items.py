"""Question-style items: the question runs beside the episodes (Cube Bench, Inf-Bench, STARE).

An *item* is one test instance, built deterministically from ``(suite seed, test, depth,
index)``: a start state, the options shown and the exact labels.  Playing an item asks a
model one question (or a short loop of them: reflection, closed loop, recovery) through an
:data:`Ask` callback and scores each reply with the test's strict parser.  The callback is how
the higher layers plug in any answerer (an LLM client, the oracle, the random baseline)
without this layer knowing them.

A :class:`Prompt` is what one question shows (system text, user text, an optional image) plus
its :class:`ReplyForm`, the strict answer format: the form parses a reply (anything outside the
format is a parse failure, scored wrong), writes an answer in the format (what the oracle
replies) and draws a uniform random answer (what the random baseline replies).  ``gold`` is the
exact answer: it is never sent to a model; only the oracle answerer reads it.
"""

from __future__ import annotations

import hashlib
import random
from abc import ABC, abstractmethod
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterator, Protocol

import numpy as np

from .metrics import Proportion
from ..solver.oracle import EXPANSION, RADIUS

__all__ = [
    "Answer", "ReplyForm", "ParseFailure", "Prompt", "Reply", "Ask", "Exchange", "Item", "ItemResult",
    "QuestionTest", "OneQuestionTest", "ItemGenerationError", "ask_and_judge", "item_rng", "balanced_slot",
    "interleaved",
]

EXACT_RANGE = {metric: RADIUS[metric] + EXPANSION for metric in RADIUS}
"""The distances the oracle answers exactly without tables (9 half turns, 10 quarter turns: :mod:`cubebench.solver.oracle`)."""
MAX_DEPTH = {metric: EXACT_RANGE[metric] - 1 for metric in RADIUS}
"""The deepest items (8 half turns, 9 quarter turns): one below the oracle's exact range, so a start and every
state one move from it (the labels of move choice, move effect, a closed-loop step) are certified without the
optimal solver; deeper ones would each need its tables."""

Answer = Any
"""A parsed answer: a letter ``"B"``, ``"Yes"``, ``"IDK"``, a tuple of labels or of 9 colour letters."""


class ParseFailure(ValueError):
    """A reply is not in the test's strict format; the message says what was expected."""


class ReplyForm(Protocol):
    """A strict one-answer format (see :mod:`cubebench.tasks.parsing`)."""

    def parse(self, reply: str) -> Answer:
        """The answer a reply gives; :class:`ParseFailure` when it is not exactly in the format."""

    def format(self, answer: Answer) -> str:
        """A reply in the format that :meth:`parse` reads back as ``answer``."""

    def sample(self, rng: random.Random) -> Answer:
        """A uniformly random answer among those the format allows."""


@dataclass(frozen=True)
class Prompt:
    """One question as shown to an answerer, with its strict format and (hidden) exact answer."""

    system: str
    text: str
    image: np.ndarray | None
    form: ReplyForm
    gold: Answer
    """The exact answer; never part of what a model is sent."""
    name: str = "question"
    """Which question of the item this is (``draft``, ``reflection``, ``step 2`` ...), for records."""
    scored: bool = True
    """False for free-text turns (the reflection itself): any reply is accepted and nothing is scored."""
    parts: tuple[str | np.ndarray, ...] | None = None
    """Texts and images interleaved, in the order a model is sent them as one multi-image message (STARE's
    frames between their steps); ``None``: ``text`` then ``image``.  When set, ``text`` and ``image`` are what a
    record keeps of it: the texts with an ``[image k]`` marker where each image goes, and the images tiled
    (:func:`interleaved`)."""


def interleaved(parts: list[str | np.ndarray], tile: Callable[[list[np.ndarray]], np.ndarray]) -> dict[str, Any]:
    """The :class:`Prompt` fields of a multi-image message: ``parts`` (texts and images in order), ``text`` (the texts
    joined, ``[image k]`` where image k goes) and ``image`` (the images as ``tile`` puts them in one picture)."""
    texts, images = [], []
    for part in parts:
        if isinstance(part, str):
            texts.append(part)
        else:
            images.append(part)
            texts.append(f"[image {len(images)}]\n")
    return {"parts": tuple(parts), "text": "".join(texts), "image": tile(images) if images else None}


@dataclass
class Reply:
    """An answerer's reply to one :class:`Prompt`, with what it cost."""

    text: str
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    latency_s: float = 0.0
    error: str | None = None
    """The call failed for good (API failure after retries, a spent budget): the item ends as ``error``."""
    model_log: list[dict[str, Any]] = field(default_factory=list)


Ask = Callable[[Prompt], Reply]
"""How an item reaches its answerer: one call per question."""


@dataclass
class Exchange:
    """One question and its reply, parsed and judged."""

    prompt: Prompt
    reply: Reply
    answer: Answer = None
    """The parsed answer, ``None`` on a parse failure or an unscored turn."""
    parse_error: str | None = None
    correct: bool | None = None
    """Whether the answer equals the gold (``None`` for unscored turns and failed calls)."""
    move: str | None = None
    """The move the answer applied to the cube (closed loop, recovery), if any."""
    distance: int | None = None
    """The exact distance after that move."""


@dataclass(frozen=True)
class Item:
    """One test instance: deterministic in ``(seed, test, depth, index)``, JSON-able ``data``."""

    test: str
    depth: int
    index: int
    metric: str
    seed: int
    state: str
    """The start state, 54 facelet letters (URFDLB)."""
    data: dict[str, Any]
    """What the test needs to rebuild its prompts and score them (options, labels, certificates)."""

    @property
    def key(self) -> str:
        return f"{self.test}/d{self.depth}/i{self.index:03d}"


@dataclass
class ItemResult:
    """How one item went: its exchanges, its score and whether it ended cleanly."""

    exchanges: list[Exchange]
    score: dict[str, Any]
    """The test's per-item figures (JSON-able), read by its metrics."""
    passed: bool
    """The item's headline success (a correct answer, a perfect solve, a recovered cube)."""
    error: str | None = None
    """An answerer failure ended the item early (its exchanges so far are kept)."""
    end_state: str = ""
    moves: int = 0
    counted: bool = True
    """False when the item asked nothing its headline can score (a recovery item whose closed loop never
    erred has nothing to recover): a run's share of items passed counts it apart, neither passed nor failed."""


class ItemGenerationError(RuntimeError):
    """A test cannot build the items asked for (too few distinct ones exist at that depth)."""


class QuestionTest(ABC):
    """One question-style test: an item generator, a player and its metrics.

    Subclasses set ``name``, ``variants`` (the ways one item can be asked: prompt modalities,
    reflection regimes; the first is the default) and implement :meth:`build` and :meth:`play`.
    """

    name: str = ""
    variants: tuple[str, ...] = ("default",)
    items_of: str | None = None
    """Ask the items of another test (same states, options and seeds): reflection asks move-choice's,
    recovery closed-loop's."""
    max_candidates: int = 2000
    """Candidates drawn per item before the generator gives up (duplicates, infeasible options)."""
    too_many: str = ""
    """Why a test may run out of distinct items, appended to the message when it does."""
    settable: tuple[str, ...] = ("max_candidates",)
    """The attributes a suite file's ``options`` may set on this test."""
    chance: float | None = None
    """The probability that a uniform random answer is right, where it is one number (four options: 0.25);
    what a ladder's chance level is computed from."""
    rule_sets: tuple[str, ...] = ("paper", "strict")
    """The answer rules the test can be asked under (:mod:`.rules`); a test that writes no rules of its
    own asks the same way under both."""
    reasoned: tuple[str, ...] = ()
    """The rules under which the test's questions ask for reasoning before the answer: what the default token
    limit per reply is chosen by (a one-line answer needs little room)."""
    rules: str = "strict"
    """The rules the test asks under: the runner sets the run's on a copy (``strict`` when nobody chose)."""

    def items(self, depth: int, n: int, *, seed: int = 0, metric: str = "half", first: int = 0) -> list[Item]:
        """Items ``first .. first + n - 1`` of ``depth``: deterministic, duplicates (sharing one of their
        :meth:`identities`) among them discarded.  (A ladder round asks its own block of indices: :mod:`.ladder`.)"""
        return list(self.iter_items(depth, n, seed=seed, metric=metric, first=first))

    def iter_items(self, depth: int, n: int, *, seed: int = 0, metric: str = "half", first: int = 0) -> Iterator[Item]:
        """The same items as :meth:`items`, made one at a time: memory holds their identities, not the items
        (an export of many items streams them)."""
        self.check_depth(depth, metric)
        seen: set[Any] = set()
        for index in range(first, first + n):
            for attempt in range(self.max_candidates):
                item = self.build(depth, index, item_rng(seed, self.stream, depth, index, attempt), seed, metric)
                if item is None:
                    continue
                idents = self.identities(item)
                if seen.isdisjoint(idents) and len(set(idents)) == len(idents):
                    seen.update(idents)
                    yield item
                    break
            else:
                raise ItemGenerationError(
                    f"{self.name}: no new item {index} at depth {depth} ({metric}-turn) after "
                    f"{self.max_candidates} candidates; ask for fewer items at this depth{self.too_many}")

    def check_depth(self, depth: int, metric: str) -> None:
        """``ValueError`` unless items can be built at ``depth``: by default a certified distance within the
        oracle's exact range (:data:`MAX_DEPTH`); a test whose depth is not a distance overrides this."""
        if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
            raise ValueError(f"{self.name}: depth must be an integer >= 1 (a solved cube asks nothing), got {depth!r}")
        if depth > MAX_DEPTH.get(metric, 0):
            raise ValueError(f"{self.name}: depth {depth} is beyond the {MAX_DEPTH.get(metric)} moves ({metric}-turn) "
                             "within which every start is certified and labelled without the optimal solver")

    @property
    def stream(self) -> str:
        """The name the items' random streams are keyed by (:attr:`items_of`, else the test's own)."""
        return self.items_of or self.name

    def split_key(self, item: Item) -> str:
        """What a train/test split must keep on one side (exports group rows by it): the start state, by
        default; a test whose items do not differ by state names what identifies them instead."""
        return item.state

    def check_rules(self, rules: str) -> None:
        """``ValueError`` unless ``rules`` is one of the test's."""
        if rules not in self.rule_sets:
            raise ValueError(f"{self.name} has no answer rules {rules!r}; it has {list(self.rule_sets)}")

    def check_variant(self, variant: str) -> None:
        """``ValueError`` unless ``variant`` is one of the test's."""
        if variant not in self.variants:
            raise ValueError(f"{self.name} has no variant {variant!r}; it has {list(self.variants)}")

    def identity(self, item: Item) -> Any:
        """What makes two items the same: the start state and what is shown about it (options as a set)."""
        shown = {k: sorted(v) if isinstance(v, list) else v for k, v in item.data.get("shown", {}).items()}
        return (item.state, repr(sorted(shown.items())))

    def identities(self, item: Item) -> tuple[Any, ...]:
        """What no two items of the test may share, any one of them (:meth:`items` draws again on a match): by default
        the item's :meth:`identity`; a test that shows several things per item (STARE's nets, one per set of setups)
        names each, so none is shown twice (an item that shows one of them twice is drawn again too)."""
        return (self.identity(item),)

    @abstractmethod
    def build(self, depth: int, index: int, rng: np.random.Generator, seed: int, metric: str) -> Item | None:
        """One candidate item from ``rng`` (``None``: this draw does not make a valid item)."""

    @abstractmethod
    def play(self, item: Item, variant: str, ask: Ask) -> ItemResult:
        """Ask the item's question(s) through ``ask`` and score the replies."""

    @abstractmethod
    def summarize(self, scores: list[dict[str, Any]]) -> dict[str, Any]:
        """The test's metrics over the ``score`` dicts of finished items of one table cell (one depth and
        variant), as ordered ``{column: value}``; a value is a :class:`~cubebench.tasks.metrics.Proportion`
        (a rate with its Wilson interval), a float, an int, or ``None`` (undefined on these items)."""


class OneQuestionTest(QuestionTest):
    """A test that asks each item one question, its :meth:`prompt`, and scores accuracy and parse rate (move
    choice, Inf-Bench's forward and inverse, STARE's net choice; net folding keeps the play and scores F1)."""

    @abstractmethod
    def prompt(self, item: Item, variant: str) -> Prompt:
        """The item's one question, asked in ``variant``."""

    def play(self, item: Item, variant: str, ask: Ask) -> ItemResult:
        self.check_variant(variant)
        prompt = self.prompt(item, variant)
        ex = ask_and_judge(ask, prompt)
        score = {"gold": prompt.gold, "answer": ex.answer, "correct": bool(ex.correct)}
        return ItemResult([ex], score, passed=bool(ex.correct), error=ex.reply.error, end_state=item.state)

    def summarize(self, scores: list[dict[str, Any]]) -> dict[str, Any]:
        n = len(scores)
        return {"acc": Proportion(sum(s["correct"] for s in scores), n),
                "parse": Proportion(sum(s["answer"] is not None for s in scores), n)}


def ask_and_judge(ask: Ask, prompt: Prompt, name: str | None = None) -> Exchange:
    """Ask ``prompt`` and judge the reply: parsed and compared with the gold (a parse failure is wrong);
    a failed call is neither right nor wrong (``reply.error`` is set and the item ends as an error).
    ``name`` renames the question for the record (``step 2``)."""
    if name is not None:
        prompt = replace(prompt, name=name)
    reply = ask(prompt)
    exchange = Exchange(prompt, reply)
    if reply.error is not None:
        return exchange
    try:
        exchange.answer = prompt.form.parse(reply.text)
    except ParseFailure as err:
        exchange.parse_error = str(err)
        exchange.correct = False if prompt.scored else None
        return exchange
    exchange.correct = exchange.answer == prompt.gold if prompt.scored else None
    return exchange


def item_rng(seed: int, test: str, depth: int, index: int, attempt: int = 0) -> np.random.Generator:
    """The random stream of one item candidate: independent of every other item and of run order."""
    digest = hashlib.sha256(f"cubebench-item/{seed}/{test}/{depth}/{index}/{attempt}".encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "big"))


def balanced_slot(seed: int, test: str, depth: int, index: int, n_slots: int) -> int:
    """The slot of item ``index``'s correct answer: each run of ``n_slots`` consecutive items uses every
    slot once, in a seeded order, so slot counts per depth never differ by more than one."""
    block, position = divmod(index, n_slots)
    order = item_rng(seed, f"{test}/slots", depth, block).permutation(n_slots)
    return int(order[position])
