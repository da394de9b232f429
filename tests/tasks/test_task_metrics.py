"""The question tests' metrics against small hand-computed cases (the arithmetic is in the comments)."""

from __future__ import annotations

from typing import Any, Callable

import pytest

from cubebench.tasks.metrics import (
    MISSING, Z95, Proportion, abstention_metrics, balanced_accuracy, cohen_kappa, confusion, macro_f1,
    recovery_metrics, reflection_metrics, wilson_interval,
)

DEC, NC, INC = "DECREASE", "NO_CHANGE", "INCREASE"
CLASSES = (DEC, NC, INC)
# 3-class example, n = 10:  gold DEC -> pred DEC 3, NC 1;  gold NC -> NC 2, INC 1;  gold INC -> INC 2, parse failure 1
GOLD3 = [DEC] * 4 + [NC] * 3 + [INC] * 3
PRED3 = [DEC, DEC, DEC, NC, NC, NC, INC, INC, INC, None]


@pytest.mark.parametrize("k, n, lo, hi", [
    # centre = (p + z²/2n)/(1 + z²/n), half = z·sqrt(p(1-p)/n + z²/4n²)/(1 + z²/n), z = 1.96
    (0, 10, 0.0, 0.2775), (5, 10, 0.2366, 0.7634), (15, 20, 0.5313, 0.8881), (20, 20, 0.8389, 1.0),
])
def test_wilson_interval_matches_hand_computed_values(k: int, n: int, lo: float, hi: float) -> None:
    assert wilson_interval(k, n) == pytest.approx((lo, hi), abs=5e-4)


def test_wilson_interval_is_shared_with_the_runner() -> None:
    from cubebench.runner import stats
    assert stats.wilson_interval is wilson_interval and stats.Z95 == Z95 == pytest.approx(1.96, abs=1e-4)
    for k, n in [(0, 0), (4, 3), (-1, 3)]:
        with pytest.raises(ValueError):
            wilson_interval(k, n)


def test_proportion_value_interval_format_and_sum() -> None:
    p = Proportion(15, 20)
    assert p.value == 0.75 and p.interval == wilson_interval(15, 20)
    assert p.format() == "0.75 [0.53, 0.89]" and p.format(with_interval=False) == "0.75"
    assert Proportion(0, 0).value is None and Proportion(0, 0).interval is None and Proportion(0, 0).format() == "-"
    assert Proportion(1, 2) + Proportion(2, 3) == Proportion(3, 5)
    with pytest.raises(ValueError):
        Proportion(3, 2)


def test_confusion_puts_parse_failures_in_their_own_column() -> None:
    table = confusion(GOLD3, PRED3, CLASSES)
    assert table == {DEC: {DEC: 3, NC: 1, INC: 0, MISSING: 0}, NC: {DEC: 0, NC: 2, INC: 1, MISSING: 0},
                     INC: {DEC: 0, NC: 0, INC: 2, MISSING: 1}}
    for gold, pred, labels in [([DEC], ["SAME"], CLASSES), (["SAME"], [DEC], CLASSES), ([DEC], [DEC], (DEC, MISSING)),
                               ([DEC], [DEC], (DEC, DEC))]:
        with pytest.raises(ValueError):
            confusion(gold, pred, labels)


def test_cohen_kappa_by_hand() -> None:
    # 2x2: gold Yes -> pred Yes 4, No 1;  gold No -> pred Yes 2, No 3.   p_o = 7/10
    # marginals gold (5, 5), pred (6, 4): p_e = .5·.6 + .5·.4 = .5   ->   κ = (.7 - .5)/(1 - .5) = 0.4
    gold = ["Yes"] * 5 + ["No"] * 5
    pred = ["Yes"] * 4 + ["No"] + ["Yes"] * 2 + ["No"] * 3
    assert cohen_kappa(gold, pred, ("Yes", "No")) == pytest.approx(0.4)
    # 3 classes with a parse failure (MISSING): p_o = 7/10; gold marginals (4, 3, 3, 0), pred (3, 3, 3, 1)
    # p_e = (4·3 + 3·3 + 3·3 + 0·1)/100 = 0.3   ->   κ = (.7 - .3)/(1 - .3) = 4/7 = 0.571429
    assert cohen_kappa(GOLD3, PRED3, CLASSES) == pytest.approx(4 / 7)


@pytest.mark.parametrize("gold, pred, kappa", [
    (["Yes", "No", "No"], ["Yes", "No", "No"], 1.0),  # perfect agreement
    ([DEC, DEC], [DEC, DEC], 1.0),  # perfect on a single class (p_e = 1, the formula is 0/0)
    (["Yes", "Yes", "No", "No"], ["Yes", "No", "Yes", "No"], 0.0),  # p_o = .5 = p_e: chance level
    (["Yes", "No", "Yes", "No"], ["Yes"] * 4, 0.0),  # a constant answer: p_o = .5, p_e = .5·1 + .5·0
    (["Yes", "No"], [None, None], 0.0),  # all parse failures: p_o = 0, p_e = 0
    (["Yes", "No"], ["No", "Yes"], -1.0),  # p_o = 0, p_e = .5  ->  -.5/.5
    ([], [], None),
])
def test_cohen_kappa_edge_structure(gold: list[str], pred: list[Any], kappa: float | None) -> None:
    got = cohen_kappa(gold, pred, ("Yes", "No", DEC))
    assert got == (None if kappa is None else pytest.approx(kappa, abs=1e-12))


