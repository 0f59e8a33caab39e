"""The exercise kit in attnlab.exercises.kit: the one checking loop (Cases) and its helpers."""

from __future__ import annotations

import numpy as np
import pytest
from cell_functions import cell_function

from attnlab.exercises.kit.calling import call_watching
from attnlab.exercises.kit.cases import Cases
from attnlab.exercises.kit.exercise import Exercise
from attnlab.exercises.kit.judging import (
    as_number,
    as_numbers,
    expect_close,
    quietly,
    recognised,
    same_values,
)
from attnlab.exercises.kit.outcomes import NotAttempted, Outcome, Wrong

CASES = [("a row", np.array([1.0, 2.0])), ("a matrix", np.array([[0.0, 3.0], [1.0, 1.0]]))]


def judge_double(got, case, messages):
    expect_close(got, 2 * case[1], f"double({case[0]})")


def test_every_case_is_tried_in_order_until_one_fails():
    seen = []

    def answer(x):
        seen.append(x.shape)
        return 2 * x if x.ndim == 1 else x

    with pytest.raises(Wrong, match=r"double\(a matrix\) should be"):
        Cases(lambda: CASES, judge_double)(answer)
    assert seen == [(2,), (2, 2)]
    assert Cases(lambda: CASES, judge_double)(lambda x: x + x) is None


def test_each_call_gets_fresh_copies_so_a_mutating_answer_is_reported():
    cases = CASES[:1]
    original = cases[0][1].copy()

    def mutating(x):
        x *= 2
        return x

    with pytest.raises(Wrong, match="changed its input"):
        Cases(lambda: cases, judge_double)(mutating)
    np.testing.assert_array_equal(cases[0][1], original)  # the case itself is untouched


def test_a_failed_call_keeps_its_own_reason_unless_what_or_failed_rewrites_it():
    def broken(x):
        raise ValueError("no")

    with pytest.raises(Wrong) as plain:
        Cases(lambda: CASES, judge_double)(broken)
    assert str(plain.value).startswith("Calling your function with")
    assert isinstance(plain.value.__cause__, ValueError)  # the original Wrong, not a copy

    with pytest.raises(Wrong) as named:
        Cases(lambda: CASES, judge_double, what=lambda case: f"double(x) for {case[0]},")(broken)
    assert str(named.value).startswith("double(x) for a row, failed. Calling your function")

    with pytest.raises(Wrong, match="^custom: a row$"):
        Cases(lambda: CASES, judge_double, failed=lambda exc, case: f"custom: {case[0]}")(broken)

    keep = Cases(lambda: CASES, judge_double, what=str, failed=lambda exc, case: None)
    with pytest.raises(Wrong, match="^Calling your function"):
        keep(broken)


def test_a_stub_is_not_attempted_not_wrong():
    def stub(x):
        raise NotImplementedError

    with pytest.raises(NotAttempted):
        Cases(lambda: CASES, judge_double)(stub)


def test_inputs_call_and_with_answer_hooks():
    cases = [{"n": 3}, {"n": 5}]
    received = []

    def judge(answer, got, case, messages, extra):
        received.append((answer(1), got, case["n"], messages, extra))

    def counting_call(answer, *args):
        got, messages = call_watching(answer, *args)
        return got, messages, "extra"

    def square(n):
        return n * n

    Cases(
        lambda: cases, judge, inputs=lambda case: (case["n"],), call=counting_call, with_answer=True
    )(square)
    assert received == [(1, 9, 3, [], "extra"), (1, 25, 5, [], "extra")]


def test_numpy_warnings_reach_the_judge():
    got_messages = []
    Cases(
        lambda: [("big", np.array([1000.0]))],
        lambda got, case, messages: got_messages.extend(messages),
    )(np.exp)
    assert got_messages == ["overflow encountered in exp"]


