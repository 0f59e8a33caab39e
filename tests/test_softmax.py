"""Tests for attnlab.softmax_family: properties (hypothesis) and an exact Decimal reference."""

from __future__ import annotations

import math
from decimal import Decimal, localcontext

import mpmath  # a pinned dev dependency (requirements-dev.txt): the 50-digit reference
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from strategies import FAST, FLOAT_DTYPES, float_arrays, no_warnings

from attnlab.softmax_family import (
    entropy,
    log_softmax,
    logsumexp,
    naive_softmax,
    softmax,
    softmax_jacobian,
)

# Tolerance on "sums to 1" after rounding every entry to the dtype.
SUM_TOL = {np.float16: 2e-3, np.float32: 1e-5, np.float64: 1e-12}
# Tolerance against the exact reference, per dtype.
REF_TOL = {np.float16: 2e-3, np.float32: 1e-5, np.float64: 1e-12}


# --------------------------------------------------------------------------- helpers


def axes_for(x: np.ndarray):
    return st.integers(-x.ndim, x.ndim - 1)


temperatures = st.floats(1e-3, 1e3, allow_nan=False, allow_infinity=False)


def ref_softmax(xs, temperature=1.0):
    """Exact-ish softmax of a 1-D list of floats in 60-digit Decimal arithmetic."""
    with localcontext() as ctx:
        ctx.prec = 60
        ds = [Decimal(float(x)) for x in xs]  # float -> Decimal is exact; -inf allowed
        if all(d == Decimal("-Infinity") for d in ds):
            return [0.0] * len(ds)
        m = max(ds)
        es = [((d - m) / Decimal(float(temperature))).exp() for d in ds]
        total = sum(es)
        return [float(e / total) for e in es]


def ref_logsumexp(xs):
    with localcontext() as ctx:
        ctx.prec = 60
        ds = [Decimal(float(x)) for x in xs]
        m = max(ds)
        if m == Decimal("-Infinity"):
            return -math.inf
        return float(m + sum((d - m).exp() for d in ds).ln())


def ref_log_softmax(xs, temperature=1.0):
    with localcontext() as ctx:
        ctx.prec = 60
        ds = [Decimal(float(x)) / Decimal(float(temperature)) for x in xs]
        m = max(ds)
        lse = m + sum((d - m).exp() for d in ds).ln()
        return [float(d - lse) for d in ds]


def apply_1d(ref, x: np.ndarray, axis: int, **kwargs) -> np.ndarray:
    """Apply a 1-D list reference along ``axis`` of x (in float64)."""
    moved = np.moveaxis(np.asarray(x, dtype=np.float64), axis, -1)
    out = np.empty_like(moved)
    for idx in np.ndindex(moved.shape[:-1]):
        out[idx] = ref(moved[idx].tolist(), **kwargs)
    return np.moveaxis(out, -1, axis)


# --------------------------------------------------------------------------- softmax properties


@FAST
@given(data=st.data(), x=float_arrays())
def test_sums_to_one_dtype_shape_any_axis(data, x):
    axis = data.draw(axes_for(x))
    t = data.draw(temperatures)
    p = no_warnings(softmax, x, axis=axis, temperature=t)
    assert p.dtype == x.dtype and p.shape == x.shape
    assert np.all(np.isfinite(p)) and np.all(p >= 0) and np.all(p <= 1)
    sums = p.astype(np.float64).sum(axis=axis)
    np.testing.assert_allclose(sums, 1.0, rtol=0, atol=SUM_TOL[x.dtype.type])


@FAST
@given(data=st.data(), x=float_arrays())
def test_input_not_mutated_and_no_aliasing(data, x):
    axis = data.draw(axes_for(x))
    before = x.copy()
    for fn in (softmax, log_softmax, naive_softmax):
        out = no_warnings(fn, x, axis=axis)
        assert not np.shares_memory(out, x)
    no_warnings(logsumexp, x, axis=axis)
    np.testing.assert_array_equal(x, before)
    p = softmax(x.astype(np.float64), axis=axis)
    before_p = p.copy()
    entropy(p, axis=axis)
    softmax_jacobian(np.moveaxis(p, axis, -1))
    np.testing.assert_array_equal(p, before_p)


