"""Judging what came back: numbers and arrays compared with the expected ones, and known
mistakes recognised by their output."""

from __future__ import annotations

import numpy as np

from attnlab.exercises.kit.display import one_line, short
from attnlab.exercises.kit.outcomes import Wrong


def expect_close(got, expected, what, rtol=1e-6, atol=1e-9) -> np.ndarray:
    """Raise :class:`Wrong` unless ``got`` has the shape and (nearly) the values of ``expected``."""
    expected = np.asarray(expected)
    try:
        got = np.asarray(got, dtype=float)
    except (TypeError, ValueError) as exc:
        raise Wrong(f"{what} should be numbers; got {short(got)}.") from exc
    if got.shape != expected.shape:
        raise Wrong(f"{what} should have shape {expected.shape}, but yours has shape {got.shape}.")
    if not np.all(np.isfinite(got)):
        raise Wrong(f"{what} contains nan or inf: {short(got)}. Expected {short(expected)}.")
    if not np.allclose(got, expected, rtol=rtol, atol=atol):
        raise Wrong(f"{what} should be {short(expected)}, but yours gave {short(got)}.")
    return got


def as_number(value) -> float | None:
    """``value`` as one float, or None when it is not a single real number.

    Accepts Python and numpy numbers and 0-d arrays; refuses strings, booleans and arrays with
    more than one entry. ``nan`` and ``inf`` come back as they are (the caller decides).

    Examples
    --------
    >>> as_number(np.float32(0.5)), as_number(np.array(3)), as_number([1.0]), as_number("1")
    (0.5, 3.0, None, None)
    """
    if isinstance(value, (str, bytes, bool, np.bool_)):
        return None
    try:
        return float(value) if np.ndim(value) == 0 else None
    except (TypeError, ValueError):  # not a number, or a ragged list (np.ndim raises)
        return None


def as_numbers(got, what: str, shape, kind: str = "an array of numbers") -> np.ndarray:
    """``got`` as a float array, or :class:`Wrong` saying it should be ``kind`` of ``shape``.

    Examples
    --------
    >>> as_numbers([1, 2], "out", (2,))
    array([1., 2.])
    >>> as_numbers("a", "dq", (2,), kind="an array")
    Traceback (most recent call last):
    ...
    attnlab.exercises.kit.outcomes.Wrong: dq should be an array of shape (2,); got 'a'.
    """
    try:
        return np.asarray(got, dtype=float)
    except (TypeError, ValueError):
        raise Wrong(f"{what} should be {kind} of shape {shape}; got {one_line(got)}.") from None


def same_values(got, wrong, rtol: float = 1e-6, atol: float = 1e-9) -> bool:
    """``got`` has the shape and (to rounding) the values of ``wrong``; nan matches nan.

    Examples
    --------
    >>> same_values(np.array([0.5, 0.5]), [0.5, 0.5 + 1e-12]), same_values([1.0], [[1.0]])
    (True, False)
    """
    got, wrong = np.asarray(got, dtype=float), np.asarray(wrong, dtype=float)
    return wrong.shape == got.shape and bool(
        np.allclose(got, wrong, rtol=rtol, atol=atol, equal_nan=True)
    )


def recognised(got, mistakes, rtol: float = 1e-6, atol: float = 1e-9) -> str:
    """The explanation of the first known mistake whose output ``got`` equals, or ''.

    Parameters
    ----------
    got : array_like
        What the learner's function returned; '' when it is not numbers.
    mistakes : iterable of (array_like or None, str)
        Each known-wrong output (computed from the case's inputs) with the sentence that
        explains it; a ``None`` output is skipped (the mistake cannot happen for this case).

    Examples
    --------
    >>> recognised([2.0, 2.0], [(None, "n/a"), ([1.0, 3.0], "sorted"), ([2.0, 2.0], "mean")])
    'mean'
    """
    try:
        got = np.asarray(got, dtype=float)
    except (TypeError, ValueError):
        return ""
    return next(
        (
            explanation
            for wrong, explanation in mistakes
            if wrong is not None and same_values(got, wrong, rtol, atol)
        ),
        "",
    )


def quietly(formula, *args):
    """Evaluate a known-wrong formula (to recognise its output) without any numpy warning."""
    with np.errstate(all="ignore"):
        return formula(*args)