def test_an_exercise_built_from_cases_gives_the_three_outcomes():
    exercise = Exercise("Doubling", Cases(lambda: CASES, judge_double), hints=["Add x to x."])
    assert exercise.check(None).outcome is Outcome.NOT_ATTEMPTED
    wrong = exercise.check(lambda x: x * x)
    assert wrong.outcome is Outcome.WRONG and "double(a row) should be [2, 4]" in wrong.message
    assert exercise.check(lambda x: np.add(x, x).tolist()).outcome is Outcome.CORRECT  # a list


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (2, 2.0),
        (np.float32(0.5), 0.5),
        (np.array(-1.5), -1.5),
        (float("nan"), "nan"),
        ([1.0], None),
        (np.array([1.0, 2.0]), None),
        ("1", None),
        (True, None),
        (np.bool_(False), None),
        (None, None),
        (1 + 2j, None),
    ],
)
def test_as_number(value, expected):
    got = as_number(value)
    if expected == "nan":
        assert got is not None and np.isnan(got)
    else:
        assert got == expected


def test_as_numbers_names_the_shape_it_wanted():
    np.testing.assert_array_equal(as_numbers([[1, 2]], "out", (1, 2)), [[1.0, 2.0]])
    with pytest.raises(Wrong, match=r"out should be an array of numbers of shape \(2,\); got"):
        as_numbers(["a", "b"], "out", (2,))


def test_same_values_and_recognised_respect_shape_tolerance_and_nan():
    assert same_values([1.0, np.nan], [1.0, np.nan])
    assert not same_values([1.0, 2.0], [[1.0, 2.0]])
    assert not same_values([1.0], [1.001])
    assert same_values([1.0], [1.001], rtol=1e-2)
    mistakes = [(None, "impossible"), (np.array([1.0, 2.0]), "first"), ([1.0, 2.0], "second")]
    assert recognised(np.array([1.0, 2.0]), mistakes) == "first"
    assert recognised(np.array([2.0, 1.0]), mistakes) == ""
    assert recognised("not numbers", mistakes) == ""


def test_quietly_silences_numpy_warnings():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert quietly(np.log, np.array([0.0]))[0] == -np.inf


# ------------------------------------------- what grading refuses is said in the learner's check


STABLE = (
    "def stable_softmax(scores):\n"
    "    m = scores.max(axis=-1, keepdims=True)\n"
    "    e = np.exp(scores - m)\n"
    "    return e / e.sum(axis=-1, keepdims=True)\n"
)


@pytest.mark.parametrize(
    "head, accepted",
    [
        ("import copy\n", True),
        ("from typing import Tuple\n", True),
        ("import dataclasses\nimport functools\n", True),
        ("import collections\nimport fractions\n", True),
        ("import os\n", False),
        ("import operator\n", False),
        ("np.linalg = np.linalg\n", False),  # rebinding a module's name (to itself here)
    ],
)
def test_the_learners_check_refuses_exactly_what_grading_refuses(head, accepted):
    from attnlab.exercises import lesson3
    from attnlab.exercises.rules.lint import problems

    code = head + STABLE
    function = cell_function(code, "stable_softmax", number=len(head))
    feedback = lesson3.stable_softmax.check(function)
    assert (problems(code, forbidden=lesson3.stable_softmax.forbidden) == []) is accepted
    assert bool(feedback) is accepted, feedback
    if not accepted:
        assert "would not be run for grading" in feedback.message, feedback


def test_the_learners_check_applies_the_graders_call_limit(monkeypatch):
    import time

    from attnlab.exercises.kit import calling

    monkeypatch.setattr(calling, "CALL_LIMIT", 0.05)

    def slow_double(x):
        time.sleep(0.1)
        return 2 * x

    exercise = Exercise("Doubles", Cases(lambda: CASES, judge_double), hints=[])
    feedback = exercise.check(slow_double)
    assert feedback.outcome is Outcome.WRONG and "grading stops any call after" in feedback.message


