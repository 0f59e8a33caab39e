"""Judging an array to the precision it was computed in: float64, float32 or float16.

A result is compared with a float64 reference to the precision the answer was computed in
(:func:`precision_of`, :data:`TOLERANCES`), and a reason shows as many digits as it takes for
the two numbers to differ (:func:`mismatch`), so two numbers that look alike are never called
different.
"""

from __future__ import annotations

import numpy as np

from attnlab.exercises.kit.display import one_line, warned
from attnlab.exercises.kit.judging import recognised
from attnlab.exercises.kit.outcomes import Wrong

#: How close a result must be to the float64 reference, by the precision it was computed in:
#: (rtol, atol). float32 carries about 7 significant digits and float16 about 3, and a few
#: operations (a matrix product, exp, a sum) lose a little more. float64 answers are held to
#: float32's tolerance too (see :func:`tolerance`).
TOLERANCES = {
    np.dtype(np.float64): (1e-6, 1e-9),
    np.dtype(np.float32): (1e-4, 1e-5),
    np.dtype(np.float16): (2e-2, 2e-2),
}


def precision_of(got) -> np.dtype:
    """The float dtype an answer was computed in: its own dtype, float32 for a list whose every
    value is a float32 (``array.tolist()`` of a float32 array), else float64.

    Examples
    --------
    >>> precision_of(np.ones(2, dtype=np.float32)), precision_of([0.1, 0.2])
    (dtype('float32'), dtype('float64'))
    >>> precision_of(np.float32([0.1, 0.2]).tolist())
    dtype('float32')
    """
    if isinstance(got, np.ndarray | np.generic):
        return got.dtype if got.dtype in TOLERANCES else np.dtype(np.float64)
    try:
        values = np.asarray(got, dtype=float)
    except (TypeError, ValueError):
        return np.dtype(np.float64)
    finite = values[np.isfinite(values)]
    with np.errstate(all="ignore"):
        narrow = finite.size and np.array_equal(finite.astype(np.float32), finite)
    exact = finite.size and np.array_equal(finite.astype(np.float16), finite)
    return np.dtype(np.float32) if narrow and not exact else np.dtype(np.float64)


def tolerance(*dtypes) -> tuple[float, float]:
    """The loosest (rtol, atol) of ``dtypes``: the answer's precision and the inputs' dtype.

    The checks pass ``np.float32`` as well: a float64 result may still have been computed in
    float32 (numpy 2 turns ``float32_array / np.sqrt(d)`` into float64, since ``np.sqrt``
    returns a float64 scalar), so its dtype cannot prove float64 precision. float32's
    tolerance is still a hundred times finer than any known mistake of these exercises.
    """
    pairs = [TOLERANCES.get(np.dtype(d), TOLERANCES[np.dtype(np.float64)]) for d in dtypes]
    return max(r for r, _ in pairs), max(a for _, a in pairs)


def judging_tolerance(
    got,
    *inputs,
    rtol: float = 1e-6,
    atol: float = 1e-9,
    ulps: float = 0.0,
    abs_ulps: float = 0.0,
    scale: float = 1.0,
    computed_in=np.float64,
) -> tuple[float, float]:
    """(rtol, atol) for comparing an answer with its float64 reference: the course's one policy.

    The answer is judged to the precision it was computed in: the coarsest of its own
    (:func:`precision_of`), that of any float array among ``inputs`` and ``computed_in`` (a
    lesson passes ``np.float32`` when an answer may have been computed in float32 whatever
    dtype it comes back in). Computed in float64 it must match to ``(rtol, atol)``; computed
    in a narrower float with machine epsilon ``eps`` it gets ``ulps`` roundings more,
    relative, and an absolute tolerance of ``abs_ulps`` roundings of a number of size
    ``scale`` (never below ``atol``)::

        rtol + ulps * eps,   max(atol, abs_ulps * eps * scale)

    A lesson says how many roundings its computation can collect (``ulps``: a sum of ``n``
    terms, an ``exp`` of a spread of exponents) and how large its numbers are (``scale``),
    never a tolerance of its own. Exact answers (a count, a shape) are not judged here.

    Examples
    --------
    >>> judging_tolerance(np.ones(2), ulps=8, abs_ulps=8)
    (1e-06, 1e-09)
    >>> rtol, atol = judging_tolerance(np.ones(2, dtype=np.float32), ulps=8, abs_ulps=8)
    >>> round(rtol, 9), round(atol, 9)
    (1.954e-06, 9.54e-07)
    >>> judging_tolerance([0.5], np.ones(2, np.float16), abs_ulps=1)[1]
    0.0009765625
    """
    dtypes = [precision_of(got), np.dtype(computed_in)]
    dtypes += [
        x.dtype for x in inputs if isinstance(x, np.ndarray | np.generic) and x.dtype.kind == "f"
    ]
    eps = max(float(np.finfo(d).eps) if d.itemsize < 8 else 0.0 for d in dtypes)
    return rtol + ulps * eps, max(atol, abs_ulps * eps * scale)


