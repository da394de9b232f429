"""The Gymnasium ids, registered by entry-point strings, without importing Gymnasium or the wrappers.

Gymnasium registers its own envs the same way: ``register(id, entry_point="module:callable")``
names the constructor, and ``gym.make`` imports it on first use.  So ``import cubebench`` (and
``import cubebench.engine``, which runs it) loads neither the wrappers nor Gymnasium itself:

- if Gymnasium is already imported, the ids are registered at once;
- otherwise :func:`register_when_gymnasium_loads` puts a finder on ``sys.meta_path`` that waits
  for ``import gymnasium`` and registers the ids right after Gymnasium's own module has run, then
  takes itself off.  ``gym.make("CubeBench-Symbolic-v0")`` after ``import cubebench`` works in
  either order, and ``gym.make("cubebench:CubeBench-Symbolic-v0")`` imports ``cubebench`` for you.

The ids and which tiers have a batched env come from the tier registry (:mod:`cubebench.tiers`).
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys
from importlib.machinery import ModuleSpec
from types import ModuleType
from typing import Any, Sequence

from .tiers import TIER_SPECS

ENTRY_POINT = "cubebench.wrappers.tier_envs:make_checked_env"
"""Every tier id's constructor: ``make_cube_env`` under the passive checker (``kwargs={"tier": ...}``)."""
VECTOR_ENTRY_POINT = "cubebench.envs.vector_env:CubeVectorEnv"
"""The batched constructor of the tiers with :attr:`~cubebench.tiers.TierSpec.vector`."""


def register_envs() -> None:
    """Register every tier's id with Gymnasium (idempotent); this imports Gymnasium."""
    import gymnasium as gym

    for tier, spec in TIER_SPECS.items():
        if spec.env_id not in gym.registry:
            gym.register(
                id=spec.env_id,
                entry_point=ENTRY_POINT,
                vector_entry_point=VECTOR_ENTRY_POINT if spec.vector else None,
                kwargs={"tier": tier},
                disable_env_checker=True,  # make_checked_env adds the checker (RetryingPassiveEnvChecker)
            )


class _RegisterAfterGymnasium(importlib.abc.MetaPathFinder):
    """Finds nothing itself: on ``import gymnasium`` it wraps the real loader so the ids are registered
    once Gymnasium's module has run, and leaves ``sys.meta_path``."""

    def find_spec(self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
                  ) -> ModuleSpec | None:
        if fullname != "gymnasium":
            return None
        if self in sys.meta_path:
            sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        run = spec.loader.exec_module

        def exec_module(module: ModuleType, _run: Any = run) -> None:
            _run(module)
            register_envs()

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def register_when_gymnasium_loads() -> None:
    """Register the ids now if Gymnasium is imported, else as soon as it is."""
    if "gymnasium" in sys.modules:
        register_envs()
    elif not any(isinstance(f, _RegisterAfterGymnasium) for f in sys.meta_path):
        sys.meta_path.insert(0, _RegisterAfterGymnasium())


__all__ = ["ENTRY_POINT", "VECTOR_ENTRY_POINT", "register_envs", "register_when_gymnasium_loads"]
