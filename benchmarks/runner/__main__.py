"""``python -m agents.runner ARGS``: the ``cubebench`` command line with the runner's subcommands
ensured (the same as ``cubebench ARGS`` once ``cube_env.cli`` wires them in)."""

from __future__ import annotations

import argparse
from typing import Sequence

from cube_env import cli

from .cli import add_subcommands


def _wired() -> bool:
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return "run" in sub.choices


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``cubebench`` CLI, adding the runner's subcommands if ``cube_env.cli`` does not yet."""
    if not _wired():
        cli.SUBCOMMANDS.append(add_subcommands)
    return cli.main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
