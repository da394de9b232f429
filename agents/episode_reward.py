"""The reward an episode earns when a model is trained on it: 1 for a solve, plus a weight times its dense return.

One definition for every place that trains on episodes: the verifiers bridge's rubric
(``cubebench.bridges.verifiers``) and the GRPO programs (``cubebench.training``) score an episode record with
:func:`episode_rewards`, so a policy trained here and one trained through verifiers chase the same number.
"""

from __future__ import annotations

from .records import EpisodeRecord

__all__ = ["solved", "shaping", "episode_rewards", "episode_reward"]


def solved(record: EpisodeRecord | None) -> float:
    """1.0 when the episode solved the cube within its budgets, else 0.0 (also when it never ran)."""
    return float(record is not None and record.solved)


def shaping(record: EpisodeRecord | None) -> float:
    """The episode's return under the env's reward: the sum of ``phi(s_{t+1}) - phi(s_t)`` over every move
    (dense under ``sticker``/``face``/``heuristic``, :mod:`cubebench.wrappers.reward_wrappers`)."""
    return float(record.total_reward) if record is not None else 0.0


def episode_rewards(record: EpisodeRecord | None, shaping_weight: float) -> dict[str, tuple[float, float]]:
    """The episode's rewards as ``{name: (value, weight)}``: ``solved`` (1) and, with a positive
    ``shaping_weight``, ``shaping``; the reward is their weighted sum (:func:`episode_reward`)."""
    out = {"solved": (solved(record), 1.0)}
    if shaping_weight > 0:
        out["shaping"] = (shaping(record), float(shaping_weight))
    return out


def episode_reward(record: EpisodeRecord | None, shaping_weight: float) -> float:
    """The weighted sum of :func:`episode_rewards`."""
    return sum(value * weight for value, weight in episode_rewards(record, shaping_weight).values())
