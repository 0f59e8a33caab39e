"""Tests for attnlab.patterns (lesson 4's heatmap measures) and examples.cat_sat_down_wide.

Every measure is checked against an independent reference written here in plain
Python/numpy, over hypothesis-drawn attention weights of every float dtype.
"""

from __future__ import annotations

import math
from itertools import pairwise

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from strategies import FAST, FLOAT_DTYPES, float_arrays, no_warnings

import attnlab
from attnlab import patterns
from attnlab.examples import WIDE_D_K, cat_sat_down, cat_sat_down_wide
from attnlab.patterns import (
    PATTERNS,
    TITLES,
    column_mass,
    diagonal_mass,
    normalised_entropy,
    pattern_example,
    strongest_links,
)
from attnlab.softmax_family import softmax

# Tolerance of a measure against its float64 reference, per dtype of the weights.
REF_TOL = {np.float16: 4e-3, np.float32: 1e-5, np.float64: 1e-12}
# Tolerance on a sum of up to 6 weights each rounded to the dtype.
SUM_TOL = {np.float16: 1e-2, np.float32: 1e-5, np.float64: 1e-12}


# --------------------------------------------------------------------------- helpers


@st.composite
def weight_arrays(draw, dtypes=tuple(FLOAT_DTYPES), min_dims=1, max_dims=3, masked=True):
    """(weights, axis): softmax of drawn scores along a drawn axis, some entries masked.

    Scores are drawn at three spreads (near-uniform, moderate, extreme/one-hot); a mask
    may block entries (weight exactly 0) or whole slices (all zeros, a fully masked row).
    """
    bound = draw(st.sampled_from([2.0, 30.0, None]))
    x = draw(float_arrays(dtypes, bound=bound, min_dims=min_dims, max_dims=max_dims))
    axis = draw(st.integers(-x.ndim, x.ndim - 1))
    if masked and draw(st.booleans()):
        blocked = draw(hnp.arrays(np.bool_, x.shape))
        x = np.where(blocked, -np.inf, x).astype(x.dtype)
    return softmax(x, axis=axis), axis


@st.composite
def square_weights(draw, dtypes=tuple(FLOAT_DTYPES), batch=True, ties=True):
    """Square self-attention weights (..., n, n), rows summing to 1 (or fully masked).

    With ``ties``, scores may be small integers, so many weights are equal (or equal up
    to the last bits, since rows holding the same scores in another order round apart).
    """
    dtype = draw(st.sampled_from(dtypes))
    n = draw(st.integers(1, 6))
    lead = draw(hnp.array_shapes(min_dims=0, max_dims=1, max_side=3)) if batch else ()
    shape = (*lead, n, n)
    kind = draw(st.sampled_from(["ints", "permuted", "floats"] if ties else ["floats"]))
    if kind == "ints":
        x = draw(hnp.arrays(np.int64, shape, elements=st.integers(-2, 2))).astype(dtype)
    elif kind == "permuted":  # every row holds the same scores, in its own order
        row = draw(hnp.arrays(np.int64, n, elements=st.integers(-3, 3))).astype(dtype)
        perms = st.permutations(range(n)).map(list)
        x = np.stack([row[draw(perms)] for _ in range(math.prod(shape[:-1]))]).reshape(shape)
    else:
        x = draw(float_arrays((dtype,), bound=draw(st.sampled_from([3.0, 30.0])), shape=shape))
    if draw(st.booleans()):
        x = np.where(draw(hnp.arrays(np.bool_, shape)), -np.inf, x).astype(dtype)
    return softmax(x, axis=-1)


def ref_normalised_entropy(ps: list[float]) -> float:
    """-sum p log p / log n with 0 log 0 = 0, in plain Python; 0 for n = 1; kept in [0, 1]."""
    n = len(ps)
    if n == 1:
        return 0.0
    h = -math.fsum(p * math.log(p) for p in ps if p > 0)
    return min(1.0, max(0.0, h / math.log(n)))


def apply_1d(ref, x: np.ndarray, axis: int) -> np.ndarray:
    """Apply a reducing 1-D list reference along ``axis`` of x (in float64)."""
    moved = np.moveaxis(np.asarray(x, dtype=np.float64), axis, -1)
    out = np.empty(moved.shape[:-1])
    for idx in np.ndindex(moved.shape[:-1]):
        out[idx] = ref(moved[idx].tolist())
    return out


