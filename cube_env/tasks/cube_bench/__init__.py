"""Cube Bench's seven tests (the MLLM benchmark of ``shared/seeds/000_...``) on CubeBench's engine.

See ``docs/cube-bench.md`` for what each test measures, its prompt and answer format, its metrics
and the paper's published numbers beside ours.
"""

from .closed_loop import ClosedLoop
from .move_choice import MoveChoice
from .move_effect import MoveEffect
from .reconstruction import Reconstruction
from .recovery import Recovery
from .reflection import Reflection
from .verification import Verification

CUBE_BENCH_TESTS = (Reconstruction(), Verification(), MoveChoice(), Reflection(), MoveEffect(), ClosedLoop(),
                    Recovery())
"""One instance of each test, in the paper's order (the tests keep no state)."""

__all__ = ["CUBE_BENCH_TESTS", "Reconstruction", "Verification", "MoveChoice", "Reflection", "MoveEffect",
           "ClosedLoop", "Recovery"]
