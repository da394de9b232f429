"""The one cube every seat of a multi-agent env sits around: the core ``CubeEnv`` and its start states.

No second cube: :class:`SharedCube` holds a :class:`~cubebench.envs.CubeEnv` (the engine's
kernels, validation, move and rotation budgets, certified resets) and exposes what the
multi-agent envs need: act by action name, the held colours, the budgets left.  Face turns are
in the core's ``move_frame="global"``: a turn is named by the colour of the face's centre
(``U`` turns the white-centred face, ``F`` the green one), whichever way a seat has turned the
cube to look at it, so seats that look from different sides name the same turn the same way.

Start states come from :class:`CurriculumGenerator`: a seeded draw from the shipped certified
instance set of the depth and metric (``benchmarks/instances``: exact optimal distance,
no solver tables needed); a depth with no shipped set is certified on the spot by the exact
optimal solver, as the single-agent envs do.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...engine.metric import Metric, parse_metric
from ...engine.state import canonical
from ...generators import CertifiedGenerator, Generator, Instance, NoInstanceSetError, shipped_instances
from ..cube_env import CubeEnv

RESET_OPTIONS = ("state", "scramble", "depth", "instance")
"""The reset options the multi-agent envs read (as the single-agent ones); others are ignored with a warning."""


class CurriculumGenerator:
    """Start states from the certified curriculum: a seeded draw from the shipped set of the depth.

    ``instance(depth, metric, k)`` is the k-th shipped instance (``reset(options={"instance": k})``).
    """

    def __init__(self) -> None:
        self._certified = CertifiedGenerator()

    def __call__(self, depth: int, metric: str, rng: np.random.Generator) -> Instance:
        try:
            count = len(shipped_instances(parse_metric(metric), depth))
        except NoInstanceSetError:
            return self._certified(depth, metric, rng)  # no shipped set: certify a fresh scramble
        return self._certified.instance(depth, metric, int(rng.integers(count)))

    def instance(self, depth: int, metric: str, index: int) -> Instance:
        return self._certified.instance(depth, metric, index)


@dataclass(frozen=True)
class Outcome:
    """What one action did to the shared cube: why it was refused (if it was), and whether the core ended the episode."""

    refused: str | None = None
    truncated: bool = False


class SharedCube:
    """The core env behind a multi-agent env, in the global move frame, with a move and a rotation budget."""

    def __init__(
        self,
        depth: int,
        metric: Metric | str,
        view_actions: bool,
        max_moves: int | None,
        max_rotations: int | None,
        generator: Generator | None = None,
    ) -> None:
        self.core = CubeEnv(
            depth=depth, metric=parse_metric(metric), view_actions=view_actions, move_frame="global", max_steps=None,
            max_moves=max_moves, max_rotations=max_rotations if view_actions else None,
            generator=generator or CurriculumGenerator(),
        )
        self._index = {name: k for k, name in enumerate(self.core.action_names)}
        self.turn_names: tuple[str, ...] = self.core.action_names[: self.core.n_turns]
        self.view_names: tuple[str, ...] = self.core.action_names[self.core.n_turns:]

    @property
    def metric(self) -> Metric:
        return self.core.metric

    def reset(self, seed: int | None, options: dict[str, Any] | None) -> Instance:
        """Reset the core (the options of :data:`RESET_OPTIONS`; others are ignored with a warning)."""
        if options is not None and not isinstance(options, dict):
            raise ValueError(f"reset options must be a dict, got {type(options).__name__}")
        options = dict(options or {})
        ignored = sorted(str(k) for k in options if k not in RESET_OPTIONS)
        if ignored:
            warnings.warn(f"reset options {ignored} are not read by this env (it reads {RESET_OPTIONS})", stacklevel=3)
        self.core.reset(seed=seed, options={k: v for k, v in options.items() if k in RESET_OPTIONS})
        assert self.core.instance is not None
        return self.core.instance

    def restart(self, state: np.ndarray, max_moves: int | None, max_rotations: int | None,
                seed: int | None = None) -> None:
        """Start over from ``state`` with fresh budgets (a new game; the solver's phase after the scrambler's)."""
        self.core.set_budget(max_moves, max_rotations if self.core.view_actions else None)
        self.core.reset(seed=seed, options={"state": state})

    def act(self, name: str) -> Outcome:
        """Take the core action ``name`` (a face turn or a view rotation)."""
        _, _, _, truncated, info = self.core.step(self._index[name])
        return Outcome(refused=info.get("refused"), truncated=bool(truncated))

    @property
    def colours(self) -> np.ndarray:
        """The held cube's 54 colour indices (a new array)."""
        return self.core.state // 9

    @property
    def reference_colours(self) -> np.ndarray:
        """The cube's colours turned to reference orientation (centres home): how pictures of the truth show it,
        whichever way a seat has turned it to look."""
        return canonical(self.core.state) // 9

    @property
    def solved(self) -> bool:
        return self.core.is_solved

    @property
    def moves(self) -> int:
        return self.core.moves

    def moves_left(self) -> int:
        return -1 if self.core.max_moves is None else self.core.max_moves - self.core.moves

    def rotations_left(self) -> int:
        return -1 if self.core.max_rotations is None else self.core.max_rotations - self.core.rotations

    def spent(self) -> bool:
        """Whether the move budget is used up (no face turn can solve the cube any more)."""
        return self.core.max_moves is not None and self.core.moves >= self.core.max_moves


__all__ = ["SharedCube", "CurriculumGenerator", "Outcome", "RESET_OPTIONS"]
