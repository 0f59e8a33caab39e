r"""The backward pass of scaled dot-product attention, through the softmax Jacobian of lesson 2.

Forward, for one head (any leading batch dims broadcast, as in :mod:`attnlab.attention`)::

    S = Q Kᵀ · c              (..., n_q, n_k)   c = scale, 1/√d_k by default
    W = softmax(S, masked)    (..., n_q, n_k)   masked entries exactly 0
    O = W V                   (..., n_q, d_v)

Backward, given ``G = ∂L/∂O`` for some scalar loss ``L``:

====================  ===============================  ============================
gradient              formula                          shape
====================  ===============================  ============================
``∂L/∂V``             ``Wᵀ G``                         ``(..., n_k, d_v)``
``∂L/∂W``             ``G Vᵀ``                         ``(..., n_q, n_k)``
``∂L/∂S``             ``W ⊙ (∂L/∂W − rowsum(W ⊙ ∂L/∂W))``  ``(..., n_q, n_k)``
``∂L/∂Q``             ``c · (∂L/∂S) K``                ``(..., n_q, d_k)``
``∂L/∂K``             ``c · (∂L/∂S)ᵀ Q``               ``(..., n_k, d_k)``
====================  ===============================  ============================

The third line is the softmax *vector–Jacobian product*: the Jacobian
``J = diag(w) − w wᵀ`` of each row (:func:`attnlab.softmax_jacobian`) is symmetric, so
``Jᵀ g = w ⊙ g − w (w · g)``, computed without ever building ``J``. A masked key has
``w = 0`` and so gets no gradient; a fully masked row gets none at all.

With projections ``Q = X W_Q``, ``K = X W_K``, ``V = X W_V`` (self-attention) the chain rule
goes one step further: ``∂L/∂W_Q = Xᵀ ∂L/∂Q`` summed over the batch, and likewise for ``W_K``
and ``W_V``; ``∂L/∂X`` collects all three paths (:func:`self_attention_backward`).

:func:`finite_difference_gradient` is the independent check: central differences
``(f(x + h e_i) − f(x − h e_i)) / 2h``, one entry at a time. This module needs numpy only.

Examples
--------
>>> rng = np.random.default_rng(0)
>>> q, k, v = rng.normal(size=(3, 4, 2))                  # n = 4 tokens, d_k = d_v = 2
>>> g = rng.normal(size=(4, 2))                           # ∂L/∂O for L = sum(g * O)
>>> grads = attention_backward(q, k, v, g)
>>> [a.shape for a in grads]
[(4, 2), (4, 2), (4, 2)]
>>> loss = lambda q_: float(np.sum(g * scaled_dot_product_attention(q_, k, v)[0]))
>>> bool(np.allclose(grads.q, finite_difference_gradient(loss, q), atol=1e-8))
True

References
----------
Vaswani, A. et al. (2017). Attention is all you need. *NeurIPS 30*, arXiv:1706.03762.
"""

from typing import NamedTuple

import numpy as np

from attnlab import _checks, _kernels, _validate
from attnlab.attention import (
    causal_mask,  # noqa: F401 (the doctests use it)
    scaled_dot_product_attention,
)
from attnlab.softmax_family import softmax  # noqa: F401 (the doctests use it)

__all__ = [
    "AttentionGrads",
    "SelfAttentionGrads",
    "attention_backward",
    "finite_difference_gradient",
    "self_attention",
    "self_attention_backward",
    "softmax_vjp",
]


class AttentionGrads(NamedTuple):
    """Gradients of a scalar loss with respect to the inputs of attention (``q``, ``k``, ``v``)."""

    q: np.ndarray  #: (..., n_q, d_k)
    k: np.ndarray  #: (..., n_k, d_k)
    v: np.ndarray  #: (..., n_k, d_v)


class SelfAttentionGrads(NamedTuple):
    """Gradients with respect to the input ``x`` and the three projection matrices."""

    x: np.ndarray  #: (..., n, d_model)
    w_q: np.ndarray  #: (d_model, d_k)
    w_k: np.ndarray  #: (d_model, d_k)
    w_v: np.ndarray  #: (d_model, d_v)


