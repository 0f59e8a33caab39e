"""Lesson 3 exercises: softmax of a row, the stable softmax of a matrix, and temperature.

Each exercise is an :class:`~attnlab.exercises.kit.exercise.Exercise`; call
``softmax_row.check(my_function)`` in the notebook. The checkers compare with
:func:`attnlab.softmax` and recognise the usual mistakes (dividing by the sum
without ``exp``, normalising over the whole matrix, forgetting the max shift,
multiplying by ``T``). When no known formula matches, :func:`_diagnosis` names the
mistake from the answer's properties instead: what it sums to 1 over, negative
weights, weights that are a straight line in the scores (no ``exp``), or weights
proportional to ``exp(c·x)`` with the wrong normaliser or ``c``. numpy warnings
raised by the learner's code are caught and reported in the reason, never shown
as a wall of ``RuntimeWarning``.

Examples
--------
>>> softmax_row.check(None).outcome.name
'NOT_ATTEMPTED'
>>> stable_softmax.check(lambda x: np.exp(x) / np.exp(x).sum(-1, keepdims=True)).outcome.name
'WRONG'
>>> temperature.check(None).outcome.name
'NOT_ATTEMPTED'
>>> def no_exp(x):
...     z = x - x.min(axis=-1, keepdims=True)
...     return z / z.sum(axis=-1, keepdims=True)
>>> "never exponentiated" in stable_softmax.check(no_exp).message
True
"""

from __future__ import annotations

import numpy as np

import attnlab
from attnlab.examples import SCORE_ROW, cat_sat_down, please_study_man
from attnlab.exercises.kit.cases import Cases
from attnlab.exercises.kit.display import one_line, warned
from attnlab.exercises.kit.exercise import Exercise
from attnlab.exercises.kit.judging import quietly, same_values
from attnlab.exercises.kit.mistakes import Compared, Mistake
from attnlab.exercises.kit.precision import judging_tolerance
from attnlab.exercises.rules.forbidden import SOFTMAX_LIBRARY

__all__ = [
    "softmax_row",
    "stable_softmax",
    "temperature",
    "row_cases",
    "matrix_cases",
    "temperature_cases",
]


# ---------------------------------------------------------------- shared helpers
def _show(value) -> str:
    """A compact, one-line view of an array for feedback messages."""
    try:
        array = np.asarray(value)
    except (TypeError, ValueError):  # a ragged list or tuple
        return one_line(value)
    if array.dtype.kind not in "fiub":
        return repr(value)
    text = np.array2string(array, precision=4, separator=", ", threshold=20, suppress_small=True)
    return " ".join(text.split())


def _broadcast_failed(exc, case) -> str | None:
    """A broadcast error: a row max or row sum that lost its axis is the usual cause, so the
    reason says so (the ``failed`` of every exercise here)."""
    if "broadcast" not in str(exc):
        return None
    return (
        f"{exc} That usually means a row max or row sum lost its axis: "
        "use keepdims=True so it has shape (n, 1) and broadcasts along each row."
    )


_EXP_LIMIT = float(np.log(np.finfo(np.float64).max))  # exp overflows past this (≈ 709.78)


def _overflow_note(messages, largest) -> str:
    """Why the naive formula breaks on these scores."""
    return (
        f"Your code overflowed.{warned(messages)} The largest exponent here is {largest:g}, "
        f"but exp overflows to inf once its argument passes ln(largest float64) ≈ {_EXP_LIMIT:.2f} "
        "(and the sum of several exponentials overflows a little sooner): inf / inf is nan, "
        "and a finite exponential divided by an infinite sum is a silent 0. Subtract each "
        "row's maximum before exp — softmax does not "
        "change when you shift a whole row, and then every exponent is ≤ 0."
    )


def _naive(z):
    e = np.exp(z)
    return e / np.sum(e, axis=-1, keepdims=True)


def _tolerances(got, exponents) -> tuple[float, float]:
    """(rtol, atol) for comparing ``got`` with float64 softmax weights.

    A float64 (or list) answer must match to ``rtol = 1e-6``. A float32 or float16 answer is
    judged to its own precision: rounding the scores to it moves ``exp(x_i - max)`` by about
    ``eps · |x_i - max|`` relative, so the tolerance grows with the largest exponent.
    """
    spread = float(np.ptp(exponents)) if exponents is not None else 0.0
    return judging_tolerance(got, ulps=8 * (1 + spread), abs_ulps=8)


