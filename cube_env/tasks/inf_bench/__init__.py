"""Inf-Bench's 3D deformation tasks (forward and inverse) and their ladder (:mod:`cubebench.tasks.ladder`)."""

from .deformation import INF_BENCH_TESTS, MAX_LEVEL, Forward, Inverse

__all__ = ["INF_BENCH_TESTS", "MAX_LEVEL", "Forward", "Inverse"]