# ---------------------------------------------------------------- the softmax VJP
def softmax_vjp(weights, grad_weights, axis=-1):
    r"""The gradient with respect to the scores, from the softmax output and ``∂L/∂weights``.

    For ``w = softmax(s)`` along ``axis`` and any scalar ``L``,

    .. math:: \frac{\partial L}{\partial s} = J^\top g = w \odot \big(g - (w \cdot g)\big),
              \qquad J = \operatorname{diag}(w) - w w^\top ,

    one row at a time, where ``g = ∂L/∂w``. ``J`` is symmetric, so this is also ``J g``.

    Parameters
    ----------
    weights : array_like, shape (..., n, ...)
        Softmax output: entries in ``[0, 1]``, each slice along ``axis`` summing to 1, or all
        zero (a fully masked row).
    grad_weights : array_like, same shape as ``weights``
        ``∂L/∂weights``, finite.
    axis : int, default -1
        The axis the softmax normalised over.

    Returns
    -------
    ndarray, same shape as ``weights``
        ``∂L/∂scores``. Every slice sums to 0 (adding a constant to a row of scores changes
        nothing); entries where ``weights`` is 0 (masked keys) are exactly 0. The dtype is
        the common float dtype of the inputs.

    Raises
    ------
    ValueError
        If ``weights`` are not probabilities along ``axis`` (pass softmax output, not scores),
        ``grad_weights`` is not finite, or the shapes differ. The message names both shapes.

    Examples
    --------
    >>> w = softmax([2.0, 1.0, 1.0])
    >>> softmax_vjp(w, [1.0, 0.0, 0.0]).round(4).tolist()        # row 0 of the Jacobian
    [0.2442, -0.1221, -0.1221]
    >>> softmax_vjp(w, [5.0, 5.0, 5.0]).round(12).tolist()        # a constant g: no gradient
    [0.0, 0.0, 0.0]
    """
    w, ax = _validate.probabilities(weights, "weights", axis=axis)
    g = _validate.as_float_array(grad_weights, "grad_weights", allow_inf=False)
    if g.shape != w.shape:
        raise ValueError(
            f"grad_weights must have the shape of weights (one gradient per weight): "
            f"weights has shape {w.shape}, grad_weights has shape {g.shape}"
        )
    return _kernels.softmax_vjp_unchecked(w, g, ax)


# ---------------------------------------------------------------- attention
def attention_backward(q, k, v, grad_output, mask=None, scale=None) -> AttentionGrads:
    r"""Gradients of a loss with respect to ``q``, ``k`` and ``v``, given ``∂L/∂output``.

    The forward pass is :func:`attnlab.scaled_dot_product_attention` with the same arguments;
    it is recomputed here (the weights are cheap next to everything else, and recomputing
    them keeps the interface small).

    Parameters
    ----------
    q, k, v : array_like
        As for :func:`attnlab.scaled_dot_product_attention`: ``(..., n_q, d_k)``,
        ``(..., n_k, d_k)``, ``(..., n_k, d_v)``, finite, batch dims broadcasting.
    grad_output : array_like, shape (..., n_q, d_v)
        ``∂L/∂output``, the shape of the attention output (batch dims broadcast included).
    mask : array_like of bool, optional
        ``True`` where query ``i`` may attend to key ``j``, broadcastable to the scores.
    scale : float, optional
        The factor on ``q · k``; ``1 / sqrt(d_k)`` by default.

    Returns
    -------
    AttentionGrads
        ``(q, k, v)``, each with the shape of the matching input, float64 for float64 inputs
        (float16 and float32 inputs are computed in float32 and returned in their common
        dtype). Where an input's batch dim was broadcast, its gradient is summed over it.

    Raises
    ------
    ValueError
        Everything :func:`attnlab.scaled_dot_product_attention` refuses, and a
        ``grad_output`` whose shape is not the output's (the message gives both).

    Notes
    -----
    A masked key gets no gradient through that query (its weight is 0, and so is the
    softmax VJP there); a fully masked query row gives zero gradients, not NaN.

    Examples
    --------
    >>> q = k = np.eye(2)
    >>> v = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> grads = attention_backward(q, k, v, np.ones((2, 2)), mask=causal_mask(2))
    >>> grads.q.tolist()                                 # row 0 sees one key: nothing to learn
    [[0.0, 0.0], [0.0, 0.0]]
    >>> grads.v.round(4).tolist()                        # each key's total weight, times g
    [[1.3302, 1.3302], [0.6698, 0.6698]]
    """
    q, k, v, batch = _checks.check_qkv(q, k, v)
    _, weights = scaled_dot_product_attention(q, k, v, mask=mask, scale=scale)  # (..., n_q, n_k)
    n_q, d_v = q.shape[-2], v.shape[-1]
    g = _checks.check_matrices(grad_output=grad_output)["grad_output"]
    if g.shape != (*batch, n_q, d_v):
        raise ValueError(
            f"grad_output must have the shape of the attention output (..., n_q, d_v) = "
            f"{(*batch, n_q, d_v)}: grad_output has shape {g.shape}, "
            f"{_checks.shapes_of(q=q, k=k, v=v)}"
        )
    dtype = np.result_type(q, k, v, g)
    work = np.result_type(dtype, np.float32)
    c = _checks.resolve_scale(scale, q.shape[-1])
    dq, dk, dv = _kernels.attention_backward_unchecked(
        q.astype(work), k.astype(work), v.astype(work), weights.astype(work), g.astype(work), c
    )
    return AttentionGrads(
        _sum_to(dq, q.shape).astype(dtype),
        _sum_to(dk, k.shape).astype(dtype),
        _sum_to(dv, v.shape).astype(dtype),
    )


