"""The partial-view actor-critic: a GRU (memory) or a frame stack (no memory) over the compact Face or Vertex view.

Input at each step: the one-hot colours of the stickers the tier shows (``obs_format="indices"`` of
:class:`~cubebench.envs.vector_env.CubeVectorEnv`: 9 for Face, 27 for Vertex) and the one-hot previous action
(one extra slot for "none", the first step of an episode).  Output: one logit per action (face turns and view
rotations) and a state value.  Undoing the previous action at once (``U`` after ``U'``, ``x`` after ``x'``) is
masked out, as in :mod:`.mlp_policy`.

Both kinds carry a *memory* tensor from step to step, so one trainer and one evaluation loop serve both:

* ``gru``: the GRU's hidden state; the policy must remember what it saw when it turned the cube;
* ``stack``: the last ``k`` input frames (observation + previous action), a window and nothing more: the
  memoryless control (it sees exactly ``k`` steps back and forgets the rest).

A step whose ``start`` flag is set (the first observation of an episode) zeroes the memory first, so nothing
crosses an episode boundary.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from cubebench.engine.moves import INVERSE, MOVE_INDEX

N_COLOURS = 6
RNN_CHECKPOINT_FORMAT = "cubebench-partial-view-policy-1"
MEMORIES = ("gru", "stack")


def inverse_of(action_names: tuple[str, ...]) -> np.ndarray:
    """``inv[a]``: the action that undoes action ``a`` (face turns and view rotations alike)."""
    index = {MOVE_INDEX[n]: a for a, n in enumerate(action_names)}
    return np.array([index[int(INVERSE[MOVE_INDEX[n]])] for n in action_names], dtype=np.int64)


class PartialViewPolicy(nn.Module):
    """Actor-critic over the compact partial view and the previous action, with a GRU or a frame-stack memory."""

    inverse: torch.Tensor  # buffer: inverse[a] undoes action a

    def __init__(self, n_visible: int, action_names: tuple[str, ...], memory: str = "gru", hidden: int = 128,
                 stack: int = 4) -> None:
        super().__init__()
        if memory not in MEMORIES:
            raise ValueError(f"memory must be one of {', '.join(MEMORIES)}, not {memory!r}")
        if n_visible < 1 or hidden < 1 or stack < 1:
            raise ValueError("n_visible, hidden and stack must be at least 1")
        self.n_visible, self.action_names = int(n_visible), tuple(action_names)
        self.memory, self.hidden, self.stack = memory, int(hidden), int(stack)
        self.n_actions = len(self.action_names)
        self.frame = self.n_visible * N_COLOURS + self.n_actions + 1  # one input frame, one-hot
        if memory == "gru":
            self.embed = nn.Sequential(nn.Linear(self.frame, self.hidden), nn.ELU())
            self.cell = nn.GRUCell(self.hidden, self.hidden)
            self.memory_size = self.hidden
        else:
            self.memory_size = self.frame * self.stack
            self.embed = nn.Sequential(nn.Linear(self.memory_size, self.hidden), nn.ELU())
        self.trunk = nn.Sequential(nn.Linear(self.hidden, self.hidden), nn.ELU())
        self.pi = nn.Linear(self.hidden, self.n_actions)
        self.v = nn.Linear(self.hidden, 1)
        nn.init.orthogonal_(self.pi.weight, gain=0.01)
        nn.init.zeros_(self.pi.bias)
        self.register_buffer("inverse", torch.as_tensor(inverse_of(self.action_names)))

    def initial_memory(self, batch: int) -> torch.Tensor:
        """The memory of ``batch`` fresh episodes (zeros)."""
        return torch.zeros(batch, self.memory_size)

    def encode(self, obs: torch.Tensor, prev: torch.Tensor) -> torch.Tensor:
        """(B, frame) one-hot of the visible colours (B, n_visible) and the previous action (B,; -1 for none)."""
        if obs.shape[-1] != self.n_visible:
            raise ValueError(f"observations have {obs.shape[-1]} stickers; this policy reads {self.n_visible}")
        colours = nn.functional.one_hot(obs.long(), N_COLOURS).reshape(obs.shape[0], -1)
        action = nn.functional.one_hot(prev.long() + 1, self.n_actions + 1)
        return torch.cat([colours, action], dim=1).float()

    def step(self, obs: torch.Tensor, prev: torch.Tensor, memory: torch.Tensor,
             start: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Masked logits (B, A), values (B,) and the new memory, for one step of a batch of episodes.

        ``start`` (B,) bool: this observation begins an episode, so the memory is zeroed before it is read."""
        memory = memory * (~start.bool()).unsqueeze(1).float()
        x = self.encode(obs, prev)
        if self.memory == "gru":
            memory = self.cell(self.embed(x), memory)
            z = memory
        else:
            memory = torch.cat([memory[:, self.frame:], x], dim=1)
            z = self.embed(memory)
        z = self.trunk(z)
        logits = self.pi(z).masked_fill(self.inverse_mask(prev), float("-inf"))
        return logits, self.v(z).squeeze(-1), memory

    def unroll(self, obs: torch.Tensor, prev: torch.Tensor, start: torch.Tensor,
               memory: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Logits (T, B, A) and values (T, B) of ``T`` steps from ``memory`` (backpropagation through time)."""
        logits, values = [], []
        for t in range(obs.shape[0]):
            lg, v, memory = self.step(obs[t], prev[t], memory, start[t])
            logits.append(lg)
            values.append(v)
        return torch.stack(logits), torch.stack(values)

    def inverse_mask(self, prev: torch.Tensor) -> torch.Tensor:
        """(B, A) True where an action would undo the previous one."""
        prev = prev.long()
        has = prev >= 0
        mask = torch.zeros(prev.shape[0], self.n_actions, dtype=torch.bool)
        mask[has.nonzero().squeeze(-1), self.inverse[prev[has]]] = True
        return mask

    @torch.no_grad()
    def act(self, obs: np.ndarray, prev: np.ndarray, memory: torch.Tensor, start: np.ndarray, greedy: bool = True,
            generator: torch.Generator | None = None) -> tuple[np.ndarray, torch.Tensor]:
        """Actions for a batch (argmax, or sampled with ``generator``) and the new memory."""
        logits, _, memory = self.step(torch.as_tensor(obs), torch.as_tensor(prev), memory, torch.as_tensor(start))
        if greedy:
            return logits.argmax(-1).numpy(), memory
        return torch.multinomial(torch.softmax(logits, -1), 1, generator=generator).squeeze(-1).numpy(), memory

    def config(self) -> dict[str, Any]:
        return {"n_visible": self.n_visible, "action_names": list(self.action_names), "memory": self.memory,
                "hidden": self.hidden, "stack": self.stack}


def policy_from_config(config: dict[str, Any]) -> PartialViewPolicy:
    """A fresh policy of the architecture ``config`` (:meth:`PartialViewPolicy.config`) describes."""
    return PartialViewPolicy(int(config["n_visible"]), tuple(config["action_names"]), str(config["memory"]),
                             int(config["hidden"]), int(config["stack"]))


def save_rnn_checkpoint(policy: PartialViewPolicy, path: str | Path, meta: dict[str, Any] | None = None) -> None:
    """Weights, architecture and ``meta`` (how they were trained) in one file, written whole or not at all."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    state = {k: v.detach().clone() for k, v in policy.state_dict().items()}
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")  # beside it, so the rename is atomic
    try:
        torch.save({"format": RNN_CHECKPOINT_FORMAT, "config": policy.config(), "state_dict": state,
                    "meta": meta or {}}, tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def load_rnn_checkpoint(path: str | Path) -> tuple[PartialViewPolicy, dict[str, Any]]:
    """The policy stored at ``path`` (in eval mode) and its ``meta``."""
    blob = torch.load(Path(path), map_location="cpu", weights_only=True)
    if not isinstance(blob, dict) or blob.get("format") != RNN_CHECKPOINT_FORMAT:
        raise ValueError(f"{path}: not a CubeBench partial-view policy checkpoint")
    policy = policy_from_config(blob["config"])
    policy.load_state_dict(blob["state_dict"])
    policy.eval()
    return policy, blob.get("meta", {})