def ref_strongest_links(w: np.ndarray, count: int) -> list[tuple[int, int, float]]:
    """Brute force: all off-diagonal (i, j, w), by -round(w, 12), then row-major."""
    n = len(w)
    links = [(i, j, float(w[i][j])) for i in range(n) for j in range(n) if i != j]
    links.sort(key=lambda t: (-round(t[2], 12), t[0], t[1]))
    return links[:count]


def one_hot(n: int, k: int, dtype) -> np.ndarray:
    p = np.zeros(n, dtype=dtype)
    p[k] = 1
    return p


# --------------------------------------------------------------------------- normalised_entropy


@FAST
@given(wa=weight_arrays())
def test_normalised_entropy_matches_reference_in_unit_interval(wa):
    w, axis = wa
    h = no_warnings(normalised_entropy, w, axis=axis)
    assert h.shape == tuple(s for i, s in enumerate(w.shape) if i != axis % w.ndim)
    assert h.dtype == w.dtype  # entropy keeps the dtype of p; so does its normalised form
    h64 = np.asarray(h, dtype=np.float64)
    assert np.all(h64 >= 0.0) and np.all(h64 <= 1.0)
    ref = apply_1d(ref_normalised_entropy, w, axis)
    tol = REF_TOL[w.dtype.type]
    np.testing.assert_allclose(h64, ref, rtol=0, atol=tol)


NE_CASES = [
    [1.0, 0.0, 0.0],
    [1 / 3, 1 / 3, 1 / 3],
    [0.5, 0.25, 0.25],
    [0.9, 0.1, 0.0],
    [0.7, 0.2, 0.1, 0.0, 0.0],
    [0.0, 0.0, 0.0],
    [0.5, 0.5],
    [0.999, 0.001],
    [0.1] * 10,
    [1.0],
]


@pytest.mark.parametrize("ps", NE_CASES)
def test_normalised_entropy_small_cases_vs_plain_math(ps):
    assert float(no_warnings(normalised_entropy, ps)) == pytest.approx(
        ref_normalised_entropy(ps), abs=1e-14
    )


def test_normalised_entropy_hand_values():
    # Two equal keys out of four: log 2 / log 4 = 1/2; four out of sixteen: log 4 / log 16.
    assert float(normalised_entropy([0.5, 0.5, 0.0, 0.0])) == pytest.approx(0.5, abs=1e-15)
    assert float(normalised_entropy([0.25] * 4 + [0.0] * 12)) == pytest.approx(0.5, abs=1e-15)
    # H(1/2, 1/4, 1/4) = 3/2 log 2, over log 3.
    expected = 1.5 * math.log(2) / math.log(3)
    assert float(normalised_entropy([0.5, 0.25, 0.25])) == pytest.approx(expected, rel=1e-14)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("n", [1, 2, 3, 4, 7, 10])
def test_normalised_entropy_one_hot_is_exactly_zero(n, dtype):
    for k in range(n):
        h = no_warnings(normalised_entropy, one_hot(n, k, dtype))
        assert h.dtype == dtype
        assert float(h) == 0.0 and not np.signbit(h)


@FAST
@given(n=st.integers(2, 2000), dtype=st.sampled_from(FLOAT_DTYPES))
def test_normalised_entropy_uniform_is_one(n, dtype):
    w = np.full((2, n), 1.0 / n, dtype=dtype)
    h = no_warnings(normalised_entropy, w)
    assert h.dtype == dtype
    np.testing.assert_allclose(h.astype(np.float64), 1.0, rtol=0, atol=REF_TOL[dtype])


@FAST
@given(data=st.data(), wa=weight_arrays(max_dims=1))
def test_normalised_entropy_invariant_to_permuting_a_row(data, wa):
    w, _ = wa
    perm = data.draw(st.permutations(range(w.size)))
    h, h_perm = normalised_entropy(w), normalised_entropy(w[list(perm)])
    tol = 4 * float(np.finfo(w.dtype).eps)  # only the summation order changes
    np.testing.assert_allclose(h_perm.astype(np.float64), float(h), rtol=0, atol=tol)


