r"""Softmax and friends, written to be numerically stable and easy to read.

.. math::

    \operatorname{softmax}(x)_i = \frac{e^{x_i / T}}{\sum_j e^{x_j / T}}
                                = \frac{e^{(x_i - m) / T}}{\sum_j e^{(x_j - m) / T}},
    \qquad m = \max_j x_j

Subtracting the max ``m`` changes nothing mathematically but keeps every
exponent ``<= 0``, so ``exp`` never overflows.  :func:`naive_softmax` leaves the
shift out on purpose, to show what goes wrong.

Conventions of :func:`softmax`, :func:`log_softmax` and :func:`logsumexp`:

* any number of leading batch dimensions; the reduction runs along ``axis``;
* lists, ints and bools are computed in float64; float16/32/64 arrays keep
  their dtype (float16 is *computed* in float32 and rounded once at the end;
  :func:`naive_softmax` alone stays in float16, to show the overflow);
* inputs are never modified;
* ``-inf`` means "impossible": it gets probability exactly 0, and a slice that
  is entirely ``-inf`` gets all zeros (there is nothing to normalise) instead of
  NaN;
* ``+inf`` means "beats every finite value": the ``+inf`` entries of a slice
  share the probability equally and everything else gets 0 — the same answer
  as the ``temperature -> 0`` limit with a tie at the top;
* NaN (or a bad ``axis``/``temperature``) raises :class:`ValueError` naming
  the argument.

:func:`softmax_jacobian` and :func:`entropy` take probabilities (entries in
``[0, 1]`` summing to 1, or an all-zero fully-masked slice) and reject
anything else, which catches "passed logits instead of probabilities".

This module needs numpy only.
"""

import math

import numpy as np

from . import _kernels, _validate

__all__ = [
    "softmax",
    "naive_softmax",
    "naive_overflow_thresholds",
    "logsumexp",
    "log_softmax",
    "softmax_jacobian",
    "entropy",
]


def softmax(x, axis=-1, temperature=1.0):
    r"""Numerically stable softmax :math:`e^{x_i/T} / \sum_j e^{x_j/T}` along ``axis``.

    Parameters
    ----------
    x : array_like, shape (..., n, ...)
        Scores (logits).  Lists and integer arrays are computed in float64;
        float16/32/64 keep their dtype.  May contain ``±inf`` but not NaN.
    axis : int, default -1
        Axis to normalise over; it must have at least one entry.
    temperature : float, default 1.0
        ``T > 0``, finite.  Small ``T`` sharpens towards one-hot on the max
        (``T -> 0``), large ``T`` flattens towards uniform (``T -> inf``).

    Returns
    -------
    p : ndarray, same shape and float dtype as ``x``
        Non-negative, sums to 1 along ``axis`` (up to rounding), except that a
        slice which is all ``-inf`` gives all zeros.

    Raises
    ------
    ValueError
        If ``x`` contains NaN, is not real-numeric, is 0-d, is empty along
        ``axis``; if ``axis`` is out of range; if ``temperature`` is not a
        finite number > 0.

    Notes
    -----
    The max ``m`` of each slice is subtracted *before* dividing by ``T``, so the
    exponent ``(x - m) / T`` is ``<= 0`` and ``exp`` cannot overflow even for
    ``T = 1e-3``.  float16 input is computed in float32 and rounded to float16
    once at the end.  ``-inf`` entries get exactly 0; if a slice contains
    ``+inf`` the ``+inf`` entries share the mass equally and the rest get 0.

    Examples
    --------
    >>> import numpy as np
    >>> np.round(softmax([2, 1, 1]), 3).tolist()
    [0.576, 0.212, 0.212]

    The textbook formula overflows; the shifted one does not:

    >>> naive_softmax(np.array([1000.0, 0.0])).tolist()
    [nan, 0.0]
    >>> softmax(np.array([1000.0, 0.0])).tolist()
    [1.0, 0.0]

    Temperature: sharp when small, flat when large:

    >>> np.round(softmax([2.0, 1.0, 0.0], temperature=0.05), 3).tolist()
    [1.0, 0.0, 0.0]
    >>> np.round(softmax([2.0, 1.0, 0.0], temperature=100.0), 3).tolist()
    [0.337, 0.333, 0.33]

    ``-inf`` (a masked position) gets exactly 0; an all ``-inf`` row gets zeros:

    >>> softmax([[0.0, -np.inf], [-np.inf, -np.inf]]).tolist()
    [[1.0, 0.0], [0.0, 0.0]]

    ``+inf`` beats everything; several ``+inf`` share equally:

    >>> softmax([np.inf, 5.0, np.inf]).tolist()
    [0.5, 0.0, 0.5]

    Any axis, any dtype:

    >>> p = softmax(np.ones((2, 4), dtype=np.float16), axis=0)
    >>> p.dtype, p.tolist()[0]
    (dtype('float16'), [0.5, 0.5, 0.5, 0.5])
    """
    x, ax, t, dtype = _prepare(x, axis, temperature)  # checked; float16 computed in float32
    z = _shifted(x, ax, t)  # (x - max) / T: every entry <= 0, a new array shaped as x
    p = _kernels.normalised_exp(z, ax)  # exp(z) / sum(exp(z)) along ax, written into z
    return p.astype(dtype, copy=False)


