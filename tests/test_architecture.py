"""The layers of docs/architecture.md, checked on the source: engine <- envs <- wrappers <- agents <- runner <- training
<- bridges.

Every import statement counts, at module level or inside a function: a lower
layer never imports a higher one, and no two modules import each other
(directly or round a loop), so no function-level import can hide a cycle.  And one meaning per word: no two
modules share a basename and no two public constants a name, unless an allow table below lists them with a reason.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

import pytest

from cubebench.tiers import TIER_SPECS

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ("engine", "envs", "wrappers", "agents", "runner", "training", "bridges")
"""Bottom to top; a module may import its own layer and those below it."""
LAYER_OF = {
    "cubebench.envs": "envs",
    "cubebench.wrappers": "wrappers",
    "cubebench.agents": "agents",
    "cubebench.runner": "runner",
    "cubebench.suites": "runner",
    "cubebench.training": "training",
    "cubebench.bridges": "bridges",
}
"""Subpackages above the engine; every other ``cubebench.*`` module is the engine (engine, render, solver, data)."""
ROOT_LAYER = "engine"
"""``cubebench/__init__`` registers the tier ids by entry-point strings (``cubebench.registration``) and loads
``CubeEnv`` and ``make_cube_env`` on first use, so it imports the engine layer only."""


def package_dirs() -> dict[str, Path]:
    """``cubebench.*`` package name -> source folder, as the build maps them (pyproject.toml)."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    mapped = config["package-dir"]
    dirs = {}
    for package in config["packages"]:
        base = max((p for p in mapped if package == p or package.startswith(p + ".")), key=len)
        dirs[package] = ROOT / mapped[base] / Path(*package[len(base):].split(".")[1:])
    return dirs


@lru_cache(maxsize=1)
def modules() -> dict[str, Path]:
    """Every source module as ``cubebench.*`` name -> file (packages by their ``__init__``)."""
    found = {}
    for package, folder in package_dirs().items():
        for path in sorted(folder.glob("*.py")):
            found[package if path.stem == "__init__" else f"{package}.{path.stem}"] = path
    return found


def layer(module: str) -> str:
    if module == "cubebench":
        return ROOT_LAYER
    prefix = max((p for p in LAYER_OF if module == p or module.startswith(p + ".")), key=len, default=None)
    return LAYER_OF[prefix] if prefix else "engine"


def _resolve(name: str) -> str | None:
    """The source module an imported name lives in (``None`` outside ``cubebench``)."""
    while name and name not in modules():
        name = name.rpartition(".")[0]
    return name or None


def imports_of(module: str) -> set[str]:
    """The ``cubebench`` modules that ``module`` imports anywhere in its file."""
    path = modules()[module]
    return _imports_in(ast.parse(path.read_text(), str(path)), module)


def _imports_in(tree: ast.AST, module: str) -> set[str]:
    package = module if modules()[module].stem == "__init__" else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                anchor = ".".join(parts[: len(parts) - node.level + 1])
                base = f"{anchor}.{base}" if base else anchor
            names = [f"{base}.{alias.name}" for alias in node.names]
        else:
            continue
        found |= {m for m in map(_resolve, names) if m and m != module}
    return found


def test_every_module_sits_in_a_layer_and_the_map_covers_the_source() -> None:
    assert {layer(m) for m in modules()} == set(LAYERS)
    assert len(modules()) > 100, "the package map in pyproject.toml lost modules"


@pytest.mark.parametrize("module", sorted(m for m in LAYER_OF))
def test_layer_packages_exist(module: str) -> None:
    assert module in modules()


def test_no_lower_layer_imports_a_higher_one() -> None:
    wrong = [f"{m} ({layer(m)}) imports {i} ({layer(i)})" for m in modules() for i in sorted(imports_of(m))
             if LAYERS.index(layer(i)) > LAYERS.index(layer(m))]
    assert not wrong, "wrong-way imports:\n" + "\n".join(wrong)


