"""attnlab.plots.bars.Bars: the same pixels as ``ax.bar`` / ``ax.barh``, one draw per frame."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from strategies import FAST

from attnlab.live import LiveFigure
from attnlab.plots.bars import Bars

N_BARS = 5
LIMITS = (-1.3, 1.3)


def _pixels(horizontal: bool, values, thickness: float, dpi: int, use_bars: bool) -> np.ndarray:
    """One frame of N_BARS bars drawn by Bars or by ax.bar / ax.barh, the same axes around."""
    figure = Figure(figsize=(3.1, 2.3), dpi=dpi)
    FigureCanvasAgg(figure)
    ax = figure.subplots()
    positions = np.arange(N_BARS)  # (n,)
    if use_bars:
        Bars(ax, positions, thickness, horizontal=horizontal, facecolor="#0072b2").set_values(
            values
        )
    elif horizontal:
        ax.barh(positions, values, height=thickness, color="#0072b2")
    else:
        ax.bar(positions, values, width=thickness, color="#0072b2")
    value_axis, bar_axis = (ax.set_xlim, ax.set_ylim) if horizontal else (ax.set_ylim, ax.set_xlim)
    value_axis(*LIMITS)
    bar_axis(-0.7, N_BARS - 0.3)
    figure.canvas.draw()
    return np.asarray(figure.canvas.buffer_rgba()).copy()  # (height, width, 4)


@FAST
@given(
    horizontal=st.booleans(),
    values=st.lists(
        st.one_of(st.just(0.0), st.floats(-1.2, 1.2)), min_size=N_BARS, max_size=N_BARS
    ),
    thickness=st.floats(0.05, 1.0),
    dpi=st.sampled_from([72, 100, 137]),
)
def test_bars_draw_exactly_the_pixels_of_ax_bar(horizontal, values, thickness, dpi):
    np.testing.assert_array_equal(
        _pixels(horizontal, values, thickness, dpi, use_bars=True),
        _pixels(horizontal, values, thickness, dpi, use_bars=False),
    )


def _blitted_frames(use_bars: bool, frames: np.ndarray) -> list[np.ndarray]:
    """Frames of a LiveFigure whose moving artists are four bars, as an explorer draws them."""
    live = LiveFigure(figsize=(3.0, 2.0))
    ax = live.figure.subplots()
    ax.set(xlim=(-0.5, 3.5), ylim=(0, 1))
    if use_bars:
        bars = Bars(ax, np.arange(4), 0.6, facecolor="tab:orange")
        live.set_moving([bars])
    else:
        rectangles = list(ax.bar(np.arange(4), np.zeros(4), 0.6, color="tab:orange"))
        live.set_moving(rectangles)
    shown = []
    for values in frames:  # (n,) each
        if use_bars:
            bars.set_values(values)
        else:
            for rectangle, value in zip(rectangles, values, strict=True):
                rectangle.set_height(value)
        shown.append(live.frame().copy())  # (height, width, 4)
    return shown


def test_bars_blitted_frame_after_frame_match_blitted_rectangles():
    frames = np.random.default_rng(0).random((6, 4))  # (frames, n)
    for got, want in zip(
        _blitted_frames(True, frames), _blitted_frames(False, frames), strict=True
    ):
        np.testing.assert_array_equal(got, want)


@FAST
@given(
    values=st.lists(st.floats(0.0, 1.2), min_size=N_BARS, max_size=N_BARS),
    red=st.lists(st.booleans(), min_size=N_BARS, max_size=N_BARS),
)
def test_two_sets_split_by_where_draw_the_pixels_of_bars_recoloured_one_by_one(values, red):
    """The masking and heatmap explorers' pattern: a bar's colour changes from frame to frame."""
    colours = ("#0072b2", "#d55e00")

    def frame(use_bars: bool) -> np.ndarray:
        figure = Figure(figsize=(3.1, 2.3), dpi=100)
        FigureCanvasAgg(figure)
        ax = figure.subplots()
        ax.set(xlim=LIMITS, ylim=(N_BARS - 0.3, -0.7))
        rows = np.arange(N_BARS)  # (n,)
        if use_bars:
            for colour, where in zip(colours, (~np.array(red), np.array(red)), strict=True):
                bars = Bars(ax, rows, 0.6, horizontal=True, facecolor=colour, edgecolor=colour)
                bars.set_values(values, where=where)
        else:
            for bar, value, is_red in zip(
                ax.barh(rows, values, height=0.6), values, red, strict=True
            ):
                bar.set_width(value)
                bar.set_color(colours[is_red])  # face and edge, as the explorers did
        figure.canvas.draw()
        return np.asarray(figure.canvas.buffer_rgba()).copy()  # (height, width, 4)

    np.testing.assert_array_equal(frame(use_bars=True), frame(use_bars=False))


def test_where_leaves_bars_out_and_values_reads_0_for_them():
    bars = Bars(Figure().subplots(), [0, 1, 2], 0.5)
    bars.set_values([0.25, 0.5, 0.75], where=[True, False, True])
    assert bars.shown.tolist() == [True, False, True]
    np.testing.assert_array_equal(bars.values, [0.25, 0.0, 0.75])
    assert len(bars.get_path().vertices) == 2 * 5  # two closed rectangles
    bars.set_values([0.25, 0.5, 0.75], where=[False, False, False])
    assert len(bars.get_path().vertices) == 0
    bars.set_values([0.25, 0.5, 0.75])  # no where: every bar again
    assert bars.shown.all()


@pytest.mark.parametrize("horizontal", [False, True])
def test_left_to_autoscale_the_axes_fit_the_bars_as_ax_bar_makes_them_fit(horizontal):
    limits = []
    for use_bars in (True, False):
        ax = Figure().subplots()
        if use_bars:
            Bars(ax, [0, 1, 2, 3], 0.78, horizontal=horizontal)
        else:
            (ax.barh if horizontal else ax.bar)([0, 1, 2, 3], [0, 0, 0, 0], 0.78)
        ax.set_xticks([0, 1, 2, 3])  # as the explorers label their keys
        ax.set_yticks([0, 1, 2, 3])
        limits.append((ax.get_xlim(), ax.get_ylim()))
    assert limits[0] == limits[1]


def test_a_legend_shows_the_bars_as_one_entry_in_their_colour():
    ax = Figure().subplots()
    Bars(ax, [0, 1], 0.5, facecolor="#d55e00", label="with the bug")
    legend = ax.legend()
    (handle,) = legend.legend_handles
    assert [t.get_text() for t in legend.get_texts()] == ["with the bug"]
    assert handle.get_facecolor() == pytest.approx((213 / 255, 94 / 255, 0.0, 1.0))


def test_values_are_copied_both_ways():
    ax = Figure().subplots()
    positions = np.array([0.0, 1.0])
    bars = Bars(ax, positions, 0.5)
    given_values = np.array([0.25, 0.5])
    bars.set_values(given_values)
    given_values[0] = 9.0
    bars.values[1] = 9.0
    positions[0] = 9.0
    np.testing.assert_array_equal(bars.values, [0.25, 0.5])
    np.testing.assert_array_equal(bars.positions, [0.0, 1.0])
    assert not bars.positions.flags.writeable


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ([0.5], r"values must have one entry per bar, shape \(2,\); got shape \(1,\)"),
        ([[0.5, 0.5]], r"values must have one entry per bar, shape \(2,\); got shape \(1, 2\)"),
        ([0.5, np.nan], r"values must be finite; got \[0.5, nan\]"),
        ([np.inf, 0.5], r"values must be finite; got \[inf, 0.5\]"),
    ],
)
def test_bad_values_are_refused_naming_the_argument(values, message):
    bars = Bars(Figure().subplots(), [0, 1], 0.5)
    with pytest.raises(ValueError, match=message):
        bars.set_values(values)
    np.testing.assert_array_equal(bars.values, [0.0, 0.0])  # nothing half-applied


@pytest.mark.parametrize(
    ("where", "message"),
    [
        ([True], r"where must be one bool per bar, shape \(2,\); got bool with shape \(1,\)"),
        ([1, 0], r"where must be one bool per bar, shape \(2,\); got int64 with shape \(2,\)"),
    ],
)
def test_a_bad_where_is_refused_naming_the_argument(where, message):
    bars = Bars(Figure().subplots(), [0, 1], 0.5)
    with pytest.raises(ValueError, match=message):
        bars.set_values([0.5, 0.5], where=where)
    np.testing.assert_array_equal(bars.values, [0.0, 0.0])  # nothing half-applied


@pytest.mark.parametrize(
    ("positions", "thickness", "message"),
    [
        ([[0, 1]], 0.5, r"positions must be a 1-D array of finite numbers; got shape \(1, 2\)"),
        ([0, np.nan], 0.5, r"positions must be a 1-D array of finite numbers; got shape \(2,\)"),
        ([0, 1], 0.0, r"thickness must be a finite number > 0; got 0.0"),
        ([0, 1], np.nan, r"thickness must be a finite number > 0; got nan"),
    ],
)
def test_bad_construction_is_refused_naming_the_argument(positions, thickness, message):
    with pytest.raises(ValueError, match=message):
        Bars(Figure().subplots(), positions, thickness)