def naive_softmax(x, axis=-1):
    r"""Textbook softmax ``exp(x) / sum(exp(x))`` with **no** max shift — for teaching.

    This is deliberately the fragile formula: ``exp`` is evaluated in the
    array's own dtype, so it overflows to ``inf`` once ``x`` exceeds about 709
    in float64, 88 in float32 and 11 in float16, and ``inf / inf`` then gives
    NaN.  Use :func:`softmax` for real work.

    Parameters
    ----------
    x : array_like, shape (..., n, ...)
        Scores.  Lists and integers are computed in float64; NaN is rejected.
    axis : int, default -1
        Axis to normalise over.

    Returns
    -------
    p : ndarray, same shape and float dtype as ``x``
        May contain ``nan`` (overflow) or be all ``nan`` (all ``-inf`` slice,
        ``0 / 0``).

    Raises
    ------
    ValueError
        Same input checks as :func:`softmax`.

    Notes
    -----
    Floating-point warnings (overflow, ``0/0``) are suppressed with
    ``np.errstate`` inside this function: the course shows the NaN on purpose,
    and a wall of ``RuntimeWarning`` would distract from it.

    Examples
    --------
    >>> import numpy as np
    >>> np.round(naive_softmax([2, 1, 1]), 3).tolist()
    [0.576, 0.212, 0.212]
    >>> naive_softmax(np.array([1000.0, 0.0])).tolist()
    [nan, 0.0]
    >>> softmax(np.array([1000.0, 0.0])).tolist()
    [1.0, 0.0]

    float16 gives up much sooner, because ``exp(12) > 65504``:

    >>> naive_softmax(np.array([12.0, 0.0], dtype=np.float16)).tolist()
    [nan, 0.0]
    >>> np.round(softmax(np.array([12.0, 0.0], dtype=np.float16)), 3).tolist()
    [1.0, 0.0]
    """
    arr = _validate.as_float_array(x, "x", min_ndim=1)
    ax = _validate.normalize_axis(axis, arr.shape, "x")
    with np.errstate(all="ignore"):
        e = np.exp(arr)  # overflows to inf in arr.dtype
        return e / np.sum(e, axis=ax, keepdims=True, dtype=arr.dtype)


def naive_overflow_thresholds(dtype, n) -> tuple[float, float]:
    r"""Where :func:`naive_softmax` of ``n`` equal scores ``s`` breaks, in ``dtype``.

    The sum :math:`n e^{s}` overflows once :math:`s > \ln(\max) - \ln n` (every weight is then
    a finite number over ``inf``: exactly 0), and each exponential once :math:`s > \ln(\max)`
    (``inf / inf``: NaN). The logarithms are taken in float64: taken in ``dtype`` itself, the
    float16 :math:`\ln(65504)` rounds to 11.09375 and moves the thresholds by 0.004.

    Parameters
    ----------
    dtype : dtype-like
        A float dtype (``np.float16``, ``"float32"``, ...), whose largest finite number is used.
    n : int
        The number of equal scores in the row, >= 1.

    Returns
    -------
    zeros_from, nan_from : float
        The score above which the row comes out all zeros, and above which it is NaN.

    Raises
    ------
    ValueError
        If ``dtype`` is not a float dtype or ``n`` is not a positive int.

    Examples
    --------
    >>> [round(t, 4) for t in naive_overflow_thresholds(np.float16, 4096)]
    [2.7721, 11.0898]
    >>> [round(t, 2) for t in naive_overflow_thresholds("float64", 2)]
    [709.09, 709.78]
    """
    dtype = np.dtype(dtype)
    if dtype.kind != "f":
        raise ValueError(f"dtype must be a float dtype; got {dtype}")
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 1:
        raise ValueError(f"n must be a positive int; got {n!r}")
    ln_max = math.log(float(np.finfo(dtype).max))  # in float64, whatever the dtype
    return ln_max - math.log(int(n)), ln_max


