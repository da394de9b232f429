"""The question-style tests by name: what suites, the runner and the report look up."""

from __future__ import annotations

from .cube_bench import CUBE_BENCH_TESTS
from .inf_bench import INF_BENCH_TESTS
from .items import QuestionTest
from .stare import STARE_TESTS

TESTS: dict[str, QuestionTest] = {test.name: test for test in (*CUBE_BENCH_TESTS, *INF_BENCH_TESTS, *STARE_TESTS)}
"""Every question test, by name (Cube Bench's seven in the paper's order, Inf-Bench's two, then STARE's cube-net tests)."""


def get_test(name: str) -> QuestionTest:
    """The test called ``name``; ``ValueError`` naming the known ones otherwise."""
    try:
        return TESTS[name]
    except KeyError:
        raise ValueError(f"unknown question test {name!r}; known: {', '.join(TESTS)}") from None
