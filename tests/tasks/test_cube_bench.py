"""Cube Bench's seven tests: exact labels, deterministic and balanced items, strict scoring, calibration.

Every gold label is re-derived here by an independent brute-force search over the engine's moves
(no ball, no tables); the answerers are plain functions so the tests exercise the tests' own
logic (the runner and the LLM answerers have their own test files).
"""

from __future__ import annotations

import random
from collections import Counter
from functools import lru_cache

import numpy as np
import pytest

from cubebench.engine.facelets import COLOUR_LETTERS, SOLVED, colours
from cubebench.engine.kernels import apply_move, apply_moves
from cubebench.engine.moves import MOVE_INDEX, TABLE
from cubebench.engine.notation import parse_array
from cubebench.engine.state import from_facelets, to_facelets
from cubebench.tasks.cube_bench.recovery import max_attempts
from cubebench.tasks.items import Item, Prompt, Reply, balanced_slot
from cubebench.tasks.metrics import Proportion
from cubebench.solver.oracle import DistanceOracle, metric_moves, oracle
from cubebench.tasks.cube_bench import CUBE_BENCH_TESTS
from cubebench.tasks.registry import TESTS, get_test


# --- an independent exact distance: meet in the middle over plain Python dicts, no ball, no tables -------------
@lru_cache(maxsize=2)
def near(metric: str, radius: int = 3) -> dict[str, int]:
    """Facelet string -> distance of every state within ``radius`` moves of solved (plain breadth-first)."""
    moves = [MOVE_INDEX[m] for m in metric_moves(metric)]
    seen = {to_facelets(SOLVED): 0}
    frontier = [SOLVED]
    for depth in range(1, radius + 1):
        nxt = []
        for state in frontier:
            for m in moves:
                t = apply_move(state, TABLE, m)
                key = to_facelets(t)
                if key not in seen:
                    seen[key] = depth
                    nxt.append(t)
        frontier = nxt
    return seen


@lru_cache(maxsize=4096)
def brute_distance(facelets: str, metric: str) -> int:
    """Exact distance up to 6: the least ``k + near[t]`` over states ``t`` k <= 3 moves from the state."""
    table, moves = near(metric), [MOVE_INDEX[m] for m in metric_moves(metric)]
    frontier = [from_facelets(facelets)]
    for k in range(4):
        hits = [table[key] for key in map(to_facelets, frontier) if key in table]
        if hits:
            return k + min(hits)
        frontier = [apply_move(s, TABLE, m) for s in frontier for m in moves]
    raise AssertionError(f"{facelets} is farther than 6 moves")


def after(facelets: str, move: str) -> str:
    return to_facelets(apply_move(from_facelets(facelets), TABLE, MOVE_INDEX[move]))


def oracle_ask(prompt: Prompt) -> Reply:
    return Reply(prompt.form.format(prompt.gold) if prompt.scored else "ok")


def random_ask(seed: int):
    rng = random.Random(seed)
    return lambda p: Reply(p.form.format(p.form.sample(rng)) if p.scored else "")


def constant_ask(text: str):
    return lambda p: Reply(text if p.scored else "")


def summary(test: str, depth: int, n: int, ask, variant: str | None = None, metric: str = "half") -> dict:
    t = get_test(test)
    items = t.items(depth, n, seed=7, metric=metric)
    return t.summarize([t.play(item, variant or t.variants[0], ask).score for item in items])


def value(x):
    return x.value if isinstance(x, Proportion) else x


# --- the oracle ------------------------------------------------------------------------------------------------
def test_the_balls_hold_the_known_counts_of_states_near_solved() -> None:
    # Half-turn: 1 + 18 + 243 + 3240 + 43239 + 574908; quarter-turn: 1 + 12 + 114 + 1068 + 10011 + 93840 + 878880.
    assert oracle("half").size == 621_649
    assert oracle("quarter").size == 983_926


@pytest.mark.parametrize("metric", ["half", "quarter"])
def test_oracle_distances_agree_with_brute_force(metric: str) -> None:
    rng = np.random.default_rng(0)
    names = metric_moves(metric)
    for _ in range(40):
        seq = [names[i] for i in rng.integers(0, len(names), int(rng.integers(0, 5)))]
        state = apply_moves(SOLVED, TABLE, parse_array(" ".join(seq)))
        facelets = to_facelets(state)
        assert oracle(metric).distance(state) == brute_distance(facelets, metric)
        assert oracle(metric).after_moves(state) == {m: brute_distance(after(facelets, m), metric) for m in names}


