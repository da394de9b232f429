"""The policy training program's edges, on a tiny random-weight model built here (no download): ``--help`` answers
before torch is imported, every phase prints a line, Ctrl-C and SIGTERM stop it (in the middle of a step too) with
one line that says how to resume, a damaged checkpoint or data file is named in one line (the checkpoint before it
is used where there is one, and the run then ends as an uninterrupted one does), a full disk says so, a rerun with
other arguments is one line, and a run folder that was moved resumes.  The tests that train (a few seconds each
on an idle machine, minutes on a loaded one) are marked slow."""

from __future__ import annotations

import errno
import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

import pytest

from helpers import needs

pytestmark = needs("transformers", "torch", "peft")

from cubebench.training.policy_data import DataRequest, make_data  # noqa: E402

PROG = [sys.executable, "-m", "cubebench.training.policy_sft"]
DATA = DataRequest(starts_per_depth=3, probe_per_depth=3)
"""What the program asks for with ``--starts-per-depth 3 --probe-per-depth 3``."""
ENV = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONUNBUFFERED": "1"}


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from cubebench.agents.llm.tiny_model import build_tiny_chat_model

    return build_tiny_chat_model(tmp_path_factory.mktemp("tiny") / "model", hidden_size=32, layers=2)


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("data") / "data"
    make_data(folder, DATA, log=lambda _: None)
    return folder


def argv(tiny: Path, out: Path, *extra: str) -> list[str]:
    return ["--base", str(tiny), "--out", str(out), "--starts-per-depth", "3", "--probe-per-depth", "3", "--lr", "1e-2",
            "--batch-size", "4", "--save-every", "5", "--eval-every", "0", "--threads", "1", "--steps", "15", *extra]


def sft(tiny: Path, data: Path | None, out: Path, *extra: str) -> int:
    from cubebench.training.policy_sft import main

    if data is not None and not (out / "data").exists():
        shutil.copytree(data, out / "data")
    return main(argv(tiny, out, *extra))


def losses(out: Path) -> list[float]:
    history = json.loads((out / "training.json").read_text())["history"]
    assert [h["step"] for h in history] == list(range(1, len(history) + 1))
    return [h["loss"] for h in history]


