"""Lesson 2 — why divide by √d_k: the checked exercises.

* :data:`dot_product_variance` (2.1): measure the variance of paired dot products q_i · k_i.
* :data:`unit_variance_scale` (2.2): the factor that brings Var(q · k) back to 1.
* :data:`collapsed_rows` (2.3): which score rows make softmax put almost all weight on one key.

Reference answers come from attnlab's numerics: :func:`attnlab.attention_scores`
(with ``scale=1.0`` for raw dot products, and its default scale for 2.2) and
:func:`attnlab.softmax`.  Every input is drawn from a fixed seed, so each check
gives the same verdict every time.

Examples
--------
>>> dot_product_variance.check(None).outcome.name
'NOT_ATTEMPTED'
>>> unit_variance_scale.check(lambda d_k: 1 / d_k).outcome.name       # divided by d_k
'WRONG'
>>> collapsed_rows.check(None).outcome.name
'NOT_ATTEMPTED'
"""

from __future__ import annotations

import math

import numpy as np

import attnlab
from attnlab.examples import COLLAPSE_FACTORS, COLLAPSE_ROW, WIDE_D_K
from attnlab.exercises.kit.calling import call
from attnlab.exercises.kit.cases import Cases
from attnlab.exercises.kit.display import one_line, short
from attnlab.exercises.kit.exercise import Exercise
from attnlab.exercises.kit.judging import as_number, quietly
from attnlab.exercises.kit.mistakes import Mistake, named_mistake
from attnlab.exercises.kit.outcomes import NotAttempted, Wrong
from attnlab.exercises.kit.precision import judging_tolerance

__all__ = [
    "dot_product_variance",
    "unit_variance_scale",
    "collapsed_rows",
    "variance_cases",
    "collapse_cases",
]


def _one_number(value, what: str) -> float:
    """``value`` as one finite float (:func:`as_number`; a bool reads as 1 or 0), or
    :class:`Wrong` saying what came back instead."""
    try:
        shape = np.shape(value)
    except ValueError:  # a ragged list or tuple
        raise Wrong(f"{what} should be a single number; got {one_line(value)}.") from None
    if shape != ():
        raise Wrong(
            f"{what} should be a single number, but yours has shape {shape}: "
            f"{short(np.asarray(value))}."
        )
    number = float(value) if isinstance(value, (bool, np.bool_)) else as_number(value)
    if number is None:
        raise Wrong(f"{what} should be a number; got {value!r}.")
    if not math.isfinite(number):
        raise Wrong(f"{what} should be a finite number; got {number}.")
    return number


#: Numbers here are judged to the kit's float64 tolerance, with an absolute floor of 1e-12:
#: some right answers (a variance, a scale factor) are far below 1e-9.
_ATOL = 1e-12
_RTOL = judging_tolerance(None, atol=_ATOL)[0]


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=_RTOL, abs_tol=_ATOL)


# ------------------------------------------------------------- 2.1 dot-product variance
def paired_dot_products(q, k) -> np.ndarray:
    """``q[i] · k[i]`` for every row ``i``, by attnlab: the diagonal of the raw scores.

    Examples
    --------
    >>> paired_dot_products(np.array([[1.0, 2.0], [0.0, 1.0]]),
    ...                     np.array([[3.0, 1.0], [5.0, 2.0]])).tolist()
    [5.0, 2.0]
    """
    return np.diagonal(attnlab.attention_scores(q, k, scale=1.0)).copy()  # (n,)


def variance_cases() -> list[tuple[np.ndarray, np.ndarray]]:
    """(q, k) pairs the checker tries: unit-variance entries at d_k = 16, 256, 1, then q × 2.

    d_k = 16 comes first because at d_k = 1 several mistakes give the right number
    (with one coordinate, a product *is* the dot product).
    """
    rng = np.random.default_rng(2024)
    cases = [tuple(rng.standard_normal((2, 400, d_k))) for d_k in (16, 256, 1)]
    q, k = rng.standard_normal((2, 300, 32))
    return [*cases, (2.0 * q, k)]  # last: Var(q_i) = 4, so Var(q · k) is about 4 d_k