def test_no_import_cycle_between_modules() -> None:
    """A package's ``__init__`` may gather its submodules; everything else is a DAG."""
    graph = {m: {i for i in imports_of(m) if not _is_parent_init(i, m)} for m in modules()}
    cycles = []
    state: dict[str, int] = {}

    def visit(node: str, stack: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycles.append(" -> ".join(stack[stack.index(nxt):] + [node, nxt]) if nxt in stack else f"{node} -> {nxt}")
            elif nxt not in state:
                visit(nxt, stack + [node])
        state[node] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m, [])
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


def _is_parent_init(imported: str, importer: str) -> bool:
    """``importer`` reaching its own package's ``__init__`` (``from . import x`` of a sibling is not this)."""
    return importer.rpartition(".")[0] == imported and modules()[imported].stem == "__init__"


def test_the_checker_sees_wrong_way_and_hidden_imports(tmp_path: Path) -> None:
    """The checker itself: a function-level import of a higher layer and a relative one are both found."""
    assert "cubebench.runner.cli" in imports_of("cubebench.runner.__main__")
    assert "cubebench.wrappers.description" in imports_of("cubebench.agents.episode")
    assert "cubebench.tiers" in imports_of("cubebench") and "cubebench.wrappers.tier_envs" not in imports_of("cubebench")
    assert layer("cubebench.engine.moves") == "engine" and layer("cubebench.runner.store") == "runner"
    source = "def f():\n    from cubebench.runner import store\n"
    tree = ast.parse(source)
    hidden = [n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    assert hidden and _resolve(f"{hidden[0].module}.store") == "cubebench.runner.store"


LAZY_ALLOWED = ("cubebench.solver.optimal", "cubebench.curriculum", "cubebench.render.vertex_gl", "cubebench.agents.rl",
                "cubebench.envs.multi")
"""The only own modules a function may import: the exact solver and the curriculum that needs it (Numba
tables: a second of compiling on import), the 3D renderer (the optional pyrender), RL (the optional torch) and
the multi-agent envs (the optional PettingZoo).
Everything else is imported at the top, where a cycle cannot hide."""


def function_level_imports(module: str) -> set[str]:
    """The ``cubebench`` modules ``module`` imports anywhere but at its top level."""
    tree = ast.parse(modules()[module].read_text())
    top = {id(node) for node in tree.body}
    inner = ast.Module(body=[n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom)) and id(n) not in top],
                       type_ignores=[])
    return {m for m in _imports_in(inner, module)}


def test_function_level_imports_are_only_for_heavy_optional_parts() -> None:
    hidden = [f"{m} imports {i} inside a function" for m in modules() for i in sorted(function_level_imports(m))
              if not any(i == a or i.startswith(a + ".") for a in LAZY_ALLOWED)]
    assert not hidden, "\n".join(hidden)


def _modules_loaded_by(code: str) -> list[str]:
    """The ``sys.modules`` names a fresh interpreter holds after running ``code``."""
    out = subprocess.run([sys.executable, "-c", code + "\nimport json, sys; print(json.dumps(sorted(sys.modules)))"],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.splitlines()[-1])


def test_importing_the_engine_loads_no_wrappers_and_no_gymnasium() -> None:
    loaded = _modules_loaded_by("import cubebench.engine")
    unwanted = [m for m in loaded if m.split(".")[0] == "gymnasium" or m.startswith("cubebench.wrappers")
                or m.startswith("cubebench.envs")]
    assert not unwanted, f"import cubebench.engine loads {unwanted}"
    assert "cubebench.engine" in loaded


def test_the_ids_are_registered_whichever_is_imported_first() -> None:
    """``import cubebench`` before or after ``import gymnasium``: the ids are there, and make builds them."""
    for code in ("import cubebench\nimport gymnasium as gym", "import gymnasium as gym\nimport cubebench"):
        loaded = _modules_loaded_by(code + "\nassert set(cubebench.TIERS.values()) <= set(gym.registry)"
                                    "\nassert gym.make('CubeBench-Face-v0').unwrapped.view_actions")
        assert "cubebench.wrappers.tier_envs" in loaded


