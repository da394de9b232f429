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

Two more abstention variants follow the paper's B.6.2 generation controls, both ``teacher_on_abstain``:
``abstain-controlled`` builds each step's four options as B.6.2 does: the teacher's move, *one more move of the
exact optimal action set where the state has one* (its slot balanced among the other three), and non-progress
moves for the rest (another turn of each progress move's face, so the options' faces and turn types tell nothing).
Any optimal move counts as progress and is applied; after a move off the teacher's path the next teacher move is
an optimal move of the new state (seeded), never the scramble's.  ``abstain-gated`` adds the optional confidence
gate: each reply carries the model's confidence (:class:`~..parsing.ConfidenceForm`), and a choice made with
confidence below the run's threshold (:attr:`ClosedLoop.confidence_gate`, a suite option, 0.5 by default, stored
with every item's score and printed in the report) is an abstention.  Every abstention variant reports coverage
by step (answered over decisions at steps 1, 2, ...).

Under the ``release`` answer rules (:mod:`..rules`) each step asks, as Cube Bench's code release does, for
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
from ..parsing import IDK, OPTION_LETTERS, ConfidenceForm, LetterForm, TaggedForm
from ..rules import RULES, RELEASE, STRICT
from .common import (
    COLOURS, CUBE_BENCH_NOTATION, certified_start, draw, four_options, metric_words, move_classes, net_image,
    option_lines, state_text, turn,
)

VARIANTS = ("standard", "abstain-teacher", "abstain-skip", "abstain-controlled", "abstain-gated")
CONTROLLED = ("abstain-controlled", "abstain-gated")
"""The variants that build options as B.6.2 does (a second optimal move where one exists)."""
ABSTAIN_S = 0.25
SYSTEM = ("You are an expert Rubik's cube solver, solving a cube one move at a time. At each step you pick one "
          "of the candidate moves; it is applied and you see the new state. " + CUBE_BENCH_NOTATION + " " + COLOURS)
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
SEVERAL = " (if several do, any of them)"
GATED = " A choice made with confidence below {gate:g} counts as I don't know."
"""What the ``abstain-gated`` variant adds to a step's close (with the confidence asked beside the answer)."""


def controlled_options(rng: np.random.Generator, teacher: str, after: dict[str, int], here: int, slot: int,
                       extra_slot: int) -> list[str] | None:
    """B.6.2's four options: ``teacher`` at ``slot``, one more optimal move (distance ``here - 1`` after it) where
    there is one, at the ``extra_slot``-th of the other three slots, and non-progress moves for the rest: another
    turn of each progress move's face (so each face shown holds one progress move and one that is not), or, where
    the two share a face or a face has no such turn, two non-progress moves of any face.  Without a second optimal
    move: :func:`.common.four_options` (the teacher and three non-progress moves).  ``None`` if too few moves."""
    others = sorted(m for m, d in after.items() if d < here and m != teacher)
    if not others:
        return four_options(rng, teacher, after, here, slot)
    extra = others[int(rng.integers(len(others)))]
    stays = [m for m, d in after.items() if d >= here]
    partners = [[m for m in stays if m[0] == face] for face in (teacher[0], extra[0])]
    if teacher[0] != extra[0] and all(partners):
        rest: list[str] | None = [p[int(rng.integers(len(p)))] for p in partners]
    else:
        rest = draw(rng, stays, 2)
    if rest is None:
        return None
    options: list[str | None] = [None] * 4
    options[slot] = teacher
    free = [k for k in range(4) if k != slot]
    options[free[extra_slot]] = extra
    fill = iter(rest[i] for i in rng.permutation(2))
    return [m if m is not None else next(fill) for m in options]


