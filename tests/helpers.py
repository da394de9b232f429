"""Helpers the tests import (``from helpers import needs, apply, ...``): engine shortcuts to build states
from notation, and skips for optional extras.  Fixtures stay in conftest.py, which no test imports."""

from __future__ import annotations

import importlib.util
import json
import sqlite3
import zlib
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest

from cubebench.engine import SOLVED, TABLE, kernels
from cubebench.extras import install_hint
from cubebench.engine.notation import parse_array
from cubebench.generators import ScrambleGenerator

SCRAMBLES = ScrambleGenerator()
"""Uncertified seeded scrambles: for tests that need a scrambled cube but not a certified
distance, so the default suite never builds the optimal solver's tables."""


def apply(seq: str, state: np.ndarray = SOLVED) -> np.ndarray:
    """State after ``seq`` (notation) from ``state``."""
    return kernels.apply_moves(state, TABLE, parse_array(seq))


# --------------------------------------------------------------------------- optional extras

EXTRA_OF = {
    "openai": "llm", "anthropic": "llm", "httpx": "llm",
    "torch": "rl", "stable_baselines3": "rl",
    "matplotlib": "report",
    "pyrender": "render3d", "trimesh": "render3d",
    "pettingzoo": "multi", "ray": "ray", "inspect_ai": "inspect",
    "pyarrow": "export", "datasets": "export",
    "verifiers": "verifiers", "transformers": "hf", "tokenizers": "hf", "peft": "hf", "gguf": "hf",
    "accelerate": "hf", "trl": "train",
}
"""The extra of pyproject.toml that installs each optional dependency a test may need."""


OWN_VENV_EXTRAS = {"verifiers": "~/venvs/cubebench-verifiers"}
"""Extras that never go into the dev venv (verifiers 0.4 pins ``openai<3``, Inspect's providers need ``openai>=3.4``),
each with the venv of its own (outside the checkout) its tests run in, as CI does (``.ci/run``)."""


def extra_reason(*modules: str) -> str:
    """Why a test is skipped without ``modules``: what is missing and which extra installs it, into the dev venv,
    or, for an extra of :data:`OWN_VENV_EXTRAS`, into a venv of its own."""
    extras = sorted({EXTRA_OF[m.split(".")[0]] for m in modules})
    which = " and ".join(f"the {e} extra" for e in extras)
    apart = [e for e in extras if e in OWN_VENV_EXTRAS]
    if apart:
        venv = OWN_VENV_EXTRAS[apart[0]]
        return (f"needs {', '.join(modules)} ({which}), which does not share the dev venv: in a venv of its own, "
                f"python3.11 -m venv {venv} && {venv}/bin/pip install -e \".[{','.join([*extras, 'test'])}]\", then "
                f"run these tests with {venv}/bin/python -m pytest")
    return f"needs {', '.join(modules)} ({which}): {install_hint(*extras)}"


def missing(*modules: str) -> list[str]:
    """The top-level modules among ``modules`` that are not installed (nothing is imported)."""
    return [m for m in modules if importlib.util.find_spec(m) is None]


def needs(*modules: str) -> pytest.MarkDecorator:
    """Skip marker for a test (or, as ``pytestmark``, a module) that needs optional dependencies;
    where they are installed the test runs unchanged. A module that must import one at its top uses
    ``pytest.importorskip(name, reason=extra_reason(name))`` instead."""
    gone = missing(*modules)
    return pytest.mark.skipif(bool(gone), reason=extra_reason(*gone) if gone else "")


HANGING_DRIVER = """
import os, sys, time
from pathlib import Path
from cubebench.agents import scripted
from cubebench.runner import store

stored = 0
add_episode, act = store.RunStore.add_episode, scripted.RandomAgent.act

def counting_add_episode(self, spec, record):
    global stored
    add_episode(self, spec, record)
    stored += 1

def act_or_wait(self, observation, tools):
    if stored == int(os.environ["HANG_AFTER"]):  # inside the next episode: touch MARK, wait for RELEASE (or a signal)
        Path(os.environ["MARK"]).touch()
        release = os.environ.get("RELEASE")
        while not (release and Path(release).exists()):
            time.sleep(0.05)
    return act(self, observation, tools)

store.RunStore.add_episode = counting_add_episode
scripted.RandomAgent.act = act_or_wait
from cubebench.runner.cli import main
sys.exit(main(sys.argv[1:]))
"""
"""A ``cubebench`` command line (``python driver.py run ...``) whose random agent stops inside the episode after
``$HANG_AFTER`` stored ones: it touches ``$MARK`` and waits there until ``$RELEASE`` exists (without
``RELEASE``, until the test signals or kills it)."""


