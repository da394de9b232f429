"""STARE's cube-net tests: exact polyominoes, the fold check against a 3D fold, items, labels, calibration.

The fold check (rolling the engine's cube) is compared with an independent 3D simulation of the fold
(float rotations about hinges, no engine) and with known facts about the 11 nets; every item label is
re-derived here from the item's own cells; the answerers are plain functions.
"""

from __future__ import annotations

import random
from collections import Counter
from itertools import combinations

import numpy as np
import pytest

from cubebench.engine.facelets import SOLVED
from cubebench.engine.kernels import apply_move
from cubebench.engine.moves import TABLE
from cubebench.render.fold import render_flat_net, tile
from cubebench.tasks.items import Prompt, Reply
from cubebench.tasks.metrics import Proportion, binary_f1
from cubebench.tasks.registry import TESTS
from cubebench.tasks.stare import STARE_TESTS
from cubebench.tasks.stare.folding import corner_set, fold, plans
from cubebench.tasks.stare.nets import (
    LAST_STEP, cube_nets, invalid_pool, is_look_alike, leaves, near_miss_of, non_nets, partners, stratum,
)
from cubebench.tasks.stare.polyomino import (
    bounding_box, canonical, free_polyominoes, has_square, longest_run, neighbours, normalize, one_cell_moves,
    orientations, transform,
)
from cubebench.tasks.stare.rolling import floor_faces, folds_to_cube, tip_moves
from cubebench.tasks.stare.shown import PALETTE, SHOWN_FRAMES, ShownNet

NET_FOLD, NET_CHOICE, PERCEPTION = STARE_TESTS
SUITE_ITEMS = 193
"""Items of ``benchmarks/suites/stare.json``'s question, steps and text setups (depth 2, seed 0; the frames setup asks
the first 120: STARE's Tab. 13, 193 without visual simulation and 120 with)."""


def oracle_ask(prompt: Prompt) -> Reply:
    return Reply(prompt.form.format(prompt.gold))


def random_ask(seed: int):
    rng = random.Random(seed)
    return lambda p: Reply(p.form.format(p.form.sample(rng)))


def value(x):
    return x.value if isinstance(x, Proportion) else x


def cells_of(item_net: dict) -> frozenset:
    return frozenset((r, c) for r, c in item_net["cells"])


# --- polyominoes and the fold check ------------------------------------------------------------------------------
def test_free_polyomino_counts_are_the_known_ones() -> None:
    assert [len(free_polyominoes(n)) for n in range(1, 7)] == [1, 1, 2, 5, 12, 35]
    for p in free_polyominoes(6):
        assert canonical(p) == p and len(orientations(p)) in (1, 2, 4, 8)


def test_exactly_eleven_of_the_thirty_five_hexominoes_fold_into_a_cube() -> None:
    assert len(cube_nets()) == 11 and len(non_nets()) == 24
    assert sum(len(orientations(p)) for p in free_polyominoes(6)) == 216  # fixed hexominoes (OEIS A001168)


def test_the_roll_check_agrees_with_an_independent_3d_fold() -> None:
    """The 3D fold (float hinge rotations, no engine) and the engine roll give the same verdict on every
    hexomino, and on tree nets the same cube face for every cell (east of the base is R, south is F)."""
    for p in free_polyominoes(6):
        base = min(p)
        outcome = fold(p, base)
        assert outcome.folds == folds_to_cube(p)
        if not has_square(p):
            assert outcome.cube_faces() == floor_faces(p, base)