TIER_NAMES = tuple(TIER_SPECS)
HOMES = {"tiers": "cubebench.tiers", "providers": "cubebench.agents.llm.factory", "faces": "cubebench.engine.facelets"}
"""Where each restated fact has its one definition: the tier registry, the model-spec heads, the face order."""


def _restated_facts(module: str) -> list[str]:
    """Literals in ``module`` that restate a fact defined in :data:`HOMES`: a table keyed by two or more tier
    names (or a tuple of them), a tuple of model providers, the face-order string."""
    found = []
    for node in ast.walk(ast.parse(modules()[module].read_text())):
        if isinstance(node, ast.Dict):
            items = node.keys
        elif isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            items = node.elts
        else:
            items = None
        if items is not None:
            names = [k.value for k in items if isinstance(k, ast.Constant) and isinstance(k.value, str)]
            if module != HOMES["tiers"] and len(set(names) & set(TIER_NAMES)) >= 2:
                found.append(f"{module}:{node.lineno}: a table of tiers {sorted(set(names) & set(TIER_NAMES))}")
            if module != HOMES["providers"] and {"anthropic", "openai-compatible"} <= set(names):
                found.append(f"{module}:{node.lineno}: a list of model providers")
        if (module != HOMES["faces"] and isinstance(node, ast.Constant) and isinstance(node.value, str)
                and (node.value == "URFDLB" or "[URFDLB]" in node.value)):
            found.append(f"{module}:{node.lineno}: the face order typed out")
    return found


def _tier_comparisons(module: str) -> list[str]:
    """Comparisons in ``module`` of something named ``*tier*`` with a tier's name (``tier == "symbolic"``,
    ``spec.tier in ("face", "vertex")``): a per-tier fact decided by the name instead of read from the spec."""
    found = []
    for node in ast.walk(ast.parse(modules()[module].read_text())):
        if not isinstance(node, ast.Compare):
            continue
        parts = [node.left, *node.comparators]
        parts += [e for p in parts if isinstance(p, (ast.Tuple, ast.List, ast.Set)) for e in p.elts]
        named = [p.value for p in parts if isinstance(p, ast.Constant) and p.value in TIER_NAMES]
        rest = ast.unparse(node)
        for name in named:
            rest = rest.replace(repr(name), "")
        if named and "tier" in rest.lower():
            found.append(f"{module}:{node.lineno}: {ast.unparse(node)[:80]}")
    return found


def test_no_tier_name_is_compared_outside_the_registry() -> None:
    """A tier's facts are its spec's fields (``pictured``, ``partial``, ``hides_state``, ``forms``, ``wrapper``):
    a fifth tier is one spec only if no layer tells tiers apart by name (tests/runner/test_tier_recipe.py)."""
    found = [line for m in modules() if m != HOMES["tiers"] for line in _tier_comparisons(m)]
    assert not found, "read the tier's spec (cubebench.tiers.tier_spec) instead:\n" + "\n".join(found)


def test_the_tier_comparison_check_sees_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = tmp_path / "fake.py"
    fake.write_text('def f(task, tier, reward):\n    a = task.tier != "symbolic"\n    b = tier in ("face", "vertex")\n'
                    '    return a, b, reward == "face"\n')
    monkeypatch.setitem(modules(), "cubebench.runner.fake", fake)
    assert [line.split(": ", 1)[1] for line in _tier_comparisons("cubebench.runner.fake")] == [
        "task.tier != 'symbolic'", "tier in ('face', 'vertex')"]


