"""No free points: every trick that scored on the question suites without simulating the cube, played as a
test agent on the items of the full suites, must land at chance.

Each agent sees only what its prompt shows (a perfect reader of the picture where it needs one: the cube's
colours, never the gold) and decides by a rule that never simulates a move:

* ``always X`` on closed loop and recovery: the teacher move's slot is balanced per depth and step, so a
  fixed letter is right on a quarter of the teacher's steps (seeded shuffles gave "always B" 0.44 at depth 1);
* the *pairing* cheater on Inf-Bench: an endpoint that keeps state across requests and, having seen one
  start in the forward question (which shows the gold list) and in the inverse question (which shows the
  gold end state), answers the other from it; each direction now draws its own items and no item is asked
  twice, so it never finds a pair;
* ``always INCREASE`` on move-effect: kappa 0, and a macro-F1 at uniform guessing's;
* colour counts: "pick the move of the most one-coloured face" on move choice (0.64 at depth 1 when the
  distractors were any three moves) and "Yes when the text holds the image face's colours" on verification
  (balanced accuracy 0.75 when move negatives could bring new colours in).

``python tests/tasks/test_fairness.py`` prints every agent's score on the full suites (the figures in
docs/cube-bench.md and docs/inf-bench.md, "What a model cannot exploit").
"""

from __future__ import annotations

import itertools
import math
import random
import sys
from collections import Counter
from functools import lru_cache
from itertools import product
from pathlib import Path
from typing import Any, Callable

import pytest

from cubebench.engine.facelets import COLOUR_LETTERS, colours
from cubebench.engine.state import from_facelets
from cubebench.runner.protocols.questions.plan import ladder_round, plan_items
from cubebench.runner.suites import load_suite
from cubebench.tasks.cube_bench.common import front_face
from cubebench.tasks.inf_bench.common import run
from cubebench.tasks.items import Item, Prompt, Reply, balanced_slot
from cubebench.tasks.ladder import Ladder, chance_score
from cubebench.tasks.metrics import Proportion, cohen_kappa, macro_f1
from cubebench.tasks.registry import TESTS

FACES = "URFDLB"
LABELS = ("DECREASE", "NO_CHANGE", "INCREASE")


@lru_cache(maxsize=None)
def suite_items(suite: str, test: str, depth: int) -> list[Item]:
    """The items the named suite asks of ``test`` at ``depth`` (its seed, metric and counts)."""
    s = load_suite(suite)
    grid = s.fixed[test]
    return TESTS[test].items(depth, grid.items_at(depth), seed=s.seed, metric=s.metric)


@lru_cache(maxsize=None)
def face_colours(facelets: str, face: str) -> list[str]:
    """The nine colour letters of ``face`` (what a perfect reader of the picture sees there)."""
    k = FACES.index(face)
    return [COLOUR_LETTERS[int(c)] for c in colours(from_facelets(facelets))[9 * k: 9 * k + 9]]


# --- closed loop and recovery: a fixed letter --------------------------------------------------------------------
def teacher_slots(item: Item) -> list[int]:
    """The teacher move's slot at each step of a closed-loop item (what "always X" is scored against)."""
    test = TESTS["closed-loop"]
    return [test.step_slot(item, step) for step in range(item.depth)]


def constant_ta(items: list[Item], letter: str) -> float:
    """Teacher adherence of "always ``letter``", played through the test."""
    test = TESTS["closed-loop"]
    scores = [test.play(i, "standard", lambda p: Reply(letter)).score for i in items]
    return sum(s["progress"] for s in scores) / sum(s["horizon"] for s in scores)


def chance_ta(depth: int) -> float:
    return sum(0.25 ** k for k in range(1, depth + 1)) / depth


