"""How to install an optional extra: CubeBench installs from its checkout, so a hint says ``pip install -e ".[x]"``.

CubeBench is not on PyPI: asking pip for ``cubebench[x]`` from an index finds nothing (or another project of that
name).
Every runtime message and test skip reason that names an extra takes its words from :func:`install_hint`, and the
docs write the same command.
"""

from __future__ import annotations

__all__ = ["install_hint"]


def install_hint(*extras: str) -> str:
    """The command that installs ``extras`` into the environment CubeBench is installed in, from its checkout."""
    return f'pip install -e ".[{",".join(extras)}]" in the CubeBench checkout'
