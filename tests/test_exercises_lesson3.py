"""Lesson 3 checks: each rejects known-wrong answers with a helpful reason, accepts right ones."""

from __future__ import annotations

import math

import numpy as np
import pytest
import worked_answers as W
from answer_tables import Answers, accept_reject, judged

import attnlab
from attnlab.exercises import Outcome
from attnlab.exercises import lesson3 as L


# ---------------------------------------------------------------- 3.1 softmax of one row
def row_loop(x):
    exps = [math.exp(v) for v in x]
    total = sum(exps)
    return [e / total for e in exps]


def row_shifted(x):
    e = np.exp(x - x.max())
    return e / e.sum()


def np_softmax(x, axis=-1):
    """A stable softmax in numpy, for building wrong answers (the library's is forbidden)."""
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


ROW_CORRECT = [W.solution_softmax_row, row_loop, row_shifted]
ROW_WRONG = {
    "sum-normalised": (lambda x: x / x.sum(), "without exponentiating"),
    "exp only": (np.exp, "do not sum to 1"),
    "exp over max": (lambda x: np.exp(x) / np.exp(x).max(), "largest exponential"),
    "exp over score sum": (lambda x: np.exp(x) / x.sum(), "sum of the raw scores"),
    "base 2": (lambda x: 2**x / (2**x).sum(), "should be"),
    "negated": (lambda x: np.exp(-x) / np.exp(-x).sum(), "exp(-x)"),
    "calls attnlab.softmax": (attnlab.softmax, "asks you not to use"),
    "calls attnlab.naive_softmax": (attnlab.naive_softmax, "asks you not to use"),
    "min-shifted, no exp": (lambda x: (x - x.min()) / (x - x.min()).sum(), "exponentiat"),
}


# ---------------------------------------------------------------- 3.2 stable softmax of a matrix
def stable_via_logsumexp(scores):
    m = scores.max(axis=-1, keepdims=True)
    lse = m + np.log(np.exp(scores - m).sum(axis=-1, keepdims=True))
    return np.exp(scores - lse)


def stable_row_by_row(scores):
    out = np.empty_like(scores)
    for i, row in enumerate(scores):
        e = np.exp(row - row.max())
        out[i] = e / e.sum()
    return out


def clip_then_exp(bound):
    def clipped(scores):
        e = np.exp(np.clip(scores, -bound, bound))
        return e / e.sum(axis=-1, keepdims=True)

    clipped.__name__ = f"clipped_to_{bound:g}"
    return clipped


def naive(scores):
    e = np.exp(scores)
    return e / e.sum(axis=-1, keepdims=True)


def whole_array(scores):
    e = np.exp(scores - scores.max())
    return e / e.sum()


def global_max_shift(scores):
    e = np.exp(scores - scores.max())
    return e / e.sum(axis=-1, keepdims=True)


def no_keepdims(scores):
    e = np.exp(scores - scores.max(axis=-1))
    return e / e.sum(axis=-1)


def columns(scores):
    e = np.exp(scores - scores.max(axis=0, keepdims=True))
    return e / e.sum(axis=0, keepdims=True)


def row_shift_whole_sum(scores):
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return e / e.sum()  # forgot the axis of the sum only


