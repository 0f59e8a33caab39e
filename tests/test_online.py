"""attnlab.online: one blockwise pass equals the two-pass softmax, in every dtype."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from strategies import FAST, FLOAT_DTYPES, no_warnings

import attnlab
from attnlab.online import online_normaliser, online_softmax, online_softmax_update
from attnlab.softmax_family import logsumexp, softmax

TOL = {np.float16: 2e-3, np.float32: 1e-5, np.float64: 1e-12}


def loop_reference(row):
    """Element by element over Python floats, the textbook online softmax; -inf allowed."""
    m, l = -math.inf, 0.0
    for x in row:
        new = max(m, x)
        shift = new if math.isfinite(new) else 0.0
        l = l * math.exp(m - shift) + math.exp(x - shift)
        m = new
    if l == 0:
        return [0.0] * len(row)
    return [math.exp(x - m) / l for x in row]


@st.composite
def score_arrays(draw):
    dtype = draw(st.sampled_from(FLOAT_DTYPES))
    bound = {np.float16: 1e4, np.float32: 1e4, np.float64: 1e4}[dtype]
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=9))
    finite = st.floats(
        -bound, bound, allow_nan=False, allow_infinity=False, width=np.finfo(dtype).bits
    )
    elements = st.one_of(finite, finite, finite, st.just(-np.inf))
    return draw(hnp.arrays(dtype, shape, elements=elements))


@FAST
@given(score_arrays(), st.data())
def test_equals_the_two_pass_softmax(x, data):
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1))
    block = data.draw(st.integers(1, x.shape[axis] + 2))
    got = no_warnings(online_softmax, x, axis=axis, block_size=block)
    assert got.dtype == x.dtype and got.shape == x.shape
    np.testing.assert_allclose(
        got.astype(float),
        softmax(x, axis=axis).astype(float),
        atol=TOL[x.dtype.type],
        rtol=TOL[x.dtype.type],
    )


@FAST
@given(score_arrays(), st.data())
def test_normaliser_gives_max_and_logsumexp(x, data):
    block = data.draw(st.integers(1, x.shape[-1] + 2))
    m, l = no_warnings(online_normaliser, x, block_size=block)
    assert m.shape == l.shape == x.shape[:-1] + (1,)
    np.testing.assert_array_equal(m[..., 0], np.max(x, axis=-1).astype(m.dtype))
    empty = np.isneginf(m[..., 0])
    assert np.all(l[..., 0][empty] == 0) and np.all(l[..., 0][~empty] >= 1)
    with np.errstate(divide="ignore"):
        lse = m[..., 0] + np.log(l[..., 0])
    expected = logsumexp(x.astype(np.float64), axis=-1)
    # log(l) with l near 1 loses relative accuracy (x = [0, -4]: lse = 0.018 off by 3e-6
    # relative in float32), but its absolute error stays a few of the dtype's eps.
    eps = np.finfo(m.dtype).eps
    rtol = 1e-6 if m.dtype == np.float32 else 1e-12
    np.testing.assert_allclose(lse, expected, rtol=rtol, atol=4 * eps)


@pytest.mark.parametrize("block", [1, 2, 3, 7, 8, 100])
def test_against_plain_loops(block):
    rng = np.random.default_rng(block)
    x = rng.normal(size=(5, 7)) * 30  # (5, 7)
    x[1, :4] = -np.inf  # a first block that is fully masked
    x[2] = -np.inf  # a fully masked row
    expected = np.array([loop_reference(row) for row in x.tolist()])
    np.testing.assert_allclose(
        no_warnings(online_softmax, x, block_size=block), expected, rtol=1e-12, atol=1e-15
    )


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_extreme_scores(dtype):
    x = np.array(
        [[1e4, 1e4 - 1, -1e4], [-1e4, -1e4, -1e4], [-np.inf, -np.inf, -np.inf]], dtype=dtype
    )
    p = no_warnings(online_softmax, x, block_size=2)
    assert p.dtype == dtype and np.all(np.isfinite(p))
    np.testing.assert_allclose(p.astype(float), softmax(x).astype(float), atol=TOL[dtype])
    assert p[2].tolist() == [0.0, 0.0, 0.0]


def test_update_in_one_block_or_many():
    x = np.array([[3.0, 1.0, 4.0, 1.0, 5.0], [-np.inf, -np.inf, 2.0, -np.inf, 0.0]])
    m, l = np.full(2, -np.inf), np.zeros(2)
    for start in range(0, 5, 2):
        m, l = no_warnings(online_softmax_update, m, l, x[:, start : start + 2])
    whole = no_warnings(online_softmax_update, np.full(2, -np.inf), np.zeros(2), x)
    np.testing.assert_allclose(m, whole[0])
    np.testing.assert_allclose(l, whole[1])
    np.testing.assert_allclose(m + np.log(l), logsumexp(x))


def test_update_dtypes_and_broadcasting():
    half = np.float16
    m, l = online_softmax_update(half(-np.inf), half(0.0), np.ones((3, 2), dtype=half))
    assert m.shape == l.shape == (3,) and m.dtype == l.dtype == np.float32  # float16 -> work
    assert l.tolist() == [2.0] * 3
    m, l = online_softmax_update(-np.inf, 0.0, np.ones((3, 2), dtype=half))
    assert m.dtype == np.float64  # Python floats count as float64, as everywhere in attnlab


def test_inputs_are_not_changed():
    x = np.array([[1.0, -np.inf, 3.0]])
    m, l = np.array([2.0]), np.array([1.5])
    before = x.copy(), m.copy(), l.copy()
    online_softmax(x, block_size=1)
    online_normaliser(x)
    online_softmax_update(m, l, x)
    for a, b in zip((x, m, l), before, strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize(
    "call, words",
    [
        (lambda: online_softmax([1.0, np.nan]), ["x", "NaN", "(2,)"]),
        (lambda: online_softmax([1.0, np.inf]), ["x", "+inf", "(2,)"]),
        (lambda: online_softmax(3.0), ["x", "at least 1 dimension"]),
        (lambda: online_softmax(np.zeros((2, 0))), ["x", "length 0", "(2, 0)"]),
        (lambda: online_softmax([1.0], axis=1), ["axis 1", "(1,)"]),
        (lambda: online_softmax([1.0], block_size=0), ["block_size", ">= 1"]),
        (lambda: online_normaliser([1.0], block_size=2.0), ["block_size", "2.0"]),
        (lambda: online_softmax_update(0.0, 1.0, np.zeros((2, 0))), ["block", "length 0"]),
        (lambda: online_softmax_update(0.0, -1.0, [1.0]), ["l must be >= 0"]),
        (lambda: online_softmax_update(np.inf, 1.0, [1.0]), ["m must be finite or -inf"]),
        (
            lambda: online_softmax_update(np.zeros(3), np.zeros(3), np.zeros((2, 4))),
            ["m, l and block", "(3,)", "(2, 4)"],
        ),
        (lambda: online_softmax_update(0.0, 1.0, ["a"]), ["block", "real numbers"]),
    ],
)
def test_bad_input_names_the_argument(call, words):
    with pytest.raises(ValueError) as info:
        call()
    for word in words:
        assert word in str(info.value)


def test_online_and_tiled_numerics_need_numpy_only():
    """Numpy only, documented, re-exported; the modules keep their own names."""
    import importlib

    from test_numerics_import import heavy_modules_after

    assert heavy_modules_after("import attnlab.online, attnlab.tiling") == []
    for module_name in ("attnlab.online", "attnlab.tiling"):
        module = importlib.import_module(module_name)
        for name in module.__all__:
            function = getattr(module, name)
            assert getattr(attnlab, name) is function and name in attnlab.__all__
            for section in ("Parameters", "Returns", "Raises", "Examples"):
                assert section in function.__doc__, f"{name} lacks {section}"