@pytest.mark.parametrize("depth", [1, 2, 3, 4])
def test_the_teacher_slot_is_balanced_per_depth_and_step_so_a_fixed_letter_lands_at_chance(depth: int) -> None:
    items = suite_items("cube-bench", "closed-loop", depth)
    n = len(items)
    for step in range(depth):
        counts = Counter(teacher_slots(i)[step] for i in items)
        assert max(counts.values()) - min(counts.values()) <= 1 and len(counts) == 4, (step, counts)
    for letter in "ABCD":
        # teacher-forced: the share of steps whose gold is the letter is at most ceil(n/4)/n at every step
        assert constant_ta(items, letter) <= chance_ta(depth) + (1 - (n % 4 == 0)) / n + 1e-9, letter
    for attempt in range(1, 4):
        slots = Counter(balanced_slot(0, f"recovery/attempt{attempt}", depth, i.index, 4) for i in items)
        assert max(slots.values()) - min(slots.values()) <= 1


def test_every_closed_loop_step_plays_the_slot_the_balance_gives() -> None:
    test = TESTS["closed-loop"]
    for item in suite_items("cube-bench", "closed-loop", 3)[:6]:
        asked: list[Prompt] = []
        test.play(item, "standard", lambda p: asked.append(p) or Reply(p.form.format(p.gold)))
        assert ["ABCD".index(p.gold) for p in asked] == teacher_slots(item)


# --- Inf-Bench: the pairing cheater --------------------------------------------------------------------------------
class PairingCheater:
    """An endpoint that keeps state across requests: it remembers what each start's forward question showed
    (the gold list) and what its inverse question showed (the gold end state), and answers the other
    direction of a start it has seen from that; otherwise a uniform random letter.  It reads only what the
    prompts show (built here from the items as the prompts build them)."""

    def __init__(self, seed: int = 0) -> None:
        self.rng = random.Random(seed)
        self.gold_list: dict[str, tuple[str, ...]] = {}
        self.gold_end: dict[str, bytes] = {}
        self.paired = 0

    def answer(self, item: Item) -> str:
        start, lists, slot = TESTS[item.test].parts(item)  # type: ignore[attr-defined]
        key = item.state
        if item.test == "inf-forward":  # shows the gold list and the four end states
            ends = [colours(run(start, ops)).tobytes() for ops in lists]
            self.gold_list[key] = tuple(lists[slot])
            if key in self.gold_end and self.gold_end[key] in ends:
                self.paired += 1
                return "ABCD"[ends.index(self.gold_end[key])]
        else:  # shows the gold end state and the four lists
            self.gold_end[key] = colours(run(start, lists[slot])).tobytes()
            shown = [tuple(ops) for ops in lists]
            if key in self.gold_list and self.gold_list[key] in shown:
                self.paired += 1
                return "ABCD"[shown.index(self.gold_list[key])]
        return self.rng.choice("ABCD")


def pairing_rounds(cheater: PairingCheater, suite_name: str = "inf-bench", rounds: int = 2,
                   levels: tuple[int, ...] = (1, 3)) -> tuple[int, int]:
    """(right, asked) of ``cheater`` on the rounds the runner plans for every ladder of the suite (each variant and
    run, rounds ``0 .. rounds - 1`` at each of ``levels``), the forward and the inverse round of each ladder
    position asked one after the other: the order most favourable to pairing."""
    suite = load_suite(suite_name)
    right = asked = 0
    for variant, r, t, level in product(("image", "encoded"), range(suite.ladders["inf-forward"].runs), range(rounds),
                                        levels):
        for name in ("inf-forward", "inf-inverse"):
            for spec in ladder_round(suite, name, variant, r, t, level):
                right += cheater.answer(spec.to_item()) == spec.item["data"]["gold"]
                asked += 1
    return right, asked


