"""The question tests' metrics (Cube Bench §3.1, B.1-B.8), as pure functions on plain lists.

A prediction of ``None`` is a parse failure: it is scored wrong everywhere (it is never the gold),
counts against the parse rate and, for agreement statistics, is a category of its own
(:data:`MISSING`).  Rates over no items are ``None`` (undefined), never 0.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Any, Sequence

__all__ = [
    "Z95", "MISSING", "wilson_interval", "Proportion", "balanced_accuracy", "yes_bias",
    "confusion", "macro_f1", "cohen_kappa", "reflection_metrics",
    "abstention_metrics", "recovery_metrics",
]

Z95 = 1.959963984540054
"""The two-sided 95 % standard normal quantile."""
MISSING = "MISSING"
"""The predicted category of a parse failure in :func:`confusion` and :func:`cohen_kappa`."""

Pred = Sequence[Any]
"""Parsed answers, ``None`` for a parse failure."""


def wilson_interval(k: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for ``k`` successes in ``n`` trials: unlike the normal approximation it
    stays inside [0, 1] and is sensible at 0 and n successes.

    centre = (p + z²/2n) / (1 + z²/n),
    half   = z·sqrt(p(1-p)/n + z²/4n²) / (1 + z²/n).
    """
    if n <= 0:
        raise ValueError("the Wilson interval needs n >= 1 trials")
    if not 0 <= k <= n:
        raise ValueError(f"successes must lie in [0, n], got k={k}, n={n}")
    p = k / n
    z2 = z * z
    denom = 1 + z2 / n
    centre = (p + z2 / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass(frozen=True)
class Proportion:
    """``k`` of ``n`` items, reported with its Wilson interval (the paper's 95 % CIs)."""

    k: int
    n: int
    z: float = Z95

    def __post_init__(self) -> None:
        if not 0 <= self.k <= self.n:
            raise ValueError(f"a proportion needs 0 <= k <= n, got k={self.k}, n={self.n}")

    @property
    def value(self) -> float | None:
        """k/n, or ``None`` when there are no items."""
        return self.k / self.n if self.n else None

    @property
    def interval(self) -> tuple[float, float] | None:
        """The Wilson score interval, or ``None`` when there are no items."""
        return wilson_interval(self.k, self.n, self.z) if self.n else None

    def __add__(self, other: Proportion) -> Proportion:
        return Proportion(self.k + other.k, self.n + other.n, self.z)

    def format(self, with_interval: bool = True) -> str:
        """``0.75 [0.53, 0.89]`` (or ``-`` when there are no items)."""
        if self.value is None or self.interval is None:
            return "-"
        lo, hi = self.interval
        return f"{self.value:.2f} [{lo:.2f}, {hi:.2f}]" if with_interval else f"{self.value:.2f}"


def _same_length(**lists: Sequence[Any]) -> int:
    """The common length of ``lists``; a ValueError naming them when they differ."""
    lengths = {name: len(values) for name, values in lists.items()}
    if len(set(lengths.values())) > 1:
        raise ValueError(f"lengths differ: {lengths}")
    return next(iter(lengths.values()), 0)


def _share(hits: int, n: int) -> float | None:
    return hits / n if n else None


def balanced_accuracy(gold: Sequence[str], pred: Pred, positive: str = "Yes", negative: str = "No") -> float | None:
    """(TPR + TNR) / 2 (B.2): accuracy that a constant answer cannot inflate.  A parse failure is wrong;
    ``None`` when either class has no gold item."""
    _same_length(gold=gold, pred=pred)
    if any(g not in (positive, negative) for g in gold):
        raise ValueError(f"gold answers must be {positive!r} or {negative!r}")
    rates = [_share(sum(p == c for g, p in zip(gold, pred) if g == c), sum(g == c for g in gold))
             for c in (positive, negative)]
    return None if None in rates else sum(r for r in rates if r is not None) / 2


def yes_bias(pred: Pred, positive: str = "Yes") -> float | None:
    """The paper's Bias: share of ``positive`` among parsed answers (0.5 is unbiased on balanced items);
    ``None`` when nothing parsed."""
    parsed = [p for p in pred if p is not None]
    return _share(sum(p == positive for p in parsed), len(parsed))


def confusion(gold: Sequence[str], pred: Pred, labels: Sequence[str]) -> dict[str, dict[str, int]]:
    """Counts ``[gold][predicted]`` over ``labels``, with parse failures in the :data:`MISSING` column."""
    _same_length(gold=gold, pred=pred)
    if MISSING in labels or len(set(labels)) != len(labels):
        raise ValueError(f"labels must be distinct and not {MISSING!r}, got {list(labels)}")
    columns = [*labels, MISSING]
    table = {g: dict.fromkeys(columns, 0) for g in labels}
    for g, p in zip(gold, pred):
        column = MISSING if p is None else p
        if g not in table or column not in columns:
            raise ValueError(f"gold {g!r} or prediction {p!r} is not one of {list(labels)}")
        table[g][column] += 1
    return table


def macro_f1(gold: Sequence[str], pred: Pred, labels: Sequence[str]) -> float | None:
    """Mean per-class F1 = 2TP / (2TP + FP + FN) over the classes that occur in gold or predictions, so a
    class nobody uses does not count as a perfect 0/0; a parse failure is a false negative for its gold
    class.  ``None`` for no items."""
    table = confusion(gold, pred, labels)
    scores = []
    for c in labels:
        tp = table[c][c]
        fn = sum(table[c].values()) - tp
        fp = sum(table[g][c] for g in labels) - tp
        if tp + fn + fp:
            scores.append(2 * tp / (2 * tp + fp + fn))
    return sum(scores) / len(scores) if scores else None


def cohen_kappa(gold: Sequence[str], pred: Pred, labels: Sequence[str]) -> float | None:
    """Cohen's κ = (p_o - p_e) / (1 - p_e), chance agreement p_e from the empirical marginals, with parse
    failures a predicted category of their own (:data:`MISSING`, never the gold).

    Perfect agreement gives 1.0, even with a single class (where p_e = 1 and the formula is 0/0).
    p_e = 1 with imperfect agreement (impossible with exact counts: both marginals on one class means
    every pair agrees) would give ``None``.  ``None`` for no items.  Computed on integer counts, so these
    cases are exact: κ = (n·agree - S) / (n² - S), S = Σ_c gold_c · pred_c.
    """
    table = confusion(gold, pred, labels)
    n = sum(sum(row.values()) for row in table.values())
    if not n:
        return None
    agree = sum(table[c][c] for c in labels)
    if agree == n:
        return 1.0
    chance = sum(sum(table[c].values()) * sum(table[g][c] for g in labels) for c in labels)
    return (n * agree - chance) / (n * n - chance) if n * n != chance else None


def reflection_metrics(initial: Sequence[bool], final: Sequence[bool]) -> dict[str, Any]:
    """Reflection-guided re-answering (B.4): accuracy before and after, their difference, the error-fix rate
    EFR (fixed among initially wrong) and overthink rate OTR (flipped among initially correct), with the
    counts behind them; a rate over no items is ``None``."""
    n = _same_length(initial=initial, final=final)
    wrong = sum(not i for i in initial)
    fixed = sum(not i and f for i, f in zip(initial, final))
    flipped = sum(i and not f for i, f in zip(initial, final))
    initial_acc, final_acc = _share(sum(map(bool, initial)), n), _share(sum(map(bool, final)), n)
    return {
        "n": n, "initially_wrong": wrong, "initially_correct": n - wrong, "fixed": fixed, "flipped": flipped,
        "initial_acc": initial_acc, "final_acc": final_acc,
        "delta": None if initial_acc is None or final_acc is None else final_acc - initial_acc,
        "efr": _share(fixed, wrong), "otr": _share(flipped, n - wrong),
    }


def abstention_metrics(correct: int, idk: int, answered: int, decisions: int, s: float = 0.25) -> dict[str, Any]:
    """Selective control (B.6.1): ``decisions`` = answered + IDK + parse failures.

    coverage = answered / decisions, selective accuracy = correct / answered, IDK rate = idk / decisions and
    APA = (correct + s·idk) / decisions = coverage · selective accuracy + s · IDK rate (an abstention earns
    ``s``, a wrong answer or parse failure 0).  Rates over nothing are ``None``.
    """
    if not (0 <= correct <= answered and 0 <= idk and answered + idk <= decisions):
        raise ValueError(f"need 0 <= correct <= answered and answered + idk <= decisions, got correct={correct}, "
                         f"idk={idk}, answered={answered}, decisions={decisions}")
    if not 0 <= s <= 1:
        raise ValueError(f"the abstention credit s must lie in [0, 1], got {s}")
    return {
        "correct": correct, "idk": idk, "answered": answered, "decisions": decisions, "s": s,
        "coverage": _share(answered, decisions), "selective_accuracy": _share(correct, answered),
        "idk_rate": _share(idk, decisions), "apa": (correct + s * idk) / decisions if decisions else None,
    }


def recovery_metrics(attempts_to_solve: Sequence[int | None], max_attempts: Sequence[int]) -> dict[str, Any]:
    """Learning-curve / recovery (B.8), one entry per episode (``None`` = unsolved within its budget).

    ``solve_rate`` is a :class:`Proportion` (value and Wilson interval); ``p_at_1`` / ``p_at_3`` are shares of
    all episodes solved within 1 / 3 attempts; ``med_at_solved`` the median attempts over solved episodes;
    ``avg_at_all`` the mean attempts with each unsolved episode counted at its ``max_attempts``.
    """
    n = _same_length(attempts_to_solve=attempts_to_solve, max_attempts=max_attempts)
    if any(m < 1 or (a is not None and not 1 <= a <= m) for a, m in zip(attempts_to_solve, max_attempts)):
        raise ValueError("attempts must lie in [1, max_attempts] and max_attempts must be >= 1")
    solved = [a for a in attempts_to_solve if a is not None]
    used = [m if a is None else a for a, m in zip(attempts_to_solve, max_attempts)]
    return {
        "n": n, "solved": len(solved), "solve_rate": Proportion(len(solved), n),
        "p_at_1": _share(sum(a <= 1 for a in solved), n), "p_at_3": _share(sum(a <= 3 for a in solved), n),
        "med_at_solved": float(statistics.median(solved)) if solved else None,
        "avg_at_all": _share(sum(used), n),
    }


def binary_f1(gold: Sequence[str], pred: Pred, positive: str = "Yes") -> float | None:
    """F1 of the ``positive`` class, 2TP / (2TP + FP + FN) (STARE's score for yes/no tasks): a parse failure on a
    positive item is a false negative, on a negative item nothing.  ``None`` when there is no positive item
    and no positive prediction (0/0)."""
    _same_length(gold=gold, pred=pred)
    tp = sum(g == positive and p == positive for g, p in zip(gold, pred))
    fp = sum(g != positive and p == positive for g, p in zip(gold, pred))
    fn = sum(g == positive and p != positive for g, p in zip(gold, pred))
    return 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else None


__all__ += ["binary_f1"]
