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
from attnlab.exercises.core import Exercise, Feedback, Wrong, _short, call, expect_close

#: Rows the checker tries: the course's four-score row, an all-negative row, a single score,
#: and the same scores as a plain Python list (the lesson allows lists as well as arrays).
CHECK_ROWS = (SCORE_ROW, -np.abs(SCORE_ROW) - 0.5, SCORE_ROW[2:3], [0.5, -1.0, 3.0, 2.0])


def check_largest_score(answer) -> None:
    """Call ``answer`` on each row in :data:`CHECK_ROWS`; raise :class:`Wrong` with a reason."""
    for row in CHECK_ROWS:
        what = f"largest_score({_short(row)})"
        try:
            got = call(answer, list(row) if isinstance(row, list) else row.copy())
        except Wrong as exc:
            if isinstance(row, list) and isinstance(exc.__cause__, (AttributeError, TypeError)):
                raise Wrong(
                    f"{what} failed for a plain Python list: {exc.__cause__}. scores may be a "
                    "list as well as a numpy array, and lists have no array methods such as "
                    "scores.max(). Use max(scores) (or np.max(scores)), which take both."
                ) from None
            raise
        expected = float(np.max(row))
        row = np.asarray(row, dtype=float)
        number = _as_number(got)
        if number is None:
            raise Wrong(
                f"{what} should be one number, {expected:g}, but yours gave {_short(got)}"
                f"{_what_kind(got)}. Return the largest score itself."
            )
        if not np.isclose(number, expected):
            _diagnose(number, row, what)
        expect_close(got, expected, what)


def _what_kind(value) -> str:
    """``", a list of 1 item"`` and the like: what a learner returned instead of a number."""
    if isinstance(value, (list, tuple)):
        items = "item" if len(value) == 1 else "items"
        return f", a {type(value).__name__} of {len(value)} {items}"
    if isinstance(value, np.ndarray) and value.ndim:
        return f", an array of shape {value.shape}"
    return ""


def _as_number(value) -> float | None:
    """``value`` as a float, or None when it is not a single number."""
    if np.ndim(value) != 0 or isinstance(value, (str, bytes)):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


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
    check_largest_score,
    hints=[
        "Python has a built-in function that returns the largest item of a list "
        "(it works on a 1-D numpy array too).",
        "`max(scores)` returns the largest score. Put `return` in front of it.",
        "If you prefer a loop: start with `best = scores[0]` (not `best = 0`: scores can all "
        "be negative), then update `best` whenever a score is larger.",
    ],
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
    tour = Exercise(largest_score.title, check_largest_score, hints=[])
    answers = (None, lambda scores: scores[0], lambda scores: sorted(scores)[-1])
    return [tour.grade(answer) for answer in answers]
