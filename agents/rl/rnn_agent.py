"""The partial-view policies as an :class:`~cubebench.agents.base.Agent`: the runner's ``rnn`` agent.

One policy per tier (a :class:`~.rnn_policy.PartialViewPolicy` trained by ``cubebench.training.rl.rnn_ppo`` on
that tier's view), chosen by the task's tier; a tier without one is refused by name.  Each interaction step is one
action: a quarter turn through the ``move`` tool or a view rotation through ``rotate``, greedy by default, as
``benchmarks/rnn_eval.py``'s greedy rows play.  The agent reads only what the tier shows: the colours of the
visible stickers, read off the observation's text (or image) form in the order of the compact ``indices`` form
the policy was trained on (:func:`visible_colours`).  Its memory and previous action start afresh every episode.

The shipped checkpoints (package data, ``checkpoints/``) are the ``last.pt`` of the training runs in
docs/results/rl.md: the GRU per tier (``rnn``) and the memoryless control, a frame stack of one frame
(``rnn:stack1``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch

from cubebench.agents.base import Task, Turn
from cubebench.agents.teams import read_colours
from cubebench.tiers import TIER_SPECS

from .rnn_policy import PartialViewPolicy, load_rnn_checkpoint

CHECKPOINTS = Path(__file__).with_name("checkpoints")
SHIPPED_VARIANTS = ("gru", "stack1")
"""The shipped variants: ``gru`` the recurrent policies (``rnn``), ``stack1`` the memoryless controls, frame stacks of
one frame (``rnn:stack1``); each ships ``checkpoints/rnn_<tier>_<variant>.pt`` per tier, the ``last.pt`` of the
training commands in docs/results/rl.md."""
DEFAULT_RNN_VARIANT = "gru"


def shipped_checkpoints(variant: str = DEFAULT_RNN_VARIANT) -> list[Path]:
    """The shipped checkpoints of ``variant``, one per tier (each file says its tier)."""
    return sorted(CHECKPOINTS.glob(f"rnn_*_{variant}.pt"))


def checkpoint_tier(policy: PartialViewPolicy, meta: dict[str, Any], source: str) -> str:
    """The tier ``policy`` was trained on: its training args' ``tier``, checked against the stickers it reads."""
    args = meta.get("args") if isinstance(meta.get("args"), dict) else {}
    tier = str(args.get("tier", "")) if args else ""
    if not tier:  # an older checkpoint: the partial tier that shows as many stickers as it reads
        tier = next((n for n, s in TIER_SPECS.items() if s.partial and len(s.visible) == policy.n_visible), "")
    if tier not in TIER_SPECS or not TIER_SPECS[tier].partial or len(TIER_SPECS[tier].visible) != policy.n_visible:
        raise ValueError(f"{source}: a policy reading {policy.n_visible} stickers, trained on tier {tier or '?'!r}: "
                         "no partial-view tier shows that")
    return tier


def load_tier_policies(checkpoint: str | Path | None = None) -> dict[str, tuple[PartialViewPolicy, dict[str, Any], str]]:
    """``{tier: (policy, meta, source)}``: the shipped GRU policies (``None`` or ``"gru"``), the shipped memoryless
    controls (``"stack1"``), or the one policy in the file ``checkpoint`` under the tier it was trained on."""
    name = str(checkpoint) if checkpoint is not None else DEFAULT_RNN_VARIANT
    paths = shipped_checkpoints(name) if name in SHIPPED_VARIANTS else [Path(name)]
    if not paths:
        raise ValueError(f"no shipped {name} checkpoint in {CHECKPOINTS}: the package is incomplete")
    out: dict[str, tuple[PartialViewPolicy, dict[str, Any], str]] = {}
    for path in paths:
        if not path.is_file():
            raise ValueError(f"no partial-view policy checkpoint at {path} (rnn plays the shipped ones, rnn:stack1 "
                             "the memoryless controls, rnn:<file.pt> one written by cubebench.training.rl.rnn_ppo)")
        policy, meta = load_rnn_checkpoint(path)
        out[checkpoint_tier(policy, meta, str(path))] = (policy, meta, str(path))
    return out


def visible_colours(tier: str, observation: Any) -> np.ndarray:
    """The colour indices of the stickers a Face or Vertex observation (text or image form) shows, in the order of
    the tier's compact ``indices`` form (:attr:`~cubebench.tiers.TierSpec.visible`): read at the text's letters or
    the painter image's sticker slots, as the scripted teams read a view."""
    if isinstance(observation, str):
        form = "text"
    elif np.asarray(observation).ndim == 3:
        form = "image"
    else:
        raise ValueError(f"the rnn agent reads the {tier} tier's text or image form, not an array of shape "
                         f"{np.asarray(observation).shape}")
    return read_colours(tier, form, observation)


class RecurrentAgent:
    """Plays the partial-view policy of the task's tier, one action per step, its memory reset every episode."""

    def __init__(self, policies: dict[str, tuple[PartialViewPolicy, dict[str, Any], str]], *, greedy: bool = True,
                 seed: int | None = None, name: str = "rnn") -> None:
        self.policies, self.greedy, self.name = policies, greedy, name
        self.gen = torch.Generator().manual_seed(0 if seed is None else int(seed))
        self.tier = ""
        self.policy: PartialViewPolicy | None = None
        self.memory = torch.zeros(0)
        self.prev = -1

    def reset(self, task: Task) -> None:
        if task.tier not in self.policies:
            sources = "; ".join(f"{t}: {s}" for t, (_, _, s) in self.policies.items())
            raise ValueError(f"the rnn agent plays the {', '.join(self.policies)} tier(s) only, not {task.tier!r} "
                             f"(its policies: {sources})")
        policy = self.policies[task.tier][0]
        missing = [a for a in policy.action_names if a not in task.action_names]
        if missing:
            raise ValueError(f"the {task.tier} policy's actions {' '.join(missing)} are not this task's "
                             f"({task.metric} metric): it plays the quarter-turn metric with view rotations")
        self.tier, self.policy = task.tier, policy
        self.memory, self.prev = policy.initial_memory(1), -1  # a fresh episode: no memory, no previous action

    def act(self, observation: Any, tools: Any) -> Turn:
        if self.policy is None:
            raise RuntimeError("reset(task) must be called before act()")
        colours = visible_colours(self.tier, observation.raw)[None]
        prev = np.array([self.prev])
        action, self.memory = self.policy.act(colours, prev, self.memory, prev < 0, self.greedy, self.gen)
        self.prev = int(action[0])
        name = self.policy.action_names[self.prev]
        tool = "rotate" if name[0] in "xyz" else "move"
        tools.call(tool, [name])
        return Turn(action=f'{tool}("{name}")')


def make_rnn_agent(checkpoint: str | Path | None = None, *, seed: int | None = None,
                   greedy: bool = True) -> RecurrentAgent:
    """The runner's ``rnn`` agent: the shipped GRU policies, ``rnn:stack1`` the memoryless controls, ``rnn:<file>``
    one checkpoint (it plays the tier it was trained on)."""
    name = "rnn" if checkpoint is None else f"rnn:{checkpoint}"
    return RecurrentAgent(load_tier_policies(checkpoint), greedy=greedy, seed=seed, name=name)