def test_known_facts_about_cube_nets() -> None:
    nets = set(cube_nets())
    # No net has a 2x2 block, a straight run of 5, or a box other than 3x4 / 2x5.
    assert not any(has_square(p) or longest_run(p) >= 5 for p in nets)
    assert Counter(tuple(sorted(bounding_box(p))) for p in nets) == {(3, 4): 10, (2, 5): 1}
    # A row of 4 with one cell above and one below it always folds: 16 placements, 6 free nets, the 1-4-1 family.
    family = {canonical({(1, 0), (1, 1), (1, 2), (1, 3), (0, a), (2, b)}) for a in range(4) for b in range(4)}
    assert len(family) == 6 and family <= nets
    assert {p for p in nets if longest_run(p) == 4} == family
    # A row of 4 with both extra cells on one side never folds (the two caps land on the same face).
    same_side = [normalize({(1, 0), (1, 1), (1, 2), (1, 3), (0, a), (0, b)}) for a, b in combinations(range(4), 2)]
    same_side += [normalize({(1, 0), (1, 1), (1, 2), (1, 3), (0, a), (-1, a)}) for a in range(4)]
    assert not any(folds_to_cube(p) for p in same_side)


def test_the_fold_check_is_invariant_under_the_eight_symmetries() -> None:
    for p in free_polyominoes(6):
        for k in range(8):
            image = transform(p, k)
            assert folds_to_cube(image) == folds_to_cube(p) and canonical(image) == p


def test_tipping_the_engine_cube_four_times_one_way_comes_back() -> None:
    for move in tip_moves().values():
        state = SOLVED
        for _ in range(4):
            state = apply_move(state, TABLE, move)
        assert np.array_equal(state, SOLVED)


def test_a_straight_line_overlaps_the_base_at_step_four_and_a_2x3_block_tears() -> None:
    line = {(0, c) for c in range(6)}
    outcome = fold(line, (0, 0), [(0, c) for c in range(1, 6)])
    assert outcome.first_failure == 4 and outcome.steps[3].failure == "overlap" and outcome.steps[3].clash == (0, 0)
    block = {(r, c) for r in range(2) for c in range(3)}
    kinds = {s.failure for b, o in plans(block)[:40] for s in fold(block, b, o).steps}
    assert "tear" in kinds and not any(fold(block, b, o).folds for b, o in plans(block))


def test_near_misses_and_the_pools() -> None:
    assert sum(near_miss_of(p) is not None for p in non_nets()) == 21
    for p in non_nets():
        miss = near_miss_of(p)
        if miss is not None:
            assert miss in {canonical(q) for q in one_cell_moves(p)} and folds_to_cube(miss)
    look = invalid_pool(2)
    assert len(look) == 6 and all(is_look_alike(p) and near_miss_of(p) is not None for p in look)
    assert len(invalid_pool(1)) == 21
    for p in invalid_pool(1):  # every pool net has a plan that fails only at the last step
        assert any(fold(p, b, o).first_failure == LAST_STEP for b, o in plans(p))
    for net in cube_nets():
        assert all(stratum(q) == stratum(net) for q in partners(net, 2))
    with pytest.raises(ValueError, match="depth must be one of"):
        invalid_pool(3)


# --- the metric --------------------------------------------------------------------------------------------------
def test_binary_f1_on_hand_computed_cases() -> None:
    assert binary_f1(["Yes", "Yes", "No", "No"], ["Yes", "No", "Yes", "No"]) == 0.5  # TP 1, FP 1, FN 1
    assert binary_f1(["Yes", "Yes", "No", "No"], ["Yes", "Yes", "Yes", "Yes"]) == pytest.approx(2 / 3)
    assert binary_f1(["Yes", "Yes", "No"], ["No", "No", "No"]) == 0.0
    assert binary_f1(["Yes", "Yes", "No"], ["Yes", None, None]) == pytest.approx(2 / 3)  # a failure on Yes is a FN
    assert binary_f1(["No", "No"], ["No", None]) is None  # 0/0
    assert binary_f1(["No"], ["Yes"]) == 0.0
    with pytest.raises(ValueError, match="lengths differ"):
        binary_f1(["Yes"], [])