def climb_both_directions(cheater: PairingCheater, suite_name: str = "inf-bench", max_rounds: int = 60
                          ) -> dict[tuple[str, str], list[int]]:
    """Every ladder of the suite climbed with ``cheater``, forward and inverse rounds interleaved; the final
    levels per (test, variant)."""
    suite = load_suite(suite_name)
    scores: dict[tuple[str, str], list[int]] = {}
    for variant in ("image", "encoded"):
        for r in range(suite.ladders["inf-forward"].runs):
            ladders = {name: Ladder(suite.ladders[name].rules) for name in ("inf-forward", "inf-inverse")}
            for t in range(max_rounds):
                for name, ladder in ladders.items():
                    if ladder.finished:
                        continue
                    specs = ladder_round(suite, name, variant, r, t, ladder.level)
                    right = sum(cheater.answer(s.to_item()) == s.item["data"]["gold"] for s in specs)
                    ladder.record(right)
            for name, ladder in ladders.items():
                scores.setdefault((name, variant), []).append(ladder.score)
    return scores


def test_the_pairing_cheater_wins_when_both_directions_share_an_item() -> None:
    """The cheater works: shown one item in both directions (as both drew it before), it answers the second
    question right every time."""
    cheater = PairingCheater()
    for item in TESTS["inf-forward"].items(3, 20, seed=1):
        cheater.answer(item)
        twin = Item("inf-inverse", item.depth, item.index, item.metric, item.seed, item.state, item.data)
        assert cheater.answer(twin) == item.data["gold"]
    assert cheater.paired == 20


def test_the_pairing_cheater_lands_at_chance_on_the_inf_bench_ladders() -> None:
    cheater = PairingCheater(seed=3)
    right, asked = pairing_rounds(cheater)
    assert cheater.paired == 0, "no start is asked in both directions"
    lo, hi = Proportion(right, asked).interval or (0.0, 1.0)
    assert lo <= 0.25 <= hi, (right, asked)
    scores = climb_both_directions(PairingCheater(seed=4))
    assert max(s for runs in scores.values() for s in runs) <= 3, scores


def test_no_item_is_asked_twice_in_an_inf_bench_run() -> None:
    """The full suite's first rounds and six more rounds of every ladder at levels 1-3: every start is asked
    once, in one direction and one presentation (level-1 items may share their four one-operation lists, never
    their start)."""
    suite = load_suite("inf-bench")
    specs = plan_items(suite)
    for name, grid in suite.ladders.items():
        for variant in grid.variants:
            for r in range(grid.runs):
                specs += [s for t in range(1, 7) for s in ladder_round(suite, name, variant, r, t, 1 + t % 3)]
    starts = Counter(s.item["state"] for s in specs)
    assert max(starts.values()) == 1, starts.most_common(3)
    assert len(specs) >= 4 * 10 * 7 * 5


# --- move-effect: always INCREASE ---------------------------------------------------------------------------------
def effect_scores(items: list[Item], rule: Callable[[Item], list[str]]) -> dict[str, Any]:
    gold = [g for i in items for g in i.data["labels"]]
    pred = [p for i in items for p in rule(i)]
    return {"kappa": cohen_kappa(gold, pred, LABELS), "macro F1": macro_f1(gold, pred, LABELS),
            "micro": sum(g == p for g, p in zip(gold, pred)) / len(gold), "mix": Counter(gold)}


def most_one_coloured(item: Item, options: list[str], rng: random.Random) -> str:
    """The option whose face holds the most stickers of one colour (ties broken at random)."""
    score = {m: max(Counter(face_colours(item.state, m[0])).values()) for m in options}
    top = max(score.values())
    return rng.choice([m for m in options if score[m] == top])


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_move_effect_headline_gives_always_increase_nothing(depth: int) -> None:
    items = suite_items("cube-bench", "move-effect", depth)
    row = TESTS["move-effect"].summarize([TESTS["move-effect"].play(
        i, "text", lambda p: Reply("\n".join(f"<{c}> INCREASE </{c}>" for c in "ABCD"))).score for i in items])
    assert list(row)[:2] == ["kappa", "macro F1"], "kappa and macro-F1 are the headline"
    assert row["kappa"] == 0.0
    assert row["macro F1"] <= row["F1 chance"] + 0.03, row
    mix = Counter(g for i in items for g in i.data["labels"])
    assert set(mix) == set(LABELS), mix
    if depth == 1:  # one face has moves other than INCREASE: one DECREASE or NO_CHANGE per item, never both
        assert all(sum(g != "INCREASE" for g in i.data["labels"]) == 1 for i in items)
        assert abs(mix["DECREASE"] - mix["NO_CHANGE"]) <= 0.1 * len(items)