# ---------------------------------------------------------------- self-attention with projections
def self_attention(x, w_q, w_k, w_v, mask=None, scale=None):
    """One head of self-attention: ``Q, K, V = X W_Q, X W_K, X W_V``, then attention.

    Parameters
    ----------
    x : array_like, shape (..., n, d_model)
        One row per token.
    w_q, w_k : array_like, shape (d_model, d_k)
    w_v : array_like, shape (d_model, d_v)
    mask, scale
        As for :func:`attnlab.scaled_dot_product_attention`.

    Returns
    -------
    output : ndarray, shape (..., n, d_v)
    weights : ndarray, shape (..., n, n)

    Raises
    ------
    ValueError
        If a projection is not a matrix whose rows match ``d_model`` (the message gives the
        shapes), or anything attention refuses.

    Examples
    --------
    >>> x = np.eye(3)                                        # three tokens, d_model = 3
    >>> out, w = self_attention(x, np.eye(3), np.eye(3), np.eye(3), scale=1.0)
    >>> w.round(3)[0].tolist()
    [0.576, 0.212, 0.212]
    """
    x, w_q, w_k, w_v = _check_projections(x, w_q, w_k, w_v)
    return scaled_dot_product_attention(x @ w_q, x @ w_k, x @ w_v, mask=mask, scale=scale)


def self_attention_backward(x, w_q, w_k, w_v, grad_output, mask=None, scale=None):
    r"""Gradients of a loss with respect to ``x`` and the projections ``W_Q``, ``W_K``, ``W_V``.

    ``∂L/∂W_Q = Σ_batch Xᵀ ∂L/∂Q`` (and likewise for ``W_K``, ``W_V``);
    ``∂L/∂X = ∂L/∂Q W_Qᵀ + ∂L/∂K W_Kᵀ + ∂L/∂V W_Vᵀ``: the token feeds all three.

    Parameters
    ----------
    x, w_q, w_k, w_v, mask, scale
        As for :func:`self_attention`.
    grad_output : array_like, shape (..., n, d_v)
        ``∂L/∂output``.

    Returns
    -------
    SelfAttentionGrads
        ``(x, w_q, w_k, w_v)`` with the shapes of the inputs. The projections are shared by
        every sequence of the batch, so their gradients add up over it.

    Raises
    ------
    ValueError
        As :func:`self_attention`, and for a ``grad_output`` of the wrong shape.

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> x, w_q, w_k, w_v = rng.normal(size=(4, 3, 3))
    >>> g = rng.normal(size=(3, 3))
    >>> grads = self_attention_backward(x, w_q, w_k, w_v, g)
    >>> loss = lambda w: float(np.sum(g * self_attention(x, w, w_k, w_v)[0]))
    >>> bool(np.allclose(grads.w_q, finite_difference_gradient(loss, w_q), atol=1e-8))
    True
    """
    x, w_q, w_k, w_v = _check_projections(x, w_q, w_k, w_v)
    q, k, v = x @ w_q, x @ w_k, x @ w_v  # (..., n, d_k), (..., n, d_k), (..., n, d_v)
    dq, dk, dv = attention_backward(q, k, v, grad_output, mask=mask, scale=scale)
    return SelfAttentionGrads(*_project_back(x, w_q, w_k, w_v, dq, dk, dv))


