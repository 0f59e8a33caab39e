"""Grades from nbgrader's gradebook as CSV files Canvas and Moodle import as they are.

Two nbgrader export plugins, run from the course folder after ``nbgrader autograde``::

    nbgrader export --exporter=attnlab.grading.lms_export.CanvasExportPlugin --to grades-canvas.csv
    nbgrader export --exporter=attnlab.grading.lms_export.MoodleExportPlugin --to grades-moodle.csv

Each writes one row per student of the gradebook and one column per lesson (the lesson's
score after nbgrader's late penalty, as ``nbgrader export`` computes it) or, with
``--CanvasExportPlugin.granularity=exercise`` (``--MoodleExportPlugin.granularity=exercise``),
one column per grade cell (``03-softmax check-softmax-row``: that cell's score, before any late
penalty, which nbgrader takes off a whole notebook). A student with no submission scores 0, as
in ``nbgrader export``. ``--assignment``/``--student`` (nbgrader's own options) keep some.

Canvas (Grades → Import): the header Canvas's own gradebook export writes, ``Student``, ``ID``,
``SIS User ID``, ``SIS Login ID``, ``Section``, then the grade columns, and a second row
``Points Possible`` holding each column's maximum. Canvas finds the student by ``ID`` (the
Canvas user id: nbgrader's ``lms_user_id``) or, where that is empty, by ``SIS Login ID``
(nbgrader's student id, or the e-mail with ``--CanvasExportPlugin.login_id=email``). A column
named ``Name (1234)`` updates Canvas assignment 1234; a plain name makes a new assignment with
the points of the ``Points Possible`` row (``--CanvasExportPlugin.assignment_ids`` maps column
names to Canvas ids).

Moodle (Grades → Import → CSV file): ``Username``, ``Email address``, ``User ID``, ``First name``,
``Last name``, then the grade columns; at import, *Identify user by* maps one of the first three
(to Moodle's username, email address or user id) and each grade column to a grade item. Moodle
reads no points row: its grade items hold their maximum.

The module is for the instructor's machine; nothing a learner runs imports it.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass

from nbgrader.api import Gradebook, MissingEntry
from nbgrader.plugins.export import ExportPlugin
from traitlets import Dict, Enum, Unicode

CANVAS_STUDENT_COLUMNS = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
CANVAS_POINTS_ROW = "    Points Possible"  # as Canvas's own export writes it (leading spaces)
MOODLE_STUDENT_COLUMNS = ["Username", "Email address", "User ID", "First name", "Last name"]


@dataclass(frozen=True)
class GradeColumn:
    """One column of grades: a lesson (``cell`` is None) or one grade cell of a lesson."""

    name: str
    assignment: str
    notebook: str | None
    cell: str | None
    max_score: float


def _number(value: float) -> str:
    """A score as the LMSs read it: plain decimal, no exponent, at most 4 decimals."""
    text = f"{round(float(value), 4):.4f}".rstrip("0").rstrip(".")
    return "0" if text in ("", "-0") else text


def grade_columns(
    gradebook: Gradebook, granularity: str = "lesson", assignments=()
) -> list[GradeColumn]:
    """The grade columns of ``gradebook``, lessons in name order (``00-…`` first).

    Parameters
    ----------
    gradebook : nbgrader.api.Gradebook
        An open gradebook.
    granularity : {"lesson", "exercise"}
        One column per assignment, or one per grade cell (in the notebook's order).
    assignments : sequence of str
        Keep only these assignments (all when empty).

    Returns
    -------
    list of GradeColumn
    """
    if granularity not in ("lesson", "exercise"):
        raise ValueError(f"granularity must be 'lesson' or 'exercise', not {granularity!r}")
    wanted = {str(a) for a in assignments}
    columns = []
    for assignment in sorted(gradebook.assignments, key=lambda a: a.name):
        if wanted and assignment.name not in wanted:
            continue
        if granularity == "lesson":
            columns.append(
                GradeColumn(assignment.name, assignment.name, None, None, assignment.max_score)
            )
            continue
        for notebook in assignment.notebooks:
            for cell in notebook.grade_cells:  # the order generate_assignment added them in
                name = (
                    cell.name if len(assignment.notebooks) == 1 else f"{notebook.name} {cell.name}"
                )
                columns.append(
                    GradeColumn(
                        f"{assignment.name} {name}",
                        assignment.name,
                        notebook.name,
                        cell.name,
                        cell.max_score,
                    )
                )
    return columns


def student_scores(gradebook: Gradebook, student, columns) -> list[float]:
    """``student``'s score in each of ``columns`` (0 where nothing was submitted).

    A lesson's score is nbgrader's: the submission's score less its late penalty, never below
    0. A grade cell's score is the cell's (manual score if set, else the autograded one).
    """
    scores = []
    for column in columns:
        try:
            if column.cell is None:
                submission = gradebook.find_submission(column.assignment, student.id)
                score = max(0.0, submission.score - submission.late_submission_penalty)
            else:
                score = gradebook.find_grade(
                    column.cell, column.notebook, column.assignment, student.id
                ).score
        except MissingEntry:
            score = 0.0
        scores.append(float(score or 0.0))
    return scores


def _students(gradebook: Gradebook, wanted) -> list:
    wanted = {str(s) for s in wanted}
    return [
        s for s in sorted(gradebook.students, key=lambda s: s.id) if not wanted or s.id in wanted
    ]


def canvas_rows(
    gradebook: Gradebook,
    granularity: str = "lesson",
    assignments=(),
    students=(),
    assignment_ids=None,
    login_id: str = "id",
    section: str = "",
) -> list[list[str]]:
    """The rows of a Canvas gradebook import file (header, points row, one row per student).

    Parameters
    ----------
    gradebook : nbgrader.api.Gradebook
    granularity : {"lesson", "exercise"}
    assignments, students : sequence of str
        Keep only these (all when empty).
    assignment_ids : dict of str to int or str, optional
        Column name (``03-softmax``, ``03-softmax check-softmax-row``) to the Canvas assignment
        id it updates: the header becomes ``03-softmax (1234)``.
    login_id : {"id", "email"}
        What fills ``SIS Login ID``: nbgrader's student id or the student's e-mail.
    section : str
        The ``Section`` of every row (Canvas ignores it on import).
    """
    if login_id not in ("id", "email"):
        raise ValueError(f"login_id must be 'id' or 'email', not {login_id!r}")
    assignment_ids = dict(assignment_ids or {})
    columns = grade_columns(gradebook, granularity, assignments)
    unknown = set(assignment_ids) - {c.name for c in columns}
    if unknown:
        raise ValueError(f"assignment_ids names columns that are not exported: {sorted(unknown)}")
    header = list(CANVAS_STUDENT_COLUMNS)
    for column in columns:
        canvas_id = assignment_ids.get(column.name)
        header.append(column.name if canvas_id is None else f"{column.name} ({int(canvas_id)})")
    rows = [header, [CANVAS_POINTS_ROW, "", "", "", ""] + [_number(c.max_score) for c in columns]]
    for student in _students(gradebook, students):
        last, first = student.last_name or "", student.first_name or ""
        name = f"{last}, {first}" if last and first else (last or first or student.id)
        login = student.id if login_id == "id" else (student.email or "")
        rows.append(
            [name, student.lms_user_id or "", "", login, section]
            + [_number(s) for s in student_scores(gradebook, student, columns)]
        )
    return rows


def moodle_rows(
    gradebook: Gradebook, granularity: str = "lesson", assignments=(), students=()
) -> list[list[str]]:
    """The rows of a Moodle grade import file (header, one row per student).

    Parameters
    ----------
    gradebook : nbgrader.api.Gradebook
    granularity : {"lesson", "exercise"}
    assignments, students : sequence of str
        Keep only these (all when empty).
    """
    columns = grade_columns(gradebook, granularity, assignments)
    rows = [MOODLE_STUDENT_COLUMNS + [c.name for c in columns]]
    for student in _students(gradebook, students):
        rows.append(
            [
                student.id,
                student.email or "",
                student.lms_user_id or "",
                student.first_name or "",
                student.last_name or "",
            ]
            + [_number(s) for s in student_scores(gradebook, student, columns)]
        )
    return rows


def write_csv(rows, dest: str) -> None:
    """Write ``rows`` to ``dest`` as UTF-8 CSV with a header row (CRLF ends, as RFC 4180)."""
    with open(dest, "w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows(rows)


class CanvasExportPlugin(ExportPlugin):
    """``nbgrader export`` to a CSV file Canvas's gradebook imports unchanged."""

    granularity = Enum(
        ["lesson", "exercise"], "lesson", help="One column per lesson or per grade cell."
    ).tag(config=True)
    assignment_ids = Dict(
        {}, help="Column name -> Canvas assignment id (the header becomes 'name (id)')."
    ).tag(config=True)
    login_id = Enum(
        ["id", "email"], "id", help="What fills 'SIS Login ID': nbgrader's student id or e-mail."
    ).tag(config=True)
    section = Unicode("", help="The 'Section' column of every row.").tag(config=True)

    def export(self, gradebook: Gradebook) -> None:
        dest = self.to or "grades-canvas.csv"
        rows = canvas_rows(
            gradebook,
            self.granularity,
            self.assignment,
            self.student,
            self.assignment_ids,
            self.login_id,
            self.section,
        )
        write_csv(rows, dest)
        self.log.info("Wrote %d students' grades for Canvas to %s", len(rows) - 2, dest)


class MoodleExportPlugin(ExportPlugin):
    """``nbgrader export`` to a CSV file Moodle's grade import (CSV file) reads unchanged."""

    granularity = Enum(
        ["lesson", "exercise"], "lesson", help="One column per lesson or per grade cell."
    ).tag(config=True)

    def export(self, gradebook: Gradebook) -> None:
        dest = self.to or "grades-moodle.csv"
        rows = moodle_rows(gradebook, self.granularity, self.assignment, self.student)
        write_csv(rows, dest)
        self.log.info("Wrote %d students' grades for Moodle to %s", len(rows) - 1, dest)