def _exponents(x, t=None) -> np.ndarray:
    """The numbers softmax exponentiates: the scores ``x``, or ``x / T``."""
    return np.asarray(x if t is None else x / t, dtype=float)


def _overflowed(values, expected, messages, *arguments) -> str:
    """The cause that outranks the known mistakes: an overflow, from the numpy warnings the
    learner's code raised or a result equal to the unshifted formula."""
    exponents = _exponents(*arguments)
    largest = float(np.max(exponents))
    if any("overflow" in message for message in messages):
        return _overflow_note(messages, largest)
    if largest > _EXP_LIMIT and same_values(values, quietly(_naive, exponents)):
        return _overflow_note(messages, largest)
    return ""


def _diagnosed(values, expected, messages, *arguments) -> str:
    """The cause when no known mistake matches: :func:`_diagnosis`, else numpy's warnings."""
    cause = _diagnosis(values, expected, _exponents(*arguments))
    return cause or warned(messages).lstrip()


def _softmax_judge(reference, what, mistakes, **options) -> Compared:
    """The judge of every exercise here: arrays shown with tiny values as 0 (softmax rows often
    hold 1e-261), judged to the answer's precision (:func:`_tolerances`), the likely cause
    named (:func:`_overflowed`, the known ``mistakes``, :func:`_diagnosed`)."""
    return Compared(
        reference,
        what,
        mistakes,
        tolerance=lambda got, *arguments: _tolerances(got, _exponents(*arguments)),
        before=_overflowed,
        after=_diagnosed,
        shown=_show,
        joiner=". ",
        plural=True,
        kind="an array of numbers",
        **options,
    )


def _fits_line(x, y, tol=1e-9) -> tuple[bool, float]:
    """Whether ``y == slope * x + intercept`` for one row (to rounding), and the slope."""
    if np.ptp(x) == 0:
        return bool(np.ptp(y) <= tol), 0.0
    slope, intercept = np.polyfit(x, y, 1)
    return bool(np.max(np.abs(slope * x + intercept - y)) <= tol * (1 + np.max(np.abs(y)))), slope


def _tied_but_different(z, rows) -> str:
    """The reason for equal, non-zero weights on different scores (clipped scores), or ''."""
    for i, (zr, vr) in enumerate(zip(z, rows, strict=True)):
        order = np.argsort(zr)
        for a, b in zip(order[:-1], order[1:], strict=True):
            if zr[a] != zr[b] and vr[a] > 1e-12 and np.isclose(vr[a], vr[b], rtol=1e-9, atol=0):
                return (
                    f"Scores that differ got the same weight (in row {i}, {zr[a]:g} and "
                    f"{zr[b]:g} both got {vr[a]:.4g}): it looks like you clipped the scores "
                    "before exp (np.clip or np.minimum). Clipping changes the scores, so the "
                    "weights change too. Subtract each row's maximum instead: the whole "
                    "row moves by the same amount, which leaves softmax unchanged."
                )
    return ""


