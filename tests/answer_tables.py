"""Right and wrong answers to a check, as pytest parameters, and how each must be judged.

The lesson test files list, per exercise, answers it must accept and answers it must reject
with the reason the learner should read; these helpers turn those tables into test cases.
Every check runs with warnings as errors, so nothing a learner's code triggers may escape it.
"""

from __future__ import annotations

import warnings

import pytest

from attnlab.exercises import Outcome

#: How many right and wrong answers the test tables hold per exercise title, filled as the
#: lesson test modules are imported (tests/test_exercises_contract.py checks the counts).
COUNTS: dict[str, dict[str, int]] = {}


def _count(exercise, kind: str, n: int) -> None:
    counts = COUNTS.setdefault(exercise.title, {"right": 0, "wrong": 0})
    counts[kind] += n


def _named(answers) -> list:
    """(name, answer) pairs from a {name: answer} dict or a list of functions."""
    if isinstance(answers, dict):
        return list(answers.items())
    return [(getattr(answer, "__name__", repr(answer)), answer) for answer in answers]


def right(*tables) -> list:
    """``pytest.param(exercise, answer)`` for each ``(exercise, answers)`` table."""
    for exercise, answers in tables:
        _count(exercise, "right", len(_named(answers)))
    return [
        pytest.param(exercise, answer, id=f"{exercise.title}: {name}")
        for exercise, answers in tables
        for name, answer in _named(answers)
    ]


def wrong(*tables) -> list:
    """``pytest.param(exercise, answer, reason)`` per ``(exercise, {name: (answer, reason)})``."""
    for exercise, answers in tables:
        _count(exercise, "wrong", len(answers))
    return [
        pytest.param(exercise, answer, reason, id=f"{exercise.title}: {name}")
        for exercise, answers in tables
        for name, (answer, reason) in answers.items()
    ]


def judged(exercise, answer):
    """The check's feedback, with every warning raised as an error."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return exercise.check(answer)


def assert_right(exercise, answer) -> None:
    """The check accepts ``answer``."""
    feedback = judged(exercise, answer)
    assert feedback.outcome is Outcome.CORRECT, feedback.message


def assert_wrong(exercise, answer, reason: str):
    """The check rejects ``answer`` giving ``reason``, with no traceback; returns the feedback."""
    feedback = judged(exercise, answer)
    assert feedback.outcome is Outcome.WRONG, feedback.message
    assert reason in feedback.message, feedback.message
    assert "Traceback" not in feedback.message
    return feedback
