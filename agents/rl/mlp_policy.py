"""The MLP policy (actor-critic) on the one-hot Symbolic observation, and its checkpoints.

Input: the (54, 6) one-hot colour array flattened to 324 inputs.  Output:
one logit per face-turn action and a state value.  The first layer is the
plain linear map of the one-hot vector, computed as what it equals: the sum
of the 54 weight columns the hot entries select (an ``EmbeddingBag``), which
is 6x cheaper than multiplying by 270 zeros on a CPU.  Turning a face straight
back (``U`` after ``U'``) is masked out: it can never be part of a shortest
solution, and removing it shrinks the search the policy has to learn (the
previous action is passed in; ``-1`` means none).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from cubebench.engine.metric import Metric, parse_metric, turn_actions
from cubebench.engine.moves import INVERSE, MOVE_INDEX

N_INPUTS = 54 * 6
CHECKPOINT_FORMAT = 1


def action_names(metric: str) -> tuple[str, ...]:
    """The env's actions for a metric (``quarter``: 12, ``half``: 18), in env order."""
    return turn_actions(metric)


def inverse_actions(metric: str) -> np.ndarray:
    """``inv[a]`` is the action that undoes action ``a`` (in env action order)."""
    names = action_names(metric)
    index = {MOVE_INDEX[n]: a for a, n in enumerate(names)}
    return np.array([index[int(INVERSE[MOVE_INDEX[n]])] for n in names], dtype=np.int64)


class MLPPolicy(nn.Module):
    """Shared MLP trunk with a policy head (logits) and a value head."""

    inverse: torch.Tensor  # buffer: inverse[a] is the action that undoes action a

    def __init__(self, n_actions: int = 12, hidden: tuple[int, ...] = (512, 256), metric: Metric = "quarter") -> None:
        super().__init__()
        self.hidden = tuple(int(h) for h in hidden)
        self.n_actions, self.metric = int(n_actions), parse_metric(metric)
        self.first = nn.EmbeddingBag(N_INPUTS, self.hidden[0], mode="sum")
        self.first_bias = nn.Parameter(torch.zeros(self.hidden[0]))
        nn.init.uniform_(self.first.weight, -N_INPUTS ** -0.5, N_INPUTS ** -0.5)  # nn.Linear's init
        layers: list[nn.Module] = [nn.ELU()]
        width = self.hidden[0]
        for h in self.hidden[1:]:
            layers += [nn.Linear(width, h), nn.ELU()]
            width = h
        self.trunk = nn.Sequential(*layers)
        self.pi = nn.Linear(width, self.n_actions)
        self.v = nn.Linear(width, 1)
        nn.init.orthogonal_(self.pi.weight, gain=0.01)
        nn.init.zeros_(self.pi.bias)
        self.register_buffer("inverse", torch.as_tensor(inverse_actions(metric)))

    def forward(self, obs: torch.Tensor, prev: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """Masked logits (B, n_actions) and values (B,) for a batch of one-hot observations."""
        z = self.trunk(self.first(self.hot_indices(obs)) + self.first_bias)
        logits = self.pi(z)
        if prev is not None:
            logits = logits.masked_fill(self.inverse_mask(prev), float("-inf"))
        return logits, self.v(z).squeeze(-1)

    @staticmethod
    def hot_indices(obs: torch.Tensor) -> torch.Tensor:
        """(B, 54) indices ``6 * position + colour`` of the hot entries of one-hot observations."""
        colours = obs.reshape(obs.shape[0], 54, 6).argmax(-1)
        return colours + torch.arange(0, N_INPUTS, 6)

    def inverse_mask(self, prev: torch.Tensor) -> torch.Tensor:
        """(B, n_actions) True where an action would undo the previous one."""
        mask = torch.zeros(prev.shape[0], self.n_actions, dtype=torch.bool)
        has = prev >= 0
        mask[has.nonzero().squeeze(-1), self.inverse[prev[has]]] = True
        return mask

    @torch.no_grad()
    def act(self, obs: np.ndarray, prev: np.ndarray, greedy: bool = True,
            generator: torch.Generator | None = None) -> np.ndarray:
        """Actions for a batch (numpy in, numpy out): argmax, or sampled with ``generator``."""
        logits, _ = self(torch.as_tensor(obs), torch.as_tensor(prev, dtype=torch.int64))
        if greedy:
            return logits.argmax(-1).numpy()
        probs = torch.softmax(logits, -1)
        return torch.multinomial(probs, 1, generator=generator).squeeze(-1).numpy()

    def config(self) -> dict[str, Any]:
        return {"n_actions": self.n_actions, "hidden": list(self.hidden), "metric": self.metric}


def save_checkpoint(policy: MLPPolicy, path: str | Path, meta: dict[str, Any] | None = None) -> None:
    """Weights (float32) plus the architecture and how they were trained (``meta``)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    state = {k: v.detach().clone() for k, v in policy.state_dict().items()}
    torch.save({"format": CHECKPOINT_FORMAT, "config": policy.config(), "state_dict": state,
                "meta": meta or {}}, path)


def load_checkpoint(path: str | Path) -> tuple[MLPPolicy, dict[str, Any]]:
    """The policy stored at ``path`` (in eval mode) and its ``meta``."""
    blob = torch.load(Path(path), map_location="cpu", weights_only=True)
    if blob.get("format") != CHECKPOINT_FORMAT:
        raise ValueError(f"{path}: not a CubeBench MLP checkpoint (format {blob.get('format')!r})")
    cfg = blob["config"]
    policy = MLPPolicy(cfg["n_actions"], tuple(cfg["hidden"]), cfg["metric"])
    policy.load_state_dict(blob["state_dict"])
    policy.eval()
    return policy, blob.get("meta", {})


SHIPPED_CHECKPOINT = Path(__file__).with_name("checkpoints") / "mlp_qtm.pt"
"""The trained quarter-turn policy shipped with the package (see docs/rl.md for how it was made)."""
