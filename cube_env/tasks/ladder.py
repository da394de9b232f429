"""Inf-Bench's ladder competition: an adaptive score, the level a model climbs to.

A ladder starts at level 1.  Each *round* asks ``per_level`` (5) questions at the current level; with
at least ``pass_at`` (3) right the ladder goes up a level, otherwise it goes down one and the level
it failed at counts a failure.  It ends when a level has failed ``max_failures`` (2) times or the
ladder falls to level 0 (paper §5.1).  The score is the level it ends at.  The paper's ladder has no
top.  Ours has a hard cap, ``max_level`` (:data:`LEVEL_CAP`, 1000, by default: far above the paper's
best 3D score, 273.2 after fine-tuning), only so that a run always ends: a perfect answerer passes
the top level and the ladder ends with the score ``max_level``.  Its items are made one round at a
time as it climbs, so the cap costs nothing until a ladder gets there.

The coin-flipper's score is known: :func:`chance_score` sums the ladder's outcomes for a per-question
success probability, exactly for a low top and to within a stated tolerance for a high one (the
chance of climbing past level ``T`` shrinks geometrically), so a random baseline's measured mean can
be checked against it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache
from math import comb

__all__ = ["LEVEL_CAP", "LadderRules", "Ladder", "chance_score", "round_pass_probability", "max_rounds"]

LEVEL_CAP = 1000
"""The highest level a ladder may have: a run's guarantee that every ladder ends (the paper's is unbounded)."""
EXACT_TOP = 30
"""Tops up to this are scored by the exact recursion; higher ones by truncation at a level ``T`` (see :func:`chance_score`)."""
CHANCE_TOLERANCE = 1e-9
"""How far :func:`chance_score` may be from the exact expectation when the top is above :data:`EXACT_TOP`."""


@dataclass(frozen=True)
class LadderRules:
    """The paper's ladder (5 questions a level, 3 to pass, out after 2 failures at one level), with a hard cap."""

    per_level: int = 5
    pass_at: int = 3
    max_failures: int = 2
    max_level: int = LEVEL_CAP

    def __post_init__(self) -> None:
        for name in ("per_level", "pass_at", "max_failures", "max_level"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"ladder {name} must be an integer >= 1, got {value!r}")
        if self.pass_at > self.per_level:
            raise ValueError(f"ladder pass_at ({self.pass_at}) cannot exceed per_level ({self.per_level})")
        if self.max_level > LEVEL_CAP:
            raise ValueError(f"ladder max_level must be at most {LEVEL_CAP} (the cap that makes every run end), "
                             f"got {self.max_level}")


def max_rounds(rules: LadderRules) -> int:
    """The most rounds a ladder under ``rules`` can play: every level fails at most ``max_failures`` times and
    every pass but those that undo a failure climbs toward the top, so at most (top + 1) * (2 * failures + 1)."""
    return (rules.max_level + 1) * (2 * rules.max_failures + 1)


@dataclass
class Ladder:
    """One ladder's progress: the rounds played so far and where it stands."""

    rules: LadderRules = field(default_factory=LadderRules)
    level: int = 1
    failures: dict[int, int] = field(default_factory=dict)
    rounds: list[tuple[int, int]] = field(default_factory=list)
    """(level, questions right) of every round played, in order."""
    finished: bool = False

    @classmethod
    def replay(cls, rules: LadderRules, correct_per_round: list[int]) -> "Ladder":
        """The ladder after rounds with these numbers of right answers (what a resumed run rebuilds)."""
        ladder = cls(rules)
        for correct in correct_per_round:
            ladder.record(correct)
        return ladder

    def record(self, correct: int) -> None:
        """Move the ladder after a round at :attr:`level` with ``correct`` right answers."""
        if self.finished:
            raise ValueError("the ladder has ended; no more rounds can be recorded")
        if isinstance(correct, bool) or not isinstance(correct, int) or not 0 <= correct <= self.rules.per_level:
            raise ValueError(f"a round has 0..{self.rules.per_level} right answers, got {correct!r}")
        self.rounds.append((self.level, correct))
        if correct >= self.rules.pass_at:
            if self.level == self.rules.max_level:
                self.finished = True  # the top: the score stays max_level
            else:
                self.level += 1
            return
        failed = self.level
        self.failures[failed] = self.failures.get(failed, 0) + 1
        self.level -= 1
        self.finished = self.level == 0 or self.failures[failed] >= self.rules.max_failures

    @property
    def score(self) -> int:
        """The level the ladder stands at (its final score once :attr:`finished`)."""
        return self.level

    @property
    def topped(self) -> bool:
        """Whether the ladder ended by passing its top level."""
        return self.finished and bool(self.rounds) and self.rounds[-1][1] >= self.rules.pass_at


