"""The course's map of exercises: id (``"5.3"``) -> the exercise, for every lesson.

Each lesson's :class:`~attnlab.exercises.kit.exercise.Exercise` declares where it sits in the
course (its id, its name in the lesson module, the answer function its grade cell passes, the
grade cell and its points) and adds itself here when it is defined. Grading, the worked
solutions, the points table and the tests ask this map what an exercise is, instead of reading
it out of a grade cell's text. Reading the map imports every lesson's exercise module first
(the lessons of :data:`attnlab.course.COURSE`), so it is always whole.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping


def id_order(exercise_id: str) -> tuple[int, ...]:
    """``"10.2"`` -> ``(10, 2)``: ids sorted as the course runs.

    Examples
    --------
    >>> sorted(["2.1", "10.1", "1.3"], key=id_order)
    ['1.3', '2.1', '10.1']
    """
    return tuple(int(part) for part in exercise_id.split("."))


class ExerciseMap(Mapping):
    """Exercise id -> exercise, in course order; see the module docstring.

    Examples
    --------
    >>> from attnlab.exercises import EXERCISES
    >>> EXERCISES["3.3"].name, EXERCISES["3.3"].answer, EXERCISES["3.3"].points
    ('lesson3.temperature', 'softmax_with_temperature', 2)
    >>> EXERCISES.by_grade_id("check-softmax-temperature") is EXERCISES["3.3"]
    True
    """

    def __init__(self):
        self._found: dict = {}
        self._whole = False

    def add(self, exercise) -> None:
        """Record ``exercise`` under its id (a lesson module run again replaces its own).

        Raises
        ------
        ValueError
            Another exercise already has that id or that grade cell.
        """
        known = self._found.get(exercise.id)
        if known is not None and known.name != exercise.name:
            raise ValueError(f"exercise id {exercise.id} is {known.name}'s, not {exercise.name}'s")
        for other in self._found.values():
            if other.grade_id == exercise.grade_id and other.name != exercise.name:
                raise ValueError(f"grade cell {exercise.grade_id} already checks {other.name}")
        self._found[exercise.id] = exercise

    def _all(self) -> dict:
        if not self._whole:
            from attnlab.course import COURSE

            for lesson in COURSE:
                if lesson.ready:
                    importlib.import_module(lesson.exercises)
            self._whole = True
        return self._found

    def __getitem__(self, exercise_id: str):
        return self._all()[exercise_id]

    def __iter__(self):
        return iter(sorted(self._all(), key=id_order))

    def __len__(self) -> int:
        return len(self._all())

    def of_lesson(self, number: int) -> list:
        """Lesson ``number``'s exercises, in the lesson's order."""
        return [exercise for exercise in self.values() if exercise.lesson == number]

    def by_name(self, name: str | None):
        """The exercise called ``name`` (``"lesson1.dot"``), or None."""
        return next((e for e in self.values() if e.name == name), None)

    def by_check_cell(self, code: str):
        """The exercise whose grade cell is ``code`` (``"lesson1.dot.check(dot)"``), or None."""
        return next((e for e in self.values() if e.check_call() == code.strip()), None)

    def by_grade_id(self, grade_id: str | None):
        """The exercise its grade cell ``grade_id`` checks, or None."""
        return next((e for e in self.values() if e.grade_id == grade_id), None)


#: Every exercise of the course, by id.
EXERCISES = ExerciseMap()
