"""The cubebench command line: engine commands and instance verification."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from cubebench import __version__
from cubebench.runner.cli import main
from cubebench.engine import SOLVED_FACELETS, from_facelets, kernels, to_facelets
from cubebench.engine.notation import parse_array
from cubebench.engine.moves import TABLE


def test_version_via_console_script() -> None:
    out = subprocess.run([sys.executable, "-m", "cubebench.runner", "--version"], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == f"cubebench {__version__}"


def test_scramble_is_seeded_and_consistent(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["scramble", "--depth", "12", "--seed", "5"]) == 0
    moves, facelets = capsys.readouterr().out.split("\n")[:2]
    assert len(moves.split()) == 12
    assert to_facelets(kernels.apply_moves(from_facelets(SOLVED_FACELETS), TABLE, parse_array(moves))) == facelets
    main(["scramble", "--depth", "12", "--seed", "5"])
    assert capsys.readouterr().out.startswith(moves)


def test_show_and_solve(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", "R U R' U'", "--no-colour"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].strip() == "U U L"
    assert main(["solve", "R U R' U' F2"]) == 0
    solution = capsys.readouterr().out.strip()
    state = kernels.apply_moves(from_facelets(SOLVED_FACELETS), TABLE, parse_array("R U R' U' F2"))
    assert kernels.is_solved(kernels.apply_moves(state, TABLE, parse_array(solution)))


def test_bad_input_exits_2_with_the_engine_message(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", "R Q"]) == 2
    assert "unknown move 'Q' at position 2" in capsys.readouterr().err
    assert main(["solve", "U" * 54]) == 2
    assert "each of the six letters must appear 9 times" in capsys.readouterr().err


@pytest.mark.slow
def test_instances_verify_flags_a_wrong_distance(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shipped = Path(__file__).resolve().parents[2] / "benchmarks" / "instances" / "half-d04-n20.jsonl"
    assert main(["instances", "verify", str(shipped)]) == 0
    lines = shipped.read_text().splitlines()
    lines[2] = lines[2].replace('"distance": 4', '"distance": 5')
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines) + "\n")
    assert main(["instances", "verify", str(bad)]) == 1
    assert "instance 2 (line 3): recorded distance 5, solver finds 4" in capsys.readouterr().out
