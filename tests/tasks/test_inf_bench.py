"""Inf-Bench's 3D tasks and its ladder: the ladder's rules on hand-made answer sequences, the exact chance
level, the items' determinism and validity (distinct end states, equivalent lists rejected, balanced
slots), the shortcuts a clever model would try, calibration, and both presentations."""

from __future__ import annotations

import random
from fractions import Fraction

import numpy as np
import pytest

from cubebench.engine.facelets import CENTRES, COLOUR_NAMES, FACES, colours
from cubebench.engine.moves import MOVE_NAMES
from cubebench.engine.state import from_facelets
from cubebench.tasks.inf_bench import INF_BENCH_TESTS, MAX_LEVEL, Forward, Inverse
from cubebench.tasks.inf_bench.common import (
    COLOUR_CODE, ENCODED_ORDER, OPERATIONS, ends_distinct, encoded, has_merging_pair, run,
)
from cubebench.tasks.items import Prompt, Reply
from cubebench.tasks.ladder import (
    CHANCE_TOLERANCE, LEVEL_CAP, Ladder, LadderRules, chance_score, max_rounds, round_pass_probability,
)

FORWARD, INVERSE = Forward(), Inverse()


def oracle_ask(prompt: Prompt) -> Reply:
    return Reply(prompt.form.format(prompt.gold))


# --- the ladder ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("rounds, level, finished, score", [
    ([], 1, False, 1),
    ([2], 0, True, 0),                 # fail level 1: down to 0, the end
    ([3], 2, False, 2),
    ([3, 2, 3, 2], 1, True, 1),        # level 2 fails twice: out at level 1
    ([3, 3, 2, 2], 1, False, 1),       # fail 3 then 2 (one failure each): still climbing from 1
    ([3, 3, 2, 2, 2], 0, True, 0),     # ... and fail 1: level 0
    ([3, 3, 2, 2, 3, 3], 3, False, 3),
    ([3, 3, 2, 2, 3, 2], 1, True, 1),  # level 2's second failure
    ([5, 4, 3, 0, 1], 2, False, 2),    # 3, 4 and 5 right all pass; 0 and 1 fail
])
def test_the_ladder_moves_as_the_paper_says(rounds: list[int], level: int, finished: bool, score: int) -> None:
    ladder = Ladder.replay(LadderRules(), rounds)
    assert (ladder.level, ladder.finished, ladder.score) == (level, finished, score)
    assert ladder.rounds == [(lv, c) for lv, c in zip(_levels(rounds), rounds)]


def _levels(rounds: list[int]) -> list[int]:
    """The level each round was played at, re-derived by hand from the rule (c >= 3 up, else down)."""
    out, level = [], 1
    for c in rounds:
        out.append(level)
        level += 1 if c >= 3 else -1
    return out


def test_the_top_of_the_ladder_ends_it_with_the_top_score() -> None:
    ladder = Ladder.replay(LadderRules(max_level=2), [3, 4])
    assert ladder.finished and ladder.score == 2 and ladder.topped
    with pytest.raises(ValueError, match="ended"):
        ladder.record(5)
    assert not Ladder.replay(LadderRules(max_level=2), [3, 2, 3, 2]).topped


