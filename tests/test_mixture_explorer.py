"""Lesson 5's explorer: the weighted sum against plain numpy, the convex hull, and the live view."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from explorer_checks import assert_shown_cleanly, clean_sweep, readout_text
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from matplotlib.colors import to_rgba
from matplotlib.patches import Polygon
from matplotlib.quiver import Quiver

from attnlab import scaled_dot_product_attention
from attnlab.controls import SelectionSlider, Slider
from attnlab.examples import query_and_keys_2d
from attnlab.explorers import all_explorers
from attnlab.explorers.mixture import (
    COLOURS,
    EXAMPLE,
    EXAMPLE_SCORES,
    PLANE_LIMITS,
    MixtureExplorer,
    mixture_state,
)
from attnlab.explorers.sweep import control_values
from attnlab.explorers.temperature import TEMPERATURES
from attnlab.mixing import coordinate_bounds
from attnlab.plots.vectors import OKABE_ITO

EX = query_and_keys_2d()  # the test's own copy of the example
VALUES = EX.values  # (3, 2)
START = [1.0 / math.sqrt(2), 0.5 / math.sqrt(2), -0.9 / math.sqrt(2)]  # keys @ query, by hand
scores = st.lists(st.floats(-5.0, 5.0, allow_nan=False), min_size=3, max_size=3)
slider_temperatures = st.sampled_from(TEMPERATURES)


def reference(x, t):
    """softmax(x / T) and Σ w_j v_j, written out with Python floats."""
    top = max(x)
    e = [math.exp((s - top) / t) for s in x]
    w = [v / sum(e) for v in e]
    out = [sum(w[j] * VALUES[j][d] for j in range(3)) for d in range(2)]
    return np.array(w), np.array(out)


def side(p, a, b):
    """Twice the signed area of (a, b, p): > 0 when p is left of the line a -> b."""
    return (b[0] - a[0]) * (p[1] - a[1]) - (b[1] - a[1]) * (p[0] - a[0])


@pytest.fixture
def explorer():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield MixtureExplorer()


# ------------------------------------------------------------------------------ the numbers
@settings(max_examples=150, deadline=None)
@given(x=scores, t=slider_temperatures)
def test_matches_plain_numpy(x, t):
    w, out = reference(x, t)
    state = mixture_state(x, t)
    np.testing.assert_allclose(state.weights, w, rtol=1e-9, atol=1e-300)
    np.testing.assert_allclose(state.output, out, atol=1e-12)
    for j in range(3):
        np.testing.assert_allclose(state.contributions[j], w[j] * VALUES[j], atol=1e-12)
        assert state.distances[j] == pytest.approx(math.dist(out, VALUES[j]), abs=1e-9)
    steps = [np.zeros(2)]
    for j in range(3):
        steps.append(steps[-1] + w[j] * VALUES[j])
    np.testing.assert_allclose(state.partial_sums, steps, atol=1e-12)
    np.testing.assert_allclose(state.partial_sums[-1], state.output, atol=1e-12)  # ends there
    assert w[state.largest] == pytest.approx(max(w), rel=1e-9)
    assert state.distances[state.nearest] == pytest.approx(min(state.distances))
    assert state.scores.tolist() == x and state.temperature == t


@settings(max_examples=200, deadline=None)
@given(x=scores, t=slider_temperatures)
def test_output_is_always_inside_the_triangle(x, t):
    state = mixture_state(x, t)
    assert np.all(state.barycentric >= -1e-12), state.barycentric
    assert state.barycentric.sum() == pytest.approx(1.0, abs=1e-12)
    np.testing.assert_allclose(state.barycentric, state.weights, atol=1e-12)
    # and, without barycentric(): on the inner side of each edge (A, B, C run anticlockwise)
    a, b, c = VALUES
    assert side(a, b, c) > 0
    for p, q in ((a, b), (b, c), (c, a)):
        assert side(state.output, p, q) >= -1e-12


@settings(max_examples=150, deadline=None)
@given(x=scores, t=st.floats(1e-3, 1e3))
def test_output_stays_within_the_coordinate_bounds(x, t):
    low, high = coordinate_bounds(VALUES)
    output = mixture_state(x, t).output
    assert np.all(output >= low - 1e-12) and np.all(output <= high + 1e-12), output


@settings(max_examples=150, deadline=None)
@given(x=scores)
def test_small_temperature_moves_the_output_to_the_top_value(x):
    top = int(np.argmax(x))
    margin = x[top] - max(s for j, s in enumerate(x) if j != top)
    assume(margin >= 0.05)
    reach = max(math.dist(VALUES[top], v) for v in VALUES)
    # every other weight is at most exp(-margin / T)
    for t in (1.0, 0.3, 0.05):
        state = mixture_state(x, t)
        bound = 2 * math.exp(-margin / t) * reach
        assert math.dist(state.output, VALUES[top]) <= bound + 1e-12, t
        assert state.largest == top
    np.testing.assert_allclose(mixture_state(x, 1e-6).output, VALUES[top], atol=1e-12)


@settings(max_examples=100, deadline=None)
@given(s=st.floats(-5.0, 5.0), t=st.floats(1e-3, 1e3))
def test_equal_scores_give_the_centroid(s, t):
    state = mixture_state([s, s, s], t)
    np.testing.assert_allclose(state.weights, [1 / 3] * 3, rtol=1e-12)
    centroid = [(VALUES[0][d] + VALUES[1][d] + VALUES[2][d]) / 3 for d in range(2)]
    np.testing.assert_allclose(state.output, centroid, atol=1e-12)


def test_large_temperature_approaches_the_centroid():
    distances = [
        math.dist(mixture_state([5.0, -5.0, 0.0], t).output, VALUES.mean(axis=0))
        for t in (1.0, 10.0, 1e3, 1e6)
    ]
    assert distances == sorted(distances, reverse=True) and distances[-1] < 1e-5


def test_sliders_start_at_the_examples_scaled_scores():
    np.testing.assert_allclose(EXAMPLE_SCORES, START, rtol=1e-12)
    np.testing.assert_allclose(EXAMPLE_SCORES, EX.keys @ EX.query / math.sqrt(2), rtol=1e-15)


def test_start_is_the_examples_attention_output():
    output, weights = scaled_dot_product_attention(EX.query[None, :], EX.keys, EX.values)
    state = mixture_state(EXAMPLE_SCORES)
    np.testing.assert_allclose(state.weights, weights[0], rtol=1e-12)
    np.testing.assert_allclose(state.output, output[0], rtol=1e-12)
    np.testing.assert_allclose(state.output, reference(START, 1.0)[1], rtol=1e-12)


def test_tiny_weights_and_extreme_corners_are_stable():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        state = mixture_state([5.0, -5.0, -5.0], 0.05)  # other weights about exp(-200)
    np.testing.assert_allclose(state.output, VALUES[0], atol=1e-12)
    assert state.nearest == state.largest == 0
    assert np.all(state.barycentric >= -1e-12)


@pytest.mark.parametrize(
    "bad", [[1.0, 2.0], [1.0, 2.0, 3.0, 4.0], [[1.0, 2.0, 3.0]], [[1.0], [2.0], [3.0]], 1.0]
)
def test_scores_of_the_wrong_shape_are_refused(bad):
    shape = np.shape(bad)
    with pytest.raises(ValueError, match=rf"^scores .*\(3,\).*got shape {re_shape(shape)}"):
        mixture_state(bad)


def re_shape(shape):
    return str(shape).replace("(", r"\(").replace(")", r"\)")


@pytest.mark.parametrize(
    "bad",
    [[1.0, float("nan"), 0.0], [float("inf"), 0.0, 0.0], ["a", "b", "c"], [1 + 2j, 0, 0], None],
)
def test_scores_that_are_not_finite_numbers_are_refused(bad):
    with pytest.raises(ValueError, match="^scores"):
        mixture_state(bad)


@pytest.mark.parametrize("bad", [0, -1.0, float("nan"), float("inf"), "1", None, True, [1.0]])
def test_bad_temperature_is_refused(bad):
    with pytest.raises(ValueError, match="^temperature"):
        mixture_state([0.0, 0.0, 0.0], bad)


def test_the_shared_example_cannot_be_changed():
    for array in (EXAMPLE.values, EXAMPLE.keys, EXAMPLE.query, EXAMPLE_SCORES):
        with pytest.raises(ValueError):
            array[0] = 9.0
    np.testing.assert_array_equal(EXAMPLE.values, VALUES)
    x = np.array([1.0, 2.0, 3.0])
    mixture_state(x, 0.5)
    assert x.tolist() == [1.0, 2.0, 3.0]


# ---------------------------------------------------------------------------- the explorer
def test_is_discovered_and_named():
    assert MixtureExplorer in all_explorers()
    assert MixtureExplorer.name == "mixture"


def test_controls(explorer):
    c = explorer.controls
    assert list(c) == ["score_1", "score_2", "score_3", "temperature"]
    for j in range(3):
        slider = c[f"score_{j + 1}"]
        assert slider.description == f"score of key {j + 1}"
        assert (slider.min, slider.max, slider.step) == (-5.0, 5.0, 0.1)
        assert slider.value == pytest.approx(START[j], rel=1e-12)
    assert c["temperature"].description == "temperature T"
    assert control_values(c["temperature"]) == list(TEMPERATURES)
    assert c["temperature"].value == 1.0
    for control in c.values():
        assert isinstance(control, Slider | SelectionSlider) and control.label_width == ""


def test_starts_at_the_example(explorer):
    w, out = reference(START, 1.0)
    np.testing.assert_allclose(explorer.state.weights, w, rtol=1e-12)
    np.testing.assert_allclose(explorer.artists["output"].get_xydata()[0], out, atol=1e-12)


def view_matches(explorer, x, t):
    """The artists show the reference weights and output for scores ``x`` at temperature ``t``."""
    w, out = reference(x, t)
    artists = explorer.artists
    np.testing.assert_allclose(artists["output"].get_xydata(), [out], atol=1e-12)
    np.testing.assert_allclose([bar.get_height() for bar in artists["bars"]], w, atol=1e-12)
    assert artists["numbers"].texts == [f"{p:.2f}" for p in w]
    np.testing.assert_array_equal(artists["numbers"].get_facecolor(), [to_rgba("black")] * 3)
    assert artists["temperature"].texts == [f"T = {t:g}"]
    segments = artists["pulls"].get_segments()
    for j, segment in enumerate(segments):
        np.testing.assert_allclose(segment, [out, VALUES[j]], atol=1e-12)


@pytest.mark.parametrize(
    "name, value", [("score_1", -3.0), ("score_2", 4.0), ("score_3", 2.5), ("temperature", 0.1)]
)
def test_moving_a_control_changes_the_figure_and_the_readout(explorer, name, value):
    before_pixels = explorer.view.widget.pixels.copy()
    before_text = explorer.readout.value
    explorer.controls[name].value = value  # exactly what the slider does
    assert_shown_cleanly(explorer, f"{name}={value!r}")
    assert not np.array_equal(explorer.view.widget.pixels, before_pixels)
    assert explorer.readout.value != before_text
    settings = {
        "score_1": START[0],
        "score_2": START[1],
        "score_3": START[2],
        "temperature": 1.0,
        name: value,
    }
    view_matches(explorer, [settings[f"score_{j + 1}"] for j in range(3)], settings["temperature"])


def test_every_control_sweeps_cleanly(explorer):
    artists = explorer.artists
    for name in explorer.controls:
        for _ in clean_sweep(explorer, name):
            values = explorer.values
            view_matches(
                explorer, [values[f"score_{j + 1}"] for j in range(3)], values["temperature"]
            )
            assert np.all(explorer.state.barycentric >= -1e-12)
            assert "-0.00" not in readout_text(explorer)
    assert explorer.artists is artists


def arrow_ends(arrow):
    """Start and tip of a FancyArrow, read off its outline (tip first; tail corners last)."""
    vertices = arrow.get_path().vertices  # (n, 2) in data coordinates
    tip = vertices[0]
    far = vertices[np.argsort(np.linalg.norm(vertices - tip, axis=1))[-2:]]  # the tail corners
    return far.mean(axis=0), tip


def test_the_figure_shows_the_temperature_even_when_nothing_else_changes(explorer):
    explorer.set(score_1=2.0, score_2=2.0, score_3=2.0, temperature=1.0)  # equal scores
    before = explorer.view.frame().copy()
    output = explorer.state.output.copy()
    explorer.set(temperature=0.05)
    np.testing.assert_allclose(explorer.state.output, output, atol=1e-12)  # still the centroid
    assert explorer.artists["temperature"].texts == ["T = 0.05"]
    assert not np.array_equal(explorer.view.frame(), before)


@pytest.mark.parametrize("x, t", [(START, 1.0), ([-2.0, 1.0, 1.2], 0.5), ([1.0, 1.0, 1.0], 2.0)])
def test_contributions_are_drawn_tip_to_tail(explorer, x, t):
    explorer.set(score_1=x[0], score_2=x[1], score_3=x[2], temperature=t)
    x = [explorer.values[f"score_{j + 1}"] for j in range(3)]  # as snapped to the 0.1 steps
    w, out = reference(x, t)
    here = np.zeros(2)
    for j, arrow in enumerate(explorer.artists["steps"]):
        start, tip = arrow_ends(arrow)
        np.testing.assert_allclose(start, here, atol=1e-9)
        np.testing.assert_allclose(tip - start, w[j] * VALUES[j], atol=1e-9)
        here = tip
        # an arrow, not a bar: somewhere its outline is at least twice as wide as at the tail
        along = (tip - start) / np.linalg.norm(tip - start)  # (2,)
        vertices = arrow.get_path().vertices - start  # (n, 2)
        across = np.abs(vertices[:, 0] * along[1] - vertices[:, 1] * along[0])  # (n,)
        tail = across[np.argsort(np.linalg.norm(vertices - (tip - start), axis=1))[-1]]
        assert across.max() >= 2 * tail > 0
    np.testing.assert_allclose(here, out, atol=1e-9)  # the last arrow ends at the output


def test_pull_lines_are_as_thick_as_the_weights(explorer):
    explorer.set(score_1=2.0, score_2=0.5, score_3=-1.0, temperature=1.0)  # w_A > w_B > w_C
    widths = explorer.artists["pulls"].get_linewidths()
    assert widths[0] > widths[1] > widths[2] > 0
    explorer.set(score_1=-5.0, score_2=5.0, score_3=-5.0, temperature=0.05)  # all on B
    widths = explorer.artists["pulls"].get_linewidths()
    assert widths[1] - max(widths[0], widths[2]) >= 3  # points


def test_values_triangle_and_bars_share_the_colours(explorer):
    plane_ax, bar_ax = explorer.figure.axes
    assert list(COLOURS) == list(OKABE_ITO[:3])  # the colours of keys A, B, C in lesson 1
    for bar, colour in zip(explorer.artists["bars"], COLOURS, strict=True):
        assert bar.get_facecolor() == to_rgba(colour)
    (arrows,) = [c for c in plane_ax.collections if isinstance(c, Quiver)]
    np.testing.assert_allclose(np.column_stack([arrows.U, arrows.V]), VALUES)
    np.testing.assert_allclose(arrows.get_facecolor()[:, :3], [to_rgba(c)[:3] for c in COLOURS])
    assert [t.get_text() for t in plane_ax.texts] == list(EX.labels)
    triangles = [p for p in plane_ax.patches if type(p) is Polygon]  # not the FancyArrows
    assert triangles and any(p.get_fill() for p in triangles)
    for p in triangles:
        np.testing.assert_allclose(p.get_xy()[:3], VALUES)
    assert [t.get_text() for t in bar_ax.get_xticklabels()] == list(EX.labels)


def test_axis_limits_are_fixed(explorer):
    plane_ax, bar_ax = explorer.figure.axes
    assert (plane_ax.get_xlim(), plane_ax.get_ylim()) == PLANE_LIMITS
    assert bar_ax.get_ylim()[0] == 0.0 and 1.1 <= bar_ax.get_ylim()[1] <= 1.3
    for (x0, x1), column in zip(PLANE_LIMITS, VALUES.T, strict=True):  # every value and 0 shown
        assert x0 < min(column.min(), 0.0) - 0.3 and x1 > max(column.max(), 0.0) + 0.3
    assert plane_ax.get_aspect() == 1.0
    limits = [(ax.get_xlim(), ax.get_ylim()) for ax in explorer.figure.axes]
    for x, t in [([5.0, -5.0, -5.0], 0.05), ([-5.0, -5.0, 5.0], 0.05), ([0.0, 0.0, 0.0], 5.0)]:
        explorer.set(score_1=x[0], score_2=x[1], score_3=x[2], temperature=t)
        assert [(ax.get_xlim(), ax.get_ylim()) for ax in explorer.figure.axes] == limits


def every_artist(figure):
    return figure.findobj(lambda artist: True)


def test_draw_never_adds_artists(explorer):
    before = every_artist(explorer.figure)
    children = [len(ax.get_children()) for ax in explorer.figure.axes]
    for x, t in [([5.0, -5.0, -5.0], 0.05), ([1.0, 2.0, 3.0], 1.0), ([0.0, 0.0, 0.0], 5.0)]:
        explorer.set(score_1=x[0], score_2=x[1], score_3=x[2], temperature=t)
        explorer.draw(explorer.artists, explorer.state)
    after = every_artist(explorer.figure)
    assert len(after) == len(before) and set(map(id, after)) == set(map(id, before))
    assert [len(ax.get_children()) for ax in explorer.figure.axes] == children


def words(explorer):
    """The readout as plain text with single spaces."""
    return " ".join(readout_text(explorer).split())


def test_readout_writes_out_the_weighted_sum(explorer):
    w, out = reference(START, 1.0)
    text = words(explorer)
    assert f"output = Σ w j v j = ({out[0]:.2f}, {out[1]:.2f})".replace("-", "−") in text
    for j, label in enumerate(EX.labels):
        v, c = VALUES[j], w[j] * VALUES[j]
        row = (
            f"{label} (key {j + 1}) {START[j]:+.2f} {w[j]:.3f} ({v[0]:.2f}, {v[1]:.2f}) "
            f"({c[0]:.2f}, {c[1]:.2f})"
        ).replace("-", "−")
        assert row in text, row
    assert f"sum 1.000 ({out[0]:.2f}, {out[1]:.2f}) = output" in text
    bary = ", ".join(f"{p:.3f}" for p in w)
    assert (
        f"lies inside the triangle ABC. Its barycentric weights ({bary}) are the attention" in text
    )
    top = int(np.argmax(w))
    near = int(np.argmin([math.dist(out, v) for v in VALUES]))
    assert f"Largest weight: {EX.labels[top]} ({w[top]:.3f})" in text
    assert (
        f"value nearest the output: {EX.labels[near]} (distance {math.dist(out, VALUES[near]):.2f})"
        in text
    )


@pytest.mark.parametrize(
    "x, t, where",
    [
        ([5.0, -5.0, -5.0], 0.05, "almost at the corner A of the triangle (the weights of B and C"),
        ([-5.0, -5.0, 5.0], 0.05, "almost at the corner C of the triangle (the weights of A and B"),
        ([5.0, 5.0, -5.0], 0.05, "next to the edge AB of the triangle (the weight of C is below"),
        ([-5.0, 4.0, 4.0], 1.0, "next to the edge BC of the triangle (the weight of A is below"),
        ([1.0, 1.0, 1.0], 5.0, "inside the triangle ABC"),
    ],
)
def test_readout_says_where_the_output_lies(explorer, x, t, where):
    explorer.set(score_1=x[0], score_2=x[1], score_3=x[2], temperature=t)
    text = words(explorer)
    assert f"The output lies {where}" in text and "Its barycentric weights" in text


def test_readout_shows_tiny_weights_as_tiny(explorer):
    explorer.set(score_1=-5.0, score_2=4.0, score_3=4.0, temperature=1.0)  # w_A = e^-9 / 2
    text = words(explorer)
    assert "&lt; 0.001" in text and "(&lt; 0.001, 0.500, 0.500)" in text
    assert "0.000" not in text.replace("1.000", "")