def logsumexp(x, axis=-1, keepdims=False):
    r"""Stable :math:`\log \sum_j e^{x_j}` along ``axis``.

    Parameters
    ----------
    x : array_like, shape (..., n, ...)
        Values; may contain ``±inf`` but not NaN.
    axis : int, default -1
        Axis to reduce; it must have at least one entry.
    keepdims : bool, default False
        Keep the reduced axis with length 1 (handy for broadcasting back).
        Must be ``True`` or ``False``.

    Returns
    -------
    lse : ndarray or numpy scalar, dtype of ``x``
        Shape of ``x`` without ``axis`` (or with length 1 there).  Like numpy's
        own reductions (``np.sum``, ``np.max``) and :func:`entropy`, a 0-d
        result is a numpy scalar (``np.float64`` etc.), not a 0-d array.
        ``-inf`` for an all ``-inf`` slice, ``+inf`` if the slice contains
        ``+inf``.  A float16 result larger than 65504 overflows to ``inf``.

    Raises
    ------
    ValueError
        If ``x`` contains NaN, is not real-numeric, is a masked array, is 0-d
        or is empty along ``axis``; if ``axis`` is out of range; if
        ``keepdims`` is not a bool.

    Notes
    -----
    Uses :math:`m + \operatorname{log1p}(\sum_{j \ne j^*} e^{x_j - m})` with
    ``m = max(x)`` reached at ``j*``, as ``scipy.special.logsumexp`` does: the sum
    of the others is between 0 and ``n - 1``, so neither ``exp`` nor ``log``
    can overflow, and ``log1p`` keeps full relative accuracy when the result
    is near 0 (``logsumexp([0, -40])`` is ``4.25e-18``, where
    ``m + log(Σ e^{x_j - m})`` would round ``log(1 + 4.25e-18)`` to 0).
    :math:`\max_j x_j \le \operatorname{logsumexp}(x) \le \max_j x_j + \log n`.

    References
    ----------
    The ``log1p`` form follows ``scipy.special.logsumexp`` in recent SciPy releases.

    Examples
    --------
    >>> import numpy as np
    >>> float(np.round(logsumexp([0.0, 0.0]), 4))  # log 2
    0.6931
    >>> float(np.round(logsumexp([1000.0, 1000.0]), 4))  # 1000 + log 2
    1000.6931
    >>> with np.errstate(over="ignore"):
    ...     naive = np.log(np.sum(np.exp([1000.0, 1000.0])))
    >>> float(naive)
    inf
    >>> float(logsumexp([-np.inf, -np.inf]))
    -inf
    >>> logsumexp(np.zeros((2, 3)), keepdims=True).shape
    (2, 1)

    Accurate near 0, and a numpy scalar for a 1-D input:

    >>> r = logsumexp([0.0, -40.0])
    >>> type(r).__name__, f"{r:.3e}"
    ('float64', '4.248e-18')
    """
    keep = _keepdims(keepdims)
    x, ax, _, dtype = _prepare(x, axis)
    lse = _kernels.logsumexp_shifted(_shifted(x, ax, 1.0), ax)  # (..., 1, ...), log sum exp(x - m)
    m = np.max(x, axis=ax, keepdims=True)  # (..., 1, ...)
    with np.errstate(invalid="ignore"):  # -inf + -inf stays -inf; +inf handled below
        lse = np.where(np.isfinite(m), m + lse, m)  # +inf slice: +inf; all -inf: -inf
    if not keep:
        lse = np.squeeze(lse, axis=ax)
    with np.errstate(over="ignore"):  # float32 -> float16 cast may overflow to inf
        return lse.astype(dtype, copy=False)[()]


