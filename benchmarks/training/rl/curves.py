"""Training curves from a run's ``scalars.jsonl``: ``python -m cubebench.training.rl.curves RUN_DIR --out PNG``.

Left: greedy pass rate per evaluation depth against wall-clock minutes;
right: the curriculum frontier and the training success rate.  Several run
folders may be given (one row each).  Needs matplotlib (the ``rl`` extra).
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def read_scalars(run: Path) -> dict[str, list[tuple[int, float, float]]]:
    """tag -> [(env step, wall seconds, value)] of one run."""
    series: dict[str, list[tuple[int, float, float]]] = defaultdict(list)
    for line in (run / "scalars.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        series[row["tag"]].append((row["step"], row["wall"], row["value"]))
    return series


def plot_runs(runs: list[Path], titles: list[str], out: Path) -> None:
    fig, axes = plt.subplots(len(runs), 2, figsize=(11, 3.6 * len(runs)), squeeze=False)
    for (left, right), run, title in zip(axes, runs, titles):
        s = read_scalars(run)
        for tag in sorted(t for t in s if t.startswith("pass/")):
            pts = s[tag]
            left.plot([w / 60 for _, w, _ in pts], [v for _, _, v in pts], marker=".", label=tag.split("/")[1])
        left.set(xlabel="wall-clock minutes", ylabel="greedy pass rate (20 moves)", ylim=(-0.03, 1.03),
                 title=f"{title}: pass rate per depth")
        left.axhline(0.95, color="grey", lw=0.8, ls="--")
        left.legend(loc="lower right", fontsize=8, ncol=2)
        steps = max((p[0] for pts in s.values() for p in pts), default=0)
        for tag, style in (("curriculum/frontier", "-"), ("train/success", ":")):
            if tag in s:
                ax = right if tag == "curriculum/frontier" else right.twinx()
                ax.plot([p[0] / 1e6 for p in s[tag]], [p[2] for p in s[tag]], style, label=tag)
                ax.set_ylabel(tag)
        right.set(xlabel=f"env steps (millions; {steps / 1e6:.1f} M in all)", title=f"{title}: curriculum")
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m cubebench.training.rl.curves", description=__doc__.split("\n\n")[0])
    p.add_argument("runs", type=Path, nargs="+")
    p.add_argument("--titles", nargs="+")
    p.add_argument("--out", type=Path, required=True)
    args = p.parse_args(argv)
    plot_runs(args.runs, args.titles or [r.name for r in args.runs], args.out)


if __name__ == "__main__":
    main()