@pytest.mark.parametrize("bad", [-1, 6, True, 2.0, None])
def test_a_round_with_an_impossible_count_is_refused(bad: object) -> None:
    with pytest.raises(ValueError, match="right answers"):
        Ladder().record(bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("rules", [dict(per_level=0), dict(pass_at=6), dict(max_level=0), dict(max_failures=True)])
def test_bad_ladder_rules_are_refused(rules: dict) -> None:
    with pytest.raises(ValueError, match="ladder"):
        LadderRules(**rules)


def _enumerated(p: Fraction, rules: LadderRules) -> Fraction:
    """The expected score by walking every pass/fail history through the state machine (an independent method)."""
    q = round_pass_probability(p, rules)
    total, stack = Fraction(0), [([], Fraction(1))]
    while stack:
        history, weight = stack.pop()
        ladder = Ladder.replay(rules, [rules.per_level if passed else 0 for passed in history])
        if ladder.finished:
            total += weight * ladder.score
        else:
            stack += [(history + [True], weight * q), (history + [False], weight * (1 - q))]
    return total


@pytest.mark.parametrize("top", [1, 2, 3, 5, 7])
@pytest.mark.parametrize("p", [Fraction(1, 4), Fraction(1, 2), Fraction(9, 10)])
def test_the_chance_level_is_exact(top: int, p: Fraction) -> None:
    rules = LadderRules(max_level=top)
    assert chance_score(p, rules) == _enumerated(p, rules)


def test_chance_level_facts() -> None:
    rules = LadderRules()
    assert rules.max_level == LEVEL_CAP == 1000  # the paper's ladder is unbounded; ours only has a hard cap
    assert round_pass_probability(Fraction(1, 4), rules) == Fraction(106, 1024)  # (90 + 15 + 1) / 4^5
    assert chance_score(Fraction(1), rules) == rules.max_level and chance_score(Fraction(0), rules) == 0
    assert 0.0134 < float(chance_score(Fraction(1, 4), rules)) < 0.0135
    top20 = LadderRules(max_level=20)
    scores = [chance_score(Fraction(k, 10), top20) for k in range(11)]
    assert scores == sorted(scores)


@pytest.mark.parametrize("p", [Fraction(1, 4), Fraction(1, 3), Fraction(1, 2)])
def test_the_chance_level_of_a_high_cap_is_within_its_tolerance(p: Fraction) -> None:
    """Above a top of 30 the ladder is cut where climbing further is too unlikely to matter: the cap-100 and
    cap-1000 values agree with the full recursion at a top of 64 (exact for that top: the cut is the top), and
    for chance-like p with the exact top-30 Fraction; a cut far too early (a top of 3) would not."""
    full64 = float(chance_score(p, LadderRules(max_level=64)))
    for top in (100, LEVEL_CAP):
        assert abs(float(chance_score(p, LadderRules(max_level=top))) - full64) <= CHANCE_TOLERANCE
    if p < Fraction(1, 2):
        assert abs(float(chance_score(p, LadderRules(max_level=30))) - full64) <= CHANCE_TOLERANCE
    assert abs(float(chance_score(p, LadderRules(max_level=3))) - full64) > 1e-4


def test_a_chance_level_too_high_to_bound_is_refused_not_guessed() -> None:
    with pytest.raises(ValueError, match="cannot be bounded"):
        chance_score(0.9)
    assert chance_score(Fraction(9, 10), LadderRules(max_level=20)) > 15  # exact at a low top


def test_the_cap_is_enforced_and_bounds_the_rounds_a_ladder_can_play() -> None:
    with pytest.raises(ValueError, match="at most 1000"):
        LadderRules(max_level=LEVEL_CAP + 1)
    for top in range(1, 6):  # every pass/fail history: the longest ladder stays within max_rounds
        rules, longest, stack = LadderRules(max_level=top), 0, [[]]
        while stack:
            history = stack.pop()
            ladder = Ladder.replay(rules, history)
            longest = max(longest, len(history))
            if not ladder.finished:
                stack += [history + [5], history + [0]]
        assert longest <= max_rounds(rules)
    climb = Ladder.replay(LadderRules(), [5] * LEVEL_CAP)
    assert climb.finished and climb.topped and climb.score == LEVEL_CAP


def test_a_simulated_coin_flipper_lands_on_the_exact_chance_level() -> None:
    """20,000 ladders of uniform guesses among four options (seeded): the mean is within 4 standard errors."""
    rules, rng = LadderRules(), random.Random(11)
    scores = []
    for _ in range(20_000):
        ladder = Ladder(rules)
        while not ladder.finished:
            ladder.record(sum(rng.random() < 0.25 for _ in range(rules.per_level)))
        scores.append(ladder.score)
    mean, se = float(np.mean(scores)), float(np.std(scores)) / np.sqrt(len(scores))
    assert abs(mean - float(chance_score(Fraction(1, 4), rules))) < 4 * se


# --- items ---------------------------------------------------------------------------------------------------
def test_the_operations_are_the_papers_54() -> None:
    assert len(OPERATIONS) == 54 == len(set(OPERATIONS)) and set(OPERATIONS) == set(MOVE_NAMES)
    families = {op[0] for op in OPERATIONS}
    assert families == set("URFDLB") | set("urfdlb") | set("MES") | set("xyz")
    seen = {op for item in FORWARD.items(6, 150, seed=2) for ops in item.data["lists"] for op in ops}
    assert seen == set(OPERATIONS)


@pytest.mark.parametrize("level", [1, 2, 5, 20])
def test_items_are_deterministic_valid_and_never_shared_by_the_two_directions(level: int) -> None:
    items = FORWARD.items(level, 12, seed=5)
    assert items == FORWARD.items(level, 12, seed=5) != FORWARD.items(level, 12, seed=6)
    assert FORWARD.items(level, 4, seed=5) == items[:4]
    assert FORWARD.items(level, 3, seed=5, first=4) == items[4:7]
    inverse = INVERSE.items(level, 12, seed=5)
    assert not {i.state for i in inverse} & {i.state for i in items}, "a start asked both ways pairs the two prompts"
    for item in items:
        lists = item.data["lists"]
        assert len(lists) == 4 and all(len(ops) == level for ops in lists)
        assert len({tuple(ops) for ops in lists}) == 4
        assert not any(has_merging_pair(ops) for ops in lists)
        assert ends_distinct(from_facelets(item.state), lists)
    for block in range(3):
        assert sorted(i.data["gold"] for i in items[4 * block: 4 * block + 4]) == list("ABCD")


@pytest.mark.parametrize("level", [250, LEVEL_CAP])
def test_items_exist_up_to_the_cap_and_are_valid(level: int) -> None:
    """A ladder may climb to the cap, so its items must be made there too: before, no list of 500 operations
    came out without two of one kind in a row (2,000 draws), so the ladder stopped at level 100."""
    assert MAX_LEVEL == LEVEL_CAP
    for item in FORWARD.items(level, 4, seed=2, first=40_000):
        lists = item.data["lists"]
        assert all(len(ops) == level for ops in lists) and len({tuple(ops) for ops in lists}) == 4
        assert not any(has_merging_pair(ops) for ops in lists)
        assert ends_distinct(from_facelets(item.state), lists)
        assert f"{level} operations" in INVERSE.prompt(item, "encoded").text


def test_lists_that_give_the_same_cube_are_detected() -> None:
    start = from_facelets(FORWARD.items(1, 1)[0].state)
    assert not ends_distinct(start, [["R", "L"], ["L", "R"]])          # commuting turns
    assert not ends_distinct(start, [["R"], ["U"], ["R"]])              # one list twice
    assert not ends_distinct(start, [["r"], ["x", "L"]])              # a wide turn is a face turn and a rotation
    assert ends_distinct(start, [["R"], ["L"]])


def test_levels_outside_the_ladder_are_refused() -> None:
    for bad in (0, MAX_LEVEL + 1, True):
        with pytest.raises(ValueError, match="depth must be"):
            FORWARD.items(bad, 1)  # type: ignore[arg-type]


def test_the_encoded_text_is_the_papers_six_matrices_and_reads_back() -> None:
    state = from_facelets(FORWARD.items(3, 1, seed=9)[0].state)
    text = encoded(state)
    blocks = text.split("\n")
    assert [b[0] for b in blocks[::4]] == list(ENCODED_ORDER) and all(b.endswith(":") for b in blocks[::4])
    col = colours(state)
    code = {v: k for k, v in COLOUR_CODE.items()}
    for n, face in enumerate(ENCODED_ORDER):
        rows = [r.strip("[]").split() for r in blocks[4 * n + 1: 4 * n + 4]]
        k = FACES.index(face)
        assert [COLOUR_NAMES.index(code[c]) for row in rows for c in row] == col[9 * k: 9 * k + 9].tolist()


@pytest.mark.parametrize("test", INF_BENCH_TESTS, ids=lambda t: t.name)
def test_both_presentations_show_what_they_must_and_nothing_more(test) -> None:
    item = test.items(4, 1, seed=1)[0]
    lists, gold = item.data["lists"], item.data["gold"]
    image, text = test.prompt(item, "image"), test.prompt(item, "encoded")
    assert image.image is not None and image.image.ndim == 3 and text.image is None
    for prompt in (image, text):
        assert prompt.gold == gold and "<ANSWER>" in prompt.text
        assert "base" not in prompt.text.lower() and "gold" not in prompt.text.lower()
    gold_ops = " ".join(lists["ABCD".index(gold)])
    if test.name == "inf-forward":  # the operations are given, the options are states
        assert gold_ops in text.text and sum(" ".join(ops) in text.text for ops in lists) == 1
        assert text.text.count("U:\n") == 5
    else:  # the target state is given, the options are lists
        assert all(f"{c}: {' '.join(ops)}" in text.text for c, ops in zip("ABCD", lists))
        assert text.text.count("U:\n") == 2


def test_the_forward_gold_state_is_the_listed_operations_applied() -> None:
    for item in FORWARD.items(7, 20, seed=4):
        start, lists = from_facelets(item.state), item.data["lists"]
        gold = "ABCD".index(item.data["gold"])
        assert np.array_equal(run(start, lists[gold]), run(run(start, lists[gold][:3]), lists[gold][3:]))
        assert encoded(run(start, lists[gold])) in FORWARD.prompt(item, "encoded").text


# --- what a clever model would try ------------------------------------------------------------------------------
def _positional_majority(item) -> str:
    """The list that agrees most with the per-position majority operation (the centre of the option set)."""
    lists = item.data["lists"]
    majority = [max(OPERATIONS, key=lambda op: sum(ops[i] == op for ops in lists)) for i in range(len(lists[0]))]
    return "ABCD"[int(np.argmax([sum(a == b for a, b in zip(ops, majority)) for ops in lists]))]


def _sticker_majority(item) -> str:
    """The option state that agrees most with the per-sticker majority colour of the four options."""
    start = from_facelets(item.state)
    ends = np.array([colours(run(start, ops)) for ops in item.data["lists"]])
    majority = np.array([np.bincount(ends[:, k], minlength=6).argmax() for k in range(54)])
    return "ABCD"[int(np.argmax((ends == majority).sum(axis=1)))]


def _least_changed(item) -> str:
    """The option state closest to the start (a guess that short lists change little)."""
    start = from_facelets(item.state)
    return "ABCD"[int(np.argmin([(colours(run(start, ops)) != colours(start)).sum() for ops in item.data["lists"]]))]


def _centres(state: np.ndarray) -> bytes:
    return colours(state)[list(CENTRES)].tobytes()


def _forward_centre_tracker(item) -> str:
    """Forward: follow only the six centres through the shown list (face turns leave them), keep the first
    option state whose centres agree (the shown list is the gold's, so this uses only what is shown)."""
    start, lists = from_facelets(item.state), item.data["lists"]
    shown = run(start, lists["ABCD".index(item.data["gold"])])  # the list the prompt shows
    ends = [run(start, ops) for ops in lists]
    return next((c for c, e in zip("ABCD", ends) if _centres(e) == _centres(shown)), "A")


def _inverse_centre_tracker(item) -> str:
    """Inverse: keep the first option list that moves the centres to where the shown result has them."""
    start, lists = from_facelets(item.state), item.data["lists"]
    target = run(start, lists["ABCD".index(item.data["gold"])])  # the result the prompt shows
    return next((c for c, ops in zip("ABCD", lists) if _centres(run(start, ops)) == _centres(target)), "A")


@pytest.mark.parametrize("shortcut", [_positional_majority, _sticker_majority, _least_changed,
                                      _forward_centre_tracker, _inverse_centre_tracker])
def test_shortcuts_without_simulation_stay_at_chance(shortcut) -> None:
    """Done literally, the paper's distractors (the gold with some operations replaced) make the gold the centre
    of the options: the majority rules would find it.  Here every option is a variant of a hidden base list.
    Replacing an operation by any other let a model track the six centres alone (89% right, the ladder
    topped); replacements now move the centres as the operation they replace, so every option's centres agree."""
    items = [item for level in (1, 2, 3, 5, 8, 13) for item in FORWARD.items(level, 100, seed=21)]
    hits = sum(shortcut(item) == item.data["gold"] for item in items)
    assert hits / len(items) < 0.31, (shortcut.__name__, hits, len(items))


# --- calibration ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("test", INF_BENCH_TESTS, ids=lambda t: t.name)
def test_the_oracle_is_always_right_and_random_guesses_are_at_chance(test) -> None:
    items = test.items(3, 200, seed=8)
    rng = random.Random(3)
    for variant in test.variants:
        assert all(test.play(i, variant, oracle_ask).passed for i in items[:8])
    right = sum(test.play(i, "encoded", lambda p: Reply(p.form.format(p.form.sample(rng)))).passed for i in items)
    assert 0.17 < right / len(items) < 0.33
    odd = test.play(items[0], "encoded", lambda p: Reply("The answer is A because ..."))
    assert not odd.passed and odd.exchanges[0].parse_error and odd.score["answer"] is None
