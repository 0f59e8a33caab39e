r"""Where is each token? Positions for attention: sinusoidal, learned, rotary (RoPE) and ALiBi.

Attention by itself, without a causal mask, does not know where a token is: permute the rows
of ``q``, ``k`` and ``v`` together and the output rows come out permuted the same way
(:func:`permute_tokens` shows it). A causal mask breaks that symmetry (the first token can
only attend to itself), and models with no positions at all do exist, but nearly every
transformer adds positions, most often in one of four ways:

* **sinusoidal** [1]_: ``x + PE[pos]`` before the projections (:func:`sinusoidal_positions`);
* **learned absolute** [4]_: ``x + table[pos]``, one trained row per position
  (:func:`learned_positions`);
* **rotary, RoPE** [2]_: ``q`` and ``k`` turned pairwise by ``pos · θ_i`` (:func:`apply_rope`,
  :func:`rope_scores`);
* **ALiBi** [3]_: ``-m_h · distance`` added to every score (:func:`alibi_slopes`,
  :func:`alibi_bias`).

Both the sinusoidal encoding and RoPE use the frequencies of :func:`position_frequencies`,
``θ_i = base^(-2i/d)`` for ``i = 0 .. d/2 - 1`` (``base = 10000`` in both papers).

**Pairing convention.** Dimensions are paired *consecutively*: pair ``i`` is dimensions
``(2i, 2i+1)``, as in the papers' formulas (Vaswani et al.'s ``PE(pos, 2i)``,
``PE(pos, 2i+1)``; RoFormer's block-diagonal rotation, eq. 15) and in Meta's original LLaMA
code. GPT-NeoX, and Hugging Face's Llama after it, pair dimension ``i`` with ``i + d/2``
instead ("rotate half"). The two are the same rotation after a fixed reordering of the
``d`` dimensions, so a model trained with one works with the other only once its ``W_Q`` and
``W_K`` columns are reordered the same way; mixing them up silently gives wrong scores.

Dtypes: angles ``position × θ_i`` are always computed in float64 (float32 numbers near
100 000 are 1/128 apart, too coarse for an angle in radians); the arrays a function is given
keep their float dtype in what it returns (float16 is rotated in float32 and rounded once).
Inputs are never modified. This module needs numpy only.

References
----------
.. [1] A. Vaswani et al., "Attention Is All You Need", NeurIPS 2017, §3.5 "Positional
   Encoding".
.. [2] J. Su, Y. Lu, S. Pan, A. Murtadha, B. Wen, Y. Liu, "RoFormer: Enhanced Transformer
   with Rotary Position Embedding", arXiv:2104.09864, 2021.
.. [3] O. Press, N. A. Smith, M. Lewis, "Train Short, Test Long: Attention with Linear
   Biases Enables Input Length Extrapolation", ICLR 2022.
.. [4] A. Radford, J. Wu, R. Child, D. Luan, D. Amodei, I. Sutskever, "Language Models are
   Unsupervised Multitask Learners" (GPT-2), OpenAI, 2019.
"""

import numpy as np

from . import _validate
from .attention import attention_scores

__all__ = [
    "position_frequencies",
    "sinusoidal_positions",
    "learned_positions",
    "rope_angles",
    "apply_rope",
    "rope_scores",
    "alibi_slopes",
    "alibi_bias",
    "permute_tokens",
]


def position_frequencies(d, base=10000.0):
    r"""The frequencies :math:`\theta_i = \text{base}^{-2i/d}` of the ``d/2`` dimension pairs.

    Pair ``i`` (dimensions ``2i`` and ``2i+1``) turns by ``θ_i`` radians per position: pair 0
    by one radian, the last pair by almost ``1/base``, so the slowest pair takes about
    ``2π · base`` positions to come round.

    Parameters
    ----------
    d : int
        The number of dimensions, even and >= 2.
    base : float, default 10000.0
        Finite and > 0; the papers use 10000.

    Returns
    -------
    theta : ndarray of float64, shape (d // 2,)
        Decreasing from 1.

    Raises
    ------
    ValueError
        ``d`` is not a positive even int, or ``base`` is not finite and > 0.

    Examples
    --------
    >>> position_frequencies(4, base=100.0).tolist()
    [1.0, 0.1]
    """
    d = _even_dimension(d, "d")
    base = _validate.positive_finite(base, "base")
    return base ** (-np.arange(0, d, 2) / d)  # (d/2,)


