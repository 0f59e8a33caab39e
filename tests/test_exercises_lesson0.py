"""Lesson 0's warm-up check: rejects known-wrong answers with a reason, accepts right ones."""

from __future__ import annotations

import numpy as np
from answer_tables import Answers, accept_reject

from attnlab.exercises import Outcome, lesson0


def running_max(scores):
    best = scores[0]
    for score in scores[1:]:
        if score > best:
            best = score
    return best


def running_max_from_zero(scores):
    best = 0
    for score in scores:
        best = max(best, score)
    return best


RIGHT = {
    "max": max,
    "np.max": np.max,
    "sorted last": lambda scores: sorted(scores)[-1],
    "running max": running_max,
    "np.max in float32": lambda scores: np.max(np.asarray(scores, dtype=np.float32)),
}

WRONG = {
    "argmax": (np.argmax, "position"),
    "min": (min, "smallest"),
    "first": (lambda scores: scores[0], "first score"),
    "running max from 0": (running_max_from_zero, "start at 0"),
    "sum": (np.sum, "sum"),
    "no return": (lambda scores: None, "return"),
    "a list": (lambda scores: [max(scores)], "one number, 2.5, but yours gave [2.5], a list"),
    "an array": (lambda scores: np.array([max(scores)]), "an array of shape (1,)"),
    "a string": (lambda scores: str(max(scores)), "one number"),
    "half the largest": (lambda scores: max(scores) / 2, "should be 2.5, but yours gave 1.25"),
    # Lists are allowed as well as arrays, so an array-only method fails on the list row.
    "scores.max()": (lambda scores: scores.max(), "lists have no array methods such as"),
    "scores.argmax() on a list": (
        lambda scores: scores[scores.argmax()],
        "failed for a plain Python list",
    ),
}


test_accepts, test_rejects = accept_reject(Answers(lesson0.largest_score, RIGHT, WRONG))


def test_hints_and_solution():
    exercise = lesson0.largest_score
    assert len(exercise.hints) >= 2
    assert "max(scores)" in str(exercise.solution())


def test_outcome_examples_show_all_three_even_when_grading(monkeypatch):
    monkeypatch.setenv("ATTNLAB_REQUIRE_CORRECT", "1")
    outcomes = [feedback.outcome for feedback in lesson0.outcome_examples()]
    assert outcomes == [Outcome.NOT_ATTEMPTED, Outcome.WRONG, Outcome.CORRECT]
