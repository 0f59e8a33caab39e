"""What a learner has done so far: the latest outcome of every exercise they checked.

Each check run in a learner's kernel (:meth:`attnlab.exercises.kit.exercise.Exercise.check`)
records the exercise's latest outcome in one small JSON file per copy of the course
(:func:`progress_file`): the folder the lesson notebooks are in (a clone's ``notebooks/``; for
lessons fetched from nbgrader, one folder per lesson, the folder holding those), keyed by its
absolute path under ``~/.attnlab/``. Two learners who share a computer account but each work in
their own copy of the course keep their own records, and no file is written among the course's
files (an assignment folder is handed in whole). ``ATTNLAB_PROGRESS`` names one file to use
instead. Nothing leaves the computer and nothing is graded:
it is the learner's own record, read by lesson 0's course map (:func:`course_map`, the *done*
column) and by :func:`progress`, which lists every exercise of every lesson.

Nothing is recorded outside a Jupyter kernel (plain Python, the test suite), under grading
(``NBGRADER_EXECUTION``, ``ATTNLAB_REQUIRE_CORRECT=1``, the grading kernel), nor for a check that
finds the stub before anything else was recorded. A file that cannot be read or written is
ignored: the course works without it.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from attnlab.course import COURSE, CourseMap
from attnlab.exercises.kit.exercise_map import EXERCISES
from attnlab.exercises.rules.grading_mode import (
    STARTED_IN,
    in_grading_kernel,
    lesson_folder,
    must_pass,
)

#: Outcomes that count as done (:class:`attnlab.exercises.kit.outcomes.Outcome` values).
DONE = ("correct", "recorded")


def course_folder(folder: Path | str | None = None) -> Path | None:
    """The copy of the course ``folder`` (default: :data:`STARTED_IN`) belongs to: the folder
    itself, or its parent when it is one lesson's folder (``03-softmax/03-softmax.ipynb``, as
    nbgrader fetches each lesson), so every lesson of one copy shares one record.

    >>> course_folder("/home/ada/course/notebooks").as_posix()
    '/home/ada/course/notebooks'
    """
    folder = STARTED_IN if folder is None else Path(folder)
    if folder is None:
        return None
    folder = folder.absolute()
    if lesson_folder(folder):
        return folder.parent
    return folder


def progress_file(folder: Path | str | None = None) -> Path:
    """``$ATTNLAB_PROGRESS``, or this copy of the course's own record:
    ``~/.attnlab/progress-<key>.json``, the key made from :func:`course_folder`'s absolute path.

    ``folder`` is where the notebooks are (default: where this process started).
    """
    named = os.environ.get("ATTNLAB_PROGRESS")
    if named:
        return Path(named)
    course = course_folder(folder)
    where = str(course) if course is not None else ""
    key = hashlib.sha256(where.encode("utf-8", "surrogateescape")).hexdigest()[:16]
    return Path.home() / ".attnlab" / f"progress-{key}.json"


def recorded() -> dict[str, str]:
    """Exercise name (``"lesson1.dot"``) -> its latest outcome (``"correct"``, ...)."""
    try:
        data = json.loads(progress_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {k: v for k, v in data.get("exercises", {}).items() if isinstance(v, str)}


def _contents(exercises: dict) -> dict:
    """The record as written: the outcomes, and which copy of the course they are of (for a
    person reading ``~/.attnlab/``; the file's name is what finds it)."""
    if os.environ.get("ATTNLAB_PROGRESS"):
        return {"exercises": exercises}
    return {"course": str(course_folder()), "exercises": exercises}


def _in_learner_kernel() -> bool:
    if must_pass() or in_grading_kernel():
        return False
    try:
        shell = get_ipython()  # noqa: F821 (defined by IPython in a kernel)
    except NameError:
        return False
    return type(shell).__name__ == "ZMQInteractiveShell"


def record(exercise: str | None, outcome: str, *, force: bool = False) -> bool:
    """Keep ``outcome`` as ``exercise``'s latest; True if the file was written.

    Only in a learner's kernel (or with ``force``, for tests). A first "not attempted yet" is
    not worth a file.
    """
    if exercise is None or not (force or _in_learner_kernel()):
        return False
    path = progress_file()
    exercises = recorded()
    if exercises.get(exercise) == outcome or (
        exercise not in exercises and outcome == "not attempted yet"
    ):
        return False
    exercises[exercise] = outcome
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(
            "w", dir=path.parent, prefix=".progress-", delete=False, encoding="utf-8"
        ) as out:
            json.dump(_contents(exercises), out, indent=1, sort_keys=True)
        os.replace(out.name, path)  # whole file or nothing: two kernels may write at once
    except OSError:
        return False
    return True


def forget(exercise: str | None = None) -> None:
    """Forget one exercise's outcome (``"lesson1.dot"``), or everything (no argument)."""
    exercises = recorded()
    if exercise is None:
        exercises = {}
    exercises.pop(exercise, None)
    path = progress_file()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(_contents(exercises), indent=1), encoding="utf-8")
    except OSError:
        pass