def step_prompt(item: Item, state: np.ndarray, progress_move: str, rng: np.random.Generator, slot: int,
                abstain: bool = False, rules: str = STRICT, extra_slot: int | None = None,
                gate: float | None = None) -> tuple[Prompt, list[str]] | None:
    """The question of one closed-loop step: ``progress_move`` at ``slot`` and three non-progress moves
    (:func:`.common.four_options`), or, given ``extra_slot``, B.6.2's options (:func:`controlled_options`);
    ``None`` when too few non-progress moves exist (never at distance >= 1).  Under the ``release`` rules the
    step asks for reasoning, then the tag (:data:`CLOSE`).  With a ``gate`` the reply carries a confidence too
    (:class:`~..parsing.ConfidenceForm`; the gold is the progress move with confidence 1)."""
    here, after = move_classes(state, item.metric)
    options = (four_options(rng, progress_move, after, here, slot) if extra_slot is None
               else controlled_options(rng, progress_move, after, here, slot, extra_slot))
    if options is None:
        return None
    reasoned = rules == RELEASE
    close = CLOSE[RELEASE if reasoned else STRICT].format(idk_letter=" (or E if you do not know)" if abstain else "")
    if extra_slot is not None:
        close = close.replace("closer to solved", "closer to solved" + SEVERAL, 1).replace(
            "of the move that", "of a move that", 1)
    if gate is not None:
        confident = "<ANSWER> X </ANSWER> <CONFIDENCE> P </CONFIDENCE>"
        close = close.replace("one line, <ANSWER> X </ANSWER>,", f"one line, {confident},", 1).replace(
            "as <ANSWER> X </ANSWER>,", f"as {confident},", 1).replace(
            ", and ", ", P your confidence that it does (a number from 0 to 1), and ", 1) + GATED.format(gate=gate)
    text = USER.format(state=state_text(state), d=here, metric=metric_words(item.metric),
                       options=option_lines(options), idk=IDK_OPTION if abstain else "", close=close)
    letters = LetterForm(OPTION_LETTERS, ("tag", "colon", "bare"), idk=abstain)
    gold = OPTION_LETTERS[options.index(progress_move)]
    if gate is not None:
        return Prompt(SYSTEM, text, net_image(state), ConfidenceForm(letters, reasoned), gold=(gold, 1.0)), options
    form: ReplyForm = TaggedForm(letters) if reasoned else letters
    return Prompt(SYSTEM, text, net_image(state), form, gold=gold), options


def decide(ex: Exchange, gate: float | None) -> str | None:
    """The decision a judged reply makes: its letter, ``IDK``, or ``None`` on a parse failure; under a confidence
    ``gate`` a choice made with confidence below it is ``IDK``."""
    if ex.answer is None:
        return None
    if gate is None:
        return ex.answer
    choice, confidence = ex.answer
    return IDK if confidence < gate else choice


def take(ex: Exchange, options: list[str], state: np.ndarray, metric: str, letter: str | None = None) -> np.ndarray:
    """Apply the answered option's move (``letter``, by default the answer) to ``state``; record the move and the
    exact distance after it."""
    ex.move = options[OPTION_LETTERS.index(ex.answer if letter is None else letter)]
    after = turn(state, ex.move)
    ex.distance = oracle(metric).distance(after)
    return after


