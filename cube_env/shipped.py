"""Where the certified instance sets live: the ``cubebench.instances`` data package.

The files are kept once, in the source tree's ``benchmarks/instances`` (the
design's layout), which the build maps onto the package ``cubebench.instances``
(``pyproject.toml``), so a wheel, an editable install and a checkout all read
them from the same package.  ``$CUBEBENCH_INSTANCES_DIR`` overrides them (a
user's own certified files).
"""

from __future__ import annotations

import os
import re
from importlib.resources import files
from pathlib import Path

INSTANCES_ENV_VAR = "CUBEBENCH_INSTANCES_DIR"
"""Overrides where the certified instance sets are read from (a user's own files)."""


def package_dir(package: str) -> Path:
    """The directory of a data package (``"cubebench.instances"``, ``"cubebench.suites"``) on disk."""
    return Path(str(files(package)))


def instances_dir() -> Path:
    """The certified instance sets: ``$CUBEBENCH_INSTANCES_DIR`` or the shipped ones."""
    override = os.environ.get(INSTANCES_ENV_VAR)
    return Path(override) if override else package_dir("cubebench.instances")


def asked_size(path: Path) -> int:
    """The number of instances a set's file was asked for: the ``n`` of ``<metric>-d<dd>-n<n>.jsonl`` (0 if none)."""
    match = re.search(r"-n(\d+)\.jsonl$", path.name)
    return int(match.group(1)) if match else 0


def largest_instance_file(metric: str, depth: int, directory: Path | None = None) -> Path | None:
    """The largest certified set of ``depth`` in ``metric`` (smaller sets are its prefixes), or ``None``."""
    files = (directory or instances_dir()).glob(f"{metric}-d{depth:02d}-n*.jsonl")
    return max(files, key=asked_size, default=None)