def _tier_lists(module: str) -> list[str]:
    """Texts in ``module`` (string literals and f-string parts, docstrings aside) that list tiers by hand:
    ``visual, face and vertex``, ``Face and Vertex``; such a text goes stale when a tier is added, where
    :func:`cubebench.tiers.tier_names` does not."""
    words = "|".join([*TIER_SPECS, *(spec.title for spec in TIER_SPECS.values())])
    listed = re.compile(rf"\b({words})(, | and )({words})\b")
    tree = ast.parse(modules()[module].read_text())
    docstrings = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Expr)}
    return [f"{module}:{node.lineno}: {node.value[:80]!r}" for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
            and listed.search(node.value)]


def test_no_text_lists_the_tiers_by_hand() -> None:
    found = [line for m in modules() if m != HOMES["tiers"] for line in _tier_lists(m)]
    assert not found, "name them with cubebench.tiers.tier_names (e.g. tier_names('pictured')):\n" + "\n".join(found)


def test_the_tier_list_check_sees_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = tmp_path / "fake.py"
    fake.write_text('"""Plays symbolic, visual and face."""\nHELP = f"what the visual, face and vertex tiers show ({1})"\n'
                    'BUDGET = "40 view rotations on Face and Vertex"\nEXAMPLE = "e.g. symbolic,face"\n')
    monkeypatch.setitem(modules(), "cubebench.runner.fake", fake)
    assert sorted(line.split(": ", 1)[1] for line in _tier_lists("cubebench.runner.fake")) == [
        "'40 view rotations on Face and Vertex'", "'what the visual, face and vertex tiers show ('"]


def test_each_per_tier_fact_provider_list_and_the_face_order_is_defined_once() -> None:
    """Adding a tier means one spec in ``cubebench.tiers``; a provider, one entry in ``PROVIDERS``."""
    restated = [line for m in modules() for line in _restated_facts(m)]
    assert not restated, "restated facts (read them from their home instead):\n" + "\n".join(restated)


def test_the_restatement_check_sees_a_tier_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = tmp_path / "fake.py"
    fake.write_text('NOTES = {"face": 1, "vertex": 2}\nP = ("openai", "anthropic", "openai-compatible")\nF = "URFDLB"\n')
    monkeypatch.setitem(modules(), "cubebench.runner.fake", fake)
    assert len(_restated_facts("cubebench.runner.fake")) == 3


def test_tests_import_their_helpers_from_helpers_not_conftest() -> None:
    """conftest.py holds fixtures, which pytest injects; helpers a test imports live in tests/helpers.py."""
    importers = [p.name for p in sorted((ROOT / "tests").rglob("*.py"))
                 if any(isinstance(n, ast.ImportFrom) and n.module == "conftest"
                        or isinstance(n, ast.Import) and any(a.name == "conftest" for a in n.names)
                        for n in ast.walk(ast.parse(p.read_text())))]
    assert not importers, f"import these from helpers, not conftest: {importers}"


TEST_FOLDERS = {"engine": "cube_env's engine, solvers, renderers, budgets and CLI", "tasks": "the question tests",
                "envs": "the envs, the vector env and the multi-agent envs", "wrappers": "tiers and rewards",
                "agents": "agents, tools, model clients, RL, the sandbox", "runner": "the runner and its scripts",
                "training": "training data, the policy's SFT and GRPO", "bridges": "Inspect AI and verifiers"}
"""The test folders, one per package of the layers (what each holds)."""


def test_test_files_mirror_the_packages() -> None:
    """Each test file sits in the folder of the package it tests; the top level keeps conftest, helpers and the
    project-wide checks (architecture, docs, packaging, README)."""
    folders = {p.name for p in (ROOT / "tests").iterdir() if p.is_dir() and not p.name.startswith((".", "__"))}
    assert folders == set(TEST_FOLDERS)
    top = {p.name for p in (ROOT / "tests").glob("*.py")}
    assert top == {"conftest.py", "helpers.py", "learners.py", "test_architecture.py", "test_docs_examples.py",
                   "test_packaging.py", "test_readme_commands.py", "test_front_door.py"}  # learners: the shortcut models fairness tests train
    assert all(any((ROOT / "tests" / f).glob("test_*.py")) for f in TEST_FOLDERS)