FACE_RULE_KAPPA = {1: 0.30, 2: 0.25, 3: 0.12}
"""What "the move of the most one-coloured face is the DECREASE, the rest INCREASE" may reach (measured 0.24,
0.19, 0.07 on the suite's items; named in docs/cube-bench.md): at depth 1 only the face turned and its opposite
are one-coloured and only the face turned has a move that is not an INCREASE, so on four distinct faces the rule
finds the non-INCREASE option half the time.  Without the opposite face among the options it would find it
every time it is not left out."""


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_move_effect_colour_count_rules_stay_at_their_documented_kappa(depth: int) -> None:
    """Options sit on opposite-face pairs, so the face turned last shares its colour counts with another
    option's face; the rule's kappa stays at the figure the docs name."""
    items = suite_items("cube-bench", "move-effect", depth)
    for lab in ("DECREASE", "NO_CHANGE"):
        kappas = []
        for seed in range(5):
            rng = random.Random(seed)

            def rule(i: Item) -> list[str]:
                pick = most_one_coloured(i, i.data["shown"]["options"], rng)
                return [lab if m == pick else "INCREASE" for m in i.data["shown"]["options"]]
            kappas.append(effect_scores(items, rule)["kappa"])
        assert sum(kappas) / len(kappas) < FACE_RULE_KAPPA[depth], (lab, kappas)


# --- colour counts on move choice and verification -----------------------------------------------------------------
FEATURES: dict[str, Callable[[list[str]], int]] = {
    "most of one colour": lambda cells: max(Counter(cells).values()),
    "most of the centre's colour": lambda cells: cells.count(cells[4]),
    "fewest colours": lambda cells: -len(set(cells)),
}


def colour_count_choice(items: list[Item], feature: Callable[[list[str]], int], sign: int) -> float:
    """Expected accuracy of "pick the option whose face scores highest (``sign`` 1) or lowest (-1) on
    ``feature``", ties broken uniformly: the exact mean over the ties."""
    total = 0.0
    for item in items:
        options = item.data["shown"]["options"]
        score = {m: sign * feature(face_colours(item.state, m[0])) for m in options}
        top = [m for m in options if score[m] == max(score.values())]
        gold = options["ABCD".index(item.data["gold"])]
        total += (gold in top) / len(top)
    return total / len(items)


def best_colour_count_choice(items: list[Item]) -> tuple[str, float]:
    return max(((f"{name} ({'max' if sign > 0 else 'min'})", colour_count_choice(items, f, sign))
                for (name, f), sign in product(FEATURES.items(), (1, -1))), key=lambda kv: kv[1])


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_colour_counts_do_not_choose_the_optimal_move(depth: int) -> None:
    items = suite_items("cube-bench", "move-choice", depth)
    rule, acc = best_colour_count_choice(items)
    assert acc < 0.25 + 0.08, (rule, acc)  # 100 items: 0.33 is about two standard errors above chance


def test_the_correct_face_and_its_opposite_hold_two_options_each() -> None:
    for item in suite_items("cube-bench", "move-choice", 2)[:40]:
        faces = Counter(m[0] for m in item.data["shown"]["options"])
        gold = item.data["shown"]["options"]["ABCD".index(item.data["gold"])]
        assert sorted(faces.values()) == [2, 2] and {"UD", "RL", "FB"} & {"".join(sorted(faces)),
                                                                          "".join(sorted(faces))[::-1]}
        assert faces[gold[0]] == 2