def variance_fresh(rng) -> list[tuple[np.ndarray, np.ndarray]]:
    """(q, k) drawn anew for every grading (``Cases(fresh=...)``): 200 to 500 pairs of
    unit-variance vectors at a d_k between 2 and 64, then q × 3 at another d_k."""
    cases = []
    for spread in (1.0, 3.0):
        n, d_k = int(rng.integers(200, 501)), int(rng.integers(2, 65))
        q, k = rng.standard_normal((2, n, d_k))  # (n, d_k) each
        cases.append((spread * q, k))
    return cases


_VARIANCE_MISTAKES = [
    Mistake(
        lambda q, k: np.var(q @ k.T),
        "It looks like you took the variance of q @ k.T, which pairs every "
        "row of q with every row of k. Pair row i with row i only: np.sum(q * k, axis=1).",
    ),
    Mistake(
        lambda q, k: np.var(q * k),
        "It looks like you took the variance of the single products q_d·k_d "
        "(each has variance about 1). Add each row's products up first: "
        "np.sum(q * k, axis=1), then take the variance of those n sums.",
    ),
    Mistake(
        lambda q, k: np.var(np.sum(q * k, axis=0)),
        "It looks like you summed over axis 0 (the samples) "
        "instead of axis 1 (the d_k coordinates of each vector).",
    ),
    Mistake(
        lambda q, k: np.std(paired_dot_products(q, k)),
        "That is the standard deviation (about √d_k); the variance is its square.",
    ),
    Mistake(
        lambda q, k: np.mean(paired_dot_products(q, k)),
        "That is the mean of the dot products (about 0); use np.var.",
    ),
    Mistake(
        lambda q, k: np.var(paired_dot_products(q, k) / math.sqrt(q.shape[1])),
        "That is the variance after dividing by √d_k; here "
        "we want the raw dot products, before any scaling.",
    ),
    Mistake(
        lambda q, k: np.mean(paired_dot_products(q, k) ** 2),
        "np.mean(dots**2) equals the variance only when the sample mean is "
        "exactly 0; subtract the mean first (np.var does that for you).",
    ),
    Mistake(
        lambda q, k: float(q.shape[1]),
        "You returned d_k itself. The exercise is to *measure* the variance from "
        "the samples q and k, and see that it comes out close to d_k.",
    ),
    Mistake(
        lambda q, k: q.var() * k.var() * q.shape[1],
        "That is the theory's prediction Var(q_i)·Var(k_i)·d_k "
        "filled in with measured variances. Measure the variance of the n dot products "
        "themselves: np.var(np.sum(q * k, axis=1)).",
    ),
    Mistake(
        lambda q, k: np.sum(np.var(q * k, axis=0)),
        "You added up the variances of the d_k coordinates "
        "(Step 2 of the derivation). Measure the variance of the dot products themselves: "
        "first the n sums np.sum(q * k, axis=1), then np.var of those.",
    ),
]


def _variance_rtol(result) -> float:
    """1e-6, or about 1e-4 for an answer computed in float32 (830 roundings: the sums of a few
    hundred products round, but every known mistake is off by far more)."""
    return judging_tolerance(result, atol=_ATOL, ulps=830)[0]


def _judge_variance(result, case, messages) -> None:
    """``result`` must be np.var of the paired dot products of ``case`` (ddof 0 or 1)."""
    q, k = case
    n, d_k = q.shape
    what = f"dot_product_variance(q, k) for q, k of shape {q.shape}"
    got = _one_number(result, what)
    dots = paired_dot_products(q, k)  # (n,)
    rtol = _variance_rtol(result)
    if any(
        math.isclose(got, v, rel_tol=rtol, abs_tol=_ATOL)
        for v in (np.var(dots), np.var(dots, ddof=1))
    ):
        return
    reason = named_mistake(got, _VARIANCE_MISTAKES, (q, k), _RTOL, _ATOL)
    raise Wrong(
        f"{what} (n = {n} pairs, d_k = {d_k}) should be {np.var(dots):.6g}, but yours gave "
        f"{got:.6g}. {reason}".rstrip()
    )