# --- items: determinism, balance, labels -------------------------------------------------------------------------
@pytest.mark.parametrize("test", STARE_TESTS, ids=lambda t: t.name)
def test_items_are_deterministic_and_distinct(test) -> None:
    for depth in (1, 2):
        first = test.items(depth, 10, seed=3)
        assert first == test.items(depth, 10, seed=3)
        assert test.items(depth, 4, seed=3) == first[:4]
        assert first != test.items(depth, 10, seed=4)
        assert len({test.identity(i) for i in first}) == len(first)
    with pytest.raises(ValueError, match="depth must be one of"):
        test.items(3, 1)


@pytest.mark.parametrize("depth", [1, 2])
def test_net_fold_is_balanced_pair_by_pair_and_labelled_by_the_fold(depth: int) -> None:
    items = NET_FOLD.items(depth, 40, seed=1)
    for a, b in zip(items[::2], items[1::2]):
        assert {a.data["truth"], b.data["truth"]} == {"Yes", "No"}
        if depth == 2:
            assert a.data["stratum"] == b.data["stratum"]
    for item in items:
        cells = cells_of(item.data["net"])
        assert len(cells) == 6 and item.data["truth"] == ("Yes" if folds_to_cube(cells) else "No")
        net = ShownNet.from_data(item.data["net"])
        if item.data["truth"] == "No":
            assert net.folding.first_failure == LAST_STEP and item.data["near_miss"] == (depth == 2 or
                                                                                           item.data["near_miss"])
            # the frames shown (after steps 1-4) never show two faces in one place
            for state in net.folding.states[1:SHOWN_FRAMES + 1]:
                squares = [corner_set(state.corners[c]) for c in state.placed]
                assert len(set(squares)) == len(squares)
        else:
            assert net.folding.folds


def test_steps_fold_each_face_once_about_a_face_already_in_place() -> None:
    for item in NET_FOLD.items(2, 8, seed=5):
        net = ShownNet.from_data(item.data["net"])
        lines = net.steps_text().splitlines()
        assert lines[0] == f"Face {net.base} stays flat on the table." and len(lines) == 1 + LAST_STEP
        placed = {net.base}
        for n, line in enumerate(lines[1:], 1):
            words = line.split()
            face, hinge = int(words[4]), int(words[-1].rstrip("."))
            assert words[:2] == ["Step", f"{n}:"] and hinge in placed and face not in placed
            assert frozenset((face, hinge)) in net.adjacent_pairs()
            placed.add(face)


def test_nothing_but_folding_tells_a_valid_net_from_an_invalid_one() -> None:
    """Same text apart from the numbers, same image size, same six colours, same painted area."""
    items = NET_FOLD.items(2, 8, seed=2)
    for setup in NET_FOLD.variants:
        prompts = [NET_FOLD.prompt(i, setup) for i in items]
        shapes = {None if p.image is None else p.image.shape for p in prompts}
        assert len(shapes) == 1
        templates = {"".join("#" if ch.isdigit() else ch for ch in p.text).replace("#", "") for p in prompts
                     if "text" not in setup}
        shows_steps = setup not in ("question", "text", "image-text")  # the steps' words differ item to item
        assert len(templates) <= 1 or shows_steps
        for p in prompts:
            assert "overlap" not in p.text and "valid" not in p.text.lower()
            # the perturbed setup's preamble says that a turn may tear a face off: the same sentence on every item
            assert ("tear" in p.text) == (setup == "perturbed")
    areas = set()
    for item in items:
        net = ShownNet.from_data(item.data["net"])
        assert sorted(net.colours) == sorted(PALETTE)
        areas.add(int((net.image() != 255).any(axis=2).sum()))
    assert len(areas) == 1


def shortcut(items, rule) -> dict:
    """F1 and balanced accuracy of answering ``rule(cells)`` on the items."""
    scores = []
    for item in items:
        answer = "Yes" if rule(cells_of(item.data["net"])) else "No"
        scores.append({"gold": item.data["truth"], "answer": answer, "correct": answer == item.data["truth"]})
    row = NET_FOLD.summarize(scores)
    return {"F1": row["F1"], "bal acc": row["bal acc"]}


