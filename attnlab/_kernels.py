"""The unchecked compute cores the numerics share: softmax in place, ``log Σ exp`` of shifted
scores, scaled scores, one online-softmax fold, and the backward pass through softmax and
attention.

Each takes arrays its caller has already checked (finite floats of the right shapes, in the
work dtype) and does no validation of its own, so the public functions that share it
(:func:`attnlab.softmax`, :func:`attnlab.scaled_dot_product_attention`,
:func:`attnlab.tiled_attention`, :mod:`attnlab.training`, ...) run one check and no second one.

>>> s = np.array([0.0, np.log(3.0)])
>>> softmax_in_place(s).round(3).tolist()
[0.25, 0.75]
"""

from __future__ import annotations

import numpy as np

from ._checks import cannot_overflow, shapes_of
from ._validate import work_dtype

__all__ = [
    "attention_backward_unchecked",
    "fold_block",
    "logsumexp_shifted",
    "normalised_exp",
    "scaled_scores",
    "softmax_in_place",
    "softmax_vjp_unchecked",
]


def normalised_exp(s, axis, all_finite=False):
    """``exp(s) / Σ exp(s)`` along ``axis``, computed in place in ``s`` and returned.

    Working in place keeps attention on long sequences to one N × N buffer instead of one per
    step (``benchmarks/numerics.py``). Shared by :func:`attnlab.softmax` and
    :func:`softmax_in_place`.

    Parameters
    ----------
    s : numpy.ndarray, shape (..., n, ...)
        Max-shifted scores (entries ``<= 0``, or a slice all ``-inf``); overwritten.
    axis : int
        The axis to normalise over.
    all_finite : bool, default False
        True when no entry is ``-inf``: skips the fix that keeps an all ``-inf`` slice at
        zeros.

    Returns
    -------
    numpy.ndarray, shape (..., n, ...)
        ``s`` itself, each slice summing to 1 (an all ``-inf`` slice: zeros).

    Examples
    --------
    >>> normalised_exp(np.array([0.0, 0.0]), -1).tolist()
    [0.5, 0.5]
    """
    np.exp(s, out=s)  # entries in [0, 1]
    total = np.sum(s, axis=axis, keepdims=True)  # (..., 1, ...), >= 1 unless all -inf
    if not all_finite:
        total[total == 0] = 1  # an all -inf slice: its zeros stay zeros
    s /= total
    return s


def softmax_in_place(s, axis=-1, all_finite=False):
    """Softmax of ``s`` along ``axis``, written into ``s`` itself and returned.

    The unchecked core that :func:`attnlab.scaled_dot_product_attention` and
    :func:`attnlab.training.head_forward` share. For callers that own a fresh float array with
    no NaN and no ``+inf`` (``-inf`` entries, i.e. masked ones, get 0): no validation pass, no
    new N × N array.

    Parameters
    ----------
    s : numpy.ndarray, shape (..., n, ...)
        Float scores, no NaN, no ``+inf``; overwritten with the weights.
    axis : int, default -1
        The axis to normalise over.
    all_finite : bool, default False
        True when there is no ``-inf`` either (nothing masked): skips the two steps that keep
        an all ``-inf`` slice at zeros.

    Returns
    -------
    numpy.ndarray, shape (..., n, ...)
        ``s`` itself, each slice along ``axis`` summing to 1 (an all ``-inf`` slice: zeros).

    Examples
    --------
    >>> s = np.array([[0.0, np.log(3.0)], [-np.inf, -np.inf]])
    >>> softmax_in_place(s) is s, np.round(s, 3).tolist()
    (True, [[0.25, 0.75], [0.0, 0.0]])
    """
    m = np.max(s, axis=axis, keepdims=True)  # (..., 1, ...)
    if not all_finite:
        m[np.isneginf(m)] = 0  # an all -inf slice stays all -inf
    s -= m  # entries <= 0
    return normalised_exp(s, axis, all_finite)


