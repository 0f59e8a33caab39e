"""Checked exercises: one module per lesson (``lesson1`` …); the machinery is in ``core``."""

from attnlab.exercises.core import Exercise, Feedback, NotAttempted, Outcome, Wrong

__all__ = ["Exercise", "Feedback", "NotAttempted", "Outcome", "Wrong"]