def lesson_exercises(number: int) -> list[tuple[str, str]]:
    """``[(name, title), ...]`` of lesson ``number``'s exercises, in the lesson's order (from
    the course's map of exercises).

    >>> lesson_exercises(1)[0]
    ('lesson1.dot', 'Exercise 1.1 (one dot product)')
    """
    return [(exercise.name, exercise.title) for exercise in EXERCISES.of_lesson(number)]


@dataclass(frozen=True)
class Progress:
    """Every exercise of the course with its latest outcome; a table in a notebook.

    Attributes
    ----------
    rows : tuple of (int, str, str, str or None)
        ``(lesson, name, title, latest outcome or None)`` for every exercise.
    """

    rows: tuple

    def done(self, lesson: int) -> tuple[int, int]:
        """``(done, all)`` exercises of ``lesson``."""
        mine = [row for row in self.rows if row[0] == lesson]
        return sum(row[3] in DONE for row in mine), len(mine)

    def _mark(self, outcome) -> str:
        if outcome in DONE:
            return "✓ done"
        return "not checked yet" if outcome is None else f"not done ({outcome})"

    def _repr_markdown_(self) -> str:
        lines = ["| lesson | exercise | status |", "| --- | --- | --- |"]
        for lesson, name, title, outcome in self.rows:
            lines.append(f"| {lesson} | {title} (`{name}`) | {self._mark(outcome)} |")
        done = sum(row[3] in DONE for row in self.rows)
        return "\n".join(lines) + f"\n\n{done} of {len(self.rows)} exercises done."

    def __str__(self) -> str:
        lines = [
            f"{lesson}  {title}: {self._mark(outcome)}" for lesson, _, title, outcome in self.rows
        ]
        done = sum(row[3] in DONE for row in self.rows)
        return "\n".join([*lines, f"{done} of {len(self.rows)} exercises done."])

    __repr__ = __str__


def progress() -> Progress:
    """Every exercise of every ready lesson and whether its latest check passed.

    Read from this learner's own record (:func:`progress_file`), offline; nothing is graded.
    """
    outcomes = recorded()
    rows = []
    for entry in COURSE:
        if entry.ready:
            for name, title in lesson_exercises(entry.number):
                rows.append((entry.number, name, title, outcomes.get(name)))
    return Progress(tuple(rows))


def course_map() -> CourseMap:
    """The course map of lesson 0: every lesson, its time and status, the totals, and how many
    of its exercises this learner has done (:func:`progress`: the latest check of each passed;
    recorded on this computer, not graded).

    Returns
    -------
    CourseMap
        Shows as a table; ``.total_minutes`` and ``.ready_minutes`` are the sums.

    Examples
    --------
    >>> course = course_map()
    >>> [entry.number for entry in course.lessons] == list(range(len(COURSE)))
    True
    >>> course.total_minutes == sum(entry.minutes for entry in COURSE)
    True
    """
    shown = progress()
    return CourseMap(COURSE, {entry.number: shown.done(entry.number) for entry in COURSE})
