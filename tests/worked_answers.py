"""Worked answers to every exercise, written as a learner would: the tests' right answers.

They used to live in the ``attnlab`` package; a graded course installs that package, so they
live here, beside the tests, and nowhere a student can import them.
"""

from __future__ import annotations

import math

import numpy as np

import attnlab
from attnlab.examples import SCORE_ROW, dog_bites_man, query_and_keys_2d

# ------------------------------------------------------------ lesson0


def reference_largest_score(scores):
    """The largest score in a row: Python's ``max`` does it."""
    return max(scores)


# ------------------------------------------------------------ lesson1


def reference_dot(q, k):
    """One score: multiply matching entries of q and k, then add the products up."""
    total = 0.0
    for q_d, k_d in zip(q, k, strict=True):
        total += q_d * k_d
    return total


def reference_score_matrix(Q, K):
    """Every score at once: row i of Q against row j of K is entry (i, j) of Q Kᵀ."""
    return Q @ K.T


def reference_score_shape(n_q, n_k, d_k):
    """One row per query, one column per key; d_k is added up inside each dot product."""
    return (n_q, n_k)


def reference_orthogonal_query(k):
    """Turn k a quarter turn anticlockwise: (x, y) → (−y, x) is at right angles to (x, y)."""
    return np.array([-k[1], k[0]])


# ------------------------------------------------------------ lesson2


def reference_dot_product_variance(q, k):
    """Variance of the n paired dot products q[i] · k[i] (rows of q and k are paired)."""
    dots = np.sum(q * k, axis=1)  # (n,) one dot product per row
    return np.var(dots)


def reference_unit_variance_scale(d_k):
    """Var(c · q·k) = c² d_k, which is 1 for c = 1 / √d_k."""
    return 1 / math.sqrt(d_k)


def reference_collapsed_rows(scores, threshold):
    """Indices of the rows whose largest softmax weight is above ``threshold``."""
    weights = attnlab.softmax(scores, axis=-1)  # (n_rows, n) each row sums to 1
    return np.flatnonzero(weights.max(axis=-1) > threshold)


# ------------------------------------------------------------ lesson3


def solution_softmax_row(x):
    """Softmax of a 1-D row: exponentiate, then divide by the sum."""
    e = np.exp(x)  # (n,) all > 0
    return e / e.sum()  # (n,) sums to 1


def solution_stable_softmax(scores):
    """Softmax along the last axis of a 2-D array, shifted by each row's max (no overflow)."""
    m = scores.max(axis=-1, keepdims=True)  # (n_q, 1) row maxima
    e = np.exp(scores - m)  # (n_q, n_k) entries in (0, 1]
    return e / e.sum(axis=-1, keepdims=True)  # (n_q, n_k) rows sum to 1


def solution_softmax_with_temperature(x, T):
    """Softmax of ``x / T`` along the last axis, stable for any ``T > 0``."""
    z = x / T  # divide first: T < 1 sharpens, T > 1 flattens
    e = np.exp(z - z.max(axis=-1, keepdims=True))  # all exponents <= 0
    return e / e.sum(axis=-1, keepdims=True)


# ------------------------------------------------------------ lesson4


def solution_row_entropy(weights):
    """Entropy in nats of each row, -Σ_j w_ij log w_ij, with 0 · log 0 = 0 (no log(0) taken)."""
    safe = np.where(weights > 0, weights, 1.0)  # (n_q, n_k) zeros replaced by 1: log 1 = 0
    return -np.sum(weights * np.log(safe), axis=1)  # (n_q,) one entropy per query


def solution_name_the_patterns():
    """Each heatmap, read the way the lesson does."""
    return {
        "A": "link",  # rows are brightest on a *different* token: the bright cells sit off
        #               the diagonal
        "B": "hub",  # one column stays bright all the way down: every query reads one key
        "C": "diagonal",  # every row is brightest on its own token
        "D": "uniform",  # rows whose cells all have the same shade: weight shared evenly
    }


def solution_hub_key(weights, tokens):
    """The key token with the largest column sum: the key that all queries read most.

    ``weights`` has shape (n_q, n_k); ``tokens`` name the n_k keys, one per column.
    """
    received = weights.sum(axis=0)  # (n_k,) total weight each key receives
    return tokens[int(np.argmax(received))]  # tokens name the keys (columns)


# ------------------------------------------------------------ lesson5