# ---------------------------------------------------------------- the independent check
def finite_difference_gradient(f, x, eps=1e-6):
    r"""Central finite differences: the gradient of a scalar function, one entry at a time.

    ``grad[i] = (f(x + eps·e_i) − f(x − eps·e_i)) / (2 eps)``; the error is of order
    ``eps²`` (truncation) plus ``ε_machine · |f| / eps`` (rounding), about 1e-9 in float64
    with the default ``eps``.

    Parameters
    ----------
    f : callable
        ``f(array) -> float``; called ``2 · x.size`` times on float64 copies of ``x``.
    x : array_like
        Where to take the gradient; converted to float64, never modified.
    eps : float, default 1e-6
        The step, > 0.

    Returns
    -------
    ndarray, float64, shape of ``x``

    Raises
    ------
    ValueError
        If ``x`` holds NaN or inf, ``eps`` is not positive, or ``f`` returns something that
        is not a finite real number.

    Examples
    --------
    >>> finite_difference_gradient(lambda a: float(np.sum(a ** 2)), [1.0, -2.0]).round(6).tolist()
    [2.0, -4.0]
    """
    x = _validate.as_float_array(x, "x", allow_inf=False).astype(np.float64)  # a copy
    if not (isinstance(eps, int | float) and np.isfinite(eps) and eps > 0):
        raise ValueError(f"eps must be a positive finite number; got {eps!r}")
    grad = np.empty_like(x)
    flat, out = x.reshape(-1), grad.reshape(-1)  # views of the copy
    for i in range(flat.size):
        keep = flat[i]
        flat[i] = keep + eps
        up = _scalar(f(x))
        flat[i] = keep - eps
        down = _scalar(f(x))
        flat[i] = keep
        out[i] = (up - down) / (2 * eps)
    return grad


# ---------------------------------------------------------------- helpers (private)


def _sum_to(grad: np.ndarray, shape: tuple) -> np.ndarray:
    """Sum ``grad`` over the batch dims that were broadcast to reach it from ``shape``."""
    extra = grad.ndim - len(shape)
    grad = grad.sum(axis=tuple(range(extra))) if extra else grad
    stretched = tuple(i for i, n in enumerate(shape) if n == 1 and grad.shape[i] != 1)
    return grad.sum(axis=stretched, keepdims=True) if stretched else grad


def _project_back(x, w_q, w_k, w_v, dq, dk, dv):
    """From the gradients of Q, K, V to those of X and the projections (unvalidated)."""
    rows = x.reshape(-1, x.shape[-1])  # (batch * n, d_model): every token of every sequence
    dw_q = rows.T @ dq.reshape(-1, dq.shape[-1])  # (d_model, d_k) summed over the batch
    dw_k = rows.T @ dk.reshape(-1, dk.shape[-1])  # (d_model, d_k)
    dw_v = rows.T @ dv.reshape(-1, dv.shape[-1])  # (d_model, d_v)
    dx = dq @ w_q.T + dk @ w_k.T + dv @ w_v.T  # (..., n, d_model)
    return dx, dw_q, dw_k, dw_v


def _check_projections(x, w_q, w_k, w_v):
    x = _checks.check_matrices(x=x)["x"]
    ws = {
        name: _validate.as_float_array(w, name, allow_inf=False)
        for name, w in (("w_q", w_q), ("w_k", w_k), ("w_v", w_v))
    }
    for name, w in ws.items():
        if w.ndim != 2 or w.shape[0] != x.shape[-1]:
            raise ValueError(
                f"{name} must be a matrix (d_model, d) with d_model = {x.shape[-1]} rows, the "
                f"width of x: x has shape {x.shape}, {name} has shape {w.shape}"
            )
    if ws["w_q"].shape != ws["w_k"].shape:
        raise ValueError(
            f"w_q and w_k must have the same shape (d_model, d_k): w_q has shape "
            f"{ws['w_q'].shape}, w_k has shape {ws['w_k'].shape}"
        )
    return x, ws["w_q"], ws["w_k"], ws["w_v"]


def _scalar(value) -> float:
    value = np.asarray(value)
    if value.size != 1 or value.dtype.kind not in "fiu" or not np.isfinite(value).all():
        raise ValueError(f"f must return one finite real number; got {value!r}")
    return float(value.reshape(()))
