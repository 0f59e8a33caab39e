"""The checks of attention's inputs, shared by :mod:`attnlab.attention`, :mod:`attnlab.tiling`
and :mod:`attnlab.backward`: ``q``, ``k`` and ``v`` that fit together, a mask, ``causal`` and the
score scale. Each raises :class:`ValueError` naming the argument and every shape involved.

>>> check_qkv(np.ones((2, 3, 4)), np.ones((5, 4)), np.ones((5, 6)))[3]
(2,)
>>> check_qkv(np.ones((3, 4)), np.ones((5, 4)), np.ones((4, 6)))
Traceback (most recent call last):
...
ValueError: k and v must have the same number of rows n_k (one value per key): \
k has shape (5, 4), v has shape (4, 6)
"""

from __future__ import annotations

import math

import numpy as np

from ._validate import as_bool_mask, as_float_array, positive_finite

__all__ = [
    "cannot_overflow",
    "check_batch",
    "check_causal",
    "check_mask",
    "check_matrices",
    "check_qk",
    "check_qk_fit",
    "check_qkv",
    "resolve_scale",
    "shapes_of",
]


def shapes_of(**arrays) -> str:
    """Name the shape of every array, for error messages that say what was passed.

    Parameters
    ----------
    **arrays : numpy.ndarray
        The arrays, by the names the message should use.

    Returns
    -------
    str

    Examples
    --------
    >>> shapes_of(q=np.zeros((2, 4)), k=np.zeros((3, 4)))
    'q has shape (2, 4), k has shape (3, 4)'
    """
    return ", ".join(f"{name} has shape {arr.shape}" for name, arr in arrays.items())


def check_matrices(**arrays) -> dict:
    """Convert to finite float arrays with at least 2 dims, naming every argument on error.

    Parameters
    ----------
    **arrays : array_like
        The arguments, by name (``q``, ``k``, ``v`` or any other).

    Returns
    -------
    dict of str to numpy.ndarray
        The same names, each a finite float array with ``ndim >= 2``.

    Raises
    ------
    ValueError
        An array is not finite or has fewer than 2 dimensions (the message names it and
        the shapes of the others).

    Examples
    --------
    >>> check_matrices(q=[[1, 2]])["q"].dtype
    dtype('float64')
    """
    arrays = {name: as_float_array(a, name, allow_inf=False) for name, a in arrays.items()}
    layout = {"q": "(..., n_q, d_k)", "k": "(..., n_k, d_k)", "v": "(..., n_k, d_v)"}
    for name, arr in arrays.items():
        if arr.ndim < 2:
            others = {n: a for n, a in arrays.items() if n != name}
            raise ValueError(
                f"{name} must have at least 2 dimensions {layout[name]}, got shape {arr.shape}; "
                f"for a single row use {name}[None, :] (and {shapes_of(**others)})"
            )
    return arrays


def check_qk(q, k) -> tuple[np.ndarray, np.ndarray]:
    """Validate ``q`` and ``k``: finite floats, >= 2 dims, same d_k >= 1, broadcastable batch."""
    arrays = check_matrices(q=q, k=k)
    q, k = arrays["q"], arrays["k"]
    check_qk_fit(q, k)
    return q, k


def check_qkv(q, k, v) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple]:
    """q, k, v as float arrays that fit together, and their common batch shape ``...``.

    Parameters
    ----------
    q, k, v : array_like
        Shapes ``(..., n_q, d_k)``, ``(..., n_k, d_k)`` and ``(..., n_k, d_v)``.

    Returns
    -------
    q, k, v : numpy.ndarray
    batch : tuple of int
        The broadcast batch shape ``...`` of all three.

    Raises
    ------
    ValueError
        The shapes do not fit together (the message names every shape).

    Examples
    --------
    >>> check_qkv(np.ones((2, 3, 4)), np.ones((5, 4)), np.ones((5, 6)))[3]
    (2,)
    """
    arrays = check_matrices(q=q, k=k, v=v)
    q, k, v = arrays["q"], arrays["k"], arrays["v"]
    check_qk_fit(q, k)
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(
            f"k and v must have the same number of rows n_k (one value per key): "
            f"{shapes_of(k=k, v=v)}"
        )
    check_batch(k=k, v=v)
    check_batch(q=q, v=v)
    return q, k, v, check_batch(q=q, k=k, v=v)


def check_qk_fit(q: np.ndarray, k: np.ndarray) -> None:
    """Checked float arrays ``q`` and ``k``: same d_k >= 1, a key, broadcastable batch."""
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(f"q and k must have the same last dimension d_k: {shapes_of(q=q, k=k)}")
    if q.shape[-1] == 0:
        raise ValueError(f"q and k must have d_k >= 1 (last dimension): {shapes_of(q=q, k=k)}")
    if k.shape[-2] == 0:
        raise ValueError(f"k must contain at least one key (n_k >= 1): {shapes_of(q=q, k=k)}")
    check_batch(q=q, k=k)


