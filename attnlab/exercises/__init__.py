"""Checked exercises: one module per lesson (``lesson1`` …); the check machinery in ``kit``,
what grading refuses and the learner's check previews in ``rules``, the learner's record in
``progress``.

Importing this package loads nothing else: a lesson's module brings the kit and the rules it
needs, and the course's map of exercises (:data:`EXERCISES`) imports every lesson only when it
is read whole. ``Exercise``, ``Feedback``, ``Outcome``, ``NotAttempted`` and ``Wrong`` are
the kit's, named here for short.
"""

import importlib

from attnlab.exercises.kit.exercise_map import EXERCISES

#: Where each short name lives (loaded when first asked for).
_SHORT_NAMES = {
    "Exercise": "attnlab.exercises.kit.exercise",
    "Feedback": "attnlab.exercises.kit.feedback",
    "NotAttempted": "attnlab.exercises.kit.outcomes",
    "Outcome": "attnlab.exercises.kit.outcomes",
    "Wrong": "attnlab.exercises.kit.outcomes",
}


def _every_lesson() -> None:
    """Import every ready lesson's exercise module (:data:`attnlab.course.COURSE`): each
    adds its exercises to :data:`EXERCISES` as it is defined."""
    from attnlab.course import COURSE

    for lesson in COURSE:
        if lesson.ready:
            importlib.import_module(lesson.exercises)


EXERCISES.loads_with(_every_lesson)


def __getattr__(name: str):
    if name in _SHORT_NAMES:
        return getattr(importlib.import_module(_SHORT_NAMES[name]), name)
    raise AttributeError(f"module 'attnlab.exercises' has no attribute {name!r}")


__all__ = ["EXERCISES", "Exercise", "Feedback", "NotAttempted", "Outcome", "Wrong"]
