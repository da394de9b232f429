"""Inf-Bench's ladder competition: an adaptive score, the level a model climbs to.

A ladder starts at level 1.  Each *round* asks ``per_level`` (5) questions at the current level; with
at least ``pass_at`` (3) right the ladder goes up a level, otherwise it goes down one and the level
it failed at counts a failure.  It ends when a level has failed ``max_failures`` (2) times or the
ladder falls to level 0 (paper §5.1).  The score is the level it ends at.  The paper's ladder has no
top; ours has ``max_level`` so that a perfect answerer finishes: passing the top level ends the
ladder with the score ``max_level``.

The coin-flipper's score is known exactly: :func:`chance_score` sums the ladder's outcomes for a
per-question success probability, so a random baseline's measured mean can be checked against it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache
from math import comb

__all__ = ["LadderRules", "Ladder", "chance_score", "round_pass_probability"]


@dataclass(frozen=True)
class LadderRules:
    """The paper's ladder (5 questions a level, 3 to pass, out after 2 failures at one level), with a top."""

    per_level: int = 5
    pass_at: int = 3
    max_failures: int = 2
    max_level: int = 20

    def __post_init__(self) -> None:
        for name in ("per_level", "pass_at", "max_failures", "max_level"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"ladder {name} must be an integer >= 1, got {value!r}")
        if self.pass_at > self.per_level:
            raise ValueError(f"ladder pass_at ({self.pass_at}) cannot exceed per_level ({self.per_level})")


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


def chance_score(p: Fraction | float, rules: LadderRules = LadderRules()) -> Fraction | float:
    """The expected final level of a ladder whose answers are right with probability ``p`` each.

    Exact (a ``Fraction`` for a ``Fraction`` ``p``): the expectation over every way the ladder can go.
    The future depends on the failures only through two levels: the nearest level at or below the
    current one that has failed once (failing there ends the ladder, so nothing below it is ever
    reached again) and the highest level reached (every level between the current one and it has
    failed once: the ladder came down through each).  So the recursion has O(max_level^3) states.
    """
    if rules.max_failures > 2:
        raise ValueError("chance_score handles the paper's rule of at most 2 failures a level")
    q = round_pass_probability(p, rules)
    once = rules.max_failures == 2

    @lru_cache(maxsize=None)
    def expected(level: int, floor: int, highest: int) -> Fraction | float:
        if level == rules.max_level:
            passed: Fraction | float = rules.max_level
        elif level < highest:  # the next level up has failed once
            passed = expected(level + 1, level + 1, highest)
        else:
            passed = expected(level + 1, floor, level + 1)
        if level == 1 or not once or level == floor:
            fallen: Fraction | float = level - 1
        else:
            fallen = expected(level - 1, floor, highest)
        return q * passed + (1 - q) * fallen

    return expected(1, 0, 1)
