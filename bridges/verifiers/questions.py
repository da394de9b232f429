"""``load_environment`` of the question environment: a question suite's one-question items as a verifiers
environment, one model call per row, scored by the benchmark's own verdict under the row's answer rules.

The rows and verdicts are :mod:`.question_rows` (``cubebench export-tasks --kind items --images none`` rows, asked
under ``rules``: default the suite's first, ``paper``, as ``cubebench run``); :mod:`.multiturn` (verifiers
0.2-0.3) puts them behind a ``vf.SingleTurnEnv``, :mod:`.question_taskset` (0.4) behind a ``verifiers.v1``
taskset.  Under 0.3, ``vf.load_environment("cubebench.bridges.verifiers.questions", ...)`` finds
:func:`load_environment` by module name.
"""

from __future__ import annotations

from typing import Any, Sequence

from .environment import QUESTION_ADAPTER
from .question_rows import DEFAULT_SUITE, QuestionOptions, judge, question_options

__all__ = ["DEFAULT_SUITE", "QuestionOptions", "judge", "load_environment", "question_options"]


def load_environment(suite: str = DEFAULT_SUITE, rules: str | None = None, tests: Sequence[str] | None = None,
                     depths: Sequence[int] | None = None, items: int | None = None,
                     variants: Sequence[str] | None = None, train_fraction: float = 0.9, seed: int = 0,
                     max_tokens: int | None = None, split: str | None = None, protocol: str | None = None,
                     **kwargs: Any) -> Any:
    """A question suite's one-question items as a verifiers environment (see the module docstring): ``suite``
    (``cube-bench``, ``cube-bench-smoke``, ``stare``, ``stare-smoke``, ``inf-bench`` with ``depths``, a file),
    ``rules`` (default the suite's first, ``paper``), ``tests``, ``depths``, ``items`` (per test and depth),
    ``variants``, ``train_fraction`` and ``seed`` (the split, by start state or item group), ``max_tokens`` (per
    reply; default a run's for the exported tests under the rules), and ``split`` (verifiers 0.4 only: ``train``, the
    default, or ``eval``); ``protocol`` is the old name of ``rules``, still read.  Other keyword arguments go to
    ``vf.SingleTurnEnv`` (0.3) or the environment's config (0.4: ``agent``, ``timeout``, ...).  A bad value raises
    ``ValueError`` naming it."""
    args = {"suite": suite, "rules": rules if rules is not None else protocol, "tests": tests, "depths": depths,
            "items": items, "variants": variants, "train_fraction": train_fraction, "seed": seed, "max_tokens": max_tokens}
    return QUESTION_ADAPTER.build_questions(args, split, **kwargs)