def _diagnosis(values, expected, exponents) -> str:
    """Name a mistake from the *properties* of a wrong answer, whatever code produced it.

    ``values`` has the right shape and is finite but differs from ``expected``;
    ``exponents`` are the numbers softmax should exponentiate (``x`` or ``x / T``).
    Looks at, in order: a transposed result, what the answer sums to 1 over, negative
    weights, weights that are a straight line in the scores (no ``exp``), and weights
    proportional to ``exp(c x)`` row by row (wrong normaliser, or a base other than e).
    """
    if values.shape != exponents.shape:
        return ""
    rows = values.reshape(-1, values.shape[-1])  # (n_rows, n)
    z = exponents.reshape(rows.shape)  # (n_rows, n)
    if (
        values.ndim == 2
        and values.shape[0] == values.shape[1] > 1
        and np.allclose(values.T, expected, rtol=1e-6, atol=1e-9)
    ):
        return (
            "Your rows and columns are swapped: the weights for query i should be row i, "
            "not column i. Normalise along axis=-1 and do not transpose."
        )
    row_sums = rows.sum(axis=-1)  # (n_rows,)
    rows_sum_to_one = bool(np.allclose(row_sums, 1.0, rtol=1e-6, atol=1e-9))
    if not rows_sum_to_one and rows.shape[0] > 1 and np.isclose(values.sum(), 1.0):
        return (
            "Your weights sum to 1 over the whole matrix, not along each row: each sum "
            "needs axis=-1 and keepdims=True."
        )
    if not rows_sum_to_one and values.ndim == 2 and np.allclose(values.sum(axis=0), 1.0):
        return (
            "Your columns sum to 1, not your rows: every sum (and max) should run along "
            "the last axis, axis=-1, with keepdims=True."
        )
    clipped = _tied_but_different(z, rows)
    if clipped:
        return clipped
    if np.any(values < 0):
        return (
            "Some of your weights are negative. Softmax weights never are: exponentiate "
            "the scores before you divide (exp of any number is positive)."
        )
    # Only rows with three or more distinct scores say anything: through two points any
    # function is a straight line.
    telling = [(zr, vr) for zr, vr in zip(z, rows, strict=True) if np.unique(zr).size >= 3]
    lines = [_fits_line(zr, vr) for zr, vr in telling]
    if lines and all(fits for fits, _ in lines):
        return (
            "Your weights are a straight-line function of the scores — shifted and divided, "
            "but never exponentiated. Apply np.exp to the (shifted) scores, then divide by "
            "the sum of the exponentials."
        )
    if np.all(values > 0):
        logs = [_fits_line(zr, np.log(vr)) for zr, vr in telling]
        if logs and all(fits for fits, _ in logs):
            slopes = np.array([slope for _, slope in logs])
            if np.allclose(slopes, 1.0, rtol=1e-6):
                return (
                    f"Your weights are proportional to exp(x) within each row — good — but "
                    f"the rows sum to {_show(row_sums)}, not 1. Divide each row by the sum "
                    "of its own exponentials, computed from the same shifted scores: "
                    "e.sum(axis=-1, keepdims=True)."
                )
            if np.allclose(slopes, slopes[0], rtol=1e-6):
                return (
                    f"Your weights grow like exp({slopes[0]:.4g}·x) instead of exp(x): "
                    f"did you use another base (2**x grows like exp({np.log(2):.4g}·x)) or "
                    "rescale the scores? Use np.exp on the scores themselves."
                )
    return ""


# ---------------------------------------------------------------- the usual mistakes
def _sum_normalised(x):
    return x / np.sum(x, axis=-1, keepdims=True)


def _exp_only(x):
    return np.exp(x)


def _exp_over_max(x):
    e = np.exp(x)
    return e / np.max(e, axis=-1, keepdims=True)


def _exp_over_score_sum(x):
    return np.exp(x) / np.sum(x, axis=-1, keepdims=True)


def _whole_array(x):
    return attnlab.softmax(x.reshape(-1)).reshape(x.shape)


def _global_sum_normalised(x):
    return x / np.sum(x)


def _column_max_shift(x):
    e = np.exp(x - np.max(x, axis=0, keepdims=True))  # a different shift in every column
    return e / np.sum(e, axis=-1, keepdims=True)


def _global_max_shift(x):
    e = np.exp(x - np.max(x))
    return e / np.sum(e, axis=-1, keepdims=True)


def _no_keepdims(x):
    e = np.exp(x - np.max(x, axis=-1))  # broadcasts the row maxima along the wrong axis
    return e / np.sum(e, axis=-1)


def _max_without_keepdims(x):
    e = np.exp(x - np.max(x, axis=-1))  # broadcasts the row maxima along the wrong axis
    return e / np.sum(e, axis=-1, keepdims=True)


def _sum_without_keepdims(x):
    e = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1)  # the row sums broadcast along the wrong axis


