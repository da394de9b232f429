"""The ``cubebench`` command line."""

from __future__ import annotations

import argparse
import sys
from typing import Callable, Sequence

import numpy as np

from . import __version__
from .engine import SOLVED, TABLE, CubeInputError, from_facelets, kernels, to_facelets
from .engine.facelets import COLOUR_LETTERS, FACES
from .engine.notation import format_moves, parse_array
from .engine.scramble import scramble
from .render.ansi import net_text


def _cube_from_arg(text: str) -> np.ndarray:
    """A 54-letter facelet string, or a move sequence applied to the solved cube."""
    compact = text.strip()
    if len(compact) == 54 and set(compact) <= set(FACES):
        return from_facelets(compact)
    return kernels.apply_moves(SOLVED, TABLE, parse_array(text))


def _cmd_scramble(args: argparse.Namespace) -> int:
    moves = scramble(args.depth, args.metric, args.seed)
    state = kernels.apply_moves(SOLVED, TABLE, np.asarray(moves, dtype=np.int64))
    print(format_moves(moves))
    print(to_facelets(state))
    return 0


def _cmd_show(args: argparse.Namespace) -> int:
    state = _cube_from_arg(args.cube)
    letters = COLOUR_LETTERS if args.letters == "colours" else FACES
    print(net_text(state // 9, letters=letters, use_colour=not args.no_colour and sys.stdout.isatty() or args.colour))
    print(to_facelets(state))
    return 0


def _cmd_solve(args: argparse.Namespace) -> int:
    state = _cube_from_arg(args.cube)
    if args.optimal:
        from .solver.optimal import solve_optimal

        sol = solve_optimal(state, args.metric)
        print(" ".join(sol.moves))
        print(f"# optimal: {sol.distance} moves ({sol.metric}-turn metric), {sol.seconds:.2f} s", file=sys.stderr)
    else:
        from .solver.twophase import solve_twophase

        print(solve_twophase(state))
    return 0


def _cmd_instances_verify(args: argparse.Namespace) -> int:
    from .curriculum import verify_instance_file

    failed = 0
    for path in args.files:
        result = verify_instance_file(path, time_limit=args.time_limit)
        print(f"{path}: {result.checked} instances, {'all certified' if result.ok else f'{len(result.failures)} FAILED'}")
        for line in result.failures:
            print(f"  {line}")
        failed += not result.ok
    return 1 if failed else 0


def _add_common(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("scramble", help="print a seeded scramble and its facelet string")
    p.add_argument("--depth", type=int, default=20, help="number of moves (default 20)")
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--metric", choices=("quarter", "half"), default="half")
    p.set_defaults(func=_cmd_scramble)

    p = sub.add_parser("show", help="print the net of a cube given as moves or 54 letters")
    p.add_argument("cube", help="a move sequence (\"R U R' U'\") or a 54-letter URFDLB string")
    p.add_argument("--letters", choices=("faces", "colours"), default="faces")
    p.add_argument("--no-colour", action="store_true", help="plain letters without ANSI colours")
    p.add_argument("--colour", action="store_true", help="ANSI colours even when not a terminal")
    p.set_defaults(func=_cmd_show)

    p = sub.add_parser("solve", help="solve a cube given as moves or 54 letters")
    p.add_argument("cube")
    p.add_argument("--optimal", action="store_true", help="exact optimal solver instead of two-phase")
    p.add_argument("--metric", choices=("quarter", "half"), default="half")
    p.set_defaults(func=_cmd_solve)

    p = sub.add_parser("instances", help="certified instance sets")
    verbs = p.add_subparsers(dest="verb", required=True)
    v = verbs.add_parser("verify", help="re-certify instance files with the optimal solver")
    v.add_argument("files", nargs="+", help="JSONL instance files (benchmarks/instances/*.jsonl)")
    v.add_argument("--time-limit", type=float, default=None, help="seconds per instance (default: none)")
    v.set_defaults(func=_cmd_instances_verify)


def _add_runner(sub: argparse._SubParsersAction) -> None:
    """The benchmark runner's subcommands (run, report, view, play, export), when installed."""
    try:
        from agents.runner.cli import add_subcommands
    except ModuleNotFoundError as err:
        if err.name in ("agents", "agents.runner", "agents.runner.cli"):
            return  # installed without the agents package: engine commands only
        raise
    add_subcommands(sub)


SUBCOMMANDS: list[Callable[[argparse._SubParsersAction], None]] = [_add_common, _add_runner]
"""Functions that add subcommands."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="cubebench", description=__doc__)
    parser.add_argument("--version", action="version", version=f"cubebench {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    for add in SUBCOMMANDS:
        add(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except CubeInputError as err:
        print(f"cubebench: error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("cubebench: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
