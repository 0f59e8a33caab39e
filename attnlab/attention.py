r"""Scaled dot-product attention, :math:`\operatorname{softmax}(Q K^\top / \sqrt{d_k})\, V`.

Shapes follow the usual convention, with any number of leading batch (or
head) dimensions that broadcast by numpy rules:

=========  ====================  =========================================
name       shape                 meaning
=========  ====================  =========================================
``q``      ``(..., n_q, d_k)``   one row per query
``k``      ``(..., n_k, d_k)``   one row per key
``v``      ``(..., n_k, d_v)``   one value row per key
scores     ``(..., n_q, n_k)``   ``q · k / sqrt(d_k)`` for every pair
weights    ``(..., n_q, n_k)``   softmax of each scores row
output     ``(..., n_q, d_v)``   weights-averaged values
=========  ====================  =========================================

This module needs numpy only.
"""

import numpy as np

from . import _checks, _kernels, _validate

__all__ = ["scaled_dot_product_attention", "attention_scores", "causal_mask", "padding_mask"]


def attention_scores(q, k, scale=None):
    r"""The scaled score matrix :math:`Q K^\top \cdot \text{scale}` (default scale ``1/√d_k``).

    Parameters
    ----------
    q : array_like, shape (..., n_q, d_k)
        Queries, finite real numbers.
    k : array_like, shape (..., n_k, d_k)
        Keys; same ``d_k`` as ``q``; leading dims broadcast with ``q``'s.
    scale : float, optional
        Finite and > 0.  Defaults to ``1 / sqrt(d_k)``.

    Returns
    -------
    scores : ndarray, shape (..., n_q, n_k)
        ``scores[..., i, j] = scale * sum_d q[..., i, d] * k[..., j, d]``, in the
        common float dtype of ``q`` and ``k``.

    Raises
    ------
    ValueError
        If ``q`` or ``k`` is non-numeric, contains NaN/inf or has fewer than 2
        dims; if their ``d_k`` differ or is 0; if ``k`` has no rows; if their
        batch dims do not broadcast; if ``scale`` is not finite and > 0; if
        the scores overflow.

    Notes
    -----
    Why ``1/√d_k``: if the entries of ``q`` and ``k`` are independent with
    mean 0 and variance 1, ``q · k`` has variance ``d_k``; the scale brings it
    back to 1 so softmax does not saturate as ``d_k`` grows.
    float16 inputs are multiplied in float32 and the scores rounded to float16
    at the end, so scores beyond ±65504 come back as ``±inf``
    (:func:`scaled_dot_product_attention` uses the float32 scores directly and
    is not affected).

    Examples
    --------
    >>> import numpy as np
    >>> q = np.array([[1.0, 0.0, 1.0, 0.0]])               # n_q = 1, d_k = 4
    >>> k = np.array([[1.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 1.0]])
    >>> attention_scores(q, k).tolist()                     # (1·1 + 1·1) / √4
    [[1.0, 0.0]]
    >>> attention_scores(q, k, scale=1.0).tolist()
    [[2.0, 0.0]]
    >>> attention_scores(np.ones((2, 3, 4)), np.ones((5, 4))).shape
    (2, 3, 5)
    """
    q, k = _checks.check_qk(q, k)
    c = _checks.resolve_scale(scale, q.shape[-1])
    scores = _kernels.scaled_scores(q, k, c)  # (..., n_q, n_k)
    with np.errstate(over="ignore"):  # float32 -> float16 may overflow to ±inf
        return scores.astype(np.result_type(q, k), copy=False)


