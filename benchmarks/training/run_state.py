"""A training run's state on disk: checkpoints a rerun resumes from, progress lines, and ``training.json``.

``OUT/checkpoint/`` holds the adapter, the optimizer and schedule (``state.pt``) and the history
(``state.json``); it is written beside and renamed into place, so a run killed at any moment leaves the last
whole checkpoint.  A rerun with the same ``--out`` loads it and goes on from its step; the history keeps every
step's loss and time across the sessions, and ``training.json`` is the summary the docs and plots read.
"""

from __future__ import annotations

import json
import platform
import shutil
import time
from pathlib import Path
from typing import Any

__all__ = ["RunState", "cpu_name", "save_adapter"]

PROGRESS_EVERY = 10
"""Steps between two progress lines."""


def cpu_name() -> str:
    """The CPU's model name, for every figure measured on it."""
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def save_adapter(model: Any, folder: Path) -> None:
    """The adapter's weights and config (``adapter_model.safetensors``, ``adapter_config.json``) into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(folder))


class RunState:
    """Where a run is: its step, the history of every step and probe measurement, and what made it."""

    def __init__(self, out: Path, info: dict[str, Any]) -> None:
        self.out = out
        self.info = info
        self.history: list[dict[str, Any]] = info.setdefault("history", [])
        self.probes: list[dict[str, Any]] = info.setdefault("probes", [])
        self.step = int(info.get("step", 0))
        self._session = time.monotonic()

    @staticmethod
    def adapter_to_resume(out: Path) -> Path | None:
        """The checkpointed adapter of an earlier session of this run, if there is one."""
        folder, old = out / "checkpoint", out / "checkpoint.old"
        if not folder.exists() and old.exists():  # killed between the two renames of a save: the last one is whole
            old.rename(folder)
        return folder if (folder / "state.json").is_file() and (folder / "adapter_config.json").is_file() else None

    @classmethod
    def start(cls, out: Path, args: dict[str, Any], data: dict[str, Any], machine: dict[str, Any]) -> "RunState":
        """A new run's state, or the checkpointed one of an earlier session (its arguments must agree)."""
        plain = {k: str(v) if isinstance(v, Path) else v for k, v in args.items()}
        found = out / "checkpoint" / "state.json"
        info: dict[str, Any] = json.loads(found.read_text(encoding="utf-8")) if found.is_file() else {"args": plain}
        changed = sorted(k for k in plain if k not in ("threads",) and info["args"].get(k) != plain[k])
        if changed:
            raise ValueError(f"{out} holds a run made with other arguments ({', '.join(changed)}): give another --out "
                             "or the same arguments to resume it")
        info["data"] = data
        info.setdefault("sessions", []).append({"cpu": cpu_name(), **machine, "from_step": int(info.get("step", 0)),
                                                "started": time.strftime("%Y-%m-%d %H:%M:%S")})
        state = cls(out, info)
        if state.step:
            print(f"resuming {out} at step {state.step}", flush=True)
        return state

    @property
    def seconds(self) -> float:
        """Seconds spent in steps and probe measurements, over every session."""
        return sum(h.get("seconds", 0.0) for h in self.history) + sum(p.get("seconds", 0.0) for p in self.probes)

    def restore(self, *stateful: Any) -> None:
        """Load the optimizer and schedule (in order) of the checkpoint, if resuming."""
        saved = self.out / "checkpoint" / "state.pt"
        if not self.step or not saved.is_file():
            return
        import torch

        states = torch.load(saved, map_location="cpu", weights_only=False)["stateful"]
        for obj, saved_state in zip(stateful, states):
            obj.load_state_dict(saved_state)

    def log_step(self, **fields: Any) -> None:
        """Record the step just taken; print a progress line every :data:`PROGRESS_EVERY` steps."""
        self.history.append({"step": self.step, **{k: round(v, 6) if isinstance(v, float) else v
                                                   for k, v in fields.items()}})
        if self.step % PROGRESS_EVERY == 0:
            recent = self.history[-PROGRESS_EVERY:]
            per_step = sum(h["seconds"] for h in recent) / len(recent)
            total = int(self.info["args"].get("steps", self.step))
            shown = {k: v for k, v in recent[-1].items() if k not in ("step", "seconds", "lr")}
            means = ", ".join(f"{k} {sum(h[k] for h in recent) / len(recent):.3f}" for k in shown
                              if isinstance(shown[k], (int, float)))
            print(f"step {self.step}/{total}: {means} (last {len(recent)}), {per_step:.1f} s/step, "
                  f"about {per_step * (total - self.step) / 60:.0f} min left", flush=True)

    def log_probe(self, rows: list[dict[str, Any]], *, final: bool = False, seconds: float = 0.0) -> None:
        """Record a probe measurement at this step (``final``: on the whole probe set) and print it."""
        self.probes.append({"step": self.step, "final": final, "seconds": round(seconds, 1), "by_depth": rows})
        shown = " ".join(f"d{r['depth']} {r['right']}/{r['n']}" for r in rows)
        print(f"probe at step {self.step}{' (all)' if final else ''}: {shown}", flush=True)

    def final_probe_done(self) -> bool:
        return bool(self.probes) and self.probes[-1]["final"] and self.probes[-1]["step"] == self.step

    def save(self, model: Any, *stateful: Any) -> None:
        """A whole checkpoint: written beside ``OUT/checkpoint`` and renamed into place."""
        import torch

        tmp, final, old = (self.out / name for name in ("checkpoint.tmp", "checkpoint", "checkpoint.old"))
        shutil.rmtree(tmp, ignore_errors=True)
        save_adapter(model, tmp)
        torch.save({"stateful": [obj.state_dict() for obj in stateful]}, tmp / "state.pt")
        self.info["step"] = self.step
        (tmp / "state.json").write_text(json.dumps(self.info) + "\n", encoding="utf-8")
        shutil.rmtree(old, ignore_errors=True)
        if final.exists():
            final.rename(old)
        tmp.rename(final)
        shutil.rmtree(old, ignore_errors=True)

    def write_summary(self, path: Path) -> None:
        """``training.json``: the arguments, data manifest, sessions (CPU, threads, precision), every step's
        loss and time, every probe measurement, and the total time."""
        summary = {**{k: v for k, v in self.info.items() if k not in ("history", "probes", "step")},
                   "steps": self.step, "seconds": round(self.seconds, 1), "minutes": round(self.seconds / 60, 1),
                   "history": self.history, "probes": self.probes}
        path.write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
