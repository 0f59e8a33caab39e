"""The course's map of exercises: id (``"5.3"``) -> the exercise, for every lesson.

Each lesson's :class:`~attnlab.exercises.kit.exercise.Exercise` declares where it sits in the
course (its id, its name in the lesson module, the answer function its grade cell passes, the
grade cell and its points) and adds itself here when it is defined. Grading, the worked
solutions, the points table and the tests ask this map what an exercise is, instead of reading
it out of a grade cell's text. Reading the map whole imports every lesson's exercise module
first (the lessons of :data:`attnlab.course.COURSE`, by the loader :mod:`attnlab.exercises`
gives it: :meth:`ExerciseMap.loads_with`), so it is always whole; :meth:`ExerciseMap.loaded`
reads only the lessons imported so far (a learner's check: its own lesson).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

#: The shape of every grade cell's code, ``lesson1.dot.check(dot)``.
_CHECK_CALL = re.compile(r"\w+\.\w+\.check\(\w+\)")


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
        self._load_every_lesson: Callable[[], None] | None = None

    def loads_with(self, load: Callable[[], None]) -> None:
        """``load()`` imports every lesson's exercise module; it runs the first time the map
        is read whole. Given by :mod:`attnlab.exercises`, which stands above the lessons (this
        module stands below them: it imports none)."""
        self._load_every_lesson = load

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
        if not self._whole and self._load_every_lesson is not None:
            self._load_every_lesson()
            self._whole = True
        return self._found

    def loaded(self) -> dict:
        """Exercise id -> exercise for the lessons imported so far, without importing more."""
        return {key: self._found[key] for key in sorted(self._found, key=id_order)}

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
        """The exercise whose grade cell is ``code`` (``"lesson1.dot.check(dot)"``), or None.

        Asked first of the lessons imported so far (a notebook's check cells name its own
        lesson, which it has imported); the whole map only for a grade cell's code that none
        of those has, so a learner's check does not import every lesson."""
        code = code.strip()
        found = next((e for e in self.loaded().values() if e.check_call() == code), None)
        if found is not None or not _CHECK_CALL.fullmatch(code):
            return found
        return next((e for e in self.values() if e.check_call() == code), None)

    def by_grade_id(self, grade_id: str | None):
        """The exercise its grade cell ``grade_id`` checks, or None."""
        return next((e for e in self.values() if e.grade_id == grade_id), None)


#: Every exercise of the course, by id.
EXERCISES = ExerciseMap()
