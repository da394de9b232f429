"""The HTML report and the trajectory viewer render in a real browser (headless Chromium).

Each page is opened from a ``file://`` URL with JavaScript on and no network; the test checks the DOM
after scripts ran (``--dump-dom``) and the pixels of a screenshot: the report shows its table and its
plots, the viewer shows the cube image the agent saw.  Skipped only when no ``chromium`` is installed
(Debian: ``apt-get install -y chromium``).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from cubebench.runner.cli import main
from cubebench.engine.facelets import COLOUR_RGB
from helpers import needs

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install -y chromium)")

SUITE = {"name": "render", "tiers": ["visual", "face"], "depths": [1, 8], "instances": 1,
         "rewards": ["none"], "tool_settings": ["basic", "ideal"]}


def _chromium(tmp: Path, url: str, *extra: str) -> subprocess.CompletedProcess:
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
           "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={tmp / 'profile'}",
           *extra, url]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def render(tmp: Path, page: Path, size: str = "1200,900") -> tuple[str, np.ndarray]:
    """(DOM after scripts, screenshot RGB array) of ``page``."""
    shot = tmp / f"{page.stem}.png"
    dom = _chromium(tmp, page.as_uri(), "--dump-dom", "--virtual-time-budget=3000").stdout
    _chromium(tmp, page.as_uri(), f"--screenshot={shot}", f"--window-size={size}")
    assert shot.exists(), "chromium wrote no screenshot"
    return dom, np.asarray(Image.open(shot).convert("RGB"))


def pixels_near(img: np.ndarray, rgb, tol: int = 8) -> int:
    return int((np.abs(img.astype(int) - np.asarray(rgb)).max(axis=2) <= tol).sum())


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("render")
    (root / "suite.json").write_text(json.dumps(SUITE))
    db = root / "run.sqlite"
    assert main(["run", "--distance-budget", "0", "--suite", str(root / "suite.json"), "--agent", "solver", "--out", str(db),
                 "--no-progress", "--quiet"]) == 0
    return db


@needs("matplotlib")
def test_html_report_shows_its_tables_and_plots(tmp_path: Path, run: Path) -> None:
    page = tmp_path / "report.html"
    assert main(["report", str(run), "--html", str(page)]) == 0
    dom, img = render(tmp_path, page, "1200,2200")
    assert "Pass rate by tier and horizon" in dom and "Failure attribution" not in dom
    assert dom.count('<table class="results">') == 3 and "solver: ideal solver" in dom
    assert "Exploration before the first face turn (partial tiers)" in dom  # the Face episodes' table, after the two
    assert img.std() > 10  # not a blank page
    assert pixels_near(img, (0xee, 0xf2, 0xf7), 2) > 2000  # the tables' header cells
    for colour in ((0x55, 0xa8, 0x68), (0xdd, 0x84, 0x52)):  # the Face and Visual lines of the depth plot
        assert pixels_near(img, colour, 10) > 100


def test_viewer_shows_the_cube_image_the_agent_saw(tmp_path: Path, run: Path) -> None:
    page = tmp_path / "viewer.html"
    assert main(["view", str(run), "--out", str(page)]) == 0
    dom, img = render(tmp_path, page)
    assert '<img id="obsimg" alt="observation" src="data:image/png;base64,iVBOR' in dom
    assert "visual/d1/i00/none/basic" in dom and "true distance after" in dom
    assert len(re.findall(r'<div class="ep (?:solved|failed|error)', dom)) == 8  # every episode is listed
    for rgb in COLOUR_RGB:  # all six sticker colours of the unfolded net are on screen
        assert pixels_near(img, rgb) > 300, f"colour {tuple(rgb)} missing from the viewer screenshot"


def test_viewer_paints_text_observations(tmp_path: Path) -> None:
    suite = tmp_path / "text.json"
    suite.write_text(json.dumps({**SUITE, "name": "text", "tiers": ["visual"], "depths": [1]}))
    db, page = tmp_path / "text.sqlite", tmp_path / "text.html"
    assert main(["run", "--distance-budget", "0", "--suite", str(suite), "--agent", "random", "--obs-format",
                 "text", "--out", str(db), "--no-progress", "--quiet"]) == 0
    assert main(["view", str(db), "--out", str(page)]) == 0
    dom, img = render(tmp_path, page)
    assert "base64,iVBOR" not in dom
    assert len(re.findall(r'<span class="st" style="background:rgb\(', dom)) == 54  # every sticker of the net
    for rgb in COLOUR_RGB[1:]:  # the coloured letters are on screen (white is the page's own colour)
        assert pixels_near(img, rgb) > 20


def test_viewer_filter_and_limit(tmp_path: Path, run: Path) -> None:
    page = tmp_path / "face.html"
    assert main(["view", str(run), "--out", str(page), "--episodes", "face/", "--max-episodes", "2"]) == 0
    data = page.read_text()
    payload = json.loads(data.split("id='data'>", 1)[1].split("</script>", 1)[0].replace("<\\/", "</"))
    assert [e["key"] for e in payload["episodes"]] == ["face/d1/i00/none/basic", "face/d1/i00/none/ideal"]
    assert all(s["png"] for e in payload["episodes"] for s in e["steps"])


WIDTH_PROBE = ("<script>document.body.dataset.overflow = [...document.querySelectorAll('table.facts')]"
               ".map(t => Math.ceil(t.getBoundingClientRect().right) - window.innerWidth).join(',') + ';' + "
               "(document.documentElement.scrollWidth - window.innerWidth)</script>")
"""Appended to a page: how far each summary table's right edge, and the page, reach past the window (<= 0: inside)."""


@needs("openai")
def test_the_html_reports_summary_rows_fit_a_1280_pixel_window(tmp_path: Path) -> None:
    """The facts wrap inside the window instead of widening the page: here the errors line, which names the first
    error's cause (about 200 characters), and the budget line."""
    import socket

    with socket.socket() as probe:  # a loopback port where nothing listens
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    suite, db, page = tmp_path / "suite.json", tmp_path / "e.sqlite", tmp_path / "report.html"
    suite.write_text(json.dumps({**SUITE, "tiers": ["symbolic"], "depths": [1], "tool_settings": ["basic"]}))
    assert main(["run", "--suite", str(suite), "--agent", f"openai-compatible:http://127.0.0.1:{port}/v1:m",
                 "--model-attempts", "1", "--out", str(db), "--no-progress", "--quiet"]) == 1
    assert main(["report", str(db), "--html", str(page)]) == 0
    page.write_text(page.read_text().replace("</body>", WIDTH_PROBE + "</body>"))
    dom = _chromium(tmp_path, page.as_uri(), "--dump-dom", "--virtual-time-budget=3000", "--window-size=1280,900").stdout
    found = re.search(r'data-overflow="([^"]*)"', dom)
    assert found, dom[-2000:]
    tables = found.group(1).partition(";")[0]
    assert tables and all(int(px) <= 0 for px in tables.split(",")), found.group(1)  # every summary row inside
    assert "the first: model error:" in dom and "Connection refused" in dom