def scaled_dot_product_attention(q, k, v, mask=None, scale=None, *, causal: bool = False):
    r"""Attention :math:`\operatorname{softmax}(Q K^\top \cdot \text{scale}) V`, optionally masked.

        Parameters
        ----------
        q : array_like, shape (..., n_q, d_k)
            Queries.  All of ``q``, ``k``, ``v`` must be finite real numbers.
        k : array_like, shape (..., n_k, d_k)
            Keys; same ``d_k`` as ``q``, at least one key.
        v : array_like, shape (..., n_k, d_v)
            Values; one row per key (same ``n_k`` as ``k``).  The leading (batch)
            dims of ``q``, ``k`` and ``v`` broadcast together.
        mask : array_like of bool, optional
            Broadcastable to ``(..., n_q, n_k)``; ``True`` = query ``i`` may attend
            to key ``j``.  A float (0 / -inf) or 0/1 integer mask is rejected;
            convert it with ``mask == 0`` or ``mask.astype(bool)``.
        scale : float, optional
            Finite and > 0.  Defaults to ``1 / sqrt(d_k)``.
        causal : bool, default False
            Also apply :func:`causal_mask` ``(n_q, n_k)``: query ``i`` sees key ``j``
            iff ``j <= i + (n_k - n_q)`` (``j <= i`` when ``n_q == n_k``), the
            alignment of :func:`attnlab.tiling.tiled_attention`'s ``causal``.  With
            a ``mask`` too, a key must be allowed by both.

        Returns
        -------
        output : ndarray, shape (..., n_q, d_v)
            Row ``i`` is ``sum_j weights[..., i, j] * v[..., j, :]``.  ``...`` is
            the broadcast of the batch dims of ``q``, ``k`` and ``v``.
        weights : ndarray, shape (..., n_q, n_k)
            Same ``...`` as ``output`` (a fresh array, even when only ``v`` has
            batch dims).  Each row sums to 1; masked entries are exactly 0.  A
            fully masked row has all-zero weights and a zero output row (not NaN).

        Raises
        ------
        ValueError
            Bad dtype, NaN/inf, fewer than 2 dims, ``d_k`` of ``q`` and ``k`` or
            ``n_k`` of ``k`` and ``v`` differ, batch dims that do not broadcast,
            non-boolean or non-broadcastable ``mask``, bad ``scale``, a ``causal``
            that is not a bool.  The message names the arguments involved and their
            shapes.

        Notes
        -----
        The result dtype is the common float dtype of ``q``, ``k``, ``v`` (lists
        and ints count as float64).  float16 inputs are computed in float32 —
        scores, softmax and the weighted sum — and rounded to float16 once at the
        end, so e.g. ``d_k = 64`` and entries of 100 (scores ≈ 80 000 > 65 504)
        still work.  Masking sets scores to ``-inf`` before the softmax, which
        gives masked weights of exactly 0.  Inputs are never modified.

        Examples
        --------
        >>> import numpy as np
        >>> q = np.array([[1.0, 0.0], [0.0, 1.0]])       # n_q = 2, d_k = 2
        >>> k = np.array([[1.0, 0.0], [0.0, 1.0]])       # n_k = 2
        >>> v = np.array([[10.0, 0.0], [0.0, 10.0]])     # d_v = 2
        >>> out, w = scaled_dot_product_attention(q, k, v, scale=100.0)
        >>> np.round(w, 3).tolist()                       # each query picks its key
        [[1.0, 0.0], [0.0, 1.0]]
        >>> np.round(out, 3).tolist()
        [[10.0, 0.0], [0.0, 10.0]]

        A causal mask: query 0 may only look at key 0; masked weights are exactly 0:

        >>> out, w = scaled_dot_product_attention(q, k, v, mask=causal_mask(2))
        >>> w[0].tolist(), np.round(w[1], 3).tolist()
        ([1.0, 0.0], [0.33, 0.67])

    ``causal=True`` applies the same mask, and combines with any other mask by AND:

        >>> bool(np.array_equal(scaled_dot_product_attention(q, k, v, causal=True)[1], w))
        True
        >>> keys_0 = [[True, False]]                      # a key mask: only key 0 is real
        >>> scaled_dot_product_attention(q, k, v, mask=keys_0, causal=True)[1].tolist()
        [[1.0, 0.0], [1.0, 0.0]]

        A fully masked row gives zeros, not NaN:

        >>> out, w = scaled_dot_product_attention(q, k, v, mask=[[True, True], [False, False]])
        >>> w[1].tolist(), out[1].tolist()
        ([0.0, 0.0], [0.0, 0.0])
    """
    q, k, v, batch = _checks.check_qkv(q, k, v)  # batch: the common "..." of every result
    dtype = np.result_type(q, k, v)
    c = _checks.resolve_scale(scale, q.shape[-1])
    scores = _kernels.scaled_scores(q, k, c)  # (q/k batch, n_q, n_k), work dtype
    shape = batch + scores.shape[-2:]  # (..., n_q, n_k)
    allowed = None
    if mask is not None or causal is not False:  # the no-mask path skips every mask step
        allowed = _allowed(mask, causal, shape, q, k, v)  # broadcasts to (..., n_q, n_k)
        if allowed is not None:
            scores = np.where(allowed, scores, -np.inf)  # a new array
    if scores.shape != shape:  # batch dims that only v (or the mask) has: a copy for each
        scores = np.broadcast_to(scores, shape).copy()
    # (..., n_q, n_k); an all -inf (fully masked) row gives zeros
    weights = _kernels.softmax_in_place(scores, axis=-1, all_finite=allowed is None)
    output = weights @ v.astype(weights.dtype, copy=False)  # (..., n_q, d_v)
    output += 0.0  # turns -0.0 into 0.0
    return output.astype(dtype, copy=False), weights.astype(dtype, copy=False)


