"""The distance oracle's old home: it is :mod:`cubebench.solver.oracle` now (beside the solver it falls back on).

Kept because docs and user code named ``cubebench.tasks.oracle``; new code imports ``cubebench.solver.oracle``.
"""

from ..solver.oracle import EXPANSION, RADIUS, DistanceOracle, metric_moves, oracle

__all__ = ["DistanceOracle", "oracle", "RADIUS", "metric_moves", "EXPANSION"]