def test_the_learners_check_stops_a_call_at_the_graders_limit(monkeypatch):
    """A slow answer is stopped at the limit grading uses (not only judged after it ends), and
    the feedback says why; ``except Exception`` in the answer does not swallow the stop."""
    import time

    from attnlab.exercises.kit import calling

    monkeypatch.setattr(calling, "CALL_LIMIT", 0.2)

    def endless_double(x):
        while True:
            try:
                time.sleep(0.05)
            except Exception:  # noqa: BLE001, S112 - the attempt to keep running
                continue

    exercise = Exercise("Doubles", Cases(lambda: CASES, judge_double), hints=[])
    began = time.monotonic()
    feedback = exercise.check(endless_double)
    took = time.monotonic() - began
    assert feedback.outcome is Outcome.WRONG, feedback
    assert "still running after 0.2 s" in feedback.message, feedback.message
    assert "grading stops any call after 0.2 s" in feedback.message, feedback.message
    assert took < 5, took
    import signal

    assert signal.getitimer(signal.ITIMER_REAL)[0] == 0  # the timer is put back
    assert signal.getsignal(signal.SIGALRM) in (signal.SIG_DFL, None)


def test_a_shorter_limit_stops_the_call_there_in_the_learners_check():
    """``call_watching(..., limit=)``: a check that holds a call to less than the grader's
    limit stops it at that limit (not at CALL_LIMIT) and says so with :class:`OverTimeLimit`."""
    import time

    from attnlab.exercises.kit.calling import CALL_LIMIT, OverTimeLimit

    def endless(x):
        while True:
            time.sleep(0.02)

    began = time.monotonic()
    with pytest.raises(OverTimeLimit) as raised:
        call_watching(endless, np.ones(2), limit=0.2)
    took = time.monotonic() - began
    assert raised.value.limit == 0.2 and "longer than 0.2 s" in str(raised.value)
    assert 0.2 <= took < CALL_LIMIT / 4, took
    fast, _ = call_watching(lambda x: 2 * x, np.ones(2), limit=0.5)
    assert fast.tolist() == [2.0, 2.0]


class _Elsewhere:
    """A function timed (and stopped) elsewhere, as grading's RemoteFunction is."""

    timed_elsewhere = True

    def __init__(self, seconds, raises=None):
        self.seconds, self.raises = seconds, raises

    def __call__(self, x):
        import time

        time.sleep(self.seconds)
        if self.raises is not None:
            raise self.raises
        return 2 * x


@pytest.mark.parametrize(
    ("function", "over"),
    [
        (_Elsewhere(0.6), True),  # returned, but after the limit
        (_Elsewhere(0.6, TimeoutError("it was still running after 20 s")), True),  # stopped
        (_Elsewhere(0.0, TimeoutError("the answer's own")), False),  # raised at once: its error
        (_Elsewhere(0.0), False),
    ],
    ids=["slow", "stopped-by-grading", "its-own-timeout-error", "fast"],
)
def test_a_shorter_limit_judges_a_call_timed_elsewhere_by_its_time(function, over):
    """In grading the call runs in the grading kernel (stopped at CALL_LIMIT there): the check
    refuses it by the time it took, with the same :class:`OverTimeLimit` as the learner's."""
    from attnlab.exercises.kit.calling import OverTimeLimit

    if over:
        with pytest.raises(OverTimeLimit):
            call_watching(function, np.ones(2), limit=0.5)
    elif function.raises is not None:
        with pytest.raises(Wrong, match="raised TimeoutError") as raised:
            call_watching(function, np.ones(2), limit=0.5)
        assert not isinstance(raised.value, OverTimeLimit)
    else:
        assert call_watching(function, np.ones(2), limit=0.5)[0].tolist() == [2.0, 2.0]


def test_grading_draws_other_cases_than_the_learners_check():
    from attnlab.exercises.rules.grading_mode import grading_seed

    drawn = []
    cases = Cases(lambda: [("random", np.random.default_rng(7).normal(size=3))], judge_double)
    record = lambda x: drawn.append(x.copy()) or 2 * x  # noqa: E731
    firsts = []  # each check's first call (a graded check calls again at the end)
    for salt in (None, None, 12345, 67890):
        firsts.append(len(drawn))
        with grading_seed(salt):
            cases(record)
    drawn = [drawn[i] for i in firsts]
    assert np.array_equal(drawn[0], drawn[1])  # the learner's check is deterministic
    assert not np.array_equal(drawn[0], drawn[2]) and not np.array_equal(drawn[2], drawn[3])