@FAST
@given(data=st.data(), x=float_arrays())
def test_no_nan_or_warning_from_finite_input(data, x):
    axis = data.draw(axes_for(x))
    t = data.draw(temperatures)
    for out in (
        no_warnings(softmax, x, axis=axis, temperature=t),
        no_warnings(log_softmax, x, axis=axis, temperature=t),
        no_warnings(logsumexp, x, axis=axis),
    ):
        assert not np.any(np.isnan(out))
    lse = logsumexp(x.astype(np.float64), axis=axis)
    assert np.all(np.isfinite(lse))  # float64 cannot overflow from values <= dtype max + log n


@FAST
@given(
    data=st.data(),
    dtype=st.sampled_from(FLOAT_DTYPES),
    shape=hnp.array_shapes(min_dims=1, max_dims=3, max_side=6),
)
def test_shift_invariance_is_exact_for_exact_shifts(data, dtype, shape):
    # Integers and integer shifts up to 1000 are exact in float16, so x + c loses
    # nothing and the max-shifted exponents are bit-identical.
    ints = hnp.arrays(np.int64, shape, elements=st.integers(-500, 500))
    x = data.draw(ints).astype(dtype)
    c = dtype(data.draw(st.integers(-500, 500)))
    axis = data.draw(axes_for(x))
    np.testing.assert_array_equal(softmax(x + c, axis=axis), softmax(x, axis=axis))


@FAST
@given(
    x=hnp.arrays(np.float64, st.integers(1, 8), elements=st.floats(-100, 100)),
    c=st.floats(-100, 100),
)
def test_shift_invariance_float64(x, c):
    np.testing.assert_allclose(softmax(x + c), softmax(x), rtol=1e-11, atol=1e-300)


@FAST
@given(x=float_arrays(max_dims=1, max_side=8), t=temperatures)
def test_order_preserved_and_ties_equal(x, t):
    p = softmax(x, temperature=t)
    for i in range(x.size):
        for j in range(x.size):
            if x[i] < x[j]:
                assert p[i] <= p[j]
            elif x[i] == x[j]:
                assert p[i] == p[j]


@FAST
@given(
    x=hnp.arrays(np.int64, st.integers(1, 8), elements=st.integers(-100, 100), unique=True),
    dtype=st.sampled_from(FLOAT_DTYPES),
    t=st.floats(1e-6, 1e-3),
)
def test_low_temperature_is_one_hot_on_unique_max(x, dtype, t):
    # Distinct integers differ by >= 1, so exp(-1/T) <= exp(-1000) == 0 in every dtype.
    p = no_warnings(softmax, x.astype(dtype), temperature=t)
    expected = np.zeros(x.size)
    expected[np.argmax(x)] = 1.0
    np.testing.assert_array_equal(p, expected)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("t", [0.05, 1e-3, 1e-8])
def test_low_temperature_ties_share_equally(dtype, t):
    p = no_warnings(softmax, np.array([3.0, 1.0, 3.0, -2.0], dtype=dtype), temperature=t)
    assert p[0] == p[2]
    if t <= 1e-3:  # gap 2 / T >= 2000: exp underflows to exactly 0
        assert p.tolist() == [0.5, 0.0, 0.5, 0.0]
    else:
        np.testing.assert_allclose(p.astype(np.float64), [0.5, 0.0, 0.5, 0.0], atol=1e-17)


@FAST
@given(
    x=hnp.arrays(np.float64, st.integers(1, 8), elements=st.floats(-100, 100)),
    dtype=st.sampled_from(FLOAT_DTYPES),
)
def test_high_temperature_is_uniform(x, dtype):
    x = x.astype(dtype)
    p = softmax(x, temperature=1e15)  # exponents (x - max) / T are >= -2e-13
    n = x.size
    tol = {np.float16: 1e-3, np.float32: 1e-6, np.float64: 1e-9}[dtype]
    np.testing.assert_allclose(p.astype(np.float64), np.full(n, 1 / n), rtol=tol, atol=0)


