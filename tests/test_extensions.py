"""attnlab.grading.extensions: per-student extensions in nbgrader's gradebook.

The fast tests use a gradebook built here; the slow one runs stock ``nbgrader autograde`` on
lesson 0 with a late penalty, for a late student with an extension and one without.
"""

from __future__ import annotations

import datetime
import json
import subprocess
import sys
import warnings

import pytest
from nbgrader.api import Gradebook
from sqlalchemy.exc import SAWarning

from attnlab.grading.extensions import due_dates, format_table, grant, main

DUE = datetime.datetime(2026, 12, 8, 23, 59)


@pytest.fixture
def gradebook(tmp_path):
    url = f"sqlite:///{tmp_path / 'gradebook.db'}"
    with Gradebook(url, "attnlab") as gb, warnings.catch_warnings():
        warnings.simplefilter("ignore", SAWarning)  # nbgrader's add_submission warns
        gb.add_assignment("03-softmax", duedate=DUE)
        gb.add_notebook("03-softmax", "03-softmax")
        gb.add_grade_cell(
            "check-softmax-row", "03-softmax", "03-softmax", max_score=1, cell_type="code"
        )
        gb.add_assignment("00-start-here")  # no due date
        for sid in ("alice", "bob"):
            gb.add_student(sid)
        # bob submitted a day late; alice has not submitted yet
        gb.add_submission("03-softmax", "bob", timestamp=DUE + datetime.timedelta(days=1))
        yield gb, url


def test_an_extension_moves_the_students_due_date_only(gradebook):
    gb, _ = gradebook
    assert gb.find_submission("03-softmax", "bob").total_seconds_late == 86400
    assert grant(gb, "03-softmax", "bob", days=2) == datetime.timedelta(days=2)
    bob = gb.find_submission("03-softmax", "bob")
    assert bob.duedate == DUE + datetime.timedelta(days=2)
    assert bob.total_seconds_late == 0
    grant(gb, "03-softmax", "bob", hours=12)  # replaces, does not stack
    assert gb.find_submission("03-softmax", "bob").total_seconds_late == 12 * 3600
    grant(gb, "03-softmax", "bob")  # nothing given: revoked
    assert gb.find_submission("03-softmax", "bob").extension is None


def test_before_submitting_and_until(gradebook):
    gb, _ = gradebook
    # alice has no submission yet: an empty one holds the extension
    extension = grant(gb, "03-softmax", "alice", until="2026-12-10 12:00 UTC")
    assert extension == datetime.timedelta(days=1, hours=12, minutes=1)
    alice = gb.find_submission("03-softmax", "alice")
    assert alice.timestamp is None and alice.duedate == datetime.datetime(2026, 12, 10, 12, 0)
    # what autograde does when it meets her submission keeps the extension
    gb.update_or_create_submission("03-softmax", "alice", timestamp="2026-12-10 11:00:00 UTC")
    assert gb.find_submission("03-softmax", "alice").total_seconds_late == 0


def test_bad_requests_say_why(gradebook):
    gb, _ = gradebook
    with pytest.raises(ValueError, match="not in the gradebook"):
        grant(gb, "99-nothing", "bob", days=1)
    with pytest.raises(ValueError, match="student 'zoe'"):
        grant(gb, "03-softmax", "zoe", days=1)
    with pytest.raises(ValueError, match="days must be >= 0"):
        grant(gb, "03-softmax", "bob", days=-1)
    with pytest.raises(ValueError, match="has no due date"):
        grant(gb, "00-start-here", "bob", until="2026-12-10 12:00")
    with pytest.raises(ValueError, match="not after"):
        grant(gb, "03-softmax", "bob", until="2026-12-01 12:00")
    grant(gb, "03-softmax", "zoe", days=1, create_student=True)
    assert gb.find_submission("03-softmax", "zoe").extension == datetime.timedelta(days=1)


def test_list_and_command_line(gradebook, capsys):
    gb, url = gradebook
    assert main(["--db", url, "grant", "03-softmax", "bob", "--hours", "6"]) == 0
    assert "extension 6h; due 2026-12-09 05:59:00 UTC" in capsys.readouterr().out
    gb.db.expire_all()
    rows = {r["student"]: r for r in due_dates(gb, ["03-softmax"])}
    assert rows["bob"]["seconds_late"] == 18 * 3600
    assert rows["alice"]["extension"] is None and rows["alice"]["student_due"] == DUE
    table = format_table(list(rows.values()))
    assert "bob      2026-12-08 23:59:00 UTC  6h" in table.replace("03-softmax  ", "")
    assert "18h" in table
    assert main(["--db", url, "list"]) == 0
    assert "00-start-here" in capsys.readouterr().out
    assert main(["--db", url, "grant", "03-softmax", "nobody", "--days", "1"]) == 2
    assert "nbgrader db student add nobody" in capsys.readouterr().err


@pytest.mark.slow
def test_autograde_spares_a_late_submission_within_its_extension(tmp_path):
    """Stock ``nbgrader autograde`` of lesson 0, penalty "zero": two solved submissions a day
    late, alice with a two-day extension granted before grading, bob without: alice keeps her
    point, bob loses it. (About a minute: two lesson-0 notebooks.)"""
    import graded_course as gc

    lesson = "00-start-here"
    course = gc.make_course(tmp_path)
    gc.nbgrader(course, "generate_assignment", lesson, "--force")
    gc.nbgrader(course, "db", "assignment", "add", lesson, "--duedate=2026-12-08 23:59:00 UTC")
    source_nb = gc.read(course / "source" / lesson / f"{lesson}.ipynb")
    release_nb = gc.read(course / "release" / lesson / f"{lesson}.ipynb")
    kinds = gc.submissions(lesson, source_nb, release_nb, cheats=False)
    solved = {kind: nb for kind, nb, _ in kinds}["solved"]
    for student in ("alice", "bob"):
        gc.write_submission(course, student, lesson, solved)
        folder = course / "submitted" / student / lesson
        (folder / "timestamp.txt").write_text("2026-12-09 23:59:00.000000 UTC")
    cli = [sys.executable, "-m", "attnlab.grading.extensions"]
    granted = subprocess.run(
        [*cli, "grant", lesson, "alice", "--days", "2", "--create-student"],
        cwd=course,
        capture_output=True,
        text=True,
        check=True,
    )
    assert "due 2026-12-10 23:59:00 UTC" in granted.stdout
    gc.nbgrader(
        course, "autograde", lesson, "--create", "--LateSubmissionPlugin.penalty_method=zero"
    )
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", "attnlab") as gb:
        got = {
            s.student.id: (s.score, s.late_submission_penalty, s.extension)
            for s in gb.assignment_submissions(lesson)
        }
    assert got == {
        "alice": (1.0, 0.0, datetime.timedelta(days=2)),
        "bob": (1.0, 1.0, None),
    }, json.dumps({k: str(v) for k, v in got.items()})
    listed = subprocess.run(
        [*cli, "list"], cwd=course, capture_output=True, text=True, check=True
    ).stdout
    assert "alice    2026-12-08 23:59:00 UTC  2d" in listed.replace(f"{lesson}  ", "")
