"""attnlab.grading.lms_export: Canvas and Moodle CSV files from a gradebook built here."""

from __future__ import annotations

import csv
import subprocess
import sys
import warnings

import pytest
from nbgrader.api import Gradebook
from sqlalchemy.exc import SAWarning

from attnlab.grading.lms_export import (
    CANVAS_POINTS_ROW,
    CANVAS_STUDENT_COLUMNS,
    MOODLE_STUDENT_COLUMNS,
    canvas_rows,
    moodle_rows,
)

# (lesson, notebook, [(grade cell, points)]): two small lessons, as generate_assignment records
LESSONS = [
    ("00-start-here", "00-start-here", [("check-lesson0-largest-score", 1.0)]),
    ("03-softmax", "03-softmax", [("check-softmax-row", 1.0), ("check-stable-softmax", 2.0)]),
]
STUDENTS = [
    # id, first, last, email, lms_user_id
    ("alice", "Alice", "Ng", "alice@uni.example", "4101"),
    ("bob", "Bob", "Okafor", "bob@uni.example", None),
    ("carol", "Carol", "Smith", "carol@uni.example", "4103"),  # submitted nothing
]
# student -> lesson -> ({cell: score}, late penalty)
SCORES = {
    "alice": {
        "00-start-here": ({"check-lesson0-largest-score": 1.0}, 0.0),
        "03-softmax": ({"check-softmax-row": 1.0, "check-stable-softmax": 2.0}, 0.0),
    },
    "bob": {"03-softmax": ({"check-softmax-row": 1.0, "check-stable-softmax": 0.5}, 1.5)},
}


@pytest.fixture
def gradebook(tmp_path):
    url = f"sqlite:///{tmp_path / 'gradebook.db'}"
    with Gradebook(url, "attnlab") as gb, warnings.catch_warnings():
        # nbgrader's own add_submission warns (SQLAlchemy autoflush); autograde does the same
        warnings.simplefilter("ignore", SAWarning)
        for lesson, notebook, cells in LESSONS:
            gb.add_assignment(lesson)
            gb.add_notebook(notebook, lesson)
            for cell, points in cells:
                gb.add_grade_cell(cell, notebook, lesson, max_score=points, cell_type="code")
        for sid, first, last, email, lms in STUDENTS:
            gb.add_student(sid, first_name=first, last_name=last, email=email, lms_user_id=lms)
        for sid, lessons in SCORES.items():
            for lesson, (cells, penalty) in lessons.items():
                gb.add_submission(lesson, sid)
                for cell, score in cells.items():
                    grade = gb.find_grade(cell, lesson, lesson, sid)
                    grade.auto_score = score
                    grade.needs_manual_grade = False
                gb.find_submission_notebook(lesson, lesson, sid).late_submission_penalty = penalty
                gb.db.commit()
        yield gb, url


def as_dicts(rows):
    header, *body = rows
    return header, [dict(zip(header, row, strict=True)) for row in body]


def test_canvas_per_lesson(gradebook):
    gb, _ = gradebook
    rows = canvas_rows(gb, assignment_ids={"03-softmax": 77})
    header, body = as_dicts(rows)
    assert header == CANVAS_STUDENT_COLUMNS + ["00-start-here", "03-softmax (77)"]
    points, *students = body
    assert points["Student"] == CANVAS_POINTS_ROW
    assert (points["00-start-here"], points["03-softmax (77)"]) == ("1", "3")
    by_login = {row["SIS Login ID"]: row for row in students}
    assert list(by_login) == ["alice", "bob", "carol"]
    assert by_login["alice"]["Student"] == "Ng, Alice" and by_login["alice"]["ID"] == "4101"
    assert by_login["bob"]["ID"] == ""  # no Canvas id: Canvas matches the SIS Login ID
    # bob: 1 + 0.5 = 1.5 raw, less nbgrader's late penalty 1.5 -> 0
    assert [by_login[s]["03-softmax (77)"] for s in ("alice", "bob", "carol")] == ["3", "0", "0"]
    assert [by_login[s]["00-start-here"] for s in ("alice", "bob", "carol")] == ["1", "0", "0"]


def test_canvas_per_exercise_and_email_login(gradebook):
    gb, _ = gradebook
    rows = canvas_rows(gb, granularity="exercise", assignments=["03-softmax"], login_id="email")
    header, body = as_dicts(rows)
    assert header[5:] == ["03-softmax check-softmax-row", "03-softmax check-stable-softmax"]
    assert [body[0][h] for h in header[5:]] == ["1", "2"]
    bob = next(r for r in body if r["SIS Login ID"] == "bob@uni.example")
    # per grade cell: the cells' own scores, before the notebook's late penalty
    assert (bob["03-softmax check-softmax-row"], bob["03-softmax check-stable-softmax"]) == (
        "1",
        "0.5",
    )


def test_bad_options_say_which(gradebook):
    gb, _ = gradebook
    with pytest.raises(ValueError, match="granularity"):
        canvas_rows(gb, granularity="cell")
    with pytest.raises(ValueError, match="login_id"):
        canvas_rows(gb, login_id="name")
    with pytest.raises(ValueError, match="assignment_ids"):
        canvas_rows(gb, assignment_ids={"99-nothing": 3})


def test_moodle_per_lesson_and_exercise(gradebook):
    gb, _ = gradebook
    header, body = as_dicts(moodle_rows(gb, students=["alice", "bob"]))
    assert header == MOODLE_STUDENT_COLUMNS + ["00-start-here", "03-softmax"]
    assert [(r["Username"], r["Email address"], r["User ID"]) for r in body] == [
        ("alice", "alice@uni.example", "4101"),
        ("bob", "bob@uni.example", ""),
    ]
    assert [r["03-softmax"] for r in body] == ["3", "0"]
    header, body = as_dicts(moodle_rows(gb, granularity="exercise"))
    assert header[5:] == [
        "00-start-here check-lesson0-largest-score",
        "03-softmax check-softmax-row",
        "03-softmax check-stable-softmax",
    ]
    # Moodle reads no points row: every row after the header is a student
    assert [r["Username"] for r in body] == ["alice", "bob", "carol"]


@pytest.mark.parametrize(
    "plugin, first", [("CanvasExportPlugin", "Student"), ("MoodleExportPlugin", "Username")]
)
def test_stock_nbgrader_export_runs_the_plugin(gradebook, tmp_path, plugin, first):
    _, url = gradebook
    dest = tmp_path / "out.csv"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "nbgrader",
            "export",
            f"--exporter=attnlab.grading.lms_export.{plugin}",
            f"--to={dest}",
            f"--db={url}",
            f"--{plugin}.granularity=exercise",
            "--CourseDirectory.course_id=attnlab",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    with open(dest, newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    assert rows[0][0] == first and rows[0][-1] == "03-softmax check-stable-softmax"
    assert len(rows) == 3 + (2 if plugin.startswith("Canvas") else 1)