def one_line_error(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """Run ``cubebench ARGV``; assert exit 2, one stderr line naming an error, no traceback, nothing on stdout; the
    line."""
    from cubebench.runner.cli import main

    try:
        code = main(list(argv))
    except SystemExit as end:
        code = end.code
    out, err = capsys.readouterr()
    assert code == 2, (argv, code, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1, f"{argv}: {err}"
    assert "Traceback" not in err and "error" in lines[0]
    assert out == "", f"{argv} printed before failing: {out[:200]}"
    return lines[0]


def comparable_records(db: Path) -> dict[str, dict[str, Any]]:
    """Every record of a run as a dict, its wall-clock times left out (the one thing a backend or a resume may
    change)."""
    from cubebench.runner.store import open_run

    with open_run(db) as store:
        out = {}
        for key, record in store.records():
            data = record.to_dict()
            data.pop("wall_s")
            for step in data["steps"]:
                step.pop("latency_s")
            out[key] = data
        return out


def run_sql(db: Path, *statements: tuple) -> None:
    """Run ``(sql, params)`` statements on a run's file and commit: how the damage and version tests change a run."""
    con = sqlite3.connect(db)
    try:
        for statement in statements:
            con.execute(*statement)
        con.commit()
    finally:
        con.close()


def edit_record(db: Path, key: str, change: Callable[[dict[str, Any]], None], status: str | None = None) -> None:
    """Change the stored record of ``key`` (its JSON, in place by ``change``), and its summary ``status`` if given."""
    con = sqlite3.connect(db)
    try:
        blob = con.execute("SELECT record FROM episodes WHERE key = ?", (key,)).fetchone()[0]
    finally:
        con.close()
    data = json.loads(zlib.decompress(blob))
    change(data)
    statements = [("UPDATE episodes SET record = ? WHERE key = ?", (zlib.compress(json.dumps(data).encode()), key))]
    if status is not None:
        statements.append(("UPDATE episodes SET status = ? WHERE key = ?", (status, key)))
    run_sql(db, *statements)


# --------------------------------------------------------------------------- the 48 symmetries, built from scrambles
# (independent of cubebench.engine.symmetry, which moves stickers by geometry: these relabel a scramble's moves)

TURN_BACK = {"": "'", "'": "", "2": "2"}
"""A turn's direction reversed: its inverse, and how it looks in a mirror."""


def inverse(moves: list[str]) -> str:
    """The scramble a solution undoes: its moves reversed, each turned back."""
    return " ".join(m[0] + TURN_BACK[m[1:]] for m in reversed(moves))


def descent(facelets: str, metric: str) -> list[str]:
    """An optimal solution of a position near solved, by exact descent (the oracle's first optimal move each step)."""
    from cubebench.engine.moves import MOVE_INDEX
    from cubebench.engine.state import from_facelets
    from cubebench.solver.oracle import oracle

    state, moves = from_facelets(facelets), []
    for _ in range(oracle(metric).distance(state)):
        move = oracle(metric).progress_moves(state)[0]
        moves.append(move)
        state = kernels.apply_moves(state, TABLE, np.array([MOVE_INDEX[move]], dtype=np.int64))
    return moves


def face_maps() -> list[dict[str, str]]:
    """The 24 ways of holding the cube, as face relabellings read off the engine's whole-cube rotations."""
    from cubebench.engine.facelets import CENTRES, FACES

    maps: dict[tuple, dict[str, str]] = {}
    for first in ("", "x", "x2", "x'", "z", "z'"):
        for then in ("", "y", "y2", "y'"):
            turned = apply(f"{first} {then}".strip()) if (first or then) else SOLVED
            seen = {FACES[int(turned[c]) // 9]: FACES[k] for k, c in enumerate(CENTRES)}
            maps[tuple(sorted(seen.items()))] = seen
    assert len(maps) == 24
    return list(maps.values())


def images(scramble: str) -> set[str]:
    """The 48 positions the same problem as ``scramble``'s: its moves relabelled for each holding, and mirrored
    (R and L swap, every turn reverses), played from solved."""
    from cubebench.engine.state import to_facelets

    out = set()
    for fmap in face_maps():
        for mirror in (False, True):
            seq = []
            for move in scramble.split():
                face, suffix = move[0], move[1:]
                if mirror:
                    face, suffix = {"R": "L", "L": "R"}.get(face, face), TURN_BACK[suffix]
                seq.append(fmap[face] + suffix)
            out.add(to_facelets(apply(" ".join(seq))) if seq else to_facelets(SOLVED))
    return out


_EVALUATED: set[str] = set()


def evaluated_images() -> set[str]:
    """Every evaluated position (shipped starts by their scrambles, question items by an optimal solution) in all
    48 spellings, built with :func:`images` (cached for the session)."""
    from cubebench.runner import evaluation_positions
    from cubebench.shipped import instances_dir

    if not _EVALUATED:
        scrambles = {}
        for path in sorted(instances_dir().glob("*.jsonl")):
            for line in path.read_text().splitlines():
                row = json.loads(line)
                scrambles[row["state"]] = row["scramble"]
        for _, state in evaluation_positions():
            _EVALUATED.update(images(scrambles.get(state) or inverse(descent(state, "half"))))
    return _EVALUATED