_ROW_MISTAKES = [
    Mistake(
        _sum_normalised,
        lambda x: (
            "It looks like you divided the scores by their sum without exponentiating "
            "first: apply np.exp to the scores, then divide by the sum of the exponentials."
            + (
                " (Or you squared the scores instead of exponentiating them: with only 0s and "
                "1s here the two look the same.)"
                if np.array_equal(x**2, x)
                else ""
            )
        ),
    ),
    Mistake(_exp_only, "These are exp(x) but they do not sum to 1: divide by their sum."),
    Mistake(
        _exp_over_max, "You divided by the largest exponential; divide by the sum of all of them."
    ),
    Mistake(
        _exp_over_score_sum,
        "You divided exp(x) by the sum of the raw scores; divide by the sum of exp(x).",
    ),
    Mistake(
        lambda x: attnlab.softmax(-x),
        "Your weights favour the smallest score: use exp(x), not exp(-x).",
    ),
    Mistake(
        lambda x: 2.0**x / np.sum(2.0**x, axis=-1, keepdims=True),
        "You used 2**x where softmax uses e**x: a different base gives different "
        "weights (2**x is exp(x · ln 2), so the scores are shrunk by ln 2 ≈ 0.69). "
        "Use np.exp(x).",
    ),
    Mistake(
        lambda x: x**2 / np.sum(x**2, axis=-1, keepdims=True),
        "You squared the scores instead of exponentiating them: x**2 gives -2 and 2 the "
        "same weight and a score of 0 no weight at all. Softmax uses np.exp(x), which "
        "keeps the order of the scores.",
    ),
]


def _square_only(formula):
    """``formula`` where a square matrix broadcasts the mistake silently; None elsewhere."""
    return lambda x: formula(x) if x.shape[-1] == x.shape[-2] else None


_LOST_AXIS = (
    "Your row maxima or row sums lost their axis, so they were broadcast along the "
    "wrong one: use keepdims=True to keep them of shape (n, 1)."
)

_MATRIX_MISTAKES = [
    Mistake(
        _square_only(_sum_without_keepdims),
        "Your max kept its axis (keepdims=True), but your sum did not: "
        "e.sum(axis=-1) has shape (n,), and dividing by it lines the row sums up "
        "with the columns, so entry (i, j) is divided by row j's sum. Add "
        "keepdims=True to the sum as well.",
    ),
    Mistake(_square_only(_no_keepdims), _LOST_AXIS),
    Mistake(_square_only(_max_without_keepdims), _LOST_AXIS),
    *_ROW_MISTAKES,
    Mistake(
        _whole_array,
        "Your weights sum to 1 over the whole matrix, not along each row: reduce with "
        "axis=-1 and keepdims=True.",
    ),
    Mistake(
        lambda x: attnlab.softmax(x, axis=0),
        "Your columns sum to 1, not your rows: normalise along the last axis (axis=-1).",
    ),
    Mistake(
        _global_sum_normalised,
        "You divided by the sum of all scores, without exp and over the whole matrix.",
    ),
    Mistake(
        _column_max_shift,
        "You subtracted each column's maximum (axis=0). A shift cancels only when the "
        "whole row moves by the same amount: subtract each row's maximum, "
        "scores.max(axis=-1, keepdims=True).",
    ),
    Mistake(
        _global_max_shift,
        "You subtracted the largest score of the whole matrix; subtract each row's own "
        "maximum (axis=-1, keepdims=True). With one max for everything, a row far below it "
        "underflows to all zeros and 0 / 0 gives nan.",
    ),
]


# ---------------------------------------------------------------- 3.1 softmax of one row
def row_cases() -> list[tuple[str, np.ndarray]]:
    """(description, scores) pairs the checker of 3.1 tries: the please/study/man rows, then
    rows with negative scores, all-negative scores and a single score."""
    ex = please_study_man()
    the_row = attnlab.attention_scores(*_cat_qk())[0]  # (4,) has negative scores
    cases = [
        (f'the "{t}" row of the please/study/man scores', row)
        for t, row in zip(ex.tokens, ex.scores, strict=True)
    ]
    cases += [
        ("the row [1.0, 0.5, 2.5, -0.1]", SCORE_ROW),
        ('the "The" row of the cat-sat-down scaled scores', the_row),
        ("a row of all-negative scores", SCORE_ROW - 4.0),
        ("a row with a single score", np.array([0.7])),
    ]
    return cases


def row_fresh(rng) -> list[tuple[str, np.ndarray]]:
    """Rows drawn anew for every grading (``Cases(fresh=...)``): 2 to 8 scores between -5
    and 5, an all-negative row and a single score."""
    n = int(rng.integers(2, 9))
    return [
        (f"a row of {n} scores", np.round(rng.uniform(-5.0, 5.0, size=n), 2)),
        ("a row of all-negative scores", -np.round(rng.uniform(0.5, 6.0, size=n + 1), 2)),
        ("a row with a single score", np.round(rng.uniform(-5.0, 5.0, size=1), 2)),
    ]


def _cat_qk():
    ex = cat_sat_down()
    return ex.x @ ex.w_q, ex.x @ ex.w_k  # (4, d_k) each


