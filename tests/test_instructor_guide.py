"""The instructor guide (docs/instructors.md) stays true: its points table and its commands.

* The points table is the one ``tools/points_table.py`` makes from the grade cells' metadata.
* Every ``nbgrader`` subcommand the guide tells an instructor or a student to run is run by a
  test with the shipped configuration (tests/test_exchange_flow.py, tests/test_graded_use.py).
* The README links the guide.
"""

from __future__ import annotations

import re
from pathlib import Path

import points_table  # tools/points_table.py (tools/ is on pytest's pythonpath)

ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "docs" / "instructors.md"


def _between_markers(text: str) -> str:
    return text.split(points_table.BEGIN, 1)[1].split(points_table.END, 1)[0].strip()


def test_points_table_matches_the_notebooks():
    assert _between_markers(GUIDE.read_text(encoding="utf-8")) == points_table.table(), (
        "run: python tools/points_table.py --write"
    )


def test_points_table_counts_every_grade_cell():
    rows = points_table.rows()
    lessons = {row[0] for row in rows}
    assert len(lessons) == len(list((ROOT / "source").glob("*/*.ipynb")))
    assert all(points > 0 for *_, points in rows)


def guide_commands() -> set[str]:
    """The nbgrader subcommands in the guide's code blocks."""
    blocks = re.findall(r"```bash\n(.*?)```", GUIDE.read_text(encoding="utf-8"), flags=re.S)
    return {m for block in blocks for m in re.findall(r"^nbgrader (\w+)", block, flags=re.M)}


def test_every_command_in_the_guide_is_run_by_a_test():
    tested = (ROOT / "tests" / "test_exchange_flow.py").read_text(encoding="utf-8") + (
        ROOT / "tests" / "test_graded_use.py"
    ).read_text(encoding="utf-8")
    commands = guide_commands()
    assert {
        "generate_assignment",
        "release_assignment",
        "fetch_assignment",
        "submit",
        "collect",
        "autograde",
        "generate_feedback",
        "release_feedback",
        "fetch_feedback",
        "export",
        "validate",
    } <= commands
    untested = sorted(c for c in commands if f'"{c}"' not in tested)
    assert untested == []


def test_readme_links_the_guide():
    assert "docs/instructors.md" in (ROOT / "README.md").read_text(encoding="utf-8")
