"""The learning curves of a policy training run as one picture: SFT loss, probe accuracy and GRPO reward
against steps, read from the ``training.json`` files the training programs write (nothing is recomputed)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np


def read_training(folder: Path) -> dict[str, Any]:
    """``folder/training.json``; a clear error when it is missing or not a training record."""
    path = folder / "training.json"
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise SystemExit(f"no training.json in {folder}: give the --out folder of policy_sft or policy_grpo") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise SystemExit(f"{path} is not JSON ({err})") from None
    if not isinstance(data, dict) or not isinstance(data.get("history"), list):
        raise SystemExit(f"{path} is not a training record (no 'history' list)")
    return data


def smoothed(values: list[float], window: int) -> np.ndarray:
    """A trailing mean over ``window`` steps (shorter at the start), so a noisy curve shows its trend."""
    v = np.asarray(values, float)
    sums = np.cumsum(np.insert(v, 0, 0.0))
    lo = np.maximum(np.arange(1, len(v) + 1) - window, 0)
    return (sums[1:] - sums[lo]) / (np.arange(1, len(v) + 1) - lo)


def pooled_probe(probe: dict[str, Any], depths: range) -> float:
    """One probe's accuracy over ``depths`` pooled (right over asked)."""
    rows = [r for r in probe["by_depth"] if r["depth"] in depths]
    return sum(r["right"] for r in rows) / max(1, sum(r["n"] for r in rows))


def plot(sft: dict[str, Any], grpo: dict[str, Any] | None, out: Path) -> None:
    """Three panels: the SFT loss, the probe's one-step accuracy, the GRPO group reward and solve share."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3 if grpo else 2, figsize=(15 if grpo else 10, 4.2))
    steps = [h["step"] for h in sft["history"]]
    loss = [h["loss"] for h in sft["history"]]
    ax = axes[0]
    ax.plot(steps, loss, color="0.75", lw=0.8, label="per step")
    ax.plot(steps, smoothed(loss, 20), color="C0", label="mean of 20 steps")
    ax.set(title="SFT loss (cross-entropy of the reply)", xlabel="optimizer step", ylabel="loss", yscale="log")
    ax.legend()

    ax = axes[1]
    slices = [p for p in sft.get("probes", []) if not p.get("final")]
    if slices:
        ax.plot([p["step"] for p in slices], [pooled_probe(p, range(3, 9)) for p in slices], "o-", color="C0",
                label="during training: 20 per depth, depths 3-8 pooled")
    final = next((p for p in sft.get("probes", []) if p.get("final")), None)
    if final:
        for row in final["by_depth"]:
            ax.errorbar(final["step"] + 8 * (row["depth"] - 5), row["acc"],
                        yerr=[[row["acc"] - row["low"]], [row["high"] - row["acc"]]], fmt="s", ms=4, capsize=2,
                        label="final: every probe position, by depth (95 % Wilson)" if row["depth"] == 2 else None)
            ax.annotate(f"d{row['depth']}", (final["step"] + 8 * (row["depth"] - 5), row["acc"]), fontsize=7,
                        xytext=(3, 3), textcoords="offset points")
    ax.set(title="probe: one-step accuracy (an optimal move)", xlabel="SFT step", ylabel="accuracy", ylim=(0, 1))
    ax.legend(loc="upper left", fontsize=8)

    if grpo:
        ax = axes[2]
        gsteps = [h["step"] for h in grpo["history"]]
        reward = [h["reward"] for h in grpo["history"]]
        ax.plot(gsteps, reward, color="0.75", lw=0.8, label="group mean reward")
        ax.plot(gsteps, smoothed(reward, 5), color="C1", label="mean of 5 steps")
        twin = ax.twinx()
        twin.plot(gsteps, smoothed([h["solved"] for h in grpo["history"]], 5), color="C2", ls="--",
                  label="solved share, mean of 5")
        twin.set(ylabel="solved share", ylim=(0, 1))
        ax.set(title="GRPO from the SFT adapter", xlabel="GRPO step (one group of episodes)", ylabel="reward")
        lines = ax.get_legend_handles_labels()
        more = twin.get_legend_handles_labels()
        ax.legend(lines[0] + more[0], lines[1] + more[1], fontsize=8, loc="upper left")
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    """``python -m cubebench.training.plot SFT_DIR [--grpo GRPO_DIR] --out PNG``."""
    p = argparse.ArgumentParser(prog="python -m cubebench.training.plot",
                                description="plot a policy training run's loss, probe accuracy and GRPO reward")
    p.add_argument("sft", type=Path, help="policy_sft's --out folder")
    p.add_argument("--grpo", type=Path, default=None, help="policy_grpo's --out folder")
    p.add_argument("--out", type=Path, required=True, help="the PNG to write")
    args = p.parse_args(argv)
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("plot: needs matplotlib: pip install -e '.[report]'", file=sys.stderr)
        return 2
    plot(read_training(args.sft), read_training(args.grpo) if args.grpo else None, args.out)
    print(f"plot: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
