"""Tests for attnlab.attention against a plain-Python per-query loop, plus properties."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from strategies import FAST, FLOAT_DTYPES, no_warnings

from attnlab.attention import attention_scores, causal_mask, scaled_dot_product_attention

# --------------------------------------------------------------------------- reference


def ref_attention_2d(q, k, v, mask=None, scale=None):
    """Attention for one (n_q, d_k), (n_k, d_k), (n_k, d_v) problem, one query at a time.

    Plain Python lists and the math module only; returns (output, weights) as lists.
    """
    d_k = len(q[0])
    scale = 1 / math.sqrt(d_k) if scale is None else scale
    output, weights = [], []
    for i, q_i in enumerate(q):
        allowed = [mask is None or bool(mask[i][j]) for j in range(len(k))]
        scores = [math.fsum(a * b for a, b in zip(q_i, k_j, strict=True)) * scale for k_j in k]
        if not any(allowed):
            weights.append([0.0] * len(k))
            output.append([0.0] * len(v[0]))
            continue
        top = max(s for s, ok in zip(scores, allowed, strict=True) if ok)
        e = [math.exp(s - top) if ok else 0.0 for s, ok in zip(scores, allowed, strict=True)]
        total = math.fsum(e)
        w = [e_j / total for e_j in e]
        weights.append(w)
        output.append([math.fsum(w[j] * v[j][c] for j in range(len(k))) for c in range(len(v[0]))])
    return output, weights


def ref_scores_2d(q, k, scale=None):
    scale = 1 / math.sqrt(len(q[0])) if scale is None else scale
    return [
        [math.fsum(a * b for a, b in zip(q_i, k_j, strict=True)) * scale for k_j in k] for q_i in q
    ]


def ref_attention(q, k, v, mask=None, scale=None):
    """Batched reference: broadcast the batch dims, then loop over them in Python."""
    q, k, v = (np.asarray(a, dtype=np.float64) for a in (q, k, v))
    batch = np.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    n_q, n_k, d_v = q.shape[-2], k.shape[-2], v.shape[-1]
    if mask is not None:
        mask = np.broadcast_to(np.asarray(mask), batch + (n_q, n_k))
    qb = np.broadcast_to(q, batch + q.shape[-2:])
    kb = np.broadcast_to(k, batch + k.shape[-2:])
    vb = np.broadcast_to(v, batch + v.shape[-2:])
    out = np.empty(batch + (n_q, d_v))
    w = np.empty(batch + (n_q, n_k))
    for idx in np.ndindex(batch):
        m = None if mask is None else mask[idx].tolist()
        o, ww = ref_attention_2d(qb[idx].tolist(), kb[idx].tolist(), vb[idx].tolist(), m, scale)
        out[idx] = np.array(o).reshape(n_q, d_v)
        w[idx] = ww
    return out, w


# --------------------------------------------------------------------------- strategies


@st.composite
def attention_problems(draw, dtypes=(np.float64,), bound=3.0, with_mask=True):
    """Random q, k, v (and maybe a mask) with broadcastable batch dims."""
    batch_shapes = draw(hnp.mutually_broadcastable_shapes(num_shapes=3, max_dims=2, max_side=3))
    bq, bk, bv = batch_shapes.input_shapes
    n_q, n_k = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    d_k, d_v = draw(st.integers(1, 5)), draw(st.integers(1, 4))
    dtype = draw(st.sampled_from(dtypes))
    width = np.finfo(dtype).bits
    elements = st.floats(-bound, bound, allow_nan=False, width=width)
    q = draw(hnp.arrays(dtype, bq + (n_q, d_k), elements=elements))
    k = draw(hnp.arrays(dtype, bk + (n_k, d_k), elements=elements))
    v = draw(hnp.arrays(dtype, bv + (n_k, d_v), elements=elements))
    mask = None
    if with_mask and draw(st.booleans()):
        full = batch_shapes.result_shape + (n_q, n_k)
        # any suffix of the full shape, with some dims squeezed to 1, broadcasts to it
        suffix = full[draw(st.integers(0, len(full))) :]
        shape = tuple(1 if draw(st.booleans()) else n for n in suffix)
        mask = draw(hnp.arrays(np.bool_, shape))
    return q, k, v, mask


# --------------------------------------------------------------------------- vs reference


@FAST
@given(problem=attention_problems())
def test_matches_per_query_loop(problem):
    q, k, v, mask = problem
    out, w = no_warnings(scaled_dot_product_attention, q, k, v, mask=mask)
    ref_out, ref_w = ref_attention(q, k, v, mask)
    assert out.shape == ref_out.shape and w.shape == ref_w.shape
    np.testing.assert_allclose(w, ref_w, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(out, ref_out, rtol=1e-11, atol=1e-13)


@FAST
@given(problem=attention_problems(with_mask=False), scale=st.floats(0.01, 10.0))
def test_custom_scale_and_scores_match_loop(problem, scale):
    q, k, v, _ = problem
    out, w = scaled_dot_product_attention(q, k, v, scale=scale)
    ref_out, ref_w = ref_attention(q, k, v, scale=scale)
    np.testing.assert_allclose(w, ref_w, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(out, ref_out, rtol=1e-11, atol=1e-13)
    scores = attention_scores(q, k, scale=scale)
    batch = np.broadcast_shapes(q.shape[:-2], k.shape[:-2])
    assert scores.shape == batch + (q.shape[-2], k.shape[-2])
    qb = np.broadcast_to(q, batch + q.shape[-2:])
    kb = np.broadcast_to(k, batch + k.shape[-2:])
    for idx in np.ndindex(batch):
        expected = ref_scores_2d(qb[idx].tolist(), kb[idx].tolist(), scale)
        np.testing.assert_allclose(scores[idx], expected, rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("seed", range(5))
def test_attention_scores_match_loop(seed):
    rng = np.random.default_rng(seed)
    q, k = rng.normal(size=(2, 3, 4)), rng.normal(size=(5, 4))
    scores = attention_scores(q, k)
    assert scores.shape == (2, 3, 5)
    for b in range(2):
        np.testing.assert_allclose(scores[b], ref_scores_2d(q[b].tolist(), k.tolist()), rtol=1e-13)
    np.testing.assert_allclose(
        attention_scores(q, k, scale=0.1)[1], ref_scores_2d(q[1].tolist(), k.tolist(), 0.1)
    )


def test_small_hand_example():
    q = [[1.0, 0.0]]
    k = [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]
    v = [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]
    out, w = scaled_dot_product_attention(q, k, v)
    s = 1 / math.sqrt(2)  # scores: [s, 0, s]
    z = 2 * math.exp(s) + 1
    expected_w = [math.exp(s) / z, 1 / z, math.exp(s) / z]
    np.testing.assert_allclose(w, [expected_w], rtol=1e-14)
    expected_out = [sum(expected_w[j] * v[j][c] for j in range(3)) for c in range(2)]
    np.testing.assert_allclose(out, [expected_out], rtol=1e-14)


# --------------------------------------------------------------------------- properties


@FAST
@given(problem=attention_problems(dtypes=tuple(FLOAT_DTYPES), bound=100.0))
def test_weights_rows_sum_to_one_or_zero_and_output_in_hull(problem):
    q, k, v, mask = problem
    out, w = no_warnings(scaled_dot_product_attention, q, k, v, mask=mask)
    assert out.dtype == w.dtype == q.dtype
    assert np.all(np.isfinite(out)) and np.all(np.isfinite(w))
    sums = w.astype(np.float64).sum(axis=-1)
    tol = {np.float16: 3e-3, np.float32: 1e-5, np.float64: 1e-12}[q.dtype.type]
    if mask is None:
        np.testing.assert_allclose(sums, 1.0, atol=tol)
    else:
        full_mask = np.broadcast_to(mask, w.shape)
        assert np.all(w[~full_mask] == 0.0)  # masked weights are exactly zero
        dead = ~full_mask.any(axis=-1)  # fully masked rows
        np.testing.assert_array_equal(sums[dead], 0.0)
        np.testing.assert_array_equal(out[dead], 0.0)
        np.testing.assert_allclose(sums[~dead], 1.0, atol=tol)
        assert not np.any(np.signbit(out[dead]))
    # each output row is a convex combination of value rows (or 0 for dead rows)
    vb = np.broadcast_to(v, w.shape[:-2] + v.shape[-2:]).astype(np.float64)
    lo = np.minimum(vb.min(axis=-2, keepdims=True), 0.0)
    hi = np.maximum(vb.max(axis=-2, keepdims=True), 0.0)
    slack = tol * (np.abs(vb).max() + 1)
    assert np.all(out >= lo - slack) and np.all(out <= hi + slack)


@FAST
@given(problem=attention_problems(dtypes=tuple(FLOAT_DTYPES)))
def test_inputs_not_mutated(problem):
    q, k, v, mask = problem
    copies = [a.copy() for a in (q, k, v)]
    mask_copy = None if mask is None else mask.copy()
    out, w = scaled_dot_product_attention(q, k, v, mask=mask)
    attention_scores(q, k)
    for a, c in zip((q, k, v), copies, strict=True):
        np.testing.assert_array_equal(a, c)
        assert not np.shares_memory(a, out) and not np.shares_memory(a, w)
    if mask is not None:
        np.testing.assert_array_equal(mask, mask_copy)


@FAST
@given(problem=attention_problems(with_mask=False), data=st.data())
def test_permutation_equivariance(problem, data):
    q, k, v, _ = problem
    out, w = scaled_dot_product_attention(q, k, v)
    perm_k = data.draw(st.permutations(range(k.shape[-2])))
    out_k, w_k = scaled_dot_product_attention(q, k[..., perm_k, :], v[..., perm_k, :])
    np.testing.assert_allclose(out_k, out, rtol=1e-12, atol=1e-13)  # keys: output unchanged
    np.testing.assert_allclose(w_k, w[..., perm_k], rtol=1e-12, atol=1e-15)
    perm_q = data.draw(st.permutations(range(q.shape[-2])))
    out_q, _ = scaled_dot_product_attention(q[..., perm_q, :], k, v)
    np.testing.assert_allclose(out_q, out[..., perm_q, :], rtol=1e-12, atol=1e-13)


@FAST
@given(problem=attention_problems(dtypes=tuple(FLOAT_DTYPES), with_mask=False))
def test_all_true_mask_equals_no_mask(problem):
    q, k, v, _ = problem
    out, w = scaled_dot_product_attention(q, k, v)
    mask = np.ones((q.shape[-2], k.shape[-2]), dtype=bool)
    out_m, w_m = scaled_dot_product_attention(q, k, v, mask=mask)
    np.testing.assert_array_equal(out_m, out)
    np.testing.assert_array_equal(w_m, w)


def test_default_scale_is_inverse_sqrt_dk():
    rng = np.random.default_rng(1)
    q, k, v = rng.normal(size=(3, 9)), rng.normal(size=(4, 9)), rng.normal(size=(4, 2))
    a = scaled_dot_product_attention(q, k, v)
    b = scaled_dot_product_attention(q, k, v, scale=1 / 3)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(attention_scores(q, k), attention_scores(q, k, scale=1 / 3))


def test_fully_masked_row_is_zero_without_warning():
    q = np.ones((3, 2))
    k = np.ones((4, 2))
    v = np.arange(8.0).reshape(4, 2)
    mask = np.ones((3, 4), dtype=bool)
    mask[1] = False
    out, w = no_warnings(scaled_dot_product_attention, q, k, v, mask=mask)
    assert w[1].tolist() == [0.0, 0.0, 0.0, 0.0]
    assert out[1].tolist() == [0.0, 0.0]
    np.testing.assert_allclose(out[0], v.mean(axis=0))


def test_key_padding_mask_broadcasts_over_queries_and_batch():
    rng = np.random.default_rng(2)
    q, k, v = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 5, 4)), rng.normal(size=(2, 5, 3))
    pad = np.array([True, True, True, False, False])  # shape (n_k,)
    out, w = scaled_dot_product_attention(q, k, v, mask=pad)
    assert np.all(w[..., 3:] == 0.0)
    ref_out, _ = ref_attention(q[..., :, :], k[..., :3, :], v[..., :3, :])
    np.testing.assert_allclose(out, ref_out, rtol=1e-12)


def test_batch_broadcasting_shapes():
    q = np.zeros((2, 1, 3, 4))
    k = np.zeros((5, 6, 4))
    v = np.zeros((1, 6, 7))
    out, w = scaled_dot_product_attention(q, k, v)
    assert out.shape == (2, 5, 3, 7)
    assert w.shape == (2, 5, 3, 6)
    np.testing.assert_allclose(w, 1 / 6)


def test_lists_are_float64():
    out, w = scaled_dot_product_attention([[1, 0]], [[1, 0], [0, 1]], [[1], [2]])
    assert out.dtype == w.dtype == np.float64
    ref_out, ref_w = ref_attention_2d([[1.0, 0.0]], [[1.0, 0.0], [0.0, 1.0]], [[1.0], [2.0]])
    np.testing.assert_allclose(out, ref_out, rtol=1e-14)
    np.testing.assert_allclose(w, ref_w, rtol=1e-14)


@pytest.mark.parametrize(
    ("dq", "dk", "dv"),
    [
        (np.float16, np.float16, np.float16),
        (np.float32, np.float32, np.float32),
        (np.float16, np.float32, np.float16),
        (np.float32, np.float64, np.float32),
        (np.float64, np.float64, np.float64),
    ],
)
def test_result_dtype_is_common_float_type(dq, dk, dv):
    rng = np.random.default_rng(3)
    q = rng.normal(size=(2, 4)).astype(dq)
    k = rng.normal(size=(3, 4)).astype(dk)
    v = rng.normal(size=(3, 5)).astype(dv)
    out, w = scaled_dot_product_attention(q, k, v)
    expected = np.result_type(dq, dk, dv)
    assert out.dtype == w.dtype == expected
    assert attention_scores(q, k).dtype == np.result_type(dq, dk)
    ref_out, ref_w = ref_attention(q, k, v)  # exact attention of the same (rounded) inputs
    tol = {np.float16: 2e-3, np.float32: 1e-5, np.float64: 1e-12}[expected.type]
    np.testing.assert_allclose(w.astype(np.float64), ref_w, rtol=tol, atol=tol)
    np.testing.assert_allclose(out.astype(np.float64), ref_out, rtol=4 * tol, atol=4 * tol)


def test_float16_large_scores_do_not_overflow():
    rng = np.random.default_rng(4)
    d_k = 64
    q = rng.uniform(50, 100, size=(4, d_k)).astype(np.float16)
    k = rng.uniform(50, 100, size=(6, d_k)).astype(np.float16)
    v = rng.normal(size=(6, 3)).astype(np.float16)
    # naive float16 scores overflow: q @ k.T is about 64 * 75**2 = 360000 > 65504
    with np.errstate(over="ignore"):
        assert not np.all(np.isfinite(q @ k.T))
    out, w = no_warnings(scaled_dot_product_attention, q, k, v)
    assert out.dtype == w.dtype == np.float16
    assert np.all(np.isfinite(out)) and np.all(np.isfinite(w))
    ref_out, ref_w = ref_attention(q, k, v)
    np.testing.assert_allclose(w.astype(np.float64), ref_w, atol=2e-3)
    np.testing.assert_allclose(out.astype(np.float64), ref_out, atol=1e-2)


@FAST
@given(problem=attention_problems(dtypes=(np.float16, np.float32), bound=5.0))
def test_low_precision_close_to_reference(problem):
    q, k, v, mask = problem
    out, w = scaled_dot_product_attention(q, k, v, mask=mask)
    ref_out, ref_w = ref_attention(q, k, v, mask)
    tol = {np.float16: 2e-3, np.float32: 1e-5}[q.dtype.type]
    np.testing.assert_allclose(w.astype(np.float64), ref_w, rtol=tol, atol=tol)
    np.testing.assert_allclose(out.astype(np.float64), ref_out, rtol=tol, atol=10 * tol)


# --------------------------------------------------------------------------- causal mask


@pytest.mark.parametrize("n_q", range(1, 6))
@pytest.mark.parametrize("n_k", [None, 1, 2, 3, 5, 7])
def test_causal_mask_definition(n_q, n_k):
    mask = causal_mask(n_q, n_k)
    nk = n_q if n_k is None else n_k
    assert mask.dtype == np.bool_ and mask.shape == (n_q, nk)
    for i in range(n_q):
        for j in range(nk):
            assert mask[i, j] == (j <= i + (nk - n_q))
    if nk >= n_q:
        assert mask[-1].all()  # the last query sees every key
        assert mask.any(axis=1).all()  # nobody is left without a key


def test_causal_mask_accepts_numpy_ints():
    assert causal_mask(np.int64(3), np.int32(4)).shape == (3, 4)


@FAST
@given(n=st.integers(1, 6), d=st.integers(1, 4), data=st.data())
def test_causal_attention_ignores_the_future(n, d, data):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    q, k, v = rng.normal(size=(n, d)), rng.normal(size=(n, d)), rng.normal(size=(n, 2))
    out, w = scaled_dot_product_attention(q, k, v, mask=causal_mask(n))
    assert np.all(np.triu(w, 1) == 0.0)
    j = data.draw(st.integers(0, n - 1))
    k2, v2 = k.copy(), v.copy()
    k2[j:] += 10.0 * rng.normal(size=k2[j:].shape)  # change the "future" from position j
    v2[j:] += 10.0
    out2, _ = scaled_dot_product_attention(q, k2, v2, mask=causal_mask(n))
    np.testing.assert_array_equal(out2[:j], out[:j])  # earlier queries cannot tell
    ref_out, _ = ref_attention(q, k, v, causal_mask(n))
    np.testing.assert_allclose(out, ref_out, rtol=1e-12, atol=1e-13)


# --------------------------------------------------------------------------- causal=True


def causal_problem(n_q, n_k, seed=0, batch=()):
    rng = np.random.default_rng(seed)
    return (
        rng.normal(size=batch + (n_q, 3)),
        rng.normal(size=batch + (n_k, 3)),
        rng.normal(size=batch + (n_k, 2)),
    )


@pytest.mark.parametrize("n_q, n_k", [(1, 1), (5, 5), (2, 6), (6, 2), (4, 7)])
def test_causal_flag_equals_the_explicit_causal_mask(n_q, n_k):
    q, k, v = causal_problem(n_q, n_k)
    out, w = no_warnings(scaled_dot_product_attention, q, k, v, causal=True)
    expected_out, expected_w = scaled_dot_product_attention(q, k, v, mask=causal_mask(n_q, n_k))
    np.testing.assert_array_equal(w, expected_w)
    np.testing.assert_array_equal(out, expected_out)
    assert np.all(w[~causal_mask(n_q, n_k)] == 0.0)
    if n_q > n_k:  # bottom-right alignment: the first n_q - n_k queries see no key at all
        assert np.all(out[: n_q - n_k] == 0.0) and np.all(w[: n_q - n_k] == 0.0)


@pytest.mark.parametrize("n_q, n_k", [(7, 7), (3, 9), (9, 3)])
@pytest.mark.parametrize("block", [1, 2, 4])
def test_causal_flag_agrees_with_tiled_attention(n_q, n_k, block):
    from attnlab.tiling import tiled_attention

    q, k, v = causal_problem(n_q, n_k, seed=n_q + n_k, batch=(2,))
    out, _ = scaled_dot_product_attention(q, k, v, causal=True)
    tiled = tiled_attention(q, k, v, causal=True, block_size=block)
    np.testing.assert_allclose(out, tiled, rtol=1e-12, atol=1e-13)


def test_causal_flag_combines_with_a_mask_by_and():
    q, k, v = causal_problem(5, 5, seed=3, batch=(2,))
    keys = np.array([[True] * 5, [True, True, True, False, False]])[:, None, :]  # (2, 1, 5)
    out, w = scaled_dot_product_attention(q, k, v, mask=keys, causal=True)
    expected_out, expected_w = scaled_dot_product_attention(q, k, v, mask=keys & causal_mask(5))
    np.testing.assert_array_equal(w, expected_w)
    np.testing.assert_array_equal(out, expected_out)
    ref_out, ref_w = ref_attention(q, k, v, keys & causal_mask(5))
    np.testing.assert_allclose(w, ref_w, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(out, ref_out, rtol=1e-12, atol=1e-13)


def test_causal_false_is_plain_attention_and_inputs_are_kept():
    q, k, v = causal_problem(4, 6)
    mask = np.ones((4, 6), dtype=bool)
    kept = [a.copy() for a in (q, k, v, mask)]
    plain = scaled_dot_product_attention(q, k, v)
    for flag in (False, np.bool_(False)):
        got = scaled_dot_product_attention(q, k, v, causal=flag)
        for got_array, want in zip(got, plain, strict=True):
            np.testing.assert_array_equal(got_array, want)
    scaled_dot_product_attention(q, k, v, mask=mask, causal=True)
    for before, after in zip(kept, (q, k, v, mask), strict=True):
        np.testing.assert_array_equal(before, after)


@pytest.mark.parametrize("causal", [1, 0, "yes", None, [True]])
def test_causal_that_is_not_a_bool_is_refused(causal):
    q, k, v = causal_problem(3, 3)
    with pytest.raises(ValueError, match="causal must be True or False") as info:
        scaled_dot_product_attention(q, k, v, causal=causal)
    assert type(causal).__name__ in str(info.value)


def test_causal_with_a_mask_of_the_wrong_shape_names_the_mask():
    q, k, v = causal_problem(3, 4)
    with pytest.raises(ValueError, match=r"mask must be broadcastable .* \(3, 4\)"):
        scaled_dot_product_attention(q, k, v, mask=np.ones((4, 3), dtype=bool), causal=True)
