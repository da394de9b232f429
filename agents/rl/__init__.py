"""The MLP policy-gradient baseline (PPO and REINFORCE with a baseline) and SB3 training.

``agents.rl.train`` trains the policy on the native vector env; the shipped
checkpoint plays as an :class:`~agents.base.Agent` through
:func:`make_policy_agent` (the runner's ``mlp`` agent).  Torch is needed
(the ``rl`` extra); see docs/rl.md.
"""

from .agent import PolicyAgent, make_policy_agent
from .policy import SHIPPED_CHECKPOINT, MLPPolicy, load_checkpoint, save_checkpoint

__all__ = ["MLPPolicy", "PolicyAgent", "SHIPPED_CHECKPOINT", "load_checkpoint", "make_policy_agent",
           "save_checkpoint"]
