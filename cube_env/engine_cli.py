"""The engine's ``cubebench`` subcommands: ``scramble``, ``show``, ``solve``, ``instances verify``.

The ``cubebench`` command itself is :mod:`cubebench.runner.cli`, which adds these
beside the runner's own (the core never imports the layers above it).
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from .engine import SOLVED, TABLE, from_facelets, kernels, to_facelets
from .engine.facelets import COLOUR_LETTERS, FACES
from .engine.metric import METRICS
from .engine.notation import format_moves, parse_array
from .engine.scramble import scramble
from .render.ansi import net_text
from .solver.twophase import solve_twophase


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


def add_subcommands(sub: argparse._SubParsersAction) -> None:
    """Add ``scramble``, ``show``, ``solve`` and ``instances verify`` to the ``cubebench`` parser."""
    p = sub.add_parser("scramble", help="print a seeded scramble and its facelet string")
    p.add_argument("--depth", type=int, default=20, help="number of moves (default 20)")
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--metric", choices=METRICS, default="half")
    p.set_defaults(func=_cmd_scramble)

    p = sub.add_parser("show", help="print the net of a cube given as moves or 54 letters")
    p.add_argument("cube", help="a move sequence (\"R U R' U'\") or a 54-letter URFDLB string")
    p.add_argument("--letters", choices=("faces", "colours"), default="faces")
    p.add_argument("--no-colour", action="store_true", help="plain letters without ANSI colours")
    p.add_argument("--colour", action="store_true", help="ANSI colours even when not a terminal")
    p.set_defaults(func=_cmd_show)

    p = sub.add_parser("solve", help="solve a cube given as moves or 54 letters")
    p.add_argument("cube", help="the cube to solve: a scramble (\"R U R' U'\") or a 54-letter URFDLB string")
    p.add_argument("--optimal", action="store_true", help="exact optimal solver instead of two-phase")
    p.add_argument("--metric", choices=METRICS, default="half")
    p.set_defaults(func=_cmd_solve)

    p = sub.add_parser("instances", help="certified instance sets")
    verbs = p.add_subparsers(dest="verb", required=True)
    v = verbs.add_parser("verify", help="re-certify instance files with the optimal solver")
    v.add_argument("files", nargs="+", help="JSONL instance files (benchmarks/instances/*.jsonl)")
    v.add_argument("--time-limit", type=float, default=None, help="seconds per instance (default: none)")
    v.set_defaults(func=_cmd_instances_verify)
