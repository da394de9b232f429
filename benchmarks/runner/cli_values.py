"""The value types of ``cubebench`` options, shared by the command and the run protocols' own options (each
protocol adds its ``cubebench run`` options: :meth:`~.protocols.RunProtocol.add_options`)."""

from __future__ import annotations

import argparse
import math
from typing import Any, Callable

DISTANCE_DEFAULT = 0.0
"""``--distance-budget`` by default: off (per-step true distances make a scripted run 5-60x slower)."""


def csv_values(kind: Callable[[str], Any]) -> Callable[[str], list[Any]]:
    """An argparse type for comma-separated values (``int``: whole numbers, and the message says so)."""
    what = "whole numbers, e.g. 1,2,3" if kind is int else "values"

    def parse(text: str) -> list[Any]:
        try:
            return [kind(v.strip()) for v in text.split(",") if v.strip()]
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected comma-separated {what}, got {text!r}") from None

    return parse


def count(minimum: int) -> Callable[[str], int]:
    """An argparse type for a whole number of at least ``minimum``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"expected a whole number >= {minimum}, got {value}")
        return value

    return parse


def amount(text: str) -> float:
    """An argparse type for a finite number >= 0 (dollars, seconds)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {text!r}") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"expected a finite number >= 0, got {text}")
    return value


def distance_budget(text: str) -> str | float:
    """``--distance-budget``: seconds per step (0: off) or ``auto``."""
    if text == "auto":
        return text
    try:
        return amount(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"expected seconds per step (a number >= 0; 0: off) or 'auto', "
                                         f"got {text!r}") from None
