"""Training starts never meet the evaluation sets: not a shipped certified start, nor one seen from another side.

The check here is independent of :func:`~cubebench.runner.training_starts.symmetry_key`, which recolours
turned facelets: each shipped start's scramble is renamed face by face for each of the 24 ways of holding
the cube (``B D`` held after ``x2`` is ``F U``) and played from solved, and no training start may equal any
of those; distances are checked by brute force, not by the oracle that labelled them.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pytest

from cubebench.curriculum import load_instance_file
from cubebench.engine import SOLVED, TABLE
from cubebench.engine.facelets import FACES
from cubebench.engine.kernels import apply_moves, is_solved
from cubebench.engine.moves import MOVE_INDEX
from cubebench.engine.notation import parse_array
from cubebench.engine.state import from_facelets, to_facelets
from cubebench.runner.cli import main
from cubebench.runner.export_tasks import ExportError, ExportRequest, export_tasks
from cubebench.runner.training_starts import TrainingStartError, training_instances
from cubebench.shipped import instances_dir

CENTRE_AT = (4, 13, 22, 31, 40, 49)
QUARTER = ("U", "U'", "R", "R'", "F", "F'", "D", "D'", "L", "L'", "B", "B'")


def orientations() -> list[str]:
    """24 whole-cube rotation sequences, one per way of holding the cube."""
    found: dict[str, str] = {}
    for n in range(5):
        for seq in itertools.product(("x", "y", "z"), repeat=n):
            held = to_facelets(apply_moves(SOLVED, TABLE, parse_array(" ".join(seq)))) if seq else to_facelets(SOLVED)
            found.setdefault(held, " ".join(seq))
    assert len(found) == 24
    return list(found.values())


def renamed_every_way(scramble: str) -> set[str]:
    """The position ``scramble`` makes, made again with its moves renamed for each of the 24 holdings."""
    out = set()
    for seq in orientations():
        held = to_facelets(apply_moves(SOLVED, TABLE, parse_array(seq))) if seq else to_facelets(SOLVED)
        face_at = {held[c]: FACES[i] for i, c in enumerate(CENTRE_AT)}  # where each face went
        renamed = " ".join(face_at[m[0]] + m[1:] for m in scramble.split())
        out.add(to_facelets(apply_moves(SOLVED, TABLE, parse_array(renamed))))
    return out


def evaluation_positions() -> set[str]:
    positions = set()
    for path in sorted(instances_dir().glob("*.jsonl")):
        for instance in load_instance_file(path):
            twins = renamed_every_way(instance.scramble)
            assert instance.state in twins  # the renaming reproduces the start itself
            positions |= twins
    return positions


def solves_within(facelets: str, n: int) -> bool:
    state = from_facelets(facelets)
    return any(is_solved(apply_moves(state, TABLE, np.array([MOVE_INDEX[m] for m in seq], dtype=np.int64)))
               for k in range(n + 1) for seq in itertools.product(QUARTER, repeat=k))


@pytest.fixture(scope="module")
def starts() -> dict[int, list]:
    return {depth: training_instances("quarter", depth, count, seed=3) for depth, count in ((3, 4), (4, 60), (5, 40))}


def test_training_starts_are_apart_from_every_evaluation_start_held_any_way(starts: dict[int, list]) -> None:
    held = evaluation_positions()
    states = [i.state for group in starts.values() for i in group]
    assert len(set(states)) == len(states) and not set(states) & held


def test_training_starts_are_at_their_exact_distance_with_an_optimal_solution(starts: dict[int, list]) -> None:
    for depth, group in starts.items():
        for instance in group:
            solution = " ".join(reversed([m[0] + ("" if m.endswith("'") else "'") for m in instance.scramble.split()]))
            assert len(solution.split()) == depth
            assert is_solved(apply_moves(from_facelets(instance.state), TABLE, parse_array(solution)))
            if depth <= 3:
                assert not solves_within(instance.state, depth - 1)


def test_depths_one_and_two_have_no_position_left_to_train_on() -> None:
    """Every depth-1 and depth-2 position is an evaluation start seen from some side."""
    for depth in (1, 2):
        with pytest.raises(TrainingStartError, match="only 0 new"):
            training_instances("quarter", depth, 1)
    with pytest.raises(TrainingStartError, match="out of range"):
        training_instances("quarter", 10, 1)


def test_exported_training_traces_hold_no_evaluation_start(tmp_path: Path) -> None:
    out = tmp_path / "sft"
    export_tasks(ExportRequest(kind="sft", out=out, starts="training", depths=(4,), instances=4, train_fraction=1.0))
    rows = [json.loads(line) for line in (out / "train.jsonl").read_text().splitlines()]
    assert len(rows) == 4 and all(r["id"].startswith("quarter/train/symbolic/d4/") for r in rows)
    assert not {r["state"] for r in rows} & evaluation_positions()
    assert json.loads((out / "manifest.json").read_text())["starts"] == "training"
    with pytest.raises(ExportError, match="--starts is for episodes"):
        export_tasks(ExportRequest(kind="items", out=tmp_path / "i", starts="training"))
    assert main(["export-tasks", "--kind", "sft", "--starts", "training", "--depths", "1", "--out",
                 str(tmp_path / "d1")]) == 2


def test_an_evaluation_start_seen_from_another_side_is_refused() -> None:
    from cubebench.runner.training_starts import check_apart

    instance = load_instance_file(sorted(instances_dir().glob("quarter-d04-*.jsonl"))[0])[0]
    twins = renamed_every_way(instance.scramble) - {instance.state}
    assert len(twins) >= 11  # a depth-4 start has many other-letter twins
    for twin in sorted(twins)[:3]:
        with pytest.raises(TrainingStartError, match="is an evaluation start"):
            check_apart([twin])


def test_an_export_takes_every_training_start_a_shallow_depth_has_and_says_so(tmp_path: Path) -> None:
    """Depth 3 has 4 training starts: asking 6 per depth exports those 4 and 6 at depth 4, with a note (the SFT
    script's defaults ask 150 at depths 3 and 4, and must not stop there)."""
    from cubebench.runner.export_tasks import ExportRequest, export_tasks

    summary = export_tasks(ExportRequest(kind="sft", out=tmp_path / "sft", starts="training", depths=(3, 4),
                                         instances=6, train_fraction=1.0))
    rows = [json.loads(line) for line in (tmp_path / "sft" / "train.jsonl").read_text().splitlines()]
    assert sorted(r["depth"] for r in rows) == [3] * 4 + [4] * 6
    assert any("depth 3: only 4 training start(s)" in note for note in summary.notes)
    with pytest.raises(TrainingStartError, match="only 0 new"):
        training_instances("quarter", 2, 1, at_most=True)
