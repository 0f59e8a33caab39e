"""Lesson 0 — a warm-up exercise for trying the check / hint / solution flow.

Examples
--------
>>> largest_score.check(None).outcome.name
'NOT_ATTEMPTED'
>>> largest_score.check(lambda scores: scores[0]).outcome.name
'WRONG'
>>> largest_score.check(None).outcome.name
'NOT_ATTEMPTED'
"""

from __future__ import annotations

import numpy as np

from attnlab.examples import SCORE_ROW
from attnlab.exercises.kit.cases import Cases
from attnlab.exercises.kit.display import short
from attnlab.exercises.kit.exercise import Exercise
from attnlab.exercises.kit.feedback import Feedback
from attnlab.exercises.kit.judging import as_number, expect_close
from attnlab.exercises.kit.outcomes import Wrong


def largest_score_cases() -> list:
    """The rows the checker tries: the course's four-score row, an all-negative row, a single
    score, and the same scores as a plain Python list (the lesson allows lists as well as
    arrays)."""
    return [SCORE_ROW, -np.abs(SCORE_ROW) - 0.5, SCORE_ROW[2:3], [0.5, -1.0, 3.0, 2.0]]


def largest_score_fresh(rng) -> list:
    """Rows drawn anew for every grading (``Cases(fresh=...)``): a row of 3 to 8 scores whose
    largest is neither first nor last, an all-negative row, a single score, and a plain
    Python list."""
    n = int(rng.integers(3, 9))
    row = np.round(rng.normal(0.0, 3.0, size=n), 2)  # (n,)
    row[rng.integers(1, n - 1)] = row.max() + 1.25  # the largest is neither first nor last
    negative = -np.round(rng.uniform(0.5, 9.0, size=int(rng.integers(2, 7))), 2)
    listed = np.round(rng.normal(0.0, 3.0, size=int(rng.integers(2, 7))), 2).tolist()
    return [row, negative, np.round(rng.normal(0.0, 3.0, size=1), 2), listed]


def _judge_largest_score(got, row, messages) -> None:
    """``got`` must be the largest score of ``row``; a wrong number is diagnosed."""
    what = f"largest_score({short(row)})"
    expected = float(np.max(row))
    row = np.asarray(row, dtype=float)
    # unlike the kit's as_number, a returned bool is read as the number 1 or 0 here
    number = float(got) if isinstance(got, (bool, np.bool_)) else as_number(got)
    if number is None:
        raise Wrong(
            f"{what} should be one number, {expected:g}, but yours gave {short(got)}"
            f"{_what_kind(got)}. Return the largest score itself."
        )
    if not np.isclose(number, expected):
        _diagnose(number, row, what)
    expect_close(got, expected, what)


def _largest_score_failed(exc, row) -> str | None:
    """A list row that met an array method (``scores.max()``) says lists are allowed too."""
    if isinstance(row, list) and isinstance(exc.__cause__, (AttributeError, TypeError)):
        return (
            f"largest_score({short(row)}) failed for a plain Python list: {exc.__cause__}. "
            "scores may be a list as well as a numpy array, and lists have no array methods "
            "such as scores.max(). Use max(scores) (or np.max(scores)), which take both."
        )
    return None


def _what_kind(value) -> str:
    """``", a list of 1 item"`` and the like: what a learner returned instead of a number."""
    if isinstance(value, (list, tuple)):
        items = "item" if len(value) == 1 else "items"
        return f", a {type(value).__name__} of {len(value)} {items}"
    if isinstance(value, np.ndarray) and value.ndim:
        return f", an array of shape {value.shape}"
    return ""


def _diagnose(got: float, row: np.ndarray, what: str) -> None:
    expected = float(np.max(row))
    said = f"{what} should be {expected:g}, but yours gave {got:g}"
    if got == float(np.argmax(row)):
        raise Wrong(f"{said}: that is the position of the largest score, not the score itself.")
    if got == float(np.min(row)):
        raise Wrong(f"{said}: that is the smallest score; we want the largest.")
    if got == 0 and expected < 0:
        raise Wrong(
            f"{said}. Every score in this row is negative: did your running maximum start at 0? "
            "Start it at the first score instead."
        )
    if got == float(row[0]):
        raise Wrong(f"{said}: that is the first score; look at all of them.")
    if np.isclose(got, float(np.sum(row))):
        raise Wrong(f"{said}: that is the sum of the scores.")
    raise Wrong(f"{said}. Look at every score in the row and keep the largest one.")


largest_score = Exercise(
    "Warm-up (the largest score)",
    Cases(
        largest_score_cases,
        _judge_largest_score,
        inputs=lambda row: (row,),
        failed=_largest_score_failed,
        fresh=largest_score_fresh,
    ),
    hints=[
        "Python has a built-in function that returns the largest item of a list "
        "(it works on a 1-D numpy array too).",
        "`max(scores)` returns the largest score. Put `return` in front of it.",
        "If you prefer a loop: start with `best = scores[0]` (not `best = 0`: scores can all "
        "be negative), then update `best` whenever a score is larger.",
    ],
    id="0.1",
    attr="largest_score",
    points=1,
    grade_id="check-lesson0-largest-score",
)


def outcome_examples() -> list[Feedback]:
    """What the three outcomes of a check look like, for the tour in lesson 0.

    Returns the feedback for a stub (not attempted yet), for an answer that
    returns the first score (not yet right), and for a correct answer. Unlike
    :meth:`Exercise.check` this never raises, even when grading.

    Examples
    --------
    >>> [feedback.outcome.name for feedback in outcome_examples()]
    ['NOT_ATTEMPTED', 'WRONG', 'CORRECT']
    """
    tour = largest_score.untouched()
    answers = (None, lambda scores: scores[0], lambda scores: sorted(scores)[-1])
    return [tour.grade(answer) for answer in answers]