def log_softmax(x, axis=-1, temperature=1.0):
    r"""Stable :math:`\log \operatorname{softmax}(x / T)` along ``axis``.

    Parameters
    ----------
    x : array_like, shape (..., n, ...)
        Scores; may contain ``±inf`` but not NaN.
    axis : int, default -1
        Axis to normalise over; it must have at least one entry.
    temperature : float, default 1.0
        ``T > 0``, finite.

    Returns
    -------
    log_p : ndarray, same shape and float dtype as ``x``
        Entries ``<= 0``; ``-inf`` where :func:`softmax` gives exactly 0
        (``-inf`` inputs, all ``-inf`` slices, finite entries next to ``+inf``).
        In float16, log-probabilities below -65504 (e.g. ``x = [0, 8192]``
        with ``T = 0.125``) round to ``-inf``.

    Raises
    ------
    ValueError
        Same checks as :func:`softmax`.

    Notes
    -----
    Computed as ``s - log1p(Σ_{j≠j*} e^{s_j})`` with ``s = (x - max) / T`` (the
    ``log1p`` form of :func:`logsumexp`, so the largest entry's ``log p``, close
    to 0, keeps its relative accuracy), never as
    ``log(softmax(x))``, which would give ``-inf`` for probabilities that
    underflow to 0 but are still perfectly representable as logs.

    Examples
    --------
    >>> import numpy as np
    >>> log_softmax(np.array([1000.0, 0.0])).tolist()
    [0.0, -1000.0]
    >>> with np.errstate(divide="ignore"):
    ...     np.log(softmax(np.array([1000.0, 0.0]))).tolist()
    [0.0, -inf]
    >>> np.allclose(np.exp(log_softmax([2, 1, 1])), softmax([2, 1, 1]))
    True
    >>> log_softmax([-np.inf, -np.inf]).tolist()
    [-inf, -inf]
    """
    x, ax, t, dtype = _prepare(x, axis, temperature)
    s = _shifted(x, ax, t)  # same shape as x, <= 0 when the slice max is finite
    lse = _kernels.logsumexp_shifted(s, ax)  # (..., 1, ...), -inf for an all -inf slice
    empty = np.isneginf(lse)  # all -inf slice: nothing to normalise
    out = np.where(empty, -np.inf, s - np.where(empty, 0, lse))  # same shape as x
    with np.errstate(over="ignore"):  # float16: log-probabilities below -65504 become -inf
        return out.astype(dtype, copy=False)


def softmax_jacobian(p):
    r"""Jacobian of softmax, :math:`J = \operatorname{diag}(p) - p p^\top`, from its output ``p``.

    ``J[i, j] = ∂p_i / ∂x_j = p_i (δ_ij − p_j)`` where ``p = softmax(x)``.

    Parameters
    ----------
    p : array_like, shape (..., n)
        Probability vectors along the last axis (the output of
        :func:`softmax`): entries in ``[0, 1]`` summing to 1.  An all-zero
        vector (softmax of an all ``-inf`` slice) is also accepted and gives a
        zero matrix.

    Returns
    -------
    J : ndarray, shape (..., n, n), dtype of ``p``
        Symmetric; every row and column sums to 0 (adding a constant to all
        logits does not change ``p``).

    Raises
    ------
    ValueError
        If ``p`` is not real-numeric, is 0-d, contains NaN/inf, has entries
        outside ``[0, 1]`` or slices that do not sum to 1 (within
        ``sqrt(eps)`` of the dtype) — usually a sign that logits were passed
        instead of probabilities.

    Notes
    -----
    The gradient shrinks as softmax saturates: for a one-hot ``p`` the
    Jacobian is exactly 0, which is why huge unscaled attention scores stop
    learning (use ``np.linalg.norm(J, axis=(-2, -1))`` to measure it).  The
    largest possible entry is ``J[i, i] = 1/4`` at ``p_i = 1/2``.

    Examples
    --------
    >>> import numpy as np
    >>> softmax_jacobian([0.5, 0.5]).tolist()
    [[0.25, -0.25], [-0.25, 0.25]]
    >>> softmax_jacobian([1.0, 0.0]).tolist()  # saturated: no gradient at all
    [[0.0, 0.0], [0.0, 0.0]]
    >>> softmax_jacobian(softmax(np.zeros((4, 3)))).shape
    (4, 3, 3)
    """
    p, _ = _validate.probabilities(p, "p", axis=-1)
    diag = p[..., :, None] * np.eye(p.shape[-1], dtype=p.dtype)  # (..., n, n)
    outer = p[..., :, None] * p[..., None, :]  # (..., n, n)
    return diag - outer


