"""Bad input must raise ValueError whose message names the argument (and shapes)."""

from __future__ import annotations

import numpy as np
import pytest

from attnlab.attention import attention_scores, causal_mask, scaled_dot_product_attention
from attnlab.softmax_family import (
    entropy,
    log_softmax,
    logsumexp,
    naive_softmax,
    softmax,
    softmax_jacobian,
)

X23 = np.arange(6.0).reshape(2, 3)
Q = np.zeros((2, 3, 8))
K = np.zeros((2, 5, 8))
V = np.zeros((2, 5, 4))


def sdpa(**kwargs):
    args = {"q": Q, "k": K, "v": V} | kwargs
    return lambda: scaled_dot_product_attention(**args)


# (id, callable, substrings that must all appear in the message)
CASES = [
    # ---- softmax family: x
    ("x-nan", lambda: softmax([1.0, np.nan]), ["x", "NaN", "(2,)"]),
    ("x-strings", lambda: softmax(["a", "b"]), ["x", "real numbers", "<U1", "(2,)"]),
    ("x-ragged", lambda: softmax([[1.0, 2.0], [3.0]]), ["x", "rectangular"]),
    ("x-complex", lambda: softmax(np.array([1 + 2j, 0])), ["x", "complex", "(2,)"]),
    ("x-object", lambda: softmax(np.array([1.0, None], dtype=object)), ["x", "object"]),
    ("x-scalar", lambda: softmax(3.0), ["x", "at least 1 dimension", "()"]),
    ("x-empty-axis", lambda: softmax(np.zeros((2, 0))), ["x", "length 0", "(2, 0)"]),
    ("x-datetime", lambda: softmax(np.array(["2024-01-01"], dtype="M8[D]")), ["x", "datetime"]),
    ("naive-nan", lambda: naive_softmax([np.nan, 1.0]), ["x", "NaN"]),
    ("lse-empty", lambda: logsumexp([]), ["x", "length 0", "(0,)"]),
    ("log-softmax-nan", lambda: log_softmax(np.full((2, 2), np.nan)), ["x", "NaN", "(2, 2)"]),
    # ---- axis
    ("axis-out-of-range", lambda: softmax(X23, axis=2), ["axis", "2", "(2, 3)"]),
    ("axis-negative-range", lambda: logsumexp(X23, axis=-3), ["axis", "-3", "(2, 3)"]),
    ("axis-float", lambda: softmax(X23, axis=1.0), ["axis", "1.0"]),
    ("axis-tuple", lambda: log_softmax(X23, axis=(0, 1)), ["axis", "(0, 1)"]),
    ("axis-bool", lambda: naive_softmax(X23, axis=True), ["axis", "True"]),
    # ---- temperature
    ("temperature-zero", lambda: softmax(X23, temperature=0), ["temperature", "> 0", "0"]),
    ("temperature-negative", lambda: softmax(X23, temperature=-1.0), ["temperature", "-1.0"]),
    ("temperature-nan", lambda: log_softmax(X23, temperature=np.nan), ["temperature", "finite"]),
    ("temperature-inf", lambda: softmax(X23, temperature=np.inf), ["temperature", "finite"]),
    ("temperature-str", lambda: softmax(X23, temperature="hot"), ["temperature", "'hot'"]),
    ("temperature-array", lambda: softmax(X23, temperature=[1.0, 2.0]), ["temperature", "single"]),
    ("temperature-bool", lambda: softmax(X23, temperature=True), ["temperature", "True"]),
    # ---- probabilities: p
    ("jac-logits", lambda: softmax_jacobian([2.0, -1.0]), ["p", "[0, 1]", "logits", "(2,)"]),
    ("jac-not-normalised", lambda: softmax_jacobian([0.3, 0.3]), ["p", "sum to 1", "(2,)"]),
    ("jac-inf", lambda: softmax_jacobian([np.inf, 0.0]), ["p", "finite", "(2,)"]),
    ("jac-scalar", lambda: softmax_jacobian(0.5), ["p", "at least 1 dimension", "()"]),
    ("jac-empty", lambda: softmax_jacobian(np.zeros((3, 0))), ["p", "length 0", "(3, 0)"]),
    ("entropy-sum", lambda: entropy([[0.5, 0.6]]), ["p", "sum to 1", "(1, 2)"]),
    ("entropy-negative", lambda: entropy([1.5, -0.5]), ["p", "[0, 1]"]),
    ("entropy-axis", lambda: entropy([[0.5, 0.5]], axis=3), ["axis", "3", "(1, 2)"]),
    # ---- attention: shapes
    (
        "dk-mismatch",
        sdpa(k=np.zeros((2, 5, 4))),
        ["q and k", "d_k", "q has shape (2, 3, 8)", "k has shape (2, 5, 4)"],
    ),
    (
        "nk-mismatch",
        sdpa(v=np.zeros((2, 6, 4))),
        ["k and v", "n_k", "k has shape (2, 5, 8)", "v has shape (2, 6, 4)"],
    ),
    (
        "batch-q-k",
        sdpa(k=np.zeros((3, 5, 8)), v=np.zeros((3, 5, 4))),
        ["q and k", "batch", "(2, 3, 8)", "(3, 5, 8)"],
    ),
    (
        "batch-k-v",
        sdpa(v=np.zeros((4, 5, 4))),
        ["k and v", "batch", "(2, 5, 8)", "(4, 5, 4)"],
    ),
    (
        "batch-q-v",
        sdpa(k=np.zeros((5, 8)), v=np.zeros((4, 5, 4))),
        ["q and v", "batch", "(2, 3, 8)", "(4, 5, 4)"],
    ),
    ("q-1d", sdpa(q=np.zeros(8)), ["q", "at least 2 dimensions", "(8,)", "k has shape"]),
    ("k-1d", sdpa(k=np.zeros(8)), ["k", "at least 2 dimensions", "(8,)", "q has shape"]),
    ("v-1d", sdpa(v=np.zeros(5)), ["v", "at least 2 dimensions", "(5,)"]),
    ("dk-zero", sdpa(q=np.zeros((3, 0)), k=np.zeros((5, 0))), ["q and k", "d_k", "(3, 0)"]),
    ("nk-zero", sdpa(k=np.zeros((0, 8)), v=np.zeros((0, 4))), ["k", "n_k", "(0, 8)"]),
    # ---- attention: values / dtypes
    ("q-nan", sdpa(q=np.full((3, 8), np.nan)), ["q", "NaN", "(3, 8)"]),
    ("k-inf", sdpa(k=np.full((5, 8), np.inf)), ["k", "finite", "(5, 8)"]),
    ("v-inf", sdpa(v=np.full((5, 4), -np.inf)), ["v", "finite", "(5, 4)"]),
    ("q-complex", sdpa(q=np.zeros((3, 8), dtype=complex)), ["q", "complex", "(3, 8)"]),
    ("k-strings", sdpa(k=[["a"]]), ["k", "real numbers", "(1, 1)"]),
    ("v-ragged", sdpa(v=[[1.0], [1.0, 2.0]]), ["v", "rectangular"]),
    (
        "scores-overflow",
        lambda: scaled_dot_product_attention([[1e200]], [[1e200]], [[1.0]]),
        ["q and k", "overflow", "q has shape (1, 1)", "k has shape (1, 1)"],
    ),
    # ---- mask
    (
        "mask-additive",
        sdpa(mask=np.where(np.eye(3, 5) > 0, 0.0, -np.inf)),
        ["mask", "boolean", "float64", "mask == 0", "(3, 5)"],
    ),
    ("mask-int", sdpa(mask=np.ones((3, 5), dtype=int)), ["mask", "boolean", "astype(bool)"]),
    (
        "mask-shape",
        sdpa(mask=np.ones((5, 3), dtype=bool)),
        ["mask", "(5, 3)", "(2, 3, 5)", "q has shape (2, 3, 8)", "k has shape (2, 5, 8)"],
    ),
    (
        "mask-grows-batch",
        sdpa(mask=np.ones((4, 2, 3, 5), dtype=bool)),
        ["mask", "(4, 2, 3, 5)", "(2, 3, 5)"],
    ),
    # ---- scale
    ("scale-zero", sdpa(scale=0.0), ["scale", "> 0"]),
    ("scale-negative", sdpa(scale=-0.5), ["scale", "-0.5"]),
    ("scale-nan", sdpa(scale=float("nan")), ["scale", "finite"]),
    ("lse-keepdims-int", lambda: logsumexp(X23, keepdims=1), ["keepdims", "True or False", "1"]),
    ("lse-keepdims-str", lambda: logsumexp(X23, keepdims="yes"), ["keepdims", "'yes'"]),
    (
        "x-masked-array",
        lambda: softmax(np.ma.masked_array([1.0, 5.0], mask=[False, True])),
        ["x", "masked array", "1 of 2", "filled(-np.inf)"],
    ),
    (
        "lse-masked-array",
        lambda: logsumexp(np.ma.masked_invalid([1.0, np.nan])),
        ["x", "masked array"],
    ),
    (
        "p-masked-array",
        lambda: entropy(np.ma.masked_array([0.5, 0.5], mask=[True, False])),
        ["p", "masked array"],
    ),
    ("q-masked-array", sdpa(q=np.ma.masked_array(Q, mask=Q > 1)), ["q", "masked array"]),
    (
        "mask-masked-array",
        sdpa(mask=np.ma.masked_array(np.ones((3, 5), bool), mask=False)),
        ["mask", "masked array"],
    ),
    (
        "scale-overflows",
        lambda: attention_scores(np.ones((2, 4)), np.ones((3, 4)), scale=1e308),
        ["scale = 1e+308 is too large", "q·k itself fits", "(2, 4)", "(3, 4)"],
    ),
    (
        "qk-overflow-blames-q-and-k",
        lambda: attention_scores(np.full((2, 4), 1e200), np.full((3, 4), 1e200), scale=1e-300),
        ["q and k are too large", "max |q| = 1e+200"],
    ),
    ("scale-inf", sdpa(scale=np.inf), ["scale", "finite"]),
    ("scale-str", sdpa(scale="1/8"), ["scale", "'1/8'"]),
    # ---- attention_scores shares the checks
    (
        "scores-dk-mismatch",
        lambda: attention_scores(np.zeros((3, 8)), np.zeros((5, 4))),
        ["q and k", "d_k", "(3, 8)", "(5, 4)"],
    ),
    ("scores-scale", lambda: attention_scores(Q, K, scale=-1), ["scale", "> 0"]),
    ("scores-q-1d", lambda: attention_scores(np.zeros(8), K), ["q", "(8,)"]),
    # ---- causal_mask
    ("causal-zero", lambda: causal_mask(0), ["n_q", "positive", "0"]),
    ("causal-float", lambda: causal_mask(2.0), ["n_q", "2.0", "float"]),
    ("causal-negative-nk", lambda: causal_mask(3, -1), ["n_k", "-1"]),
    ("causal-bool", lambda: causal_mask(True), ["n_q", "True"]),
    ("causal-float-nk", lambda: causal_mask(3, 2.5), ["n_k", "2.5"]),
    ("causal-str", lambda: causal_mask("3"), ["n_q", "'3'"]),
]


@pytest.mark.parametrize(("call", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_raises_value_error_naming_the_argument(call, expected):
    with pytest.raises(ValueError) as info:
        call()
    message = str(info.value)
    for fragment in expected:
        assert fragment in message, f"{fragment!r} not in {message!r}"


def test_there_are_at_least_30_distinct_cases():
    assert len({c[0] for c in CASES}) == len(CASES) >= 30


def test_inputs_untouched_after_errors():
    x = np.array([1.0, 2.0])
    q = np.ones((2, 3))
    before_x, before_q = x.copy(), q.copy()
    with pytest.raises(ValueError):
        softmax(x, temperature=0)
    with pytest.raises(ValueError):
        scaled_dot_product_attention(q, q, q, mask=np.zeros((2, 2)))
    np.testing.assert_array_equal(x, before_x)
    np.testing.assert_array_equal(q, before_q)
