"""Pass-rate and Wilson-interval math against hand-computed cases, and the grouping into cells."""

from __future__ import annotations

import math

import pytest

from cubebench.runner.aggregate import cell_of, group
from cubebench.runner.protocols.episodes.attribution import Gap, _gap
from cubebench.runner.stats import Rate, wilson_interval
from cubebench.runner.protocols.episodes.plan import EpisodeRow
from cubebench.runner.tables import compact


@pytest.mark.parametrize("k, n, lo, hi", [
    # centre = (p + z²/2n)/(1 + z²/n), half = z·sqrt(p(1-p)/n + z²/4n²)/(1 + z²/n), z = 1.96
    (0, 10, 0.0, 0.2775),
    (5, 10, 0.2366, 0.7634),
    (15, 20, 0.5313, 0.8881),
    (20, 20, 0.8389, 1.0),
    (1, 1, 0.2065, 1.0),
])
def test_wilson_interval_matches_hand_computed_values(k: int, n: int, lo: float, hi: float) -> None:
    got = wilson_interval(k, n)
    assert got[0] == pytest.approx(lo, abs=5e-4) and got[1] == pytest.approx(hi, abs=5e-4)


def test_wilson_interval_by_formula_for_an_odd_case() -> None:
    k, n, z = 7, 13, 1.959963984540054
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    assert wilson_interval(k, n) == pytest.approx((centre - half, centre + half))


def test_wilson_interval_rejects_impossible_counts() -> None:
    with pytest.raises(ValueError):
        wilson_interval(0, 0)
    with pytest.raises(ValueError):
        wilson_interval(4, 3)


def test_rate_value_format_and_sum() -> None:
    assert Rate(3, 4).value == 0.75
    assert Rate(0, 0).value is None and Rate(0, 0).format() == "-"
    assert (Rate(1, 2) + Rate(2, 3)) == Rate(3, 5)
    assert Rate(15, 20).format() == "0.75 [0.53, 0.89]"
    assert compact(Rate(15, 20)) == ".75 [.53,.89]"
    assert compact(Rate(20, 20)) == "1.0 [.84,1.0]"


def _row(key: str, tier: str, depth: int, setting: str, status: str, reward: str = "none") -> EpisodeRow:
    return EpisodeRow(key=key, part=tier, depth=depth, instance=int(key[-1]), variant=reward, setting=setting,
                      horizon="short" if depth <= 4 else "long", status=status, solved=status == "solved",
                      n_steps=1, n_moves=2, input_tokens=10, output_tokens=5, cost_usd=0.01, wall_s=0.1,
                      distance_start=None, distance_end=None)


def test_cells_count_errors_as_unsolved_and_sum_usage() -> None:
    rows = [_row("a1", "face", 1, "basic", "solved"), _row("a2", "face", 1, "basic", "failed"),
            _row("a3", "face", 1, "basic", "error"), _row("b1", "face", 8, "basic", "solved")]
    cells = group(rows, lambda r: (r.tier, r.horizon))
    short = cells[("face", "short")]
    assert short.rate == Rate(1, 3) and short.errors == 1 and short.moves == 6 and short.tokens == 45
    assert cells[("face", "long")].rate == Rate(1, 1)
    assert cell_of([]).rate == Rate(0, 0)


def test_gap_counts_discordant_pairs_on_paired_instances_only() -> None:
    outcomes = [
        {"basic": False, "standard": True},   # gained
        {"basic": False, "standard": True},   # gained
        {"basic": True, "standard": False},   # lost
        {"basic": True, "standard": True},
        {"basic": False},                     # not paired: ignored
    ]
    gap = _gap(outcomes, "standard", "basic")
    assert gap == Gap(n=4, gained=2, lost=1)
    assert gap.value == pytest.approx(0.25) and gap.format() == "+0.25 (+2/-1)"