@FAST
@given(data=st.data(), x=float_arrays(max_side=5))
def test_neg_inf_gets_exactly_zero(data, x):
    axis = data.draw(axes_for(x))
    blocked = data.draw(hnp.arrays(np.bool_, x.shape))
    masked = np.where(blocked, -np.inf, x).astype(x.dtype)
    p = no_warnings(softmax, masked, axis=axis)
    assert np.all(p[blocked] == 0.0)
    all_blocked = np.all(blocked, axis=axis)
    sums = p.astype(np.float64).sum(axis=axis)
    np.testing.assert_array_equal(sums[all_blocked], 0.0)
    np.testing.assert_allclose(sums[~all_blocked], 1.0, atol=SUM_TOL[x.dtype.type])
    logp = no_warnings(log_softmax, masked, axis=axis)
    assert np.all(np.isneginf(logp[blocked]))
    assert not np.any(np.isnan(logp))
    lse = no_warnings(logsumexp, masked, axis=axis)
    assert np.all(np.isneginf(lse[all_blocked]))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_all_neg_inf_rows(dtype):
    x = np.array([[-np.inf, -np.inf, -np.inf], [0.0, -np.inf, 0.0]], dtype=dtype)
    assert no_warnings(softmax, x).tolist() == [[0.0, 0.0, 0.0], [0.5, 0.0, 0.5]]
    assert no_warnings(softmax, x, temperature=1e-3).tolist()[0] == [0.0, 0.0, 0.0]
    logp = no_warnings(log_softmax, x)
    assert np.all(np.isneginf(logp[0]))
    assert logp[1, 1] == -np.inf
    assert no_warnings(logsumexp, x)[0] == -np.inf


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_pos_inf_convention(dtype):
    x = np.array([[np.inf, 5.0, np.inf, -np.inf], [1.0, np.inf, 2.0, 3.0]], dtype=dtype)
    p = no_warnings(softmax, x)
    assert p.tolist() == [[0.5, 0.0, 0.5, 0.0], [0.0, 1.0, 0.0, 0.0]]
    logp = no_warnings(log_softmax, x)
    np.testing.assert_allclose(np.exp(logp.astype(np.float64)), p, rtol=1e-3)
    assert np.all(np.isposinf(no_warnings(logsumexp, x)))


@FAST
@given(data=st.data(), x=float_arrays())
def test_any_axis_matches_last_axis(data, x):
    axis = data.draw(axes_for(x))
    # Summation order may differ between axes, so allow a few ulps.
    tol = 8 * float(np.finfo(x.dtype).eps)
    for fn in (softmax, log_softmax):
        along = fn(x, axis=axis)
        moved = np.moveaxis(fn(np.moveaxis(x, axis, -1)), -1, axis)
        np.testing.assert_allclose(along, moved, rtol=tol, atol=0)
    lse = logsumexp(np.moveaxis(x, axis, -1), axis=-1)
    np.testing.assert_allclose(logsumexp(x, axis=axis), lse, rtol=tol, atol=0)


def test_lists_ints_and_bools_are_float64():
    p = softmax([2, 1, 1])
    assert p.dtype == np.float64
    np.testing.assert_allclose(p, ref_softmax([2, 1, 1]), rtol=1e-14)
    assert softmax(np.array([3, 1], dtype=np.int8)).dtype == np.float64
    assert softmax([True, False]).dtype == np.float64
    assert logsumexp([0, 0]).dtype == np.float64


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_large_inputs_stable_but_naive_overflows(dtype):
    big = {np.float16: 12.0, np.float32: 89.0, np.float64: 710.0}[dtype]
    x = np.array([big, 0.0], dtype=dtype)
    naive = no_warnings(naive_softmax, x)
    assert np.isnan(naive[0])
    stable = no_warnings(softmax, x)
    ref = ref_softmax([big, 0.0])
    np.testing.assert_allclose(stable.astype(np.float64), ref, rtol=1e-3, atol=1e-7)


@pytest.mark.parametrize("t", [0.05, 1e-3])
def test_small_temperature_does_not_overflow(t):
    x = np.array([40.0, 39.0, 10.0])
    p = no_warnings(softmax, x, temperature=t)
    np.testing.assert_allclose(p, ref_softmax(x.tolist(), t), rtol=1e-12, atol=1e-300)
    with np.errstate(over="ignore", invalid="ignore"):
        assert np.isnan(naive_softmax(x / t)[0])  # the unshifted version does overflow


# --------------------------------------------------------------------------- exact reference

