"""The training plot reads what the training programs write and says plainly what it cannot read."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from cubebench.training.plot import main, pooled_probe, smoothed

pytest.importorskip("matplotlib")


def probe(step: int, right: int, n: int, final: bool = False) -> dict:
    rows = [{"depth": d, "right": right, "n": n, "acc": right / n, "low": 0.0, "high": 1.0} for d in range(2, 9)]
    return {"step": step, "final": final, "by_depth": rows}


def write(folder: Path, data: dict) -> Path:
    folder.mkdir()
    (folder / "training.json").write_text(json.dumps(data))
    return folder


def test_the_plot_is_written_from_an_sft_and_a_grpo_record(tmp_path: Path) -> None:
    sft = write(tmp_path / "sft", {"history": [{"step": s, "loss": 2.0 / s} for s in range(1, 41)],
                                   "probes": [probe(20, 2, 20), probe(40, 9, 20), probe(40, 50, 100, final=True)]})
    grpo = write(tmp_path / "grpo", {"history": [{"step": s, "reward": 0.1 * s, "solved": 0.0} for s in range(1, 6)]})
    out = tmp_path / "plot.png"
    assert main([str(sft), "--grpo", str(grpo), "--out", str(out)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_folder_without_a_training_record_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="no training.json"):
        main([str(tmp_path), "--out", str(tmp_path / "p.png")])
    (tmp_path / "training.json").write_text("{not json")
    with pytest.raises(SystemExit, match="is not JSON"):
        main([str(tmp_path), "--out", str(tmp_path / "p.png")])
    (tmp_path / "training.json").write_text("[1, 2]")
    with pytest.raises(SystemExit, match="not a training record"):
        main([str(tmp_path), "--out", str(tmp_path / "p.png")])


def test_the_curves_are_trailing_means_and_pooled_rates() -> None:
    assert smoothed([1, 3, 5, 7], 2).tolist() == [1, 2, 4, 6]
    assert np.isclose(pooled_probe(probe(1, 3, 20), range(3, 9)), 3 / 20)