class ClosedLoop(QuestionTest):
    """Closed-loop step-by-step (paper §3.1, §4.5, B.5) and abstention (§4.7, B.6)."""

    name = "closed-loop"
    variants: tuple[str, ...] = VARIANTS
    rule_sets = RULES
    reasoned: tuple[str, ...] = (RELEASE,)
    """The code release's steps reason, then tag; the paper's are one line."""
    confidence_gate: float = 0.5
    """``abstain-gated``'s threshold: a choice made with a confidence below it is an abstention (B.6.2's optional
    gate, fixed per run: a suite's ``options`` may set it; every item's score records it)."""
    settable: tuple[str, ...] = ("max_candidates", "confidence_gate")

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
        controlled, gate = variant in CONTROLLED, self.gate(variant)
        state, teacher = from_facelets(item.state), item.data["teacher"].split()
        exchanges: list[Exchange] = []
        counts = {"progress": 0, "answered": 0, "idk": 0, "decisions": 0}
        outcomes: list[str] = []
        halt, on_path = None, True
        for step in range(item.depth):
            teacher_move = teacher[step] if on_path else self.replan(item, state, step)
            built = step_prompt(item, state, teacher_move, self.step_rng(item, step), self.step_slot(item, step),
                                abstain, self.rules, self.extra_slot(item, step) if controlled else None,
                                gate)
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
            choice = decide(ex, gate)
            if choice is None:
                outcomes.append("parse")
                halt = "parse failure"
                break
            if choice == IDK:
                ex.correct = False  # an abstention earns no credit, whatever the gate made of the choice
                counts["idk"] += 1
                outcomes.append("idk")
                if variant == "abstain-skip":
                    halt = "abstained"
                    break
                state = turn(state, teacher_move)
                ex.move, ex.distance = teacher_move, oracle(item.metric).distance(state)
                continue
            counts["answered"] += 1
            here = oracle(item.metric).distance(state)
            state = take(ex, options, state, item.metric, choice)
            ex.correct = ex.distance == here - 1  # any optimal move is progress (one option is, without B.6.2's)
            outcomes.append("right" if ex.correct else "wrong")
            if not ex.correct:
                halt = "non-progress move"
                break
            on_path = on_path and ex.move == teacher_move
            counts["progress"] += 1
        solved = counts["progress"] == item.depth
        score: dict[str, Any] = {"horizon": item.depth, **counts, "solved": solved, "halt": halt, "abstain": abstain}
        if abstain:
            score["steps"] = outcomes
        if gate is not None:
            score["gate"] = gate
        error = exchanges[-1].reply.error if exchanges else None
        return ItemResult(exchanges, score, passed=solved, error=error, end_state=to_facelets(state),
                          moves=sum(e.move is not None for e in exchanges))

    def gate(self, variant: str) -> float | None:
        """The confidence threshold ``variant`` asks under (``abstain-gated`` only), checked."""
        if variant != "abstain-gated":
            return None
        gate = self.confidence_gate
        if isinstance(gate, bool) or not isinstance(gate, (int, float)) or not 0 <= gate <= 1:
            raise ValueError(f"{self.name}: confidence_gate must be a number from 0 to 1, got {gate!r}")
        return float(gate)

    def extra_slot(self, item: Item, step: int) -> int:
        """Where B.6.2's second optimal move goes among the three slots the teacher's leaves: balanced per depth
        and step, as the teacher's slot is."""
        return balanced_slot(item.seed, f"{self.stream}/extra{step}", item.depth, item.index, 3)

    def replan(self, item: Item, state: np.ndarray, step: int) -> str:
        """The teacher's move after the model left the teacher's path by another optimal move: an optimal move of
        ``state`` from the exact distances (seeded), never the scramble's."""
        here, after = move_classes(state, item.metric)
        best = sorted(m for m, d in after.items() if d == here - 1)
        rng = item_rng(item.seed, f"{self.stream}/replan{step}", item.depth, item.index)
        return best[int(rng.integers(len(best)))]

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
        if any("steps" in s for s in scores):  # runs stored before coverage by step was recorded lack it
            row["coverage by step"] = coverage_by_step([s.get("steps", []) for s in scores])
        gates = sorted({s["gate"] for s in scores if "gate" in s})
        if gates:
            row["gate"] = "/".join(f"{g:g}" for g in gates)
        return row


def coverage_by_step(steps: list[list[str]]) -> str:
    """B.6.2's coverage by step: at each step, the decisions answered with a move (not IDK, not a parse failure)
    over the decisions made at that step, as ``1.00/0.94/0.88`` (``-`` for a step no item reached)."""
    parts = []
    for k in range(max((len(s) for s in steps), default=0)):
        made = [s[k] for s in steps if len(s) > k]
        answered = sum(o in ("right", "wrong") for o in made)
        parts.append(f"{answered / len(made):.2f}" if made else "-")
    return "/".join(parts) or "-"
