"""The run protocols are objects (``cubebench.runner.protocols``): nothing else in the runner or the bridges
dispatches on a protocol's name, and the bridges use the runner's public names only."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import cubebench.runner as runner
from cubebench.runner.multi_suites import MultiSuite
from cubebench.runner.plan import EpisodeSpec, GameSpec, ItemSpec
from cubebench.runner.protocols import PROTOCOLS, SELECTORS, RunProtocol, protocol_for, protocol_named
from cubebench.runner.question_suites import QuestionSuite
from cubebench.runner.store import PROTOCOL_NAMES as STORED
from cubebench.runner.suites import Suite, SuiteError, load_suite

ROOT = Path(__file__).resolve().parents[2]
NAMES = {Suite.protocol, QuestionSuite.protocol, MultiSuite.protocol}


def _sources(*folders: str) -> list[Path]:
    return sorted(p for folder in folders for p in (ROOT / folder).rglob("*.py"))


def _dispatch(node: ast.AST) -> bool:
    """Whether ``node`` tells protocols apart by name: a comparison of something named ``*protocol*`` with a
    protocol's name, or a comparison or dict that names two protocols (``UNITS = {"episodes": ..., ...}``)."""
    if isinstance(node, ast.Compare):
        parts = [node.left, *node.comparators]
        parts += [e for p in parts if isinstance(p, (ast.Tuple, ast.List, ast.Set)) for e in p.elts]
    elif isinstance(node, ast.Dict):
        parts = [k for k in node.keys if k is not None]
    else:
        return False
    named = {p.value for p in parts if isinstance(p, ast.Constant) and p.value in NAMES}
    about = isinstance(node, ast.Compare) and "protocol" in ast.unparse(node).replace(repr(next(iter(named), "")), "")
    return len(named) >= 2 or bool(named and about)


def test_no_module_outside_the_protocols_package_dispatches_on_a_protocol_name() -> None:
    found = []
    for path in _sources("benchmarks/runner", "bridges"):
        if "protocols" in path.relative_to(ROOT).parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if _dispatch(node):
                found.append(f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', 0)}: {ast.unparse(node)[:80]}")
    assert not found, found


def test_the_bridges_import_only_the_runners_public_names() -> None:
    public = set(runner.__all__)
    bad = []
    for path in _sources("bridges"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("cubebench.runner"):
                names = {a.name for a in node.names}
                if node.module != "cubebench.runner" or not names <= public:
                    bad.append(f"{path.relative_to(ROOT)}:{node.lineno}: from {node.module} import {sorted(names)}")
    assert not bad, bad


def test_every_suite_kind_plan_row_and_stored_run_has_its_protocol() -> None:
    assert set(PROTOCOLS) == NAMES == set(STORED)
    assert {EpisodeSpec.protocol, ItemSpec.protocol, GameSpec.protocol} == NAMES
    assert len({p.unit for p in PROTOCOLS.values()}) == 3 and len(set(SELECTORS)) == 3
    for suite in ("smoke", "cube-bench-smoke", "multi-smoke"):
        protocol = protocol_for(load_suite(suite))
        assert isinstance(protocol, RunProtocol) and protocol is PROTOCOLS[load_suite(suite).protocol]


def test_an_unknown_protocol_is_one_line_naming_the_protocols() -> None:
    with pytest.raises(SuiteError, match=r"^unknown run protocol 'chess'; the protocols are episodes, questions, multi$"):
        protocol_named("chess")
