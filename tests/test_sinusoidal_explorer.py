"""The sinusoidal explorer (lesson 10): its numbers against plain loops, its view kept in place."""

from __future__ import annotations

import math
import re
import warnings

import numpy as np
import pytest
from explorer_checks import assert_shown_cleanly, clean_sweep, readout_text
from matplotlib.colors import same_color, to_rgba

from attnlab.controls import IntSlider, SelectionSlider
from attnlab.explorers.sinusoidal import (
    BASES,
    D_MODELS,
    N_POSITIONS,
    OTHER_ROW_COLOUR,
    ROW_COLOUR,
    SinusoidalExplorer,
    background_artists,
    encoding,
    sinusoidal_view,
)


@pytest.fixture
def explorer():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield SinusoidalExplorer()


def row(pos, d, base):
    """PE[pos] by the paper's formula, one entry at a time."""
    out = []
    for i in range(d // 2):
        angle = pos / base ** (2 * i / d)
        out += [math.sin(angle), math.cos(angle)]
    return out


def dot_by_hand(m, n, d, base):
    return math.fsum(a * b for a, b in zip(row(m, d, base), row(n, d, base), strict=True))


@pytest.mark.parametrize(("d", "base"), [(2, 10), (8, 100), (64, 10_000), (128, 100_000)])
@pytest.mark.parametrize(("p", "r"), [(0, 0), (10, 5), (64, 64), (3, 1)])
def test_the_dot_product_matches_plain_loops(d, base, p, r):
    state = sinusoidal_view(d, base, p, r)
    assert state.dot == pytest.approx(dot_by_hand(p, p + r, d, base), abs=1e-10)
    assert state.cosine == pytest.approx(state.dot / (d / 2), abs=1e-12)
    assert state.dot_from_zero == pytest.approx(dot_by_hand(0, r, d, base), abs=1e-10)
    np.testing.assert_allclose(state.pe[p + r], row(p + r, d, base), atol=1e-12)


def test_the_curve_is_the_sum_of_cosines_and_has_no_p_in_it():
    for d, base in [(4, 30), (64, 10_000)]:
        state = sinusoidal_view(d, base, p=0, r=0)
        for r in (0, 1, 7, 64):
            by_hand = math.fsum(math.cos(r * base ** (-2 * i / d)) for i in range(d // 2))
            assert state.curve[r] == pytest.approx(by_hand / (d / 2), abs=1e-12)
        for p in (1, 17, 64):
            np.testing.assert_array_equal(sinusoidal_view(d, base, p=p, r=3).curve, state.curve)


def test_moving_p_leaves_the_dot_product_and_every_dot_where_they_are():
    start = sinusoidal_view(p=0, r=9)
    for p in (1, 2, 30, 64):
        moved = sinusoidal_view(p=p, r=9)
        assert moved.dot == pytest.approx(start.dot, abs=1e-9)
        np.testing.assert_allclose(moved.rows, start.curve, atol=1e-9)  # the dots lie on it
        assert not np.allclose(moved.pe[p], start.pe[0])  # the rows themselves did change


def test_changing_the_offset_moves_the_dot_product():
    values = [sinusoidal_view(p=10, r=r).dot for r in (0, 1, 5, 40)]
    assert values[0] == pytest.approx(32.0)  # a row with itself: d/2 pairs of length 1
    assert len({round(v, 6) for v in values}) == 4


def test_the_encoding_is_kept_read_only_and_computed_once():
    pe, curve = encoding(64, 10_000)
    assert pe.shape == (N_POSITIONS, 64) and not pe.flags.writeable and not curve.flags.writeable
    assert encoding(64, 10_000)[0] is pe
    assert sinusoidal_view(64, 10_000, 3, 4).pe is pe


def test_the_stops():
    assert all(d % 2 == 0 for d in D_MODELS) and D_MODELS[0] == 2 and D_MODELS[-1] == 128
    assert BASES[0] == 10 and BASES[-1] == 100_000
    ratios = np.diff(np.log10(BASES))
    assert (ratios > 0.4).all() and (ratios < 0.6).all()  # evenly spread on a log scale


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"d_model": 6}, r"d_model must be one of \[2, 4, 8, .*128\]; got 6"),
        ({"d_model": True}, r"d_model must be one of"),
        ({"base": 10_001}, r"base must be one of \[10, 30, .*100000\]; got 10001"),
        ({"p": -1}, r"p must be a whole number in 0 … 64, got -1"),
        ({"p": 65}, r"p must be a whole number in 0 … 64, got 65"),
        ({"r": 2.5}, r"r must be a whole number in 0 … 64, got 2\.5"),
        ({"r": True}, r"r must be a whole number in 0 … 64, got True"),
    ],
)
def test_bad_values_are_named(kwargs, match):
    with pytest.raises(ValueError, match=match):
        sinusoidal_view(**kwargs)


# ------------------------------------------------------------------------------ the view
def test_controls_are_the_kits_with_their_ranges(explorer):
    c = explorer.controls
    assert list(c) == ["d_model", "base", "p", "r"]
    assert isinstance(c["d_model"], SelectionSlider) and isinstance(c["base"], SelectionSlider)
    assert [value for _, value in c["d_model"].options] == list(D_MODELS)
    assert [label for label, _ in c["base"].options][-1] == "100,000"
    for name in ("p", "r"):
        assert isinstance(c[name], IntSlider) and (c[name].min, c[name].max) == (0, 64)
    assert all(control.description for control in c.values())


