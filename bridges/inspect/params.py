"""Task parameters (``inspect eval ... -T name=value``) read into the runner's suites.

A task's parameters select a grid from a shipped suite and override its fields; the result goes
through the runner's own suite validation (:func:`~cubebench.runner.protocols.episodes.suite.suite_from_dict`,
:func:`~cubebench.runner.protocols.questions.suite.question_suite_from_dict`), so a bad value fails with the
same clear :class:`~cubebench.runner.suite_fields.SuiteError` a suite file would, before any sample runs.

``-T`` values arrive as YAML scalars or lists: ``-T depths=1``, ``-T depths=[1,2]`` and
``-T depths=1,2`` all work (a comma-separated string is split).
"""

from __future__ import annotations

from typing import Any

from cubebench.runner import load_suite, question_suite_from_dict, QuestionSuite, Suite, suite_from_dict, SuiteError
from cubebench.tasks.registry import TESTS

__all__ = ["listed", "check_flag", "episode_suite", "question_suite", "PARAMS_SOURCE"]

PARAMS_SOURCE = "inspect task parameters"
"""How errors name where a bad value came from."""
QUESTION_DEPTHS = (1, 2, 3)
QUESTION_ITEMS = 5
"""A question grid built from test names alone (no ``suite``): depths 1-3, five items each, in half turns."""


def listed(value: Any, name: str, kind: type = str) -> list[Any] | None:
    """``value`` as a list of ``kind`` (``None`` stays ``None``): a list, one value, or a comma-separated string."""
    if value is None:
        return None
    items = [v.strip() for v in value.split(",")] if isinstance(value, str) else value
    items = list(items) if isinstance(items, (list, tuple)) else [items]
    if not items or any(v == "" for v in items):
        raise SuiteError(f"{PARAMS_SOURCE}: {name} must name at least one value, got {value!r}")
    if kind is int and not all(isinstance(v, int) and not isinstance(v, bool) or isinstance(v, str) and v.isdigit()
                               for v in items):
        raise SuiteError(f"{PARAMS_SOURCE}: {name} must be integers, got {value!r}")
    return [kind(v) for v in items]


def check_flag(value: Any, name: str) -> None:
    """A yes/no parameter must be one (``-T send_images=false``): a stray word must not read as true."""
    if not isinstance(value, bool):
        raise SuiteError(f"{PARAMS_SOURCE}: {name} must be true or false, got {value!r}")


def episode_suite(suite: str = "exp1", *, tier: Any = None, depths: Any = None, horizon: Any = None,
                  instances: int | None = None, reward: Any = None, tool_setting: Any = None,
                  metric: str | None = None, max_steps: int | None = None, max_moves: int | None = None,
                  max_rotations: int | None = None, seed: int | None = None) -> Suite:
    """The episode grid of a shipped suite (``exp1``, ``exp2``, ``exp3``, ``smoke``, ``full``) or suite file,
    narrowed and overridden by the task's parameters (see ``docs/ecosystem.md``)."""
    base = load_suite(suite)
    if not isinstance(base, Suite):
        raise SuiteError(f"{PARAMS_SOURCE}: suite {suite!r} is not an episode suite: a question suite runs with "
                         "cubebench/questions; a multi-agent suite runs with `cubebench run` only")
    data = base.to_dict()
    if metric is not None and metric != base.metric and max_moves is None:
        data.pop("max_moves")  # the new metric's default budget, not the old metric's number
    chosen_depths = listed(depths, "depths", int)
    if horizon is not None:
        names = listed(horizon, "horizon")
        assert names is not None
        unknown = [h for h in names if h not in base.horizons]
        if unknown:
            raise SuiteError(f"{PARAMS_SOURCE}: horizon {unknown} is not one of the suite's {sorted(base.horizons)}")
        in_horizon = [d for h in names for d in base.horizons[h]]
        if chosen_depths is not None and set(chosen_depths) - set(in_horizon):
            raise SuiteError(f"{PARAMS_SOURCE}: depths {sorted(set(chosen_depths) - set(in_horizon))} are not in "
                             f"horizon {names} (depths {in_horizon})")
        chosen_depths = chosen_depths or in_horizon
    overrides = {"tiers": listed(tier, "tier"), "depths": chosen_depths, "rewards": listed(reward, "reward"),
                 "tool_settings": listed(tool_setting, "tool_setting"), "instances": instances, "metric": metric,
                 "max_steps": max_steps, "max_moves": max_moves, "max_rotations": max_rotations, "seed": seed}
    data.update({k: v for k, v in overrides.items() if v is not None})
    if chosen_depths is not None:
        data["name"] = f"{base.name}[inspect]"
    return suite_from_dict(data, source=PARAMS_SOURCE)


