"""Checked exercises: one module per lesson (``lesson1`` …); the machinery in ``kit``."""

from attnlab.exercises import cells as _cells
from attnlab.exercises.kit.exercise import Exercise
from attnlab.exercises.kit.exercise_map import EXERCISES
from attnlab.exercises.kit.feedback import Feedback
from attnlab.exercises.kit.outcomes import NotAttempted, Outcome, Wrong

_cells.watch()  # inside IPython (not under grading): plain sentences for check cells

__all__ = ["EXERCISES", "Exercise", "Feedback", "NotAttempted", "Outcome", "Wrong"]
