r"""Online softmax: the normaliser of a softmax in one pass, block by block, with a running max.

The stable softmax (:func:`attnlab.softmax`) reads a row twice before it can
write a single weight: once to find the max :math:`m`, once to add up
:math:`\ell = \sum_j e^{x_j - m}`. The *online* form reads the row once, a block
at a time, keeping only two numbers per row: the max seen so far ``m`` and the
sum so far ``l``, measured against that max. When a block brings a larger max,
the old sum is rescaled to the new max:

.. math::

    m' = \max(m, \max_j b_j), \qquad
    \ell' = \ell \, e^{m - m'} + \sum_j e^{b_j - m'} .

After the last block ``m`` is the row max, ``l`` the usual denominator and
``m + log(l)`` the log-sum-exp; ``exp(x - m) / l`` is the softmax. Nothing
overflows, because every exponent is ``<= 0``. Writing the weights still reads
the row a second time (``exp(x - m) / l`` needs the final ``m`` and ``l``), so
a softmax whose weights are stored takes two passes instead of three; the
single pass pays off with the values: :func:`attnlab.tiling.tiled_attention`
accumulates ``exp(s - m) · v`` in the same pass and never writes the weights,
which is what lets it work without the N × N matrix.

Conventions (shared with :mod:`attnlab.softmax_family`): float16 is computed in
float32; ``-inf`` (a masked score) counts as weight 0 and a slice that is all
``-inf`` has ``m = -inf``, ``l = 0`` and softmax all zeros, never NaN. ``+inf``
and NaN are refused: a running max of ``+inf`` would need ``inf - inf``.

This module needs numpy only.
"""

import numpy as np

from . import _kernels, _validate

__all__ = ["online_softmax_update", "online_normaliser", "online_softmax"]


def online_softmax_update(m, l, block):
    r"""One step of the online softmax: fold a block of scores into the running max and sum.

    Parameters
    ----------
    m : array_like, shape (...)
        The largest score seen so far in each row; ``-inf`` before the first block.
    l : array_like, shape (...)
        :math:`\sum e^{x - m}` over the scores seen so far, ``>= 0``; 0 before
        the first block.
    block : array_like, shape (..., b)
        The next ``b >= 1`` scores of each row (along the last axis). Finite or
        ``-inf``. Its leading dims broadcast with ``m`` and ``l``.

    Returns
    -------
    m_new : ndarray, shape (...)
        ``max(m, max(block))``.
    l_new : ndarray, shape (...)
        ``l * exp(m - m_new) + sum(exp(block - m_new))``: the old sum rescaled to
        the new max, plus the block's terms. Both results are in the work dtype
        (float32 for float16 input, float64 for lists).

    Raises
    ------
    ValueError
        If an argument is not real-numeric or contains NaN; if ``block`` is 0-d,
        has an empty last axis or contains ``+inf``; if ``m`` is ``+inf`` or
        ``l`` is negative or infinite; if the shapes do not broadcast.

    Notes
    -----
    Forgetting the factor ``exp(m - m_new)`` is the classic bug: the old terms
    stay measured against a smaller max, so they are counted too large by
    ``exp(m_new - m)``. A block of only ``-inf`` leaves ``m`` and ``l`` as they
    were (or at ``-inf`` and 0 if nothing finite came yet).

    Examples
    --------
    Three blocks of one row, of different lengths, give what the whole row gives:

    >>> import numpy as np
    >>> from attnlab.softmax_family import logsumexp
    >>> m, l = -np.inf, 0.0
    >>> for block in ([1.0, 3.0], [2.0], [5.0, 0.0]):
    ...     m, l = online_softmax_update(m, l, block)
    >>> float(m), round(float(l), 4)
    (5.0, 1.2102)
    >>> bool(np.isclose(m + np.log(l), logsumexp([1.0, 3.0, 2.0, 5.0, 0.0])))
    True

    Without the rescale, the three terms summed against the old max 3 are never
    shrunk by ``exp(3 - 5)`` when block 3 brings the max 5, and the sum is too big:

    >>> m, l = -np.inf, 0.0
    >>> for block in ([1.0, 3.0], [2.0], [5.0, 0.0]):
    ...     m_new = max(m, max(block))
    ...     l = l + np.sum(np.exp(np.array(block) - m_new))   # bug: l not rescaled
    ...     m = m_new
    >>> round(float(l), 4)
    2.51

    Scores of 1e4 are no problem; a masked block changes nothing:

    >>> m, l = online_softmax_update(-np.inf, 0.0, [1e4, 1e4 - 1])
    >>> m, l = online_softmax_update(m, l, [-np.inf, -np.inf])
    >>> float(m), round(float(l), 4)
    (10000.0, 1.3679)
    """
    block = _no_posinf(_validate.as_float_array(block, "block", min_ndim=1), "block")
    _validate.normalize_axis(-1, block.shape, "block")
    m = _validate.as_float_array(m, "m")
    l = _validate.as_float_array(l, "l", allow_inf=False)
    if np.any(np.isposinf(m)):
        raise ValueError(f"m must be finite or -inf (nothing seen yet), got +inf: shape {m.shape}")
    if np.any(l < 0):
        raise ValueError(f"l must be >= 0 (a sum of exponentials), got min {float(l.min())}")
    try:
        np.broadcast_shapes(m.shape, l.shape, block.shape[:-1])
    except ValueError:
        raise ValueError(
            f"m, l and block[..., 0] must broadcast: m has shape {m.shape}, l has shape "
            f"{l.shape}, block has shape {block.shape} (one running max and sum per row)"
        ) from None
    work = _validate.work_dtype(np.result_type(m, l, block))
    m_new, l_new, _, _ = _kernels.fold_block(m.astype(work), l.astype(work), block.astype(work))
    return m_new, l_new


