"""Episode suites as data: the CubeBench grid and its named sub-suites.

A suite is a JSON file (schema ``cubebench-suite/1``, documented in ``docs/runner.md``) naming the grid to run:
tiers x depths x instances x rewards x tool settings, the metric the depths are measured in, the step budget, the
episode's move and rotation budgets and a seed.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Callable, ClassVar

from cubebench.agents.base import TOOL_SETTINGS
from cubebench.budgets import DEFAULT_MAX_ROTATIONS, move_budget
from cubebench.engine.metric import Metric
from cubebench.engine.rewards import ORACLE_REWARDS, REWARDS, unalias_reward
from cubebench.envs.cube_env import INTERACTION_STEPS
from cubebench.tasks.rules import PAPER, STRICT
from cubebench.tiers import TIER_SPECS

from ...suite_fields import SuiteError, check_int, check_ints, check_name, check_one_of, suite_metric

SCHEMA = "cubebench-suite/1"
TIER_NAMES = tuple(TIER_SPECS)
"""Tier names in table order (the registered ids' order)."""
EVAL_REWARDS = tuple(r for r in REWARDS if r not in ORACLE_REWARDS)
"""The rewards a suite may evaluate agents with: not the oracle (a model probing it reads off the optimal plan)."""
INSTANCE_SOURCES = ("certified", "scramble")
INSTANCE_CLASSES = ("any", "private")
DEFAULT_HORIZONS = {"short": [1, 2, 3, 4], "long": [8, 12, 16, 20]}
EPISODE_RULES: dict[str, str] = {
    PAPER: (f"the CubeBench paper's budget: its interaction steps (the suite's max_steps, {INTERACTION_STEPS}) and no move or view-rotation "
            "cap, as its published numbers were made; a blind walk of that length solves every start within 4 turns "
            "(the report's blind floor)"),
    STRICT: ("our move budget per depth (cubebench.budgets.move_budget) and the suite's view-rotation budget, besides "
             "its interaction steps: a blind walk solves at most 5 % of generated starts at every depth >= 2"),
}
"""The rules an episode suite plays under (``--rules``), the default first: the names a question suite's answer
rules have, chosen the same way (:func:`~.answering.chosen_rules`); for episodes they choose the budget."""


@dataclass(frozen=True)
class Suite:
    """One benchmark grid (see the module docstring and ``docs/runner.md``)."""

    protocol: ClassVar[str] = "episodes"
    """What a run of it plays (the name of its :mod:`~.protocols` protocol)."""

    name: str
    tiers: tuple[str, ...]
    depths: tuple[int, ...]
    instances: int
    rewards: tuple[str, ...]
    tool_settings: tuple[str, ...]
    metric: Metric = "quarter"
    max_steps: int = INTERACTION_STEPS
    max_moves: int | None = None
    """The episode's move budget (face turns in ``metric``) at every depth under the ``strict`` rules; ``None``
    (the shipped suites): each depth's own, :func:`cubebench.budgets.move_budget` (5 quarter turns at depths 1-2,
    22 at 3, 40 from 4).  ``paper`` plays no move budget; a suite that sets one plays ``strict`` only."""
    max_rotations: int = DEFAULT_MAX_ROTATIONS
    """The episode's view-rotation budget on the Face and Vertex tiers."""
    seed: int = 0
    instance_source: str = "certified"
    instance_classes: str = "any"
    """``any``, or ``private``: a private draw (seed not 0) skips every candidate whose symmetry class is public (a
    shipped start or question item seen from another side or in a mirror; :mod:`.private_classes`)."""
    horizons: dict[str, list[int]] = field(default_factory=lambda: dict(DEFAULT_HORIZONS))
    description: str = ""

    @property
    def rule_sets(self) -> tuple[str, ...]:
        """The rules a run of the suite may play under (:data:`EPISODE_RULES`), the default (``paper``)
        first; a suite that fixes ``max_moves`` has chosen a budget, so it plays ``strict`` only."""
        return tuple(EPISODE_RULES) if self.max_moves is None else (STRICT,)

    def move_budget(self, depth: int) -> int:
        """The move budget of an episode at ``depth``: the suite's ``max_moves``, else the depth's own."""
        return self.max_moves if self.max_moves is not None else move_budget(depth, self.metric)

    def horizon(self, depth: int) -> str:
        """The horizon (``short``/``long`` or a user-named group) a depth belongs to."""
        for name, depths in self.horizons.items():
            if depth in depths:
                return name
        return "short" if depth <= 4 else "long"

    @property
    def size(self) -> int:
        """Number of episodes in the grid."""
        return (len(self.tiers) * len(self.depths) * self.instances * len(self.rewards)
                * len(self.tool_settings))

    @property
    def planned_at_start(self) -> int:
        """How many rows planning it makes at once (its size)."""
        return self.size

    def to_dict(self) -> dict[str, Any]:
        """The suite as it would be written in a suite file."""
        data = asdict(self)
        if data["instance_classes"] == "any":  # the default is left out: suite files and older runs never wrote it
            del data["instance_classes"]
        return {"schema": SCHEMA, **{k: list(v) if isinstance(v, tuple) else v for k, v in data.items()}}


def restrict(suite: Suite, tiers: list[str] | None = None, depths: list[int] | None = None) -> Suite:
    """The part of ``suite`` on the given tiers and depths (``None`` keeps all); the name says so."""
    if not tiers and not depths:
        return suite
    data = suite.to_dict()
    parts = []
    for key, chosen, have in (("tiers", tiers, suite.tiers), ("depths", depths, suite.depths)):
        if chosen:
            unknown = [c for c in chosen if c not in have]
            if unknown:
                raise SuiteError(f"suite {suite.name!r} has no {key} {unknown}; it has {list(have)}")
            data[key] = [v for v in have if v in chosen]
            parts.append("-".join(str(v) for v in data[key]))
    data["name"] = f"{suite.name}[{','.join(parts)}]"
    return suite_from_dict(data, source=f"{suite.name} restricted")


def suite_from_dict(data: dict[str, Any], source: str = "<dict>") -> Suite:
    """Validate a suite's JSON object and build the :class:`Suite`."""
    if not isinstance(data, dict):
        raise SuiteError(f"{source}: a suite is a JSON object")
    if data.get("schema", SCHEMA) != SCHEMA:
        raise SuiteError(f"{source}: unknown schema {data.get('schema')!r}; an episode suite's is {SCHEMA!r}")
    known = set(Suite.__dataclass_fields__) | {"schema"}
    unknown = sorted(set(data) - known)
    if unknown:
        raise SuiteError(f"{source}: unknown field(s) {unknown}; allowed: {sorted(known)}")
    missing = [k for k in ("name", "tiers", "depths", "instances", "rewards", "tool_settings") if k not in data]
    if missing:
        raise SuiteError(f"{source}: missing field(s) {missing}")
    suite = Suite(
        name=check_name(data["name"], source),
        tiers=_choices(data, "tiers", tuple(TIER_SPECS), source),
        depths=check_ints(data, "depths", source, minimum=0),
        instances=check_int(data, "instances", source, minimum=1),
        rewards=_rewards(data, source),
        tool_settings=_choices(data, "tool_settings", TOOL_SETTINGS, source),
        metric=suite_metric(data.get("metric", "quarter"), source),
        max_steps=check_int(data, "max_steps", source, minimum=1, default=INTERACTION_STEPS),
        max_moves=None if data.get("max_moves") is None else check_int(data, "max_moves", source, minimum=1),
        max_rotations=check_int(data, "max_rotations", source, minimum=0, default=DEFAULT_MAX_ROTATIONS),
        seed=check_int(data, "seed", source, minimum=0, default=0),
        instance_source=check_one_of(data.get("instance_source", "certified"), INSTANCE_SOURCES,
                                "instance_source", source),
        instance_classes=check_one_of(data.get("instance_classes", "any"), INSTANCE_CLASSES, "instance_classes", source),
        horizons=_horizons(data.get("horizons", DEFAULT_HORIZONS), source),
        description=str(data.get("description", "")),
    )
    return suite


def _rewards(data: dict[str, Any], source: str) -> tuple[str, ...]:
    """The suite's rewards; the oracle is refused with the reason."""
    if isinstance(data["rewards"], list) and set(data["rewards"]) & set(ORACLE_REWARDS):
        raise SuiteError(f"{source}: the oracle reward (minus the exact distance) is for RL research, not for "
                         "evaluating agents: a model that probes it reads off an optimal plan; use heuristic")
    return _choices(data, "rewards", EVAL_REWARDS, source, spelling=unalias_reward)


def _choices(data: dict[str, Any], key: str, allowed: tuple[str, ...], source: str,
             spelling: Callable[[str], str] = str) -> tuple[str, ...]:
    """The list ``data[key]``, each value one of ``allowed`` once (after ``spelling`` reads an alias)."""
    values = data[key]
    if not isinstance(values, list) or not values:
        raise SuiteError(f"{source}: {key} must be a non-empty list, got {values!r}")
    values = [spelling(v) if isinstance(v, str) else v for v in values]
    for v in values:
        check_one_of(v, allowed, f"each of {key}", source)
    if len(set(values)) != len(values):
        raise SuiteError(f"{source}: {key} lists a value twice: {values}")
    return tuple(values)


def _horizons(value: Any, source: str) -> dict[str, list[int]]:
    if not isinstance(value, dict) or not all(isinstance(v, list) for v in value.values()):
        raise SuiteError(f"{source}: horizons must map a name to a list of depths, got {value!r}")
    return {str(k): [int(d) for d in v] for k, v in value.items()}

