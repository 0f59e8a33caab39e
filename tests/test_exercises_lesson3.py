"""Lesson 3 checks: each rejects known-wrong answers with a helpful reason, accepts right ones."""

from __future__ import annotations

import math

import numpy as np
import pytest
import worked_answers as W
from answer_tables import Answers, accept_reject, judged
from cell_functions import cell_function

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
    "base 2": (lambda x: 2**x / np.sum(2**x), "You used 2**x where softmax uses e**x"),
    "base 2 in a loop": (
        lambda x: [2.0**v / sum(2.0**u for u in x) for v in x],
        "You used 2**x where softmax uses e**x",
    ),
    "squares": (lambda x: x**2 / np.sum(x**2), "squared the scores instead"),
    "squares in float32": (
        lambda x: x.astype(np.float32) ** 2 / np.sum(x.astype(np.float32) ** 2),
        "squared the scores instead",
    ),
    "sum-normalised": (lambda x: x / x.sum(), "without exponentiating"),
    "exp only": (np.exp, "do not sum to 1"),
    "exp over max": (lambda x: np.exp(x) / np.exp(x).max(), "largest exponential"),
    "exp over score sum": (lambda x: np.exp(x) / x.sum(), "sum of the raw scores"),
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
    "keepdims on the max, not on the sum": (
        lambda x: (lambda e: e / e.sum(axis=-1))(np.exp(x - x.max(axis=-1, keepdims=True))),
        "Your max kept its axis (keepdims=True), but your sum did not",
    ),
    "keepdims on the max, not on the sum, in float32": (
        lambda x: (lambda e: e / np.sum(e, axis=1))(
            np.exp(x.astype(np.float32) - np.max(x.astype(np.float32), axis=1, keepdims=True))
        ),
        "Add keepdims=True to the sum as well",
    ),
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
    "base 2": (base_two, "You used 2**x where softmax uses e**x"),
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


# ---------------------------------------------------------------- the overflow table (section 5)
def _table_cell_source() -> str:
    """The source notebook's code cell that prints the naive softmax's overflow table."""
    import json
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "source/03-softmax/03-softmax.ipynb"
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return next(
        "".join(c["source"])
        for c in cells
        if c["cell_type"] == "code" and "zeros from s >" in "".join(c["source"])
    )


def _printed_table() -> list[list[str]]:
    """The table as the lesson prints it: one list of cells per row (dtype, n, five cells)."""
    import contextlib
    import io

    from attnlab.softmax_family import naive_overflow_thresholds

    namespace = {
        "np": np,
        "attnlab": attnlab,
        "naive_overflow_thresholds": naive_overflow_thresholds,
    }
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(_table_cell_source(), namespace)  # noqa: S102 - the course's own cell
    rows = [line.replace("|", " ").split() for line in out.getvalue().splitlines()[1:]]
    assert len(rows) == 9 and all(len(r) == 7 for r in rows), rows
    return rows


def _naive_top(dtype, n, s) -> float:
    return float(attnlab.naive_softmax(np.full(n, s, dtype=dtype))[0])


def _boundary(dtype, n, broke) -> tuple[float, float]:
    """(the largest score of ``dtype`` that still works, the smallest that ``broke``), for a row
    of ``n`` equal scores: every float16 in (0, 12) tried, float32 and float64 by bisection
    over their representable numbers (``broke`` is monotone in s)."""
    if np.dtype(dtype) == np.float16:
        grid = np.arange(0, 0x7C00, dtype=np.uint16).view(np.float16)  # every finite s >= 0
        grid = grid[(grid > 0) & (grid < 12)]
        bad = np.array([broke(_naive_top(dtype, n, s)) for s in grid])
        first = int(np.argmax(bad))
        assert bad[first] and not bad[:first].any() and bad[first:].all()
        return float(grid[first - 1]), float(grid[first])
    ints = {np.float32: np.int32, np.float64: np.int64}[dtype]
    lo = int(np.array(1.0, dtype=dtype).view(ints))  # works at s = 1
    hi = int(np.array(np.finfo(dtype).max, dtype=dtype).view(ints))  # broken there
    while hi - lo > 1:
        mid = (lo + hi) // 2
        s = np.array(mid, dtype=ints).view(dtype)
        if broke(_naive_top(dtype, n, s)):
            hi = mid
        else:
            lo = mid
    return tuple(float(np.array(i, dtype=ints).view(dtype)) for i in (lo, hi))


def test_every_cell_of_the_overflow_table_agrees_with_brute_force():
    """Each printed threshold lies between the last score that works and the first that breaks
    (to the 2 decimals shown), found by trying the dtype's own numbers; the cells either side
    show what the thresholds promise: 1/n just below, 0 just above, NaN past ln(max)."""
    dtypes = {"float16": np.float16, "float32": np.float32, "float64": np.float64}
    with np.errstate(all="ignore"):
        for name, n, zeros, below, above, nan_from, past in _printed_table():
            dtype, n = dtypes[name], int(n)
            for printed, broke in (
                (zeros, lambda w: not w > 0.0),  # 0, and from ln(max) on NaN
                (nan_from, lambda w: math.isnan(w)),
            ):
                works, breaks = _boundary(dtype, n, broke)
                assert round(works, 2) <= float(printed) <= round(breaks, 2), (
                    name,
                    n,
                    printed,
                    works,
                    breaks,
                )
            assert float(below) == pytest.approx(1 / n, rel=1e-2), (name, n, below)
            assert float(above) == 0.0 and past == "nan", (name, n, above, past)