SHORTCUTS = {
    "box 3x4 or 2x5": lambda p: tuple(sorted(bounding_box(p))) in ((3, 4), (2, 5)),
    "a row of 4": lambda p: longest_run(p) >= 4,
    "no row of 4": lambda p: longest_run(p) < 4,
    "3+ leaves": lambda p: leaves(p) >= 3,
    "4 leaves": lambda p: leaves(p) >= 4,
    "no 2x2 block": lambda p: not has_square(p),
    "no run of 5": lambda p: longest_run(p) < 5,
}


CHOICE_ITEMS = 120
"""net-choice items the outline rules are measured on (depth 2, seed 0): about as many as the net-choice group's
numberings of the look-alikes allow, every net shown once (docs/stare.md)."""
TEXTBOOK_ITEMS = 300
"""net-fold items per depth the textbook rules are measured on (seed 0)."""
DEPTH_ONE_ITEMS = 160
"""depth-1 net-fold items the outline rules are measured on (seed 0)."""


def test_outline_shortcuts_stay_near_chance_on_the_suite_items() -> None:
    """On the suite's depth-2 items no rule on the outline is off chance by more than 1/18 of balanced
    accuracy (the run-of-4 rules' offset: the one 2x5 net's look-alike has the run, docs/stare.md), and none
    beats the always-Yes F1 of 2/3 (the bounding-box rule answers Yes to every item).  The two nets with 4
    leaf cells, which no non-net has, are not asked at depth 2, so "4 leaves" gives nothing away."""
    items = NET_FOLD.items(2, SUITE_ITEMS, seed=0)
    yes = sum(i.data["truth"] == "Yes" for i in items)
    always_yes = 2 * yes / (2 * yes + len(items) - yes)  # 2/3 on balanced items; 97 of 193 Yes: 0.669
    for name, rule in SHORTCUTS.items():
        row = shortcut(items, rule)
        assert abs(row["bal acc"] - 0.5) <= 1 / 18 + 1e-9, (name, row)
        assert row["F1"] <= always_yes + 1e-9, (name, row)


def test_outline_shortcuts_do_not_pick_the_net_among_four() -> None:
    """Multiple choice at depth 2: the cube net is drawn to look like one of the three non-nets (its stratum),
    so picking at random among the options with an outline property stays at chance (0.25)."""
    items = NET_CHOICE.items(2, CHOICE_ITEMS, seed=0)
    for name, rule in SHORTCUTS.items():
        expected = 0.0
        for item in items:
            having = [k for k, option in enumerate(item.data["options"]) if rule(cells_of(option))]
            gold = "ABCD".index(item.data["gold"])
            expected += (gold in having) / len(having) if having else 0.25
        assert expected / len(items) < 0.31, (name, expected / len(items))


def _textbook_rule(cells: frozenset) -> bool:
    """What a solver of net puzzles knows, read off the outline alone: (1) beside a straight run of 4 the other
    two cells must sit on opposite sides of it; (2) the cell two steps along a straight line becomes the
    opposite face, so no cell may have two such cells."""
    for r, c in cells:
        for dr, dc in ((0, 1), (1, 0)):
            run = {(r + k * dr, c + k * dc) for k in range(4)}
            if run <= cells:
                sides = {np.sign((x - r) * dc - (y - c) * dr) for x, y in cells - run}
                if len(sides) == 1 and 0 not in sides:
                    return False
        far = [(dr, dc) for dr, dc in ((0, 1), (1, 0), (0, -1), (-1, 0))
               if (r + dr, c + dc) in cells and (r + 2 * dr, c + 2 * dc) in cells]
        if len(far) > 1:
            return False
    return True


@pytest.mark.slow
def test_textbook_net_rules_answer_most_items_a_known_limit_of_the_task() -> None:
    """Whether a hexomino folds depends on its outline alone, and the cube nets are textbook knowledge: two classic
    rules (docs/stare.md) answer most items without folding anything.  This pins the measured level so the docs
    stay true; net-fold measures knowledge of nets as well as folding, in the paper as here."""
    two = shortcut(NET_FOLD.items(2, TEXTBOOK_ITEMS, seed=0), _textbook_rule)
    one = shortcut(NET_FOLD.items(1, TEXTBOOK_ITEMS, seed=0), _textbook_rule)
    assert two["bal acc"] > 0.9 and one["bal acc"] > 0.75, (two, one)


