"""CubeBench: Gymnasium environments built on one fast Rubik's-cube engine.

Importing the package registers the environment ids ``CubeBench-Symbolic-v0``,
``CubeBench-Visual-v0``, ``CubeBench-Face-v0`` and ``CubeBench-Vertex-v0``
(``gym.make("cubebench:CubeBench-Vertex-v0")`` imports it for you).  The
subpackages are the layers of docs/architecture.md: ``engine`` (with
``render``, ``solver``, ``curriculum``) <- ``envs`` <- ``wrappers`` <- ``agents``
<- ``runner``; this module sits at the wrappers layer (it registers the tiers).
"""

from importlib.metadata import PackageNotFoundError, version

from .envs.cube_env import CubeEnv
from .wrappers.tiers import TIERS, make_cube_env, register_envs

try:
    __version__ = version("cubebench")
except PackageNotFoundError:  # running from a source tree without installing
    __version__ = "0.0.0+unknown"

register_envs()

__all__ = ["CubeEnv", "TIERS", "make_cube_env", "register_envs", "__version__"]
