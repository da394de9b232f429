"""How a training program ends: one line on stderr for every way it can stop short, and the command that resumes it.

A training program parses its arguments first (so ``--help`` and a bad argument answer before torch is imported),
then hands its body to :func:`run_program`, which catches Ctrl-C and SIGTERM (:mod:`.stopping`), a full disk, a
damaged or mismatched run folder and a model that cannot be loaded, and ends each with one line:

    policy_sft: stopped by Ctrl-C (SIGINT) at step 17 of 600; the checkpoint at step 17 is kept in runs/x/checkpoint;
    resume with: python -m cubebench.training.policy_sft --out runs/x

Exit status: 0 done, 1 disk full, 2 bad input (a damaged file, other arguments, a model that cannot load), 130 and
143 stopped by SIGINT and SIGTERM (as a shell reports a process those signals end).
"""

from __future__ import annotations

import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from cubebench.agents.llm.reply import ModelError

from .integrity import DiskFull, disk_full
from .stopping import StopRequested, StopSignals, exit_status

__all__ = ["Session", "run_program", "THREADS_HELP"]

THREADS_HELP = ("torch CPU threads (default: every core). On a busy machine (load average at or above the core count) "
                "use 1: on a 2-core AMD EPYC at load 10-14 a step of 4 examples took 21.5 s with 1 thread and 109 s "
                "with 2 (python -m cubebench.training.thread_bench; docs/training.md)")
"""The ``--threads`` help of the training programs, with the measurement behind its advice (:mod:`.thread_bench`);
kept here, where ``--help`` needs no torch."""


@dataclass
class Session:
    """What the ending line needs: the program's name, the command that resumes it, its run folder, what it is
    doing now (``phase``, set by the program as it goes) and its run state once training has begun."""

    name: str
    command: str
    out: Path
    stop: StopSignals = field(default_factory=StopSignals)
    phase: str = "starting"
    state: Any = None

    def say(self, line: str) -> None:
        """A progress line on stdout, now (``nohup`` and pipes buffer otherwise)."""
        print(f"{self.name}: {line}", flush=True)

    def kept(self) -> str:
        """Which checkpoint a resume starts from."""
        step = getattr(self.state, "saved_step", 0)
        if step:
            return f"the checkpoint at step {step} is kept in {self.out / 'checkpoint'}"
        if (self.out / "checkpoint").exists():
            return f"the checkpoint in {self.out / 'checkpoint'} is kept"
        return "no checkpoint yet (a rerun starts over, reusing the data once made)"


def run_program(name: str, prog: str, argv: Sequence[str], out: Path, body: Callable[[Session], int]) -> int:
    """``body(session)``'s exit status, or one line and a status for each way it stops short (module docstring)."""
    session = Session(name=name, command=shlex.join([*prog.split(), *argv]), out=out)
    with session.stop:
        try:
            return body(session)
        except StopRequested as err:
            how = "at once (a second signal)" if err.again else session.phase
            print(f"{name}: stopped by {err.name} {how}; {session.kept()}; resume with: {session.command}",
                  file=sys.stderr, flush=True)
            return exit_status(err.signum)
        except DiskFull as err:
            print(f"{name}: {err}; free some space and resume with: {session.command}", file=sys.stderr, flush=True)
            return 1
        except (ModelError, ValueError, OSError) as err:
            if disk_full(err):
                print(f"{name}: the disk is full ({err}); free some space and resume with: {session.command}",
                      file=sys.stderr, flush=True)
                return 1
            text = " ".join(str(err).split()) or type(err).__name__
            print(f"{name}: error: {text}", file=sys.stderr, flush=True)
            return 2
