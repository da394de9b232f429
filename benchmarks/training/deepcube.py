"""Train a DeepCubeA-style cost-to-go network by approximate value iteration, from the environment alone.

    python -m cubebench.training.deepcube --out runs/deepcube --minutes 50
    python -m cubebench.training.deepcube --out runs/deepcube --minutes 50 --resume   # go on from the checkpoint

Each step draws ``--batch`` states by turning the solved cube with random quarter-turn walks of a random length
1..``--max-depth`` (no turn undoing the one before), turns every state by each of the 12 quarter turns with the
engine's batched kernel (:func:`cubebench.engine.apply.apply_batch`), and regresses the online network on the
one-step lookahead target ``min over turns (1 + J_target(child))`` with ``J_target(solved) = 0`` (a solved state's
own target is 0).  The target network starts as the zero function (so the first targets are "1 unless solved")
and is refreshed with the online weights when the mean loss of the last ``--check-every`` steps is under
``--threshold`` (the loss has settled on the current targets, as in DeepCubeA), or at the latest every
``--max-stale`` steps.  No label comes from a solver (two-phase or optimal) or the distance oracle: the targets are
the env's own transitions and the network's own estimates (tests/training/test_deepcube_training.py checks the
import graph).

Run folder ``--out``: ``checkpoint.pt`` (online and target weights, optimizer, random state, history; written
beside and renamed into place), ``value.npz`` (the online network for the NumPy agent,
:mod:`cubebench.agents.deepcube_net`), ``curve.csv`` (loss per step) and ``run.json`` (arguments, CPU, time).
Progress lines go to stdout.  Ctrl-C or SIGTERM saves a checkpoint and stops; ``--resume`` goes on from it with
the same arguments (``--minutes``, ``--steps`` and ``--threads`` may change) and gives the same weights as a run
that was never stopped.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Callable, Sequence

import numpy as np

from cubebench.agents.deepcube_net import VALUE_INPUTS, encode, layer_names, save_value_net
from cubebench.agents.deepcube_search import QUARTER_MOVES, quarter_children, solved_mask
from cubebench.engine.apply import apply_batch
from cubebench.engine.facelets import SOLVED

from .program import Session, run_program
from .run_state import cpu_name
from .stopping import StopRequested

PROG = "python -m cubebench.training.deepcube"
CHECKPOINT = "checkpoint.pt"
RESUMABLE_CHANGES = ("out", "minutes", "steps", "threads", "resume", "log_every", "save_every")
"""Arguments a resumed run may change (how long it runs, where the folder is, how many threads)."""


# --- data and targets (NumPy and the engine only) ---------------------------------------------------------------------
def random_walk_states(rng: np.random.Generator, batch: int, max_depth: int) -> tuple[np.ndarray, np.ndarray]:
    """(states, walk lengths): ``batch`` solved cubes each turned by a walk of 1..``max_depth`` random quarter turns,
    no turn undoing the one before it (the walk's length bounds its distance from above)."""
    depths = rng.integers(1, max_depth + 1, size=batch)
    states = np.tile(SOLVED, (batch, 1))
    prev = np.full(batch, -1, dtype=np.int64)
    for k in range(max_depth):
        draw = rng.integers(0, 11, size=batch)
        undo = np.where(prev >= 0, prev ^ 1, 99)  # QUARTER_ACTIONS pairs a turn with its inverse: index ^ 1
        action = np.where((prev >= 0) & (draw >= undo), draw + 1, draw)
        action = np.where(prev < 0, rng.integers(0, 12, size=batch), action)
        live = k < depths
        apply_batch(states, np.where(live, QUARTER_MOVES[action], -1), out=states)
        prev = np.where(live, action, prev)
    return states, depths


def value_targets(states: np.ndarray, target: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """One-step lookahead targets ``min over the 12 quarter turns of (1 + J(child))``, with ``J(solved child) = 0``
    whatever ``target`` says and 0 for a state that is solved itself.  ``target`` maps (N, 54) states to (N,)
    estimates (the target network; clipped at 0)."""
    kids = quarter_children(states)
    values = np.maximum(np.asarray(target(kids), dtype=np.float32), 0.0)
    values[solved_mask(kids)] = 0.0
    out = (1.0 + values.reshape(len(states), len(QUARTER_MOVES))).min(axis=1)
    out[solved_mask(states)] = 0.0
    return out.astype(np.float32)


def zero_target(states: np.ndarray) -> np.ndarray:
    """The first target network: zero everywhere (so the first targets are 1, or 0 for a solved state)."""
    return np.zeros(len(states), dtype=np.float32)


# --- the network (torch) -------------------------------------------------------------------------------------------
def build_model(hidden: tuple[int, ...], res_blocks: int) -> Any:
    """The torch network whose layers :func:`~cubebench.agents.deepcube_net.layer_names` lists (same forward pass as
    :class:`~cubebench.agents.deepcube_net.ValueNet`)."""
    import torch
    from torch import nn

    class ValueMLP(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            widths = [VALUE_INPUTS, *hidden]
            self.plain = nn.ModuleList(nn.Linear(widths[k], widths[k + 1]) for k in range(len(hidden)))
            self.res = nn.ModuleList(nn.Linear(hidden[-1], hidden[-1]) for _ in range(2 * res_blocks))
            self.out = nn.Linear(hidden[-1], 1)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            for layer in self.plain:
                x = torch.relu(layer(x))
            for k in range(0, len(self.res), 2):
                x = torch.relu(x + self.res[k + 1](torch.relu(self.res[k](x))))
            return self.out(x).squeeze(1)

        def linears(self) -> list[nn.Linear]:
            """The linear layers in :func:`layer_names` order."""
            return [*self.plain, *self.res, self.out]

    return ValueMLP()


def model_values(model: Any, states: np.ndarray, chunk: int = 8192) -> np.ndarray:
    """The model's estimates (clipped at 0) of (N, 54) states, without gradients."""
    import torch

    out = np.empty(len(states), dtype=np.float32)
    with torch.no_grad():
        for lo in range(0, len(states), chunk):
            x = torch.from_numpy(encode(states[lo:lo + chunk]))
            out[lo:lo + chunk] = model(x).clamp_min(0.0).numpy()
    return out


def export_weights(model: Any, path: Path, args: argparse.Namespace, info: dict[str, Any]) -> None:
    """The online network as the NumPy agent's weights file."""
    linears = model.linears()
    if len(linears) != len(layer_names(tuple(args.hidden), args.res_blocks)):
        raise ValueError(f"the model has {len(linears)} linear layers, its arguments describe another network")
    save_value_net(path, tuple(args.hidden), args.res_blocks,
                   [lin.weight.detach().numpy() for lin in linears], [lin.bias.detach().numpy() for lin in linears],
                   meta={"by": PROG, "args": _plain(args), **info})


# --- the run ------------------------------------------------------------------------------------------------------------
class Trainer:
    """Online and target networks, optimizer, random state and history: everything a checkpoint holds."""

    def __init__(self, args: argparse.Namespace) -> None:
        import torch

        torch.manual_seed(args.seed)
        self.args = args
        self.model = build_model(tuple(args.hidden), args.res_blocks)
        self.target = build_model(tuple(args.hidden), args.res_blocks)
        self.target.load_state_dict(self.model.state_dict())
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=args.lr)
        self.rng = np.random.default_rng(args.seed)
        self.step = 0
        self.updates = 0  # target refreshes so far; 0: the target is the zero function
        self.last_update = 0
        self.seconds = 0.0
        self.history: list[tuple[int, float, float, int, float]] = []  # step, loss, mean target, updates, seconds

    def target_fn(self) -> Callable[[np.ndarray], np.ndarray]:
        return zero_target if self.updates == 0 else (lambda states: model_values(self.target, states))

    def train_step(self) -> float:
        """One step: draw, compute targets with the target network, one Adam step on the MSE."""
        import torch

        started = time.perf_counter()
        states, _ = random_walk_states(self.rng, self.args.batch, self.args.max_depth)
        targets = value_targets(states, self.target_fn())
        x = torch.from_numpy(encode(states))
        loss = torch.mean((self.model(x) - torch.from_numpy(targets)) ** 2)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        self.step += 1
        self.seconds += time.perf_counter() - started
        self.history.append((self.step, loss.item(), float(targets.mean()), self.updates, round(self.seconds, 3)))
        self._maybe_refresh()
        return self.history[-1][1]

    def _maybe_refresh(self) -> None:
        """Copy the online weights into the target when the loss settled, or when the target is ``--max-stale`` old."""
        args = self.args
        if self.step % args.check_every:
            return
        recent = float(np.mean([h[1] for h in self.history[-args.check_every:]]))
        if recent < args.threshold or self.step - self.last_update >= args.max_stale:
            self.target.load_state_dict(self.model.state_dict())
            self.updates += 1
            self.last_update = self.step

    def state_dict(self) -> dict[str, Any]:
        return {"model": self.model.state_dict(), "target": self.target.state_dict(),
                "optimizer": self.optimizer.state_dict(), "rng": self.rng.bit_generator.state, "step": self.step,
                "updates": self.updates, "last_update": self.last_update, "seconds": self.seconds,
                "history": self.history, "args": _plain(self.args)}

    def load_state_dict(self, data: dict[str, Any]) -> None:
        self.model.load_state_dict(data["model"])
        self.target.load_state_dict(data["target"])
        self.optimizer.load_state_dict(data["optimizer"])
        self.rng.bit_generator.state = data["rng"]
        self.step, self.updates = int(data["step"]), int(data["updates"])
        self.last_update, self.seconds = int(data["last_update"]), float(data["seconds"])
        self.history = [tuple(h) for h in data["history"]]


def save(trainer: Trainer, out: Path) -> None:
    """Checkpoint, weights file, curve and run summary, each whole or not at all."""
    import torch

    tmp = out / (CHECKPOINT + ".tmp")
    torch.save(trainer.state_dict(), tmp)
    os.replace(tmp, out / CHECKPOINT)
    info = {"step": trainer.step, "target_updates": trainer.updates, "train_seconds": round(trainer.seconds, 1),
            "cpu": cpu_name()}
    export_weights(trainer.model, out / "value.npz", trainer.args, info)
    tmp_csv = out / "curve.csv.tmp"
    with tmp_csv.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["step", "loss", "mean_target", "target_updates", "seconds"])
        writer.writerows(trainer.history)
    os.replace(tmp_csv, out / "curve.csv")
    tmp_json = out / "run.json.tmp"
    tmp_json.write_text(json.dumps({"args": _plain(trainer.args), **info}, indent=1), encoding="utf-8")
    os.replace(tmp_json, out / "run.json")


def load(trainer: Trainer, out: Path) -> None:
    """Restore a checkpoint made with the same arguments (those of :data:`RESUMABLE_CHANGES` aside)."""
    import torch

    path = out / CHECKPOINT
    try:
        data = torch.load(path, weights_only=False)
    except Exception as err:  # noqa: BLE001 - any unreadable checkpoint is a damaged run folder
        raise ValueError(f"{path} does not load ({type(err).__name__}: {err}); start a new run folder") from None
    old, new = data.get("args", {}), _plain(trainer.args)
    differ = sorted(k for k in set(old) | set(new) if k not in RESUMABLE_CHANGES and old.get(k) != new.get(k))
    if differ:
        raise ValueError(f"{path} was made with other arguments ({', '.join(f'{k}={old.get(k)!r}' for k in differ)});"
                         " resume with the same ones or use another --out")
    trainer.load_state_dict(data)


def _plain(args: argparse.Namespace) -> dict[str, Any]:
    return {k: list(v) if isinstance(v, tuple) else v for k, v in vars(args).items() if k != "out"} | {
        "out": str(args.out)}


def train(args: argparse.Namespace, session: Session) -> int:
    """The body of the program (under :func:`~.program.run_program`)."""
    import torch

    torch.set_num_threads(args.threads)
    out: Path = args.out
    exists = (out / CHECKPOINT).exists()
    if exists and not args.resume:
        raise ValueError(f"{out} holds a run already: pass --resume to go on with it, or use another --out")
    if args.resume and not exists:
        raise ValueError(f"{out} holds no checkpoint to resume ({out / CHECKPOINT} is missing)")
    out.mkdir(parents=True, exist_ok=True)
    trainer = Trainer(args)
    if exists:
        load(trainer, out)
        session.say(f"resumed at step {trainer.step} ({trainer.updates} target updates, {trainer.seconds:.0f} s)")
    params = sum(p.numel() for p in trainer.model.parameters())
    session.say(f"network hidden {args.hidden} + {args.res_blocks} residual blocks: {params:,} parameters; batch "
                f"{args.batch}, walks of 1..{args.max_depth}; torch threads {args.threads}; CPU {cpu_name()}")
    deadline = time.monotonic() + 60.0 * args.minutes if args.minutes else None
    session.phase = "while training"
    try:
        while (not args.steps or trainer.step < args.steps) and (deadline is None or time.monotonic() < deadline):
            with session.stop.deferred():
                trainer.train_step()
            if trainer.step % args.log_every == 0 or trainer.step == 1:
                recent = np.mean([h[1] for h in trainer.history[-args.log_every:]])
                session.say(f"step {trainer.step}: loss {recent:.4f}, mean target {trainer.history[-1][2]:.2f}, "
                            f"target updates {trainer.updates}, {trainer.seconds:.0f} s")
            if trainer.step % args.save_every == 0:
                with session.stop.deferred():
                    save(trainer, out)
    except StopRequested:
        save(trainer, out)
        session.state = SimpleNamespace(saved_step=trainer.step)
        raise
    save(trainer, out)
    session.say(f"done at step {trainer.step}: {trainer.updates} target updates, {trainer.seconds:.0f} s of training; "
                f"weights in {out / 'value.npz'}")
    return 0


def _widths(text: str) -> tuple[int, ...]:
    try:
        widths = tuple(int(w) for w in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"--hidden takes widths like 512,256, got {text!r}") from None
    if not widths or min(widths) < 1:
        raise argparse.ArgumentTypeError(f"--hidden widths must be positive, got {text!r}")
    return widths


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="run folder (checkpoint, weights, curve)")
    parser.add_argument("--resume", action="store_true", help="go on from the checkpoint in --out")
    parser.add_argument("--minutes", type=float, default=0.0, help="stop this session after so many minutes (0: no limit)")
    parser.add_argument("--steps", type=int, default=0, help="stop at this step, counted over all sessions (0: no limit)")
    parser.add_argument("--batch", type=_positive, default=1000, help="states per step")
    parser.add_argument("--max-depth", type=_positive, default=30, help="longest scramble walk")
    parser.add_argument("--hidden", type=_widths, default=(1000, 500), help="widths of the plain hidden layers")
    parser.add_argument("--res-blocks", type=int, default=2, help="residual blocks of the last width")
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--check-every", type=_positive, default=100, help="steps between two target-refresh checks")
    parser.add_argument("--threshold", type=float, default=0.05, help="refresh the target when the mean loss of the "
                        "last --check-every steps is under this")
    parser.add_argument("--max-stale", type=_positive, default=1000, help="refresh the target at least this often")
    parser.add_argument("--save-every", type=_positive, default=200, help="steps between checkpoints")
    parser.add_argument("--log-every", type=_positive, default=50, help="steps between progress lines")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=_positive, default=1, help="torch CPU threads (1 on a shared 2-core machine)")
    args = parser.parse_args(argv)
    if args.res_blocks < 0:
        parser.error("--res-blocks must be >= 0")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parse_args(argv)
    resume = argv if "--resume" in argv else [*argv, "--resume"]  # the command a stopped run's last line gives
    return run_program("deepcube", PROG, resume, args.out, lambda session: train(args, session))


if __name__ == "__main__":
    raise SystemExit(main())
