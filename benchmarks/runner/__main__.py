"""``python -m cubebench.runner ARGS``: the same as ``cubebench ARGS``."""

from .cli import main

if __name__ == "__main__":
    raise SystemExit(main())