def causal_mask(n_q, n_k=None):
    """Boolean causal mask: query ``i`` may attend to key ``j`` iff ``j <= i + (n_k - n_q)``.

    Parameters
    ----------
    n_q : int
        Number of queries, >= 1.
    n_k : int, optional
        Number of keys, >= 1.  Defaults to ``n_q`` (self-attention), where the
        rule is simply ``j <= i``: no peeking at later positions.

    Returns
    -------
    mask : ndarray of bool, shape (n_q, n_k)
        Lower-triangular ``True`` block, for the ``mask`` argument of
        :func:`scaled_dot_product_attention`.

    Raises
    ------
    ValueError
        If ``n_q`` or ``n_k`` is not an int >= 1 (bools and floats are refused).

    Notes
    -----
    The queries are aligned with the *last* ``n_q`` keys (the decoding case:
    ``n_k - n_q`` earlier keys are cached, then the new queries arrive), so
    when ``n_k > n_q`` query ``i`` sees keys ``0 .. i + (n_k - n_q)`` and the
    last query sees every key.  When ``n_k < n_q`` the same rule leaves the
    first ``n_q - n_k`` queries with no key at all: their rows are all
    ``False`` and attention returns zero weights and a zero output for them.

    This *bottom-right* alignment differs from PyTorch's
    ``torch.nn.functional.scaled_dot_product_attention(..., is_causal=True)``,
    which aligns the mask *top-left* (``j <= i``, i.e.
    ``torch.ones(n_q, n_k).tril()``); PyTorch's bottom-right variant is
    ``torch.nn.attention.bias.causal_lower_right``.  The two agree only when
    ``n_q == n_k``.  The top-left mask in numpy is ``np.tri(n_q, n_k, dtype=bool)``.

    Examples
    --------
    >>> causal_mask(3).astype(int).tolist()
    [[1, 0, 0], [1, 1, 0], [1, 1, 1]]
    >>> causal_mask(2, 4).astype(int).tolist()      # 2 new queries after 2 cached keys
    [[1, 1, 1, 0], [1, 1, 1, 1]]
    >>> np.tri(2, 4, dtype=int).tolist()             # torch's is_causal=True (top-left)
    [[1, 0, 0, 0], [1, 1, 0, 0]]
    """
    n_q = _validate.positive_int(n_q, "n_q")
    n_k = n_q if n_k is None else _validate.positive_int(n_k, "n_k")
    return np.tri(n_q, n_k, k=n_k - n_q, dtype=bool)  # (n_q, n_k)


def padding_mask(lengths, n_k):
    """Boolean key mask for a batch of sequences padded to ``n_k`` positions.

    Parameters
    ----------
    lengths : array_like of int, shape (batch,)
        The real length of each sequence, ``0 <= length <= n_k``; positions from
        ``length`` on are padding.
    n_k : int
        The padded length, >= 1.

    Returns
    -------
    mask : ndarray of bool, shape (batch, 1, n_k)
        ``True`` on real keys. The middle axis of size 1 broadcasts over the queries, so
        the mask fits the ``mask`` argument of :func:`scaled_dot_product_attention` for
        scores of shape ``(batch, n_q, n_k)``. A length of 0 masks every key: attention
        then returns zero weights and a zero output for that sequence (not NaN).

    Raises
    ------
    ValueError
        If ``lengths`` is not a 1-D array of integers in ``0 .. n_k``, or ``n_k`` is not
        an int >= 1.

    Examples
    --------
    >>> padding_mask([3, 1], 4).astype(int).tolist()
    [[[1, 1, 1, 0]], [[1, 0, 0, 0]]]
    """
    n_k = _validate.positive_int(n_k, "n_k")
    raw = np.asarray(lengths)
    if raw.ndim != 1 or raw.dtype.kind not in "iu":
        raise ValueError(
            f"lengths must be a 1-D array of integers, one per sequence; got shape {raw.shape} "
            f"and dtype {raw.dtype}"
        )
    if raw.size and (raw.min() < 0 or raw.max() > n_k):
        raise ValueError(f"lengths must lie in 0 .. n_k = {n_k}; got {raw.tolist()}")
    return (np.arange(n_k) < raw[:, None])[:, None, :]  # (batch, 1, n_k)


# ---------------------------------------------------------------- helpers (private)


def _allowed(mask, causal, scores_shape: tuple, q, k, v) -> np.ndarray | None:
    """``mask`` AND the causal mask, checked against the scores; None when nothing is masked.

    >>> q, k = np.zeros((2, 1)), np.zeros((3, 1))       # n_q = 2 queries, n_k = 3 keys
    >>> _allowed(None, True, (2, 3), q, k, k).astype(int).tolist()
    [[1, 1, 0], [1, 1, 1]]
    """
    allowed = None if mask is None else _checks.check_mask(mask, scores_shape, q, k, v)
    if _checks.check_causal(causal):
        n_q, n_k = scores_shape[-2:]
        below = np.tri(n_q, n_k, k=n_k - n_q, dtype=bool)  # (n_q, n_k), as causal_mask
        allowed = below if allowed is None else allowed & below
    return allowed