dot_product_variance = Exercise(
    "Exercise 2.1 (measure Var(q · k))",
    Cases(variance_cases, _judge_variance, inputs=tuple, fresh=variance_fresh),  # (q, k)
    hints=[
        "Row i of `q` goes with row i of `k`. First make one dot product per row — n numbers "
        "in all — then take the variance of those n numbers.",
        "`q * k` multiplies entry by entry (shape (n, d_k)); summing along axis 1 adds the "
        "d_k products of each row, which leaves n dot products, shape (n,).",
        "Two steps in one line: a row-wise dot product (`np.sum(..., axis=___)` of an "
        "element-wise product), then `np.var` of the n numbers you get.",
    ],
    id="2.1",
    attr="dot_product_variance",
    points=1,
)


# ------------------------------------------------------------- 2.2 the unit-variance scale
def attnlab_default_scale(d_k: int) -> float:
    """The factor :func:`attnlab.attention_scores` multiplies q·k by, read off a unit vector.

    Examples
    --------
    >>> attnlab_default_scale(4)
    0.5
    """
    e = np.zeros((1, d_k))  # (1, d_k) the first unit vector: e · e = 1
    e[0, 0] = 1.0
    return float(attnlab.attention_scores(e, e)[0, 0])


SCALE_CASES = (64, 2, 512, 3, 1)  # 64 first: every wrong power of d_k differs there


def scale_fresh(rng) -> list[int]:
    """d_k drawn anew for every grading (``Cases(fresh=...)``): one from 5 to 99, one from 100
    to 4096 (never a d_k where two powers of it agree)."""
    return [int(rng.integers(5, 100)), int(rng.integers(100, 4097))]


_SCALE_MISTAKES = [
    Mistake(
        lambda d: 1 / d,
        "It looks like you divided by d_k instead of √d_k: the variance would "
        "be d_k / d_k² = 1/d_k, shrinking towards 0 (over-correction).",
    ),
    Mistake(
        lambda d: math.sqrt(d),
        "That is √d_k, the standard deviation itself. Multiplying by it "
        "makes the variance d_k², even larger; you want its reciprocal.",
    ),
    Mistake(
        lambda d: d ** (-1 / 3),
        "That is 1/d_k^(1/3): the variance would be d_k^(1/3), which "
        "still grows with d_k (under-correction).",
    ),
    Mistake(
        lambda d: d ** (-2 / 3),
        "That is 1/d_k^(2/3): the variance would be d_k^(-1/3), which "
        "shrinks towards 0 (over-correction).",
    ),
    Mistake(
        lambda d: float(d),
        "That is d_k: the variance would be d_k³. Scaling should make the scores smaller.",
    ),
    Mistake(lambda d: 1.0, "That leaves the scores unscaled, so the variance stays d_k."),
    Mistake(lambda d: 1 / d**2, "That divides by d_k²; the variance would be 1/d_k³."),
]


def _judge_scale(result, d_k, messages) -> None:
    """``result`` must be the default scale of :func:`attnlab.attention_scores` at ``d_k``."""
    what = f"unit_variance_scale({d_k})"
    got = _one_number(result, what)
    expected = attnlab_default_scale(d_k)
    if _close(got, expected):
        return
    if _close(-got, expected):
        raise Wrong(
            f"{what} should be {expected:.6g}, but yours gave {got:.6g}, the negative "
            "root. c² · d_k = 1 is solved by ±1/√d_k, and both give variance 1, but a "
            "negative scale flips the sign of every score: each query would then attend "
            "most to the keys that point *away* from it. Take the positive root."
        )
    reason = named_mistake(got, _SCALE_MISTAKES, (d_k,), _RTOL, _ATOL)
    raise Wrong(
        f"{what} should be {expected:.6g}, but yours gave {got:.6g}: with your factor c the "
        f"variance of c·(q·k) would be c²·d_k = {got**2 * d_k:.4g}, not 1. {reason}".rstrip()
    )