def string_rule_accuracy(items: list[Item]) -> float:
    """The best rule reading only the option strings (each option's turn type and its face partner's), fitted
    on half the items and scored on the other half."""
    def features(item: Item) -> list[tuple[str, str]]:
        options = item.data["shown"]["options"]
        return [(m[1:], next(o[1:] for o in options if o[0] == m[0] and o != m)) for m in options]

    def accuracy(rule: dict[tuple[str, str], int], part: list[Item]) -> float:
        total = 0.0
        for item in part:
            f = features(item)
            score = [rule.get(x, 0) for x in f]
            top = [k for k, s in enumerate(score) if s == max(score)]
            total += ("ABCD".index(item.data["gold"]) in top) / len(top)
        return total / len(part)
    fit, held = items[::2], items[1::2]
    wins = Counter(features(i)["ABCD".index(i.data["gold"])] for i in fit)
    return accuracy(dict(wins), held)


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_the_options_form_does_not_choose_the_optimal_move(depth: int) -> None:
    items = TESTS["move-choice"].items(depth, 108 if depth == 1 else 600, seed=11)
    assert string_rule_accuracy(items) < 0.25 + 0.07


def colour_count_verifier(items: list[Item]) -> float:
    """Balanced accuracy of "Yes when the text grid holds the colours of the image's Front face" (a reader of
    the picture who counts colours and never compares places)."""
    from cubebench.tasks.metrics import balanced_accuracy

    gold = [i.data["truth"] for i in items]
    pred = ["Yes" if sorted(i.data["shown"]["grid"]) == sorted(front_face(from_facelets(i.state))) else "No"
            for i in items]
    return balanced_accuracy(gold, pred)  # type: ignore[return-value]


@pytest.mark.parametrize("metric", ["half", "quarter"])
def test_colour_counts_do_not_verify(metric: str) -> None:
    items = TESTS["verification"].items(3, 200, seed=2, metric=metric)
    assert colour_count_verifier(items) == 0.5
    for item in items:
        if item.data["truth"] == "No":
            assert sorted(item.data["shown"]["grid"]) == sorted(front_face(from_facelets(item.state)))


def text_only_bayes(fit: list[Item], held: list[Item]) -> Proportion:
    """Right answers on ``held`` of a naive Bayes over the text grid alone (each cell: the centre's colour or which
    other; the count of the centre's colour) fitted on ``fit``: a model that never looks at the image."""
    def features(item: Item) -> list[str]:
        grid = item.data["shown"]["grid"]
        return [f"{k}:{'c' if grid[k] == grid[4] else grid[k]}" for k in range(9) if k != 4] + [
            f"n{grid.count(grid[4])}"]

    seen: dict[str, Counter[str]] = {"Yes": Counter(), "No": Counter()}
    total = Counter(i.data["truth"] for i in fit)
    for item in fit:
        seen[item.data["truth"]].update(features(item))

    def log_odds(item: Item) -> float:
        return sum(math.log((seen["Yes"][f] + 1) / (total["Yes"] + 2)) - math.log(
            (seen["No"][f] + 1) / (total["No"] + 2)) for f in features(item))
    return Proportion(sum(("Yes" if log_odds(i) > 0 else "No") == i.data["truth"] for i in held), len(held))


@pytest.mark.parametrize("metric", ["half", "quarter"])
def test_the_text_grid_alone_does_not_verify(metric: str) -> None:
    """Look-alike negatives are true faces of other cubes with the same colours, so the grid's pattern is a true
    face's pattern: the naive Bayes fitted on the items of one seed and scored on fresh items of another is within
    chance's interval (move negatives that kept the colours, mostly the face turned in its plane, let it reach
    0.58-0.61 at depth 3)."""
    from learners import covers

    rate = text_only_bayes(fresh_verification(metric, 13), fresh_verification(metric, 14))
    assert covers(rate, 0.5), rate.format()


LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))
"""The rows, columns and diagonals of a face's grid."""


def grid_features(grid: str) -> dict[str, float]:
    """What a reader of the text grid alone can use: each cell's colour, which pairs of cells are equal, every
    colour's count, the number of colours, the centre colour's count with it, how many colours each line holds."""
    f: dict[str, float] = {f"cell {k} = {c}": 1.0 for k, c in enumerate(grid)}
    f.update({f"cells {a} = {b}": float(grid[a] == grid[b]) for a, b in itertools.combinations(range(9), 2)})
    f.update({f"count {c} = {grid.count(c)}": 1.0 for c in set(grid)})
    f[f"colours = {len(set(grid))}"] = 1.0
    f[f"centre's {grid.count(grid[4])}, colours {len(set(grid))}"] = 1.0
    f.update({f"line {k} holds {len({grid[i] for i in line})}": 1.0 for k, line in enumerate(LINES)})
    return f


def swapped(grid: str, rng: random.Random) -> str:
    """``grid`` with two cells of different colours (never the centre) swapped: the earlier edit negatives."""
    pairs = [(a, b) for a, b in itertools.combinations((0, 1, 2, 3, 5, 6, 7, 8), 2) if grid[a] != grid[b]]
    a, b = rng.choice(pairs)
    cells = list(grid)
    cells[a], cells[b] = cells[b], cells[a]
    return "".join(cells)


def grid_rows(items: list[Item], edit: random.Random | None = None) -> list[tuple[dict[str, float], bool]]:
    """(features of the shown grid, is Yes) per item; with ``edit``, No items show a swap of the true face instead
    (the earlier construction, for the learners to find)."""
    return [(grid_features(i.data["shown"]["grid"] if edit is None or i.data["truth"] == "Yes"
                           else swapped(front_of(i), edit)), i.data["truth"] == "Yes") for i in items]


def front_of(item: Item) -> str:
    return "".join(front_face(from_facelets(item.state)))


FRESH = {"half": 600, "quarter": 400}
"""Fresh verification items per seed at depth 3: each item shows two cubes of its own, and the quarter-turn metric
has only 1,068 states at distance 3."""


@lru_cache(maxsize=None)
def fresh_verification(metric: str, seed: int) -> list[Item]:
    return TESTS["verification"].items(3, FRESH[metric], seed=seed, metric=metric)


@pytest.mark.parametrize("metric", [pytest.param("half", marks=pytest.mark.slow), "quarter"])
def test_learned_models_of_the_text_grid_do_not_verify(metric: str) -> None:
    """A logistic regression and boosted stumps over every grid feature (:func:`grid_features`), fitted on 600 items
    of one seed and scored on 600 fresh items of another (400 in the quarter-turn metric): within chance's interval.  Fitted and scored on the earlier
    construction (half the negatives two cells swapped), the same learners catch it (0.80 or more: the check can
    fail; issue 33's logistic regression on equal cells scored 0.70 [0.60, 0.78] on the suite's 100 items)."""
    from learners import LEARNERS, covers, held_out

    train, test = fresh_verification(metric, 13), fresh_verification(metric, 14)
    for name, learner in LEARNERS.items():
        rate = held_out(grid_rows(train), grid_rows(test), learner)
        assert covers(rate, 0.5), (name, rate.format())
        planted = held_out(grid_rows(train, random.Random(1)), grid_rows(test, random.Random(2)), learner)
        assert planted.value is not None and planted.value >= 0.8, (name, planted.format())


def best_fitted_rule(train: list[Item], test: list[Item], rules: dict[str, Callable[[str], bool]]) -> float:
    """The balanced accuracy on ``test`` of the rule (either way) that scores best on ``train``."""
    from cubebench.tasks.metrics import balanced_accuracy

    def score(items: list[Item], rule: Callable[[str], bool], yes_when: bool) -> float:
        pred = ["Yes" if rule(i.data["shown"]["grid"]) == yes_when else "No" for i in items]
        return balanced_accuracy([i.data["truth"] for i in items], pred) or 0.5
    name, yes_when = max(((n, w) for n in rules for w in (True, False)), key=lambda nw: score(train, rules[nw[0]], nw[1]))
    return score(test, rules[name], yes_when)