def sinusoidal_positions(n_positions, d_model, base=10000.0):
    r"""The sinusoidal position encoding of Vaswani et al. (2017), §3.5.

    .. math::

        PE_{pos,\,2i} = \sin(pos\,\theta_i), \qquad PE_{pos,\,2i+1} = \cos(pos\,\theta_i),
        \qquad \theta_i = \text{base}^{-2i/d}

    Row ``pos`` is added to the embedding of the token at position ``pos``. Because each
    pair ``(sin, cos)`` shares one frequency, the dot product of two rows,
    ``PE[m] · PE[n] = Σ_i cos((m − n) θ_i)``, depends only on the offset ``m − n``.

    Parameters
    ----------
    n_positions : int
        Number of positions (rows), >= 1: positions ``0 .. n_positions - 1``.
    d_model : int
        Width of the encoding, even and >= 2.
    base : float, default 10000.0
        Finite and > 0.

    Returns
    -------
    pe : ndarray of float64, shape (n_positions, d_model)
        Sines in the even columns, cosines in the odd ones (interleaved, as the paper's
        formula; some code, e.g. tensor2tensor's, puts all sines first, then all cosines).

    Raises
    ------
    ValueError
        ``n_positions`` is not an int >= 1, ``d_model`` not a positive even int, or ``base``
        not finite and > 0.

    Examples
    --------
    >>> pe = sinusoidal_positions(3, 4, base=100.0)
    >>> pe.round(3).tolist()
    [[0.0, 1.0, 0.0, 1.0], [0.841, 0.54, 0.1, 0.995], [0.909, -0.416, 0.199, 0.98]]
    >>> round(float(pe[2] @ pe[1]), 4), round(float(pe[1] @ pe[0]), 4)   # offset 1 twice
    (1.5353, 1.5353)
    """
    n_positions = _validate.positive_int(n_positions, "n_positions")
    theta = position_frequencies(_even_dimension(d_model, "d_model"), base)  # (d/2,)
    angles = np.arange(n_positions)[:, None] * theta  # (n, d/2)
    pe = np.empty((n_positions, theta.size * 2))  # (n, d)
    pe[:, 0::2] = np.sin(angles)
    pe[:, 1::2] = np.cos(angles)
    return pe


def learned_positions(table, positions):
    """Look up learned absolute positions (GPT-2's way): row ``pos`` of a trained table.

    A model with learned positions has one trained vector per position up to the length it
    was trained on, and nothing beyond it: this is their limit, and the lookup says so
    instead of wrapping round (numpy would read ``table[-1]`` for position ``-1``).

    Parameters
    ----------
    table : array_like, shape (n_max, d)
        The learned position vectors, one row per position ``0 .. n_max - 1``; finite.
    positions : array_like of int, any shape (...)
        The positions to look up, each in ``0 .. n_max - 1``.

    Returns
    -------
    rows : ndarray, shape (..., d)
        A new array, in ``table``'s float dtype.

    Raises
    ------
    ValueError
        ``table`` is not a finite 2-D float array with at least one row; ``positions`` holds
        something other than integers, or a position outside ``0 .. n_max - 1``.

    Examples
    --------
    >>> table = np.array([[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]])   # trained on 3 positions
    >>> learned_positions(table, [2, 0]).tolist()
    [[4.0, 5.0], [0.0, 1.0]]
    >>> learned_positions(table, [3])
    Traceback (most recent call last):
    ...
    ValueError: positions must lie in 0 .. 2 (table has shape (3, 2): one learned row per \
position up to 2); got 3. A learned table has nothing for a position it was not trained on
    """
    table = _validate.as_float_array(table, "table", allow_inf=False)
    if table.ndim != 2 or table.shape[0] == 0:
        raise ValueError(
            f"table must have shape (n_max, d) with n_max >= 1, one row per position; "
            f"got shape {table.shape}"
        )
    raw = np.asarray(positions)
    if raw.dtype.kind not in "iu":
        raise ValueError(f"positions must be integers, got shape {raw.shape} and dtype {raw.dtype}")
    n_max = table.shape[0]
    if raw.size and (raw.min() < 0 or raw.max() >= n_max):
        bad = raw.max() if raw.max() >= n_max else raw.min()
        raise ValueError(
            f"positions must lie in 0 .. {n_max - 1} (table has shape {table.shape}: one "
            f"learned row per position up to {n_max - 1}); got {int(bad)}. A learned table "
            "has nothing for a position it was not trained on"
        )
    return table[raw]  # (..., d), fancy indexing makes a copy


