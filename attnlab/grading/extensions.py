"""Per-student extensions and due dates, kept in nbgrader's own gradebook.

nbgrader records a lesson's due date on the assignment (``nbgrader db assignment add 03-softmax
--duedate="2026-12-08 23:59:00 UTC"``) and a student's extension on their submission
(``SubmittedAssignment.extension``, which ``Gradebook.grant_extension`` sets); ``nbgrader
autograde`` measures lateness against the due date plus the extension, so a late penalty
(``c.LateSubmissionPlugin.penalty_method = "zero"``) spares a submission within it. nbgrader
0.9.6 has no command for extensions: this one, run in the course folder, is it::

    python -m attnlab.grading.extensions grant 03-softmax alice --days 2
    python -m attnlab.grading.extensions grant 03-softmax alice --until "2026-12-10 12:00 UTC"
    python -m attnlab.grading.extensions revoke 03-softmax alice
    python -m attnlab.grading.extensions list [03-softmax]

An extension can be granted before the student submits: the submission's record is then made
empty (no timestamp, no score), ``nbgrader collect`` and ``autograde`` fill it in later and keep
the extension. Extensions do not stack: each grant replaces the last. Grant before running
``nbgrader autograde``, or autograde that lesson again afterwards: the penalty is decided then.

The module is for the instructor's machine; nothing a learner runs imports it.
"""

from __future__ import annotations

import argparse
import datetime
import sys
import warnings

from nbgrader.api import Gradebook, MissingEntry
from nbgrader.utils import parse_utc

DEFAULT_DB = "sqlite:///gradebook.db"  # nbgrader's default: gradebook.db in the course folder
DEFAULT_COURSE = "attnlab"  # nbgrader_config.py's CourseDirectory.course_id


def _utc(moment: datetime.datetime | None) -> str:
    return "" if moment is None else f"{moment:%Y-%m-%d %H:%M:%S} UTC"


def _span(delta: datetime.timedelta | None) -> str:
    if not delta:
        return ""
    seconds = int(delta.total_seconds())
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes = rest // 60
    parts = [f"{n}{unit}" for n, unit in ((days, "d"), (hours, "h"), (minutes, "min")) if n]
    return " ".join(parts) or f"{seconds}s"


def _submission(gradebook: Gradebook, lesson: str, student: str, create_student: bool):
    """The student's submission of ``lesson``, made empty if there is none yet."""
    try:
        gradebook.find_assignment(lesson)
    except MissingEntry:
        raise ValueError(
            f"lesson {lesson!r} is not in the gradebook (run nbgrader generate_assignment first)"
        ) from None
    try:
        gradebook.find_student(student)
    except MissingEntry:
        if not create_student:
            raise ValueError(
                f"student {student!r} is not in the gradebook (add them with "
                f"`nbgrader db student add {student}` or pass --create-student)"
            ) from None
        gradebook.add_student(student)
    try:
        return gradebook.find_submission(lesson, student)
    except MissingEntry:
        with warnings.catch_warnings():  # nbgrader's add_submission warns (SQLAlchemy autoflush)
            warnings.simplefilter("ignore")
            return gradebook.add_submission(lesson, student)


def grant(
    gradebook: Gradebook,
    lesson: str,
    student: str,
    *,
    minutes: float = 0,
    hours: float = 0,
    days: float = 0,
    weeks: float = 0,
    until: str | None = None,
    create_student: bool = False,
) -> datetime.timedelta | None:
    """Give ``student`` an extension of ``lesson`` (replacing any earlier one).

    Parameters
    ----------
    gradebook : nbgrader.api.Gradebook
    lesson, student : str
        The assignment's name (``03-softmax``) and nbgrader's student id.
    minutes, hours, days, weeks : float
        The extension's length; all zero (and no ``until``) removes the extension.
    until : str, optional
        The student's own due date instead (``"2026-12-10 12:00 UTC"``; no zone means UTC):
        the extension is the time from the lesson's due date to it.
    create_student : bool
        Add ``student`` to the gradebook if missing (else ValueError).

    Returns
    -------
    datetime.timedelta or None
        The extension now recorded.
    """
    for name, value in (("minutes", minutes), ("hours", hours), ("days", days), ("weeks", weeks)):
        if value < 0:
            raise ValueError(f"{name} must be >= 0, not {value}")
    submission = _submission(gradebook, lesson, student, create_student)
    if until is not None:
        if minutes or hours or days or weeks:
            raise ValueError("until: give either a length (--days …) or --until, not both")
        due = submission.assignment.duedate
        if due is None:
            raise ValueError(
                f"until: lesson {lesson!r} has no due date; set one with "
                f'`nbgrader db assignment add {lesson} --duedate="YYYY-MM-DD HH:MM:SS UTC"`'
            )
        end = parse_utc(until)
        if end <= due:
            raise ValueError(f"until: {_utc(end)} is not after the lesson's due date {_utc(due)}")
        minutes = (end - due).total_seconds() / 60
    gradebook.grant_extension(lesson, student, minutes=minutes, hours=hours, days=days, weeks=weeks)
    return gradebook.find_submission(lesson, student).extension


