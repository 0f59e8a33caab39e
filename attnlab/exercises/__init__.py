"""Checked exercises: one module per lesson (``lesson1`` …); the machinery is in ``core``."""

from attnlab.exercises import cells as _cells
from attnlab.exercises.core import Exercise, Feedback, NotAttempted, Outcome, Wrong

_cells.watch()  # inside IPython (not under grading): plain sentences for check cells

__all__ = ["Exercise", "Feedback", "NotAttempted", "Outcome", "Wrong"]
