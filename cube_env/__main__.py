"""``python -m cubebench ARGS``: the same as the ``cubebench ARGS`` command.

The command is assembled by the runner, the top layer (``cubebench.runner.cli``), and the engine
never imports a higher layer (docs/architecture.md).  So this module finds the command the way the
shell does, through the ``cubebench`` console-script entry point the install declared, and loads it
only when it runs: importing ``cubebench`` itself imports no runner code.
"""

from __future__ import annotations

import sys
from importlib.metadata import entry_points


def main() -> int:
    """Run the installed ``cubebench`` command with this process's arguments."""
    found = [ep for ep in entry_points(group="console_scripts", name="cubebench") if ep.value.startswith("cubebench.")]
    if not found:
        print("python -m cubebench: error: the cubebench command is not installed (pip install -e . or "
              "pip install cubebench)", file=sys.stderr)
        return 2
    sys.argv[0] = "cubebench"
    return int(found[0].load()() or 0)


if __name__ == "__main__":
    raise SystemExit(main())