_judge_softmax_row = _softmax_judge(
    attnlab.softmax,
    lambda what, x: f"For {what}, {_show(x)}, the weights",
    _ROW_MISTAKES,
    arguments=lambda case: case[1:],  # (description, scores)
)


#: Every library softmax (:data:`~attnlab.exercises.rules.forbidden.SOFTMAX_LIBRARY`) and the
#: lesson's own worked example: the exercises of this lesson are to write it.
FORBIDDEN = (*SOFTMAX_LIBRARY, "softmax_steps")

softmax_row = Exercise(
    "Exercise 3.1 (softmax of one row)",
    Cases(row_cases, _judge_softmax_row, failed=_broadcast_failed, fresh=row_fresh),
    hints=[
        "Two steps: make every score positive with the exponential, then divide by the total "
        "so the weights add up to 1.",
        "`np.exp(x)` exponentiates every entry; `.sum()` adds them up.",
        "Name the exponentials (`e = ...`), then return them divided by their total. Two lines; "
        "nothing else is needed for these scores.",
    ],
    forbidden=FORBIDDEN,
    id="3.1",
    attr="softmax_row",
    points=1,
)


# ---------------------------------------------------------------- 3.2 stable softmax of a matrix
def matrix_cases() -> list[tuple[str, np.ndarray]]:
    """(description, scores) pairs the checker of 3.2 tries: square and non-square score
    matrices, then scores large enough (× 1000, or rows on very different scales) that the
    formula without the max shift overflows."""
    ex = please_study_man()
    q, k = _cat_qk()
    return [
        ("the please/study/man scores", ex.scores),
        ("the cat-sat-down scaled scores", attnlab.attention_scores(q, k)),
        ("a 2×4 matrix (two rows, four keys)", np.stack([SCORE_ROW, 2 * SCORE_ROW])),
        ("the please/study/man scores × 1000", 1000 * ex.scores),
        ("rows on very different scales", np.array([[1000.0, 999.0, 998.0], [0.0, -1.0, -2.0]])),
    ]


def matrix_fresh(rng) -> list[tuple[str, np.ndarray]]:
    """Matrices drawn anew for every grading (``Cases(fresh=...)``): 2 to 5 rows of 2 to 6
    scores, the same × 1000 (the formula without the max shift overflows), and rows whose
    levels lie 800 or more apart (one maximum for the whole matrix underflows a row)."""
    n, m = int(rng.integers(2, 6)), int(rng.integers(2, 7))
    x = np.round(rng.normal(0.0, 2.0, size=(n, m)), 2)  # (n, m)
    signs = rng.permutation(np.resize([1.0, -1.0], n))[:, None]  # (n, 1) both signs
    levels = signs * rng.uniform(400.0, 900.0, size=(n, 1))  # two rows 800 or more apart
    return [
        (f"a {n}×{m} score matrix", x),
        (f"that {n}×{m} matrix × 1000", 1000 * x),
        ("rows hundreds apart", np.round(x + levels, 2)),
    ]


_judge_stable_softmax = _softmax_judge(
    lambda x: attnlab.softmax(x, axis=-1),
    lambda what, x: f"For {what}, {_show(x)}, the weights",
    _MATRIX_MISTAKES,
    arguments=lambda case: case[1:],  # (description, scores)
)


stable_softmax = Exercise(
    "Exercise 3.2 (stable softmax of a score matrix)",
    Cases(matrix_cases, _judge_stable_softmax, failed=_broadcast_failed, fresh=matrix_fresh),
    hints=[
        "Softmax does not change if you subtract the same number from every score in a row. "
        "Pick the number that makes the largest exponent exactly 0.",
        "Work row by row with `axis=-1`, and keep that axis with `keepdims=True` so a row "
        "maximum of shape (n, 1) broadcasts back over its row.",
        "Three steps, each along `axis=-1` with `keepdims=True`: the row maximum; the "
        "exponentials of the scores minus it; those exponentials divided by their row sum.",
    ],
    forbidden=FORBIDDEN,
    id="3.2",
    attr="stable_softmax",
    points=2,
)