def logsumexp_shifted(s, axis):
    r"""``log Σ exp(s)`` along ``axis`` for max-shifted ``s`` (max 0, or all ``-inf``), keepdims.

    The unchecked core of :func:`attnlab.logsumexp` and :func:`attnlab.log_softmax`, shared
    with :mod:`attnlab.training`'s loss.
    Computed as scipy does: the (first) maximal entry contributes exactly
    :math:`e^0 = 1`, so :math:`\log \sum_j e^{s_j} = \operatorname{log1p}(\sum_{j \ne j^*}
    e^{s_j})`, which keeps full relative accuracy when the others are tiny
    (``log(1 + 4e-18)`` would round to 0).

    Parameters
    ----------
    s : numpy.ndarray, shape (..., n, ...)
        Float scores shifted by their max along ``axis``: every slice's max is 0, or the slice
        is all ``-inf``. Not modified.
    axis : int
        The axis to reduce.

    Returns
    -------
    numpy.ndarray, shape (..., 1, ...)
        ``log Σ exp(s)`` per slice, ``>= 0``; ``-inf`` for an all ``-inf`` slice.

    Examples
    --------
    >>> logsumexp_shifted(np.array([[0.0, 0.0], [-np.inf, -np.inf]]), -1).round(4).tolist()
    [[0.6931], [-inf]]
    """
    e = np.exp(s)  # same shape as s, entries in [0, 1]
    top = np.argmax(s, axis=axis, keepdims=True)  # (..., 1, ...) index of a 0 (the max)
    np.put_along_axis(e, top, 0.0, axis=axis)  # leave the max's exp(0) = 1 out of the sum
    rest = np.sum(e, axis=axis, keepdims=True)  # (..., 1, ...), >= 0
    empty = np.isneginf(np.max(s, axis=axis, keepdims=True))  # all -inf slice
    return np.where(empty, -np.inf, np.log1p(rest))  # (..., 1, ...)


def scaled_scores(q: np.ndarray, k: np.ndarray, scale: float) -> np.ndarray:
    """``q @ kᵀ * scale`` as a new array in the work dtype (float32 for float16).

    Refuses scores that overflow, with a message that says whether ``q·k`` itself or
    only its product with ``scale`` is too large.  When Cauchy–Schwarz already bounds
    every ``|q·k| * scale`` well below the largest float (``max ‖q_i‖ · max ‖k_j‖ · scale``,
    an O(N d) computation), the O(N²) finiteness checks are skipped: they cannot fail.

    Shared by :func:`attnlab.attention_scores`, :func:`attnlab.scaled_dot_product_attention`
    and :mod:`attnlab.tiling` (the scores of one tile).

    Parameters
    ----------
    q : numpy.ndarray, shape (..., n_q, d_k)
    k : numpy.ndarray, shape (..., n_k, d_k)
    scale : float

    Returns
    -------
    numpy.ndarray, shape (..., n_q, n_k)

    Raises
    ------
    ValueError
        A score overflows the work dtype.

    Examples
    --------
    >>> scaled_scores(np.ones((1, 4)), np.ones((2, 4)), 0.5).tolist()
    [[2.0, 2.0]]
    """
    work = work_dtype(np.result_type(q, k))
    q, k = q.astype(work, copy=False), k.astype(work, copy=False)
    kt = np.swapaxes(k, -1, -2)  # (..., d_k, n_k)
    if cannot_overflow(q, k, scale, work):
        # Scaling q (n_q · d_k numbers) instead of the scores (n_q · n_k) saves a pass over
        # the largest array; the two differ only by rounding.
        return (q * work.type(scale)) @ kt  # (..., n_q, n_k), a new array
    with np.errstate(over="ignore", invalid="ignore"):
        raw = q @ kt  # (..., n_q, n_k)
        scores = raw * scale  # (..., n_q, n_k)
    if not np.all(np.isfinite(raw)):
        raise ValueError(
            f"q and k are too large: q·k overflows {work} "
            f"(max |q| = {float(np.max(np.abs(q)))}, max |k| = {float(np.max(np.abs(k)))}); "
            f"{shapes_of(q=q, k=k)}"
        )
    if not np.all(np.isfinite(scores)):
        raise ValueError(
            f"scale = {scale!r} is too large: q·k * scale overflows {work} although q·k "
            f"itself fits (max |q·k| = {float(np.max(np.abs(raw)))}); {shapes_of(q=q, k=k)}"
        )
    return scores