def test_reflection_metrics_efr_and_otr() -> None:
    initial = [True, True, True, False, False, False, False, False]
    final = [True, True, False, True, True, False, False, False]
    m = reflection_metrics(initial, final)
    # initial 3/8, final 4/8, delta 1/8; 2 of the 5 initially wrong fixed -> EFR .4; 1 of 3 correct flipped -> OTR 1/3
    assert m["initial_acc"] == 0.375 and m["final_acc"] == 0.5 and m["delta"] == pytest.approx(0.125)
    assert m["efr"] == pytest.approx(0.4) and m["otr"] == pytest.approx(1 / 3)
    assert (m["n"], m["initially_wrong"], m["initially_correct"], m["fixed"], m["flipped"]) == (8, 5, 3, 2, 1)
    all_right = reflection_metrics([True, True], [True, False])
    assert all_right["efr"] is None and all_right["otr"] == 0.5 and all_right["delta"] == -0.5
    empty = reflection_metrics([], [])
    assert empty["initial_acc"] is None and empty["delta"] is None and empty["efr"] is None
    with pytest.raises(ValueError):
        reflection_metrics([True], [])


def test_abstention_metrics_and_the_apa_decomposition() -> None:
    # 10 decisions: 6 answered (3 right), 2 IDK, 2 parse failures
    # coverage .6, selective accuracy .5, IDK rate .2, APA = (3 + .25·2)/10 = .35 = .6·.5 + .25·.2
    m = abstention_metrics(correct=3, idk=2, answered=6, decisions=10)
    assert (m["coverage"], m["selective_accuracy"], m["idk_rate"]) == pytest.approx((0.6, 0.5, 0.2))
    assert m["apa"] == pytest.approx(0.35)
    assert m["apa"] == pytest.approx(m["coverage"] * m["selective_accuracy"] + m["s"] * m["idk_rate"])
    # the paper's Gemini row (B.6.3): coverage 87.5 %, sel. acc 28.57 %, IDK 12.5 % -> APA (2 + .25)/8 = 0.28
    gemini = abstention_metrics(correct=2, idk=1, answered=7, decisions=8)
    assert gemini["apa"] == pytest.approx(0.28125) and gemini["selective_accuracy"] == pytest.approx(0.2857, abs=1e-4)
    assert abstention_metrics(3, 2, 6, 10, s=0.0)["apa"] == pytest.approx(0.3)  # s = 0: micro-accuracy
    empty = abstention_metrics(0, 0, 0, 0)
    assert empty["apa"] is None and empty["coverage"] is None and empty["selective_accuracy"] is None
    assert abstention_metrics(0, 4, 0, 4)["selective_accuracy"] is None  # all abstained
    for args in [(4, 0, 3, 5), (0, 3, 3, 5), (-1, 0, 0, 1)]:
        with pytest.raises(ValueError):
            abstention_metrics(*args)
    with pytest.raises(ValueError):
        abstention_metrics(1, 0, 1, 1, s=1.5)


def test_recovery_metrics_by_hand() -> None:
    m = recovery_metrics([1, 3, None, 2, None, 5], [4, 5, 6, 5, 4, 7])
    # solved 4 of 6; within 1 attempt: 1 -> 1/6; within 3: 1, 3, 2 -> 3/6 (unconditional denominators)
    # Med@Solved = median(1, 3, 2, 5) = 2.5;  Avg@All = (1 + 3 + 6 + 2 + 4 + 5)/6 = 21/6 = 3.5
    assert m["n"] == 6 and m["solved"] == 4 and m["solve_rate"] == Proportion(4, 6)
    assert m["solve_rate"].interval == wilson_interval(4, 6)
    assert m["p_at_1"] == pytest.approx(1 / 6) and m["p_at_3"] == pytest.approx(0.5)
    assert m["med_at_solved"] == 2.5 and m["avg_at_all"] == pytest.approx(3.5)
    none_solved = recovery_metrics([None, None], [4, 6])
    assert none_solved["med_at_solved"] is None and none_solved["avg_at_all"] == 5.0 and none_solved["p_at_1"] == 0
    empty = recovery_metrics([], [])
    assert empty["solve_rate"].value is None and empty["p_at_3"] is None and empty["avg_at_all"] is None


@pytest.mark.parametrize("call", [
    lambda: recovery_metrics([5], [4]), lambda: recovery_metrics([0], [4]), lambda: recovery_metrics([None], [0]),
    lambda: recovery_metrics([1], [4, 4]), lambda: macro_f1([DEC], [], CLASSES), lambda: cohen_kappa([], [DEC], CLASSES),
    lambda: balanced_accuracy(["Yes"], ["Yes", "No"]),
])
def test_bad_inputs_raise_value_errors(call: Callable[[], Any]) -> None:
    with pytest.raises(ValueError):
        call()
