"""attnlab.backward against central finite differences (float64 loops), and its properties."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from strategies import FAST

import attnlab
from attnlab.backward import (
    attention_backward,
    finite_difference_gradient,
    self_attention,
    self_attention_backward,
    softmax_vjp,
)
from attnlab.training import N, encode, init_head, loss_and_grads, reverse_batch

EPS = 1e-6


def numeric_grad(f, x):
    """Central differences written out with Python loops over a float64 copy (independent)."""
    x = np.array(x, dtype=np.float64)
    grad = np.zeros_like(x)
    for index in np.ndindex(*x.shape):
        plus, minus = x.copy(), x.copy()
        plus[index] += EPS
        minus[index] -= EPS
        grad[index] = (f(plus) - f(minus)) / (2 * EPS)
    return grad


def softmax_loops(row):
    top = max(row)
    exps = [0.0 if s == -math.inf else math.exp(s - top) for s in row]
    total = sum(exps)
    return [e / total for e in exps]


def attention_loops(q, k, v, mask, scale):
    """Attention in plain Python loops, float64: the forward reference for the differences."""
    out = np.zeros((q.shape[0], v.shape[1]))
    for i in range(q.shape[0]):
        row = [
            sum(q[i, d] * k[j, d] for d in range(q.shape[1])) * scale if mask[i, j] else -math.inf
            for j in range(k.shape[0])
        ]
        if all(s == -math.inf for s in row):
            continue  # a fully masked query gives zeros
        w = softmax_loops(row)
        for j in range(k.shape[0]):
            out[i] += w[j] * v[j]
    return out


def rng_arrays(seed, *shapes):
    rng = np.random.default_rng(seed)
    return [rng.normal(size=s) for s in shapes]


# ---------------------------------------------------------------- softmax VJP
@pytest.mark.parametrize("shape", [(3,), (4, 6), (2, 3, 5)])
def test_softmax_vjp_matches_finite_differences(shape):
    s, g = rng_arrays(1, shape, shape)
    expected = numeric_grad(lambda x: float(np.sum(g * attnlab.softmax(x))), s)
    got = softmax_vjp(attnlab.softmax(s), g)
    np.testing.assert_allclose(got, expected, atol=1e-8)


def test_softmax_vjp_with_masked_keys_and_a_fully_masked_row():
    s, g = rng_arrays(2, (3, 4), (3, 4))
    mask = np.array([[1, 1, 0, 1], [0, 0, 0, 0], [1, 0, 0, 0]], dtype=bool)
    w = attnlab.softmax(np.where(mask, s, -np.inf))
    got = softmax_vjp(w, g)

    def loss(x):
        return float(np.sum(g * attnlab.softmax(np.where(mask, x, -np.inf))))

    np.testing.assert_allclose(got, numeric_grad(loss, s), atol=1e-8)
    assert np.all(got[~mask] == 0.0) and np.all(got[1] == 0.0)


def test_softmax_vjp_along_another_axis():
    s, g = rng_arrays(3, (4, 3), (4, 3))
    expected = numeric_grad(lambda x: float(np.sum(g * attnlab.softmax(x, axis=0))), s)
    np.testing.assert_allclose(
        softmax_vjp(attnlab.softmax(s, axis=0), g, axis=0), expected, atol=1e-8
    )


@FAST
@given(
    hnp.arrays(
        np.float64, st.tuples(st.integers(1, 4), st.integers(1, 7)), elements=st.floats(-30, 30)
    ),
    st.integers(0, 2**32 - 1),
)
def test_softmax_vjp_properties(scores, seed):
    """J g with the explicit Jacobian; rows sum to 0; linear in g; a constant g gives 0."""
    w = attnlab.softmax(scores)  # (m, n)
    g = np.random.default_rng(seed).normal(size=w.shape)
    got = softmax_vjp(w, g)
    jacobian = attnlab.softmax_jacobian(w)  # (m, n, n)
    np.testing.assert_allclose(got, np.einsum("mij,mj->mi", jacobian, g), atol=1e-10)
    np.testing.assert_allclose(got.sum(axis=-1), 0.0, atol=1e-10)
    np.testing.assert_allclose(softmax_vjp(w, 3 * g), 3 * got, atol=1e-10)
    np.testing.assert_allclose(softmax_vjp(w, np.full_like(g, 7.0)), 0.0, atol=1e-10)


def test_softmax_vjp_refuses_scores_and_mismatched_shapes():
    with pytest.raises(ValueError, match="weights"):
        softmax_vjp([2.0, -1.0, 0.5], [1.0, 0.0, 0.0])  # scores, not weights
    with pytest.raises(ValueError, match=r"grad_weights.*\(2,\)"):
        softmax_vjp([0.5, 0.5, 0.0], [1.0, 2.0])
    with pytest.raises(ValueError, match="grad_weights"):
        softmax_vjp([0.5, 0.5], [1.0, np.nan])


# ---------------------------------------------------------------- attention
SHAPES = [  # (n_q, n_k, d_k, d_v): the lesson's sizes, rectangular ones and d_k = 1
    (N, N, 4, 16),
    (N, N, 16, 3),
    (3, 5, 2, 4),
    (4, 4, 1, 1),
]
MASKS = ["none", "causal", "padding", "a fully masked row"]


def make_mask(kind, n_q, n_k):
    if kind == "none":
        return np.ones((n_q, n_k), dtype=bool)
    if kind == "causal":
        return attnlab.causal_mask(n_q, n_k)
    if kind == "padding":
        return np.broadcast_to(np.arange(n_k) < n_k - 1, (n_q, n_k))
    mask = attnlab.causal_mask(n_q, n_k).copy()
    mask[0] = False
    return mask


@pytest.mark.parametrize("mask_kind", MASKS)
@pytest.mark.parametrize("n_q, n_k, d_k, d_v", SHAPES)
def test_attention_backward_matches_finite_differences_of_a_loop_reference(
    n_q, n_k, d_k, d_v, mask_kind
):
    q, k, v, g = rng_arrays(n_q * 7 + d_k, (n_q, d_k), (n_k, d_k), (n_k, d_v), (n_q, d_v))
    mask = make_mask(mask_kind, n_q, n_k)
    scale = 1 / math.sqrt(d_k)
    grads = attention_backward(q, k, v, g, mask=None if mask_kind == "none" else mask)

    def loss(qq=q, kk=k, vv=v):
        return float(np.sum(g * attention_loops(qq, kk, vv, mask, scale)))

    np.testing.assert_allclose(grads.q, numeric_grad(lambda x: loss(qq=x), q), atol=1e-7)
    np.testing.assert_allclose(grads.k, numeric_grad(lambda x: loss(kk=x), k), atol=1e-7)
    np.testing.assert_allclose(grads.v, numeric_grad(lambda x: loss(vv=x), v), atol=1e-7)


@pytest.mark.parametrize("exponent", [0.0, 1 / 3, 0.5, 2 / 3])
def test_every_scaling_exponent_of_the_experiment(exponent):
    q, k, v, g = rng_arrays(5, (N, 8), (N, 8), (N, 4), (N, 4))
    scale = 8.0**-exponent
    grads = attention_backward(q, k, v, g, scale=scale)
    mask = np.ones((N, N), dtype=bool)
    expected = numeric_grad(lambda x: float(np.sum(g * attention_loops(x, k, v, mask, scale))), q)
    np.testing.assert_allclose(grads.q, expected, atol=1e-7)


def test_batched_and_broadcast_inputs_get_summed_gradients():
    q, k, v, g = rng_arrays(6, (2, 3, 4), (1, 5, 4), (5, 2), (2, 3, 2))  # k, v broadcast
    mask = attnlab.padding_mask(np.array([5, 2]), 5)  # (2, 1, 5)
    grads = attention_backward(q, k, v, g, mask=mask)
    assert [a.shape for a in grads] == [q.shape, k.shape, v.shape]

    def loss(qq=q, kk=k, vv=v):
        out, _ = attnlab.scaled_dot_product_attention(qq, kk, vv, mask=mask)
        return float(np.sum(g * out))

    for got, x, name in ((grads.q, q, "qq"), (grads.k, k, "kk"), (grads.v, v, "vv")):
        expected = numeric_grad(lambda a, name=name: loss(**{name: a}), x)
        np.testing.assert_allclose(got, expected, atol=1e-7, err_msg=name)


@settings(max_examples=40, deadline=None)
@given(
    st.integers(1, 5),
    st.integers(1, 5),
    st.integers(1, 6),
    st.integers(1, 4),
    st.integers(0, 2**32 - 1),
)
def test_attention_backward_properties(n_q, n_k, d_k, d_v, seed):
    """Shifting every key by one vector changes no weight, so the key gradients sum to 0;
    every row of weights sums to 1, so the value gradients add up to the summed grad_output."""
    q, k, v, g = rng_arrays(seed, (n_q, d_k), (n_k, d_k), (n_k, d_v), (n_q, d_v))
    grads = attention_backward(q, k, v, g)
    np.testing.assert_allclose(grads.k.sum(axis=0), 0.0, atol=1e-10)
    np.testing.assert_allclose(grads.v.sum(axis=0), g.sum(axis=0), atol=1e-10)


def test_attention_backward_keeps_float32_and_never_mutates():
    q, k, v, g = (a.astype(np.float32) for a in rng_arrays(7, (3, 4), (3, 4), (3, 2), (3, 2)))
    before = [a.copy() for a in (q, k, v, g)]
    grads = attention_backward(q, k, v, g)
    assert all(a.dtype == np.float32 for a in grads)
    assert all(np.array_equal(a, b) for a, b in zip((q, k, v, g), before, strict=True))
    reference = attention_backward(*(a.astype(np.float64) for a in (q, k, v, g)))
    for got, want in zip(grads, reference, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_attention_backward_names_bad_grad_output_and_inputs():
    q, k, v = rng_arrays(8, (3, 4), (5, 4), (5, 2))
    with pytest.raises(ValueError, match=r"grad_output.*\(3, 2\).*\(3, 4\)"):
        attention_backward(q, k, v, np.ones((3, 4)))
    with pytest.raises(ValueError, match="d_k"):
        attention_backward(q, k[:, :3], v, np.ones((3, 2)))
    with pytest.raises(ValueError, match="grad_output"):
        attention_backward(q, k, v, np.full((3, 2), np.inf))


# ---------------------------------------------------------------- projections
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("d_k", [4, 16])
def test_self_attention_backward_matches_finite_differences(d_k, causal):
    x, w_q, w_k, w_v, g = rng_arrays(d_k, (2, N, 5), (5, d_k), (5, d_k), (5, 3), (2, N, 3))
    mask = attnlab.causal_mask(N) if causal else None
    grads = self_attention_backward(x, w_q, w_k, w_v, g, mask=mask)

    def loss(xx=x, a=w_q, b=w_k, c=w_v):
        return float(np.sum(g * self_attention(xx, a, b, c, mask=mask)[0]))

    np.testing.assert_allclose(grads.x, numeric_grad(lambda t: loss(xx=t), x), atol=1e-7)
    np.testing.assert_allclose(grads.w_q, numeric_grad(lambda t: loss(a=t), w_q), atol=1e-7)
    np.testing.assert_allclose(grads.w_k, numeric_grad(lambda t: loss(b=t), w_k), atol=1e-7)
    np.testing.assert_allclose(grads.w_v, numeric_grad(lambda t: loss(c=t), w_v), atol=1e-7)


def test_self_attention_names_mismatched_projections():
    x = np.ones((3, 5))
    with pytest.raises(ValueError, match=r"w_q.*\(4, 2\)"):
        self_attention(x, np.ones((4, 2)), np.ones((5, 2)), np.ones((5, 2)))
    with pytest.raises(ValueError, match="w_q and w_k"):
        self_attention(x, np.ones((5, 2)), np.ones((5, 3)), np.ones((5, 2)))


def test_finite_difference_helper_agrees_with_the_loop_one_and_checks_its_input():
    x = np.random.default_rng(9).normal(size=(2, 3))
    f = lambda a: float(np.sum(np.sin(a) * a))  # noqa: E731
    np.testing.assert_allclose(finite_difference_gradient(f, x), numeric_grad(f, x), atol=1e-9)
    with pytest.raises(ValueError, match="eps"):
        finite_difference_gradient(f, x, eps=0)
    with pytest.raises(ValueError, match="one finite real number"):
        finite_difference_gradient(lambda a: a, x)


# ---------------------------------------------------------------- the trainer's gradients
@pytest.mark.parametrize("d_k, exponent", [(4, 0.5), (16, 0.0), (8, 2 / 3)])
def test_training_gradients_match_finite_differences_of_the_loss(d_k, exponent):
    head = init_head(d_k, seed=3)
    tokens, targets = reverse_batch(np.random.default_rng(4), batch=3)
    x, scale = encode(tokens), d_k**-exponent
    loss, grads, _ = loss_and_grads(head, x, targets, scale)
    for name, w in head.items():

        def f(a, name=name):
            changed = head.__class__(**{**dict(head.items()), name: a})
            return loss_and_grads(changed, x, targets, scale)[0]

        np.testing.assert_allclose(
            getattr(grads, name), numeric_grad(f, w), atol=1e-7, err_msg=name
        )


# ---------------------------------------------------------------- numpy only
def test_lesson_9_numerics_import_without_plotting_or_widgets():
    from test_numerics_import import heavy_modules_after

    statement = (
        "import attnlab.backward, attnlab.training, attnlab.sqrt_dk; "
        "attnlab.training.train(4, steps=2); attnlab.sqrt_dk.load_shipped()"
    )
    assert heavy_modules_after(statement) == []


def test_public_functions_are_documented_with_shapes_and_examples():
    import attnlab.backward as B

    for name in (
        "attention_backward",
        "softmax_vjp",
        "self_attention",
        "self_attention_backward",
        "finite_difference_gradient",
    ):
        doc = getattr(B, name).__doc__
        for section in ("Parameters", "Returns", "Raises", "Examples"):
            assert section in doc, f"{name} lacks {section}"
    assert attnlab.softmax_vjp is softmax_vjp and attnlab.attention_backward is attention_backward
