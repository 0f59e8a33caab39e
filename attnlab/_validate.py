"""Private input checks shared by :mod:`attnlab.softmax_family` and :mod:`attnlab.attention`.

Every helper raises :class:`ValueError` with a message that starts with the
name of the offending argument and, where it helps, its shape and dtype, so a
learner can tell at a glance *which* input is wrong and *why*.

>>> as_float_array([2, 1, 1], "x").dtype
dtype('float64')
>>> as_float_array([1.0, float("nan")], "x")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
ValueError: x contains NaN (1 of 2 entries): got shape (2,) and dtype float64; ...
"""

from __future__ import annotations

import math
import numbers
import operator

import numpy as np

__all__ = [
    "as_float_array",
    "as_bool_mask",
    "normalize_axis",
    "positive_finite",
    "positive_int",
    "probabilities",
    "work_dtype",
]


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _describe(arr: np.ndarray) -> str:
    return f"shape {arr.shape} and dtype {arr.dtype}"


def as_float_array(
    x,
    name: str,
    *,
    min_ndim: int = 0,
    allow_inf: bool = True,
) -> np.ndarray:
    """Convert ``x`` to a floating-point ndarray, or raise a helpful ValueError.

    Lists, Python numbers, bools and integer arrays become float64; float16,
    float32 and float64 (and longdouble) arrays keep their dtype.  The input is
    never modified (a conversion makes a copy; an already-float array is
    returned as is, and callers must not write into it).

    Rejected: numpy masked arrays (their mask would be lost silently), ragged
    sequences, strings, objects, complex numbers, datetimes,
    NaN anywhere, ``±inf`` when ``allow_inf`` is false, fewer than
    ``min_ndim`` dimensions.

    >>> as_float_array(np.arange(3, dtype=np.int8), "x").dtype
    dtype('float64')
    >>> as_float_array(np.ones(2, dtype=np.float16), "x").dtype
    dtype('float16')
    >>> as_float_array([1 + 2j], "q")
    Traceback (most recent call last):
    ...
    ValueError: q must be real-valued, got complex numbers: shape (1,) and dtype complex128
    """
    _refuse_masked(x, name)
    try:
        arr = np.asarray(x)
    except (ValueError, TypeError) as exc:  # ragged nested lists, odd objects
        raise ValueError(
            f"{name} must be a rectangular array of numbers; numpy could not convert it: {exc}"
        ) from None
    kind = arr.dtype.kind
    if kind == "c":
        raise ValueError(f"{name} must be real-valued, got complex numbers: {_describe(arr)}")
    if kind in "biu":
        arr = arr.astype(np.float64)
    elif kind != "f":
        raise ValueError(
            f"{name} must contain real numbers (int or float), got {_describe(arr)}"
            + ("; did you pass strings?" if kind in "US" else "")
        )
    if arr.ndim < min_ndim:
        what = "a scalar" if arr.ndim == 0 else _plural(arr.ndim, "dimension")
        raise ValueError(
            f"{name} must have at least {_plural(min_ndim, 'dimension')}, "
            f"got {what} (shape {arr.shape})"
        )
    clean = np.isfinite(arr).all() if not allow_inf else not np.isnan(arr).any()
    if clean:  # one pass for the usual case; the counts below only explain a refusal
        return arr
    n_nan = int(np.count_nonzero(np.isnan(arr)))
    if n_nan:
        raise ValueError(
            f"{name} contains NaN ({n_nan} of {arr.size} entries): got {_describe(arr)}; "
            "NaN has no meaning as a score or probability"
        )
    if not allow_inf:
        n_inf = int(np.count_nonzero(np.isinf(arr)))
        if n_inf:
            raise ValueError(
                f"{name} must be finite, but {n_inf} of {arr.size} entries are ±inf: "
                f"got {_describe(arr)}"
            )
    return arr


def _refuse_masked(x, name: str) -> None:
    """Refuse a numpy masked array: ``np.asarray`` would silently drop its mask.

    >>> _refuse_masked(np.ma.masked_array([1.0, 2.0], mask=[0, 1]), "x")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: x is a numpy masked array (1 of 2 entries masked), but attnlab would ignore ...
    """
    if isinstance(x, np.ma.MaskedArray):
        n_masked = int(np.count_nonzero(np.ma.getmaskarray(x)))
        raise ValueError(
            f"{name} is a numpy masked array ({n_masked} of {x.size} entries masked), but attnlab "
            f"would ignore the mask; fill the masked entries yourself (for scores, "
            f"{name}.filled(-np.inf) gives them weight 0) or pass a boolean mask= to "
            "scaled_dot_product_attention"
        )


def work_dtype(dtype: np.dtype) -> np.dtype:
    """Dtype to compute in: float16 is widened to float32, others are kept.

    >>> work_dtype(np.dtype(np.float16)), work_dtype(np.dtype(np.float64))
    (dtype('float32'), dtype('float64'))
    """
    return np.result_type(dtype, np.float32)