def test_oracle_beyond_its_ball_uses_lookahead_exactly() -> None:
    """A small ball (radius 2) must answer distances 3-5 through its lookahead exactly as brute force does."""
    small = DistanceOracle("half", radius=2)
    rng = np.random.default_rng(1)
    for _ in range(15):
        seq = " ".join(metric_moves("half")[i] for i in rng.integers(0, 18, 4))
        state = apply_moves(SOLVED, TABLE, parse_array(seq))
        assert small.distance(state) == brute_distance(to_facelets(state), "half")


# --- determinism, duplicates, balance ----------------------------------------------------------------------------
@pytest.mark.parametrize("name", [t.name for t in CUBE_BENCH_TESTS])
def test_items_are_deterministic_distinct_and_certified(name: str) -> None:
    test = TESTS[name]
    depth = 2
    first = test.items(depth, 12, seed=3)
    assert first == test.items(depth, 12, seed=3)
    assert test.items(depth, 5, seed=3) == first[:5], "item i must not depend on how many are asked for"
    assert first != test.items(depth, 12, seed=4)
    assert len({test.identity(i) for i in first}) == len(first)
    for item in first:
        assert brute_distance(item.state, item.metric) == depth == item.data["distance"]
        assert to_facelets(apply_moves(SOLVED, TABLE, parse_array(item.data["scramble"]))) == item.state


def test_depth_one_has_only_eighteen_distinct_states_so_reconstruction_refuses_more() -> None:
    from cubebench.tasks.items import ItemGenerationError

    assert len(TESTS["reconstruction"].items(1, 18)) == 18
    with pytest.raises(ItemGenerationError, match="fewer items"):
        TESTS["reconstruction"].items(1, 19)


def test_verification_shows_two_cubes_an_item_so_depth_one_refuses_a_seventh_item_saying_why() -> None:
    """Each verification item shows two cubes of its own (the image's and its look-alike's, docs/cube-bench.md):
    of depth 1's 18 states, six have a one-coloured Front face (F and B turns), which nothing looks like."""
    from cubebench.tasks.items import ItemGenerationError

    items = TESTS["verification"].items(1, 6)
    cubes = [c for i in items for c in (i.state, i.data["other"])]
    assert len(set(cubes)) == 12
    with pytest.raises(ItemGenerationError, match="two cubes of its own"):
        TESTS["verification"].items(1, 7)


@pytest.mark.parametrize("depth", [1, 2, 3, 4])
def test_the_optimal_option_is_balanced_over_the_slots(depth: int) -> None:
    items = TESTS["move-choice"].items(depth, 42)
    counts = Counter(i.data["gold"] for i in items)
    assert set(counts) == set("ABCD") and max(counts.values()) - min(counts.values()) <= 1
    assert sorted(balanced_slot(0, "move-choice", depth, k, 4) for k in range(4, 8)) == [0, 1, 2, 3]


def test_verification_has_equal_yes_and_no_and_only_look_alike_negatives() -> None:
    items = TESTS["verification"].items(3, 40)
    truth = Counter(i.data["truth"] for i in items)
    assert truth == {"Yes": 20, "No": 20}
    assert Counter(i.data["negative"] for i in items if i.data["truth"] == "No") == {"look-alike": 20}


# --- every gold label re-derived ---------------------------------------------------------------------------------
def front(facelets: str) -> str:
    return "".join(COLOUR_LETTERS[c] for c in colours(from_facelets(facelets))[18:27])


@pytest.mark.parametrize("metric", ["half", "quarter"])
def test_move_choice_has_exactly_one_optimal_option(metric: str) -> None:
    for item in TESTS["move-choice"].items(3, 12, metric=metric):
        options = item.data["shown"]["options"]
        optimal = [m for m in options if brute_distance(after(item.state, m), metric) == 2]
        assert optimal == [options["ABCD".index(item.data["gold"])]]
        assert len(set(options)) == 4 and set(options) <= set(metric_moves(metric))


def test_move_effect_labels_are_the_exact_distance_changes() -> None:
    names = {-1: "DECREASE", 0: "NO_CHANGE", 1: "INCREASE"}
    classes: Counter[str] = Counter()
    for item in TESTS["move-effect"].items(2, 30):
        for move, lab in zip(item.data["shown"]["options"], item.data["labels"]):
            assert lab == names[brute_distance(after(item.state, move), "half") - 2]
            classes[lab] += 1
        faces = [m[0] for m in item.data["shown"]["options"]]
        assert len(set(faces)) == 4, "four options on four faces: the face pattern tells no class"
    assert set(classes) == {"DECREASE", "NO_CHANGE", "INCREASE"}, classes