SMALL_CASES = [
    [0.0],
    [1.0, 2.0, 3.0],
    [-1.0, 0.0, 1.0, 1.0],
    [1000.0, 999.0, 0.0],
    [-1000.0, -1001.5],
    [1e-8, -1e-8, 0.0],
    [700.0, -700.0, 5.0, 5.0],
    [1e300, -1e300, 0.0],
    [-745.0, 0.0],
    [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7],
]


@pytest.mark.parametrize("xs", SMALL_CASES)
@pytest.mark.parametrize("t", [1.0, 0.5, 3.0, 0.05, 1e-3])
def test_softmax_matches_decimal_reference(xs, t):
    np.testing.assert_allclose(softmax(xs, temperature=t), ref_softmax(xs, t), rtol=1e-12, atol=0)


@FAST
@given(
    x=hnp.arrays(np.float64, st.integers(1, 6), elements=st.floats(-1e3, 1e3)),
    t=st.floats(0.05, 20.0),
)
def test_softmax_log_softmax_logsumexp_vs_decimal(x, t):
    xs = x.tolist()
    # atol covers subnormal results, whose relative precision is lower.
    np.testing.assert_allclose(
        softmax(x, temperature=t), ref_softmax(xs, t), rtol=1e-12, atol=1e-300
    )
    ref_log = ref_log_softmax(xs, t)
    np.testing.assert_allclose(log_softmax(x, temperature=t), ref_log, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(logsumexp(x), ref_logsumexp(xs), rtol=1e-14, atol=1e-14)


@FAST
@given(data=st.data(), x=float_arrays(dtypes=(np.float16, np.float32), bound=50.0))
def test_low_precision_dtypes_vs_decimal(data, x):
    axis = data.draw(axes_for(x))
    p = softmax(x, axis=axis)
    ref = apply_1d(ref_softmax, x, axis)  # exact softmax of the same (rounded) inputs
    tol = REF_TOL[x.dtype.type]
    np.testing.assert_allclose(p.astype(np.float64), ref, rtol=tol, atol=tol * 1e-3)


# --------------------------------------------------------------------------- naive_softmax


@FAST
@given(x=float_arrays(bound=5.0))
def test_naive_matches_stable_for_moderate_inputs(x):
    tol = REF_TOL[x.dtype.type]
    np.testing.assert_allclose(
        naive_softmax(x).astype(np.float64), softmax(x).astype(np.float64), rtol=4 * tol
    )
    assert naive_softmax(x).dtype == x.dtype


def test_naive_is_textbook_and_silent():
    np.testing.assert_allclose(no_warnings(naive_softmax, [2, 1, 1]), ref_softmax([2, 1, 1]))
    assert no_warnings(naive_softmax, np.array([1000.0, 0.0])).tolist()[1] == 0.0
    assert np.all(np.isnan(no_warnings(naive_softmax, [-np.inf, -np.inf])))  # 0 / 0
    # exp underflows to 0 for every entry: 0 / 0 again, where softmax gives [0.5, 0.5]
    assert np.all(np.isnan(no_warnings(naive_softmax, np.array([-1000.0, -1000.0]))))
    assert softmax(np.array([-1000.0, -1000.0])).tolist() == [0.5, 0.5]


# ------------------------------------------------------------------------ logsumexp / log_softmax


@FAST
@given(data=st.data(), x=float_arrays())
def test_logsumexp_bounds_and_keepdims(data, x):
    axis = data.draw(axes_for(x))
    x64 = x.astype(np.float64)
    lse = logsumexp(x64, axis=axis)
    m = np.max(x64, axis=axis)
    n = x.shape[axis]
    assert np.all(lse >= m)
    assert np.all(lse <= m + math.log(n) + 1e-12 * np.abs(m) + 1e-12)
    kept = logsumexp(x, axis=axis, keepdims=True)
    assert kept.shape == tuple(1 if i == axis % x.ndim else s for i, s in enumerate(x.shape))
    assert kept.dtype == x.dtype


@FAST
@given(data=st.data(), x=float_arrays(bound=50.0))
def test_log_softmax_consistent_with_softmax(data, x):
    axis = data.draw(axes_for(x))
    t = data.draw(st.floats(0.1, 10.0))
    logp = log_softmax(x, axis=axis, temperature=t)
    assert logp.dtype == x.dtype
    assert np.all(logp <= 0)
    tol = 10 * REF_TOL[x.dtype.type]
    np.testing.assert_allclose(
        np.exp(logp.astype(np.float64)),
        softmax(x, axis=axis, temperature=t).astype(np.float64),
        rtol=tol,
        atol=tol * 1e-2,
    )
    np.testing.assert_allclose(logsumexp(logp.astype(np.float64), axis=axis), 0.0, atol=tol)


def test_log_softmax_keeps_information_softmax_underflows():
    x = np.array([1000.0, 0.0, -2000.0])
    assert softmax(x).tolist() == [1.0, 0.0, 0.0]
    np.testing.assert_allclose(log_softmax(x), ref_log_softmax(x.tolist()), rtol=1e-15)


def test_logsumexp_float16_near_max_without_warning():
    x = np.array([65504.0, 65504.0, 65504.0], dtype=np.float16)  # 65504 + log 3
    out = no_warnings(logsumexp, x)
    assert out.dtype == np.float16
    assert out == np.float16(65504.0 + math.log(3))
    small = np.array([60000.0, 60000.0], dtype=np.float16)
    assert float(no_warnings(logsumexp, small)) == float(np.float16(60000.0 + math.log(2)))


# --------------------------------------------------------------------------- jacobian


def finite_difference_jacobian(x: np.ndarray, h: float = 1e-5) -> np.ndarray:
    n = x.size
    jac = np.empty((n, n))
    for j in range(n):
        e = np.zeros(n)
        e[j] = h
        jac[:, j] = (softmax(x + e) - softmax(x - e)) / (2 * h)  # column j = dp / dx_j
    return jac


@FAST
@given(x=hnp.arrays(np.float64, st.integers(1, 6), elements=st.floats(-5, 5)))
def test_jacobian_matches_finite_differences(x):
    jac = softmax_jacobian(softmax(x))
    np.testing.assert_allclose(jac, finite_difference_jacobian(x), atol=1e-8)
    np.testing.assert_allclose(jac, jac.T, atol=0)
    np.testing.assert_allclose(jac.sum(axis=0), 0.0, atol=1e-14)


def test_jacobian_batch_dtype_and_saturation():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2, 3, 4))
    jac = softmax_jacobian(softmax(x))
    assert jac.shape == (2, 3, 4, 4)
    for idx in np.ndindex(2, 3):
        np.testing.assert_allclose(jac[idx], finite_difference_jacobian(x[idx]), atol=1e-8)
    assert softmax_jacobian(softmax(x.astype(np.float32))).dtype == np.float32
    assert not np.any(softmax_jacobian([0.0, 1.0, 0.0]))  # one-hot: all zeros
    assert not np.any(softmax_jacobian([0.0, 0.0]))  # fully masked row
    np.testing.assert_allclose(softmax_jacobian([0.5, 0.5]), [[0.25, -0.25], [-0.25, 0.25]])


