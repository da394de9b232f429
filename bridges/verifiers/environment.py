"""``load_environment``: CubeBench episodes as a verifiers environment, under the installed verifiers' API.

verifiers 0.2-0.3 (``vf.MultiTurnEnv``) get :class:`~.multiturn.CubeBenchEnv`, with both splits as
``dataset`` and ``eval_dataset``; verifiers 0.4 (``verifiers.v1``) gets :class:`~.taskset.CubeBenchEnv`
over one split (``split="train"`` or ``"eval"``).  The arguments, the episodes, the rows and the scores are
the same (:mod:`.game`, :mod:`.dataset`); only the adapter differs.
"""

from __future__ import annotations

import importlib
from typing import Any, Sequence

import verifiers

from cubebench.agents.episode import DEFAULT_MAX_STEPS
from cubebench.tiers import DEFAULT_TIER

from .game import options

__all__ = ["ADAPTER", "API", "QUESTION_ADAPTER", "load_environment"]

API = "multiturn" if hasattr(verifiers, "MultiTurnEnv") else "v1"
"""Which verifiers API is installed: ``"multiturn"`` (0.2-0.3) or ``"v1"`` (0.4, ``verifiers.v1``)."""

ADAPTER = importlib.import_module(f".{'taskset' if API == 'v1' else 'multiturn'}", __package__)
"""The adapter of the installed API, :mod:`.taskset` (0.4) or :mod:`.multiturn` (0.3): the other one does not
import there.  Each has ``CubeBenchEnv`` and ``build(options, ...)``."""
QUESTION_ADAPTER = importlib.import_module(f".{'question_taskset' if API == 'v1' else 'multiturn'}", __package__)
"""The question environment's adapter (:mod:`.questions`): :mod:`.question_taskset` (0.4) or :mod:`.multiturn`
(0.3); each has ``build_questions(args, split, ...)``."""


def load_environment(tier: str = DEFAULT_TIER, depths: Sequence[int] = (1, 2, 3, 4), instances: int = 20,
                     eval_instances: int = 5, reward: str = "none", shaping_weight: float | None = None,
                     tool_setting: str = "basic", metric: str = "quarter", max_steps: int = DEFAULT_MAX_STEPS,
                     max_moves: int | None = None, max_rotations: int | None = None, seed: int = 0,
                     instance_source: str = "certified", max_tokens: int = 256, split: str | None = None,
                     **kwargs: Any) -> Any:
    """CubeBench episodes as a verifiers environment (see the module docstring and docs/ecosystem.md).

    - ``tier``: ``symbolic``, or ``visual``/``face``/``vertex`` in their text forms;
    - ``depths``, ``instances``, ``eval_instances``: certified optimal depths (in ``metric``) and how many
      instances of each train and evaluate (the next instances: no start state is in both); a depth with
      fewer start states than asked gives what exists, train first, with a
      :class:`~.dataset.RowShortfallWarning`; ``instance_source="scramble"`` uses seeded scrambles instead;
    - ``reward``: the env's reward, ``none`` (sparse) or a dense one (``sticker``, ``face``, ``heuristic``);
      ``shaping_weight`` weighs the dense return in the reward (default 1 under a dense reward, 0 otherwise);
    - ``tool_setting``: ``basic``, ``standard`` or ``ideal`` (which solvers the agent may call);
    - ``max_steps`` (model turns), ``max_moves`` (face turns in ``metric``; default each depth's own,
      :func:`cubebench.budgets.move_budget`), ``max_rotations`` (partial tiers): the episode's budgets, enforced by the env;
    - ``seed``: the suite seed (env and agent seeds of every episode); ``max_tokens``: per model call;
    - ``split`` (verifiers 0.4 only): ``train`` (default) or ``eval``, the split the taskset holds.

    Other keyword arguments go to ``vf.MultiTurnEnv`` (0.3) or the environment's config (0.4: ``player``,
    ``timeout``, ...).  A bad value raises ``ValueError`` or the runner's ``SuiteError`` naming it.
    """
    opts = options(tier=tier, depths=depths, instances=instances, eval_instances=eval_instances, reward=reward,
                   shaping_weight=shaping_weight, tool_setting=tool_setting, metric=metric, max_steps=max_steps,
                   max_moves=max_moves, max_rotations=max_rotations, seed=seed, instance_source=instance_source,
                   max_tokens=max_tokens)
    if API == "v1":
        if split not in (None, "train", "eval"):
            raise ValueError(f"split must be 'train' or 'eval', got {split!r}")
        return ADAPTER.build(opts, split or "train", **kwargs)
    if split is not None:
        raise ValueError("split is for verifiers 0.4; under verifiers 0.3 the environment holds both splits "
                         "(dataset and eval_dataset)")
    return ADAPTER.build(opts, **kwargs)