def question_suite(suite: str | None = None, *, tests: Any = None, depths: Any = None, items: int | None = None,
                   variants: Any = None, metric: str | None = None, seed: int | None = None) -> QuestionSuite:
    """The question grid of a shipped question suite (``cube-bench``, ``cube-bench-smoke``...), or, without
    ``suite``, of the registered tests named (every test in :data:`~cubebench.tasks.registry.TESTS` by default),
    narrowed and overridden by the task's parameters.  ``variants`` applies to every test chosen."""
    names = listed(tests, "tests")
    if suite is not None:
        base = load_suite(suite)
        if not isinstance(base, QuestionSuite):
            raise SuiteError(f"{PARAMS_SOURCE}: suite {suite!r} is not a question suite: an episode suite runs with "
                             "cubebench/episode; a multi-agent suite runs with `cubebench run` only")
        data = base.to_dict()
        grids = data["tests"]
        missing = [n for n in names or () if n not in grids]
        if missing:
            raise SuiteError(f"{PARAMS_SOURCE}: suite {suite!r} has no test {missing}; it has {list(grids)}")
        grids = {n: g for n, g in grids.items() if names is None or n in names}
        ladders = [n for n, g in grids.items() if "ladder" in g]
        if ladders:
            raise SuiteError(f"{PARAMS_SOURCE}: suite {suite!r} plays {ladders} as ladders, whose rounds depend on the "
                             "answers before them: an Inspect dataset is fixed in advance. Play the ladder with "
                             f"`cubebench run --suite {suite}`, or ask fixed levels here: "
                             f"-T tests={ladders[0]} -T depths=1,2,3")
    else:
        data = {"schema": "cubebench-questions/1", "name": "inspect", "metric": "half"}
        unknown = [n for n in names or () if n not in TESTS]
        if unknown:
            raise SuiteError(f"{PARAMS_SOURCE}: unknown test {unknown}; known: {', '.join(TESTS)}")
        grids = {n: {"depths": _default_depths(n, metric or "half"), "items": QUESTION_ITEMS} for n in names or TESTS}
    chosen_depths = listed(depths, "depths", int)
    chosen_variants = listed(variants, "variants")
    for grid in grids.values():
        if chosen_depths is not None:
            grid["depths"] = chosen_depths
        if items is not None:
            grid["items"] = items
        if chosen_variants is not None:
            grid["variants"] = chosen_variants
            if "variant_items" in grid:  # a suite's fewer items per variant, for the variants still asked
                grid["variant_items"] = {v: n for v, n in grid["variant_items"].items() if v in chosen_variants}
    data.update({"tests": grids, **{k: v for k, v in (("metric", metric), ("seed", seed)) if v is not None}})
    return question_suite_from_dict(data, source=PARAMS_SOURCE)


def _default_depths(name: str, metric: str) -> list[int]:
    """The default depths (:data:`QUESTION_DEPTHS`) that test ``name`` can build items at."""
    test, found = TESTS[name], []
    for depth in QUESTION_DEPTHS:
        try:
            test.check_depth(depth, metric)
        except ValueError:
            continue
        found.append(depth)
    return found
