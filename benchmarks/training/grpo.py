"""What every GRPO program shares: group-relative advantages and the policy-gradient loss on sampled replies.

A group is several episodes of one start, sampled from the policy; each episode's reward is
:func:`cubebench.agents.episode_reward.episode_reward`.  Its advantage is ``(r - mean) / std`` over the group
(all zero when the rewards are equal: such a group teaches nothing and is skipped), and the loss is
``-sum_i A_i log p(reply_i | prompt_i) / n`` over the replies taken, the log-probabilities computed for all
of them in one batch.  The rollouts are on-policy (one update per group), so there is no importance ratio.
"""

from __future__ import annotations

import argparse
from typing import Any, Sequence

__all__ = ["group_advantages", "reply_logprobs", "policy_gradient_loss", "add_rollout_options"]


def group_advantages(rewards: Sequence[float], eps: float = 1e-4) -> list[float]:
    """``(r - mean) / (std + eps)`` over the group; all zeros when the rewards are equal."""
    mean = sum(rewards) / len(rewards)
    std = (sum((r - mean) ** 2 for r in rewards) / len(rewards)) ** 0.5
    if std < 1e-8:
        return [0.0] * len(rewards)
    return [(r - mean) / (std + eps) for r in rewards]


def reply_logprobs(model: Any, pairs: Sequence[tuple[Sequence[int], Sequence[int]]], *, precision: str = "fp32",
                   pad: int = 0) -> Any:
    """The summed log-probability of each ``(prompt ids, reply ids)`` pair's reply given its prompt, in one
    right-padded forward pass (a tensor of ``len(pairs)``, with gradients)."""
    import torch

    width = max(len(p) + len(r) for p, r in pairs)
    ids = torch.full((len(pairs), width), pad, dtype=torch.long)
    mask = torch.zeros((len(pairs), width), dtype=torch.long)
    for row, (prompt, reply) in enumerate(pairs):
        tokens = list(prompt) + list(reply)
        ids[row, :len(tokens)] = torch.tensor(tokens)
        mask[row, :len(tokens)] = 1
    first = min(len(p) for p, _ in pairs) - 1
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=precision == "bf16"):
        logits = model(input_ids=ids, attention_mask=mask, logits_to_keep=width - first).logits
    logp = torch.log_softmax(logits.float(), dim=-1)
    totals = []
    for row, (prompt, reply) in enumerate(pairs):
        at = torch.arange(len(reply)) + len(prompt) - 1 - first
        totals.append(logp[row, at, torch.tensor(list(reply))].sum())
    return torch.stack(totals)


def policy_gradient_loss(logprobs: Any, advantages: Sequence[float]) -> Any:
    """``-sum A_i log p_i / n`` (one advantage per reply: its episode's)."""
    import torch

    weights = torch.tensor(list(advantages), dtype=logprobs.dtype)
    return -(weights * logprobs).sum() / max(1, len(advantages))


def add_rollout_options(p: argparse.ArgumentParser) -> None:
    """The options every GRPO program shares: how a group of episodes is sampled and scored
    (:func:`cubebench.agents.episode_reward.episode_reward`'s solve plus the shaping)."""
    p.add_argument("--group", type=int, default=8, help="episodes per start and step")
    p.add_argument("--temperature", type=float, default=1.0, help="sampling temperature of the rollouts")
    p.add_argument("--reward", default="sticker", help="the env's dense reward the shaping sums (none, sticker, "
                                                       "face, heuristic)")
    p.add_argument("--shaping-weight", type=float, default=0.5, help="weight of the dense return beside the solve")