# One meaning per word (docs/architecture.md): a name says what it holds, so no two modules share a basename and
# no two modules define a public UPPER_CASE constant of the same name, unless the table below allows it.  The
# allowed ones are modules of parallel packages that play the same role by design: each entry lists exactly the
# modules that may share the name, with the reason.  A new module reusing the name elsewhere still fails.
SHARED_MODULE_NAMES: dict[str, tuple[tuple[str, ...], str]] = {
    "common": (("cubebench.tasks.cube_bench.common", "cubebench.tasks.inf_bench.common"),
               "each paper package's own helpers and prompt words, shared by that paper's tests"),
    "questions": (("cubebench.bridges.inspect.questions", "cubebench.bridges.verifiers.questions"),
                  "each bridge's question tasks, in its own framework's terms"),
    **{role: (tuple(f"cubebench.runner.protocols.{p}.{role}" for p in ("episodes", "multi", "questions")),
              "each run protocol folder's module of that role (docs/architecture.md, 'The run protocols')")
       for role in ("plan", "play", "protocol", "suite")},
    "report": (("cubebench.runner.report", *(f"cubebench.runner.protocols.{p}.report" for p in
                                              ("episodes", "multi", "questions"))),
               "a run's report (cubebench.runner.report, a documented import) and each protocol's tables in it"),
}
"""Module basenames (besides ``__init__``/``__main__``) that parallel packages share by design."""
SHARED_CONSTANTS: dict[str, tuple[tuple[str, ...], str]] = {
    **{name: (("cubebench.envs.multi.observer_actor", "cubebench.envs.multi.scrambler_solver",
               "cubebench.envs.multi.two_cameras"),
              "each multi-agent env module's row of the games table (GAME), PettingZoo id (NAME) and seats (SEATS), "
              "as the recipe for adding a game asks") for name in ("GAME", "NAME", "SEATS")},
    **{name: (modules_, "each question test module's own prompt text, by the same name in every test of its paper")
       for name, modules_ in {
           "SYSTEM": ("cubebench.tasks.cube_bench.closed_loop", "cubebench.tasks.cube_bench.move_choice",
                      "cubebench.tasks.cube_bench.move_effect", "cubebench.tasks.cube_bench.reconstruction",
                      "cubebench.tasks.cube_bench.verification", "cubebench.tasks.inf_bench.common",
                      "cubebench.tasks.stare.net_choice", "cubebench.tasks.stare.net_fold",
                      "cubebench.tasks.stare.perception"),
           "USER": ("cubebench.tasks.cube_bench.closed_loop", "cubebench.tasks.cube_bench.move_effect",
                    "cubebench.tasks.cube_bench.reconstruction", "cubebench.tasks.cube_bench.verification"),
           "VARIANTS": ("cubebench.tasks.cube_bench.closed_loop", "cubebench.tasks.cube_bench.reconstruction",
                        "cubebench.tasks.cube_bench.verification"),
           "SEES": ("cubebench.tasks.cube_bench.move_choice", "cubebench.tasks.cube_bench.move_effect",
                    "cubebench.tasks.stare.net_choice", "cubebench.tasks.stare.net_fold"),
           "STRICT_ASK": ("cubebench.tasks.stare.net_choice", "cubebench.tasks.stare.net_fold",
                          "cubebench.tasks.stare.perception"),
           "QUESTION": ("cubebench.tasks.stare.net_choice", "cubebench.tasks.stare.net_fold"),
           "QUESTIONS": ("cubebench.tasks.cube_bench.verification", "cubebench.tasks.stare.perception"),
       }.items()},
    "SCHEMA": (tuple(f"cubebench.runner.protocols.{p}.suite" for p in ("episodes", "multi", "questions")),
               "each run protocol's suite-file schema, in its folder's suite module"),
    "RECORD_KEY": (("cubebench.bridges.inspect.episodes", "cubebench.bridges.verifiers.game"),
                   "each bridge's key of the episode record in its framework's sample state, spelled as that "
                   "framework allows (an Inspect store key, a verifiers state column)"),
}
"""Public module-level UPPER_CASE constants that parallel modules share by design."""