def due_dates(gradebook: Gradebook, lessons=()) -> list[dict]:
    """Every student's due date for each lesson, with extension, submission time and lateness.

    Parameters
    ----------
    gradebook : nbgrader.api.Gradebook
    lessons : sequence of str
        Keep only these lessons (all when empty).

    Returns
    -------
    list of dict
        Keys ``lesson``, ``student``, ``due`` (the lesson's), ``extension``, ``student_due``,
        ``submitted`` (datetime or None), ``seconds_late`` (float, after the extension).
    """
    wanted = set(lessons)
    known = {a.name for a in gradebook.assignments}
    if wanted - known:
        raise ValueError(f"lessons: not in the gradebook: {sorted(wanted - known)}")
    rows = []
    for assignment in sorted(gradebook.assignments, key=lambda a: a.name):
        if wanted and assignment.name not in wanted:
            continue
        for student in sorted(gradebook.students, key=lambda s: s.id):
            try:
                sub = gradebook.find_submission(assignment.name, student.id)
            except MissingEntry:
                extension, student_due, submitted, late = None, assignment.duedate, None, 0.0
            else:
                extension, student_due = sub.extension, sub.duedate
                submitted, late = sub.timestamp, float(sub.total_seconds_late)
            rows.append(
                {
                    "lesson": assignment.name,
                    "student": student.id,
                    "due": assignment.duedate,
                    "extension": extension,
                    "student_due": student_due,
                    "submitted": submitted,
                    "seconds_late": late,
                }
            )
    return rows


def format_table(rows: list[dict]) -> str:
    """``due_dates`` rows as an aligned text table."""
    header = ["lesson", "student", "due", "extension", "due for student", "submitted", "late by"]
    body = [
        [
            r["lesson"],
            r["student"],
            _utc(r["due"]),
            _span(r["extension"]),
            _utc(r["student_due"]),
            _utc(r["submitted"]),
            _span(datetime.timedelta(seconds=r["seconds_late"])),
        ]
        for r in rows
    ]
    widths = [max(len(row[i]) for row in [header, *body]) for i in range(len(header))]
    return "\n".join(
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in [header, *body]
    )


def main(argv=None) -> int:
    """The command line (``python -m attnlab.grading.extensions --help``)."""
    parser = argparse.ArgumentParser(
        prog="python -m attnlab.grading.extensions",
        description="Per-student extensions in nbgrader's gradebook (run in the course folder).",
    )
    parser.add_argument("--db", default=DEFAULT_DB, help=f"gradebook URL (default {DEFAULT_DB})")
    parser.add_argument("--course", default=DEFAULT_COURSE, help="nbgrader course id")
    commands = parser.add_subparsers(dest="command", required=True)
    give = commands.add_parser("grant", help="give a student an extension (replaces any earlier)")
    give.add_argument("lesson")
    give.add_argument("student")
    for unit in ("minutes", "hours", "days", "weeks"):
        give.add_argument(f"--{unit}", type=float, default=0)
    give.add_argument("--until", help='the student\'s own due date, "YYYY-MM-DD HH:MM UTC"')
    give.add_argument("--create-student", action="store_true", help="add a missing student")
    take = commands.add_parser("revoke", help="remove a student's extension")
    take.add_argument("lesson")
    take.add_argument("student")
    show = commands.add_parser("list", help="every student's due date, extension and lateness")
    show.add_argument("lessons", nargs="*")
    args = parser.parse_args(argv)
    try:
        with Gradebook(args.db, args.course) as gradebook:
            if args.command == "list":
                print(format_table(due_dates(gradebook, args.lessons)))
                return 0
            if args.command == "grant":
                extension = grant(
                    gradebook,
                    args.lesson,
                    args.student,
                    minutes=args.minutes,
                    hours=args.hours,
                    days=args.days,
                    weeks=args.weeks,
                    until=args.until,
                    create_student=args.create_student,
                )
            else:
                extension = grant(gradebook, args.lesson, args.student)
            sub = gradebook.find_submission(args.lesson, args.student)
            print(
                f"{args.lesson} {args.student}: extension {_span(extension) or 'none'}; "
                f"due {_utc(sub.duedate) or '(the lesson has no due date)'}"
            )
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
