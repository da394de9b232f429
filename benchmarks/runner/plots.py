"""Report plots as PNG (matplotlib, the optional ``report`` extra, imported only here).

- ``pass_rate_by_depth.png``: pass rate vs depth, one line per tier, one panel per condition;
- ``reward_settings.png``: pass rate per tier and horizon, one bar per reward (when the run varies it);
- ``tool_settings.png``: the same per tool setting (when the run varies it).
Error bars are Wilson 95 % intervals.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Sequence, cast

from cubebench.engine.rewards import REWARDS
from cubebench.extras import install_hint
from cubebench.tiers import tier_title

from .aggregate import group, ordered
from .protocols.episodes.plan import EpisodeRow
from .protocols.episodes.report import SETTING_TITLES, SETTINGS, condition_label, conditions
from .protocols.episodes.suite import TIER_NAMES
from .rows import StoredRow
from .stats import Rate

TIER_COLOURS = dict(zip(TIER_NAMES, ("#4c72b0", "#dd8452", "#55a868", "#c44e52")))
"""A plot colour per tier, in the registry's order (a tier past these gets matplotlib's next colour)."""


class PlotsUnavailable(RuntimeError):
    """matplotlib is not installed."""


def require_matplotlib() -> None:
    """:class:`PlotsUnavailable` now, before anything is written, when matplotlib is missing."""
    _pyplot()


def _pyplot() -> Any:
    try:
        import matplotlib
    except ImportError:
        raise PlotsUnavailable(f"plots need matplotlib: {install_hint('report')}") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _errorbar(rate: Rate) -> tuple[float, float, float]:
    """(pass rate, distance down to the interval's low end, up to its high end) of a non-empty cell."""
    value, interval = rate.value, rate.interval
    if value is None or interval is None:
        raise ValueError("an empty cell has no error bar")
    lo, hi = interval
    return value, value - lo, hi - value


def plot_by_depth(rows: list[EpisodeRow], path: Path) -> Path:
    """Pass rate vs depth per tier, a panel per (reward, setting) condition."""
    plt = _pyplot()
    conds = conditions(rows)
    cells = group(rows, lambda r: (r.reward, r.setting, r.tier, r.depth))
    depths = sorted({r.depth for r in rows})
    slot = {d: i for i, d in enumerate(depths)}  # evenly spaced: short depths are not crowded together
    cols = min(3, len(conds))
    nrows = (len(conds) + cols - 1) // cols
    fig, axes = plt.subplots(nrows, cols, figsize=(4.2 * cols, 3.2 * nrows), squeeze=False, sharey=True)
    for ax, (rw, st) in zip(axes.flat, conds):
        tiers = ordered((r.tier for r in rows), TIER_NAMES)
        for i, tier in enumerate(tiers):
            dodge = (i - (len(tiers) - 1) / 2) * 0.08  # keep equal rates of different tiers apart
            pts = sorted((d, c.rate) for (a, b, t, d), c in cells.items() if (a, b, t) == (rw, st, tier))
            if not pts:
                continue
            ys = [_errorbar(r) for _, r in pts]
            ax.errorbar([slot[d] + dodge for d, _ in pts], [y[0] for y in ys], yerr=[[y[1] for y in ys], [y[2] for y in ys]],
                        marker="o", capsize=3, label=tier_title(tier), color=TIER_COLOURS.get(tier))
        ax.set_title(condition_label(rw, st, conds), fontsize=10)
        ax.set_xticks(range(len(depths)), [str(d) for d in depths])
        ax.set_xlabel("depth")
        ax.set_ylim(-0.05, 1.05)
        ax.grid(alpha=0.3)
    for ax in list(axes.flat)[len(conds):]:
        ax.set_visible(False)
    axes[0][0].set_ylabel("pass rate")
    axes[0][0].legend(fontsize=8)
    return _save(fig, path, plt)


def plot_comparison(rows: list[EpisodeRow], path: Path, dimension: str) -> Path | None:
    """Grouped bars per tier x horizon, one bar per value of ``dimension`` (``reward`` or ``setting``)."""
    attr: Callable[[EpisodeRow], str] = (lambda r: r.reward) if dimension == "reward" else (lambda r: r.setting)
    values = ordered((attr(r) for r in rows), REWARDS if dimension == "reward" else SETTINGS)
    if len(values) < 2:
        return None
    plt = _pyplot()
    groups = [(t, h) for t in ordered((r.tier for r in rows), TIER_NAMES)
              for h in ordered((r.horizon for r in rows), ("short", "long"))]
    cells = group(rows, lambda r: (attr(r), r.tier, r.horizon))
    fig, ax = plt.subplots(figsize=(max(6.0, 1.1 * len(groups) * len(values) * 0.5 + 2), 3.6))
    width = 0.8 / len(values)
    for i, value in enumerate(values):
        xs, ys, lo, hi = [], [], [], []
        for g, (t, h) in enumerate(groups):
            cell = cells.get((value, t, h))
            if cell is None or not cell.rate.n:
                continue
            y, a, b = _errorbar(cell.rate)
            xs.append(g + (i - (len(values) - 1) / 2) * width)
            ys.append(y)
            lo.append(a)
            hi.append(b)
        label = SETTING_TITLES.get(value, value) if dimension == "setting" else value
        ax.bar(xs, ys, width, yerr=[lo, hi], capsize=2, label=label)
    ax.set_xticks(range(len(groups)), [f"{tier_title(t)}\n{h}" for t, h in groups], fontsize=8)
    ax.set_ylabel("pass rate")
    ax.set_ylim(0, 1.05)
    ax.set_title(f"Pass rate by {'reward' if dimension == 'reward' else 'tool setting'}")
    ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    return _save(fig, path, plt)


def _save(fig: Any, path: Path, plt: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def write_plots(stored: Sequence[StoredRow], directory: Path) -> list[Path]:
    """All plots that apply to the run, written under ``directory`` (an episode run's: ``RunProtocol.plots``)."""
    rows = cast(list[EpisodeRow], list(stored))
    if not rows:
        return []
    made = [plot_by_depth(rows, directory / "pass_rate_by_depth.png")]
    for dimension, name in (("reward", "reward_settings.png"), ("setting", "tool_settings.png")):
        out = plot_comparison(rows, directory / name, dimension)
        if out is not None:
            made.append(out)
    return made
