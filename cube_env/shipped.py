"""Where the shipped benchmark data lives: the suites and the certified instance sets.

The data is kept once, in the source tree's ``benchmarks/suites`` and
``benchmarks/instances`` (the layout fixed by the design); the build copies it
into the wheel as ``cube_env/shipped/<kind>`` (see ``setup.py``), so an
installed package finds it there and a source checkout or editable install
finds it in ``benchmarks/``.  ``$CUBEBENCH_INSTANCES_DIR`` overrides the
instance sets (a user's own certified files).
"""

from __future__ import annotations

import os
from pathlib import Path

INSTANCES_ENV_VAR = "CUBEBENCH_INSTANCES_DIR"
"""Overrides where the certified instance sets are read from (a user's own files)."""
KINDS = ("suites", "instances")

_PACKAGED = Path(__file__).resolve().parent / "shipped"
_CHECKOUT = Path(__file__).resolve().parents[1] / "benchmarks"


def shipped_dir(kind: str) -> Path:
    """The directory of the shipped ``kind`` (``"suites"`` or ``"instances"``): the wheel's copy first."""
    if kind not in KINDS:
        raise ValueError(f"unknown shipped data {kind!r}; one of {KINDS}")
    packaged = _PACKAGED / kind
    return packaged if packaged.is_dir() else _CHECKOUT / kind


def instances_dir() -> Path:
    """The certified instance sets: ``$CUBEBENCH_INSTANCES_DIR`` or the shipped ones."""
    override = os.environ.get(INSTANCES_ENV_VAR)
    return Path(override) if override else shipped_dir("instances")


def suites_dir() -> Path:
    """The named suites (``smoke``, ``exp1``...)."""
    return shipped_dir("suites")