def fold_block(m, l, block, *, in_place=False):
    """Fold ``block`` into the running max ``m`` and sum ``l``, no checks.

    The unchecked step of :func:`attnlab.online_softmax_update`, shared with
    :func:`attnlab.tiled_attention` and lesson 8's worked example. A max that is still ``-inf``
    (nothing but masked scores so far) is taken as 0 for the shift, so ``-inf - (-inf)`` never
    happens; every exponent is ``<= 0``.

    Parameters
    ----------
    m, l : numpy.ndarray, shape (...)
        The running max and the running sum of ``exp(score - m)``.
    block : numpy.ndarray, shape (..., b)
        The next ``b`` scores of each row: finite or ``-inf``.
    in_place : bool, default False
        The caller gives up ``block``: ``e`` is written into it (no new array of the block's
        size), and ``block`` must already have the full broadcast shape of ``m`` plus ``b``.

    Returns
    -------
    m_new, l_new : numpy.ndarray, shape (...)
        The running max and sum with the block folded in.
    rescale : numpy.ndarray, shape (...)
        ``exp(m - m_new)``, in ``[0, 1]``: what anything summed against the old max must be
        multiplied by.
    e : numpy.ndarray, shape (..., b)
        ``exp(block - m_new)``, the block's terms against the new max.

    Examples
    --------
    >>> m, l, rescale, e = fold_block(np.array(0.0), np.array(1.0), np.array([np.log(2.0)]))
    >>> float(m.round(4)), float(l), float(rescale), e.tolist()
    (0.6931, 1.5, 0.5, [1.0])
    """
    m_new = np.maximum(m, np.max(block, axis=-1))  # (...)
    shift = np.where(np.isfinite(m_new), m_new, 0)  # (...) 0 while only -inf was seen
    with np.errstate(over="ignore"):  # a huge gap can overflow to -inf: exp gives the right 0
        rescale = np.exp(m - shift)  # (...) in [0, 1]
        if in_place:
            e = np.subtract(block, shift[..., None], out=block)  # (..., b), entries <= 0
            np.exp(e, out=e)  # (..., b) in [0, 1]
        else:
            e = np.exp(block - shift[..., None])  # (..., b) in [0, 1]
    return m_new, l * rescale + np.sum(e, axis=-1), rescale, e


def softmax_vjp_unchecked(w: np.ndarray, g: np.ndarray, axis: int = -1) -> np.ndarray:
    """:func:`attnlab.softmax_vjp` without its checks: ``w * (g - (w · g))`` along ``axis``.

    Shared by :func:`attnlab.softmax_vjp`, :func:`attention_backward_unchecked` and lesson 9's
    worked examples.

    Parameters
    ----------
    w : numpy.ndarray, shape (..., n, ...)
        Softmax weights along ``axis`` (not checked).
    g : numpy.ndarray, same shape as ``w``
        ``∂L/∂weights``.
    axis : int, default -1
        The axis the softmax normalised over.

    Returns
    -------
    numpy.ndarray, same shape as ``w``
        ``∂L/∂scores``; zero where ``w`` is zero.

    Examples
    --------
    >>> softmax_vjp_unchecked(np.array([0.5, 0.5]), np.array([1.0, 0.0])).tolist()
    [0.25, -0.25]
    """
    dot = np.sum(w * g, axis=axis, keepdims=True)  # (..., 1, ...) w · g per row
    return w * (g - dot)  # (..., n, ...) zero where w is zero


def attention_backward_unchecked(q, k, v, weights, grad_output, c):
    """The gradients of :func:`attnlab.attention_backward` from the forward pass's weights,
    unchecked.

    The core of :func:`attnlab.attention_backward` and the trainers' fast path
    (:func:`attnlab.training.loss_and_grads`, :mod:`attnlab.attention_only`), which have the
    weights already.

    Parameters
    ----------
    q, k, v : numpy.ndarray
        ``(..., n_q, d_k)``, ``(..., n_k, d_k)``, ``(..., n_k, d_v)``, one float dtype.
    weights : numpy.ndarray, shape (..., n_q, n_k)
        The attention weights the forward pass computed from ``q``, ``k`` and ``c``.
    grad_output : numpy.ndarray, shape (..., n_q, d_v)
        ``∂L/∂output``.
    c : float
        The factor on ``q · k`` the forward pass used.

    Returns
    -------
    dq, dk, dv : numpy.ndarray
        Shaped like ``q``, ``k`` and ``v`` with the batch dims as broadcast (not summed back
        to each input's own shape, as :func:`attnlab.attention_backward` does).

    Examples
    --------
    >>> from attnlab import attention_backward, scaled_dot_product_attention
    >>> q = k = v = np.eye(2)                                  # (n, d) each
    >>> _, w = scaled_dot_product_attention(q, k, v)           # (n_q, n_k)
    >>> dq, dk, dv = attention_backward_unchecked(q, k, v, w, np.ones((2, 2)), 2**-0.5)
    >>> dv.round(4).tolist() == attention_backward(q, k, v, np.ones((2, 2))).v.round(4).tolist()
    True
    """
    dv = np.swapaxes(weights, -1, -2) @ grad_output  # (..., n_k, d_v)
    dw = grad_output @ np.swapaxes(v, -1, -2)  # (..., n_q, n_k)
    ds = softmax_vjp_unchecked(weights, dw)  # (..., n_q, n_k)
    dq = c * (ds @ k)  # (..., n_q, d_k)
    dk = c * (np.swapaxes(ds, -1, -2) @ q)  # (..., n_k, d_k)
    return dq, dk, dv