def round_pass_probability(p: Fraction | float, rules: LadderRules) -> Fraction | float:
    """Probability that a round is passed when each answer is right with probability ``p``, independently."""
    return sum(comb(rules.per_level, c) * p ** c * (1 - p) ** (rules.per_level - c)
               for c in range(rules.pass_at, rules.per_level + 1))


def chance_score(p: Fraction | float, rules: LadderRules = LadderRules(), tol: float = CHANCE_TOLERANCE
                 ) -> Fraction | float:
    """The expected final level of a ladder whose answers are right with probability ``p`` each.

    For a top at most :data:`EXACT_TOP` it is exact (a ``Fraction`` for a ``Fraction`` ``p``): the
    expectation over every way the ladder can go, by :func:`_top_score`.  Above it the ladder is cut at a
    level ``T`` (16, 24, ...) and the cut's score returned once it is provably within ``tol`` of the
    capped ladder's (and of the unbounded ladder's): the two ladders differ only after the cut one passes
    level ``T`` (probability ``P``), and then by at most the highest level the other reaches.  Each level
    is tried at most twice, so it climbs past each further level with probability at most
    ``r = 1 - (1 - q)^2`` (``q`` a round's pass probability), and the difference is at most
    ``P * (T + 1 / (1 - r))``.  Raises ``ValueError`` when ``p`` is so high that no cut up to 64 levels is
    within ``tol`` (a chance level is never that high: Inf-Bench's is ``p = 1/4``, ``T = 16``).
    """
    if rules.max_failures > 2:
        raise ValueError("chance_score handles the paper's rule of at most 2 failures a level")
    q = round_pass_probability(p, rules)
    if rules.max_level <= EXACT_TOP or q in (0, 1):
        return rules.max_level * q if q in (0, 1) else _top_score(q, rules.max_failures, rules.max_level)[0]
    qf = float(q)
    stay = 1 / (1 - qf) ** 2  # 1 / (1 - r)
    limit = min(rules.max_level, 64)
    for top in [*range(16, limit, 8), limit]:
        score, past = _top_score(qf, rules.max_failures, top)
        if top == rules.max_level or past * (top + stay) <= tol:  # the cut at the top itself is exact
            return score
    raise ValueError(f"the chance level of p={float(p):.3g} cannot be bounded within {tol:g} by a cut at 64 levels")


def _top_score(q: Fraction | float, max_failures: int, top: int) -> tuple[Fraction | float, Fraction | float]:
    """The expected final level of a ladder topped at ``top`` whose rounds pass with probability ``q``, and
    the probability that it passes its top.

    The future depends on the failures only through two levels: the nearest level at or below the
    current one that has failed once (failing there ends the ladder, so nothing below it is ever
    reached again) and the highest level reached (every level between the current one and it has
    failed once: the ladder came down through each).  So the recursion has O(top^3) states.
    """
    once = max_failures == 2

    @lru_cache(maxsize=None)
    def expected(level: int, floor: int, highest: int) -> tuple[Fraction | float, Fraction | float]:
        if level == top:
            passed: tuple[Fraction | float, Fraction | float] = (top, 1)
        elif level < highest:  # the next level up has failed once
            passed = expected(level + 1, level + 1, highest)
        else:
            passed = expected(level + 1, floor, level + 1)
        if level == 1 or not once or level == floor:
            fallen: tuple[Fraction | float, Fraction | float] = (level - 1, 0)
        else:
            fallen = expected(level - 1, floor, highest)
        return q * passed[0] + (1 - q) * fallen[0], q * passed[1] + (1 - q) * fallen[1]

    return expected(1, 0, 1)
