"""Print the points table of the course (lesson × exercise), from the course's map of exercises.

The instructor guide (docs/instructors.md) holds this table between the markers
``<!-- points:begin -->`` and ``<!-- points:end -->``; ``tests/test_instructor_guide.py``
fails when they differ. Usage::

    python tools/points_table.py           # print the table
    python tools/points_table.py --write   # rewrite it in docs/instructors.md
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from attnlab.course import lesson as course_lesson  # noqa: E402
from attnlab.exercises import EXERCISES  # noqa: E402

GUIDE = ROOT / "docs" / "instructors.md"
BEGIN, END = "<!-- points:begin -->", "<!-- points:end -->"


def rows() -> list[tuple[str, str, str, float]]:
    """(lesson, grade cell id, exercise title, points) for every exercise, in course order
    (``tests/test_exercise_map.py`` keeps the map equal to the source notebooks' grade cells)."""
    return [
        (course_lesson(e.lesson).notebook, e.grade_id, e.title, float(e.points))
        for e in EXERCISES.values()
    ]


def table() -> str:
    """The Markdown table, one row per grade cell and a total per lesson."""
    lines = ["| lesson | exercise | grade cell | points |", "| --- | --- | --- | ---: |"]
    totals: dict[str, float] = {}
    for lesson, grade_id, title, points in rows():
        totals[lesson] = totals.get(lesson, 0.0) + points
        lines.append(f"| {lesson} | {title} | `{grade_id}` | {points:g} |")
    for lesson, total in totals.items():
        lines.append(f"| **{lesson}** | **total** | | **{total:g}** |")
    lines.append(f"| **course** | **total** | | **{sum(totals.values()):g}** |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="rewrite the guide's table")
    args = parser.parse_args(argv)
    text = table()
    if not args.write:
        print(text)
        return 0
    guide = GUIDE.read_text(encoding="utf-8")
    head, rest = guide.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    GUIDE.write_text(f"{head}{BEGIN}\n{text}\n{END}{tail}", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
