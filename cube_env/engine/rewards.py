"""The reward registry: every reward's one name, and the potentials the kernels compute.

Every layer that takes a reward name reads it here: the reward wrappers
(:mod:`cubebench.wrappers.reward_wrappers`), the vector env and its kernels,
:func:`cubebench.make_cube_env` and the ids, the runner's suites and the CLIs.

- ``none``: sparse, 1.0 on the step that solves.  ``sparse`` is an alias
  (accepted everywhere, recorded as ``none``).
- ``sticker``: dense, ``phi`` = stickers matching their face's centre (6..54).
- ``face``: dense, ``phi`` = faces completed (0..6).
- ``heuristic``: dense, ``phi`` = minus the length of the two-phase
  solver's solution (Kociemba's algorithm, counted in the env's metric): the
  paper's "distance estimation via classic solving algorithms", cheap at
  every depth and only an estimate, so probing it is no shortcut to the
  optimal plan.
- ``oracle``: dense, ``phi`` = minus the *exact* optimal distance (the
  optimal solver; its lower bound past a time budget).  An oracle for RL
  research: a model that probes it reads off an optimal plan, so it is not
  for LLM evaluation and the runner refuses it.

``heuristic`` and ``oracle`` are Python-only, so not batched in the vector env.

A dense reward is the potential difference ``phi(next) - phi(current)``.  The
potentials the kernels compute (``sticker``, ``face``) have one
implementation, :func:`potential_of_bits` over
:func:`~cubebench.engine.kernels.centre_bits`: the reward wrappers call it
through :func:`potential`, the vector env's step kernel calls it directly.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba as nb

from .kernels import centre_bits, count_complete_faces, count_in_place

SPARSE_KIND = 0
"""Kernel code of the sparse reward (no potential)."""
STICKER_KIND = 1
"""Kernel code of the stickers-in-place potential."""
FACE_KIND = 2
"""Kernel code of the faces-completed potential."""
PYTHON_KIND = -1
"""Kernel code of a reward the kernels do not compute (its wrapper computes it in Python)."""


@dataclass(frozen=True)
class RewardSpec:
    """One reward: its name, the kernels' code for it, and what it pays."""

    name: str
    kind: int
    summary: str

    @property
    def dense(self) -> bool:
        """A potential difference (else the sparse 1.0 on solving)."""
        return self.kind != SPARSE_KIND

    @property
    def native(self) -> bool:
        """Computed in the kernels, so batched by the vector env."""
        return self.kind != PYTHON_KIND


REWARD_SPECS: dict[str, RewardSpec] = {spec.name: spec for spec in (
    RewardSpec("none", SPARSE_KIND, "sparse: 1.0 on the step that solves (alias: sparse)"),
    RewardSpec("sticker", STICKER_KIND, "dense: phi = stickers matching their face's centre (6..54)"),
    RewardSpec("face", FACE_KIND, "dense: phi = faces completed (0..6)"),
    RewardSpec("heuristic", PYTHON_KIND, "dense: phi = minus the two-phase solver's solution length (an estimate)"),
    RewardSpec("oracle", PYTHON_KIND, "dense, RL research only: phi = minus the exact optimal distance (an oracle)"),
)}
REWARDS: tuple[str, ...] = tuple(REWARD_SPECS)
"""Every reward's name, in table order: ``none``, ``sticker``, ``face``, ``heuristic``, ``oracle``."""
ORACLE_REWARDS: tuple[str, ...] = ("oracle",)
"""Rewards that reveal the exact distance: for RL research, never for evaluating a model that can probe them."""
REWARD_ALIASES: dict[str, str] = {"sparse": "none"}
"""Other names :func:`parse_reward` accepts, and the name each stands for."""
DENSE_REWARDS: tuple[str, ...] = tuple(n for n, s in REWARD_SPECS.items() if s.dense)
NATIVE_REWARDS: tuple[str, ...] = tuple(n for n, s in REWARD_SPECS.items() if s.native)
"""The rewards the vector env computes in its step kernel."""


def parse_reward(name: object) -> str:
    """The registry name of a reward (``sparse`` is ``none``); ``ValueError`` for an unknown one."""
    if name in REWARD_SPECS:
        return str(name)
    if name in REWARD_ALIASES:
        return REWARD_ALIASES[str(name)]
    raise ValueError(f"unknown reward {name!r}; expected one of {', '.join(REWARDS)} "
                     f"({', '.join(f'{a} = {n}' for a, n in REWARD_ALIASES.items())})")


def unalias_reward(name: str) -> str:
    """The name an alias stands for, any other string as it is: argparse's ``type=`` before ``choices=REWARDS``."""
    return REWARD_ALIASES.get(name, name)


@nb.njit(cache=True, nogil=True)
def potential_of_bits(bits, kind):
    """The potential ``phi`` of reward code ``kind`` from a state's :func:`~.kernels.centre_bits`
    (0.0 for the sparse reward)."""
    if kind == STICKER_KIND:
        return float(count_in_place(bits))
    if kind == FACE_KIND:
        return float(count_complete_faces(bits))
    return 0.0


@nb.njit(cache=True, nogil=True)
def potential(state, kind):
    """The potential ``phi`` of reward code ``kind`` (a kernel-computed one) of an engine state."""
    return potential_of_bits(centre_bits(state, False), kind)
