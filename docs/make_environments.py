"""Write docs/environments.md from the environments' class docstrings, as Gymnasium builds its env pages.

Run from the repository root: ``python docs/make_environments.py`` writes the page;
``python docs/make_environments.py --check`` writes nothing and exits 1 if the page differs from what
the docstrings make now (tests/envs/test_environments_page.py runs the same comparison).

The page is a header (what it covers and a runnable example), then one section per env of
:data:`ENVS`: a title, where the class lives, and its docstring, whose ``## `` headings (Gymnasium's
Description, Action Space, Observation Space, Rewards, Starting State, Episode End, Arguments, and any
further ones) become ``### `` headings.  The docstrings are read from the source with :mod:`ast`, so
neither Gymnasium nor PettingZoo is imported and the page can be made on a minimal install.
"""

from __future__ import annotations

import argparse
import ast
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "environments.md"


@dataclass(frozen=True)
class DocumentedEnv:
    """One env of the page: its section title, its import name and the source file that holds its class."""

    title: str
    qualname: str
    """As a user imports it (``cubebench.envs.CubeEnv``)."""
    source: str
    """Relative to the repository root."""

    @property
    def class_name(self) -> str:
        return self.qualname.rsplit(".", 1)[1]


ENVS: tuple[DocumentedEnv, ...] = (
    DocumentedEnv("The four tiers", "cubebench.envs.CubeEnv", "cube_env/envs/cube_env.py"),
    DocumentedEnv("Observer and actor", "cubebench.envs.multi.observer_actor.ObserverActorEnv",
                  "cube_env/envs/multi/observer_actor.py"),
    DocumentedEnv("Two cameras", "cubebench.envs.multi.two_cameras.TwoCamerasEnv",
                  "cube_env/envs/multi/two_cameras.py"),
    DocumentedEnv("Scrambler versus solver", "cubebench.envs.multi.scrambler_solver.ScramblerSolverEnv",
                  "cube_env/envs/multi/scrambler_solver.py"),
)
"""The envs the page documents, in its order."""

SECTIONS = ("Description", "Action Space", "Observation Space", "Rewards", "Starting State", "Episode End", "Arguments")
"""Gymnasium's sections, which every docstring of :data:`ENVS` has, in this order (others may come between and after
them, as Gymnasium's own "Vectorized environment" does)."""

HEADER = '''# Environments

The four single-agent ids are tiers of one `CubeEnv`; the three multi-agent envs are PettingZoo envs around
the same core (the `multi` extra; [multi-agent.md](multi-agent.md) shows them at play). Each section is an
env's docstring, in Gymnasium's layout: `python docs/make_environments.py` writes this page from them, and
tests/envs/test_environments_page.py fails when the two differ.

```python
import gymnasium as gym
import cubebench  # registers the CubeBench-* ids

env = gym.make("CubeBench-Vertex-v0", depth=2, reward="sticker", max_moves=5)
obs, info = env.reset(seed=0)  # a start certified 2 quarter turns from solved
y = env.unwrapped.action_names.index("y")  # a view rotation: look at another side
obs, reward, terminated, truncated, info = env.step(y)
print(obs.shape, reward, terminated, truncated, info)
env.close()
```
'''


def class_docstring(env: DocumentedEnv, root: Path = ROOT) -> str:
    """The cleaned docstring of ``env``'s class, read from its source file; ``ValueError`` if it has none."""
    tree = ast.parse((root / env.source).read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == env.class_name:
            doc = ast.get_docstring(node, clean=True)
            if not doc:
                raise ValueError(f"{env.source}: class {env.class_name} has no docstring")
            return doc
    raise ValueError(f"{env.source} defines no class {env.class_name}")


def headings(doc: str) -> list[str]:
    """The ``## `` headings of a docstring, in order (lines inside code fences are not headings)."""
    found, fenced = [], False
    for line in doc.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and line.startswith("## "):
            found.append(line[3:].strip())
    return found


def check_sections(env: DocumentedEnv, doc: str) -> None:
    """Refuse a docstring that lacks one of Gymnasium's sections, has one twice, or has them out of order."""
    found = [h for h in headings(doc) if h in SECTIONS]
    if found != list(SECTIONS):
        raise ValueError(f"{env.qualname}'s docstring must have the sections {', '.join(SECTIONS)}, once each and "
                         f"in that order; it has {headings(doc)}")


def section(env: DocumentedEnv, root: Path = ROOT) -> str:
    """One env's section: title, where it lives, then its docstring with every heading one level down."""
    doc = class_docstring(env, root)
    check_sections(env, doc)
    summary, _, body = doc.partition("\n\n")
    if summary.startswith(f"{env.title}: "):  # the title is the section's heading already
        summary = summary[len(env.title) + 2:]
        summary = summary[:1].upper() + summary[1:]
    lines, fenced = [], False
    for line in body.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        lines.append(f"#{line}" if not fenced and line.startswith("#") else line)
    where = f"`{env.qualname}`, in [{env.source}](../{env.source})"
    return f"## {env.title}\n\n{where}. {summary}\n\n" + "\n".join(lines).strip() + "\n"


def page(root: Path = ROOT) -> str:
    """The whole page, as the docstrings under ``root`` make it now."""
    return "\n".join([HEADER, *(section(env, root) for env in ENVS)])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if the page is out of date")
    args = parser.parse_args(argv)
    text = page()
    if args.check:
        current = PAGE.read_text(encoding="utf-8") if PAGE.exists() else ""
        if current != text:
            print(f"{PAGE.relative_to(ROOT)} differs from the env docstrings: run python docs/make_environments.py",
                  file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(text, encoding="utf-8")
    print(f"wrote {PAGE.relative_to(ROOT)} ({len(text.split())} words)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
