"""The run protocols are objects (``cubebench.runner.protocols``): nothing else in the runner or the bridges
dispatches on a protocol's name, and the bridges use the runner's public names only."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import cubebench.runner as runner
from cubebench.runner.protocols.multi.suite import MultiSuite
from cubebench.runner.protocols.episodes.plan import EpisodeSpec
from cubebench.runner.protocols.multi.plan import GameSpec
from cubebench.runner.protocols.questions.plan import ItemSpec
from cubebench.runner.protocols import PROTOCOLS, RunProtocol, protocol_for, protocol_named, selectors
from cubebench.runner.protocols.questions.suite import QuestionSuite
from cubebench.runner.planning import row_protocols
from cubebench.runner.protocols.episodes.suite import Suite
from cubebench.runner.suites import SuiteError, load_suite

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


FEATURES = {
    "__init__.py": "the runner's public names re-export each protocol's public ones",
    "compare.py": "cubebench compare sets question and episode runs beside the papers' tables",
    "export_tasks.py": "cubebench export-tasks writes episode starts and question items as datasets",
    "heldout.py": "the evaluated positions are those of the episode and question suites",
    "human_play.py": "cubebench play is a person playing an episode",
    "plots.py": "the plots draw episode pass rates",
    "sft_traces.py": "the SFT traces are episodes played by the solver",
    "verifier_refs.py": "the verifiers bridge's references rebuild question items and episodes",
}
"""The runner modules that serve particular protocols, and why; every other module outside ``protocols/`` (the
store, planner, suite loader, command, backends, report, viewer, export...) reaches a protocol through the
registry only."""


def test_only_feature_modules_import_a_protocols_folder() -> None:
    found = []
    for path in _sources("benchmarks/runner"):
        rel = path.relative_to(ROOT / "benchmarks/runner")
        if rel.parts[0] == "protocols" or rel.name in FEATURES:
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("protocols."):
                found.append(f"{rel}:{node.lineno}: from .{node.module} import ...")
    assert not found, found
    assert all((ROOT / "benchmarks/runner" / name).is_file() for name in FEATURES)


def test_a_protocol_folder_imports_no_other_but_the_episodes_it_builds_on() -> None:
    """Each folder is its protocol's own: only the multi-agent games borrow the episodes' starts and solver."""
    found = []
    for path in _sources("benchmarks/runner/protocols"):
        rel = path.relative_to(ROOT / "benchmarks/runner/protocols")
        if len(rel.parts) < 2:
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom) and node.level == 2 and node.module:
                other = node.module.split(".")[0]
                if other in PROTOCOLS and other != rel.parts[0] and (rel.parts[0], other) != ("multi", "episodes"):
                    found.append(f"{rel}:{node.lineno}: from ..{node.module} import ...")
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
    assert set(PROTOCOLS) == NAMES == set(row_protocols())
    assert {EpisodeSpec.protocol, ItemSpec.protocol, GameSpec.protocol} == NAMES
    assert len({p.unit for p in PROTOCOLS.values()}) == 3 and len(set(selectors())) == 3
    for suite in ("smoke", "cube-bench-smoke", "multi-smoke"):
        protocol = protocol_for(load_suite(suite))
        assert isinstance(protocol, RunProtocol) and protocol is PROTOCOLS[load_suite(suite).protocol]


def test_an_unknown_protocol_is_one_line_naming_the_protocols() -> None:
    with pytest.raises(SuiteError, match=r"^unknown run protocol 'chess'; the protocols are episodes, questions, multi$"):
        protocol_named("chess")
