"""The one checking loop: :class:`Cases`, a checker as data (the inputs and the judge)."""

from __future__ import annotations

import zlib
from dataclasses import dataclass

import numpy as np

from attnlab.exercises.kit.calling import call_watching
from attnlab.exercises.kit.outcomes import Wrong
from attnlab.exercises.rules.grading_mode import grading_salt, salted_seeds


# ------------------------------------------------------------------ the case loop, written once
def fresh_seed(fresh) -> int:
    """The seed of ``fresh``'s generator in a learner's check: its qualified name's CRC-32
    (under grading, :func:`salted_seeds` mixes the salt in), so no two exercises draw alike."""
    name = f"{getattr(fresh, '__module__', '')}.{getattr(fresh, '__qualname__', '')}"
    return zlib.crc32(name.encode())


def again(cases: list, salt: int | None) -> list:
    """Under grading (a ``salt``), one to three of ``cases`` drawn again, to be tried last.

    An answer that counts its calls could be right for as many calls as a check is known to
    make and wrong after (a red team's 11.2: right for six calls, zeros from the seventh). How
    many calls a graded check makes, and which case comes back, is drawn from the grading salt,
    so no count is safe. A learner's check (no salt) tries each case once.

    >>> again([1, 2, 3], None)
    []
    >>> 1 <= len(again([1, 2, 3], 12345)) <= 3 and set(again([1, 2, 3], 12345)) <= {1, 2, 3}
    True
    """
    if salt is None or not cases:
        return []
    rng = np.random.default_rng([int(salt) % 2**64, len(cases), 2])
    picks = rng.integers(0, len(cases), size=int(rng.integers(1, 4)))  # (1 to 3,)
    return [cases[int(i)] for i in picks]


def _after_description(case) -> tuple:
    """The call's arguments of a ``(description, *arguments)`` case."""
    return tuple(case[1:])


@dataclass(frozen=True)
class Cases:
    """A checker as data: the inputs a learner's function is tried on, and how each is judged.

    Calling it runs the one checking loop every exercise shares: for each case, call the
    answer on fresh copies of its arguments (:func:`call_watching`: forbidden calls, stubs,
    exceptions, a returned ``None`` and changed inputs become feedback, numpy's warnings are
    collected), then ``judge`` the result. The first case that fails stops the check.

    Parameters
    ----------
    cases : callable
        ``cases()`` returns the cases in the order they are tried, each as the lesson states
        it (a ``(description, *arguments)`` tuple by default, or any object ``inputs`` reads).
    judge : callable
        ``judge(got, case, messages)`` returns when ``got`` is right for ``case`` and raises
        :class:`Wrong` with a reason otherwise; ``messages`` are numpy's warnings (see
        :func:`warned`).
    inputs : callable, optional
        ``inputs(case)`` gives the call's arguments; by default everything after the
        description. Arrays are copied before each call, so a case can be reused.
    failed : callable, optional
        ``failed(exc, case)`` gives the message when calling the answer raised :class:`Wrong`
        (it raised an exception, returned None, …); ``None`` keeps ``exc``'s own message.
    what : callable, optional
        ``what(case)`` names the call in feedback, e.g. ``"mix_one(w, values) for the 2-D
        example,"``; without ``failed``, a failed call then reads ``"<what> failed. <reason>"``.
    call : callable, optional
        How the answer is called: ``call(answer, *arguments)`` returns ``(got, messages,
        *extra)`` and the judge receives the extras after ``messages`` (e.g. the bytes a call
        allocated). :func:`call_watching` by default.
    with_answer : bool, optional
        Pass the answer itself to the judge as its first argument, ``judge(answer, got, case,
        messages)``, for a diagnosis that tries the answer on other inputs.
    measures_memory : bool, optional
        The check judges the memory each call allocates (its ``call`` reports it). Grading
        then also counts what the answer cells allocate and keep, from the first answer cell
        on (:func:`attnlab.grading.worker.student_code_begins`); that tracing slows every
        later cell of the notebook many times over, so only such a check sets it.
    fresh : callable, optional
        ``fresh(rng)`` returns more cases in the same form as ``cases()``, drawn from the
        numpy generator ``rng`` within the task's contract (random shapes and values, and the
        edge cases the exercise is about). They are tried after ``cases()``. In a learner's
        check ``rng`` has a fixed seed, so the check is the same every time; under grading
        the seed is mixed with the grading salt (:func:`~attnlab.exercises.rules.grading_mode.
        grading_seed`), so the graded inputs are drawn when the notebook is graded and no
        table of the shipped cases' outputs can pass.

    Examples
    --------
    >>> from attnlab.exercises.kit.judging import expect_close
    >>> def judge(got, case, messages):
    ...     expect_close(got, case[1] ** 2, f"square({case[1]})")
    >>> squares = Cases(lambda: [("two", 2.0), ("minus three", -3.0)], judge)
    >>> squares(lambda x: x * x) is None
    True
    >>> try:
    ...     squares(lambda x: 2 * x)
    ... except Wrong as exc:
    ...     print(exc)
    square(-3.0) should be 9, but yours gave -6.
    """

    cases: object
    judge: object
    inputs: object = _after_description
    failed: object = None
    what: object = None
    call: object = None
    with_answer: bool = False
    measures_memory: bool = False
    fresh: object = None

    def drawn(self) -> list:
        """The cases a check tries, in order: ``cases()``, then ``fresh(rng)`` (see above);
        under grading, then one to three of those again (:func:`again`)."""
        with salted_seeds():
            cases = list(self.cases())
            if self.fresh is not None:
                cases += list(self.fresh(np.random.default_rng(fresh_seed(self.fresh))))
        return cases + again(cases, grading_salt())

    def __call__(self, answer) -> None:
        call_answer = self.call or call_watching
        for case in self.drawn():
            arguments = [a.copy() if isinstance(a, np.ndarray) else a for a in self.inputs(case)]
            try:
                got, messages, *extra = call_answer(answer, *arguments)
            except Wrong as exc:
                message = self._failed_message(exc, case)
                if message is None:
                    raise
                raise Wrong(message) from None
            judged = (
                (answer, got, case, messages, *extra)
                if self.with_answer
                else (got, case, messages, *extra)
            )
            self.judge(*judged)

    def _failed_message(self, exc: Wrong, case) -> str | None:
        """The message for a call that failed, or None to keep ``exc`` as it is."""
        if self.failed is not None:
            return self.failed(exc, case)
        if self.what is not None:
            return f"{self.what(case)} failed. {exc}"
        return None