unit_variance_scale = Exercise(
    "Exercise 2.2 (the factor that gives unit variance)",
    Cases(lambda: SCALE_CASES, _judge_scale, inputs=lambda d_k: (d_k,), fresh=scale_fresh),
    hints=[
        "Multiplying a random number by c multiplies its variance by c². "
        "Var(q·k) = d_k, so Var(c · q·k) = c² · d_k.",
        "Solve c² · d_k = 1 for c > 0.",
        "You want c > 0 with c² · d_k = 1. Take the square root of both sides and return c as a "
        "float (`math.sqrt` is imported for you).",
    ],
    id="2.2",
    attr="unit_variance_scale",
    points=1,
)


# ------------------------------------------------------------------ 2.3 collapsed rows
def _expected_collapsed_rows(scores, threshold) -> list[int]:
    """Indices of the rows whose largest softmax weight is above ``threshold``."""
    top = attnlab.softmax(scores, axis=-1).max(axis=-1)  # (n_rows,)
    return [int(i) for i in np.nonzero(top > threshold)[0]]


def collapse_cases() -> list[tuple[np.ndarray, float]]:
    """(scores, threshold) pairs the checker tries.

    First the lesson's rows: [2, 1, 1] × 1, 10, 100, then × 10 and × 100 divided by
    √512; then rows drawn from a fixed seed at several sizes, with negative scores.
    """
    rows = [COLLAPSE_ROW * c for c in COLLAPSE_FACTORS]
    rows += [COLLAPSE_ROW * c / math.sqrt(WIDE_D_K) for c in COLLAPSE_FACTORS[1:]]
    rng = np.random.default_rng(7)
    spread = rng.normal(size=(12, 6)) * np.array([0.5, 1, 2, 4, 8, 16] * 2)[:, None]  # (12, 6)
    return [(np.array(rows), 0.99), (spread, 0.9), (spread - 3.0, 0.5)]


def collapse_fresh(rng) -> list[tuple[np.ndarray, float]]:
    """(scores, threshold) drawn anew for every grading (``Cases(fresh=...)``): 4 to 10 rows
    of 3 to 8 scores on scales from 0.5 to 16, negative as well, with a threshold between
    two rows' largest weights (so some rows collapse and some do not)."""
    n_rows, n_k = int(rng.integers(4, 11)), int(rng.integers(3, 9))
    scales = rng.choice([0.5, 1.0, 2.0, 4.0, 8.0, 16.0], size=(n_rows, 1))
    scores = np.round(rng.normal(size=(n_rows, n_k)) * scales, 2) - 1.5  # (n_rows, n_k)
    largest = np.sort(attnlab.softmax(scores, axis=-1).max(axis=-1))  # (n_rows,)
    gaps = np.flatnonzero(np.diff(largest) > 1e-3)
    i = int(rng.choice(gaps)) if gaps.size else 0
    threshold = round(float(largest[i] + largest[i + 1]) / 2, 6)
    return [(scores, threshold)]


def _indices(value, what: str) -> list[int]:
    """The learner's answer as a sorted list of row indices, or :class:`Wrong`."""
    if isinstance(value, tuple) and len(value) == 1 and isinstance(value[0], np.ndarray):
        raise Wrong(
            f"{what} returned a tuple holding one array, {short(value[0])}: that is what "
            "np.where(mask) gives (one array per dimension). Return its first element, "
            "np.where(mask)[0], or use np.flatnonzero(mask)."
        )
    try:
        array = np.asarray(value)
    except (TypeError, ValueError):  # a ragged list or tuple
        raise Wrong(
            f"{what} should be a list of row indices (ints); got {one_line(value)}."
        ) from None
    if array.dtype == bool:
        raise Wrong(
            f"{what} returned True/False per row: {short(array)}. Return the row *numbers* "
            "instead, e.g. np.flatnonzero(mask)."
        )
    whole = array.dtype.kind in "iu" or (
        array.dtype.kind == "f" and bool(np.all(array == np.round(array)))
    )
    if array.ndim != 1 or not whole:
        raise Wrong(f"{what} should be a list of row indices (ints); got {short(array)}.")
    return sorted(int(i) for i in array)