def rope_angles(positions, d, base=10000.0):
    r"""The rotation angles of RoPE: ``angles[..., i] = positions[...] · θ_i``.

    Parameters
    ----------
    positions : array_like, any shape (...)
        Token positions: finite real numbers (usually the integers ``0, 1, 2, ...``).
    d : int
        The head dimension, even and >= 2.
    base : float, default 10000.0
        Finite and > 0.

    Returns
    -------
    angles : ndarray of float64, shape (..., d // 2)
        In radians, not reduced modulo 2π.

    Raises
    ------
    ValueError
        ``positions`` is not a finite real array, ``d`` not a positive even int, ``base``
        not finite and > 0.

    Examples
    --------
    >>> rope_angles([0, 1, 2], 4, base=100.0).tolist()
    [[0.0, 0.0], [1.0, 0.1], [2.0, 0.2]]
    """
    positions = _validate.as_float_array(positions, "positions", allow_inf=False)
    theta = position_frequencies(d, base)  # (d/2,)
    return positions.astype(np.float64)[..., None] * theta  # (..., d/2)


def apply_rope(x, positions, base=10000.0):
    r"""Rotary position embedding (RoPE, Su et al. 2021): rotate each pair by ``pos · θ_i``.

    Row ``m`` of ``x`` (at position ``positions[m]``) has each pair of dimensions
    ``(2i, 2i+1)`` turned by the angle ``positions[m] · θ_i``
    (:func:`position_frequencies`):

    .. math::

        \begin{pmatrix} y_{2i} \\ y_{2i+1} \end{pmatrix} =
        \begin{pmatrix} \cos m\theta_i & -\sin m\theta_i \\
                        \sin m\theta_i & \cos m\theta_i \end{pmatrix}
        \begin{pmatrix} x_{2i} \\ x_{2i+1} \end{pmatrix}

    Applied to queries and keys (never to values), it makes ``q_m · k_n`` depend on the
    positions only through ``m − n``: rotating both by the same extra angle changes
    nothing (:func:`rope_scores`). In complex numbers, pair ``i`` is
    ``x_{2i} + i x_{2i+1}`` multiplied by ``e^{i m θ_i}``.

    Parameters
    ----------
    x : array_like, shape (..., n, d)
        Queries or keys, finite; ``d`` even. Leading dims (batch, heads) are kept.
    positions : array_like, shape (n,) or broadcastable to (..., n)
        The position of each row; finite real numbers, usually ``0 .. n - 1``.
    base : float, default 10000.0
        Finite and > 0.

    Returns
    -------
    rotated : ndarray, shape (..., n, d)
        A new array in ``x``'s float dtype (lists and ints give float64; float16 is rotated
        in float32). Each pair keeps its length, so every row keeps its norm.

    Raises
    ------
    ValueError
        ``x`` is not a finite real array with at least 2 dims and an even last dimension;
        ``positions`` is not finite or does not broadcast to ``x.shape[:-1]``; ``base`` is
        not finite and > 0. The message names the argument and the shapes.

    Notes
    -----
    Pairs are consecutive dimensions ``(2i, 2i+1)`` (RoFormer's formula). GPT-NeoX and
    Hugging Face's Llama pair ``i`` with ``i + d/2`` ("rotate half"): the same rotations on
    reordered dimensions, so weights trained with one convention need their ``W_Q``/``W_K``
    columns reordered for the other.

    Examples
    --------
    >>> x = np.array([[1.0, 0.0, 1.0, 0.0]] * 3)                  # the same row at 0, 1, 2
    >>> apply_rope(x, [0, 1, 2], base=100.0).round(3).tolist()
    [[1.0, 0.0, 1.0, 0.0], [0.54, 0.841, 0.995, 0.1], [-0.416, 0.909, 0.98, 0.199]]
    >>> apply_rope(np.ones((2, 3)), [0, 1])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: x must have an even, non-zero last dimension d (...); x has shape (2, 3)
    """
    return _rotate(x, positions, base, "x", "positions")


