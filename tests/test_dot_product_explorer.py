"""Lesson 1's explorer: the pure computation against independent maths, and the live view."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from explorer_checks import clean_sweep, readout_text
from hypothesis import given, settings
from hypothesis import strategies as st

from attnlab.examples import query_and_keys_2d
from attnlab.explorers import all_explorers
from attnlab.explorers.dot_product import (
    DotProductExplorer,
    dot_product_scores,
    geometry_word,
    reach_segments,
)

KEYS = query_and_keys_2d().keys  # (3, 2)
angles = st.floats(-180, 180, allow_nan=False)
lengths = st.floats(0, 2, allow_nan=False)


@pytest.fixture
def explorer():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield DotProductExplorer()


# ----------------------------------------------------------------------- the computation
@settings(max_examples=80, deadline=None)
@given(angle=angles, length=lengths)
def test_scores_are_sums_of_products(angle, length):
    state = dot_product_scores(angle, length, KEYS)
    qx = length * math.cos(math.radians(angle))
    qy = length * math.sin(math.radians(angle))
    assert state.query == pytest.approx([qx, qy], abs=1e-12)
    for j, (kx, ky) in enumerate(KEYS):
        assert state.scores[j] == pytest.approx(qx * kx + qy * ky, abs=1e-12)


@settings(max_examples=80, deadline=None)
@given(angle=angles, length=st.floats(0.05, 2))
def test_scores_are_lengths_times_cosine(angle, length):
    state = dot_product_scores(angle, length, KEYS)
    for j, (kx, ky) in enumerate(KEYS):
        key_angle = math.degrees(math.atan2(ky, kx))
        between = abs((angle - key_angle + 180) % 360 - 180)  # in [0, 180]
        assert state.angles_deg[j] == pytest.approx(between, abs=1e-5)
        polar = length * math.hypot(kx, ky) * math.cos(math.radians(between))
        assert state.scores[j] == pytest.approx(polar, abs=1e-9)
        assert state.defined[j]


@settings(max_examples=50, deadline=None)
@given(angle=angles, length=lengths)
def test_projection_is_the_shadow_on_the_key_line(angle, length):
    state = dot_product_scores(angle, length, KEYS)
    for j, key in enumerate(KEYS):
        foot = state.projections[j]
        assert abs(foot[0] * key[1] - foot[1] * key[0]) < 1e-12  # on the key's line
        assert np.dot(state.query - foot, key) == pytest.approx(0, abs=1e-12)  # q - foot ⟂ k


def test_aligned_orthogonal_opposite():
    keys = np.array([[2.0, 0.0], [0.0, 3.0], [-1.0, 0.0]])
    state = dot_product_scores(0.0, 1.5, keys)
    assert state.scores.tolist() == [3.0, 0.0, -1.5]
    words = [geometry_word(a, d) for a, d in zip(state.angles_deg, state.defined, strict=True)]
    assert words == ["aligned", "orthogonal", "opposite"]


def test_doubling_the_query_doubles_every_score():
    one = dot_product_scores(37.0, 0.8, KEYS).scores
    two = dot_product_scores(37.0, 1.6, KEYS).scores
    np.testing.assert_allclose(two, 2 * one)


def test_zero_query_has_no_angle_but_zero_scores():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        state = dot_product_scores(45.0, 0.0, KEYS)
    assert state.scores.tolist() == [0.0, 0.0, 0.0]
    assert not state.defined.any()
    assert np.all(np.isfinite(state.cosines)) and np.all(np.isfinite(state.projections))


def test_zero_key_is_handled():
    state = dot_product_scores(10.0, 1.0, np.array([[0.0, 0.0], [1.0, 0.0]]))
    assert state.defined.tolist() == [False, True]
    assert state.projections[0].tolist() == [0.0, 0.0]


@pytest.mark.parametrize(
    "args",
    [
        (0, -1.0, KEYS),
        (0, float("nan"), KEYS),
        (0, 1.0, np.ones((3, 3))),
        (0, 1.0, [[np.inf, 0.0]]),
        (0, 1.0, KEYS, len(KEYS)),  # no such key to shade
        (0, 1.0, KEYS, -2),
    ],
)
def test_bad_input_is_refused(args):
    with pytest.raises(ValueError):
        dot_product_scores(*args)


def test_reach_segments_bound_every_score():
    state = dot_product_scores(100.0, 1.7, KEYS)
    extents = 1.7 * state.key_lengths
    segments = reach_segments(extents)  # (3 n_k, 2, 2)
    assert segments.shape == (3 * len(KEYS), 2, 2)
    assert np.all(np.abs(state.scores) <= extents + 1e-12)


# --------------------------------------------------------------------------- the explorer
def test_is_discovered_and_named():
    assert DotProductExplorer in all_explorers()
    assert DotProductExplorer.name == "dot-product"


def test_controls_are_clear_sliders(explorer):
    for name in ("angle", "length"):
        slider = explorer.controls[name]
        assert slider.description and slider.label_width == ""  # the label is never cut
    assert (explorer.controls["angle"].min, explorer.controls["angle"].max) == (0, 359)


def test_sweeping_every_control_is_clean_and_in_place(explorer):
    artists = explorer.artists
    bars = list(artists["bars"])
    ids = {name: id(artist) for name, artist in artists.items() if name != "bars"}
    limits = [(ax.get_xlim(), ax.get_ylim()) for ax in explorer.figure.axes]
    for name in explorer.controls:
        for _ in clean_sweep(explorer, name):
            assert "-0.00" not in readout_text(explorer)
    assert explorer.artists is artists and artists["bars"] == bars
    assert {name: id(artist) for name, artist in artists.items() if name != "bars"} == ids
    assert [(ax.get_xlim(), ax.get_ylim()) for ax in explorer.figure.axes] == limits


def test_view_shows_the_state(explorer):
    explorer.set(angle=90, length=1.5, projection=1)
    state = explorer.state
    heights = [bar.get_height() for bar in explorer.artists["bars"]]
    np.testing.assert_allclose(heights, state.scores)
    quiver = explorer.artists["query"]
    assert (float(quiver.U[0]), float(quiver.V[0])) == pytest.approx(tuple(state.query))
    xs, ys = explorer.artists["shadow"].get_data()
    assert (xs[-1], ys[-1]) == pytest.approx(tuple(state.projections[1]))
    assert "orthogonal" in explorer.readout.value  # q is along dimension 2, A along dimension 1


def test_readout_shows_sum_of_products_and_angles(explorer):
    explorer.set(angle=0, length=1.0)
    text = explorer.readout.value
    assert "1.00·1.00 + 0.00·0.00 = <b>1.00</b>" in text  # q · A
    assert "aligned" in text and "orthogonal" in text
    explorer.set(length=0.0)
    assert "zero vector" in explorer.readout.value


def test_readout_writes_negative_factors_in_parentheses_with_true_minus(explorer):
    """Issue 16: "0.87·-1.00" read as a typo; the figure's ticks use −, so the readout does."""
    explorer.set(angle=150, length=1.0)  # q = (−0.87, 0.50); key C = (−1.00, 0.20)
    text = readout_text(explorer)
    assert "(−0.87)·(−1.00) + 0.50·0.20" in text
    assert "1.00 × 1.00 × (−0.87) = −0.87" in text  # key A, θ = 150°
    assert "-" not in text  # no hyphen-minus anywhere, only the true minus sign
    tick_texts = [t.get_text() for t in explorer.figure.axes[1].get_yticklabels()]
    assert any(t.startswith("−") for t in tick_texts), tick_texts  # the figure writes − too


def test_bar_limits_hold_every_possible_score(explorer):
    low, high = explorer.figure.axes[1].get_ylim()
    largest = explorer.max_length * np.linalg.norm(KEYS, axis=1).max()
    assert low <= -largest and high >= largest


def test_projection_none_hides_the_shadow(explorer):
    explorer.set(projection=-1)
    assert len(explorer.artists["shadow"].get_xdata()) == 0


def test_custom_keys():
    keys = np.array([[1.0, 1.0], [-2.0, 0.5]])
    explorer = DotProductExplorer(keys=keys, labels=["x", "y"], angle=45, length=1)
    assert len(explorer.artists["bars"]) == 2
    assert explorer.state.scores[0] == pytest.approx(math.sqrt(2))
    with pytest.raises(ValueError, match="labels"):
        DotProductExplorer(keys=keys, labels=["only one"])


def test_state_records_the_controls_it_was_computed_from():
    state = DotProductExplorer(angle=40, length=1.5, projection=1).state
    assert (state.angle, state.length, state.projection) == (40.0, 1.5, 1)
    assert dot_product_scores(40, 1.5, KEYS).projection == -1  # no shadow unless asked
