"""What a check can conclude: the outcomes, and the exceptions a checker raises to say so.

A checker returns when the answer is right and raises :class:`Wrong` (with the reason),
:class:`NotAttempted` (still the stub) or :class:`Recorded` (a graded quiz, marked later);
:class:`Forbidden` is raised when the learner's function called something its exercise forbids,
:class:`CheckInterrupted` when the learner stopped a check.
"""

from __future__ import annotations

import enum


class Outcome(enum.Enum):
    NOT_ATTEMPTED = "not attempted yet"
    WRONG = "not yet right"
    CORRECT = "correct"
    RECORDED = "recorded"  #: a graded quiz without its key at hand: marked after submission
    NOT_RUN = "answer cell did not run"  #: its latest run stopped before defining the answer
    #: the notebook hides the answer from grading (see :mod:`attnlab.exercises.rules.answer_cells`)
    NOT_GRADED = "grading will not see this answer"


class Wrong(Exception):
    """Raised by a checker: the answer is wrong, and the message says how.

    ``score`` is the share of the exercise's points the answer still earns (a quiz with some
    questions right); 0 for an ordinary wrong answer.
    """

    def __init__(self, message="", score: float = 0.0):
        super().__init__(message)
        self.score = float(score)


class Recorded(Exception):
    """Raised by a checker that cannot judge here (a graded quiz): the answer is complete and
    will be marked after submission."""


class Forbidden(Exception):
    """The learner's function called a function its exercise forbids (the name is the message)."""


class NotAttempted(Exception):
    """Raised by a checker: the answer is still the stub."""


class CheckInterrupted(KeyboardInterrupt):
    """A check stopped by the learner (Kernel › Interrupt): IPython shows the message alone.

    It is a ``KeyboardInterrupt``, so the cell still fails and a "Run All" stops there.
    """

    def _render_traceback_(self) -> list[str]:
        return [str(self)]
