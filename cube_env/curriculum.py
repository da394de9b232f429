"""Certified curriculum: cube states whose optimal distance is exactly ``d``.

CubeBench measures difficulty by the *optimal* solution length ``d`` in a
named metric (half-turn: any face turn counts one; quarter-turn: a half turn
counts two).  A scramble of ``d`` moves can be shorter to undo, so every
candidate here is certified by the exact optimal solver
(:mod:`cubebench.solver.optimal`) and rejected unless its distance is exactly
``d``.  Generation is deterministic in ``(seed, depth, metric)``; each
instance records the scramble, the 54-letter state, the certified distance,
the metric and the solver version, so a file can be re-certified later with
:func:`verify_instance_file` (``cubebench instances verify FILE``).

Random scrambles essentially never reach half-turn distance 19-20, so that
bucket comes from known distance-20 positions (:data:`DISTANCE_20_SEEDS`)
and their images under the 48 cube symmetries and inversion, deduplicated,
each still certified by the solver before it is used.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Iterator

import numba
import numpy as np

from .engine.errors import CubeInputError
from .engine.facelets import SOLVED, sticker_geometry
from .engine.kernels import apply_moves
from .engine.metric import Metric, check_metric
from .engine.moves import ORIENTATIONS, TABLE
from .engine.notation import format_moves, invert_moves, invert_sequence, parse_array
from .engine.state import canonical, from_facelets, to_facelets
from .solver.optimal import SOLVER_VERSION, SolverTimeout, solve_optimal
from .solver.oracle import oracle

_MOVES: dict[Metric, tuple[int, ...]] = {
    "half": tuple(range(18)),
    "quarter": tuple(m for m in range(18) if m % 3 != 1),
}

SUPERFLIP = "U R2 F B R B2 R U2 L B2 R U' D' R2 F R' L B2 U2 F2"
DISTANCE_20_SOLUTIONS: dict[str, str] = {
    "superflip": invert_sequence(SUPERFLIP),
    # The optimal solution that RubikOptimal's README quotes for the cube20.org position below.
    "cube20-hard": "U R' L' F2 U B' R2 D R2 U F2 U F L' F2 B D' R' U2 F",
}
"""Published 20-move solutions of the known distance-20 positions.  Only a
solution in hand: certifying a position still means ruling out every shorter
length (``solve_optimal(..., known=...)``), which is the whole cost."""
DISTANCE_20_SEEDS: dict[str, str] = {
    "superflip": to_facelets(apply_moves(SOLVED, TABLE, parse_array(SUPERFLIP))),
    # One of the distance-20 positions listed on cube20.org (as quoted in RubikOptimal's README).
    "cube20-hard": "RBFLURBFLBUUFRBBDDRUURFLRDDBFLLDRRBFFUUBLFFDDLUULBRLDD",
}
"""Known half-turn distance-20 positions (54-letter URFDLB strings)."""


ORACLE_VERSION = "distance-oracle"
"""The ``solver_version`` of an instance certified by the table-free distance oracle (``table_free``)."""


@dataclass(frozen=True)
class Instance:
    """One certified curriculum instance."""

    index: int
    seed: int
    scramble: str
    state: str
    distance: int
    metric: Metric
    solver_version: str
    source: str = "scramble"

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)


def random_scramble(rng: np.random.Generator, length: int, metric: Metric) -> list[int]:
    """``length`` moves of ``metric`` with no move undoing or merging with the previous one.

    Consecutive moves never share a face, and two moves on opposite faces are
    not followed by a third on the same axis (``U D U`` is ``U2 D``).
    """
    moves: list[int] = []
    allowed = _MOVES[check_metric(metric)]
    while len(moves) < length:
        m = int(rng.choice(allowed))
        if may_follow(moves, m):
            moves.append(m)
    return moves


def scramble_moves(metric: Metric) -> tuple[int, ...]:
    """The moves (``TABLE`` rows) a scramble of ``metric`` draws from."""
    return _MOVES[check_metric(metric)]


def may_follow(moves: list[int], m: int) -> bool:
    """Whether :func:`random_scramble` lets move ``m`` follow ``moves``: not on the last move's face, and
    not a third in a row on one axis.  It draws uniformly among the moves that may follow."""
    if moves and m // 3 == moves[-1] // 3:
        return False
    return not (len(moves) >= 2 and m // 3 % 3 == moves[-1] // 3 % 3 == moves[-2] // 3 % 3)


def _state_key(state: np.ndarray) -> bytes:
    """Identity of a state with the held orientation removed (re-holding is no new instance)."""
    return canonical(state).tobytes()


def _rotation_class_key(state: np.ndarray) -> bytes:
    """Identity up to whole-cube rotation *and* renaming colours by the centres.

    A cube held another way and read with its centres as reference
    (``relabel_to_centres``) is the rotation-conjugate ``R^-1 X R``; the
    smallest conjugate names the class.
    """
    ref = canonical(state)
    return min(_conj(ref, np.asarray(r)).tobytes() for r in ORIENTATIONS)


def _conj(state: np.ndarray, perm: np.ndarray) -> np.ndarray:
    pinv = np.empty(54, dtype=np.uint8)
    pinv[perm] = np.arange(54, dtype=np.uint8)
    return pinv[state[perm]]


def certified_instances(depth: int, metric: str = "half", seed: int = 0, n: int = 20, *,
                        time_limit: float | None = None, max_tries: int | None = None,
                        table_free: bool = False) -> list[Instance]:
    """``n`` distinct positions whose optimal ``metric`` distance is exactly ``depth``.

    Candidate ``k`` is the ``depth``-move scramble drawn from
    ``np.random.default_rng([seed, depth, k])``; it is kept when the solver
    certifies distance ``depth`` (given the inverse scramble as a known
    solution, it only has to rule out every shorter length) and it is not
    the state of an earlier instance (so depth 1 has only 18 half-turn / 12
    quarter-turn states).  Half-turn depths 19 and 20 use
    :func:`distance_20_instances` instead (random scrambles do not reach them).  ``time_limit`` bounds each
    solve (a candidate that times out is skipped); ``max_tries`` bounds the
    candidates drawn (default ``50 * n``).

    ``table_free``: certify with the table-free distance oracle (:mod:`cubebench.solver.oracle`, about a second to
    build) where the depth is within its reach (9 half turns, 10 quarter turns), and with the solver only deeper.
    Both are exact, so the instances are the same; their ``solver_version`` names the oracle.
    """
    metric = check_metric(metric)
    if depth < 0:
        raise ValueError("depth must be >= 0")
    if metric == "half" and depth >= 19:
        return distance_20_instances(n, time_limit=time_limit) if depth == 20 else []
    out: list[Instance] = []
    seen: set[bytes] = set()
    tries = max_tries if max_tries is not None else 50 * n
    certifier = oracle(metric) if table_free and depth <= oracle(metric).reach else None
    for k in range(tries):
        if len(out) == n:
            break
        rng = np.random.default_rng([seed, depth, k])
        moves = random_scramble(rng, depth, metric)
        state = apply_moves(SOLVED, TABLE, np.asarray(moves, dtype=np.int64))
        key = _state_key(state)
        if key in seen:
            continue
        if certifier is not None:
            distance = certifier.distance(state)
        else:
            try:
                distance = solve_optimal(state, metric, time_limit=time_limit,
                                         known=format_moves(invert_moves(moves))).distance
            except SolverTimeout:
                continue
        if distance != depth:
            continue
        seen.add(key)
        out.append(Instance(index=len(out), seed=k, scramble=format_moves(moves),
                            state=to_facelets(state), distance=depth, metric=metric,
                            solver_version=ORACLE_VERSION if certifier is not None else SOLVER_VERSION))
    return out


def _symmetries48() -> np.ndarray:
    """Sticker gather tables of the 48 cube symmetries (24 rotations, each with and without mirror)."""
    pos, nrm = sticker_geometry()
    key = {(tuple(p), tuple(q)): i for i, (p, q) in enumerate(zip(pos.tolist(), nrm.tolist()))}
    flip = np.array([-1, 1, 1])
    target = np.array([key[(tuple(p * flip), tuple(q * flip))] for p, q in zip(pos, nrm)])
    mirror = np.empty(54, dtype=np.uint8)
    mirror[target] = np.arange(54, dtype=np.uint8)
    rots = [np.asarray(r, dtype=np.uint8) for r in ORIENTATIONS]
    return np.stack(rots + [r[mirror] for r in rots])


def symmetry_images(state: np.ndarray) -> Iterator[np.ndarray]:
    """The images of ``state`` under the 48 symmetries and inversion (with repeats)."""
    inverse = np.empty(54, dtype=np.uint8)
    inverse[state] = np.arange(54, dtype=np.uint8)
    for s in (state, inverse):
        for p in _symmetries48():
            yield _conj(s, p)


def distance_20_candidates() -> list[tuple[str, np.ndarray]]:
    """Symmetry/inverse images of the known distance-20 positions, distinct up to rotation.

    Only mirror images and inverses can be new: a rotation-conjugate is the
    same cube held another way.
    """
    out, seen = [], set()
    for name, text in DISTANCE_20_SEEDS.items():
        for img in symmetry_images(from_facelets(text)):
            key = _rotation_class_key(img)
            if key not in seen:
                seen.add(key)
                out.append((name, img))
    return out


def distance_20_instances(n: int = 20, *, time_limit: float | None = None) -> list[Instance]:
    """Up to ``n`` certified half-turn distance-20 instances from :func:`distance_20_candidates`.

    Each certification is a complete depth-19 search (about an hour per
    position on two cores, see docs/solver.md); a seed itself is searched
    with its published solution (:data:`DISTANCE_20_SOLUTIONS`) in hand, so
    the depth-20 iteration is skipped.  Candidates that exceed ``time_limit``
    are skipped, so fewer than ``n`` may come back.
    """
    out: list[Instance] = []
    for k, (name, state) in enumerate(distance_20_candidates()):
        if len(out) == n:
            break
        is_seed = to_facelets(state) == DISTANCE_20_SEEDS[name]
        try:
            sol = solve_optimal(state, "half", time_limit=time_limit,
                                known=DISTANCE_20_SOLUTIONS[name] if is_seed else None)
        except SolverTimeout:
            continue
        if sol.distance != 20:
            continue
        out.append(Instance(index=len(out), seed=k, scramble=invert_sequence(" ".join(sol.moves)),
                            state=to_facelets(state),
                            distance=20, metric="half", solver_version=SOLVER_VERSION,
                            source=f"{name} (certified: {sol.nodes:.3g} nodes, {sol.seconds:.0f} s on "
                                   f"{numba.get_num_threads()} threads)" if is_seed
                            else f"{name} symmetry/inverse image"))
    return out


def write_instance_file(path: str | Path, instances: list[Instance]) -> None:
    """Write instances as JSON lines (one instance per line)."""
    Path(path).write_text("".join(inst.to_json() + "\n" for inst in instances))


def load_instance_file(path: str | Path) -> list[Instance]:
    """Read a JSON-lines instance file written by :func:`write_instance_file`."""
    out = []
    for line_no, line in enumerate(Path(path).read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            out.append(Instance(**json.loads(line)))
        except (TypeError, ValueError) as exc:
            raise CubeInputError(f"{path}:{line_no}: not an instance record ({exc})") from exc
    return out


@dataclass(frozen=True)
class VerifyResult:
    """Outcome of re-certifying one instance file."""

    path: str
    checked: int
    failures: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.failures


def verify_instance_file(path: str | Path, *, time_limit: float | None = None) -> VerifyResult:
    """Re-certify every instance: the scramble yields the state and the solver confirms the distance.

    A failure message names the instance and what disagrees; nothing raises
    for a bad instance, so a CLI can report them all.
    """
    failures = []
    instances = load_instance_file(path)
    for inst in instances:
        where = f"instance {inst.index} (line {inst.index + 1})"
        try:
            state = from_facelets(inst.state)
            replay = apply_moves(SOLVED, TABLE, parse_array(inst.scramble))
            if _state_key(replay) != _state_key(state):
                failures.append(f"{where}: the scramble does not produce the recorded state")
                continue
            sol = solve_optimal(state, inst.metric, time_limit=time_limit,
                                known=invert_sequence(inst.scramble))
        except SolverTimeout as exc:
            failures.append(f"{where}: not re-certified within {time_limit} s (distance >= {exc.lower_bound})")
            continue
        except (CubeInputError, ValueError) as exc:
            failures.append(f"{where}: {exc}")
            continue
        if sol.distance != inst.distance:
            failures.append(f"{where}: recorded distance {inst.distance}, solver finds {sol.distance}")
    return VerifyResult(str(path), len(instances), tuple(failures))


def generate_instance_files(out_dir: str | Path, metric: str, depth: int, sizes: tuple[int, ...] = (20, 100), *,
                            seed: int = 0, time_limit: float | None = None) -> dict[int, Path]:
    """Write ``{metric}-d{depth:02d}-n{size}.jsonl`` for each size; smaller sets are prefixes of larger ones."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    instances = certified_instances(depth, metric, seed=seed, n=max(sizes), time_limit=time_limit)
    written = {}
    for size in sizes:
        path = out_dir / f"{metric}-d{depth:02d}-n{size}.jsonl"
        write_instance_file(path, instances[:size])
        written[size] = path
    return written
