"""The trained policy as an :class:`~cubebench.agents.base.Agent`: one face turn per interaction step.

It reads only what the Symbolic tier shows (``observation.raw``: the one-hot,
index or text form of the 54 colours) and acts through the toolbox's
``move`` tool like every other agent.  With ``beam_width > 0`` it plans once,
at the first step, by beam search over its own logits from the state it
reconstructs from the observation (the Symbolic tier is fully observed, so
this uses nothing a model could not see), then plays the plan one move per
step; if the search finds nothing it falls back to the plain policy.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch

from cubebench.agents.base import Task, Turn
from cubebench.engine.facelets import FACES
from cubebench.engine.state import from_facelets
from cubebench.tiers import tier_spec
from cubebench.wrappers.observations import symbolic_colours

from .evaluate import beam_search
from .mlp_policy import SHIPPED_CHECKPOINT, MLPPolicy, load_checkpoint


class PolicyAgent:
    """Plays a trained :class:`MLPPolicy` (greedy, sampled, or beam-search planned)."""

    def __init__(self, policy: MLPPolicy, *, greedy: bool = True, beam_width: int = 0,
                 seed: int | None = None, name: str = "mlp") -> None:
        self.policy, self.greedy, self.beam_width, self.name = policy, greedy, int(beam_width), name
        self.gen = torch.Generator().manual_seed(0 if seed is None else int(seed))
        self.prev = -1
        self.plan: list[int] | None = None
        self.actions: tuple[str, ...] = ()

    def reset(self, task: Task) -> None:
        if "onehot" not in tier_spec(task.tier).forms:
            raise ValueError(f"the MLP policy plays a tier with the one-hot state only (Symbolic), not {task.tier!r}")
        turns = tuple(a for a in task.action_names if a[0] not in "xyz")
        if len(turns) != self.policy.n_actions:
            raise ValueError(f"policy has {self.policy.n_actions} actions, the task {len(turns)} ({task.metric})")
        self.actions, self.prev, self.plan = turns, -1, None

    def act(self, observation: Any, tools: Any) -> Turn:
        colours = symbolic_colours(observation.raw)  # raises ValueError on any other tier's observation
        if self.beam_width and self.plan is None:
            state = from_facelets("".join(FACES[c] for c in colours))
            self.plan = beam_search(self.policy, state, self.beam_width, observation.steps_left) or []
        if self.plan:
            action = self.plan.pop(0)
        else:
            onehot = np.eye(6, dtype=np.uint8)[colours][None]
            action = int(self.policy.act(onehot, np.array([self.prev]), self.greedy, self.gen)[0])
        name = self.actions[action]
        tools.call("move", [name])
        self.prev = action
        return Turn(action=f'move("{name}")')


def make_policy_agent(checkpoint: str | Path | None = None, *, seed: int | None = None,
                      greedy: bool = True, beam_width: int = 0) -> PolicyAgent:
    """The ``mlp`` agent of the runner: the shipped checkpoint unless another path is given."""
    policy, _ = load_checkpoint(checkpoint or SHIPPED_CHECKPOINT)
    name = "mlp" if not beam_width else f"mlp-beam{beam_width}"
    return PolicyAgent(policy, greedy=greedy, beam_width=beam_width, seed=seed, name=name)
