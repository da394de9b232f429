"""The MLP policy-gradient baseline as an agent: the policy network, its checkpoints, and the agent that plays it.

The shipped checkpoint plays as an :class:`~cubebench.agents.base.Agent` through :func:`make_policy_agent`
(the runner's ``mlp`` agent), the partial-view policies through :func:`make_rnn_agent` (``rnn``, :mod:`.rnn_agent`);
:mod:`.evaluate` scores a policy on scrambles and the shipped sets.  Training it
(PPO, REINFORCE, SB3, self-play) lives in ``cubebench.training.rl``.  Torch is needed (the ``rl`` extra); see
docs/rl.md.  Names are imported on first use, so ``python -m cubebench.agents.rl.<module>`` runs each module
exactly once.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

_EXPORTS = {
    "MLPPolicy": "mlp_policy", "SHIPPED_CHECKPOINT": "mlp_policy", "load_checkpoint": "mlp_policy",
    "save_checkpoint": "mlp_policy", "PolicyAgent": "agent", "make_policy_agent": "agent",
    "RecurrentAgent": "rnn_agent", "make_rnn_agent": "rnn_agent",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'cubebench.agents.rl' has no attribute {name!r}")
    return getattr(import_module(f".{_EXPORTS[name]}", __name__), name)
