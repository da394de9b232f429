"""Multi-agent cube environments on PettingZoo: split perception, shared hands, self-play.

Three envs on the one engine (each a :class:`~cubebench.envs.CubeEnv` underneath), the tiers
and the certified curriculum; docs/multi-agent.md describes their seats and rules.

=================================  ==========================  =========================================
name                               module                      seats
=================================  ==========================  =========================================
``CubeBench-ObserverActor-v0``     :mod:`.observer_actor`      ``observer_0`` sees, ``actor_0`` turns (AEC)
``CubeBench-TwoCameras-v0``        :mod:`.two_cameras`         ``camera_0``, ``camera_1`` (Parallel)
``CubeBench-ScramblerSolver-v0``   :mod:`.scrambler_solver`    ``scrambler_0`` vs ``solver_0`` (Parallel)
=================================  ==========================  =========================================

Each module follows PettingZoo's layout: ``env(**kwargs)`` (AEC, order-enforced),
``raw_env(**kwargs)`` and ``parallel_env(**kwargs)``; :func:`make_multi_env` builds any of them
by name.  PettingZoo is the optional ``multi`` extra: ``import cubebench`` never imports this
package, and importing it without PettingZoo raises ``ModuleNotFoundError`` naming the extra.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

from ...extras import install_hint

try:
    import pettingzoo  # noqa: F401  (the extra this package needs)
except ModuleNotFoundError as err:  # pragma: no cover - exercised on a minimal install
    raise ModuleNotFoundError(f"cubebench.envs.multi needs PettingZoo: {install_hint('multi')}",
                              name="pettingzoo") from err

from . import observer_actor, scrambler_solver, two_cameras
from .scrambler_solver import SelfPlayCurriculum
from .table import CurriculumGenerator

MULTI_ENVS: dict[str, ModuleType] = {
    observer_actor.NAME: observer_actor,
    two_cameras.NAME: two_cameras,
    scrambler_solver.NAME: scrambler_solver,
}
"""The registered names and the module of each."""


def make_multi_env(name: str, *, parallel: bool = False, **kwargs: Any) -> Any:
    """The env registered as ``name``: its AEC form (``env(**kwargs)``), or with ``parallel=True`` its Parallel form."""
    if name not in MULTI_ENVS:
        raise ValueError(f"unknown multi-agent env {name!r}; expected one of {sorted(MULTI_ENVS)}")
    module = MULTI_ENVS[name]
    return module.parallel_env(**kwargs) if parallel else module.env(**kwargs)


__all__ = ["MULTI_ENVS", "make_multi_env", "observer_actor", "two_cameras", "scrambler_solver",
           "SelfPlayCurriculum", "CurriculumGenerator"]