def test_jacobian_norm_shrinks_when_saturated():
    norms = []
    for scale in [1.0, 10.0, 100.0]:
        x = np.array([1.0, 0.0, -1.0]) * scale
        norms.append(np.linalg.norm(softmax_jacobian(softmax(x))))
        expected = np.linalg.norm(finite_difference_jacobian(x, h=1e-6))
        assert norms[-1] == pytest.approx(expected, abs=1e-6)
    assert norms[0] > norms[1] > norms[2]
    assert norms[2] < 1e-40  # exp(-100): the gradient has vanished


# --------------------------------------------------------------------------- entropy


@pytest.mark.parametrize("n", range(1, 11))
def test_entropy_uniform_is_log_n(n):
    assert float(entropy(np.full(n, 1.0 / n))) == pytest.approx(math.log(n), rel=1e-14, abs=1e-15)


@pytest.mark.parametrize("n", range(1, 8))
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_entropy_one_hot_is_zero(n, dtype):
    p = np.zeros(n, dtype=dtype)
    p[n // 2] = 1
    h = no_warnings(entropy, p)
    assert h.dtype == dtype
    assert float(h) == 0.0 and not np.signbit(h)


def test_entropy_hand_values():
    # H(1/2, 1/4, 1/4) = 1/2 log 2 + 2 * 1/4 log 4 = 3/2 log 2
    assert float(entropy([0.5, 0.25, 0.25])) == pytest.approx(1.5 * math.log(2), rel=1e-15)
    # H(0.9, 0.1, 0) = -(0.9 log 0.9 + 0.1 log 0.1), the 0 contributes nothing
    expected = -(0.9 * math.log(0.9) + 0.1 * math.log(0.1))
    assert float(no_warnings(entropy, [0.9, 0.1, 0.0])) == pytest.approx(expected, rel=1e-14)
    h = entropy(np.array([[0.5, 1.0], [0.5, 0.0]]), axis=0)
    assert h.shape == (2,)
    assert h.tolist() == pytest.approx([math.log(2), 0.0])
    assert float(entropy([0.0, 0.0])) == 0.0  # fully masked row


@FAST
@given(data=st.data(), x=float_arrays(dtypes=(np.float32, np.float64), bound=30.0))
def test_entropy_bounds(data, x):
    axis = data.draw(axes_for(x))
    h = no_warnings(entropy, softmax(x, axis=axis), axis=axis)
    assert h.shape == tuple(s for i, s in enumerate(x.shape) if i != axis % x.ndim)
    assert h.dtype == x.dtype
    n = x.shape[axis]
    assert np.all(h >= -1e-6) and np.all(h <= math.log(n) + 1e-5)


# ------------------------------------------------- accuracy against mpmath (50 significant digits)
#
# A backward-stable formula has an error of a few ulps times the *condition number*.  For
# logsumexp that number is Σ p_j |x_j| / |lse| (p = softmax(x)), huge when lse is near 0 with
# large |x_j|, and 1 when one entry dominates (lse ≈ max).  The bounds below are that: a few
# (n + 2) ulps of the work dtype times |result| + Σ p_j |s_j| (s = the shifted scores), which
# still demands full relative accuracy in the case scipy fixed with log1p: [0, -40] must give
# 4.248e-18, where log(1 + 4.248e-18) = 0.

ACCURACY = settings(max_examples=80, deadline=None)
EXPONENT = {np.float16: 12.0, np.float32: 80.0, np.float64: 700.0}


def mp_shifted_and_lse(xs, temperature=1.0):
    """(s_j = (x_j - m) / T, log Σ e^{s_j}) in 50-digit mpmath; inputs taken exactly."""
    with mpmath.workdps(50):
        t = mpmath.mpf(float(temperature))
        s = [(mpmath.mpf(float(x)) - mpmath.mpf(float(max(xs)))) / t for x in xs]
        others = list(s)
        others.remove(0)  # e^0 = 1 is added exactly by log1p: 1 + 1e-40 needs no 60 digits
        return s, mpmath.log1p(mpmath.fsum(mpmath.exp(v) for v in others))


def accuracy_bound(dtype, n, *terms):
    """A few ulps of the work dtype (float32 for float16) times the given magnitudes."""
    eps = float(np.finfo(np.result_type(dtype, np.float32)).eps)
    return 4 * (n + 2) * eps * float(sum(terms))


def scores_near_zero_result(dtype):
    """1-D scores in which logsumexp is often near 0: a 0 at the top, the rest far below."""
    b = EXPONENT[dtype]
    width = np.finfo(dtype).bits
    rest = st.lists(st.floats(-b, 0.0, width=width), min_size=0, max_size=6)
    return rest.map(lambda r: np.array([0.0, *r], dtype=dtype))


def any_scores(dtype):
    b = EXPONENT[dtype]
    width = np.finfo(dtype).bits
    elements = st.floats(-b, b, width=width)
    return hnp.arrays(dtype, st.integers(1, 8), elements=elements)


def scores(dtype):
    return st.one_of(scores_near_zero_result(dtype), any_scores(dtype))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_logsumexp_near_zero_result_has_full_relative_accuracy(dtype):
    x = np.array([0.0, -40.0])
    assert logsumexp(x) == pytest.approx(4.248354255291589e-18, rel=1e-15)
    assert logsumexp([0.0, -30.0]) == pytest.approx(
        float(mp_shifted_and_lse([0, -30])[1]), rel=1e-15
    )
    x = np.array([0.0, -8.0], dtype=dtype)  # e^-8 = 3.4e-4 is representable in float16 too
    ref = float(mp_shifted_and_lse(x.tolist())[1])
    assert abs(float(logsumexp(x)) - ref) <= float(np.finfo(dtype).eps) * ref


@ACCURACY
@given(data=st.data(), dtype=st.sampled_from(FLOAT_DTYPES))
def test_logsumexp_accuracy_vs_mpmath(data, dtype):
    x = data.draw(scores(dtype))
    s, lse = mp_shifted_and_lse(x.tolist())
    ref = mpmath.mpf(float(max(x.tolist()))) + lse
    p = [mpmath.exp(v - lse) for v in s]
    xs = [mpmath.mpf(float(xj)) for xj in x.tolist()]
    spread = float(mpmath.fsum(pj * abs(xj) for pj, xj in zip(p, xs, strict=True)))
    got = logsumexp(x)
    assert type(got) is dtype  # a numpy scalar, like np.sum
    err = abs(mpmath.mpf(float(got)) - ref)
    tol = accuracy_bound(dtype, x.size, abs(ref), spread)
    if dtype is np.float16:
        tol += float(np.finfo(dtype).eps) * float(abs(ref))  # the final rounding to float16
    tol += float(np.finfo(dtype).smallest_subnormal)  # results in the subnormal range
    assert err <= tol, (x.tolist(), float(got), float(ref), float(err), tol)


@ACCURACY
@given(data=st.data(), dtype=st.sampled_from(FLOAT_DTYPES), t=st.floats(0.05, 20.0))
def test_log_softmax_accuracy_vs_mpmath(data, dtype, t):
    x = data.draw(scores(dtype))
    s, lse = mp_shifted_and_lse(x.tolist(), t)
    p = [mpmath.exp(v - lse) for v in s]
    spread = float(mpmath.fsum(pj * abs(v) for pj, v in zip(p, s, strict=True)))
    got = log_softmax(x, temperature=t)
    for got_i, s_i in zip(got.tolist(), s, strict=True):
        ref = s_i - lse
        if dtype is np.float16 and ref < -60000:
            continue  # rounds to -inf in float16 (documented)
        err = abs(mpmath.mpf(got_i) - ref)
        tol = accuracy_bound(dtype, x.size, abs(ref), abs(s_i), abs(lse), spread)
        if dtype is np.float16:
            tol += float(np.finfo(dtype).eps) * float(abs(ref))
        tol += float(np.finfo(dtype).smallest_subnormal)  # results in the subnormal range
        assert err <= tol, (x.tolist(), t, got_i, float(ref), float(err), tol)


@ACCURACY
@given(data=st.data(), dtype=st.sampled_from(FLOAT_DTYPES), t=st.floats(0.05, 20.0))
def test_softmax_relative_accuracy_vs_mpmath(data, dtype, t):
    x = data.draw(scores(dtype))
    s, lse = mp_shifted_and_lse(x.tolist(), t)
    p = [mpmath.exp(v - lse) for v in s]
    spread = float(mpmath.fsum(pj * abs(v) for pj, v in zip(p, s, strict=True)))
    got = softmax(x, temperature=t)
    tiny = float(np.finfo(dtype).tiny)  # below it (subnormals) precision is lower by design
    for got_i, p_i, s_i in zip(got.tolist(), p, s, strict=True):
        if p_i < tiny:
            assert got_i <= 2 * tiny
            continue
        rel = abs(mpmath.mpf(got_i) - p_i) / p_i
        tol = accuracy_bound(dtype, x.size, 1, abs(s_i), spread)
        if dtype is np.float16:
            tol += float(np.finfo(dtype).eps)
        assert rel <= tol, (x.tolist(), t, got_i, float(p_i), float(rel), tol)


def test_logsumexp_and_entropy_return_the_same_kind():
    """Both follow numpy's reductions: a numpy scalar for a 0-d result, else an array."""
    p = softmax([1.0, 2.0, 3.0])
    for dtype in FLOAT_DTYPES:
        x = np.array([1.0, 2.0, 3.0], dtype=dtype)
        assert type(logsumexp(x)) is dtype and type(np.sum(x)) is dtype
        assert type(entropy(p.astype(dtype))) is dtype
    assert isinstance(logsumexp(np.zeros((2, 3))), np.ndarray)
    assert isinstance(entropy(np.full((2, 3), 1 / 3)), np.ndarray)
    assert isinstance(logsumexp([1.0, 2.0], keepdims=True), np.ndarray)
