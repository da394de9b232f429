"""Observation wrappers (the four tiers and their text forms) and reward wrappers.

Each depends on the engine only; ``cubebench.make_cube_env`` composes them.
"""

from .observations import FaceViewObservation, NetObservation, SymbolicObservation, VertexViewObservation
from .reward_wrappers import FaceReward, HeuristicReward, PotentialReward, StickerReward, make_reward_wrapper

__all__ = [
    "SymbolicObservation", "NetObservation", "FaceViewObservation", "VertexViewObservation",
    "PotentialReward", "StickerReward", "FaceReward", "HeuristicReward", "make_reward_wrapper",
]
