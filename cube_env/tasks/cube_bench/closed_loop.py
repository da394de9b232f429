"""Test 6, closed-loop step-by-step control, with optional abstention.

From a state at exact distance d the model picks one of four moves per step (image and text of
the current state each time): one option is the teacher's move (the next move of the inverse
scramble, optimal because the start is certified at distance d), three are legal moves that make
no progress (another turn of its face and two of the opposite face: :func:`.common.paired_options`);
the teacher move's slot is balanced over A-D per depth and step.  The chosen move is applied; the
episode halts at the first move that is not in the exact optimal action set, or at a parse failure,
and otherwise runs d steps.
Teacher adherence (TA) counts progress steps over all d steps of every episode (the paper's
unconditional denominator: halted steps count as wrong); perfect-solve counts episodes solved
with every step right.

Abstention variants add "E: I don't know" (``IDK``): ``abstain-teacher`` applies the teacher's
move and goes on (no credit), ``abstain-skip`` halts the episode.  They add coverage (answered
over decisions), selective accuracy (right over answered), IDK rate and APA = (right + s IDK) /
decisions with s = 0.25 (paper B.6).

Under the ``release`` answer protocol (:mod:`..protocols`) each step asks, as Cube Bench's code release does, for
reasoning inside ``<REASONING>`` tags and then the tag on the final line (:class:`~..parsing.TaggedForm`);
otherwise the reply is one line.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...engine.state import from_facelets, to_facelets
from ...engine.notation import invert_sequence
from ..items import (
    Ask, Exchange, Item, ItemResult, Prompt, QuestionTest, ReplyForm, ask_and_judge, balanced_slot, item_rng,
)
from ..metrics import Proportion, abstention_metrics
from ...solver.oracle import oracle
from ..parsing import LetterForm, TaggedForm
from ..protocols import PROTOCOLS, RELEASE, STRICT
from .common import (
    COLOURS, LETTERS, NOTATION, certified_start, four_options, metric_words, move_classes, net_image,
    option_lines, state_text, turn,
)

VARIANTS = ("standard", "abstain-teacher", "abstain-skip")
ABSTAIN_S = 0.25
SYSTEM = ("You are an expert Rubik's cube solver, solving a cube one move at a time. At each step you pick one "
          "of the candidate moves; it is applied and you see the new state. " + NOTATION + " " + COLOURS)
USER = ("The image shows the cube as a net (each face's name above it); the same net as text (the text is "
        "authoritative):\n{state}\n\nThe cube is {d} moves from solved ({metric}).\nCandidate moves:\n{options}"
        "{idk}\n\n{close}")
CLOSE = {
    STRICT: ("Reply with exactly one line, <ANSWER> X </ANSWER>, where X is the letter of the move that brings the "
             "cube one move closer to solved{idk_letter}, and nothing else."),
    RELEASE: ("First reason step by step inside <REASONING>...</REASONING>: for each candidate, work out the state "
              "the move leaves and its distance to solved. Then, on the final line, give the letter of the move "
              "that brings the cube one move closer to solved{idk_letter} as <ANSWER> X </ANSWER>, and write "
              "nothing after it."),
}
"""How a step's question closes: the paper's one-line tag (``paper``, ``strict``), or the code release's step
prompt (``release``): reasoning in ``<REASONING>`` tags, then the tag on the final line."""
IDK_OPTION = "\nE: I don't know (IDK)"


def step_prompt(item: Item, state: np.ndarray, progress_move: str, rng: np.random.Generator, slot: int,
                abstain: bool = False, protocol: str = STRICT) -> tuple[Prompt, list[str]] | None:
    """The question of one closed-loop step: ``progress_move`` at ``slot`` and three non-progress moves
    (:func:`.common.four_options`); ``None`` when fewer than three non-progress moves exist (never at
    distance >= 1).  Under the ``release`` protocol the step asks for reasoning, then the tag (:data:`CLOSE`)."""
    here, after = move_classes(state, item.metric)
    options = four_options(rng, progress_move, after, here, slot)
    if options is None:
        return None
    reasoned = protocol == RELEASE
    close = CLOSE[RELEASE if reasoned else STRICT].format(idk_letter=" (or E if you do not know)" if abstain else "")
    text = USER.format(state=state_text(state), d=here, metric=metric_words(item.metric),
                       options=option_lines(options), idk=IDK_OPTION if abstain else "", close=close)
    letters = LetterForm(LETTERS, ("tag", "colon", "bare"), idk=abstain)
    form: ReplyForm = TaggedForm(letters) if reasoned else letters
    return Prompt(SYSTEM, text, net_image(state), form, gold=LETTERS[options.index(progress_move)]), options


def take(ex: Exchange, options: list[str], state: np.ndarray, metric: str) -> np.ndarray:
    """Apply the answered option's move to ``state``; record the move and the exact distance after it."""
    ex.move = options[LETTERS.index(ex.answer)]
    after = turn(state, ex.move)
    ex.distance = oracle(metric).distance(after)
    return after