@FAST
@given(x=float_arrays(bound=30.0, min_dims=2, max_dims=2))
def test_normalised_entropy_axis_0_reads_columns(x):
    w = softmax(x, axis=0)  # (n_q, n_k) columns are the distributions
    h = no_warnings(normalised_entropy, w, axis=0)
    assert h.shape == (w.shape[1],)
    rows_of_transpose = normalised_entropy(np.ascontiguousarray(w.T), axis=-1)
    tol = 4 * float(np.finfo(w.dtype).eps)  # only the summation order may change
    np.testing.assert_allclose(h, rows_of_transpose, rtol=0, atol=tol)
    ref = [ref_normalised_entropy(w[:, j].astype(np.float64).tolist()) for j in range(w.shape[1])]
    np.testing.assert_allclose(h.astype(np.float64), ref, rtol=0, atol=REF_TOL[w.dtype.type])


def test_normalised_entropy_axis_changes_the_answer():
    w = np.array([[0.5, 1.0], [0.5, 0.0]])  # columns are distributions, rows are not
    assert normalised_entropy(w, axis=0).tolist() == pytest.approx([1.0, 0.0], abs=1e-15)
    with pytest.raises(ValueError, match=r"weights must sum to 1 along axis 1 \(shape \(2, 2\)\)"):
        normalised_entropy(w)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize(
    ("shape", "axis", "out_shape"),
    [((1,), -1, ()), ((3, 1), -1, (3,)), ((2, 3, 1), 2, (2, 3)), ((1, 4), 0, (4,))],
)
def test_normalised_entropy_single_key_is_zero(shape, axis, out_shape, dtype):
    w = np.ones(shape, dtype=dtype)
    h = no_warnings(normalised_entropy, w, axis=axis)
    assert h.shape == out_shape and h.dtype == dtype
    assert np.all(h == 0.0)
    # A fully masked single key is 0 as well.
    assert np.all(no_warnings(normalised_entropy, np.zeros(shape, dtype=dtype), axis=axis) == 0)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_normalised_entropy_fully_masked_row_is_zero(dtype):
    w = np.array([[0.0, 0.0, 0.0], [1 / 3, 1 / 3, 1 / 3], [0.0, 0.0, 0.0]], dtype=dtype)
    h = no_warnings(normalised_entropy, w)
    assert h[0] == 0.0 and h[2] == 0.0
    assert float(h[1]) == pytest.approx(1.0, abs=REF_TOL[dtype])


def test_normalised_entropy_lists_ints_bools_are_float64():
    assert normalised_entropy([0.5, 0.5]).dtype == np.float64
    h = normalised_entropy(np.array([[0, 1, 0]], dtype=np.int8))
    assert h.dtype == np.float64 and h.tolist() == [0.0]
    assert normalised_entropy([True, False]).dtype == np.float64


@FAST
@given(x=float_arrays(bound=30.0), data=st.data())
def test_normalised_entropy_rejects_scores_with_negatives(x, data):
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1))
    scores = x.copy()
    scores.flat[data.draw(st.integers(0, x.size - 1))] = -1  # a negative score, anywhere
    with pytest.raises(ValueError) as info:
        normalised_entropy(scores, axis=axis)
    message = str(info.value)
    assert message.startswith("weights ") and str(x.shape) in message


@FAST
@given(wa=weight_arrays(masked=False), factor=st.sampled_from([0.5, 0.8]))
def test_normalised_entropy_rejects_rows_not_summing_to_one(wa, factor):
    w, axis = wa
    w64 = w.astype(np.float64)
    scaled = (w64 * factor / w64.sum(axis, keepdims=True)).astype(w.dtype)  # sums 0.5 or 0.8
    with pytest.raises(ValueError) as info:
        normalised_entropy(scaled, axis=axis)
    message = str(info.value)
    assert message.startswith("weights ") and str(w.shape) in message


# --------------------------------------------------------------------------- column_mass


@FAST
@given(x=float_arrays(bound=30.0, min_dims=2))
def test_column_mass_sums_to_n_q(x):
    w = softmax(x, axis=-1)
    mass = no_warnings(column_mass, w)
    assert mass.shape == (*w.shape[:-2], w.shape[-1])
    totals = mass.astype(np.float64).sum(axis=-1)
    np.testing.assert_allclose(totals, w.shape[-2], rtol=SUM_TOL[w.dtype.type], atol=0)


