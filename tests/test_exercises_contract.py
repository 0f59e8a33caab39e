"""What every checked exercise of every lesson promises, found automatically.

Each ``Exercise`` in ``attnlab.exercises.lessonN`` modules (new lessons are picked up
without editing this file):

* a placeholder answer (``None``, ``...`` or a stub still raising NotImplementedError) is
  *not attempted*, with no traceback;
* an answer that crashes or returns junk is *wrong*, never an exception;
* the worked solution in the lesson's source notebook is *correct*;
* there are 2 or 3 hints and a solution to show; no hint holds a line of any worked solution;
* when grading (``ATTNLAB_REQUIRE_CORRECT=1``) anything but a correct answer raises.

The lesson test files hold what is specific to each check: the correct answers it accepts
and the wrong ones it rejects, with the reason it must give.
"""

from __future__ import annotations

import copy
import importlib
import pkgutil
from pathlib import Path

import answer_tables
import pytest
from solution_lines import leaks
from source_answers import worked_answer

import attnlab.exercises
from attnlab.exercises import Exercise, Outcome


def lesson_exercises() -> list[Exercise]:
    """Every module-level Exercise of every ``attnlab.exercises.lesson*`` module."""
    found = []
    for info in pkgutil.iter_modules(attnlab.exercises.__path__):
        if info.name.startswith("lesson"):
            module = importlib.import_module(f"attnlab.exercises.{info.name}")
            found += [value for value in vars(module).values() if isinstance(value, Exercise)]
    return found


EXERCISES = lesson_exercises()
by_title = pytest.mark.parametrize("exercise", EXERCISES, ids=lambda e: e.title)


def stub(*args, **kwargs):
    raise NotImplementedError()


def crashes(*args, **kwargs):
    raise KeyError("oops")


def test_every_lesson_with_exercises_is_found():
    lessons = {e.title.split()[1].split(".")[0] for e in EXERCISES if e.title.startswith("Ex")}
    assert len(EXERCISES) >= 10 and {"1", "2", "3"} <= lessons, [e.title for e in EXERCISES]


@by_title
def test_each_check_is_tested_on_enough_right_and_wrong_answers(exercise):
    """At least 2 different correct answers accepted and 3 known-wrong ones rejected."""
    for path in sorted(Path(__file__).parent.glob("test_exercises_lesson*.py")):
        importlib.import_module(path.stem)  # fills answer_tables.COUNTS
    counts = answer_tables.COUNTS.get(exercise.title, {"right": 0, "wrong": 0})
    assert counts["right"] >= 2 and counts["wrong"] >= 3, counts


@by_title
@pytest.mark.parametrize("answer", [None, ..., stub], ids=["None", "Ellipsis", "stub"])
def test_placeholders_are_not_attempted(exercise, answer):
    feedback = exercise.check(answer)
    assert feedback.outcome is Outcome.NOT_ATTEMPTED, feedback.message
    assert "Traceback" not in feedback.message


@by_title
@pytest.mark.parametrize(
    "answer", [crashes, lambda *a, **k: "weights", 12345.678], ids=["crashes", "junk", "number"]
)
def test_crashes_and_junk_are_wrong_not_raised(exercise, answer):
    feedback = exercise.check(answer)
    assert feedback.outcome is Outcome.WRONG, feedback.message
    assert "Traceback" not in feedback.message


@by_title
def test_worked_solution_is_correct(exercise):
    feedback = exercise.check(worked_answer(exercise))
    assert feedback.outcome is Outcome.CORRECT, feedback.message


@by_title
def test_hints_come_in_tiers_and_a_solution_is_shown(exercise):
    exercise = copy.copy(exercise)  # hint() remembers how far it got; keep the shared one fresh
    assert 2 <= len(exercise.hints) <= 3
    first, last = exercise.hint(), exercise.hint(len(exercise.hints))
    assert "Hint 1 of" in first.markdown and "last hint" in last.markdown
    assert "A solution" in exercise.solution().markdown


@by_title
def test_no_hint_gives_the_code_away(exercise):
    """The last tier guides; it never holds a telling line of a worked solution."""
    texts = {f"hint {i}": text for i, text in enumerate(exercise.hints, 1)}
    assert leaks(texts) == []


@by_title
def test_grading_raises_unless_correct(exercise, monkeypatch):
    monkeypatch.setenv("ATTNLAB_REQUIRE_CORRECT", "1")
    for answer in (None, crashes):
        with pytest.raises(AssertionError):
            exercise.check(answer)
    assert exercise.check(worked_answer(exercise))