@pytest.mark.parametrize("metric", ["half", "quarter"])
def test_move_effect_labels_cannot_be_read_off_the_options_form(metric: str) -> None:
    """The best of all 27 rules mapping a move's turn (X, X', X2) to a label, chosen after seeing the answers,
    stays near kappa 0 (the paper's construction let a same-face rule reach 0.47 without the cube)."""
    import itertools

    from cubebench.tasks.metrics import cohen_kappa

    labels = ("DECREASE", "NO_CHANGE", "INCREASE")
    items = TESTS["move-effect"].items(3, 200, seed=5, metric=metric)
    gold = [lab for i in items for lab in i.data["labels"]]
    best = max(cohen_kappa(gold, [dict(zip(("", "'", "2"), rule))[m[1:]] for i in items
                                  for m in i.data["shown"]["options"]], labels) or 0.0
               for rule in itertools.product(labels, repeat=3))
    assert best < 0.08


def test_move_effect_in_the_quarter_metric_never_says_no_change() -> None:
    for item in TESTS["move-effect"].items(2, 10, metric="quarter"):
        assert "NO_CHANGE" not in item.data["labels"]


def fronts_at(depth: int, metric: str) -> set[str]:
    """The Front faces of every state at exact distance ``depth`` from solved, by a breadth-first walk of the move
    table (no oracle, no stream)."""
    moves = [MOVE_INDEX[m] for m in metric_moves(metric)]
    seen = {SOLVED.tobytes()}
    layer = [SOLVED]
    for _ in range(depth):
        nxt = []
        for state in layer:
            for move in moves:
                new = apply_move(state, TABLE, move)
                if new.tobytes() not in seen:
                    seen.add(new.tobytes())
                    nxt.append(new)
        layer = nxt
    return {"".join(COLOUR_LETTERS[c] for c in colours(state)[18:27]) for state in layer}


@pytest.mark.parametrize("metric", ["half", "quarter"])
def test_reconstruction_and_verification_gold_come_from_the_state(metric: str) -> None:
    """Every verification grid, Yes or No, is the Front face of some cube at the item's distance (re-derived by a
    breadth-first walk, apart from the stream the negatives are drawn from); a No grid has the true face's colours
    in other places."""
    for item in TESTS["reconstruction"].items(3, 10, metric=metric):
        assert item.data["gold"] == front(item.state)
    true_faces = fronts_at(3, metric)
    for item in TESTS["verification"].items(3, 40, metric=metric):
        shown = item.data["shown"]["grid"]
        assert (shown == front(item.state)) == (item.data["truth"] == "Yes")
        assert shown in true_faces
        if item.data["truth"] == "No":
            assert item.data["negative"] == "look-alike"
            assert sorted(shown) == sorted(front(item.state)) and shown != front(item.state)


def test_closed_loop_teacher_is_optimal_and_each_step_offers_one_progress_move() -> None:
    test = TESTS["closed-loop"]
    for item in test.items(3, 6):
        state = item.state
        for k, move in enumerate(item.data["teacher"].split()):
            assert brute_distance(after(state, move), "half") == 2 - k
            state = after(state, move)
        asked: list[Prompt] = []
        test.play(item, "standard", lambda p: asked.append(p) or oracle_ask(p))
        assert len(asked) == 3
        for p in asked:
            lines = [line for line in p.text.splitlines() if line[:3] in ("A: ", "B: ", "C: ", "D: ")]
            assert len(lines) == 4


# --- calibration: the oracle scores 1, constant and random answerers land on chance ---------------------------------
@pytest.mark.parametrize("name", list(TESTS))
def test_the_oracle_scores_one_on_every_accuracy_metric(name: str) -> None:
    test = TESTS[name]
    for variant in test.variants:
        row = summary(name, 2, 8, oracle_ask, variant)
        for key, val in row.items():
            if key in ("delta", "OTR", "IDK", "centre baseline", "episodes", "no error", "yes/no items", "yes bias", "EFR",
                       "SR", "P@1", "P@3", "Med@Solved", "Avg@All", "F1 chance", "D/N/I", "prior W/Y/R/O/G/B",
                       "prior dev", "gate"):
                continue
            if key == "coverage by step":
                assert set(val.split("/")) == {"1.00"}, (name, variant, val)
                continue
            assert value(val) == 1.0, (name, variant, key, val)
    if name == "reflection":
        assert summary(name, 2, 8, oracle_ask)["OTR"] == 0.0
    if name == "recovery":
        assert summary(name, 2, 8, oracle_ask)["episodes"] == 0  # it never errs: nothing to recover from


