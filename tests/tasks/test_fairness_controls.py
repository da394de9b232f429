"""No free points on Cube Bench's fairness-control variants (issue 24: the paper's B.1.2, B.2.2 and B.6.2): each
trick a clever model could try, played on the full ``cube-bench`` suite's items, must land at chance.

* **Reconstruction, ``uniform-prior``** (B.1.2): the colour-token prior of each depth's gold faces is within 0.05
  of uniform, so a fixed answer (every one-colour grid, or the best fixed grid per cell, fitted on half the items
  and scored on the other half) lands at 1/6 element accuracy; under ``image`` "all green" scores 0.44-0.59.
  Copying the Front centre's colour into every cell (the report's "centre baseline") is reading the picture, and
  stays what it was: named, not removed.
* **Verification, ``polarity``** (B.2.2): a perfect comparator blind to the reversed questions, "always Yes",
  "always No" and the colour-count rule land at balanced accuracy 0.5, and no surface form (the question's
  wording, the grid's form, the introduction) tells Yes from No.
* **Closed loop, ``abstain-controlled`` and ``abstain-gated``** (B.6.2): a fixed letter lands at the exact chance
  of the option sets (one or two progress options of four, computed by enumerating every path), so does the
  option-string rule (turn types); abstaining always (or stating a low confidence under the gate) earns TA 0 and
  APA 0.25, whatever the choice would have been.

``python tests/tasks/test_fairness_controls.py`` prints the figures docs/cube-bench.md quotes (about 30 s).
"""

from __future__ import annotations

import sys
from collections import Counter, defaultdict
from functools import lru_cache
from itertools import product
from typing import Callable

import pytest

from cubebench.engine.facelets import COLOUR_LETTERS, colours
from cubebench.engine.state import from_facelets
from cubebench.runner.suites import load_suite
from cubebench.tasks.cube_bench import closed_loop
from cubebench.tasks.cube_bench.common import front_face
from cubebench.tasks.parsing import OPTION_LETTERS
from cubebench.tasks.cube_bench.reconstruction import colour_prior, held_state
from cubebench.tasks.cube_bench.verification import QUESTIONS, asked, polarity_prompt
from cubebench.tasks.items import Item, Prompt, Reply
from cubebench.tasks.metrics import balanced_accuracy
from cubebench.solver.oracle import oracle
from cubebench.tasks.registry import TESTS


@lru_cache(maxsize=None)
def suite_items(test: str, depth: int, suite: str = "cube-bench") -> list[Item]:
    """The items the named suite asks of ``test`` at ``depth`` (its seed, metric and counts)."""
    s = load_suite(suite)
    return TESTS[test].items(depth, s.fixed[test].items_at(depth), seed=s.seed, metric=s.metric)


# --- reconstruction: the colour-token prior and fixed answers -----------------------------------------------------
def golds(depth: int, variant: str) -> list[str]:
    """The nine gold letters of each of the suite's reconstruction items at ``depth`` as ``variant`` shows them."""
    return ["".join(front_face(held_state(i, variant))) for i in suite_items("reconstruction", depth)]


def element_acc(grids: list[str], answer: Callable[[int], str]) -> float:
    return sum(a == g for k, grid in enumerate(grids) for a, g in zip(answer(k), grid)) / (9 * len(grids))


def best_fixed_grid(grids: list[str]) -> float:
    """The per-cell majority colour of one half of the items, scored on the other half (both ways, averaged)."""
    halves = grids[::2], grids[1::2]
    scores = []
    for fit, score in (halves, halves[::-1]):
        grid = "".join(Counter(g[c] for g in fit).most_common(1)[0][0] for c in range(9))
        scores.append(element_acc(score, lambda k: grid))
    return sum(scores) / 2


@pytest.mark.parametrize("depth", [2, 3, 4])
def test_the_uniform_prior_variant_keeps_every_colour_within_five_points_of_uniform(depth: int) -> None:
    prior = colour_prior(golds(depth, "uniform-prior"))
    assert max(abs(p - 1 / 6) for p in prior.values()) <= 0.05, prior
    assert colour_prior(golds(depth, "image"))["G"] > 0.4  # what the control removes: the green Front face


@pytest.mark.parametrize("depth", [2, 3, 4])
def test_fixed_reconstruction_answers_land_at_chance_under_the_uniform_prior(depth: int) -> None:
    grids = golds(depth, "uniform-prior")
    for colour in COLOUR_LETTERS:
        assert abs(element_acc(grids, lambda k: colour * 9) - 1 / 6) <= 0.05, colour
    assert best_fixed_grid(grids) <= 1 / 6 + 0.05
    assert element_acc(golds(depth, "image"), lambda k: "G" * 9) >= 0.4  # the same trick without the control


