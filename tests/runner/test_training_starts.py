"""Training starts never meet the evaluated positions: not a shipped certified start or a question item, in any of
its 48 spellings (seen from another side, or in a mirror).

The check here is independent of :mod:`cubebench.engine.symmetry`: each evaluated position's scramble is renamed face
by face for each of the 24 ways of holding the cube and for its mirror image, and played from solved
(``helpers.images``); no training start may equal any of those.  Distances are checked by brute force, not by the
oracle that labelled them.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pytest

from helpers import evaluated_images, images

from cubebench.curriculum import load_instance_file
from cubebench.engine import TABLE
from cubebench.engine.kernels import apply_moves, is_solved
from cubebench.engine.moves import MOVE_INDEX
from cubebench.engine.notation import parse_array
from cubebench.engine.state import from_facelets
from cubebench.runner import EvaluationOverlap
from cubebench.runner.cli import main
from cubebench.runner.export_tasks import ExportError, ExportRequest, export_tasks
from cubebench.runner.training_starts import TrainingStartError, training_instances
from cubebench.shipped import instances_dir

QUARTER = ("U", "U'", "R", "R'", "F", "F'", "D", "D'", "L", "L'", "B", "B'")


def solves_within(facelets: str, n: int) -> bool:
    state = from_facelets(facelets)
    return any(is_solved(apply_moves(state, TABLE, np.array([MOVE_INDEX[m] for m in seq], dtype=np.int64)))
               for k in range(n + 1) for seq in itertools.product(QUARTER, repeat=k))


@pytest.fixture(scope="module")
def starts() -> dict[int, list]:
    return {depth: training_instances("quarter", depth, count, seed=3) for depth, count in ((4, 40), (5, 40))}


def test_training_starts_are_apart_from_every_evaluation_start_held_any_way(starts: dict[int, list]) -> None:
    held = evaluated_images()
    states = [i.state for group in starts.values() for i in group]
    assert len(set(states)) == len(states) and not set(states) & held


def test_training_starts_are_at_their_exact_distance_with_an_optimal_solution(starts: dict[int, list]) -> None:
    for depth, group in starts.items():
        for instance in group:
            solution = " ".join(reversed([m[0] + ("" if m.endswith("'") else "'") for m in instance.scramble.split()]))
            assert len(solution.split()) == depth
            assert is_solved(apply_moves(from_facelets(instance.state), TABLE, parse_array(solution)))
            if depth <= 4:
                assert not solves_within(instance.state, depth - 1)


def test_depths_one_to_three_have_no_position_left_to_train_on() -> None:
    """Every quarter-turn position of depth 1, 2 or 3 is an evaluated one in some spelling."""
    for depth in (1, 2, 3):
        with pytest.raises(TrainingStartError, match="only 0 new"):
            training_instances("quarter", depth, 1)
    with pytest.raises(TrainingStartError, match="out of range"):
        training_instances("quarter", 10, 1)


def test_exported_training_traces_hold_no_evaluation_start(tmp_path: Path) -> None:
    out = tmp_path / "sft"
    export_tasks(ExportRequest(kind="sft", out=out, starts="training", depths=(4,), instances=4, train_fraction=1.0))
    rows = [json.loads(line) for line in (out / "train.jsonl").read_text().splitlines()]
    assert len(rows) == 4 and all(r["id"].startswith("quarter/train/symbolic/d4/") for r in rows)
    assert not {r["state"] for r in rows} & evaluated_images()
    assert json.loads((out / "manifest.json").read_text())["starts"] == "training"
    with pytest.raises(ExportError, match="--starts is for episodes"):
        export_tasks(ExportRequest(kind="items", out=tmp_path / "i", starts="training"))
    assert main(["export-tasks", "--kind", "sft", "--starts", "training", "--depths", "1", "--out",
                 str(tmp_path / "d1")]) == 2


def test_an_evaluation_start_seen_from_another_side_or_a_mirror_is_refused() -> None:
    from cubebench.runner.training_starts import check_apart

    instance = load_instance_file(sorted(instances_dir().glob("quarter-d04-*.jsonl"))[0])[0]
    twins = images(instance.scramble) - {instance.state}
    assert len(twins) >= 23  # a depth-4 start has many other-letter twins, mirrored ones among them
    for twin in sorted(twins)[:3] + sorted(twins)[-3:]:
        with pytest.raises(EvaluationOverlap, match="is an evaluation position"):
            check_apart([twin])


def test_an_export_takes_every_training_start_a_shallow_depth_has_and_says_so(tmp_path: Path) -> None:
    """Depth 4 has about a hundred training starts: asking 150 exports those, with a note (the SFT script's defaults
    ask 150 at depths 4 and 8, and must not stop there)."""
    summary = export_tasks(ExportRequest(kind="episodes", out=tmp_path / "eps", starts="training", depths=(4,),
                                         instances=150, train_fraction=1.0))
    rows = [json.loads(line) for line in (tmp_path / "eps" / "train.jsonl").read_text().splitlines()]
    assert 50 < len(rows) < 150 and {r["depth"] for r in rows} == {4}
    assert any(f"depth 4: only {len(rows)} training start(s)" in note for note in summary.notes)
    with pytest.raises(TrainingStartError, match="only 0 new"):
        training_instances("quarter", 3, 1, at_most=True)


def test_the_default_sft_export_holds_training_starts_only(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """``export-tasks --kind sft`` with its defaults: traces from training starts, at exp1's depths that have them (4
    and 8; 1-3 have none, 12-20 are beyond exact labelling, each said on stderr), none of them a shipped start or
    a question item in any of its 48 spellings (rotations and mirror, built by renaming moves: ``helpers.images``)."""
    out = tmp_path / "default"
    assert main(["export-tasks", "--kind", "sft", "--out", str(out), "--instances", "6"]) == 0
    err = capsys.readouterr().err
    assert "depth(s) 1, 2, 3 left out: every quarter-turn position there is an evaluated one" in err
    assert "depth(s) 12, 16, 20 left out: training starts are labelled exactly up to 9 quarter turns" in err
    rows = [json.loads(line) for split in ("train", "test") if (out / f"{split}.jsonl").exists()
            for line in (out / f"{split}.jsonl").read_text().splitlines()]
    assert sorted(r["depth"] for r in rows) == [4] * 6 + [8] * 6
    assert all(r["id"].startswith("quarter/train/") for r in rows)
    assert not {r["state"] for r in rows} & evaluated_images()
    assert json.loads((out / "manifest.json").read_text())["starts"] == "training"


def test_the_evaluation_starts_are_a_flag_that_says_so(tmp_path: Path) -> None:
    out = tmp_path / "evaluation"
    assert main(["export-tasks", "--kind", "sft", "--starts", "evaluation", "--depths", "1", "--instances", "2",
                 "--out", str(out)]) == 0
    rows = [json.loads(line) for split in ("train", "test") if (out / f"{split}.jsonl").exists()
            for line in (out / f"{split}.jsonl").read_text().splitlines()]
    shipped = load_instance_file(sorted(instances_dir().glob("quarter-d01-*.jsonl"))[0])
    assert {r["state"] for r in rows} == {i.state for i in shipped[:2]}
    assert json.loads((out / "manifest.json").read_text())["starts"] == "evaluation"
    old = tmp_path / "old"  # the earlier name is still read
    assert main(["export-tasks", "--kind", "sft", "--starts", "certified", "--depths", "1", "--instances", "2",
                 "--out", str(old)]) == 0
    assert json.loads((old / "manifest.json").read_text())["starts"] == "evaluation"