def _collapse_mistakes():
    """(known mistake, what to say about it); each mistake maps (scores, threshold) to rows."""

    def plain(s):
        return quietly(lambda: s / s.sum(axis=-1, keepdims=True))  # plain normalisation

    def over_everything(s):
        return attnlab.softmax(s.reshape(-1)).reshape(s.shape)  # one softmax for the matrix

    return [
        (
            lambda s, t: np.flatnonzero(s.max(axis=-1) > t),
            "It looks like you compared the "
            "scores themselves with the threshold. Turn each row into softmax weights first.",
        ),
        (
            lambda s, t: np.flatnonzero(attnlab.softmax(s, axis=0).max(axis=-1) > t),
            "It looks like the softmax ran down the columns (axis=0). Each row is one query's "
            "distribution: use axis=-1.",
        ),
        (
            lambda s, t: np.flatnonzero(over_everything(s).max(axis=-1) > t),
            "It looks like one softmax ran over the whole matrix, so the weights of all rows "
            "together sum to 1. Each row is one query's distribution: use axis=-1.",
        ),
        (
            lambda s, t: np.flatnonzero(plain(s).max(axis=-1) > t),
            "It looks like you divided the scores by their sum instead of using softmax.",
        ),
        (
            lambda s, t: np.flatnonzero(attnlab.softmax(s, axis=-1).max(axis=-1) < t),
            "Those are the rows that did *not* collapse; flip the comparison.",
        ),
    ]


def _answers_on_every_case(answer, cases) -> list[list[int] | None]:
    """The learner's rows for every case (None where the answer fails there)."""
    answers = []
    for scores, threshold in cases:
        try:
            answers.append(_indices(quietly(call, answer, scores, threshold), "answer"))
        except (Wrong, NotAttempted):
            answers.append(None)
    return answers


def _judge_collapsed_rows(answer, result, case, messages) -> None:
    """``result`` must be the rows of ``case`` whose largest softmax weight exceeds the
    threshold.

    A known mistake is named only when it gives the learner's ``answer`` on *every* case,
    so a coincidence on one case never blames the wrong cause.
    """
    scores, threshold = case
    what = f"collapsed_rows(scores of shape {scores.shape}, threshold={threshold})"
    got = _indices(result, what)
    expected = _expected_collapsed_rows(scores, threshold)
    if got == expected:
        return
    largest = np.max(attnlab.softmax(scores, axis=-1), axis=-1)  # (n_rows,)
    cases = collapse_cases()
    answers = _answers_on_every_case(answer, cases)
    reason = next(
        (
            text
            for wrong, text in _collapse_mistakes()
            if answers == [sorted(int(i) for i in wrong(s, t)) for s, t in cases]
        ),
        "",
    )
    raise Wrong(
        f"{what} should be {expected}, but yours gave {got}. The largest softmax weight "
        f"of each row is {short(largest.round(4))}. {reason}".rstrip()
    )


collapsed_rows = Exercise(
    "Exercise 2.3 (which rows collapse?)",
    Cases(
        collapse_cases,
        _judge_collapsed_rows,
        inputs=tuple,
        with_answer=True,
        fresh=collapse_fresh,
    ),
    hints=[
        "A row has collapsed when softmax gives almost all of its weight to one key — so look "
        "at the largest *softmax weight* of each row, not at the scores.",
        "`attnlab.softmax(scores, axis=-1)` turns every row into weights; "
        "`weights.max(axis=-1)` is each row's largest weight, shape (n_rows,).",
        "Row-wise softmax (`axis=-1`), each row's largest weight, compare with `threshold`, and "
        "turn the True/False mask into row indices (`np.flatnonzero` does that last step).",
    ],
    id="2.3",
    attr="collapsed_rows",
    points=1,
)