def entropy(p, axis=-1):
    r"""Shannon entropy :math:`H(p) = -\sum_i p_i \log p_i` in nats, along ``axis``.

    Parameters
    ----------
    p : array_like, shape (..., n, ...)
        Probability distributions along ``axis`` (entries in ``[0, 1]``
        summing to 1, e.g. rows of attention weights).  An all-zero slice
        (fully masked row) is accepted and has entropy 0.
    axis : int, default -1
        Axis holding the distribution.

    Returns
    -------
    H : ndarray or numpy scalar, shape of ``p`` without ``axis``, dtype of ``p``
        A numpy scalar when ``p`` is 1-D (numpy's convention for reductions,
        shared with :func:`logsumexp`).  ``0 <= H <= log(n)``: 0 for a one-hot
        distribution, ``log(n)`` (the maximum) for the uniform one.  Divide by ``log(2)`` for bits.

    Raises
    ------
    ValueError
        Same checks on ``p`` as :func:`softmax_jacobian`; also if ``axis`` is
        out of range or empty.

    Notes
    -----
    Uses the convention ``0 · log 0 = 0`` (the limit of ``t log t`` as
    ``t -> 0``), evaluated without any ``log(0)`` so no warning is emitted.
    ``exp(H)`` is the "effective number" of positions attended to.

    Examples
    --------
    >>> import numpy as np
    >>> float(entropy([1.0, 0.0, 0.0]))
    0.0
    >>> bool(np.isclose(entropy(np.full(4, 0.25)), np.log(4)))
    True
    >>> np.round(entropy([[0.5, 0.5], [0.9, 0.1]]), 4).tolist()
    [0.6931, 0.3251]
    """
    p, ax = _validate.probabilities(p, "p", axis=axis)
    w = p.astype(_validate.work_dtype(p.dtype), copy=False)
    plogp = w * np.log(np.where(w > 0, w, 1))  # 0 where p == 0
    h = -np.sum(plogp, axis=ax)  # p's shape without axis
    return np.asarray(h + 0.0).astype(p.dtype, copy=False)[()]  # + 0.0: -0.0 -> 0.0


# ---------------------------------------------------------------- helpers (private)
def _prepare(x, axis, temperature=1.0):
    """Validate ``x`` / ``axis`` / ``temperature``; return (work array, axis, T, out dtype)."""
    arr = _validate.as_float_array(x, "x", min_ndim=1)
    ax = _validate.normalize_axis(axis, arr.shape, "x")
    t = _validate.positive_finite(temperature, "temperature")
    return arr.astype(_validate.work_dtype(arr.dtype), copy=False), ax, t, arr.dtype


def _posinf_as_winners(x, axis):
    """Rewrite each slice containing ``+inf`` as 0 on its ``+inf`` entries and ``-inf`` elsewhere.

    softmax of the rewritten slice is an equal share among the former ``+inf``
    entries and exactly 0 elsewhere, which is the convention of this module.
    """
    posinf = np.isposinf(x)
    if not posinf.any():
        return x
    has_posinf = np.any(posinf, axis=axis, keepdims=True)  # (..., 1, ...)
    winners = np.where(posinf, 0.0, -np.inf)  # same shape as x
    return np.where(has_posinf, winners, x).astype(x.dtype, copy=False)


def _shifted(x, axis, temperature, out=None):
    """``(x - max) / T``, all ``<= 0``; an all ``-inf`` slice stays all ``-inf``.

    ``+inf`` is first handled by :func:`_posinf_as_winners`, so the slice max is
    finite or ``-inf`` (then taken as 0 to avoid ``-inf - -inf = nan``).  An
    overflow can only push a very negative entry to ``-inf``, whose ``exp`` is
    the correct 0, so overflow warnings are silenced here.  The result is a new
    array, or ``out`` (which may be ``x`` itself, shifted in place).
    """
    x = _posinf_as_winners(x, axis)
    m = np.max(x, axis=axis, keepdims=True)  # (..., 1, ...)
    m[~np.isfinite(m)] = 0
    with np.errstate(over="ignore"):
        s = np.subtract(x, m, out=out)  # same shape as x
        if temperature != 1:
            s /= temperature
    return s


def _keepdims(keepdims) -> bool:
    """``keepdims`` as a bool; anything but True/False (or numpy's bools) is refused."""
    if not isinstance(keepdims, bool | np.bool_):
        raise ValueError(
            f"keepdims must be True or False, got {keepdims!r} (type {type(keepdims).__name__})"
        )
    return bool(keepdims)