def solution_mix_one(w, values):
    """One output vector: every value vector scaled by its weight, then added up."""
    out = np.zeros(values.shape[1])  # (d_v,) one entry per coordinate
    for w_j, v_j in zip(w, values, strict=True):  # one weight per value vector (row)
        out = out + w_j * v_j  # (d_v,)
    return out  # (d_v,) = Σ_j w[j] values[j], the same as w @ values


def solution_attention_output(weights, values):
    """Every output at once: row i of weights mixes the rows of values."""
    return weights @ values  # (n_q, n_k) @ (n_k, d_v) -> (n_q, d_v)


def solution_output_box(values):
    """Per coordinate, the smallest and largest entry over the value vectors.

    Every output is a weighted average of the value vectors (weights ≥ 0, adding up to 1), so
    each coordinate stays between the extremes of that coordinate, and a one-hot row of
    weights reaches each extreme exactly.
    """
    low = values.min(axis=0)  # (d_v,) down each column: over the value vectors
    high = values.max(axis=0)  # (d_v,)
    return low, high


# ------------------------------------------------------------ lesson6


def solution_attention_shapes(batch, n, d_model, d_k, d_v):
    """Read each shape off its matrix product; the batch axis rides along in front."""
    q = (batch, n, d_k)  # X W_Q: (batch, n, d_model) @ (d_model, d_k), d_model added over
    k = (batch, n, d_k)  # X W_K, the same
    v = (batch, n, d_v)  # X W_V: (batch, n, d_model) @ (d_model, d_v)
    scores = (batch, n, n)  # Q Kᵀ / √d_k: (n, d_k) @ (d_k, n) per batch entry
    weights = scores  # softmax along each row keeps the shape
    output = (batch, n, d_v)  # weights @ V: (n, n) @ (n, d_v)
    return {"Q": q, "K": k, "V": v, "scores": scores, "weights": weights, "output": output}


def solution_causal(n):
    """True where key j is not after query i: the lower triangle, diagonal included."""
    i = np.arange(n)[:, None]  # (n, 1) the query's position, one per row
    j = np.arange(n)[None, :]  # (1, n) the key's position, one per column
    return j <= i  # (n, n) bool: query i sees keys 0 .. i, itself included


def solution_masked_softmax(scores, mask):
    """Softmax of each row over its allowed keys; masked keys and fully masked rows give 0."""
    allowed = np.where(mask, scores, -np.inf)  # (n_q, n_k) masked scores: -inf, exp(-inf) = 0
    row_max = allowed.max(axis=1, keepdims=True)  # (n_q, 1) max over the allowed keys only
    row_max = np.where(np.isfinite(row_max), row_max, 0.0)  # a fully masked row: shift by 0
    e = np.exp(allowed - row_max)  # (n_q, n_k) every entry ≤ 1: no overflow
    total = e.sum(axis=1, keepdims=True)  # (n_q, 1) 0 for a fully masked row
    return e / np.where(total > 0, total, 1.0)  # (n_q, n_k) a fully masked row stays 0


# ------------------------------------------------------------ lesson7

# ------------------------------------------------------------ lesson7


def solution_quiz_a():
    """The answers to part A, every number computed."""
    dog = dog_bites_man()
    q, k = dog.q[dog.tokens.index("bites")], dog.k[dog.tokens.index("dog")]
    return {
        "A1": 5 * 7,  # one score per (query, key) pair: d_k is added over
        "A2": float(q @ k / np.sqrt(q.size)),
        "A3": "d",  # |q| |k| cos θ: the long key pointing partly away
        "A4": 64,  # a sum of 64 products of variance 1
        "A5": 256 / 4**2,  # Var = d_k, divided by the divisor squared
        "A6": "c",  # diag(p) - p pᵀ ≈ 0 when p is one-hot
        "A7": "a",
        "A8": float(attnlab.softmax(SCORE_ROW)[2]),
        "A9": "d",
        "A10": float(np.log(np.finfo(np.float32).max) - np.log(1000)),  # the sum overflows
        "A11": float(attnlab.log_softmax(np.array([0.0, -800.0]))[1]),
    }


