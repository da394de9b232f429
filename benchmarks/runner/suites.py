"""Loading a suite of any run protocol: a named suite (``benchmarks/suites/``, the ``cubebench.suites`` data package)
or a user's file, read by the protocol whose suite schema the file names (``cubebench-suite/1`` for episodes,
``cubebench-questions/1``, ``cubebench-multi/1``; a file without a ``schema`` is an episode suite).  Each protocol's
suite class and schema live in its folder (``protocols/<name>/suite.py``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .protocols import protocol_for_schema
from .suite_fields import SuiteError, suites_dir

__all__ = ["SuiteError", "available_suites", "load_suite", "suite_from_data", "named_suite_protocol"]


def available_suites() -> list[str]:
    """Names of the shipped suites (``benchmarks/suites/`` in a checkout)."""
    return sorted(p.stem for p in suites_dir().glob("*.json"))


def named_suite_protocol(name: str) -> str:
    """The name of the protocol a shipped suite plays, from its file's ``schema`` alone (for the command's help)."""
    path = suites_dir() / f"{name}.json"
    schema = json.loads(path.read_text(encoding="utf-8")).get("schema")
    return protocol_for_schema(schema, str(path)).name


def load_suite(name_or_path: str | Path) -> Any:
    """A named suite (``smoke``, ``exp1``, ``cube-bench``...) or a suite file, validated by the protocol its
    ``schema`` names: an episode :class:`~.protocols.episodes.suite.Suite`, a
    :class:`~.protocols.questions.suite.QuestionSuite` or a :class:`~.protocols.multi.suite.MultiSuite`."""
    path = Path(name_or_path)
    if not path.is_file():
        path = suites_dir() / f"{name_or_path}.json"
        if not path.is_file():
            raise SuiteError(f"no suite {str(name_or_path)!r}: not a file, and not one of the named "
                             f"suites {', '.join(available_suites())}")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise SuiteError(f"cannot read suite file {path}: {err}") from None
    except RecursionError:
        raise SuiteError(f"cannot read suite file {path}: its JSON nests deeper than Python reads") from None
    return suite_from_data(data, source=str(path))


def suite_from_data(data: Any, source: str = "<dict>") -> Any:
    """The suite ``data`` (a suite file's JSON) describes, read by the protocol whose schema it names."""
    schema = data.get("schema") if isinstance(data, dict) else None
    return protocol_for_schema(schema, source).read_suite(data, source)