def online_normaliser(x, axis=-1, block_size=64):
    r"""The max ``m`` and the sum ``l = Σ exp(x - m)`` of each slice, in one blockwise pass.

    Parameters
    ----------
    x : array_like, shape (..., n, ...)
        Scores, finite or ``-inf``; no NaN or ``+inf``.
    axis : int, default -1
        The axis to normalise over; it must have at least one entry.
    block_size : int, default 64
        How many entries of each slice are read per step, ``>= 1``. It need not
        divide ``n``; ``1`` is the element-by-element textbook form and
        ``>= n`` reads the slice in one go.

    Returns
    -------
    m : ndarray, shape of ``x`` with length 1 along ``axis``
        The slice max (``-inf`` for an all ``-inf`` slice).
    l : ndarray, same shape as ``m``
        :math:`\sum_j e^{x_j - m}`, between 1 and ``n`` (0 for an all ``-inf``
        slice). Both in the work dtype (float32 for float16).

    Raises
    ------
    ValueError
        If ``x`` is not real-numeric, is 0-d, contains NaN or ``+inf``; if
        ``axis`` is out of range or empty; if ``block_size`` is not an int ``>= 1``.

    Examples
    --------
    >>> import numpy as np
    >>> from attnlab.softmax_family import logsumexp
    >>> x = np.array([[1.0, 0.5, 2.5, -0.1], [1e4, 0.0, 1e4, -np.inf]])
    >>> m, l = online_normaliser(x, block_size=3)   # 3 does not divide 4
    >>> m.ravel().tolist(), np.round(l.ravel(), 4).tolist()
    ([2.5, 10000.0], [1.4328, 2.0])
    >>> np.allclose((m + np.log(l)).ravel(), logsumexp(x))
    True
    >>> online_normaliser([-np.inf, -np.inf])
    (array([-inf]), array([0.]))
    """
    work, ax, _ = _prepare(x, axis, block_size)
    m = np.full(work.shape[:-1], -np.inf, dtype=work.dtype)  # (...) nothing seen yet
    l = np.zeros(work.shape[:-1], dtype=work.dtype)  # (...)
    for block in _blocks(work, block_size):  # block: (..., <= block_size)
        m, l, _, _ = _kernels.fold_block(m, l, block)
    return np.expand_dims(m, ax), np.expand_dims(l, ax)


