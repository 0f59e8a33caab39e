"""Finding the way through the course: every lesson's Next links to the next lesson's notebook,
and lesson 0's "how to keep a picture" works as written.

The browser half (a click on lesson 2's Next link opens lesson 3 in JupyterLab) is in
``tests/browser/test_course_in_lab.py``.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from attnlab.course import COURSE

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
READY = [entry for entry in COURSE if entry.ready]


def next_section(path: Path) -> str:
    """The text of the notebook's "## Next" section, up to the next heading."""
    cells = [c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "markdown"]
    found = [text.split("## Next", 1)[1] for text in cells if "## Next" in text]
    assert len(found) == 1, f"{path.name}: expected one '## Next' section, found {len(found)}"
    return re.split(r"^#{1,6} ", found[0], flags=re.M)[0]


@pytest.mark.parametrize("entry", READY, ids=lambda e: e.notebook)
def test_every_lesson_ends_with_a_link_to_the_next_one(entry):
    path = ROOT / entry.learner
    section = next_section(path)
    targets = LINK.findall(section)
    for target in targets:
        assert not re.match(r"[a-z]+:", target), f"{path.name}: Next links outside: {target}"
        assert (path.parent / target).is_file(), f"{path.name}: Next links to missing {target}"
    following = [e for e in READY if e.number == entry.number + 1]
    if following:
        assert targets and targets[0] == f"{following[0].notebook}.ipynb", (path.name, targets)
        assert "last lesson" not in section.lower(), path.name
    else:
        assert "last lesson" in section.lower(), f"{path.name}: the last lesson should say so"
        assert f"{READY[0].notebook}.ipynb" in targets, f"{path.name}: link back to the map"


def lesson_0_keep_a_picture() -> list[str]:
    """The code spans of lesson 0's "To keep a picture" tip, in order."""
    cells = nbformat.read(NOTEBOOKS / "00-start-here.ipynb", as_version=4).cells
    (tip,) = [
        part
        for cell in cells
        if cell.cell_type == "markdown"
        for part in cell.source.split("\n* ")
        if part.startswith("**To keep a picture**")
    ]
    return re.findall(r"`([^`]+)`", tip)


def test_lesson_0_says_how_to_save_an_explorers_picture_and_it_works(tmp_path, monkeypatch):
    make, show, save = lesson_0_keep_a_picture()
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    exec("from attnlab.explorers.score_row import ScoreRowExplorer", namespace)
    exec(make, namespace)
    exec(show, namespace)
    namespace["explorer"].set(**{next(iter(namespace["explorer"].controls)): 2.5})  # a slider
    exec(save, namespace)
    (saved,) = tmp_path.glob("*.png")
    assert saved.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and saved.stat().st_size > 5_000


def test_lesson_0_quotes_the_banner_a_reopened_explorer_shows():
    """Lesson 0 says what a reopened lesson shows: the banner's words, as figure_canvas.js has
    them (widget state is saved: jupyter-config's saveState), not "model not found"."""
    script = (ROOT / "attnlab" / "figure_canvas.js").read_text(encoding="utf-8")
    banner = re.search(r"const BANNER_TEXT =\s*((?:\"[^\"]*\"\s*\+?\s*)+);", script)
    assert banner, "figure_canvas.js has no BANNER_TEXT"
    words = "".join(re.findall(r"\"([^\"]*)\"", banner.group(1)))
    words = words.replace("\\u25b8", "▸")
    cells = nbformat.read(NOTEBOOKS / "00-start-here.ipynb", as_version=4).cells
    text = " ".join(c.source for c in cells if c.cell_type == "markdown")
    assert words in " ".join(text.split()), words
    assert "Widgets are not saved" not in text
