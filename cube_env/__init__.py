"""CubeBench: Gymnasium environments built on one fast Rubik's-cube engine.

Importing the package registers the environment ids ``CubeBench-Symbolic-v0``,
``CubeBench-Visual-v0``, ``CubeBench-Face-v0`` and ``CubeBench-Vertex-v0``
(``gym.make("cubebench:CubeBench-Vertex-v0")`` imports it for you).  The
subpackages are the layers of docs/architecture.md: ``engine`` (with
``render``, ``solver``, ``curriculum``, the tier registry ``tiers``) <- ``envs``
<- ``wrappers`` <- ``agents`` <- ``runner`` <- ``bridges``.

The ids are registered by entry-point strings (:mod:`cubebench.registration`),
and ``CubeEnv`` and ``make_cube_env`` are loaded on first use, so importing the
package (or ``cubebench.engine``) loads neither the wrappers nor Gymnasium.
"""

from __future__ import annotations

import importlib
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from .registration import register_envs, register_when_gymnasium_loads
from .tiers import TIERS

try:
    __version__ = version("cubebench")
except PackageNotFoundError:  # running from a source tree without installing
    __version__ = "0.0.0+unknown"

register_when_gymnasium_loads()

_LAZY = {"CubeEnv": "cubebench.envs.cube_env", "make_cube_env": "cubebench.wrappers.tier_envs"}
"""Public names loaded on first use (PEP 562): they need Gymnasium, which ``import cubebench`` does not load."""


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'cubebench' has no attribute {name!r}")


def __dir__() -> list[str]:
    """The public names and the loaded subpackages: no helper this module imports (``importlib``, ``Any``)."""
    loaded = {name for name, value in globals().items()
              if getattr(value, "__name__", "").startswith(f"{__name__}.") and hasattr(value, "__path__")}
    return sorted(set(__all__) | loaded)


__all__ = ["CubeEnv", "TIERS", "make_cube_env", "register_envs", "__version__"]