def test_float16_thresholds_take_the_log_in_float64():
    """ln(65504) rounded to float16 is 11.09375: taken that way, n = 4096 would print 2.78."""
    from attnlab.softmax_family import naive_overflow_thresholds

    zeros_from, nan_from = naive_overflow_thresholds(np.float16, 4096)
    works, breaks = _boundary(np.float16, 4096, lambda w: not w > 0.0)
    assert works <= zeros_from < breaks and f"{zeros_from:.2f}" == "2.77"
    assert nan_from == pytest.approx(math.log(65504), abs=1e-12)


# --------------------------------------------- object arrays: the learner's check and grading
_EXP = np.frompyfunc(math.exp, 1, 1)  # Python's exp on every entry: an array of objects


def _object_row(x):
    e = _EXP(np.asarray(x, dtype=float) - np.max(x))  # (n,) of Python floats
    return e / e.sum()


def _object_matrix(scores):
    s = np.asarray(scores, dtype=float)
    e = _EXP(s - s.max(axis=-1, keepdims=True))  # (n_q, n_k) of Python floats
    return e / e.sum(axis=-1, keepdims=True)


def _object_temperature(scores, temperature):
    return _object_matrix(np.asarray(scores, dtype=float) / temperature)


def _as_grading_gets_it(answer):
    """``answer`` as grading calls it: its result crosses :mod:`attnlab.grading.wire`."""
    from attnlab.grading.wire import decode, encode

    return lambda *args: decode(encode(answer(*args)))


@pytest.mark.parametrize(
    ("exercise", "answer"),
    [
        (L.softmax_row, _object_row),
        (L.stable_softmax, _object_matrix),
        (L.temperature, _object_temperature),
    ],
)
def test_object_arrays_of_numbers_are_right_in_the_check_and_in_grading(exercise, answer):
    """Issue 39: right floats in a dtype=object array (np.frompyfunc) were correct in the
    learner's check and in `nbgrader validate`, and 2 of 5 in grading (the wire sent them as
    opaque values). Both now read them as float64."""
    assert judged(exercise, answer).outcome is Outcome.CORRECT
    feedback = judged(exercise, _as_grading_gets_it(answer))
    assert feedback.outcome is Outcome.CORRECT, feedback.message


def test_an_object_array_of_strings_is_refused_alike_before_submission():
    """An object array that is not all numbers does not travel to grading (it arrives as an
    opaque value): the learner's check refuses it too, with the same reason, instead of
    reading the strings as numbers."""

    def strings(x):
        return np.array([str(w) for w in _object_row(x)], dtype=object)

    here = judged(L.softmax_row, strings)
    graded = judged(L.softmax_row, _as_grading_gets_it(strings))
    assert here.outcome is graded.outcome is Outcome.WRONG
    assert "array of objects that are not all real numbers" in here.message
    assert here.message == graded.message


# ------------------------------------------ library log-sum-exp under another name (red team W2)
def _cell_function(code: str, name: str, number: int):
    return cell_function(code, name, number, kernel=4343)


def _forbidding(name: str) -> list:
    from attnlab.exercises import EXERCISES

    return [EXERCISES[k] for k in EXERCISES if name in (EXERCISES[k].forbidden or ())]


LOGADDEXP = [
    ("np.logaddexp.reduce(s, axis=-1, keepdims=True)", "logaddexp"),
    ("np.logaddexp.accumulate(s, axis=-1)[..., -1:]", "logaddexp"),
    ("np.logaddexp2.reduce(s, axis=-1, keepdims=True)", "logaddexp2"),
]


def test_every_exercise_that_forbids_logsumexp_is_found():
    titles = sorted(e.title[:12] for e in _forbidding("scipy.special.logsumexp"))
    assert titles == [
        "Exercise 3.1",
        "Exercise 3.2",
        "Exercise 3.3",
        "Exercise 6.3",
        "Exercise 8.4",
    ], titles


@pytest.mark.parametrize(("lse", "refused"), LOGADDEXP)
def test_numpy_logaddexp_is_refused_wherever_logsumexp_is(lse, refused):
    """Red team W2 (3.1-3.3: 5 of 5, fair 0): ``np.exp(s - np.logaddexp.reduce(s, ...))`` is
    the library log-sum-exp the course forbids as scipy.special.logsumexp, in a compiled ufunc
    the tripwire cannot see. The lint refuses it, in grading and in the learner's check."""
    from attnlab.exercises.rules.lint import problems

    code = "import numpy as np\nfrom numpy import logaddexp as lae\nx = lae\n"
    code += f"s = np.ones(3)\ny = {lse}\n"
    for exercise in _forbidding("scipy.special.logsumexp"):
        found = problems(code, forbidden=exercise.forbidden)
        assert any(f"`{refused}`" in line for line in found), (exercise.title, found)
        assert any("`logaddexp`" in line and "line 2" in line for line in found), found
    right = "import numpy as np\ns = np.ones(3)\ny = np.log(np.exp(s).sum(axis=-1))\n"
    for exercise in _forbidding("scipy.special.logsumexp"):
        assert problems(right, forbidden=exercise.forbidden) == [], exercise.title
    code = f"def softmax_row(x):\n    s = np.asarray(x, float)\n    return np.exp(s - {lse})\n"
    feedback = L.softmax_row.check(_cell_function(code, "softmax_row", 4300 + len(lse)))
    assert feedback.outcome is Outcome.WRONG
    assert "would not be run for grading" in feedback.message and refused in feedback.message
