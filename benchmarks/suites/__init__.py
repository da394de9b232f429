"""The named benchmark suites (``smoke``, ``exp1``...), shipped as package data of ``cubebench.suites``.

Data only: :mod:`cubebench.runner.suites` reads and validates them.
"""