def normalize_axis(axis, shape: tuple, name: str, *, nonempty: bool = True) -> int:
    """Return ``axis`` as a non-negative int for an array named ``name``.

    With ``nonempty`` (the default) the axis must have at least one entry.

    >>> normalize_axis(-1, (2, 3), "x")
    1
    >>> normalize_axis(2, (2, 3), "x")
    Traceback (most recent call last):
    ...
    ValueError: axis 2 is out of range for x with shape (2, 3) (2 dimensions)
    """
    ax = _whole(axis, "axis must be a single int")
    ndim = len(shape)
    if not -ndim <= ax < ndim:
        raise ValueError(
            f"axis {ax} is out of range for {name} with shape {shape} ({ndim} dimensions)"
        )
    ax %= ndim
    if nonempty and shape[ax] == 0:
        raise ValueError(
            f"{name} has length 0 along axis {ax} (shape {shape}); "
            "there must be at least one entry along the axis"
        )
    return ax


def positive_finite(value, name: str) -> float:
    """Check that ``value`` is a single real number, finite and > 0; return it as float.

    >>> positive_finite(2, "temperature")
    2.0
    >>> positive_finite(0.0, "temperature")
    Traceback (most recent call last):
    ...
    ValueError: temperature must be > 0, got 0.0
    """
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Real):
        raise ValueError(
            f"{name} must be a single real number, got {value!r} (type {type(value).__name__})"
        )
    value = float(value)
    if math.isnan(value) or math.isinf(value):
        raise ValueError(f"{name} must be finite, got {value}")
    if value <= 0:
        raise ValueError(f"{name} must be > 0, got {value}")
    return value


def _whole(value, rule: str) -> int:
    """``value`` as a Python int (a Python or numpy integer, not a bool or a float), or a
    ValueError that starts with ``rule`` ("n_q must be a positive int") and names the value
    and its type."""
    if isinstance(value, bool | np.bool_):
        raise ValueError(f"{rule}, got {value!r}")
    try:
        return operator.index(value)
    except TypeError:
        raise ValueError(f"{rule}, got {value!r} (type {type(value).__name__})") from None


def positive_int(value, name: str) -> int:
    """Check that ``value`` is an integer >= 1 (Python or numpy int, not bool or float).

    >>> positive_int(np.int64(3), "n_q")
    3
    >>> positive_int(2.0, "n_q")
    Traceback (most recent call last):
    ...
    ValueError: n_q must be a positive int, got 2.0 (type float)
    """
    n = _whole(value, f"{name} must be a positive int")
    if n < 1:
        raise ValueError(f"{name} must be a positive int (>= 1), got {n}")
    return n


def as_bool_mask(mask, name: str = "mask") -> np.ndarray:
    """Convert ``mask`` to a boolean ndarray; refuse additive (0/-inf) or 0/1 masks.

    >>> as_bool_mask([[True, False]]).dtype
    dtype('bool')
    >>> as_bool_mask(np.array([0.0, -np.inf]))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: mask must be a boolean array (True = may attend, ...), got ... dtype float64. ...
    """
    _refuse_masked(mask, name)
    try:
        arr = np.asarray(mask)
    except (ValueError, TypeError) as exc:
        raise ValueError(
            f"{name} must be a rectangular boolean array; numpy could not convert it: {exc}"
        ) from None
    if arr.dtype != np.bool_:
        raise ValueError(
            f"{name} must be a boolean array (True = may attend, False = blocked), got "
            f"{_describe(arr)}. For an additive mask of 0 and -inf use `{name} == 0`; "
            f"for 0/1 integers use `{name}.astype(bool)`."
        )
    return arr


def probabilities(p, name: str, axis: int = -1) -> tuple[np.ndarray, int]:
    """Check that ``p`` holds probability distributions along ``axis``.

    Entries must be finite and in ``[0, 1]``; every slice along ``axis`` must sum
    to 1 (within ``sqrt(eps)`` of the dtype) or be all zeros — the output of
    :func:`attnlab.softmax_family.softmax` on an all ``-inf`` (fully masked) slice.
    Returns the float array and the normalized axis.

    >>> probabilities([0.5, 0.5], "p")[0].tolist()
    [0.5, 0.5]
    >>> probabilities([2.0, -1.0], "p")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: p must contain probabilities in [0, 1], got values from -1.0 to 2.0 ...
    """
    arr = as_float_array(p, name, min_ndim=1, allow_inf=False)
    ax = normalize_axis(axis, arr.shape, name)
    if arr.size == 0:
        return arr, ax
    tol = math.sqrt(np.finfo(arr.dtype).eps)
    lo, hi = float(arr.min()), float(arr.max())
    if lo < 0 or hi > 1 + tol:
        raise ValueError(
            f"{name} must contain probabilities in [0, 1], got values from {lo} to {hi} "
            f"(shape {arr.shape}); did you pass logits instead of softmax(logits)?"
        )
    sums = arr.sum(axis=ax, dtype=np.float64)
    bad = (np.abs(sums - 1.0) > tol) & (sums != 0.0)
    if bad.any():
        worst = float(sums[bad].flat[0])
        raise ValueError(
            f"{name} must sum to 1 along axis {ax} (shape {arr.shape}), but a slice sums to "
            f"{worst!r}; pass the output of softmax"
        )
    return arr, ax