def test_the_uniform_prior_shows_the_same_cube_turned_as_a_whole() -> None:
    for item in suite_items("reconstruction", 3)[:24]:
        held = held_state(item, "uniform-prior")
        assert sorted(colours(held).tolist()) == sorted(colours(from_facelets(item.state)).tolist())
        assert oracle("half").distance(held) == 3  # a rotation is no move: the certified distance stays
    fronts = Counter(front_face(held_state(i, "uniform-prior"))[4] for i in suite_items("reconstruction", 2)[:96])
    assert set(fronts.values()) == {16}  # each colour in front once in every run of six items


# --- verification: polarity reversals and surface forms ----------------------------------------------------------
def polarity_items() -> list[tuple[Item, str, str]]:
    """(item, question text, gold) of the suite's verification items asked with reversals."""
    return [(i, *polarity_prompt(i)) for i in suite_items("verification", 3)]


def polarity_bal_acc(rule: Callable[[Item, str], str]) -> float:
    rows = polarity_items()
    return balanced_accuracy([g for _, _, g in rows], [rule(i, t) for i, t, _ in rows])


def matches(item: Item) -> bool:
    """What a perfect comparator sees: the text grid equals the image's Front face."""
    return item.data["shown"]["grid"] == "".join(front_face(from_facelets(item.state)))


def surface_rule_bal_acc(feature: Callable[[Item, str], object]) -> float:
    """The best answer per value of ``feature`` (chosen after seeing the golds: an upper bound), balanced accuracy."""
    rows = polarity_items()
    votes: dict[object, Counter] = defaultdict(Counter)
    for item, text, gold in rows:
        votes[feature(item, text)][gold] += 1
    best = {k: max(("Yes", "No"), key=lambda a: c[a] / max(1, sum(g == a for _, _, g in rows))) for k, c in votes.items()}
    return balanced_accuracy([g for _, _, g in rows], [best[feature(i, t)] for i, t, _ in rows])


def test_a_comparator_blind_to_the_reversal_lands_at_chance() -> None:
    assert polarity_bal_acc(lambda i, t: "Yes" if matches(i) else "No") == 0.5
    reversed_ = {q[1] for q in QUESTIONS}
    aware = polarity_bal_acc(lambda i, t: "Yes" if matches(i) != any(q in t for q in reversed_) else "No")
    assert aware == 1.0  # reading the question (and the picture) is what scores


def test_fixed_answers_and_colour_counts_land_at_chance_on_polarity() -> None:
    assert polarity_bal_acc(lambda i, t: "Yes") == 0.5
    assert polarity_bal_acc(lambda i, t: "No") == 0.5
    colours_agree = lambda i, t: sorted(i.data["shown"]["grid"]) == sorted(front_face(from_facelets(i.state)))  # noqa: E731
    assert polarity_bal_acc(lambda i, t: "Yes" if colours_agree(i, t) else "No") == 0.5


SURFACE = {
    "question wording (with its polarity)": lambda i, t: next(q for pair in QUESTIONS for q in pair if q in t),
    "grid form": lambda i, t: asked(i.seed, i.depth, i.index, i.data["truth"])["grid_form"],
    "introduction": lambda i, t: asked(i.seed, i.depth, i.index, i.data["truth"])["intro"],
}


@pytest.mark.parametrize("name", list(SURFACE))
def test_no_surface_form_tells_yes_from_no(name: str) -> None:
    assert surface_rule_bal_acc(SURFACE[name]) <= 0.56


def test_yes_and_no_are_balanced_per_question_template() -> None:
    per: dict[str, Counter] = defaultdict(Counter)
    for _, text, gold in polarity_items():
        per[next(q for pair in QUESTIONS for q in pair if q in text)][gold] += 1
    assert len(per) == 6 and all(abs(c["Yes"] - c["No"]) <= 1 for c in per.values()), per