def test_at_depth_one_outline_shortcuts_do_work() -> None:
    """The control depth: any non-folding hexomino, so a 2x2 block or a run of 5 gives many away."""
    items = NET_FOLD.items(1, DEPTH_ONE_ITEMS, seed=0)
    assert shortcut(items, lambda p: not has_square(p) and longest_run(p) < 5)["bal acc"] > 0.65


def test_net_choice_has_exactly_one_folding_net_balanced_over_the_slots() -> None:
    items = NET_CHOICE.items(2, 24, seed=1)
    for item in items:
        folding = [folds_to_cube(cells_of(n)) for n in item.data["options"]]
        assert folding.count(True) == 1 and "ABCD"[folding.index(True)] == item.data["gold"]
        assert len(set(item.data["shapes"])) == 4
    counts = Counter(i.data["gold"] for i in items)
    assert set(counts) == set("ABCD") and max(counts.values()) - min(counts.values()) <= 1


def test_perception_labels_come_from_the_net_and_are_balanced() -> None:
    items = PERCEPTION.items(2, 24, seed=1)
    golds: dict[str, Counter] = {k: Counter() for k in PERCEPTION.variants}
    for item in items:
        net = ShownNet.from_data(item.data["net"])
        probes = item.data["probes"]
        colour = probes["colour"]
        assert colour["options"]["ABCD".index(colour["gold"])] == net.colours[net.labels.index(colour["face"])]
        assert len(set(colour["options"])) == 4
        a, b = (net.cell_of(k) for k in probes["connectivity"]["faces"])
        assert probes["connectivity"]["gold"] == ("Yes" if b in neighbours(a) else "No")
        folded = probes["folded"]
        state = net.folding.states[folded["step"]]
        lifted = bool(np.any(np.abs(state.corners[net.cell_of(folded["face"])][:, 1]) > 1e-9))
        assert folded["gold"] == ("Yes" if lifted else "No") and 1 <= folded["step"] <= SHOWN_FRAMES
        for kind in golds:
            golds[kind][probes[kind]["gold"]] += 1
    assert golds["connectivity"]["Yes"] == golds["connectivity"]["No"] == golds["folded"]["Yes"] == 12
    assert set(golds["colour"]) == set("ABCD") and max(golds["colour"].values()) == 6


# --- rendering ---------------------------------------------------------------------------------------------------
def test_renders_have_fixed_shapes_and_frames_change_step_by_step() -> None:
    for p in free_polyominoes(6):
        image = render_flat_net(sorted(p), list("123456"), list(PALETTE.values()))
        assert image.shape == (384, 384, 3) and image.dtype == np.uint8
    net = ShownNet.from_data(NET_FOLD.items(2, 1, seed=0)[0].data["net"])
    frames = [net.frame(k) for k in range(LAST_STEP + 1)]
    assert all(f.shape == (320, 320, 3) for f in frames)
    assert all(not np.array_equal(a, b) for a, b in zip(frames, frames[1:]))
    assert net.frames_image().shape == tile([frames[0]] * 5, list("abcde"), cols=3).shape
    with pytest.raises(ValueError, match="no frame"):
        net.frame(LAST_STEP + 1)
    with pytest.raises(ValueError, match="one label and one colour"):
        render_flat_net([(0, 0)], ["1", "2"], [(0, 0, 0)])


# --- calibration: the oracle scores 1, random lands on chance ----------------------------------------------------
@pytest.mark.parametrize("test", STARE_TESTS, ids=lambda t: t.name)
def test_the_oracle_scores_one(test) -> None:
    items = test.items(2, 8, seed=0)
    for variant in test.variants:
        row = test.summarize([test.play(i, variant, oracle_ask).score for i in items])
        for key, val in row.items():
            if key not in ("yes bias", "yes/no items"):
                assert value(val) == 1.0, (test.name, variant, key, val)