class ClosedLoop(QuestionTest):
    """Closed-loop step-by-step (paper §3.1, §4.5, B.5) and abstention (§4.7, B.6)."""

    name = "closed-loop"
    variants: tuple[str, ...] = VARIANTS
    protocols = PROTOCOLS

    def build(self, depth: int, index: int, rng: np.random.Generator, seed: int, metric: str) -> Item | None:
        if depth < 1:
            raise ValueError(f"{self.name}: depth must be at least 1")
        start = certified_start(rng, depth, metric)
        if start is None:
            return None
        state, scramble = start
        return Item(self.name, depth, index, metric, seed, to_facelets(state),
                    {"scramble": scramble, "distance": depth, "teacher": invert_sequence(scramble),
                     "horizon": depth})

    def step_rng(self, item: Item, step: int) -> np.random.Generator:
        return item_rng(item.seed, f"{self.stream}/step{step}", item.depth, item.index)

    def step_slot(self, item: Item, step: int) -> int:
        """The teacher move's slot at ``step``: balanced over A-D among the items of each depth and step (a
        fixed letter scores 0.25 on the teacher's path; seeded shuffles gave "always B" 0.44 at depth 1)."""
        return balanced_slot(item.seed, f"{self.stream}/step{step}", item.depth, item.index, 4)

    def play(self, item: Item, variant: str, ask: Ask) -> ItemResult:
        self.check_variant(variant)
        abstain = variant != "standard"
        state, teacher = from_facelets(item.state), item.data["teacher"].split()
        exchanges: list[Exchange] = []
        counts = {"progress": 0, "answered": 0, "idk": 0, "decisions": 0}
        halt = None
        for step, teacher_move in enumerate(teacher):
            built = step_prompt(item, state, teacher_move, self.step_rng(item, step), self.step_slot(item, step),
                                abstain, self.answer_protocol)
            if built is None:
                halt = "no distractors"
                break
            prompt, options = built
            ex = ask_and_judge(ask, prompt, f"step {step + 1}")
            exchanges.append(ex)
            if ex.reply.error is not None:
                halt = "error"
                break
            counts["decisions"] += 1
            if ex.answer is None:
                halt = "parse failure"
                break
            if ex.answer == "IDK":
                counts["idk"] += 1
                if variant == "abstain-skip":
                    halt = "abstained"
                    break
                state = turn(state, teacher_move)
                ex.move, ex.distance = teacher_move, oracle(item.metric).distance(state)
                continue
            counts["answered"] += 1
            state = take(ex, options, state, item.metric)
            if not ex.correct:
                halt = "non-progress move"
                break
            counts["progress"] += 1
        solved = counts["progress"] == item.depth
        score = {"horizon": item.depth, **counts, "solved": solved, "halt": halt, "abstain": abstain}
        error = exchanges[-1].reply.error if exchanges else None
        return ItemResult(exchanges, score, passed=solved, error=error, end_state=to_facelets(state),
                          moves=sum(e.move is not None for e in exchanges))

    def summarize(self, scores: list[dict[str, Any]]) -> dict[str, Any]:
        row: dict[str, Any] = {
            "TA": Proportion(sum(s["progress"] for s in scores), sum(s["horizon"] for s in scores)),
            "perfect": Proportion(sum(s["solved"] for s in scores), len(scores)),
        }
        if not any(s["abstain"] for s in scores):
            return row
        total = {k: sum(s[k] for s in scores) for k in ("progress", "idk", "answered", "decisions")}
        m = abstention_metrics(total["progress"], total["idk"], total["answered"], total["decisions"], ABSTAIN_S)
        row.update({"coverage": m["coverage"], "sel acc": m["selective_accuracy"], "IDK": m["idk_rate"],
                    "APA": m["apa"]})
        return row