def _digits(x: float, digits: int) -> str:
    """``x`` with ``digits`` significant digits, as a learner writes it (no padding)."""
    x = float(x)
    if not np.isfinite(x) or x == 0:
        return "0" if x == 0 else str(x)
    if not 1e-4 <= abs(x) < 1e6:
        return np.format_float_scientific(x, precision=digits - 1, trim="-")
    return np.format_float_positional(x, precision=digits, fractional=False, trim="-")


def _shown(array: np.ndarray, digits: int) -> str:
    if array.ndim == 0:
        return _digits(array[()], digits)
    return "[" + ", ".join(_shown(row, digits) for row in array) + "]"


def mismatch(what: str, got: np.ndarray, expected: np.ndarray, rtol: float, atol: float) -> str:
    """ "<what> should be …, but yours gave …", with enough digits that the two differ.

    The entry furthest outside the tolerance decides how many significant digits are shown
    (4 unless it needs more); when it takes more than 4 the sentence also names that entry
    and the difference, so two numbers that look alike are never called different.

    Examples
    --------
    >>> text = mismatch("f(x)", np.array([0.25, 0.7500031]), np.array([0.25, 0.75]), 1e-6, 1e-9)
    >>> head, tail = text.split(": entry")
    >>> print(head)
    f(x) should be [0.25, 0.75], but yours gave [0.25, 0.750003]
    >>> print(tail[:58])
     [1] is 0.750003 where it should be 0.75, a difference of
    >>> print(tail[58:])
     3.1e-06, more than float64 rounding explains.
    """
    with np.errstate(invalid="ignore"):
        excess = np.abs(got - expected) - (atol + rtol * np.abs(expected))
    excess = np.where(np.isnan(excess), np.inf, excess)
    where = np.unravel_index(int(np.argmax(excess)), got.shape) if got.ndim else ()
    g, e = float(got[where]), float(expected[where])
    digits = next((p for p in range(4, 18) if _digits(g, p) != _digits(e, p)), 17)
    shown_got, shown_expected, said = got, expected, what
    if expected.size > 16:  # a long array: show the row that differs most
        shown_got, shown_expected = got[where[:1]], expected[where[:1]]
        said = f"{what}: row {where[0]}"
    text = (
        f"{said} should be {_shown(shown_expected, digits)}, but yours gave "
        f"{_shown(shown_got, digits)}"
    )
    if digits > 4:
        index = ", ".join(str(int(i)) for i in where)
        text += (
            f": entry [{index}] is {_digits(g, digits)} where it should be "
            f"{_digits(e, digits)}, a difference of {abs(g - e):.2g}, more than "
            f"{_precision_name(rtol)} rounding explains"
        )
    return text + "."


def _precision_name(rtol: float) -> str:
    return next((d.name for d, (r, _) in TOLERANCES.items() if r == rtol), "float64")


def compare(got, expected, what, messages, mistakes, inputs=np.float64) -> None:
    """:class:`Wrong` unless ``got`` is ``expected`` to the precision it was computed in
    (:func:`precision_of`, or the inputs' dtype if that is coarser); the reason names a known
    mistake when it recognises one."""
    try:
        values = np.asarray(got, dtype=float)
    except (TypeError, ValueError):
        raise Wrong(
            f"{what} should be an array of shape {expected.shape}; got {one_line(got)}."
        ) from None
    if values.shape != expected.shape:
        raise Wrong(
            f"{what} should have shape {expected.shape}, but yours has shape {values.shape}."
        )
    rtol, atol = tolerance(precision_of(got), inputs, np.float32)
    if np.allclose(values, expected, rtol=rtol, atol=atol):
        if messages:
            raise Wrong(
                f"{what} gives the right numbers, but numpy warned: "
                f"{'; '.join(messages)}. Your function must not warn."
            )
        return
    cause = recognised(values, mistakes, rtol, atol)
    if not cause and not np.all(np.isfinite(values)):
        cause = "Yours contains nan or inf."
    said = mismatch(what, values, np.asarray(expected, dtype=float), rtol, atol)
    raise Wrong(f"{said} {cause}{warned(messages)}".rstrip())
