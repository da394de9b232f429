"""What a newcomer meets first keeps its promises: a short README, a manual of current behaviour, links that land.

The README is the front door (at most 100 lines and 900 words, in the shape of Gymnasium's own); the manual
(``docs/`` outside the results log) states how things are, so it holds no dates and stays under 50,000 words;
dated measurements live in the results log (``docs/results/`` and ``docs/performance.md``, the benchmarks' log).
Every relative link in README.md, CONTRIBUTING.md and docs/ lands on a file, and a link to a heading of a
markdown page lands on a heading that exists.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
RESULTS_LOG = [DOCS / "results", DOCS / "performance.md"]
"""The results log: dated measurements with their commands, machines and loads (not manual pages)."""
PAGES = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted(DOCS.rglob("*.md"))]
README_LINES, README_WORDS, MANUAL_WORDS = 100, 900, 50_000

MONTHS = "January|February|March|April|May|June|July|August|September|October|November|December"
DATE = re.compile(rf"\b20\d\d-\d\d-\d\d\b|\b(?:{MONTHS}) (?:\d{{1,2}}, )?20\d\d\b|\b\d{{1,2}} (?:{MONTHS}) 20\d\d\b")
"""An ISO date, "November 2026", "November 29, 2026" or "29 November 2026"."""


def manual_pages() -> list[Path]:
    """docs/ pages outside the results log."""
    return [p for p in sorted(DOCS.rglob("*.md"))
            if not any(p == part or part in p.parents for part in RESULTS_LOG)]


def words(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").split())


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[`*_]|\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip()).lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """The anchors of a markdown page's headings (GitHub numbers repeats: x, x-1, x-2)."""
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
    seen: dict[str, int] = {}
    found = set()
    for heading in re.findall(r"^#{1,6} +(.+?) *#*$", text, re.M):
        base = slug(heading)
        count = seen.get(base, 0)
        found.add(base if count == 0 else f"{base}-{count}")
        seen[base] = count + 1
    return found


def links(page: Path) -> list[str]:
    """The relative link targets of a page's markdown links and images, code blocks and spans aside."""
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
    text = re.sub(r"`[^`\n]*`", "", text)
    return [t for t in re.findall(r"\]\(([^)\s]+)\)", text) if not re.match(r"[a-z]+:", t)]


def test_the_readme_is_short() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= README_LINES, f"README.md has {len(text.splitlines())} lines"
    assert len(text.split()) <= README_WORDS, f"README.md has {len(text.split())} words"


def test_the_readme_holds_no_dates() -> None:
    assert not DATE.findall((ROOT / "README.md").read_text(encoding="utf-8"))


def test_the_manual_stays_under_its_word_budget() -> None:
    counts = {p.relative_to(ROOT).as_posix(): words(p) for p in manual_pages()}
    assert counts and sum(counts.values()) <= MANUAL_WORDS, sorted(counts.items(), key=lambda kv: -kv[1])


@pytest.mark.parametrize("page", manual_pages(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_a_manual_page_holds_no_date(page: Path) -> None:
    """A date belongs to a measurement, and a measurement to the results log."""
    assert not DATE.findall(page.read_text(encoding="utf-8")), f"{page.name}: move dated figures to docs/results/"


def test_the_results_log_has_an_index_that_names_each_of_its_files() -> None:
    index = DOCS / "results" / "README.md"
    named = set(re.findall(r"\]\(([^)#\s]+)", index.read_text(encoding="utf-8")))
    files = {p.name for p in (DOCS / "results").glob("*.md")} - {"README.md"}
    assert files and files <= named and "../performance.md" in named


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_relative_link_lands(page: Path) -> None:
    broken = []
    for target in links(page):
        file, _, anchor = target.partition("#")
        path = (page.parent / file).resolve() if file else page
        if not path.exists():
            broken.append(f"{target}: no such file")
        elif anchor and path.suffix == ".md" and anchor not in anchors(path):
            broken.append(f"{target}: no such heading")
    assert broken == [], f"{page.relative_to(ROOT)}: {broken}"


@pytest.mark.parametrize("heading,expected", [
    ("Quick start (no API key, a minute or two)", "quick-start-no-api-key-a-minute-or-two"),
    ("Against a paper's published tables: `cubebench compare`", "against-a-papers-published-tables-cubebench-compare"),
    ("Exp 1: basic agents, sparse reward (608 episodes each)", "exp-1-basic-agents-sparse-reward-608-episodes-each"),
    ("The move budget per depth: the `blind` floor", "the-move-budget-per-depth-the-blind-floor"),
])
def test_anchors_are_githubs(heading: str, expected: str) -> None:
    assert slug(heading) == expected


def test_the_checks_catch_what_they_look_for(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("# Top\n## Top\n```\n## not a heading\n```\n[a](other.md#x) [b](#top-1) `[c](nowhere.md)` "
                    "[d](https://example.org)\nmeasured on 2026-11-29, and in November 2026\n")
    assert links(page) == ["other.md#x", "#top-1"]
    assert anchors(page) == {"top", "top-1"}
    assert len(DATE.findall(page.read_text())) == 2