def count_rules() -> dict[str, Callable[[str], bool]]:
    """Combined counts: "the centre's colour at least a times and at most b colours", every a and b."""
    return {f"centre's >= {a}, colours <= {b}": (lambda g, a=a, b=b: g.count(g[4]) >= a and len(set(g)) <= b)
            for a in range(1, 10) for b in range(1, 7)}


def pair_rules() -> dict[str, Callable[[str], bool]]:
    """Pairwise cells: "cells a and b are equal", every pair, and every two pairs together."""
    pairs = list(itertools.combinations(range(9), 2))
    rules: dict[str, Callable[[str], bool]] = {f"{a}={b}": (lambda g, a=a, b=b: g[a] == g[b]) for a, b in pairs}
    rules.update({f"{p}={q} and {r}={t}": (lambda g, p=p, q=q, r=r, t=t: g[p] == g[q] and g[r] == g[t])
                  for (p, q), (r, t) in itertools.combinations(pairs, 2)})
    return rules


@pytest.mark.parametrize("metric", ["half", "quarter"])
def test_combined_count_and_pairwise_cell_rules_do_not_verify(metric: str) -> None:
    """The best combined-count rule and the best rule on one or two pairs of equal cells, each chosen on 600 items
    and scored on 600 fresh ones (400 quarter-turn), stay within chance's reach (0.06 of 0.5: about two and a half
    standard errors on 400 items)."""
    train, test = fresh_verification(metric, 13), fresh_verification(metric, 14)
    for rules in (count_rules(), pair_rules()):
        assert abs(best_fitted_rule(train, test, rules) - 0.5) < 0.06


def remembered(items: list[Item]) -> Proportion:
    """Right answers of "No when this grid was shown before, else Yes", the items asked in order: a model that
    remembers grids across items."""
    seen: set[str] = set()
    right = 0
    for item in items:
        grid = item.data["shown"]["grid"]
        right += ("No" if grid in seen else "Yes") == item.data["truth"]
        seen.add(grid)
    return Proportion(right, len(items))


@pytest.mark.parametrize("metric", ["half", "quarter"])
def test_remembering_grids_and_cubes_does_not_verify(metric: str) -> None:
    """Every item's two cubes (the image's and the look-alike's) are drawn alike and shown in a random order, and no
    cube is shown twice: so no image comes back, and a grid comes back as often on Yes items as on No items."""
    from learners import covers

    for items in (fresh_verification(metric, 13), fresh_verification(metric, 14)):
        cubes = [c for i in items for c in (i.state, i.data["other"])]
        assert len(set(cubes)) == len(cubes)
        assert covers(remembered(items), 0.5), remembered(items).format()
    if metric == "half":
        assert covers(remembered(suite_items("cube-bench", "verification", 3)), 0.5)