def check_batch(**arrays) -> tuple:
    """Broadcast the leading (batch) dims of two or three arrays, or explain why not."""
    batches = [a.shape[:-2] for a in arrays.values()]
    if all(b == batches[0] for b in batches):  # the usual case, without numpy's machinery
        return batches[0]
    try:
        return np.broadcast_shapes(*batches)
    except ValueError:
        names = " and ".join(arrays)
        batches = ", ".join(f"{n} batch dims {a.shape[:-2]}" for n, a in arrays.items())
        raise ValueError(
            f"{names} have incompatible batch dimensions ({batches}): {shapes_of(**arrays)}; "
            "leading dimensions must broadcast by numpy rules"
        ) from None


def resolve_scale(scale, d_k: int) -> float:
    """The score scale to use: ``1/√d_k`` when ``scale`` is None, else ``scale`` checked.

    Parameters
    ----------
    scale : float or None
    d_k : int
        The key dimension (last axis of ``q`` and ``k``).

    Returns
    -------
    float

    Raises
    ------
    ValueError
        ``scale`` is not a positive finite number.

    Examples
    --------
    >>> resolve_scale(None, 4), resolve_scale(1.0, 4)
    (0.5, 1.0)
    """
    return 1.0 / math.sqrt(d_k) if scale is None else positive_finite(scale, "scale")


def check_causal(causal) -> bool:
    """``causal`` as a bool; anything else (1, "yes", None) is refused.

    Parameters
    ----------
    causal : bool

    Returns
    -------
    bool

    Raises
    ------
    ValueError
        ``causal`` is not a bool.

    Examples
    --------
    >>> check_causal(np.bool_(True))
    True
    """
    if not isinstance(causal, bool | np.bool_):
        raise ValueError(
            f"causal must be True or False, got {causal!r} (type {type(causal).__name__})"
        )
    return bool(causal)


def check_mask(mask, scores_shape: tuple, q, k, v) -> np.ndarray:
    """``mask`` as a boolean array that broadcasts to the scores' shape.

    Parameters
    ----------
    mask : array_like of bool
        True where a query may attend to a key.
    scores_shape : tuple of int
        ``(..., n_q, n_k)``.
    q, k, v : numpy.ndarray
        Named in the error message.

    Returns
    -------
    numpy.ndarray of bool

    Raises
    ------
    ValueError
        ``mask`` is not boolean or does not broadcast to ``scores_shape``.

    Examples
    --------
    >>> q = np.zeros((2, 1))
    >>> check_mask([True, False], (2, 2), q, q, q).tolist()
    [True, False]
    """
    mask = as_bool_mask(mask, "mask")
    try:
        ok = np.broadcast_shapes(mask.shape, scores_shape) == scores_shape
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(
            f"mask must be broadcastable to the scores shape (..., n_q, n_k) = {scores_shape}: "
            f"mask has shape {mask.shape}, {shapes_of(q=q, k=k, v=v)}"
        )
    return mask


def cannot_overflow(q: np.ndarray, k: np.ndarray, scale: float, work) -> bool:
    """True when no ``|q_i · k_j|`` nor its product with ``scale`` can reach ``work``'s max.

    By Cauchy–Schwarz ``|q_i · k_j| <= ‖q_i‖ ‖k_j‖``; a factor 4 of headroom covers the
    rounding of the products and sums.  A norm that itself overflows is ``inf``, which
    answers False (the caller then checks every score).

    Parameters
    ----------
    q : numpy.ndarray, shape (..., n_q, d_k)
    k : numpy.ndarray, shape (..., n_k, d_k)
    scale : float
    work : numpy dtype
        The dtype the scores are computed in.

    Returns
    -------
    bool

    Examples
    --------
    >>> q = np.ones((3, 2), dtype=np.float32)
    >>> cannot_overflow(q, q, 0.5, np.float32)
    True
    >>> cannot_overflow(q * 1e19, q * 1e19, 1.0, np.float32)
    False
    """
    biggest = float(np.finfo(work).max) / 4
    with np.errstate(over="ignore"):
        # First a cheaper, cruder bound: |q_i · k_j| <= d_k · max|q| · max|k|, with
        # max(q) - min(q) >= max|q| (both taken against 0). It settles every everyday
        # input with four reductions and no temporary array.
        q_max = float(q.max(initial=0.0)) - float(q.min(initial=0.0))
        k_max = float(k.max(initial=0.0)) - float(k.min(initial=0.0))
        if q.shape[-1] * q_max * k_max * max(scale, 1.0) < biggest:
            return True
        q_norm = float(np.max(np.linalg.norm(q, axis=-1), initial=0.0))
        k_norm = float(np.max(np.linalg.norm(k, axis=-1), initial=0.0))
    return q_norm * k_norm * max(scale, 1.0) < biggest
