"""Exact optimal Rubik's-cube solver (IDA* with symmetry-reduced pruning tables, in numba).

Distances in the half-turn metric (``"half"``: 18 moves, any face turn counts
one) and the quarter-turn metric (``"quarter"``: 12 moves, a half turn counts
two).  See ``docs/solver.md`` for the method and the tables, ``docs/results/solver.md`` for measured figures.

>>> from cubebench.solver.optimal import solve_optimal
>>> solve_optimal("UUUUUUUUURRRRRRRRRFFFFFFFFFDDDDDDDDDLLLLLLLLLBBBBBBBBB").distance
0
"""

from .solver import (
    SOLVER_VERSION,
    OptimalSolution,
    SolverTimeout,
    ensure_tables,
    lower_bound,
    lower_bound_batch,
    optimal_distance,
    solve_optimal,
    tables_ready,
)
from .table_cache import ENV_VAR as CACHE_ENV_VAR
from .table_cache import cache_dir

__all__ = [
    "SOLVER_VERSION", "OptimalSolution", "SolverTimeout", "ensure_tables", "lower_bound",
    "lower_bound_batch", "optimal_distance", "solve_optimal", "tables_ready", "CACHE_ENV_VAR", "cache_dir",
]
