"""The tiers' factory: what every registered id builds.

Each id is the core :class:`~cubebench.envs.CubeEnv` plus a reward wrapper and
the tier's observation wrapper, so every tier shares one engine and one action
set.  The ids themselves are registered by entry-point string
(:mod:`cubebench.registration`, run by ``import cubebench``), which names
:func:`make_checked_env` here without importing this module; the tiers' facts
are the registry's (:mod:`cubebench.tiers`).
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym

from cubebench.engine.metric import Metric, metric_argument
from cubebench.engine.rewards import parse_reward
from cubebench.envs.cube_env import INTERACTION_STEPS, CubeEnv
from cubebench.registration import VECTOR_ENTRY_POINT, register_envs  # noqa: F401  (re-exported)
from cubebench.tiers import PARTIAL_TIERS, TIER_SPECS, TIERS, VECTOR_TIERS, TierSpec, tier_spec  # noqa: F401

from . import observations, reward_wrappers

def make_cube_env(
    tier: str = "symbolic",
    *,
    depth: int = 1,
    reward: str = "none",
    metric: Metric | None = None,
    max_steps: int | None = INTERACTION_STEPS,
    render_mode: str | None = None,
    obs_format: str | None = None,
    renderer: str = "painter",
    image_size: int = 224,
    move_frame: str = "held",
    letters: str = "faces",
    debug: bool = False,
    render_view: str = "agent",
    generator: Any = None,
    reward_kwargs: dict[str, Any] | None = None,
    moves: str | None = None,
    max_moves: int | None = None,
    max_rotations: int | None = None,
) -> gym.Env:
    """Build the env of one tier (what ``gym.make`` calls for every id).

    ``obs_format``: Symbolic ``"onehot"`` (default, (54, 6) uint8),
    ``"text"`` (the 54-character string) or ``"indices"`` (54 colour
    indices); Visual, Face and Vertex ``"image"`` (default) or ``"text"``,
    and Face and Vertex also ``"indices"``, their compact form: the colour
    indices of exactly the stickers they show ((9,) and (27,) uint8).
    ``debug=True`` keeps the ground-truth state in ``info`` on the partial tiers.
    ``reward``: a name of :data:`~cubebench.engine.rewards.REWARDS` (``none``,
    alias ``sparse``; ``sticker``; ``face``; ``heuristic``).  ``metric``:
    ``"quarter"`` (12 actions) or ``"half"`` (18); ``moves=`` is its
    deprecated spelling (``"face"`` for ``"half"``), still read with a
    ``FutureWarning``.  ``max_moves`` and ``max_rotations``: the episode's
    face-turn and view-rotation budgets (:class:`~cubebench.envs.CubeEnv`;
    ``None``: unbounded).  ``render_view`` (Face, Vertex): what ``render()``
    draws in ``rgb_array`` mode, ``"agent"`` (the tier's image at ``image_size``)
    or ``"net"`` (the whole net).

    A tier option that the tier does not read (:data:`TIER_OPTIONS`: ``renderer``
    outside Vertex, ``letters`` outside Symbolic, ``image_size`` on Symbolic...)
    is a ``ValueError`` when given any value but its default, rather than
    ignored: a misspelt experiment fails at ``gym.make``.
    """
    spec = tier_spec(tier)
    wrapper = getattr(observations, spec.wrapper)
    _refuse_unread(spec, wrapper, {"image_size": image_size, "renderer": renderer, "letters": letters,
                                   "debug": debug, "render_view": render_view})
    reward = parse_reward(reward)
    metric = metric_argument(metric, moves)
    form = obs_format or spec.forms[0]
    if form not in spec.forms:
        raise ValueError(f"form must be one of {spec.forms}, got {form!r}")
    env: gym.Env = CubeEnv(
        depth=depth,
        metric=metric,
        view_actions=spec.partial,
        move_frame=move_frame,
        max_steps=max_steps,
        render_mode=render_mode,
        generator=generator,
        obs_format="onehot" if form == "onehot" else "indices",  # the core makes the one-hot form itself
        max_moves=max_moves,
        max_rotations=max_rotations,
    )
    env = reward_wrappers.make_reward_wrapper(env, reward, **(reward_kwargs or {}))
    options = observations.WrapperOptions(form=form, size=image_size, debug=debug, renderer=renderer, letters=letters,
                                          render_view=render_view)
    return wrapper.build(env, spec, options)


TIER_OPTIONS: dict[str, Any] = {"image_size": 224, "renderer": "painter", "letters": "faces", "debug": False,
                                "render_view": "agent"}
"""The options of :func:`make_cube_env` that only some tiers read (each tier's wrapper class says which:
``reads``), with their defaults."""


def tier_reads(tier: str) -> tuple[str, ...]:
    """The options of :data:`TIER_OPTIONS` that ``tier`` reads (a caller that sets an option for every tier, such
    as the runner's ``--renderer``, passes it only to the tiers that read it)."""
    spec = tier_spec(tier)
    return tuple(getattr(observations, spec.wrapper).reads(spec))


def _refuse_unread(spec: TierSpec, wrapper: Any, given: dict[str, Any]) -> None:
    """A ``ValueError`` naming the first option in ``given`` set away from its default that ``spec``'s wrapper
    does not read, and the tiers that do read it."""
    reads = wrapper.reads(spec)
    for name, value in given.items():
        if name in reads or _is_default(value, TIER_OPTIONS[name]):
            continue
        readers = [t.title for t in TIER_SPECS.values() if name in getattr(observations, t.wrapper).reads(t)]
        raise ValueError(f"{spec.env_id} does not read {name}={value!r}: {name} is an option of "
                         f"{_and(readers) or 'no tier'}; the {spec.title} tier's options are "
                         f"obs_format, {', '.join(reads)}")


def _is_default(value: Any, default: Any) -> bool:
    """Whether ``value`` is ``default`` (``True`` is not ``1``; what cannot be compared, an array, is not)."""
    if isinstance(default, bool) or isinstance(value, bool):
        return value is default
    try:
        return bool(value == default)
    except (TypeError, ValueError):
        return False


def _and(names: list[str]) -> str:
    return " and ".join(names) if len(names) < 3 else f"{', '.join(names[:-1])} and {names[-1]}"


class RetryingPassiveEnvChecker(gym.wrappers.PassiveEnvChecker):
    """Gymnasium's passive env checker, but a first ``reset`` that raises is checked again next time.

    Gymnasium 1.4's checker marks its reset check done before the reset runs,
    so after a refused first reset (bad options) it keeps no reset data and
    its first ``step`` fails with ``TypeError`` inside
    ``env_data_reuse_passive_checker`` (its ``previous_data`` is ``None``).
    The registered ids use this checker instead (``disable_env_checker=True``
    on the spec keeps ``gym.make`` from adding the stock one).
    """

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        first = not self.checked_reset
        try:
            return super().reset(seed=seed, options=options)
        except BaseException:
            if first:
                self.checked_reset = False
            raise


def make_checked_env(**kwargs: Any) -> gym.Env:
    """The registered ids' entry point: :func:`make_cube_env` under :class:`RetryingPassiveEnvChecker`."""
    return RetryingPassiveEnvChecker(make_cube_env(**kwargs))
