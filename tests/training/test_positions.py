"""Training positions kept apart from every evaluated one, and the probe set apart from the training data, both
checked independently of :mod:`cubebench.engine.symmetry`: each evaluated (and probe) position's 48 images are
built from a scramble of it, relabelled face by face for each way of holding the cube and for its mirror image,
and played from solved.  Labels are checked against a breadth-first search."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from helpers import TURN_BACK, apply, descent, evaluated_images, images, inverse

from cubebench.engine import SOLVED, TABLE
from cubebench.engine.kernels import apply_moves
from cubebench.engine.moves import MOVE_INDEX
from cubebench.engine.state import from_facelets, to_facelets
from cubebench.runner import EvaluationOverlap, check_apart, evaluation_positions
from cubebench.shipped import instances_dir
from cubebench.solver.oracle import metric_moves
from cubebench.training.policy_data import DataRequest, make_data, read_positions
from cubebench.training.positions import APART_FROM, training_paths


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("policy-data")
    make_data(folder, DataRequest(starts_per_depth=6, probe_per_depth=8, start_depths=(4, 5, 6)), log=lambda _: None)
    return folder


def test_no_training_start_nor_deep_path_position_is_evaluated_in_any_of_48_spellings(data: Path) -> None:
    evaluated = evaluated_images()
    train = read_positions(data / "train.jsonl")
    assert {p.distance for p in train} == {1, 2, 3, 4, 5, 6}
    deep = [p for p in train if p.distance >= APART_FROM]
    assert deep and not any(p.facelets in evaluated for p in deep)
    for depth in (4, 5):
        starts = [path[0] for path in training_paths("quarter", depth, 6, 0)]
        assert not any(s.facelets in evaluated for s in starts)
    shallow = [p for p in train if p.distance < APART_FROM]
    assert all(p.facelets in evaluated for p in shallow)  # as the docs say: depths 1-3 are all evaluated positions


def test_the_probe_set_meets_no_training_position_in_any_spelling(data: Path) -> None:
    train = {p.facelets for p in read_positions(data / "train.jsonl")}
    probe = read_positions(data / "probe.jsonl")
    assert {p.distance for p in probe} == set(range(2, 9))
    for position in probe:
        assert not images(inverse(descent(position.facelets, "quarter"))) & train, position.facelets


def test_labels_are_every_optimal_move_by_breadth_first_search(data: Path) -> None:
    names = metric_moves("quarter")
    distance = {to_facelets(SOLVED): 0}
    frontier = [SOLVED]
    for depth in range(1, 5):
        nxt = []
        for state in frontier:
            for move in names:
                after = apply_moves(state, TABLE, np.array([MOVE_INDEX[move]], dtype=np.int64))
                key = to_facelets(after)
                if key not in distance:
                    distance[key] = depth
                    nxt.append(after)
        frontier = nxt
    checked = 0
    for position in read_positions(data / "train.jsonl") + read_positions(data / "probe.jsonl"):
        if position.distance > 4:
            continue
        state = from_facelets(position.facelets)
        best = {m for m in names
                if distance.get(to_facelets(apply_moves(state, TABLE, np.array([MOVE_INDEX[m]])))) == position.distance - 1}
        assert distance[position.facelets] == position.distance and set(position.moves) == best
        checked += 1
    assert checked > 50


def test_check_apart_refuses_an_evaluated_position_and_its_mirror() -> None:
    where, state = next(evaluation_positions())
    with pytest.raises(EvaluationOverlap):
        check_apart([state])
    scramble = json.loads((instances_dir() / where).read_text().splitlines()[0])["scramble"]
    mirror = " ".join({"R": "L", "L": "R"}.get(m[0], m[0]) + TURN_BACK[m[1:]] for m in scramble.split())
    with pytest.raises(EvaluationOverlap):
        check_apart([to_facelets(apply(mirror))])
    check_apart([path[0].facelets for path in training_paths("quarter", 5, 3, 0)])
