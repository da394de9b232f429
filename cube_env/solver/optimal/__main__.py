"""``python -m cubebench.solver.optimal build|info|solve``: manage the tables, solve a cube."""

from __future__ import annotations

import argparse
import sys

import numpy as np

from ...engine.kernels import apply_moves
from ...engine.metric import METRICS
from ...engine.moves import TABLE
from ...engine.notation import parse_array
from ...engine.state import SOLVED
from . import table_cache
from .solver import ensure_tables, solve_optimal


def _info() -> int:
    print(f"cache directory: {table_cache.cache_dir()}  (override with ${table_cache.ENV_VAR})")
    total = 0
    for path in sorted(table_cache.cache_dir().glob("*.npy")):
        name = path.name.rsplit("-v", 1)[0]
        meta = table_cache.read_meta(name) or {}
        size = path.stat().st_size
        total += size
        extra = f", built in {meta['build_seconds']} s" if "build_seconds" in meta else ""
        print(f"  {path.name:44s} {size / 2**20:9.1f} MiB  checksum {meta.get('checksum', 'MISSING')}{extra}")
    print(f"  total {total / 2**20:.1f} MiB")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m cubebench.solver.optimal", description=__doc__)
    sub = parser.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build", help="build (or verify) the tables")
    b.add_argument("--metric", choices=METRICS + ("both",), default="both")
    sub.add_parser("info", help="list cached tables")
    s = sub.add_parser("solve", help="solve a 54-letter URFDLB string or a scramble")
    s.add_argument("cube", help="54-letter facelet string, or a move sequence with --scramble")
    s.add_argument("--scramble", action="store_true", help="treat CUBE as a scramble from solved")
    s.add_argument("--metric", choices=METRICS, default="half")
    s.add_argument("--time-limit", type=float, default=None)
    args = parser.parse_args(argv)
    if args.cmd == "build":
        ensure_tables(args.metric, progress=True)
        return _info()
    if args.cmd == "info":
        return _info()
    cube = apply_moves(SOLVED, TABLE, parse_array(args.cube)) if args.scramble else args.cube
    sol = solve_optimal(np.asarray(cube) if args.scramble else cube, args.metric, time_limit=args.time_limit)
    print(f"{sol}  ({sol.distance} {args.metric}-turn moves, optimal; {sol.nodes} nodes, {sol.seconds:.2f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
