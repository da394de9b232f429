"""docs/environments.md is what docs/make_environments.py makes from the env docstrings, and what it shows holds.

The page and the docstrings cannot disagree: the page is generated from them, and this test fails when the
committed page is not what the docstrings make now.  Its examples run (the header's program, the docstrings'
``>>>`` sessions), and the headings that other pages and the code point to are still there.
"""

from __future__ import annotations

import doctest
import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "environments.md"


def generator() -> ModuleType:
    """docs/make_environments.py as a module (docs/ is not a package)."""
    spec = importlib.util.spec_from_file_location("make_environments", ROOT / "docs" / "make_environments.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


def test_the_page_is_what_the_docstrings_make() -> None:
    assert PAGE.read_text(encoding="utf-8") == generator().page(), (
        "docs/environments.md differs from the env docstrings: run python docs/make_environments.py")


def test_a_changed_docstring_changes_the_page(tmp_path: Path) -> None:
    """The comparison above can fail: one word changed in a docstring changes the page."""
    gen = generator()
    for env in gen.ENVS:
        (tmp_path / env.source).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / env.source, tmp_path / env.source)
    source = tmp_path / gen.ENVS[0].source
    text = source.read_text(encoding="utf-8")
    assert "## Rewards" in text
    source.write_text(text.replace("## Rewards\n", "## Rewards\n\n    Edited.\n", 1), encoding="utf-8")
    changed = gen.page(tmp_path)
    assert changed != gen.page() and "Edited." in changed


def test_a_docstring_without_gymnasiums_sections_is_refused() -> None:
    gen = generator()
    env = gen.ENVS[0]
    doc = gen.class_docstring(env)
    gen.check_sections(env, doc)
    for broken in (doc.replace("## Starting State", "## Start"),
                   doc.replace("## Rewards", "## Rewards\n\n## Rewards"),
                   doc.replace("## Action Space", "## Swapped").replace("## Observation Space", "## Action Space")):
        with pytest.raises(ValueError, match="Description, Action Space"):
            gen.check_sections(env, broken)


def python_blocks(text: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", text, re.S)


def test_the_header_example_runs(tmp_path: Path) -> None:
    """Run with an empty solver cache, so an example that needs the exact solver's tables fails here."""
    block = python_blocks(PAGE.read_text(encoding="utf-8"))[0]
    env = {**os.environ, "CUBEBENCH_CACHE_DIR": str(tmp_path / "empty-cache")}
    run = subprocess.run([sys.executable, "-c", block], cwd=tmp_path, capture_output=True, text=True, timeout=180,
                         env=env)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "(224, 224, 3) 0.0 False False" in run.stdout


def test_the_docstring_sessions_hold() -> None:
    gen = generator()
    parser, runner = doctest.DocTestParser(), doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    sessions = 0
    for env in gen.ENVS:
        test = parser.get_doctest(gen.class_docstring(env), {}, env.qualname, env.source, 0)
        sessions += bool(test.examples)
        runner.run(test)
    assert sessions >= 1
    assert runner.summarize(verbose=False).failed == 0


def anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def page_anchors(text: str) -> set[str]:
    """Every anchor of a page's headings (a repeated one gets ``-1``, ``-2``, as GitHub numbers them)."""
    seen: dict[str, int] = {}
    out = set()
    for line in re.sub(r"```.*?```", "", text, flags=re.S).splitlines():
        match = re.match(r"#+ (.*)", line)
        if match:
            base = anchor(match.group(1))
            out.add(f"{base}-{seen[base]}" if base in seen else base)
            seen[base] = seen.get(base, 0) + 1
    return out


def repository_texts() -> list[Path]:
    skip = {".git", ".venv", "node_modules", "__pycache__"}
    return [p for p in ROOT.rglob("*") if p.suffix in (".md", ".py") and p.is_file()
            and not skip & set(p.relative_to(ROOT).parts) and p != Path(__file__).resolve()]


def test_what_other_pages_and_the_code_point_to_is_there() -> None:
    """Links ``environments.md#anchor`` and references ``docs/environments.md, "Section"`` find their heading."""
    text = PAGE.read_text(encoding="utf-8")
    anchors = page_anchors(text)
    headings = {m.group(1).strip() for m in re.finditer(r"^#+ (.*)$", text, re.M)}
    links, named = set(), set()
    for path in repository_texts():
        body = path.read_text(encoding="utf-8", errors="replace")
        links |= {(path.name, a) for a in re.findall(r"environments\.md#([\w\-]+)", body)}
        named |= {(path.name, h) for h in re.findall(r'environments\.md[,;] "([^"]+)"', body)}
    assert named, "the code names the page's sections (\"Move budget\"): this test should see them"
    assert not {(f, a) for f, a in links if a not in anchors}, f"anchors missing from the page: {links}"
    assert not {(f, h) for f, h in named if h not in headings}, f"sections missing from the page: {named}"


def test_the_anchor_rule() -> None:
    assert anchor("Move budget") == "move-budget"
    assert page_anchors("## Rewards\n### Rewards\n```\n# not a heading\n```\n## Two cameras") == {
        "rewards", "rewards-1", "two-cameras"}
