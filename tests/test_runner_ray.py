"""The Ray backend plays the same episodes as the inline backend and writes the same store.

Ray is an optional extra (``pip install 'cubebench[ray]'``): skipped with the reason when it is not
importable.  Slow: starting a local Ray cluster takes tens of seconds on 2 cores.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from cubebench.runner.store import open_run
from cubebench.runner.cli import main

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(importlib.util.find_spec("ray") is None,
                       reason="ray is not installed (optional extra: pip install 'cubebench[ray]')"),
]

SUITE = {"name": "tiny", "tiers": ["symbolic", "face"], "depths": [1, 3], "instances": 2,
         "rewards": ["none"], "tool_settings": ["basic", "ideal"]}


def _actions(db: Path) -> list[tuple[str, str, list[str]]]:
    with open_run(db) as store:
        return [(k, r.status, [s.action for s in r.steps]) for k, r in store.records()]


def test_ray_backend_matches_the_inline_backend_and_resumes(tmp_path: Path) -> None:
    suite = tmp_path / "tiny.json"
    suite.write_text(json.dumps(SUITE))
    inline, remote = tmp_path / "inline.sqlite", tmp_path / "ray.sqlite"
    base = ["run", "--distance-budget", "0", "--suite", str(suite), "--agent", "random", "--no-progress", "--quiet"]
    assert main(base + ["--out", str(inline)]) == 0
    assert main(base + ["--out", str(remote), "--backend", "ray", "--concurrency", "2", "--limit", "5"]) == 0
    with open_run(remote) as store:
        assert len(store.rows()) == 5
        assert store.get_meta("config")["backend"] == "ray"
    assert main(["run", "--resume", str(remote), "--no-progress", "--quiet"]) == 0  # resumes on Ray too
    assert _actions(remote) == _actions(inline)
