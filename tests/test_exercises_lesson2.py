"""Lesson 2's checks: each rejects known-wrong answers with a useful reason, accepts right ones."""

from __future__ import annotations

import math

import numpy as np
import pytest
import worked_answers as W
from answer_tables import Answers, accept_reject, judged

import attnlab
from attnlab.exercises import Outcome
from attnlab.exercises import lesson2 as ex


# ------------------------------------------------------------------- 2.1 the variance
def variance_loop(q, k):
    dots = [sum(a * b for a, b in zip(qi, ki, strict=True)) for qi, ki in zip(q, k, strict=True)]
    mean = sum(dots) / len(dots)
    return sum((d - mean) ** 2 for d in dots) / len(dots)


VARIANCE_RIGHT = {
    "np.var of row sums": lambda q, k: np.var(np.sum(q * k, axis=1)),
    "einsum": lambda q, k: np.einsum("nd,nd->n", q, k).var(),
    "sample variance ddof=1": lambda q, k: np.var((q * k).sum(1), ddof=1),
    "pure python": variance_loop,
    "diagonal of q @ k.T": lambda q, k: float(np.diag(q @ k.T).var()),
    "in float32": lambda q, k: np.var(np.sum(q.astype(np.float32) * k.astype(np.float32), 1)),
}

VARIANCE_WRONG = {
    "all pairs": (lambda q, k: np.var(q @ k.T), "q @ k.T"),
    "single products": (lambda q, k: np.var(q * k), "single products"),
    "wrong axis": (lambda q, k: np.var(np.sum(q * k, axis=0)), "axis 0"),
    "std": (lambda q, k: np.std(np.sum(q * k, axis=1)), "standard deviation"),
    "mean": (lambda q, k: np.mean(np.sum(q * k, axis=1)), "mean of the dot products"),
    "scaled": (lambda q, k: np.var(np.sum(q * k, axis=1) / math.sqrt(q.shape[1])), "√d_k"),
    "mean of squares": (lambda q, k: np.mean(np.sum(q * k, axis=1) ** 2), "subtract the mean"),
    # float32 answers get a looser tolerance; this mistake must still stand out.
    "mean of squares in float32": (
        lambda q, k: np.mean(np.sum(q.astype(np.float32) * k.astype(np.float32), 1) ** 2),
        "subtract the mean",
    ),
    "returns d_k": (lambda q, k: q.shape[1], "d_k itself"),
    "theory from measured variances": (
        lambda q, k: q.var() * k.var() * q.shape[1],
        "theory's prediction",
    ),
    "sum of coordinate variances": (
        lambda q, k: np.var(q * k, axis=0).sum(),
        "variances of the d_k coordinates",
    ),
    "returns the dot products": (lambda q, k: np.sum(q * k, axis=1), "single number"),
    "forgot return": (lambda q, k: None, "return"),
}


def _mutating_variance(q, k):
    v = np.var(np.sum(q * k, axis=1))
    q[0, 0] = 99.0
    return v


VARIANCE_WRONG["mutates its input"] = (_mutating_variance, "changed its input")


def test_variance_cases_are_close_to_theory():
    """The checker's samples show what the lesson claims: Var(q·k) ≈ Var(q_i) d_k."""
    for q, k in ex.variance_cases():
        expected = q.var() * k.var() * q.shape[1]
        assert W.reference_dot_product_variance(q, k) == pytest.approx(expected, rel=0.25)


# ------------------------------------------------------------------- 2.2 the scale
SCALE_RIGHT = {
    "1 / sqrt": lambda d_k: 1 / math.sqrt(d_k),
    "power": lambda d_k: d_k**-0.5,
    "numpy": lambda d_k: np.float32(1) / np.sqrt(np.float64(d_k)),
    "sqrt of reciprocal": lambda d_k: math.sqrt(1 / d_k),
}

SCALE_WRONG = {
    "1 / d_k": (lambda d_k: 1 / d_k, "divided by d_k instead of √d_k"),
    "sqrt(d_k)": (lambda d_k: math.sqrt(d_k), "reciprocal"),
    "cube root": (lambda d_k: d_k ** (-1 / 3), "still grows"),
    "two thirds": (lambda d_k: d_k ** (-2 / 3), "shrinks towards 0"),
    "d_k": (lambda d_k: d_k, "smaller"),
    "no scaling": (lambda d_k: 1, "unscaled"),
    "1 / d_k²": (lambda d_k: d_k**-2, "d_k²"),
    "array": (lambda d_k: np.full(2, d_k**-0.5), "single number"),
    "string": (lambda d_k: "1/sqrt(d_k)", "number"),
    "natural log": (lambda d_k: 1 / math.log(d_k + 1), "c²·d_k"),
    # The variance is right (c² d_k = 1), so the reason must not say "would be 1, not 1".
    "negative root": (lambda d_k: -1 / math.sqrt(d_k), "the negative root"),
}