def rope_scores(q, k, q_positions, k_positions, *, base=10000.0, scale=None):
    r"""Attention scores with RoPE: ``apply_rope(q, q_positions) · apply_rope(k, k_positions)``.

    The score of query ``m`` and key ``n`` is ``scale · (R_m q_m) · (R_n k_n)
    = scale · q_m · R_{n − m} k_n``, because the rotations ``R`` are orthogonal and
    ``R_mᵀ R_n = R_{n−m}``: it depends on the positions only through their offset.
    Shifting every position by the same amount leaves every score unchanged.

    Parameters
    ----------
    q : array_like, shape (..., n_q, d)
        Queries, finite; ``d`` even.
    k : array_like, shape (..., n_k, d)
        Keys; same ``d``; leading dims broadcast with ``q``'s.
    q_positions : array_like, shape (n_q,) or broadcastable to (..., n_q)
        The position of each query.
    k_positions : array_like, shape (n_k,) or broadcastable to (..., n_k)
        The position of each key.
    base : float, default 10000.0
        Finite and > 0.
    scale : float, optional
        Finite and > 0; defaults to ``1 / sqrt(d)``, as
        :func:`attnlab.attention.attention_scores`.

    Returns
    -------
    scores : ndarray, shape (..., n_q, n_k)
        In the common float dtype of ``q`` and ``k``.

    Raises
    ------
    ValueError
        Any check of :func:`apply_rope` (naming ``q``/``q_positions`` or
        ``k``/``k_positions``) or of :func:`attnlab.attention.attention_scores`.

    Examples
    --------
    >>> q, k = np.array([[1.0, 2.0]]), np.array([[0.5, -1.0]])
    >>> a = rope_scores(q, k, [3], [1], scale=1.0)          # offset 2
    >>> b = rope_scores(q, k, [10], [8], scale=1.0)         # offset 2, both moved by 7
    >>> bool(np.allclose(a, b)), a.round(4).tolist()
    (True, [[-1.1944]])
    """
    q_rot = _rotate(q, q_positions, base, "q", "q_positions")  # (..., n_q, d)
    k_rot = _rotate(k, k_positions, base, "k", "k_positions")  # (..., n_k, d)
    return attention_scores(q_rot, k_rot, scale=scale)  # (..., n_q, n_k)


def alibi_slopes(n_heads):
    r"""ALiBi's head slopes ``m_h`` (Press et al. 2022), geometric if ``n_heads`` is a power of 2.

    For ``n`` heads, a power of 2, the slopes are ``2^(-8/n), 2^(-16/n), …, 2^(-8)``: for
    8 heads ``1/2, 1/4, …, 1/256``. For other ``n`` the paper takes the ``2^⌊log2 n⌋``
    slopes of the power of 2 below ``n``, then every other slope of ``2 · 2^⌊log2 n⌋``
    heads (the ones that fall between them) until there are ``n``.

    Parameters
    ----------
    n_heads : int
        Number of heads, >= 1.

    Returns
    -------
    slopes : ndarray of float64, shape (n_heads,)
        In (0, 1), as the paper's reference code orders them.

    Raises
    ------
    ValueError
        ``n_heads`` is not an int >= 1.

    Examples
    --------
    >>> alibi_slopes(8).tolist() == [2.0 ** -h for h in range(1, 9)]
    True
    >>> alibi_slopes(2).tolist()
    [0.0625, 0.00390625]
    >>> (1 / alibi_slopes(6)).tolist()          # 4 heads' slopes, then 8 heads' odd ones
    [4.0, 16.0, 64.0, 256.0, 2.0, 8.0]
    """
    n_heads = _validate.positive_int(n_heads, "n_heads")
    below = 1 << (n_heads.bit_length() - 1)  # the largest power of 2 <= n_heads
    first = 2.0 ** (-8.0 * np.arange(1, below + 1) / below)  # (below,)
    if below == n_heads:
        return first
    between = 2.0 ** (-8.0 * np.arange(1, 2 * below + 1, 2) / (2 * below))  # (below,)
    return np.concatenate([first, between[: n_heads - below]])  # (n_heads,)