def test_constant_answers_land_exactly_on_chance() -> None:
    assert value(summary("move-choice", 1, 40, constant_ask("A"))["acc"]) == 0.25
    verify = summary("verification", 2, 40, constant_ask("Answer: Yes"))
    assert verify["bal acc"] == 0.5 and verify["yes bias"] == 1.0
    effect = summary("move-effect", 2, 20, constant_ask("\n".join(f"<{c}> INCREASE </{c}>" for c in "ABCD")))
    assert effect["kappa"] == 0.0


@pytest.mark.parametrize("metric", ["half", "quarter"])
def test_text_only_shortcuts_do_not_beat_chance_on_verification(metric: str) -> None:
    """A model that never looks at the image: every grid is a true face (its centre the Front colour), and a
    colour-count rule ("Yes when six or more cells are green", balanced accuracy 0.62 before negatives kept a true
    face's colours) stays at chance."""
    test = TESTS["verification"]
    items = test.items(3, 400, seed=13, metric=metric)
    assert all(i.data["shown"]["grid"][4] == "G" for i in items)
    greens = [Counter(i.data["shown"]["grid"])["G"] for i in items]
    for k in (5, 6, 7):
        rule = test.summarize([test.play(i, "image+text", constant_ask("Answer: Yes" if g >= k else "Answer: No")).score
                               for i, g in zip(items, greens)])
        assert abs(rule["bal acc"] - 0.5) < 0.06, (k, rule["bal acc"])


def test_the_random_answerer_lands_on_chance_within_its_interval() -> None:
    choice = summary("move-choice", 2, 200, random_ask(1))["acc"]
    lo, hi = choice.interval
    assert lo <= 0.25 <= hi
    verify = summary("verification", 3, 200, random_ask(2))
    assert abs(verify["bal acc"] - 0.5) < 0.1
    effect = summary("move-effect", 2, 100, random_ask(3))
    assert abs(effect["kappa"]) < 0.1


# --- the closed-loop, abstention and recovery rules on scripted answer sequences -----------------------------------
def scripted(replies: list[str]):
    """Answers by position: each entry a reply, or "good"/"bad" for the progress option or another one."""
    it = iter(replies)

    def ask(p: Prompt) -> Reply:
        r = next(it)
        if r == "good":
            return Reply(p.form.format(p.gold))
        if r == "bad":
            return Reply(p.form.format(next(c for c in "ABCD" if c != p.gold)))
        return Reply(r)
    return ask


def one(test: str, depth: int = 3) -> Item:
    return TESTS[test].items(depth, 1)[0]


def test_closed_loop_halts_at_the_first_error_with_unconditional_denominators() -> None:
    t = TESTS["closed-loop"]
    scores = [t.play(one("closed-loop"), "standard", scripted(r)).score
              for r in (["good", "good", "good"], ["good", "bad"], ["nonsense"])]
    assert [s["progress"] for s in scores] == [3, 1, 0]
    assert [s["halt"] for s in scores] == [None, "non-progress move", "parse failure"]
    row = t.summarize(scores)
    assert row["TA"].k == 4 and row["TA"].n == 9  # the halted steps count as wrong
    assert row["perfect"].k == 1


def test_abstention_policies_and_apa() -> None:
    t = TESTS["closed-loop"]
    item = one("closed-loop")
    teacher = t.play(item, "abstain-teacher", scripted(["good", "I don't know", "good"]))
    assert teacher.score["idk"] == 1 and teacher.score["progress"] == 2 and not teacher.passed
    assert teacher.end_state == to_facelets(SOLVED), "the teacher's move is applied on IDK"
    skip = t.play(item, "abstain-skip", scripted(["<ANSWER> IDK </ANSWER>"]))
    assert skip.score["halt"] == "abstained" and skip.score["decisions"] == 1
    row = t.summarize([teacher.score, skip.score])
    # decisions 4, answered 2 (both right), IDK 2: coverage 0.5, selective 1.0, APA = (2 + 0.25 * 2) / 4.
    assert (row["coverage"], row["sel acc"], row["IDK"], row["APA"]) == (0.5, 1.0, 0.5, 0.625)
    assert t.play(item, "standard", scripted(["I don't know"])).score["halt"] == "parse failure", \
        "without abstention IDK is a parse failure"