# ---------------------------------------------------------------- 3.3 temperature
def temperature_cases() -> list[tuple[np.ndarray, float]]:
    """(scores, T) pairs the checker of 3.3 tries: one row at several temperatures, a T small
    enough to overflow the naive formula, then matrices (one row per query)."""
    return [
        (SCORE_ROW, 1.0),
        (SCORE_ROW, 0.5),
        (SCORE_ROW, 2.0),
        (SCORE_ROW, 5.0),
        (20 * SCORE_ROW, 0.05),  # x / T reaches 1000: the naive formula overflows
        # Matrices, one row per query: every max and sum must run along each row.
        (np.stack([SCORE_ROW, SCORE_ROW - 3.0, 2.0 * SCORE_ROW]), 0.5),
        (np.array([[50.0, 49.0, 48.0], [0.0, -1.0, -2.0]]), 0.05),  # x / T: 1000 apart
    ]


def temperature_fresh(rng) -> list[tuple[np.ndarray, float]]:
    """(scores, T) drawn anew for every grading (``Cases(fresh=...)``): a row at a T between
    0.3 and 4, a row at a T below 0.1 that takes x / T near 1000 (the naive formula
    overflows), and a matrix of 2 to 4 rows at such a T."""
    n, rows = int(rng.integers(2, 8)), int(rng.integers(2, 5))
    row = np.round(rng.uniform(-3.0, 3.0, size=n), 2)  # (n,)
    t = round(float(rng.uniform(0.02, 0.08)), 3)
    far = np.round(row / np.abs(row).max() * t * rng.uniform(800.0, 1200.0), 2)
    matrix = np.round(rng.uniform(-3.0, 3.0, size=(rows, n)), 2)  # (rows, n)
    matrix[0] *= 1200.0 * t / np.abs(matrix[0]).max()  # row 0 reaches x / T ≈ 1200
    return [
        (row, round(float(rng.uniform(0.3, 4.0)), 2)),
        (far, t),
        (np.round(matrix, 2), t),
    ]


def _of_x_over_t(mistake: Mistake) -> Mistake:
    """A mistake of 3.2 made on ``x / T``, where ``x`` is a matrix (one row per query)."""
    return Mistake(
        lambda x, t: mistake.output(x / t) if x.ndim == 2 else None,
        lambda x, t: mistake.why(x / t),
    )


def _temperature_what(x, t) -> str:
    kind = "x" if x.ndim == 1 else f"the {x.shape[0]}-row matrix x"
    return f"For {kind} = {_show(x)} and T = {t:g}, the weights"


_judge_temperature = _softmax_judge(
    lambda x, t: attnlab.softmax(x, temperature=t),
    _temperature_what,
    [
        *(_of_x_over_t(mistake) for mistake in _MATRIX_MISTAKES),
        Mistake(
            lambda x, t: attnlab.softmax(x * t),
            lambda x, t: (
                f"It looks like you multiplied the scores by T = {t:g}; divide by T "
                "instead (small T must sharpen the weights)."
            ),
        ),
        Mistake(
            lambda x, t: attnlab.softmax(x) / t,
            "You divided the softmax output by T: apply T to the scores before softmax.",
        ),
        Mistake(
            lambda x, t: attnlab.softmax(x) * t,
            "You multiplied the softmax output by T: apply T to the scores before softmax.",
        ),
        Mistake(
            lambda x, t: attnlab.softmax(x),
            lambda x, t: (
                f"These are the weights at T = 1; T = {t:g} was ignored. Use softmax(x / T)."
            ),
        ),
        Mistake(
            lambda x, t: _sum_normalised(x / t),
            "You divided x / T by its sum without exponentiating first.",
        ),
    ],
)


temperature = Exercise(
    "Exercise 3.3 (softmax with temperature)",
    Cases(
        temperature_cases,
        _judge_temperature,
        inputs=tuple,
        failed=_broadcast_failed,
        fresh=temperature_fresh,
    ),
    hints=[
        "Temperature rescales the scores before softmax: divide them by T. Small T makes the "
        "gaps between scores bigger, so the weights get sharper.",
        "At T = 0.05 the scores are multiplied by 20, so exp can overflow: shift by the max, "
        "as in exercise 3.2.",
        "Reuse exercise 3.2: compute `z = x / T` first, then run the stable softmax of 3.2 on "
        "`z` (row maximum subtracted before `np.exp`, divided by the row sum).",
    ],
    forbidden=FORBIDDEN,
    id="3.3",
    attr="temperature",
    answer="softmax_with_temperature",
    points=2,
    grade_id="check-softmax-temperature",
)