def test_the_view_is_updated_in_place(explorer):
    artists = dict(explorer.artists)
    explorer.set(d_model=8, base=100, p=40, r=20)
    assert explorer.artists == artists
    state = explorer.state
    background = background_artists(explorer.figure)
    np.testing.assert_array_equal(background["matrix"].get_array(), state.pe)
    assert background["matrix"].get_extent() == [-0.5, 7.5, N_POSITIONS - 0.5, -0.5]
    assert background["matrix"].axes.get_xlim() == (-0.5, 7.5)
    np.testing.assert_array_equal(background["curve"].get_data()[1], state.curve)
    assert list(artists["row_p"].get_ydata()) == [40, 40]
    assert list(artists["row_pr"].get_ydata()) == [60, 60]
    assert list(artists["here"].get_xdata()) == [20, 20]
    np.testing.assert_array_equal(artists["dots"].get_data()[1], state.rows)
    assert artists["dot"].get_data() == ([20], [state.cosine])
    assert same_color(artists["row_p"].get_color(), ROW_COLOUR)
    assert same_color(artists["row_pr"].get_color(), OTHER_ROW_COLOUR)


def test_a_slider_move_and_set_give_the_same_picture(explorer):
    explorer.controls["p"].value = 33  # as the browser's slider would
    by_slider = explorer.view.frame().copy(), explorer.state.dot
    other = SinusoidalExplorer()
    other.set(p=33)
    assert np.array_equal(other.view.frame(), by_slider[0]) and other.state.dot == by_slider[1]


def test_moving_p_moves_only_the_row_marks(explorer):
    """p moves the two marked rows; the right panel's pixels stay (to the last pixel)."""
    before = explorer.view.frame().copy()
    explorer.set(p=50)
    after = explorer.view.frame()
    width = after.shape[1]
    left, right = slice(0, int(0.4 * width)), slice(int(0.5 * width), width)
    assert not np.array_equal(after[:, left], before[:, left])
    assert np.array_equal(after[:, right], before[:, right])


def test_axis_limits_are_fixed_but_the_matrix_width(explorer):
    ax_pe, ax_dot = explorer.figure.axes
    limits = ax_dot.get_xlim(), ax_dot.get_ylim(), ax_pe.get_ylim()
    for values in ({"d_model": 2, "p": 64, "r": 64}, {"base": 10, "r": 0}, {"d_model": 128}):
        explorer.set(**values)
        assert (ax_dot.get_xlim(), ax_dot.get_ylim(), ax_pe.get_ylim()) == limits
        assert ax_pe.get_xlim() == (-0.5, explorer.state.d_model - 0.5)


def test_every_value_stays_inside_the_axes():
    for d in D_MODELS:
        for base in (BASES[0], BASES[-1]):
            state = sinusoidal_view(d, base, 64, 64)
            assert np.abs(np.concatenate([state.curve, state.rows])).max() <= 1 + 1e-12


def test_every_control_sweeps_cleanly(explorer):
    for name in explorer.controls:
        for _ in clean_sweep(explorer, name, max_steps=80):
            assert abs(explorer.state.cosine) <= 1 + 1e-12


def test_readout_states_rows_offset_and_dot_product(explorer):
    explorer.set(d_model=16, base=1_000, p=12, r=30)
    text = " ".join(assert_shown_cleanly(explorer).split())
    state = explorer.state
    assert "d_model = 16 : 8 pairs" in text and "(base 1,000)" in text
    assert "p + r = 12 + 30 = 42" in text
    shown = re.search(r"PE\[p\] · PE\[p \+ r\] = ([−\d.]+)", text).group(1)
    assert float(shown.replace("−", "-")) == pytest.approx(state.dot, abs=5e-4)
    zero = re.search(r"PE\[0\] · PE\[r\] = ([−\d.]+)", text).group(1)
    assert zero == shown  # the same offset from position 0: the same number
    assert not re.search(r"-\d", text), "numbers use the true minus sign"
    assert " ".join(readout_text(explorer).split()) == text


def test_a_negative_dot_product_reads_with_the_true_minus(explorer):
    explorer.set(d_model=2, base=10, p=0, r=3)  # cos 3 < 0
    text = readout_text(explorer)
    assert explorer.state.dot < 0 and "−0.990" in text and not re.search(r"-\d", text)


def test_each_d_model_and_base_keeps_its_own_background(explorer):
    """The matrix and the curve are background, one look per (d, base): coming back to a look
    gives the same pixels, and p and r steps redraw no background."""
    first = explorer.view.frame().copy()
    explorer.set(base=100)
    assert not np.array_equal(explorer.view.frame(), first)
    explorer.set(d_model=8)
    assert not np.array_equal(explorer.view.frame(), first)
    explorer.set(d_model=64, base=10_000)
    assert np.array_equal(explorer.view.frame(), first)
    draws = []
    canvas = explorer.figure.canvas
    original = canvas.draw
    canvas.draw = lambda *a, **k: (draws.append(1), original(*a, **k))
    try:
        for p in (0, 20, 64):
            explorer.set(p=p, r=p // 2)
    finally:
        canvas.draw = original
    assert not draws, "a p or r step drew the whole figure"


def test_the_dots_stay_light_on_a_dark_page(explorer):
    """Black markers given as "auto" turned dark twice over on a dark page (face from the
    line's already-lightened colour): the dots are given their own face and edge colours."""
    explorer.view.set_dark(True)
    dots = explorer.artists["dots"]
    for colour in (dots.get_color(), dots.get_markerfacecolor(), dots.get_markeredgecolor()):
        red, green, blue, _ = to_rgba(colour)
        assert 0.2126 * red + 0.7152 * green + 0.0722 * blue > 0.6, colour
    explorer.view.set_dark(False)
    assert same_color(dots.get_markerfacecolor(), "black")