def test_recovery_starts_at_the_first_error_and_counts_attempts() -> None:
    t = TESTS["recovery"]
    item = one("recovery", 1)
    assert item.data["max_attempts"] == max_attempts(1) == 4
    # Depth 1: a bad first move (distance 2 or 1), then progress moves until solved.
    result = t.play(item, "standard", scripted(["bad"] + ["good"] * 4))
    dist = result.exchanges[0].distance
    assert result.score["recovering"] and result.passed and result.score["solved_at"] == dist
    never = t.play(item, "standard", scripted(["bad"] + ["bad"] * 4))
    attempts = len(never.exchanges) - 1
    assert not never.passed and never.score["solved_at"] is None and never.score["out_of_reach"]
    assert attempts < 4 and never.exchanges[-1].distance > 4 - attempts, \
        "it stops once the cube is farther than the attempts left, and only then"
    assert never.exchanges[-2].distance <= 4 - attempts + 1
    parse = t.play(item, "standard", scripted(["??", "??", "good"]))
    assert parse.score["solved_at"] == 2, "a parse failure costs an attempt and leaves the cube"
    row = t.summarize([result.score, never.score, parse.score])
    assert row["episodes"] == 3 and row["SR"].k == 2
    assert row["Avg@All"] == pytest.approx((dist + 4 + 2) / 3)


def test_the_redacted_reflection_never_reveals_the_answer_or_whether_the_draft_was_right() -> None:
    t = TESTS["reflection"]
    for item in t.items(1, 8):
        seen: list[Prompt] = []
        t.play(item, "redacted", lambda p: seen.append(p) or Reply(p.form.format(p.gold) if p.scored else "hm"))
        assert "correct option" not in seen[1].text.lower()
        assert "did not" not in seen[1].text.lower() and "wrong" not in seen[1].text.lower()
        seen.clear()
        t.play(item, "unredacted", lambda p: seen.append(p) or Reply(p.form.format(p.gold) if p.scored else "hm"))
        assert f"The correct option is {item.data['gold']}." in seen[1].text


def test_reflection_asks_move_choice_items_and_recovery_closed_loop_items() -> None:
    """The paper's reflection re-asks the move-prediction items; recovery continues the closed-loop items."""
    for test, base in (("reflection", "move-choice"), ("recovery", "closed-loop")):
        mine, theirs = TESTS[test].items(2, 6), TESTS[base].items(2, 6)
        assert [i.state for i in mine] == [i.state for i in theirs]
        assert [i.data.get("shown") for i in mine] == [i.data.get("shown") for i in theirs]


def test_unknown_variants_depth_zero_and_replies_that_are_not_text_are_refused_cleanly() -> None:
    for name, test in TESTS.items():
        item = test.items(1, 1)[0]
        with pytest.raises(ValueError, match="no variant"):
            test.play(item, "bogus", oracle_ask)
        with pytest.raises(ValueError, match="depth must be"):
            test.items(0, 1)
        for odd in (None, 3, b"B", ["B"], "\u2028B\u3000", "\x85<ANSWER> B </ANSWER>"):
            result = test.play(item, test.variants[0], lambda p: Reply(odd))  # type: ignore[arg-type]
            assert not result.passed and result.error is None, (name, odd)


def test_reconstruction_reports_what_answering_the_centre_colour_everywhere_would_score() -> None:
    row = summary("reconstruction", 3, 30, constant_ask("G G G\nG G G\nG G G"))
    assert row["element acc"].k == row["centre baseline"].k and row["matrix acc"].k == 0


def test_an_answerer_failure_ends_the_item_as_an_error() -> None:
    for name, test in TESTS.items():
        result = test.play(test.items(2, 1)[0], test.variants[0], lambda p: Reply("", error="server_error: 500"))
        assert result.error == "server_error: 500" and not result.passed, name


@pytest.mark.slow
@pytest.mark.parametrize("metric", ["half", "quarter"])
def test_oracle_agrees_with_the_exact_optimal_solver_beyond_its_ball(metric: str) -> None:
    """States 5-12 moves out, through the ball, its lookahead and the fallback, against ``solve_optimal``
    (builds the solver's tables on first use: minutes)."""
    from cubebench.solver.optimal import optimal_distance

    rng = np.random.default_rng(11)
    names = metric_moves(metric)
    for length in range(5, 13):
        for _ in range(3):
            state = apply_moves(SOLVED, TABLE, parse_array(" ".join(names[i] for i in rng.integers(0, len(names), length))))
            assert oracle(metric).distance(state) == optimal_distance(state, metric)
