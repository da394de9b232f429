"""Tests of the exact optimal solver (cubebench.solver.optimal).

The big pruning tables are built on first use (a few minutes from a fresh
cache, see docs/solver.md); every later run loads them from the cache.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from cubebench.engine.errors import InvalidStateError
from cubebench.engine.kernels import apply_moves, is_solved
from cubebench.engine.moves import MOVE_INDEX, ORIENTATIONS, TABLE
from cubebench.engine.notation import parse_array
from cubebench.engine.state import SOLVED, from_facelets, to_facelets
from cubebench.solver.optimal import (
    OptimalSolution, SolverTimeout, lower_bound, lower_bound_batch, optimal_distance, solve_optimal,
)
from cubebench.solver.optimal import coords as C
from cubebench.solver.optimal import table_cache
from cubebench.solver.optimal import pruning as T

NEEDS_TABLES = pytest.mark.slow
"""Tests that load the big pruning tables (1.7 GB, minutes to build on a fresh machine): kept out of the
fast default run and out of CI; run them with ``-m slow`` when the solver or an instance file changes (the
default suite's manifest check says when an instance file did)."""

INSTANCES = __import__("pathlib").Path(__file__).resolve().parents[2] / "benchmarks" / "instances"
SUPERFLIP = "U R2 F B R B2 R U2 L B2 R U' D' R2 F R' L B2 U2 F2"
QUARTER = [MOVE_INDEX[m] for m in ("U", "U'", "D", "D'", "L", "L'", "R", "R'", "F", "F'", "B", "B'")]
HALF = list(range(18))


def scrambled(moves: str) -> np.ndarray:
    return apply_moves(SOLVED, TABLE, parse_array(moves))


def check_solution(state: np.ndarray, sol: OptimalSolution) -> None:
    """The solution replays on the engine and its length is the reported distance."""
    assert len(sol.moves) == sol.distance
    idx = np.array([MOVE_INDEX[m] for m in sol.moves], dtype=np.int64)
    assert is_solved(apply_moves(state, TABLE, idx))
    if sol.metric == "quarter":
        assert all(not m.endswith("2") for m in sol.moves)


def bfs_layers(moves: list[int], depth: int) -> list[list[np.ndarray]]:
    """Independent breadth-first search on sticker states: layer d = states at distance d."""
    seen = {SOLVED.tobytes()}
    layers = [[SOLVED.copy()]]
    for _ in range(depth):
        nxt = []
        for s in layers[-1]:
            for m in moves:
                t = s[TABLE[m]]
                key = t.tobytes()
                if key not in seen:
                    seen.add(key)
                    nxt.append(t)
        layers.append(nxt)
    return layers


# ---------------------------------------------------------------------------
# Coordinates and symmetries (no big tables needed)
# ---------------------------------------------------------------------------

def test_layer_sizes_match_known_counts():
    """Sanity of the BFS used as the independent reference (OEIS A080601 / A080602)."""
    assert [len(x) for x in bfs_layers(HALF, 3)] == [1, 18, 243, 3240]
    assert [len(x) for x in bfs_layers(QUARTER, 3)] == [1, 12, 114, 1068]


def test_symmetries_are_a_group_preserving_face_turns():
    assert len(C.D4H) == 16 and np.array_equal(C.D4H[0], SOLVED)
    faces = {TABLE[m].tobytes() for m in range(18)}
    for s in range(16):
        assert np.array_equal(C.D4H[s][C.D4H[C.SYM_INV[s]]], SOLVED)
        for m in range(18):
            assert C.conj_states(TABLE[m], C.D4H[s]).tobytes() in faces


def test_move_tables_agree_with_engine():
    rng = np.random.default_rng(1)
    mts = [C.move_table(k) for k in range(4)]
    for _ in range(20):
        s = apply_moves(SOLVED, TABLE, rng.integers(0, 18, 25).astype(np.int64))
        before = C.decode_coords(s)[0]
        for m in range(18):
            after = C.decode_coords(s[TABLE[m]])[0]
            for k in range(4):
                assert mts[k][before[k], m] == after[k]


def test_axis_views_turn_moves_into_moves():
    rng = np.random.default_rng(2)
    s = apply_moves(SOLVED, TABLE, rng.integers(0, 18, 25).astype(np.int64))
    for a in range(3):
        for m in range(18):
            lhs = C.conj_states(s[TABLE[m]], C.AXIS_ROT[a])
            rhs = C.conj_states(s, C.AXIS_ROT[a])[TABLE[C.AXIS_MOVE[a, m]]]
            assert np.array_equal(lhs, rhs)


# ---------------------------------------------------------------------------
# Solver
# ---------------------------------------------------------------------------

@NEEDS_TABLES
@pytest.mark.parametrize("metric,moves", [("half", HALF), ("quarter", QUARTER)])
def test_agrees_with_breadth_first_search_to_depth_5(metric, moves):
    layers = bfs_layers(moves, 5)
    rng = np.random.default_rng(5)
    for d, layer in enumerate(layers):
        picks = rng.choice(len(layer), size=min(len(layer), 12), replace=False)
        for i in picks:
            sol = solve_optimal(layer[i], metric)
            assert sol.distance == d
            check_solution(layer[i], sol)
            assert lower_bound(layer[i], metric) <= d


@NEEDS_TABLES
@pytest.mark.parametrize("metric,moves", [("half", HALF), ("quarter", QUARTER)])
def test_batch_lower_bound_is_admissible_and_matches_single(metric, moves):
    layers = bfs_layers(moves, 4)
    batch = np.stack([s for d, layer in enumerate(layers) for s in layer[:50]])
    dist = np.array([d for d, layer in enumerate(layers) for _ in layer[:50]])
    lb = lower_bound_batch(batch, metric)
    assert (lb <= dist).all()
    assert (lb[dist == 0] == 0).all()
    for s, b in zip(batch[::17], lb[::17]):
        assert lower_bound(s, metric) == b


@pytest.mark.parametrize("text,half,quarter", [
    ("", 0, 0),
    ("R", 1, 1),
    ("R2", 1, 2),
    ("R U", 2, 2),
    ("R L", 2, 2),
    ("R2 L2 U2 D2 F2 B2", 6, 12),  # checkerboard ("pons asinorum"): 6 HTM, 12 QTM
    ("R U R' U'", 4, 4),  # sexy move
    ("U D' R L' F B' U D'", 8, 8),  # spot pattern ("6 spots" variant from axis turns)
])
@NEEDS_TABLES
def test_hand_checked_positions(text, half, quarter):
    s = scrambled(text) if text else SOLVED.copy()
    for metric, want in (("half", half), ("quarter", quarter)):
        sol = solve_optimal(s, metric)
        assert sol.distance == want, (text, metric, sol)
        check_solution(s, sol)


@NEEDS_TABLES
def test_accepts_strings_and_rotated_cubes():
    s = scrambled("R U2 F' L D B2 U'")
    d = optimal_distance(to_facelets(s))
    assert d == optimal_distance(s) == 7
    for r in (1, 5, 13, 23):
        held = s[ORIENTATIONS[r]]  # the same cube held another way up
        sol = solve_optimal(held)
        assert sol.distance == d
        check_solution(held, sol)  # the moves act on the held cube's faces
        assert lower_bound_batch(held[None, :])[0] == lower_bound(held) == lower_bound(s)
        sol = solve_optimal(to_facelets(held), "quarter")
        check_solution(held, sol)


def test_rejects_invalid_input():
    s = list("UUUUUUUUURRRRRRRRRFFFFFFFFFDDDDDDDDDLLLLLLLLLBBBBBBBBB")
    s[8], s[9] = s[9], s[8]  # twist a corner by swapping two of its stickers
    with pytest.raises(InvalidStateError):
        solve_optimal("".join(s))
    with pytest.raises(InvalidStateError):
        solve_optimal("UUU")
    bad = SOLVED.copy()
    bad[[1, 3]] = bad[[3, 1]]
    with pytest.raises(InvalidStateError):
        solve_optimal(bad)
    with pytest.raises(InvalidStateError):
        lower_bound(np.zeros(54, dtype=np.uint8))
    with pytest.raises(ValueError):
        solve_optimal(SOLVED, "slice")


def test_rejects_a_known_solution_that_does_not_solve():
    with pytest.raises(ValueError, match="does not solve"):
        solve_optimal(scrambled("R U"), known="U' R")
    with pytest.raises(ValueError, match="face turns only"):
        solve_optimal(scrambled("R U"), known="U' R' x")


@NEEDS_TABLES
@pytest.mark.parametrize("metric", ["half", "quarter"])
def test_a_known_solution_only_spares_the_last_iteration(metric):
    rng = np.random.default_rng(7)
    for _ in range(6):
        moves = [str(m) for m in rng.choice(["U", "R2", "F'", "D", "L2", "B'", "R", "F2"], size=9)]
        state = scrambled(" ".join(moves))
        plain = solve_optimal(state, metric)
        inverse = " ".join(m[0] if m.endswith("'") else (m if m.endswith("2") else m + "'") for m in reversed(moves))
        padded = solve_optimal(state, metric, known=inverse + " U U'")  # longer than optimal: search finds better
        assert padded.distance == plain.distance
        check_solution(state, padded)
        optimal = solve_optimal(state, metric, known=" ".join(plain.moves))
        assert optimal.moves == plain.moves and optimal.nodes <= plain.nodes


@NEEDS_TABLES
def test_time_limit_raises_solver_timeout():
    s = scrambled(SUPERFLIP)
    with pytest.raises(SolverTimeout) as err:
        solve_optimal(s, time_limit=0.5)
    assert err.value.lower_bound >= lower_bound(s)


@NEEDS_TABLES
def test_random_depth_12_scrambles_are_within_scramble_length():
    rng = np.random.default_rng(12)
    for _ in range(3):
        s = apply_moves(SOLVED, TABLE, rng.integers(0, 18, 12).astype(np.int64))
        sol = solve_optimal(s)
        check_solution(s, sol)
        assert lower_bound(s) <= sol.distance <= 12


@pytest.mark.slow
@pytest.mark.skipif(not __import__("os").environ.get("CUBEBENCH_DEPTH20"),
                    reason="two complete depth-19 searches: ~90 min on 2 cores (set CUBEBENCH_DEPTH20=1 to run)")
def test_superflip_and_the_cube20_position_are_twenty():
    """Re-certify ``half-d20-n2.jsonl`` (line 0 is the superflip, tested below): every length
    below 20 ruled out, the published 20-move solutions sparing the depth-20 iterations."""
    from cubebench.curriculum import verify_instance_file

    result = verify_instance_file(INSTANCES / "half-d20-n2.jsonl")
    assert result.ok and result.checked == 2, result.failures


@pytest.mark.slow
@pytest.mark.parametrize("metric", ["half", "quarter"])
def test_depth_16_positions(metric):
    """CI's stand-in for the superflip: 16-move scrambles that need all 16 moves.

    The scramble bounds the distance from above; the solver must prove no
    15-move (or, in the quarter-turn metric, 14-move) solution exists.
    """
    from cubebench.curriculum import load_instance_file

    for inst in load_instance_file(INSTANCES / f"{metric}-d16-n20.jsonl")[:2]:
        s = scrambled(inst.scramble)
        assert len(inst.scramble.split()) == 16
        sol = solve_optimal(s, metric)
        assert sol.distance == 16
        check_solution(s, sol)
        assert lower_bound(s, metric) <= 16


# ---------------------------------------------------------------------------
# Table cache
# ---------------------------------------------------------------------------

def test_corrupt_or_partial_table_is_rebuilt(tmp_path, monkeypatch):
    """Exercised on the small corner-permutation table: same code path as the big ones."""
    monkeypatch.setenv(table_cache.ENV_VAR, str(tmp_path))
    T.forget()
    try:
        good = np.array(T.corner_perm_table("half"))
        data, meta = table_cache.paths("cornerperm-dist-half")
        assert data.exists() and json.loads(meta.read_text())["checksum"] == table_cache.checksum(good)
        assert good[0] == 0 and good.max() > 5

        # flip one byte in the data: the checksum catches it and the table is rebuilt
        raw = bytearray(data.read_bytes())
        raw[-7] ^= 0x01
        data.write_bytes(bytes(raw))
        T.forget()
        assert table_cache.load("cornerperm-dist-half", np.uint8, good.shape) is None
        assert np.array_equal(T.corner_perm_table("half"), good)
        assert data.read_bytes() != bytes(raw)

        # truncate the file (a partial write): detected and rebuilt
        data.write_bytes(data.read_bytes()[:1000])
        T.forget()
        assert table_cache.load("cornerperm-dist-half", np.uint8, good.shape) is None
        assert np.array_equal(T.corner_perm_table("half"), good)

        # a missing sidecar means the data is never trusted
        meta.unlink()
        T.forget()
        assert table_cache.load("cornerperm-dist-half", np.uint8, good.shape) is None
        assert np.array_equal(T.corner_perm_table("half"), good)
        assert not list(tmp_path.rglob("*.tmp"))
    finally:
        T.forget()


# ---------------------------------------------------------------------------
# Certified curriculum and shipped instance files
# ---------------------------------------------------------------------------

@NEEDS_TABLES
@pytest.mark.parametrize("metric", ["half", "quarter"])
def test_certified_instances_have_exact_distance(metric):
    from cubebench.curriculum import certified_instances

    a = certified_instances(6, metric, seed=3, n=5)
    assert a == certified_instances(6, metric, seed=3, n=5)  # deterministic in the seed
    assert len(a) == 5 and len({i.state for i in a}) == 5
    for inst in a:
        s = from_facelets(inst.state)
        assert np.array_equal(scrambled(inst.scramble), s)
        assert inst.distance == 6 == solve_optimal(s, metric).distance


@NEEDS_TABLES
def test_distance_20_candidates_are_distinct_up_to_rotation():
    from cubebench.curriculum import DISTANCE_20_SEEDS, _rotation_class_key, distance_20_candidates

    cands = distance_20_candidates()
    keys = {_rotation_class_key(s) for _, s in cands}
    assert len(keys) == len(cands) >= len(DISTANCE_20_SEEDS)
    flip = from_facelets(DISTANCE_20_SEEDS["superflip"])
    assert np.array_equal(flip, scrambled(SUPERFLIP))
    assert lower_bound(flip) <= 20


def test_published_distance_20_solutions_solve_their_seeds_in_20_moves():
    from cubebench.curriculum import DISTANCE_20_SEEDS, DISTANCE_20_SOLUTIONS

    assert DISTANCE_20_SOLUTIONS.keys() == DISTANCE_20_SEEDS.keys()
    for name, solution in DISTANCE_20_SOLUTIONS.items():
        moves = parse_array(solution)
        assert len(moves) == 20 and all(m < 18 for m in moves), name
        assert is_solved(apply_moves(from_facelets(DISTANCE_20_SEEDS[name]), TABLE, moves)), name


def _shipped(max_depth: int) -> list:
    return sorted(p for p in INSTANCES.glob("*-n20.jsonl") if int(p.stem.split("-d")[1][:2]) <= max_depth)


@NEEDS_TABLES
@pytest.mark.parametrize("path", _shipped(12), ids=lambda p: p.name)
def test_shipped_instance_files_reverify(path):
    from cubebench.curriculum import load_instance_file, verify_instance_file

    result = verify_instance_file(path)
    assert result.ok, result.failures
    insts = load_instance_file(path)
    assert result.checked == len(insts) > 0
    depth = int(path.stem.split("-d")[1][:2])
    assert all(i.distance == depth and i.metric == path.stem.split("-")[0] for i in insts)


def _largest_sets() -> list:
    """The largest file of each (metric, depth): the smaller sets are its prefixes (tested below).

    Half-turn depth 20 is left to a gated test: re-certifying its two positions takes about 90
    minutes on two cores.
    """
    largest = {}
    for p in sorted(INSTANCES.glob("*.jsonl"), key=lambda p: int(p.stem.split("-n")[1])):
        largest[p.stem.split("-n")[0]] = p
    return sorted(p for key, p in largest.items() if key != "half-d20")


def test_shipped_half_turn_depth_20_set_is_the_two_known_positions():
    from cubebench.curriculum import DISTANCE_20_SEEDS, DISTANCE_20_SOLUTIONS, load_instance_file

    insts = load_instance_file(INSTANCES / "half-d20-n2.jsonl")
    assert [i.state for i in insts] == [DISTANCE_20_SEEDS["superflip"], DISTANCE_20_SEEDS["cube20-hard"]]
    assert insts[0].state == to_facelets(scrambled(SUPERFLIP))
    for inst, name in zip(insts, ("superflip", "cube20-hard")):
        assert to_facelets(scrambled(inst.scramble)) == inst.state
        assert is_solved(apply_moves(scrambled(inst.scramble), TABLE, parse_array(DISTANCE_20_SOLUTIONS[name])))
        assert (inst.distance, inst.metric) == (20, "half")


def test_smaller_instance_sets_are_prefixes_of_larger_ones():
    for small in INSTANCES.glob("*-n20.jsonl"):
        large = small.with_name(small.name.replace("-n20", "-n100"))
        if large.exists():
            assert large.read_text().splitlines()[:20] == small.read_text().splitlines(), small.name


MANIFEST = INSTANCES / "SHA256SUMS"
"""The sha256 of every shipped instance file as last re-verified by the exact solver (``sha256sum`` format)."""


def _manifest() -> dict[str, str]:
    return {name: digest for digest, name in (line.split() for line in MANIFEST.read_text().splitlines())}


def _sha256(path) -> str:
    return __import__("hashlib").sha256(path.read_bytes()).hexdigest()


def test_every_shipped_instance_file_is_the_one_last_reverified():
    """Re-verifying the certified labels needs the solver's 1.7 GB of tables, so it is a slow test, not CI's:
    this manifest check is what stops an edited or added instance file from landing unverified."""
    shipped = {p.name: _sha256(p) for p in INSTANCES.glob("*.jsonl")}
    changed = sorted(name for name, digest in shipped.items() if _manifest().get(name) != digest)
    assert not changed, (f"{changed} changed since their labels were last re-verified: run "
                         "`python -m pytest -m slow tests/engine/test_optimal_solver.py` and, when it passes, "
                         "`(cd benchmarks/instances && sha256sum *.jsonl > SHA256SUMS)`")
    assert set(_manifest()) == set(shipped), "SHA256SUMS names a file that is not shipped"


@pytest.mark.slow
@pytest.mark.parametrize("path", _largest_sets(), ids=lambda p: p.name)
def test_largest_instance_files_reverify(path):
    from cubebench.curriculum import verify_instance_file

    result = verify_instance_file(path)
    assert result.ok, result.failures
    assert _manifest()[path.name] == _sha256(path), "re-verified, but not the content SHA256SUMS vouches for"


@NEEDS_TABLES
def test_tampered_instance_file_fails_verification(tmp_path):
    from cubebench.curriculum import certified_instances, verify_instance_file, write_instance_file

    insts = certified_instances(4, "half", n=3)
    bad = [insts[0], insts[1].__class__(**{**insts[1].__dict__, "distance": 3}),
           insts[2].__class__(**{**insts[2].__dict__, "scramble": "R"})]
    path = tmp_path / "bad.jsonl"
    write_instance_file(path, bad)
    result = verify_instance_file(path)
    assert result.checked == 3 and len(result.failures) == 2
    assert "recorded distance 3" in result.failures[0] and "scramble" in result.failures[1]