@FAST
@given(w=square_weights())
def test_column_mass_equals_a_loop_over_rows(w):
    mass = no_warnings(column_mass, w)
    n_q, n_k = w.shape[-2:]
    for idx in np.ndindex(w.shape[:-2]):
        expected = [0.0] * n_k
        live_rows = 0
        for i in range(n_q):
            row = [float(v) for v in w[idx][i]]
            live_rows += any(row)
            for j in range(n_k):
                expected[j] += row[j]
        got = mass[idx].astype(np.float64)
        np.testing.assert_allclose(got, expected, rtol=0, atol=SUM_TOL[w.dtype.type])
        # fully masked rows give no weight: the masses add up to the live rows
        assert math.fsum(got) == pytest.approx(live_rows, abs=SUM_TOL[w.dtype.type])


@FAST
@given(x=float_arrays(bound=30.0, min_dims=3, max_dims=3))
def test_column_mass_broadcasts_over_a_batch(x):
    w = softmax(x, axis=-1)  # (b, n_q, n_k)
    batched = column_mass(w)
    assert batched.shape == (w.shape[0], w.shape[2])
    tol = 4 * float(np.finfo(w.dtype).eps)
    for b in range(w.shape[0]):
        np.testing.assert_allclose(batched[b], column_mass(w[b]), rtol=tol, atol=tol)


def test_column_mass_hand_value():
    assert column_mass([[0.2, 0.8], [0.6, 0.4], [1.0, 0.0]]).tolist() == pytest.approx([1.8, 1.2])


# --------------------------------------------------------------------------- diagonal_mass


@FAST
@given(w=square_weights())
def test_diagonal_mass_is_the_mean_of_the_diagonal(w):
    d = no_warnings(diagonal_mass, w)
    assert d.shape == w.shape[:-2]
    n = w.shape[-1]
    for idx in np.ndindex(w.shape[:-2]):
        expected = math.fsum(float(w[idx][i][i]) for i in range(n)) / n
        assert 0.0 <= float(d[idx]) <= 1.0
        assert float(d[idx]) == pytest.approx(expected, abs=REF_TOL[w.dtype.type])


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("n", [1, 2, 3, 5, 8, 13])
def test_diagonal_mass_uniform_and_identity(n, dtype):
    uniform = np.full((n, n), 1.0 / n, dtype=dtype)
    assert float(diagonal_mass(uniform)) == pytest.approx(1.0 / n, rel=REF_TOL[dtype])
    assert float(diagonal_mass(np.eye(n, dtype=dtype))) == 1.0
    # A permutation without fixed points gives every token's weight to another token.
    if n > 1:
        assert float(diagonal_mass(np.roll(np.eye(n, dtype=dtype), 1, axis=1))) == 0.0


# --------------------------------------------------------------------------- strongest_links


@FAST
@given(w=square_weights(batch=False), count=st.integers(1, 40))
def test_strongest_links_matches_brute_force(w, count):
    before = w.copy()
    links = no_warnings(strongest_links, w, count=count)
    n = len(w)
    assert links == ref_strongest_links(w, count)
    assert len(links) == min(count, n * (n - 1))
    assert all(i != j for i, j, _ in links)
    assert all(type(i) is int and type(j) is int and type(v) is float for i, j, v in links)
    # Non-increasing; weights equal to 12 decimals are tied and may differ in the last bits.
    rounded = [round(v, 12) for _, _, v in links]
    assert rounded == sorted(rounded, reverse=True)
    assert all(b <= a + 1e-12 for (*_, a), (*_, b) in pairwise(links))
    np.testing.assert_array_equal(w, before)


@pytest.mark.parametrize("n", [1, 2, 3, 5])
def test_strongest_links_count_above_n_n_minus_1(n):
    w = softmax(np.arange(n * n, dtype=float).reshape(n, n) % 3)
    links = strongest_links(w, count=n * n + 7)
    assert len(links) == n * (n - 1)
    assert {(i, j) for i, j, _ in links} == {(i, j) for i in range(n) for j in range(n) if i != j}


def test_strongest_links_ignores_a_heavy_diagonal_and_keeps_row_major_ties():
    w = np.array([[0.9, 0.05, 0.05], [0.1, 0.8, 0.1], [0.3, 0.0, 0.7]])
    assert strongest_links(w, count=4) == [(2, 0, 0.3), (1, 0, 0.1), (1, 2, 0.1), (0, 1, 0.05)]


