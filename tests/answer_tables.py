"""Right and wrong answers to a check, as data, and the one test that judges them.

Each lesson test module lists, per exercise, answers its check must accept and answers it must
reject with the reason the learner should read, as :class:`Answers` tables, and binds the tests
written here to names pytest collects::

    test_accepts, test_rejects = accept_reject(Answers(lesson0.largest_score, RIGHT, WRONG))

Every check runs with warnings as errors, so nothing a learner's code triggers may escape it.
:func:`assert_hints_climb` is the hint ladder the lesson tests share.
"""

from __future__ import annotations

import copy
import re
import warnings
from dataclasses import dataclass
from unittest import mock

import pytest

import attnlab.exercises.kit.exercise as exercise_module
from attnlab.exercises import Outcome
from attnlab.exercises.kit.feedback import joined

#: A reason that ends a sentence: its last character (before closing quotes or brackets) is a
#: full stop, a question or exclamation mark, or an ellipsis.
ENDS_A_SENTENCE = re.compile(r"[.!?…][)\]'\"”’»`]*\Z")

#: How many right and wrong answers the test tables hold per exercise title, filled as the
#: lesson test modules are imported (tests/test_exercises_contract.py checks the counts).
COUNTS: dict[str, dict[str, int]] = {}

#: Every table :func:`accept_reject` was given, as the lesson test modules are imported
#: (tests/test_exercises_contract.py judges them again on the cases drawn at grading time).
TABLES: list = []


@dataclass(frozen=True)
class Answers:
    """One exercise's answers and how its check must judge each.

    Attributes
    ----------
    exercise : Exercise
        The exercise whose check judges the answers.
    right : dict or list
        ``{name: answer}``, or a list of functions (named by ``__name__``), all to be accepted.
    wrong : dict
        ``{name: (answer, reason)}``: each is rejected, its feedback containing ``reason``.
    call : str, optional
        If given, the feedback to every wrong answer begins with it (the call that failed).
    told_apart : bool
        If true, no wrong answer's feedback carries the reason another entry expects (reasons
        that are part of its own are exempt).
    """

    exercise: object
    right: dict | list
    wrong: dict
    call: str | None = None
    told_apart: bool = False

    def named_right(self) -> list:
        """``(name, answer)`` pairs of the right answers."""
        if isinstance(self.right, dict):
            return list(self.right.items())
        return [(getattr(answer, "__name__", repr(answer)), answer) for answer in self.right]


def judged(exercise, answer):
    """The check's feedback, with every warning raised as an error."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return exercise.check(answer)


def assert_right(exercise, answer) -> None:
    """The check accepts ``answer``."""
    feedback = judged(exercise, answer)
    assert feedback.outcome is Outcome.CORRECT, feedback.message


def judged_with_reason(exercise, answer):
    """:func:`judged`, and the reason the check gave as it wrote it, before the "Stuck?" tip
    was joined on (None when it gave none): the tip joiner would finish a sentence the check
    left unfinished, which the learner would then read with a full stop added after a
    quotation or a number."""
    said = []

    def joining(message, tip):
        said.append(message)
        return joined(message, tip)

    with mock.patch.object(exercise_module, "joined", joining):
        feedback = judged(exercise, answer)
    return feedback, (said[-1] if said else None)


def assert_wrong(exercise, answer, reason: str):
    """The check rejects ``answer`` giving ``reason`` in a finished sentence, with no traceback;
    returns the feedback."""
    feedback, said = judged_with_reason(exercise, answer)
    assert feedback.outcome is Outcome.WRONG, feedback.message
    assert reason in feedback.message, feedback.message
    assert "Traceback" not in feedback.message
    assert said is not None and ENDS_A_SENTENCE.search(said.rstrip()), f"unfinished: …{said}"
    return feedback


def assert_hints_climb(exercise) -> None:
    """Asked again and again, ``exercise.hint()`` shows "Hint i of 3" tier by tier, the first a
    nudge with no code, and stays on the last tier once there."""
    exercise = copy.copy(exercise)  # .hint() moves the exercise's own tier on
    tiers = [exercise.hint().markdown for _ in exercise.hints]
    assert [f"Hint {i} of 3" in text for i, text in enumerate(tiers, 1)] == [True] * 3
    assert "`" not in exercise.hints[0]  # a nudge, no code
    assert "last hint" in exercise.hint().markdown  # stays on the last tier


def assert_rejected_as_listed(table: Answers, name: str) -> None:
    """``table.wrong[name]`` is rejected with its reason, as the table's options require."""
    answer, reason = table.wrong[name]
    message = assert_wrong(table.exercise, answer, reason).message
    if table.call is not None:
        assert message.startswith(table.call), message
    if table.told_apart:
        others = {r for _, r in table.wrong.values() if r != reason and r not in reason}
        assert not [r for r in others if r in message], (name, message)


def accept_reject(*tables: Answers):
    """``test_accepts`` and ``test_rejects``, parametrised over every answer in ``tables``.

    A test's id is ``"<exercise title>: <answer name>"``.
    """
    TABLES.extend(tables)
    for table in tables:
        counts = COUNTS.setdefault(table.exercise.title, {"right": 0, "wrong": 0})
        counts["right"] += len(table.named_right())
        counts["wrong"] += len(table.wrong)

    accepted = [
        pytest.param(table.exercise, answer, id=f"{table.exercise.title}: {name}")
        for table in tables
        for name, answer in table.named_right()
    ]
    rejected = [
        pytest.param(table, name, id=f"{table.exercise.title}: {name}")
        for table in tables
        for name in table.wrong
    ]

    @pytest.mark.parametrize("exercise, answer", accepted)
    def test_accepts(exercise, answer):
        assert_right(exercise, answer)

    @pytest.mark.parametrize("table, name", rejected)
    def test_rejects(table, name):
        assert_rejected_as_listed(table, name)

    return test_accepts, test_rejects
