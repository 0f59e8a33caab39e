r"""Tiled attention: softmax(Q Kᵀ · scale) V computed block by block, without the N × N matrix.

:func:`attnlab.scaled_dot_product_attention` builds every score at once, an
``(n_q, n_k)`` matrix per batch entry: memory that grows like N². Here the
queries are cut into blocks, and each query block walks over the keys one key
block at a time. Per query row it keeps only a running max ``m``, a running
sum ``l`` (the online softmax of :mod:`attnlab.online`) and a running
weighted sum of values ``acc``. When a key block brings a larger max, ``l`` and
``acc`` are both rescaled by ``exp(m_old - m_new)``; after the last block
``acc / l`` is the attention output, exactly the same weighted average (up to
rounding). The largest temporary is one ``(block_q, block_k)`` score tile, so
the extra memory does not grow with N at all. This is the idea behind
FlashAttention (Dao et al., 2022), without the GPU kernel.

Shapes are those of :mod:`attnlab.attention`: ``q`` (..., n_q, d_k),
``k`` (..., n_k, d_k), ``v`` (..., n_k, d_v), output (..., n_q, d_v).

This module needs numpy only.
"""

import operator

import numpy as np

from . import _checks, _kernels, _validate

__all__ = ["tiled_attention"]


def tiled_attention(q, k, v, mask=None, *, causal=False, scale=None, block_size=(256, 512)):
    r"""Attention computed tile by tile, never holding more than one block of scores.

    Parameters
    ----------
    q : array_like, shape (..., n_q, d_k)
        Queries. ``q``, ``k``, ``v`` must be finite real numbers.
    k : array_like, shape (..., n_k, d_k)
        Keys; same ``d_k`` as ``q``, at least one key.
    v : array_like, shape (..., n_k, d_v)
        Values, one row per key. The batch dims of ``q``, ``k``, ``v`` broadcast.
    mask : array_like of bool, optional
        Broadcastable to ``(..., n_q, n_k)``; ``True`` = may attend (as in
        :func:`attnlab.scaled_dot_product_attention`). Only the slice of each
        tile is read; a mask that broadcasts (e.g. a padding mask of shape
        ``(batch, 1, n_k)``) costs no N × N memory.
    causal : bool, default False
        Also apply :func:`attnlab.causal_mask` ``(n_q, n_k)``: query ``i`` sees
        key ``j`` iff ``j <= i + (n_k - n_q)``. Tiles entirely above that
        diagonal are skipped, which saves about half the work.
    scale : float, optional
        Finite and > 0; defaults to ``1 / sqrt(d_k)``.
    block_size : int or (int, int), default (256, 512)
        Rows per query block and per key block, each ``>= 1``; a pair sets them
        separately. They need not divide ``n_q`` or ``n_k``; sizes beyond them
        give a single block. The default suits a CPU: a tile of 256 × 512
        float32 scores is 512 KiB per batch entry, large enough that the two
        matrix products per tile run near the speed of one big product, small
        enough to stay in cache (``benchmarks/numerics.py`` compares sizes).

    Returns
    -------
    output : ndarray, shape (..., n_q, d_v)
        Equal to ``scaled_dot_product_attention(q, k, v, mask)[0]`` up to
        rounding, in the common float dtype of ``q``, ``k``, ``v`` (float16 is
        computed in float32 and rounded once). A query with every key masked
        gets a zero row, never NaN. The weights are not returned: they are
        never all in memory at once.

    Raises
    ------
    ValueError
        The checks of :func:`attnlab.scaled_dot_product_attention` (dtype,
        NaN/inf, fewer than 2 dims, mismatched ``d_k`` or ``n_k``, batch dims,
        non-boolean or non-broadcastable ``mask``, bad ``scale``, overflowing
        scores), plus a ``block_size`` that is not a positive int or pair and a
        ``causal`` that is not a bool. Messages name the arguments and shapes.

    Notes
    -----
    Extra memory, beyond the inputs and the output: one score tile
    ``(..., block_q, block_k)`` and its exponentials, plus ``m``, ``l``
    ``(..., block_q)`` and ``acc`` ``(..., block_q, d_v)`` of the current query
    block. The arithmetic is that of the plain version, about
    ``2 · n_q · n_k · (d_k + d_v)`` floating-point operations, plus the rescales:
    per query row and key block ``acc`` and ``l`` are multiplied by
    ``exp(m_old - m_new)``, about ``n_q · n_k · d_v / block_k`` more multiplies (and
    as many exponentials as key blocks per row). Inputs are never modified.

    Examples
    --------
    >>> import numpy as np
    >>> from attnlab.attention import scaled_dot_product_attention, causal_mask
    >>> rng = np.random.default_rng(0)
    >>> q, k, v = rng.normal(size=(3, 10, 4))                  # (n, d) each, n = 10
    >>> plain, _ = scaled_dot_product_attention(q, k, v)
    >>> bool(np.allclose(tiled_attention(q, k, v, block_size=3), plain))  # 3 does not divide 10
    True
    >>> plain, _ = scaled_dot_product_attention(q, k, v, mask=causal_mask(10))
    >>> bool(np.allclose(tiled_attention(q, k, v, causal=True, block_size=(4, 1)), plain))
    True

    A query with nothing to look at gets zeros, as in the plain version:

    >>> tiled_attention(q[:2], k[:2], v[:2], mask=[[True, True], [False, False]])[1].tolist()
    [0.0, 0.0, 0.0, 0.0]

    The dtype is kept (float16 is computed in float32 and rounded once):

    >>> half = [a.astype(np.float16) for a in (q, k, v)]
    >>> tiled_attention(*half, block_size=4).dtype
    dtype('float16')
    """
    q, k, v, batch = _checks.check_qkv(q, k, v)
    n_q, n_k, d_v = q.shape[-2], k.shape[-2], v.shape[-1]
    scores_shape = batch + (n_q, n_k)
    if mask is not None:
        mask = _checks.check_mask(mask, scores_shape, q, k, v)
        mask = np.broadcast_to(mask, scores_shape)  # a view
    causal = _checks.check_causal(causal)
    s = _checks.resolve_scale(scale, q.shape[-1])
    block_q, block_k = _block_sizes(block_size)
    dtype = np.result_type(q, k, v)
    work = _validate.work_dtype(dtype)
    offset = n_k - n_q  # causal: query i sees key j iff j <= i + offset
    q, k, v = (a.astype(work, copy=False) for a in (q, k, v))  # converted once, not per tile
    checked = not _checks.cannot_overflow(q, k, s, work)  # else no tile's scores can overflow
    kt = np.swapaxes(k, -1, -2)  # (..., d_k, n_k)
    output = np.empty(batch + (n_q, d_v), dtype=work)  # (..., n_q, d_v)
    # One score buffer serves every tile: the products are written into it, then the
    # shift and the exponentials, so the loop allocates no tile-sized array.
    tile = np.empty(batch + (min(block_q, n_q), min(block_k, n_k)), dtype=work)  # (..., bq, bk)
    for i0 in range(0, n_q, block_q):
        i1 = min(i0 + block_q, n_q)
        rows = np.arange(i0, i1)[:, None]  # (bq, 1) query positions
        m = np.full(batch + (i1 - i0,), -np.inf, dtype=work)  # (..., bq) running max
        l = np.zeros(batch + (i1 - i0,), dtype=work)  # (..., bq) running sum
        acc = np.zeros(batch + (i1 - i0, d_v), dtype=work)  # (..., bq, d_v) running Σ e·v
        # The last query of the block sees keys up to i1 - 1 + offset; later tiles are all masked.
        stop = min(n_k, max(0, i1 + offset)) if causal else n_k
        for j0 in range(0, stop, block_k):
            j1 = min(j0 + block_k, n_k)
            scores = tile[..., : i1 - i0, : j1 - j0]  # (..., bq, bk) view of the buffer
            if checked:
                scores[...] = _tile_scores(q[..., i0:i1, :], k[..., j0:j1, :], s, (i0, i1, j0, j1))
            else:
                np.matmul(q[..., i0:i1, :], kt[..., j0:j1], out=scores)
                scores *= s
            allowed = None if mask is None else mask[..., i0:i1, j0:j1]  # (..., bq, bk) view
            if causal and j1 - 1 > i0 + offset:  # the tile crosses the diagonal
                below = np.arange(j0, j1)[None, :] <= rows + offset  # (bq, bk)
                allowed = below if allowed is None else allowed & below
            if allowed is not None:
                np.copyto(scores, -np.inf, where=~allowed)  # masked scores, in place
            # e is scores, exponentiated
            m, l, rescale, e = _kernels.fold_block(m, l, scores, in_place=True)
            acc *= rescale[..., None]  # (..., bq, d_v) to the new max
            acc += e @ v[..., j0:j1, :]  # (..., bq, d_v)
        l = l[..., None]  # (..., bq, 1); 0 for a query with no key left
        output[..., i0:i1, :] = np.divide(acc, l, out=np.zeros_like(acc), where=l > 0)
    np.add(output, 0.0, out=output)  # turns -0.0 into 0.0, in place
    return output.astype(dtype, copy=False)


# ---------------------------------------------------------------- helpers (private)
def _block_sizes(block_size) -> tuple[int, int]:
    """``block_size`` as (block_q, block_k): one int for both, or a pair."""
    if isinstance(block_size, tuple | list):
        if len(block_size) != 2:
            raise ValueError(
                f"block_size must be an int or a pair (block_q, block_k), got {block_size!r}"
            )
        block_q = _validate.positive_int(block_size[0], "block_size[0]")
        block_k = _validate.positive_int(block_size[1], "block_size[1]")
        return block_q, block_k
    size = _validate.positive_int(block_size, "block_size")
    return size, size


def _tile_scores(q_tile, k_tile, scale, where) -> np.ndarray:
    """Scores of one tile; an overflow is reported with the tile's place in the full matrix."""
    try:
        return _kernels.scaled_scores(q_tile, k_tile, scale)  # (..., bq, bk) in the work dtype
    except ValueError as exc:
        i0, i1, j0, j1 = map(operator.index, where)
        raise ValueError(f"{exc} (in the tile of queries {i0}:{i1} and keys {j0}:{j1})") from None