@pytest.fixture(scope="module")
def whole(tiny: Path, data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run of 15 steps, never stopped."""
    out = tmp_path_factory.mktemp("runs") / "whole"
    assert sft(tiny, data, out) == 0
    return out


def killed_run(tiny: Path, data: Path, out: Path) -> Path:
    """The same run killed at step 12 in ``out``: checkpoints at 10 (and at 5, before it) are left."""
    from cubebench.training import run_state

    real = run_state.RunState.log_step

    def killed(self: Any, **fields: Any) -> None:
        real(self, **fields)
        if self.step == 12:
            raise RuntimeError("killed")

    run_state.RunState.log_step = killed  # type: ignore[method-assign]
    try:
        with pytest.raises(RuntimeError, match="killed"):
            sft(tiny, data, out)
    finally:
        run_state.RunState.log_step = real  # type: ignore[method-assign]
    assert json.loads((out / "checkpoint" / "state.json").read_text())["step"] == 10
    return out


def test_help_answers_before_torch_or_transformers_is_imported() -> None:
    code = ("import runpy, sys\nsys.argv = ['policy_sft', '--help']\n"
            "try:\n    runpy.run_module('cubebench.training.policy_sft', run_name='__main__')\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in ('torch', 'transformers', 'peft') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=ENV, timeout=300)
    assert "--threads" in done.stdout and done.stdout.strip().splitlines()[-1] == "[]", done.stdout + done.stderr
    assert "On a busy machine" in " ".join(done.stdout.split())  # the --threads advice


def test_several_threads_on_a_busy_machine_get_the_measured_advice(monkeypatch: pytest.MonkeyPatch) -> None:
    from cubebench.training import models

    monkeypatch.setattr(models.os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    monkeypatch.setattr(models.os, "getloadavg", lambda: (9.5, 9.0, 8.0))
    hint = models.busy_machine_hint(2)
    assert hint is not None and "load average 9.5 on 2 cores" in hint and "--threads 1" in hint
    assert models.busy_machine_hint(1) is None
    monkeypatch.setattr(models.os, "getloadavg", lambda: (1.5, 1.0, 1.0))
    assert models.busy_machine_hint(2) is None


@pytest.mark.slow
def test_every_phase_prints_a_line(tiny: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    from cubebench.training import policy_data

    monkeypatch.setattr(policy_data, "DATA_PROGRESS_SECONDS", 0.0)
    assert sft(tiny, None, tmp_path / "run", "--steps", "3", "--save-every", "2") == 0
    out = capsys.readouterr().out.splitlines()
    for start in ("data: starts of depth 4: 1/3", "data: ", "policy_sft: loading model", "step 1/3:",
                  "checkpoint at step 2 in", "probe at step 3: measuring 21 positions", "policy_sft: adapter in"):
        assert any(line.startswith(start) for line in out), (start, out)
    assert [line.split(":")[0] for line in out if line.startswith("step ")] == ["step 1/3"]


DRIVER = """
import signal, sys, time
signal.signal(signal.SIGINT, signal.default_int_handler)  # a user at a terminal, whatever started this test
import cubebench.training.models as models
calls, slow_from = [0], [None]
real = models.load_trainable

def hook(grad):
    calls[0] += 1
    if slow_from[0] is not None and calls[0] == slow_from[0] + 1:
        print("SLOW STEP", flush=True)
    if slow_from[0] is not None and calls[0] > slow_from[0]:
        time.sleep(0.5)  # a long backward pass: each of its gradients takes half a second
    return grad

def load(*args, **kwargs):
    tokenizer, model = real(*args, **kwargs)
    params = [p for p in model.parameters() if p.requires_grad]
    slow_from[0] = 3 * len(params)  # steps 1-3 are quick, step 4's backward is slow
    for p in params:
        p.register_hook(hook)
    print("PARAMS", len(params), flush=True)
    return tokenizer, model

models.load_trainable = load
from cubebench.training.policy_sft import main
status = main(sys.argv[1:])
print("BACKWARD CALLS IN THE LAST STEP", calls[0] - slow_from[0], flush=True)
sys.exit(status)
"""


def start(args: list[str], *, driver: bool = False) -> subprocess.Popen[str]:
    """The program in its own session (so the signals sent are the only ones it gets)."""
    command = [sys.executable, "-c", DRIVER, *args] if driver else [*PROG, *args]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV,
                            start_new_session=True)


def wait_for(proc: subprocess.Popen[str], prefix: str) -> list[str]:
    seen = []
    assert proc.stdout is not None
    for line in proc.stdout:
        seen.append(line.rstrip("\n"))
        if line.startswith(prefix):
            return seen
    raise AssertionError(f"the program ended before printing {prefix!r}: {seen} {proc.stderr.read() if proc.stderr else ''}")


@pytest.mark.slow
@pytest.mark.ci
def test_ctrl_c_in_the_middle_of_a_long_step_stops_it_with_one_line_and_the_run_resumes_exactly(
        tiny: Path, data: Path, whole: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    (out).mkdir()
    shutil.copytree(data, out / "data")
    proc = start(argv(tiny, out), driver=True)
    seen = wait_for(proc, "SLOW STEP")
    proc.send_signal(signal.SIGINT)
    rest, stderr = proc.communicate(timeout=300)
    stdout = "\n".join(seen) + "\n" + rest
    assert proc.returncode == 130 and "Traceback" not in stderr, stderr
    err = [line for line in stderr.splitlines() if line.startswith("policy_sft")]
    assert len(err) == 1 and err[0].startswith("policy_sft: stopped by Ctrl-C (SIGINT) in step 4 of 15; "), err
    assert f"the checkpoint at step 3 is kept in {out / 'checkpoint'}" in err[0]
    assert err[0].endswith("resume with: python -m cubebench.training.policy_sft " + " ".join(argv(tiny, out)))
    params = int(stdout.split("PARAMS ")[1].split()[0])
    assert int(stdout.split("BACKWARD CALLS IN THE LAST STEP ")[1].split()[0]) < params  # cut, not finished
    assert json.loads((out / "checkpoint" / "state.json").read_text())["step"] == 3
    assert sft(tiny, None, out) == 0
    assert losses(out) == pytest.approx(losses(whole), rel=1e-4)


def test_sigterm_stops_it_with_one_line(tiny: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    proc = start(argv(tiny, out, "--steps", "100000"))
    wait_for(proc, "data: ")
    proc.send_signal(signal.SIGTERM)
    _, stderr = proc.communicate(timeout=300)
    err = [line for line in stderr.splitlines() if line.startswith("policy_sft")]
    assert proc.returncode == 143 and len(err) == 1 and "Traceback" not in stderr, stderr
    assert err[0].startswith("policy_sft: stopped by SIGTERM ") and " resume with: python -m " in err[0], err


def test_a_stop_signal_the_process_was_started_ignoring_stays_ignored() -> None:
    from cubebench.training.stopping import StopSignals

    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with StopSignals():
            assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
            assert signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL
        assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
    finally:
        signal.signal(signal.SIGINT, previous)


def cut(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def forget_file_records(folder: Path) -> None:
    """A checkpoint as an earlier version wrote it: no sizes and hashes in its state.json."""
    info = json.loads((folder / "state.json").read_text())
    info.pop("files")
    (folder / "state.json").write_text(json.dumps(info))


DAMAGE: dict[str, tuple[Callable[[Path], None], str]] = {
    "cut state.pt": (lambda out: cut(out / "checkpoint" / "state.pt"), "checkpoint/state.pt is cut short"),
    "cut state.json": (lambda out: cut(out / "checkpoint" / "state.json"), "checkpoint/state.json is damaged"),
    "cut adapter": (lambda out: cut(out / "checkpoint" / "adapter_model.safetensors"),
                    "checkpoint/adapter_model.safetensors is cut short"),
    "no state.pt": (lambda out: (out / "checkpoint" / "state.pt").unlink(), "checkpoint/state.pt is missing"),
    "cut state.pt, no record": (lambda out: (forget_file_records(out / "checkpoint"),
                                             cut(out / "checkpoint" / "state.pt")),
                                "checkpoint/state.pt is damaged or cut short"),
}


@pytest.mark.slow
@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_a_damaged_checkpoint_is_one_line_and_the_one_before_it_resumes(
        damage: str, tiny: Path, data: Path, whole: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = killed_run(tiny, data, tmp_path / "run")
    spoil, named = DAMAGE[damage]
    spoil(out)
    assert sft(tiny, None, out) == 0
    said = [line for line in capsys.readouterr().out.splitlines() if "resuming" in line]
    assert len(said) == 2 and named in said[0] and "resuming from the checkpoint before it (step 5)" in said[0], said
    assert said[1] == f"resuming {out} at step 5"
    assert losses(out) == pytest.approx(losses(whole), rel=1e-4)


@pytest.mark.slow
def test_a_damaged_checkpoint_with_none_before_it_is_refused_in_one_line(
        tiny: Path, data: Path, whole: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = killed_run(tiny, data, tmp_path / "run")
    shutil.rmtree(out / "checkpoint.old", ignore_errors=True)
    (out / "checkpoint" / "state.pt").unlink()  # never a fresh optimizer and schedule in silence
    assert sft(tiny, None, out) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "checkpoint/state.pt is missing, and no earlier whole checkpoint is left" in err[0], err
    assert not (out / "training.json").exists()


@pytest.mark.slow
def test_a_damaged_data_file_is_named_and_made_again(tiny: Path, data: Path, whole: Path, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    out = killed_run(tiny, data, tmp_path / "run")
    made = (out / "data" / "train.jsonl").read_bytes()
    cut(out / "data" / "train.jsonl")
    assert sft(tiny, None, out) == 0
    said = [line for line in capsys.readouterr().out.splitlines() if "making the data again" in line]
    assert len(said) == 1 and "data/train.jsonl is cut short" in said[0], said
    assert (out / "data" / "train.jsonl").read_bytes() == made
    assert losses(out) == pytest.approx(losses(whole), rel=1e-4)


@pytest.mark.slow
def test_a_full_disk_at_a_checkpoint_says_so_in_one_line_and_the_run_resumes(
        tiny: Path, data: Path, whole: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    import torch

    out = tmp_path / "run"
    real, saves = torch.save, []

    def full(obj: Any, path: Any, *args: Any, **kwargs: Any) -> None:
        saves.append(path)
        if len(saves) == 1:  # the checkpoint at step 5 is written; the one at step 10 finds the disk full
            return real(obj, path, *args, **kwargs)
        with open(path, "wb") as f:
            f.write(b"PK\x03\x04 partial")
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))

    monkeypatch.setattr(torch, "save", full)
    assert sft(tiny, data, out) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("policy_sft: the disk is full: the checkpoint at step 10 could not be "
                                               f"written in {out} (the checkpoint at step 5 is kept)"), err
    assert "resume with: python -m cubebench.training.policy_sft" in err[0]
    assert not (out / "checkpoint.tmp").exists()
    monkeypatch.setattr(torch, "save", real)
    assert sft(tiny, None, out) == 0
    assert losses(out) == pytest.approx(losses(whole), rel=1e-4)


@pytest.mark.slow
def test_a_rerun_with_other_arguments_is_one_line_before_anything_is_touched(
        tiny: Path, data: Path, whole: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = killed_run(tiny, data, tmp_path / "run")
    before = {p: p.stat().st_mtime_ns for p in out.rglob("*")}
    assert sft(tiny, None, out, "--lr", "0.5", "--starts-per-depth", "4") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "other arguments: --lr 0.01 (now 0.5), --starts-per-depth 3 (now 4);" in err[0], err
    assert {p: p.stat().st_mtime_ns for p in out.rglob("*")} == before


@pytest.mark.slow
def test_a_run_folder_moved_elsewhere_resumes(tiny: Path, data: Path, whole: Path, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "moved"
    shutil.copytree(killed_run(tiny, data, tmp_path / "run"), out)
    assert sft(tiny, None, out) == 0
    assert f"resuming {out} at step 10" in capsys.readouterr().out
    assert losses(out) == pytest.approx(losses(whole), rel=1e-4)
    assert json.loads((out / "training.json").read_text())["args"]["out"] == str(out)