def column_max_shift(scores):
    e = np.exp(scores - scores.max(axis=0, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def row_shift_column_sum(scores):
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return e / e.sum(axis=0, keepdims=True)


def shifted_numerator_only(scores):
    return np.exp(scores - scores.max(axis=-1, keepdims=True)) / np.exp(scores).sum(
        axis=-1, keepdims=True
    )


def min_shift_no_exp(scores):
    z = scores - scores.min(axis=-1, keepdims=True)
    return z / z.sum(axis=-1, keepdims=True)


def max_shift_no_exp(scores):
    z = scores - scores.max(axis=-1, keepdims=True)
    return z / z.sum(axis=-1, keepdims=True)


def base_two(scores):
    e = 2.0 ** (scores - scores.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def mean_shift(scores):
    e = np.exp(scores - scores.mean(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def naive_row_loop(scores):
    return np.array([np.exp(row) / np.exp(row).sum() for row in scores])


MATRIX_CORRECT = [
    W.solution_stable_softmax,
    stable_via_logsumexp,
    stable_row_by_row,
]
MATRIX_WRONG = {
    "calls attnlab.softmax": (attnlab.softmax, "asks you not to use"),
    "calls attnlab.online_softmax": (attnlab.online_softmax, "asks you not to use"),
    "naive": (naive, "overflow"),
    "whole array": (whole_array, "whole matrix"),
    "sum-normalised": (lambda s: s / s.sum(axis=-1, keepdims=True), "without exponentiating"),
    "global max shift": (global_max_shift, "each row's own"),
    "no keepdims": (no_keepdims, "keepdims=True"),
    "columns": (columns, "columns sum to 1"),
    "mutates input": (lambda s: np.exp(s - s.max(axis=-1, keepdims=True), out=s), "changed"),
    "row shift, whole-matrix sum": (row_shift_whole_sum, "whole matrix"),
    "column max shift": (column_max_shift, "each column's maximum"),
    "row shift, column sums": (row_shift_column_sum, "columns sum to 1"),
    "transposed": (lambda s: np_softmax(s).T, "swapped"),
    "shift in the numerator only": (shifted_numerator_only, "proportional to exp(x)"),
    "min-shifted, no exp": (min_shift_no_exp, "never exponentiated"),
    "max-shifted, no exp": (max_shift_no_exp, "never exponentiated"),
    "base 2": (base_two, "another base"),
    "mean shift": (mean_shift, "overflow"),
    "naive row by row": (naive_row_loop, "overflow"),
    # Clipping keeps exp finite but changes the scores: it was told "never exponentiated".
    "clipped to ±50 before exp": (clip_then_exp(50.0), "clipped the scores before exp"),
    "clipped to 700 before exp": (clip_then_exp(700.0), "clipped the scores before exp"),
}


def test_clipping_is_not_called_a_missing_exp():
    message = judged(L.stable_softmax, clip_then_exp(50.0)).message
    assert "never exponentiated" not in message


def test_naive_is_rejected_on_large_scores_with_the_overflow_named():
    message = judged(L.stable_softmax, naive).message
    assert "× 1000" in message and "overflow encountered in exp" in message
    assert f"{np.log(np.finfo(np.float64).max):.2f}" in message


def test_naive_passes_the_small_cases():
    """The naive formula is right on small scores, so only the large case can catch it."""
    for _, x in L.matrix_cases()[:3]:
        np.testing.assert_allclose(naive(x), attnlab.softmax(x))


def test_a_silenced_overflow_is_still_caught():
    def silenced(scores):
        with np.errstate(all="ignore"):
            return naive(scores)

    feedback = judged(L.stable_softmax, silenced)
    assert feedback.outcome is Outcome.WRONG and "overflowed" in feedback.message


# ---------------------------------------------------------------- 3.3 temperature
def temperature_logsoftmax(x, T):
    return np.exp(attnlab.log_softmax(x / T))


def temperature_shift_then_divide(x, T):
    e = np.exp((x - x.max(axis=-1, keepdims=True)) / T)
    return e / e.sum(axis=-1, keepdims=True)


def temperature_power_of_weights(x, T):
    w = np_softmax(x) ** (1 / T)  # e^(x/T) up to a constant, and never above 1
    return w / w.sum(axis=-1, keepdims=True)


def temperature_in_float32(x, T):
    z = np.asarray(x, dtype=np.float32) / np.float32(T)
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def whole_array_max_and_sum(x, T):
    z = x / T
    e = np.exp(z - z.max())
    return e / e.sum()


def whole_array_max(x, T):
    z = x / T
    e = np.exp(z - z.max())
    return e / e.sum(axis=-1, keepdims=True)


def whole_array_sum(x, T):
    z = x / T
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum()


TEMPERATURE_CORRECT = [
    temperature_in_float32,
    W.solution_softmax_with_temperature,
    temperature_power_of_weights,
    temperature_shift_then_divide,
]
TEMPERATURE_WRONG = {
    "attnlab's temperature": (
        lambda x, T: attnlab.softmax(x, temperature=T),
        "asks you not to use",
    ),
    "through log_softmax": (temperature_logsoftmax, "asks you not to use"),
    "multiplies by T": (lambda x, T: np_softmax(x * T), "multiplied the scores by T"),
    "divides after softmax": (lambda x, T: np_softmax(x) / T, "divided the softmax output"),
    "multiplies after softmax": (lambda x, T: np_softmax(x) * T, "multiplied the softmax"),
    "ignores T": (lambda x, T: np_softmax(x), "was ignored"),
    "no max shift": (lambda x, T: naive(x / T), "overflow"),
    "no exp": (lambda x, T: (x / T) / (x / T).sum(), "without exponentiating"),
    "min-shifted, no exp": (
        lambda x, T: (x - x.min()) / T / ((x - x.min()) / T).sum(),
        "never exponentiated",
    ),
    "row sums not 1": (lambda x, T: np.exp(x / T - (x / T).max()), "rows sum to"),
    # Right on one row; the matrix cases catch a max or a sum over the whole array.
    "whole-array max and sum": (whole_array_max_and_sum, "whole matrix"),
    "whole-array sum": (whole_array_sum, "whole matrix"),
    "whole-array max": (whole_array_max, "each row's own maximum"),
}


def test_missing_shift_fails_only_at_low_temperature():
    message = judged(L.temperature, TEMPERATURE_WRONG["no max shift"][0]).message
    assert "T = 0.05" in message


# ------------------------------------------------------------------ every table above
test_accepts, test_rejects = accept_reject(
    Answers(L.softmax_row, ROW_CORRECT, ROW_WRONG),
    Answers(L.stable_softmax, MATRIX_CORRECT, MATRIX_WRONG),
    Answers(L.temperature, TEMPERATURE_CORRECT, TEMPERATURE_WRONG),
)


@pytest.mark.parametrize("name", [n for n in ROW_WRONG if not n.startswith("calls attnlab")])
def test_softmax_row_feedback_names_the_input_it_failed_on(name):
    assert "please" in judged(L.softmax_row, ROW_WRONG[name][0]).message