def test_negative_root_reason_does_not_contradict_itself():
    message = judged(ex.unit_variance_scale, lambda d_k: -(d_k**-0.5)).message
    assert "not 1" not in message and "point *away*" in message


def test_reference_scale_is_attnlab_default():
    for d_k in ex.SCALE_CASES:
        q = np.eye(d_k)[:1]
        assert ex.attnlab_default_scale(d_k) == pytest.approx(1 / math.sqrt(d_k))
        assert attnlab.attention_scores(q, q)[0, 0] == pytest.approx(d_k**-0.5)


# ------------------------------------------------------------------- 2.3 collapsed rows
def collapsed_loop(scores, threshold):
    found = []
    for i, row in enumerate(scores):
        shifted = [math.exp(x - max(row)) for x in row]
        if max(shifted) / sum(shifted) > threshold:
            found.append(i)
    return found


COLLAPSE_RIGHT = {
    "flatnonzero": lambda s, t: np.flatnonzero(attnlab.softmax(s).max(axis=-1) > t),
    "pure python loop": collapsed_loop,
    "where, as tuple": lambda s, t: tuple(np.where(attnlab.softmax(s, axis=1).max(1) > t)[0]),
    "float indices": lambda s, t: [
        float(i) for i in np.flatnonzero(attnlab.softmax(s).max(-1) > t)
    ],
    "reversed order": lambda s, t: np.flatnonzero(attnlab.softmax(s).max(-1) > t)[::-1],
}


def _no_max_shift(s, t):
    e = np.exp(s)
    return np.flatnonzero((e / e.sum(axis=-1, keepdims=True)).max(-1) > t)


COLLAPSE_WRONG = {
    "threshold on scores": (lambda s, t: np.flatnonzero(s.max(axis=-1) > t), "scores themselves"),
    "softmax over columns": (
        lambda s, t: np.flatnonzero(attnlab.softmax(s, axis=0).max(-1) > t),
        "axis=-1",
    ),
    "plain normalisation": (
        lambda s, t: np.flatnonzero((s / s.sum(-1, keepdims=True)).max(-1) > t),
        "divided the scores by their sum",
    ),
    "flipped comparison": (
        lambda s, t: np.flatnonzero(attnlab.softmax(s).max(-1) < t),
        "did *not* collapse",
    ),
    "boolean mask": (lambda s, t: attnlab.softmax(s).max(-1) > t, "np.flatnonzero"),
    "max weights instead": (lambda s, t: attnlab.softmax(s).max(-1), "row indices"),
    "guess the lesson rows": (lambda s, t: [1, 2], "should be"),
    "nothing collapses": (lambda s, t: [], "should be [1, 2]"),
    "everything collapses": (lambda s, t: list(range(len(s))), "largest softmax weight"),
    "off by one": (lambda s, t: np.flatnonzero(attnlab.softmax(s).max(-1) > t) + 1, "should be"),
    "np.where's tuple": (
        lambda s, t: np.where(attnlab.softmax(s).max(-1) > t),
        "np.where(mask)[0]",
    ),
    "one softmax for the whole matrix": (
        lambda s, t: np.flatnonzero((np.exp(s) / np.exp(s).sum()).max(-1) > t),
        "whole matrix",
    ),
}


def test_collapse_reason_is_not_blamed_on_a_coincidence():
    """Comparing the *smallest* weight gives [] on the lesson's rows, as plain normalisation
    does there; a reason is named only when a mistake matches on every case."""
    feedback = ex.collapsed_rows.check(lambda s, t: np.flatnonzero(attnlab.softmax(s).min(-1) > t))
    assert feedback.outcome is Outcome.WRONG
    assert "should be [1, 2], but yours gave []" in feedback.message
    assert "It looks like" not in feedback.message


def test_collapse_without_max_shift_still_passes():
    """The naive softmax is fine here (scores stay below 709); stability is lesson 3's topic."""
    assert ex.collapsed_rows.check(_no_max_shift)


def test_collapse_cases_have_varied_answers():
    """Guessing cannot pass: answers differ between cases, and none is empty or every row."""
    answers = [tuple(W.reference_collapsed_rows(s, t)) for s, t in ex.collapse_cases()]
    assert len(set(answers)) == len(answers)
    for (scores, _), answer in zip(ex.collapse_cases(), answers, strict=True):
        assert 0 < len(answer) < len(scores)


# ------------------------------------------------------------------ every table above
test_accepts, test_rejects = accept_reject(
    Answers(ex.dot_product_variance, VARIANCE_RIGHT, VARIANCE_WRONG),
    Answers(ex.unit_variance_scale, SCALE_RIGHT, SCALE_WRONG),
    Answers(ex.collapsed_rows, COLLAPSE_RIGHT, COLLAPSE_WRONG),
)
