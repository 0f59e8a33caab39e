"""The README's lesson map agrees with the course map of lesson 0 and with notebooks/."""

from __future__ import annotations

import re
from pathlib import Path

from attnlab.selftest import COURSE

ROOT = Path(__file__).resolve().parents[1]
ROW = re.compile(
    r"^\| (?P<number>\d+) \| \[(?P<title>[^\]]+)\]\(notebooks/(?P<notebook>[^)]+)\.ipynb\) "
    r"\| [^|]+ \| (?P<minutes>\d+) min \|$"
)


def readme_lessons() -> list[tuple]:
    """(number, title, notebook, minutes) for each row of the README's lesson table."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return [
        (int(m["number"]), m["title"], m["notebook"], int(m["minutes"]))
        for m in map(ROW.match, text.splitlines())
        if m
    ]


def test_readme_lists_every_ready_lesson_as_lesson_0_does():
    ready = [(x.number, x.title, x.notebook, x.minutes) for x in COURSE if x.ready]
    assert readme_lessons() == ready


def test_readme_links_point_at_notebooks_that_exist():
    rows = readme_lessons()
    assert rows, "README.md has no lesson table rows"
    for _, _, notebook, _ in rows:
        assert (ROOT / "notebooks" / f"{notebook}.ipynb").is_file(), notebook