def test_fresh_cases_come_after_the_shipped_ones_and_are_drawn_anew_when_graded():
    """``Cases(fresh=...)``: the learner's check draws them from a fixed seed, each grading
    from its salt, after the shipped cases; a table of the learner's inputs fails grading."""
    from attnlab.exercises.kit.cases import fresh_seed
    from attnlab.exercises.rules.grading_mode import grading_seed

    def fresh(rng):
        return [("drawn", np.round(rng.normal(size=3), 2))]

    cases = Cases(lambda: [("shipped", np.array([1.0, 2.0]))], judge_double, fresh=fresh)
    learner = cases.drawn()
    assert [c[0] for c in learner] == ["shipped", "drawn"]
    assert np.array_equal(learner[1][1], cases.drawn()[1][1])
    assert fresh_seed(fresh) == fresh_seed(fresh)  # no address in the seed
    with grading_seed(12345):
        graded = cases.drawn()
    with grading_seed(67890):
        other = cases.drawn()
    assert np.array_equal(graded[0][1], learner[0][1])  # the shipped case stays
    assert not np.array_equal(graded[1][1], learner[1][1])
    assert not np.array_equal(graded[1][1], other[1][1])
    table = {tuple(c[1]): 2 * c[1] for c in learner}
    looked_up = lambda x: table.get(tuple(x), x)  # noqa: E731
    cases(looked_up)  # passes the learner's check
    with grading_seed(12345), pytest.raises(Wrong):
        cases(looked_up)


def test_a_graded_check_makes_a_number_of_calls_no_answer_can_count_on():
    """A red team's 11.2 was right for the six calls the check was known to make and returned
    zeros from the seventh: under grading, one to three cases come back at the end, their
    number drawn from the salt, so an answer that counts its calls is caught by some grading."""
    from attnlab.exercises.kit.cases import again
    from attnlab.exercises.rules.grading_mode import grading_seed

    cases = Cases(lambda: [("a", 1.0), ("b", 2.0), ("c", 3.0)], judge_double)
    assert [c[0] for c in cases.drawn()] == ["a", "b", "c"]  # a learner's check: each once
    counts = set()
    for salt in range(40):
        with grading_seed(salt):
            drawn = cases.drawn()
        assert drawn[:3] == [("a", 1.0), ("b", 2.0), ("c", 3.0)] and 4 <= len(drawn) <= 6
        assert drawn[3:] == again(drawn[:3], salt)
        counts.add(len(drawn))
    assert counts == {4, 5, 6}

    def counting(limit):
        calls = []

        def answer(x):
            calls.append(x)
            return 2 * x if len(calls) <= limit else 0.0

        return answer

    caught = 0
    for salt in range(40):
        with grading_seed(salt):
            try:
                cases(counting(4))  # right for four calls, then wrong
            except Wrong:
                caught += 1
    assert 0 < caught < 40  # caught whenever the check makes a fifth call
    with grading_seed(7):
        cases(lambda x: 2 * x)  # right work is called again and still right


def test_no_unforbidden_course_helper_passes_any_exercise():
    """Every public course helper that, handed in as the answer (or the first item of what it
    returns), passes an exercise's check is forbidden in that exercise."""
    from attnlab.exercises import EXERCISES
    from attnlab.exercises.kit.passing_helpers import (
        _covered,
        _passes,
        _ways_to_hand_in,
        course_helpers,
    )

    passing = []
    for exercise in EXERCISES.values():
        forbidden = exercise.forbidden
        for name, helper in course_helpers().items():
            if _covered(name, helper, forbidden):
                continue
            if any(_passes(exercise.checker, way) for way in _ways_to_hand_in(helper)):
                passing.append(f"{exercise.name}: {name}")
    assert passing == []