# --- the figures the docs quote -----------------------------------------------------------------------------------
def measure() -> None:
    """Print every agent's score on the full suites (docs/cube-bench.md and docs/inf-bench.md)."""
    print("closed loop, 'always X' teacher adherence (chance):")
    for d in (1, 2, 3, 4):
        items = suite_items("cube-bench", "closed-loop", d)
        tas = {c: constant_ta(items, c) for c in "ABCD"}
        print(f"  depth {d} ({len(items)} items): " + ", ".join(f"{c} {v:.3f}" for c, v in tas.items())
              + f" (chance {chance_ta(d):.3f})")
    print("move choice, best colour-count rule (expected accuracy over ties; chance 0.25):")
    for d in (1, 2, 3):
        rule, acc = best_colour_count_choice(suite_items("cube-bench", "move-choice", d))
        print(f"  depth {d}: {acc:.3f} ({rule})")
    print("move choice, best option-string rule (fitted on half, scored on the other):")
    for d in (1, 2, 3):
        items = TESTS["move-choice"].items(d, 108 if d == 1 else 600, seed=11)
        print(f"  depth {d}: {string_rule_accuracy(items):.3f}")
    print("verification, colour counts: balanced accuracy",
          f"{colour_count_verifier(suite_items('cube-bench', 'verification', 3)):.3f}")
    print("verification, text-only naive Bayes fitted on 600 / 400 items (seed 13), scored on as many fresh (seed 14),"
          " depth 3, half / quarter:", ", ".join(
              text_only_bayes(fresh_verification(m, 13), fresh_verification(m, 14)).format() for m in ("half", "quarter")))
    from learners import LEARNERS, held_out

    for m in ("half", "quarter"):
        train, test = fresh_verification(m, 13), fresh_verification(m, 14)
        fitted = ", ".join(f"{name} {held_out(grid_rows(train), grid_rows(test), learner).format()}"
                           for name, learner in LEARNERS.items())
        planted = ", ".join(f"{name} {held_out(grid_rows(train, random.Random(1)), grid_rows(test, random.Random(2)), learner).format()}"
                            for name, learner in LEARNERS.items())
        print(f"verification, text grid alone, {m} turns, fitted on {FRESH[m]} items and scored on {FRESH[m]} fresh: "
              f"{fitted}; "
              f"best combined-count rule {best_fitted_rule(train, test, count_rules()):.3f}, best pairwise-cell rule "
              f"{best_fitted_rule(train, test, pair_rules()):.3f}; on swap negatives: {planted}")
    for name, items in (("the suite's 100", suite_items("cube-bench", "verification", 3)),
                        *((f"{FRESH[m]} {m}-turn (seed {seed})", fresh_verification(m, seed))
                          for m in ("half", "quarter") for seed in (13, 14))):
        print(f"verification, 'No when the grid was shown before', {name} items in order: "
              f"{remembered(items).format()}")
    print("move-effect, always INCREASE and the most-one-coloured-face rules:")
    for d in (1, 2, 3):
        items = suite_items("cube-bench", "move-effect", d)
        always = effect_scores(items, lambda i: ["INCREASE"] * 4)
        rng = random.Random(0)
        face = effect_scores(items, lambda i: ["DECREASE" if m == most_one_coloured(i, i.data["shown"]["options"], rng)
                                               else "INCREASE" for m in i.data["shown"]["options"]])
        row = TESTS["move-effect"].summarize([{"gold": i.data["labels"], "pred": ["INCREASE"] * 4, "right": sum(
            g == "INCREASE" for g in i.data["labels"])} for i in items])
        print(f"  depth {d}: mix {dict(always['mix'])}; always INCREASE kappa {always['kappa']:.3f}, macro-F1 "
              f"{always['macro F1']:.3f} (uniform guessing {row['F1 chance']:.3f}), micro {always['micro']:.3f}; "
              f"face rule kappa {face['kappa']:.3f}")
    cheater = PairingCheater(seed=3)
    right, asked = pairing_rounds(cheater)
    print(f"inf-bench, pairing cheater on the planned rounds (rounds 0-1 at levels 1 and 3): {right}/{asked} = "
          f"{Proportion(right, asked).format()} right, {cheater.paired} pairs found")
    cheater = PairingCheater(seed=4)
    scores = climb_both_directions(cheater)
    chance = float(chance_score(0.25, load_suite("inf-bench").ladders["inf-forward"].rules))
    print(f"inf-bench, pairing cheater climbing: {cheater.paired} pairs found; mean level per ladder "
          + ", ".join(f"{n}/{v} {sum(s) / len(s):.2f}" for (n, v), s in scores.items()) + f" (chance {chance:.3f})")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tests' own helpers (the learners)
    sys.exit(measure())