def solution_quiz_b():
    """The answers to part B, every number computed."""
    two_d = query_and_keys_2d()
    weights = attnlab.softmax(two_d.keys @ two_d.query)  # (3,)
    return {
        "B1": "b",
        "B2": float(attnlab.entropy(attnlab.softmax(SCORE_ROW))),  # nats
        "B3": "c",  # each row's winner is another token
        "B4": "d",
        "B5": "a",
        "B6": float((weights @ two_d.values)[0]),
        "B7": "c",
        "B8": "d",  # the output mixes values, and W_V dropped what the keys saw
        "B9": "b",  # the average of the three values: every weight 1/3
        "B10": "b",
        "B11": int(attnlab.causal_mask(6).sum()),
        "B12": "c",  # float16(-1e9) is -inf, and -inf - (-inf) is nan
    }


def solution_multi_head_attention(x, w_q, w_k, w_v, n_heads):
    """Multi-head self-attention: x (n, d_model), w_* (d_model, d_model); returns (n, d_model)."""
    n, d_model = x.shape
    d_head = d_model // n_heads
    q = (x @ w_q).reshape(n, n_heads, d_head).swapaxes(0, 1)  # (n_heads, n, d_head)
    k = (x @ w_k).reshape(n, n_heads, d_head).swapaxes(0, 1)  # (n_heads, n, d_head)
    v = (x @ w_v).reshape(n, n_heads, d_head).swapaxes(0, 1)  # (n_heads, n, d_head)
    scores = q @ k.swapaxes(-1, -2) / np.sqrt(d_head)  # (n_heads, n, n): one head's d_k
    weights = attnlab.softmax(scores, axis=-1)  # (n_heads, n, n)
    heads = weights @ v  # (n_heads, n, d_head)
    return heads.swapaxes(0, 1).reshape(n, d_model)  # (n, d_model)


def solution_causal_attention(q, k, v):
    """Causal self-attention: query i sees keys 0 … i. Returns (output, weights)."""
    n, d_k = q.shape[-2], q.shape[-1]
    scores = q @ k.swapaxes(-1, -2) / np.sqrt(d_k)  # (..., n, n)
    scores = np.where(attnlab.causal_mask(n), scores, -np.inf)  # (..., n, n) before the softmax
    weights = attnlab.softmax(scores, axis=-1)  # (..., n, n) the future gets exactly 0
    return weights @ v, weights  # (..., n, d_v), (..., n, n)


def solution_stable_attention(q, k, v):
    """Attention in the dtype of q, k and v (float16 on a GPU, say). Returns (n_q, d_v)."""
    scores = q @ k.swapaxes(-1, -2) / q.shape[-1] ** 0.5  # (n_q, n_k) in q's dtype
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))  # (n_q, n_k) every exp ≤ 1
    weights = e / e.sum(axis=-1, keepdims=True)  # (n_q, n_k) the shift cancels
    return weights @ v  # (n_q, d_v)


def solution_exposing_input():
    """A masked key 1000 above the allowed one: the allowed weight underflows before the
    masked one is zeroed, and the patched softmax divides 0 by 0."""
    return np.array([[0.0, 1000.0]]), np.array([[True, False]])


# ------------------------------------------------------------ lesson8


def solution_scores_bytes(n, heads, batch, dtype):
    """One n × n matrix per sequence and head, each entry itemsize bytes."""
    return batch * heads * n * n * np.dtype(dtype).itemsize


def solution_online_update(m, l, block):
    """Fold a block of scores (n_rows, b) into the running max m and sum l (n_rows,)."""
    m_new = np.maximum(m, block.max(axis=1))  # (n_rows,)
    shift = np.where(np.isfinite(m_new), m_new, 0.0)  # (n_rows,) 0 while only -inf seen
    rescale = np.exp(m - shift)  # (n_rows,) old terms re-measured against the new max
    return m_new, l * rescale + np.exp(block - shift[:, None]).sum(axis=1)


def solution_attention_step(m, l, acc, scores, v_block):
    """Fold one tile: scores (n_q, b) and values (b, d_v) into m, l (n_q,) and acc (n_q, d_v)."""
    m_new = np.maximum(m, scores.max(axis=1))  # (n_q,)
    shift = np.where(np.isfinite(m_new), m_new, 0.0)  # (n_q,)
    rescale = np.exp(m - shift)  # (n_q,)
    e = np.exp(scores - shift[:, None])  # (n_q, b) unnormalised weights of this tile
    return m_new, l * rescale + e.sum(axis=1), acc * rescale[:, None] + e @ v_block