# --- closed loop: B.6.2's option set and the confidence gate ----------------------------------------------------
@pytest.fixture(autouse=False)
def no_images(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(closed_loop, "net_image", lambda state: None)


def played(item: Item, variant: str, letters: tuple[str, ...]) -> dict:
    """The score of ``item`` when each step is answered with the next of ``letters``."""
    answers = iter(letters)

    def ask(prompt: Prompt) -> Reply:
        letter = next(answers)
        return Reply(prompt.form.format((letter, 1.0)) if variant == "abstain-gated" else letter)
    return TESTS["closed-loop"].play(item, variant, ask).score


UNIFORM_LETTER = {c: 0.25 for c in OPTION_LETTERS}
"""An answerer drawing A-D uniformly (the chance a fixed letter is held against)."""
RANDOM = {**{c: 0.2 for c in OPTION_LETTERS}, "IDK": 0.2}
"""The built-in ``random`` answerer with abstention: A-E uniformly."""
RANDOM_GATED = {**{c: 0.2 * 6 / 11 for c in OPTION_LETTERS}, "IDK": 1 - 0.8 * 6 / 11}
"""``random`` under the 0.5 gate: a letter with one of the 6 confidences of 11 at or above 0.5 passes; the rest abstain."""


def exact_chance_ta(item: Item, variant: str, weights: dict[str, float] = UNIFORM_LETTER) -> float:
    """The expected TA of an answerer drawing each step's decision from ``weights``, over every path (exact: a path
    that halts early is counted once per unused suffix, whose weights sum to one)."""
    total = 0.0
    for path in product(list(weights), repeat=item.depth):
        weight = 1.0
        for decision in path:
            weight *= weights[decision]
        if weight:
            total += weight * played(item, variant, path)["progress"]
    return total / item.depth


def constant_ta(items: list[Item], variant: str, letter: str) -> float:
    scores = [played(i, variant, (letter,) * i.depth) for i in items]
    return sum(s["progress"] for s in scores) / sum(s["horizon"] for s in scores)


def chance_of(items: list[Item], variant: str, weights: dict[str, float] = UNIFORM_LETTER) -> float:
    return sum(exact_chance_ta(i, variant, weights) for i in items) / len(items)


@pytest.mark.parametrize("depth", [2, 3])
def test_a_fixed_letter_lands_at_the_exact_chance_of_the_controlled_option_sets(depth: int, no_images: None) -> None:
    items = suite_items("closed-loop", depth)
    chance = chance_of(items, "abstain-controlled")
    assert chance > sum(0.25 ** k for k in range(1, depth + 1)) / depth  # two progress options where one exists
    for letter in OPTION_LETTERS:
        assert abs(constant_ta(items, "abstain-controlled", letter) - chance) <= 0.09, letter


def test_the_controlled_options_hold_a_second_optimal_move_where_one_exists(no_images: None) -> None:
    test, seen = TESTS["closed-loop"], Counter()
    for item in suite_items("closed-loop", 3):
        state = from_facelets(item.state)
        here, after = oracle("half").distance(state), oracle("half").after_moves(state)
        best = [m for m, d in after.items() if d == here - 1]
        prompt, options = closed_loop.step_prompt(item, state, item.data["teacher"].split()[0], test.step_rng(item, 0),
                                                  test.step_slot(item, 0), True, extra_slot=test.extra_slot(item, 0))
        progress = [m for m in options if after[m] == here - 1]
        assert len(progress) == min(2, len(best)) and OPTION_LETTERS[options.index(item.data["teacher"].split()[0])] == prompt.gold
        seen[len(progress)] += 1
        if len(progress) == 2 and len({m[0] for m in options}) == 2:  # two faces: one progress move on each
            assert sorted(m[0] for m in progress) == sorted({m[0] for m in options})
            seen["paired"] += 1
    assert seen[2] > 0 and seen["paired"] >= seen[2] // 2, seen


def option_string_acc(items: list[Item]) -> float:
    """The best rule on the first step's option strings alone (prefer a turn type: quarter, prime or half; ties
    split evenly), its expected accuracy on progress over the items' first steps."""
    test, best = TESTS["closed-loop"], 0.0
    for kind in ("", "'", "2"):
        right = 0.0
        for item in items:
            state = from_facelets(item.state)
            _, options = closed_loop.step_prompt(item, state, item.data["teacher"].split()[0], test.step_rng(item, 0),
                                                 test.step_slot(item, 0), True, extra_slot=test.extra_slot(item, 0))
            here, after = oracle("half").distance(state), oracle("half").after_moves(state)
            picked = [m for m in options if m[1:] == kind] or options
            right += sum(after[m] == here - 1 for m in picked) / len(picked)
        best = max(best, right / len(items))
    return best


def first_step_chance(items: list[Item]) -> float:
    test, total = TESTS["closed-loop"], 0.0
    for item in items:
        state = from_facelets(item.state)
        _, options = closed_loop.step_prompt(item, state, item.data["teacher"].split()[0], test.step_rng(item, 0),
                                             test.step_slot(item, 0), True, extra_slot=test.extra_slot(item, 0))
        here, after = oracle("half").distance(state), oracle("half").after_moves(state)
        total += sum(after[m] == here - 1 for m in options) / 4
    return total / len(items)


def test_the_options_turn_types_do_not_choose_progress(no_images: None) -> None:
    items = [i for d in (2, 3, 4) for i in suite_items("closed-loop", d)]
    assert option_string_acc(items) <= first_step_chance(items) + 0.08


def test_abstaining_always_earns_no_adherence_and_the_abstention_credit_only(no_images: None) -> None:
    test = TESTS["closed-loop"]
    items = suite_items("closed-loop", 3)
    for variant in ("abstain-controlled", "abstain-gated"):
        scores = [played(i, variant, ("IDK",) * i.depth) for i in items]
        row = test.summarize(scores)
        assert row["TA"].k == 0 and row["APA"] == 0.25 and row["coverage"] == 0.0


def test_a_right_choice_stated_below_the_gate_is_an_abstention(no_images: None) -> None:
    test = TESTS["closed-loop"]
    items = suite_items("closed-loop", 2)
    shy = [test.play(i, "abstain-gated", lambda p: Reply(p.form.format((p.gold[0], 0.4)))).score for i in items]
    row = test.summarize(shy)
    assert row["TA"].k == 0 and row["IDK"] == 1.0 and row["gate"] == "0.5"
    sure = [test.play(i, "abstain-gated", lambda p: Reply(p.form.format((p.gold[0], 0.5)))).score for i in items]
    assert test.summarize(sure)["TA"].value == 1.0


# --- the figures the docs quote ----------------------------------------------------------------------------------
def measure() -> None:
    closed_loop.net_image = lambda state: None  # the figures need the options, not the pictures
    print("reconstruction: colour prior W/Y/R/O/G/B of the gold faces, its largest deviation from 1/6, fixed answers")
    for d in (2, 3, 4):
        for variant in ("image", "uniform-prior"):
            grids, prior = golds(d, variant), colour_prior(golds(d, variant))
            fixed = max(element_acc(grids, lambda k: c * 9) for c in COLOUR_LETTERS)
            print(f"  d{d} {variant:13s} prior {'/'.join(f'{prior[c]:.3f}' for c in 'WYROGB')} dev "
                  f"{max(abs(p - 1 / 6) for p in prior.values()):.3f}; best one-colour grid {fixed:.3f}; best fixed grid "
                  f"per cell (half/half) {best_fixed_grid(grids):.3f}")
    print("verification polarity (100 items, depth 3): balanced accuracy")
    print(f"  reversal-blind comparator {polarity_bal_acc(lambda i, t: 'Yes' if matches(i) else 'No'):.3f}; always Yes "
          f"{polarity_bal_acc(lambda i, t: 'Yes'):.3f}; always No {polarity_bal_acc(lambda i, t: 'No'):.3f}")
    for name, feature in SURFACE.items():
        print(f"  best rule on the {name} (picked after seeing the golds): {surface_rule_bal_acc(feature):.3f}")
    print("closed loop abstain-controlled: exact chance TA (uniform A-D) and fixed letters")
    for d in (1, 2, 3, 4):
        items = suite_items("closed-loop", d)
        print(f"  d{d}: chance {chance_of(items, 'abstain-controlled'):.3f}; " + ", ".join(
            f"{c} {constant_ta(items, 'abstain-controlled', c):.3f}" for c in OPTION_LETTERS))
    print("closed loop: exact chance TA of the built-in random answerer (A-E uniform; under the gate, a confidence "
          "drawn from 0.0, 0.1, ..., 1.0)")
    for d in (1, 2, 3, 4):
        items = suite_items("closed-loop", d)
        print(f"  d{d}: abstain-controlled {chance_of(items, 'abstain-controlled', RANDOM):.3f}, abstain-gated "
              f"{chance_of(items, 'abstain-gated', RANDOM_GATED):.3f}, abstain-teacher "
              f"{chance_of(items, 'abstain-teacher', RANDOM):.3f}")
    for d, n in ((2, 240), (3, 400)):
        items = TESTS["closed-loop"].items(d, n, seed=11)
        print(f"  first step, best turn-type rule at d{d} ({n} items, seed 11): {option_string_acc(items):.3f} "
              f"(chance {first_step_chance(items):.3f})")


if __name__ == "__main__":
    sys.exit(measure())