def test_the_random_answerer_lands_on_chance() -> None:
    items = NET_FOLD.items(2, 200, seed=9)
    ask = random_ask(1)
    row = NET_FOLD.summarize([NET_FOLD.play(i, "text", ask).score for i in items])
    assert abs(row["F1"] - 0.5) < 0.1 and abs(row["bal acc"] - 0.5) < 0.1
    choice = NET_CHOICE.items(2, 100, seed=9)
    ask = random_ask(2)
    acc = NET_CHOICE.summarize([NET_CHOICE.play(i, "text", ask).score for i in choice])["acc"]
    lo, hi = acc.interval
    assert lo <= 0.25 <= hi


def test_the_tests_are_registered_and_the_suites_load() -> None:
    from cubebench.runner.suites import load_suite

    assert all(TESTS[t.name] is t for t in STARE_TESTS)
    for name in ("stare", "stare-smoke"):
        suite = load_suite(name)
        assert set(suite.tests) == {t.name for t in STARE_TESTS}
    assert load_suite("stare").tests["net-fold"].items == SUITE_ITEMS


# --- the figures the docs quote -----------------------------------------------------------------------------------
def textbook_pick(item) -> float:
    """The chance that picking at random among the options the textbook rules pass picks the cube net."""
    passing = [k for k, option in enumerate(item.data["options"]) if _textbook_rule(cells_of(option))]
    return ("ABCD".index(item.data["gold"]) in passing) / len(passing) if passing else 0.25


def measure() -> None:
    """Print the shortcut tables of docs/stare.md ("Shortcuts checked"): the outline rules on the suite's depth-2
    items and on depth-1 items, the textbook rules, and the outline rules among net-choice's four nets."""
    two, one = NET_FOLD.items(2, SUITE_ITEMS, seed=0), NET_FOLD.items(1, DEPTH_ONE_ITEMS, seed=0)
    print(f"outline rules, F1 / bal acc: depth 2 ({len(two)} items), depth 1 ({len(one)} items)")
    rules = {**SHORTCUTS, "all three of box, no 2x2, no run of 5": lambda p: (
        SHORTCUTS["box 3x4 or 2x5"](p) and SHORTCUTS["no 2x2 block"](p) and SHORTCUTS["no run of 5"](p))}
    for name, rule in rules.items():
        a, b = shortcut(two, rule), shortcut(one, rule)
        print(f"  {name}: {a['F1']:.3f} / {a['bal acc']:.3f}; {b['F1']:.3f} / {b['bal acc']:.3f}")
    for depth in (2, 1):
        row = shortcut(NET_FOLD.items(depth, TEXTBOOK_ITEMS, seed=0), _textbook_rule)
        print(f"textbook rules, depth {depth} ({TEXTBOOK_ITEMS} items): bal acc {row['bal acc']:.3f}")
    for depth in (2, 1):
        choice = NET_CHOICE.items(depth, CHOICE_ITEMS, seed=0)
        print(f"net-choice, pick at random among the options the textbook rules pass, depth {depth} ({CHOICE_ITEMS} "
              f"items): {sum(map(textbook_pick, choice)) / len(choice):.3f}")
    choice = NET_CHOICE.items(2, CHOICE_ITEMS, seed=0)
    print(f"net-choice outline rules, depth 2 ({CHOICE_ITEMS} items), pick at random among the options having it:")
    for name, rule in SHORTCUTS.items():
        expected = 0.0
        for item in choice:
            having = [k for k, option in enumerate(item.data["options"]) if rule(cells_of(option))]
            expected += ("ABCD".index(item.data["gold"]) in having) / len(having) if having else 0.25
        print(f"  {name}: {expected / len(choice):.3f}")


if __name__ == "__main__":
    measure()
