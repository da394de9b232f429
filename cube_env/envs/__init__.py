"""Gymnasium environments."""

from .cube_env import CubeEnv

__all__ = ["CubeEnv"]