def alibi_bias(n_q, n_k, slopes, causal=True):
    r"""ALiBi's bias: ``-m_h · distance``, added to the scores before softmax.

    Query ``i`` sits at position ``i + (n_k − n_q)`` among the keys (the alignment of
    :func:`attnlab.attention.causal_mask`; ``i`` itself when ``n_q == n_k``), so its
    distance to key ``j`` is ``i + n_k − n_q − j``. Head ``h`` subtracts ``m_h`` times that
    distance: the further back a key, the lower its score, by the same amount per step
    whatever the sequence length, so the bias is defined for sequences longer than the
    trained ones (that a model's quality holds up there is Press et al.'s measurement, not a
    property of the bias).

    Parameters
    ----------
    n_q, n_k : int
        Numbers of queries and keys, >= 1.
    slopes : array_like, shape (h,)
        One slope per head, finite and >= 0 (e.g. :func:`alibi_slopes`).
    causal : bool, default True
        True: keys after the query (negative distance) get ``-inf``, so the bias is also
        the causal mask and ``softmax(scores + bias)`` gives them weight exactly 0.
        False: both directions are penalised, ``-m_h · |distance|`` (the bidirectional
        variant of encoders).

    Returns
    -------
    bias : ndarray, shape (h, n_q, n_k)
        In ``slopes``' float dtype (lists give float64). Add it to scores of shape
        ``(..., h, n_q, n_k)``.

    Raises
    ------
    ValueError
        ``n_q``/``n_k`` not ints >= 1; ``slopes`` not a 1-D finite array of numbers >= 0;
        ``causal`` not a bool.

    Examples
    --------
    >>> alibi_bias(3, 3, [0.5]).tolist()
    [[[0.0, -inf, -inf], [-0.5, 0.0, -inf], [-1.0, -0.5, 0.0]]]
    >>> alibi_bias(1, 3, [0.5, 0.25], causal=False).tolist()      # one query, at position 2
    [[[-1.0, -0.5, 0.0]], [[-0.5, -0.25, 0.0]]]
    """
    n_q = _validate.positive_int(n_q, "n_q")
    n_k = _validate.positive_int(n_k, "n_k")
    slopes = _validate.as_float_array(slopes, "slopes", allow_inf=False)
    if slopes.ndim != 1 or slopes.size == 0:
        raise ValueError(
            f"slopes must be a 1-D array with one slope per head, got shape {slopes.shape}"
        )
    if (slopes < 0).any():
        raise ValueError(
            f"slopes must be >= 0 (a penalty per step of distance), got "
            f"{float(slopes.min())} among {slopes.size} slopes"
        )
    if not isinstance(causal, bool | np.bool_):
        raise ValueError(
            f"causal must be True or False, got {causal!r} (type {type(causal).__name__})"
        )
    query_at = np.arange(n_q)[:, None] + (n_k - n_q)  # (n_q, 1)
    distance = (query_at - np.arange(n_k)).astype(slopes.dtype)  # (n_q, n_k)
    penalty = slopes[:, None, None] * np.abs(distance)  # (h, n_q, n_k)
    bias = 0.0 - penalty  # (h, n_q, n_k), a zero distance gives 0.0, not -0.0
    if causal:
        bias[:, distance < 0] = -np.inf  # keys after the query
    return bias.astype(slopes.dtype, copy=False)


