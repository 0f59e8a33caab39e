"""attnlab.mixing (lesson 5): weighted values, barycentric weights and coordinate bounds.

Checked against plain loops and against the convex-hull property: every output is a mix of
the values, so it lies inside them; a point outside gets a negative barycentric weight.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import attnlab
from attnlab.examples import dog_bites_man, query_and_keys_2d
from attnlab.mixing import barycentric, coordinate_bounds, weighted_values

FAST = settings(max_examples=80, deadline=None)
coords = st.floats(-10, 10, allow_nan=False, allow_infinity=False)
scores = st.floats(-20, 20, allow_nan=False, allow_infinity=False)


def mix_by_loop(weights, values):
    """Σ_j w[i, j] · values[j], written out with Python loops."""
    out = []
    for row in np.atleast_2d(weights):
        acc = [0.0] * len(values[0])
        for w, v in zip(row, values, strict=True):
            acc = [a + w * x for a, x in zip(acc, v, strict=True)]
        out.append(acc)
    return np.array(out)


@st.composite
def problems(draw):
    """(weights (n_q, n_k), values (n_k, d_v)) with softmax rows."""
    n_q, n_k, d_v = (draw(st.integers(1, 5)) for _ in range(3))
    raw = draw(hnp.arrays(np.float64, (n_q, n_k), elements=scores))
    values = draw(hnp.arrays(np.float64, (n_k, d_v), elements=coords))
    return attnlab.softmax(raw), values


@FAST
@given(problems())
def test_weighted_values_match_a_loop(problem):
    weights, values = problem
    np.testing.assert_allclose(
        weighted_values(weights, values), mix_by_loop(weights, values), rtol=1e-12, atol=1e-12
    )


@FAST
@given(problems())
def test_every_output_lies_within_the_coordinate_bounds(problem):
    weights, values = problem
    low, high = coordinate_bounds(values)
    out = weighted_values(weights, values)  # (n_q, d_v)
    span = np.maximum(np.abs(values).max(), 1.0)
    assert np.all(out >= low - 1e-12 * span) and np.all(out <= high + 1e-12 * span)


def test_one_row_gives_one_vector_and_a_one_hot_row_picks_its_value():
    values = dog_bites_man().v  # (3, 4)
    assert weighted_values([0.2, 0.3, 0.5], values).shape == (4,)
    for j in range(3):
        one_hot = np.eye(3)[j]
        np.testing.assert_array_equal(weighted_values(one_hot, values), values[j])


def test_equal_weights_give_the_centroid():
    values = query_and_keys_2d().values  # (3, 2)
    np.testing.assert_allclose(weighted_values(np.full(3, 1 / 3), values), values.mean(axis=0))


def test_weighted_values_broadcast_over_a_batch():
    rng = np.random.default_rng(0)
    weights = attnlab.softmax(rng.normal(size=(2, 3, 4)))  # (batch, n_q, n_k)
    values = rng.normal(size=(2, 4, 5))  # (batch, n_k, d_v)
    out = weighted_values(weights, values)
    assert out.shape == (2, 3, 5)
    for b in range(2):
        np.testing.assert_allclose(out[b], mix_by_loop(weights[b], values[b]))


def test_inputs_are_not_modified():
    weights = attnlab.softmax(np.array([[1.0, 2.0, 0.5]]))
    values = query_and_keys_2d().values
    w0, v0 = weights.copy(), values.copy()
    weighted_values(weights, values)
    barycentric(values.mean(axis=0), values)
    coordinate_bounds(values)
    np.testing.assert_array_equal(weights, w0)
    np.testing.assert_array_equal(values, v0)


@pytest.mark.parametrize(
    "weights, values, words",
    [
        ([1.0, 2.0, -0.5], np.eye(3), ["weights", "probabilities"]),  # scores, not weights
        ([0.5, 0.2, 0.2], np.eye(3), ["weights", "sum to 1"]),
        ([0.5, 0.5], np.eye(3), ["weights", "values", "(2,)", "(3, 3)"]),  # n_k mismatch
        ([1.0], [1.0, 2.0], ["values"]),  # a 1-D values array
        ([0.5, 0.5], [[1.0, np.nan], [0.0, 1.0]], ["values", "NaN"]),
        ([0.5, 0.5], [[1.0, np.inf], [0.0, 1.0]], ["values"]),
        ([np.nan, 1.0], np.eye(2), ["weights"]),
    ],
)
def test_bad_input_to_weighted_values_is_named(weights, values, words):
    with pytest.raises(ValueError) as err:
        weighted_values(weights, values)
    for word in words:
        assert word.lower() in str(err.value).lower()


@FAST
@given(st.lists(scores, min_size=3, max_size=3), hnp.arrays(np.float64, (3, 2), elements=coords))
def test_barycentric_weights_of_an_output_are_the_attention_weights(raw, triangle):
    p = triangle - triangle[0]  # (3, 2)
    area = abs(p[1, 0] * p[2, 1] - p[1, 1] * p[2, 0])
    assume(area > 1e-2 * max(np.abs(p).max(), 1.0) ** 2)  # a proper triangle
    weights = attnlab.softmax(np.array(raw))  # (3,)
    point = weighted_values(weights, triangle)  # (2,)
    found = barycentric(point, triangle)
    np.testing.assert_allclose(found, weights, atol=1e-7)
    assert found.min() >= -1e-7  # inside: every barycentric weight non-negative


def test_a_point_beyond_the_values_gets_a_negative_weight():
    values = query_and_keys_2d().values  # (3, 2)
    beyond = 2.0 * values[0] - values.mean(axis=0)  # past value 0, away from the centroid
    weights = barycentric(beyond, values)
    assert weights.min() < 0
    np.testing.assert_allclose(weights.sum(), 1.0)
    np.testing.assert_allclose(weights @ values, beyond)


@pytest.mark.parametrize(
    "point, triangle, words",
    [
        ([0.0, 0.0, 0.0], np.eye(3, 2), ["point", "(3,)"]),
        ([0.0, 0.0], np.eye(2), ["triangle", "(2, 2)"]),
        ([0.0, 0.0], [[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]], ["one line"]),
        ([np.nan, 0.0], [[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]], ["point"]),
    ],
)
def test_bad_input_to_barycentric_is_named(point, triangle, words):
    with pytest.raises(ValueError) as err:
        barycentric(point, triangle)
    for word in words:
        assert word.lower() in str(err.value).lower()


def test_coordinate_bounds_are_per_coordinate():
    values = np.array([[3.0, -1.0, 0.0], [-2.0, 4.0, 0.5]])  # (2, 3)
    low, high = coordinate_bounds(values)
    assert low.tolist() == [-2.0, -1.0, 0.0]
    assert high.tolist() == [3.0, 4.0, 0.5]


@pytest.mark.parametrize("values", [[1.0, 2.0], np.zeros((0, 2)), [[np.inf, 0.0]]])
def test_bad_input_to_coordinate_bounds_is_named(values):
    with pytest.raises(ValueError, match="values"):
        coordinate_bounds(values)


def test_nothing_warns():
    values = query_and_keys_2d().values
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        weighted_values(attnlab.softmax(np.array([1000.0, -1000.0, 0.0])), values)
        barycentric(values[0], values)
        coordinate_bounds(values)