def test_strongest_links_ties_to_12_decimals_keep_row_major_order():
    a = 0.7
    b = float(np.nextafter(a, 1.0))  # larger than a in the last bit only
    w = np.array([[0.3, a, 0.0], [b, 0.3, 0.0], [0.0, 0.0, 1.0]])
    assert w[1, 0] > w[0, 1]
    assert strongest_links(w, count=2) == [(0, 1, a), (1, 0, b)]
    # a difference that survives 12 decimals is not a tie
    c = a + 3e-12
    w[1, 0], w[1, 1] = c, 0.3 - 3e-12
    assert strongest_links(w, count=2) == [(1, 0, c), (0, 1, a)]


def test_strongest_links_does_not_touch_the_callers_array():
    w = np.array([[0.5, 0.5], [0.25, 0.75]])
    before = w.copy()
    strongest_links(w, count=2)
    np.testing.assert_array_equal(w, before)
    w16 = w.astype(np.float16)
    strongest_links(w16)
    np.testing.assert_array_equal(w16, before.astype(np.float16))


# --------------------------------------------------------------------------- pattern_example


def ref_row_softmax(scores: np.ndarray) -> np.ndarray:
    e = np.exp(scores - scores.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def test_patterns_and_titles_list_the_four_patterns():
    assert PATTERNS == ("diagonal", "link", "uniform", "hub")
    assert set(TITLES) == set(PATTERNS)
    assert all(isinstance(t, str) and t for t in TITLES.values())


@pytest.mark.parametrize("name", PATTERNS)
def test_pattern_example_is_a_computed_softmax(name):
    ex = no_warnings(pattern_example, name)
    n = len(ex.tokens)
    assert ex.name == name and ex.title == TITLES[name]
    assert isinstance(ex.tokens, tuple) and all(isinstance(t, str) for t in ex.tokens)
    assert ex.scores.shape == (n, n) and ex.weights.shape == (n, n)
    np.testing.assert_array_equal(ex.scores, np.round(ex.scores))  # small integers
    assert np.abs(ex.scores).max() <= 5
    np.testing.assert_allclose(ex.weights.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    np.testing.assert_allclose(ex.weights, ref_row_softmax(ex.scores), rtol=1e-13, atol=0)


def test_each_example_shows_its_pattern():
    ex = {name: pattern_example(name) for name in PATTERNS}
    # diagonal: the largest diagonal mass of the four, near 1
    diag = {name: float(diagonal_mass(e.weights)) for name, e in ex.items()}
    assert max(diag, key=diag.get) == "diagonal"
    assert diag["diagonal"] > 0.8 and all(v < 0.7 for k, v in diag.items() if k != "diagonal")
    # uniform: a row with normalised entropy 1 (up to rounding); no other example has one
    for name, e in ex.items():
        ones = np.isclose(normalised_entropy(e.weights), 1.0, rtol=0, atol=1e-12)
        assert ones.any() if name == "uniform" else not ones.any(), name
    # hub: exactly one column takes more than half of all the queries' weight, the '.',
    # a larger share of n_q than any column of the other examples
    share = {name: column_mass(e.weights) / len(e.tokens) for name, e in ex.items()}
    assert (share["hub"] > 0.5).sum() == 1
    assert ex["hub"].tokens[int(share["hub"].argmax())] == "."
    assert max(share, key=lambda name: share[name].max()) == "hub"
    # link: the strongest links are off-diagonal, each the largest weight of its row
    w = ex["link"].weights
    links = strongest_links(w)
    assert len(links) == 3
    assert all(i != j and v > 0.5 and j == int(w[i].argmax()) for i, j, v in links)
    assert all(v < 0.5 for *_, v in strongest_links(ex["diagonal"].weights, count=12))


@pytest.mark.parametrize("name", PATTERNS)
def test_pattern_example_returns_fresh_arrays(name):
    first = pattern_example(name)
    scores, weights = first.scores.copy(), first.weights.copy()
    first.scores[...] = 99.0
    first.weights[...] = 0.0
    again = pattern_example(name)
    np.testing.assert_array_equal(again.scores, scores)
    np.testing.assert_array_equal(again.weights, weights)
    assert not np.shares_memory(again.weights, again.scores)


@pytest.mark.parametrize("bad", ["Hub", "", "heatmap", "diagonal ", None, 3, ["hub"], ("hub",)])
def test_pattern_example_unknown_name(bad):
    with pytest.raises(ValueError) as info:
        pattern_example(bad)
    message = str(info.value)
    assert "name" in message and repr(bad) in message
    for name in PATTERNS:
        assert repr(name) in message


# --------------------------------------------------------------------------- cat_sat_down_wide


@pytest.mark.parametrize("max_d_k", [8, 9, 64, WIDE_D_K, np.int64(100)])
def test_cat_sat_down_wide_extends_the_running_example(max_d_k):
    ex, wide = cat_sat_down(), cat_sat_down_wide(max_d_k)
    assert wide.w_q.shape == wide.w_k.shape == (16, int(max_d_k))
    np.testing.assert_array_equal(wide.w_q[:, :8], ex.w_q)
    np.testing.assert_array_equal(wide.w_k[:, :8], ex.w_k)
    np.testing.assert_array_equal(wide.x, ex.x)
    assert wide.tokens == ex.tokens and wide.d_k == 8


def test_cat_sat_down_wide_default_deterministic_and_drawn_alike():
    a, b = cat_sat_down_wide(), cat_sat_down_wide()
    assert a.w_q.shape == (16, WIDE_D_K)
    np.testing.assert_array_equal(a.w_q, b.w_q)
    np.testing.assert_array_equal(a.w_k, b.w_k)
    extra_q, extra_k = a.w_q[:, 8:], a.w_k[:, 8:]
    assert not np.array_equal(extra_q, extra_k)
    # drawn like the first 8 columns: N(0, 1/d_model), 16 * 504 entries each
    for extra in (extra_q, extra_k):
        assert abs(extra.mean()) < 0.02
        assert 0.23 < extra.std() < 0.27
    other = cat_sat_down_wide(seed=9)
    np.testing.assert_array_equal(other.w_q[:, :8], a.w_q[:, :8])
    assert not np.array_equal(other.w_q[:, 8:], extra_q)


@pytest.mark.parametrize("bad", [7, 0, -8, 64.0, "64", True, np.bool_(True), None, [64]])
def test_cat_sat_down_wide_rejects_bad_max_d_k(bad):
    with pytest.raises(ValueError) as info:
        cat_sat_down_wide(bad)
    message = str(info.value)
    assert "max_d_k" in message and repr(bad) in message


def test_scaling_keeps_the_score_spread_in_a_band():
    wide = cat_sat_down_wide(WIDE_D_K)
    scaled, unscaled = [], []
    for d in range(8, WIDE_D_K + 1):
        scores = (wide.x @ wide.w_q[:, :d]) @ (wide.x @ wide.w_k[:, :d]).T  # (4, 4)
        unscaled.append(float(scores.std()))
        scaled.append(float((scores / math.sqrt(d)).std()))
    # Measured: scaled std 0.49 .. 1.00 over d = 8..512; unscaled 1.52 at d = 8, 16.5 at
    # d = 512 (about √(512 / 8) = 8 times, as the dot product's variance grows with d).
    assert 0.3 < min(scaled) and max(scaled) < 1.5
    assert max(scaled) / min(scaled) < 3
    assert unscaled[-1] > 5 * unscaled[0]
    assert max(unscaled) / min(unscaled) > 5
    assert unscaled[-1] > 10 * scaled[-1]


# --------------------------------------------------------------------------- bad input

W23 = np.array([[0.5, 0.25, 0.25], [0.0, 1.0, 0.0]])  # (2, 3) valid but not square
W22 = np.array([[0.5, 0.5], [0.25, 0.75]])

# (id, callable, substrings that must all appear in the message)
CASES = [
    ("ne-scores", lambda: normalised_entropy([[2.0, -1.0, 0.5]]), ["weights", "[0, 1]", "(1, 3)"]),
    ("ne-sum", lambda: normalised_entropy([[0.2, 0.3], [0.5, 0.5]]), ["weights", "sum", "(2, 2)"]),
    ("ne-nan", lambda: normalised_entropy([[np.nan, 1.0]]), ["weights", "NaN", "(1, 2)"]),
    ("ne-inf", lambda: normalised_entropy([np.inf, 0.0]), ["weights", "finite", "(2,)"]),
    ("ne-neg-inf", lambda: normalised_entropy([[1.0, -np.inf]]), ["weights", "finite", "(1, 2)"]),
    ("ne-scalar", lambda: normalised_entropy(1.0), ["weights", "()"]),
    ("ne-empty", lambda: normalised_entropy(np.zeros((2, 0))), ["weights", "(2, 0)"]),
    ("ne-strings", lambda: normalised_entropy(["a"]), ["weights", "(1,)"]),
    ("ne-axis", lambda: normalised_entropy(W23, axis=2), ["axis", "2", "(2, 3)"]),
    ("cm-1d", lambda: column_mass([0.5, 0.5]), ["weights", "matrix", "(2,)"]),
    ("cm-scores", lambda: column_mass([[3.0, -1.0]]), ["weights", "(1, 2)"]),
    ("cm-nan", lambda: column_mass(np.full((2, 2), np.nan)), ["weights", "NaN", "(2, 2)"]),
    ("dm-non-square", lambda: diagonal_mass(W23), ["weights", "square", "(2, 3)"]),
    ("dm-batch", lambda: diagonal_mass(np.full((2, 3, 4), 0.25)), ["weights", "(2, 3, 4)"]),
    ("dm-1d", lambda: diagonal_mass([1.0]), ["weights", "(1,)"]),
    ("sl-non-square", lambda: strongest_links(W23), ["weights", "square", "(2, 3)"]),
    ("sl-batch", lambda: strongest_links(np.stack([W22, W22])), ["weights", "(2, 2, 2)"]),
    ("sl-1d", lambda: strongest_links([0.5, 0.5]), ["weights", "(2,)"]),
    ("sl-scores", lambda: strongest_links([[1.0, 2.0], [0.0, 1.0]]), ["weights", "(2, 2)"]),
    ("sl-count-0", lambda: strongest_links(W22, count=0), ["count", "0"]),
    ("sl-count-negative", lambda: strongest_links(W22, count=-2), ["count", "-2"]),
    ("sl-count-float", lambda: strongest_links(W22, count=2.0), ["count", "2.0"]),
    ("sl-count-str", lambda: strongest_links(W22, count="2"), ["count", "'2'"]),
    ("sl-count-bool", lambda: strongest_links(W22, count=True), ["count", "True"]),
    ("sl-count-none", lambda: strongest_links(W22, count=None), ["count", "None"]),
]


@pytest.mark.parametrize(("call", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_raises_value_error_naming_the_argument(call, expected):
    with pytest.raises(ValueError) as info:
        call()
    message = str(info.value)
    for fragment in expected:
        assert fragment in message, f"{fragment!r} not in {message!r}"


@FAST
@given(wa=weight_arrays(min_dims=2), w_sq=square_weights(batch=False))
def test_inputs_never_mutated(wa, w_sq):
    w, axis = wa
    before, before_sq = w.copy(), w_sq.copy()
    no_warnings(normalised_entropy, w, axis=axis)
    no_warnings(column_mass, np.moveaxis(w, axis, -1))  # a view: writes would reach w
    no_warnings(diagonal_mass, w_sq)
    no_warnings(strongest_links, w_sq, count=5)
    np.testing.assert_array_equal(w, before)
    np.testing.assert_array_equal(w_sq, before_sq)
    with pytest.raises(ValueError):
        strongest_links(w_sq, count=0)
    np.testing.assert_array_equal(w_sq, before_sq)


@pytest.mark.parametrize("n", [1, 2, 4, 16, 1000])
def test_effective_keys_counts_the_keys_a_row_shares_evenly(n):
    """e^H = m for a row spread evenly over m of its n keys, whatever n: rows of any length
    compare, which H / log n does not (it falls as n grows for the same m)."""
    for m in sorted({1, min(2, n), n}):
        row = np.zeros(n)
        row[:m] = 1 / m
        assert patterns.effective_keys(row) == pytest.approx(m, rel=1e-12)
    rng = np.random.default_rng(n)
    w = attnlab.softmax(rng.normal(size=(5, n)) * 3)  # (5, n)
    e = patterns.effective_keys(w)
    assert e.shape == (5,) and np.all((e >= 1 - 1e-12) & (e <= n + 1e-9))
    np.testing.assert_allclose(np.log(e), attnlab.entropy(w), rtol=1e-12, atol=1e-15)


def test_effective_keys_refuses_scores():
    with pytest.raises(ValueError, match="weights"):
        patterns.effective_keys([2.0, -1.0])