def permute_tokens(x, order):
    """Reorder the tokens (rows) of ``x``: row ``i`` of the result is row ``order[i]``.

    Attention without positions and without a causal mask is *permutation-equivariant*:
    permuting the tokens of ``q``, ``k`` and ``v`` permutes the output rows the same way
    and changes nothing else, so it cannot tell "the token two places back" from any other.

    Parameters
    ----------
    x : array_like, shape (..., n, d)
        Rows are tokens; any finite real numbers.
    order : array_like of int, shape (n,)
        A permutation of ``0 .. n - 1``.

    Returns
    -------
    permuted : ndarray, shape (..., n, d)
        A new array, ``x[..., order, :]``, in ``x``'s float dtype.

    Raises
    ------
    ValueError
        ``x`` has fewer than 2 dims or is not finite; ``order`` is not a permutation of
        ``0 .. n - 1``.

    Examples
    --------
    >>> from attnlab.attention import scaled_dot_product_attention as attention
    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(size=(4, 3))                  # 4 tokens; q = k = v = x
    >>> order = [2, 0, 3, 1]
    >>> out, _ = attention(x, x, x)
    >>> shuffled = permute_tokens(x, order)
    >>> out_shuffled, _ = attention(shuffled, shuffled, shuffled)
    >>> bool(np.allclose(out_shuffled, permute_tokens(out, order)))
    True
    """
    x = _validate.as_float_array(x, "x", allow_inf=False)
    if x.ndim < 2:
        raise ValueError(f"x must have at least 2 dimensions (..., n, d), got shape {x.shape}")
    n = x.shape[-2]
    raw = np.asarray(order)
    if (
        raw.shape != (n,)
        or raw.dtype.kind not in "iu"
        or not np.array_equal(np.sort(raw), np.arange(n))
    ):
        raise ValueError(
            f"order must be a permutation of 0 .. {n - 1} (x has shape {x.shape}, n = {n} "
            f"tokens), got {raw.tolist() if raw.size <= 12 else f'shape {raw.shape}'}"
        )
    return x[..., raw, :]  # (..., n, d), a copy


# ---------------------------------------------------------------- helpers
def _even_dimension(d, name: str) -> int:
    """``d`` as a positive even int (dimensions come in pairs), or a ValueError naming it."""
    d = _validate.positive_int(d, name)
    if d % 2:
        raise ValueError(f"{name} must be even (dimensions are used in pairs (2i, 2i+1)), got {d}")
    return d


def _rotate(x, positions, base, x_name: str, positions_name: str) -> np.ndarray:
    """RoPE of ``x`` at ``positions``, with errors naming the caller's arguments."""
    x = _validate.as_float_array(x, x_name, allow_inf=False)
    if x.ndim < 2:
        raise ValueError(
            f"{x_name} must have at least 2 dimensions (..., n, d), got shape {x.shape}; "
            f"for a single row use {x_name}[None, :]"
        )
    d = x.shape[-1]
    if d == 0 or d % 2:
        raise ValueError(
            f"{x_name} must have an even, non-zero last dimension d (RoPE rotates pairs "
            f"(2i, 2i+1)); {x_name} has shape {x.shape}"
        )
    pos = _validate.as_float_array(positions, positions_name, allow_inf=False)
    rows = x.shape[:-1]  # (..., n)
    try:
        fits = pos.ndim >= 1 and np.broadcast_shapes(pos.shape, rows) == rows
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(
            f"{positions_name} must broadcast to {x_name}'s shape without its last axis, "
            f"{rows} (one position per row of {x_name}): {positions_name} has shape "
            f"{pos.shape}, {x_name} has shape {x.shape}"
        )
    work = _validate.work_dtype(x.dtype)
    angles = pos.astype(np.float64)[..., None] * position_frequencies(d, base)  # (..., n, d/2)
    cos = np.cos(angles).astype(work)  # (..., n, d/2)
    sin = np.sin(angles).astype(work)  # (..., n, d/2)
    pairs = x.astype(work, copy=False).reshape(*rows, d // 2, 2)  # (..., n, d/2, 2)
    even, odd = pairs[..., 0], pairs[..., 1]  # (..., n, d/2) each
    with np.errstate(over="ignore", invalid="ignore"):
        turned = np.stack([even * cos - odd * sin, even * sin + odd * cos], axis=-1)
    if not np.isfinite(turned).all():  # a pair longer than the dtype's largest number
        raise ValueError(
            f"{x_name} is too large to rotate in {work}: a pair's length overflows "
            f"(max |{x_name}| = {float(np.max(np.abs(x)))}; {x_name} has shape {x.shape})"
        )
    out = turned.reshape(x.shape)  # (..., n, d)
    with np.errstate(over="ignore"):
        return out.astype(x.dtype, copy=False)