def online_softmax(x, axis=-1, block_size=64):
    r"""Softmax along ``axis`` from the online normaliser: ``exp(x - m) / l``.

    Equal (to rounding) to :func:`attnlab.softmax`, but its max and sum come
    from one blockwise pass (:func:`online_normaliser`) instead of two; writing
    the weights is a second pass over ``x``.

    Parameters
    ----------
    x : array_like, shape (..., n, ...)
        Scores, finite or ``-inf``; no NaN or ``+inf``.
    axis : int, default -1
        Axis to normalise over; it must have at least one entry.
    block_size : int, default 64
        Entries read per step, ``>= 1``; need not divide ``n``.

    Returns
    -------
    p : ndarray, same shape and float dtype as ``x``
        Non-negative, sums to 1 along ``axis``; an all ``-inf`` slice gives
        all zeros. float16 is computed in float32 and rounded once.

    Raises
    ------
    ValueError
        As :func:`online_normaliser`.

    Examples
    --------
    >>> import numpy as np
    >>> np.round(online_softmax([1.0, 0.5, 2.5, -0.1], block_size=1), 3).tolist()
    [0.156, 0.094, 0.698, 0.052]

    Two passes or one, the weights are the same, and neither overflows where the
    textbook formula does:

    >>> from attnlab.softmax_family import naive_softmax, softmax
    >>> x = np.array([1000.0, 999.0, 0.0])
    >>> naive_softmax(x).tolist()
    [nan, nan, 0.0]
    >>> bool(np.allclose(online_softmax(x, block_size=2), softmax(x)))
    True

    Masked entries get exactly 0; a fully masked row gets zeros, dtype kept:

    >>> p = online_softmax(np.array([[0.0, -np.inf], [-np.inf, -np.inf]], dtype=np.float16))
    >>> p.dtype, p.tolist()
    (dtype('float16'), [[1.0, 0.0], [0.0, 0.0]])
    """
    work, ax, dtype = _prepare(x, axis, block_size)
    m, l = online_normaliser(work, -1, block_size)  # (..., 1) each
    shift = np.where(np.isfinite(m), m, 0)  # (..., 1)
    with np.errstate(over="ignore"):
        e = np.exp(work - shift)  # (..., n) in [0, 1]
    p = np.divide(e, l, out=np.zeros_like(e), where=l > 0)  # (..., n)
    return np.moveaxis(p, -1, ax).astype(dtype, copy=False)


# ---------------------------------------------------------------- helpers (private)
def _no_posinf(arr: np.ndarray, name: str) -> np.ndarray:
    n_pos = int(np.count_nonzero(np.isposinf(arr)))
    if n_pos:
        raise ValueError(
            f"{name} contains +inf ({n_pos} of {arr.size} entries): got shape {arr.shape} and "
            f"dtype {arr.dtype}; a running max of +inf would need inf - inf. Scores may be "
            "finite or -inf (masked)"
        )
    return arr


def _blocks(x: np.ndarray, block_size: int):
    """The blocks of ``x`` along its last axis; the last one may be shorter."""
    n = x.shape[-1]
    return (x[..., start : start + block_size] for start in range(0, n, block_size))


def _prepare(x, axis, block_size):
    """Validate; return x in the work dtype with ``axis`` moved last, the axis, the dtype."""
    arr = _no_posinf(_validate.as_float_array(x, "x", min_ndim=1), "x")
    ax = _validate.normalize_axis(axis, arr.shape, "x")
    _validate.positive_int(block_size, "block_size")
    work = _validate.work_dtype(arr.dtype)
    return np.moveaxis(arr, ax, -1).astype(work, copy=False), ax, arr.dtype
