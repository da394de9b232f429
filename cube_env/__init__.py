"""CubeBench: Gymnasium environments built on one fast Rubik's-cube engine.

Importing the package registers the environment ids ``CubeBench-Symbolic-v0``,
``CubeBench-Visual-v0``, ``CubeBench-Face-v0`` and ``CubeBench-Vertex-v0``.
"""

from importlib.metadata import PackageNotFoundError, version

from .envs.cube_env import CubeEnv
from .envs.registration import TIERS, make_cube_env, register_envs

try:
    __version__ = version("cubebench")
except PackageNotFoundError:  # running from a source tree without installing
    __version__ = "0.0.0+unknown"

register_envs()

__all__ = ["CubeEnv", "TIERS", "make_cube_env", "register_envs", "__version__"]