_UPPER = re.compile(r"^[A-Z][A-Z0-9_]*$")


def public_constants(path: Path) -> set[str]:
    """The public UPPER_CASE names a module assigns at module level (also under a top-level ``if``/``try``)."""
    found: set[str] = set()

    def walk(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.Assign):
                found.update(t.id for t in node.targets if isinstance(t, ast.Name))
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                found.add(node.target.id)
            elif isinstance(node, (ast.If, ast.Try)):
                walk(node.body)
                walk(node.orelse)
                for handler in getattr(node, "handlers", []):
                    walk(handler.body)
                walk(getattr(node, "finalbody", []))

    walk(ast.parse(path.read_text()).body)
    return {name for name in found if _UPPER.match(name)}


def _allowed(*tables: dict[str, tuple[tuple[str, ...], str]]) -> dict[str, set[str]]:
    allowed: dict[str, set[str]] = {}
    for table in tables:
        for name, (listed, _reason) in table.items():
            allowed.setdefault(name, set()).update(listed)
    return allowed


def shared_names(found: dict[str, set[str]], allowed: dict[str, set[str]]) -> list[str]:
    """Each name held by two or more modules that the allow tables do not all list."""
    return [f"{name}: {', '.join(sorted(holders))}" for name, holders in sorted(found.items())
            if len(holders) > 1 and not holders <= allowed.get(name, set())]


def module_basenames() -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for module, path in modules().items():
        if path.stem not in ("__init__", "__main__"):
            found.setdefault(path.stem, set()).add(module)
    return found


def constant_holders() -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for module, path in modules().items():
        for name in public_constants(path):
            found.setdefault(name, set()).add(module)
    return found


def test_no_two_modules_share_a_basename() -> None:
    wrong = shared_names(module_basenames(), _allowed(SHARED_MODULE_NAMES))
    assert not wrong, "modules sharing a name (rename one so the name says what it holds):\n" + "\n".join(wrong)


def test_no_two_public_constants_share_a_name() -> None:
    wrong = shared_names(constant_holders(), _allowed(SHARED_CONSTANTS))
    assert not wrong, ("public constants sharing a name (one home for one value; else a name that says what it "
                       "holds):\n" + "\n".join(wrong))


def test_the_shared_name_tables_list_only_names_still_shared() -> None:
    """Every allowed module still holds its name, and every entry is still shared, so the tables shrink with
    the code."""
    stale = []
    for found, table in ((module_basenames(), SHARED_MODULE_NAMES), (constant_holders(), SHARED_CONSTANTS)):
        for name, listed in _allowed(table).items():
            holders = found.get(name, set())
            stale += [f"{name}: {m} no longer holds it" for m in sorted(listed - holders)]
            if len(holders) < 2:
                stale.append(f"{name}: held by {len(holders)} module(s), nothing is shared")
    assert not stale, "stale entries in the shared-name tables:\n" + "\n".join(stale)


def test_the_shared_name_checks_see_a_repeat(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text("A = 1\nif True:\n    B: int = 2\n_C = 3\nD, e = 4, 5\n__all__ = ['A']\n")
    assert public_constants(source) == {"A", "B"}
    assert shared_names({"X": {"p.a", "p.b"}}, {}) == ["X: p.a, p.b"]
    assert shared_names({"X": {"p.a", "p.b"}}, {"X": {"p.a", "p.b", "p.c"}}) == []
    assert shared_names({"X": {"p.a", "p.b", "p.d"}}, {"X": {"p.a", "p.b"}}) == ["X: p.a, p.b, p.d"]
