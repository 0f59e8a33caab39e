"""The course's map of exercises (attnlab.exercises.EXERCISES) says what the notebooks do.

Every grade cell of every source notebook is the check call the map gives for its grade_id, and
is worth the map's points; every exercise is in the map once, under an id of its own lesson.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from attnlab.course import COURSE
from attnlab.exercises import EXERCISES, Exercise
from attnlab.exercises.kit.exercise_map import ExerciseMap
from attnlab.exercises.solutions import defined_names

ROOT = Path(__file__).resolve().parents[1]
READY = [lesson for lesson in COURSE if lesson.ready]


def grade_cells() -> list[tuple[int, dict]]:
    """(lesson number, grade cell) for every grade cell of every source notebook."""
    found = []
    for lesson in READY:
        cells = json.loads((ROOT / lesson.source).read_text(encoding="utf-8"))["cells"]
        found += [
            (lesson.number, cell)
            for cell in cells
            if cell["cell_type"] == "code" and cell["metadata"].get("nbgrader", {}).get("grade")
        ]
    return found


@pytest.mark.parametrize(
    ("number", "cell"),
    grade_cells(),
    ids=lambda v: v["metadata"]["nbgrader"]["grade_id"] if isinstance(v, dict) else str(v),
)
def test_every_grade_cell_is_what_the_map_says(number, cell):
    meta = cell["metadata"]["nbgrader"]
    exercise = EXERCISES.by_grade_id(meta["grade_id"])
    assert exercise is not None, f"the map has no exercise for grade cell {meta['grade_id']}"
    assert "".join(cell["source"]) == exercise.check_call()
    assert meta["points"] == exercise.points
    assert exercise.lesson == number
    assert meta["locked"] and not meta["solution"]


def test_every_exercise_of_the_map_has_its_grade_cell():
    assert [cell["metadata"]["nbgrader"]["grade_id"] for _, cell in grade_cells()] == [
        exercise.grade_id for exercise in EXERCISES.values()
    ]


def test_every_exercise_a_lesson_module_defines_is_in_the_map():
    """The map is whole: each lesson module's exercises, and nothing else, under their names."""
    for lesson in READY:
        module = importlib.import_module(lesson.exercises)
        defined = {
            f"lesson{lesson.number}.{attr}": value
            for attr, value in vars(module).items()
            if isinstance(value, Exercise)
        }
        mapped = {exercise.name: exercise for exercise in EXERCISES.of_lesson(lesson.number)}
        assert defined == mapped, lesson.number
        for exercise in mapped.values():
            assert getattr(module, exercise.attr) is exercise


def test_ids_are_unique_and_numbered_in_order_in_every_lesson():
    for lesson in READY:
        ids = [exercise.id for exercise in EXERCISES.of_lesson(lesson.number)]
        assert ids == [f"{lesson.number}.{n}" for n in range(1, len(ids) + 1)], ids
    assert len(set(EXERCISES)) == len(EXERCISES) == len(grade_cells())


def test_every_lesson_has_exercises_and_every_id_keys_its_own_exercise():
    assert {exercise.lesson for exercise in EXERCISES.values()} == {e.number for e in READY}
    for exercise_id, exercise in EXERCISES.items():
        assert exercise.id == exercise_id
        assert EXERCISES.by_name(exercise.name) is exercise
        assert EXERCISES.by_check_cell(exercise.check_call()) is exercise


def test_numbered_titles_carry_their_id():
    for exercise in EXERCISES.values():
        if exercise.title.startswith("Exercise "):
            assert exercise.title.startswith(f"Exercise {exercise.id} ("), exercise.title


def test_grade_ids_and_answers_are_unique_where_grading_needs_them():
    grade_ids = [exercise.grade_id for exercise in EXERCISES.values()]
    assert len(set(grade_ids)) == len(grade_ids)
    for lesson in READY:
        answers = [exercise.answer for exercise in EXERCISES.of_lesson(lesson.number)]
        assert len(set(answers)) == len(answers), lesson.number


def test_each_answer_is_defined_by_one_solution_cell_of_its_notebook():
    for lesson in READY:
        cells = json.loads((ROOT / lesson.source).read_text(encoding="utf-8"))["cells"]
        solutions = [
            defined_names("".join(c["source"]))
            for c in cells
            if c["cell_type"] == "code" and c["metadata"].get("nbgrader", {}).get("solution")
        ]
        for exercise in EXERCISES.of_lesson(lesson.number):
            assert sum(exercise.answer in names for names in solutions) == 1, exercise.name


def test_forbidden_lists_name_dotted_functions_or_notebook_names():
    from attnlab.exercises.rules.lint import MATRIX_PRODUCT  # the lint's mark for @, np.dot (1.1)

    for exercise in EXERCISES.values():
        for name in exercise.declared_forbidden:
            if name == MATRIX_PRODUCT:
                continue
            assert isinstance(name, str) and name.replace(".", "").replace("_", "").isalnum()


def test_the_map_refuses_a_second_exercise_under_a_taken_id_or_grade_cell():
    course = ExerciseMap()
    course.add(SimpleNamespace(id="1.1", name="lesson1.one", grade_id="check-one"))
    course.add(SimpleNamespace(id="1.1", name="lesson1.one", grade_id="check-one"))  # run again
    with pytest.raises(ValueError, match="exercise id 1.1 is lesson1.one's"):
        course.add(SimpleNamespace(id="1.1", name="lesson1.two", grade_id="check-two"))
    with pytest.raises(ValueError, match="grade cell check-one already checks lesson1.one"):
        course.add(SimpleNamespace(id="1.2", name="lesson1.two", grade_id="check-one"))


def test_an_exercise_in_the_map_declares_its_whole_place():
    with pytest.raises(TypeError, match="needs attr and points"):
        Exercise("Half placed", print, hints=[], id="1.9", attr="half")
