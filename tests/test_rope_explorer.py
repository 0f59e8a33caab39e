"""The RoPE explorer (lesson 10): its numbers against plain rotations, its view updated in place."""

from __future__ import annotations

import math
import re
import warnings

import numpy as np
import pytest
from explorer_checks import assert_shown_cleanly, clean_sweep, readout_text

from attnlab.controls import IntSlider, ToggleButtons
from attnlab.explorers.rope import (
    AVERAGE_SAME,
    CONTENTS,
    D_HEAD,
    DISTANCES,
    OFFSETS,
    OTHER_KEY,
    QUERY,
    RopeExplorer,
    curve_lines,
    rope_view,
)


@pytest.fixture
def explorer():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield RopeExplorer()


def turned(row, pos):
    """``row`` with each pair (2i, 2i+1) turned by pos · 10000^(-2i/d), by 2 × 2 rotations."""
    d = len(row)
    out = []
    for i in range(d // 2):
        a = pos * 10000.0 ** (-2 * i / d)
        x, y = float(row[2 * i]), float(row[2 * i + 1])
        out += [x * math.cos(a) - y * math.sin(a), x * math.sin(a) + y * math.cos(a)]
    return out


def by_hand(q_at, k_at, key):
    q, k = turned(QUERY, q_at), turned(key, k_at)
    return math.fsum(a * b for a, b in zip(q, k, strict=True)) / math.sqrt(len(q))


@pytest.mark.parametrize(("m", "n", "shift"), [(0, 0, 0), (6, 2, 0), (2, 6, 37), (64, 0, 1000)])
@pytest.mark.parametrize("content", ["same", "independent"])
def test_score_matches_plain_rotations(m, n, shift, content):
    key = QUERY if content == "same" else OTHER_KEY
    state = rope_view(m, n, shift, content=content)
    assert state.score == pytest.approx(by_hand(m + shift, n + shift, key), abs=1e-10)
    assert state.plain == pytest.approx(by_hand(0, 0, key), abs=1e-12)
    assert state.offset == m - n


def test_the_content_rows_have_length_root_d():
    for row in (QUERY, OTHER_KEY):
        assert float(np.linalg.norm(row)) == pytest.approx(math.sqrt(D_HEAD))
        assert not row.flags.writeable
    assert rope_view(3, 3).score == pytest.approx(math.sqrt(D_HEAD))  # k = q, no offset


def test_moving_both_leaves_the_score_and_the_curves_where_they_are():
    start = rope_view(9, 4)
    for shift in (1, 2, 17, 500, 1000):
        moved = rope_view(9, 4, shift)
        assert moved.score == pytest.approx(start.score, abs=1e-9)
        np.testing.assert_allclose(moved.curve, start.curve, atol=1e-9)
        np.testing.assert_allclose(moved.far, start.far, atol=1e-9)
        assert not np.allclose(moved.q_turned, start.q_turned)  # the arrows did turn


def test_the_dot_lies_on_the_curves_at_its_offset():
    for m, n in [(6, 2), (2, 6), (64, 0), (0, 64), (5, 5)]:
        state = rope_view(m, n, 11)
        (at,) = np.flatnonzero(state.offsets == m - n)
        assert state.curve[at] == pytest.approx(state.score, abs=1e-12)
        if m - n >= 1:
            (at,) = np.flatnonzero(state.distances == m - n)
            assert state.far[at] == pytest.approx(state.score, abs=1e-12)


def test_the_curves_are_the_scores_at_each_offset():
    state = rope_view(0, 5, 3, content="independent")  # key at 8
    for r in (-64, -1, 0, 1, 63):
        (at,) = np.flatnonzero(state.offsets == r)
        assert state.curve[at] == pytest.approx(by_hand(8 + r, 8, OTHER_KEY), abs=1e-10)
    for at in (0, len(DISTANCES) // 2, len(DISTANCES) - 1):
        r = int(DISTANCES[at])
        assert state.far[at] == pytest.approx(by_hand(8 + r, 8, OTHER_KEY), abs=1e-9)


def test_the_offsets_and_distances_cover_their_ranges():
    assert OFFSETS.tolist() == list(range(-64, 65))
    assert DISTANCES[0] == 1 and DISTANCES[-1] == 10_000
    assert (np.diff(DISTANCES) > 0).all()


def test_the_average_curve_is_root_d_times_the_mean_cosine():
    for at, r in enumerate(DISTANCES[:: len(DISTANCES) // 7]):
        mean_cos = math.fsum(
            math.cos(r * 10000.0 ** (-2 * i / D_HEAD)) for i in range(D_HEAD // 2)
        ) / (D_HEAD / 2)
        index = at * (len(DISTANCES) // 7)
        assert AVERAGE_SAME[index] == pytest.approx(math.sqrt(D_HEAD) * mean_cos, abs=1e-12)
    assert (rope_view(1, 0, content="independent").average == 0).all()


def test_the_long_range_decay_of_k_equal_q():
    """With k = q the score falls from √d by 10⁴ positions; an unrelated key has no decay."""
    same = rope_view(1, 0)
    assert same.far[0] > 0.9 * math.sqrt(D_HEAD)
    assert np.abs(same.far[-20:]).max() < 0.5 * math.sqrt(D_HEAD)
    assert np.abs(same.average[-20:]).max() < 0.5 * math.sqrt(D_HEAD)
    other = rope_view(1, 0, content="independent")
    assert np.abs(other.far).max() < 0.5 * math.sqrt(D_HEAD)


@pytest.mark.parametrize("pair", [0, 1, 15, 31])
def test_the_plane_turns_each_arrow_by_its_position_times_theta(pair):
    state = rope_view(7, 3, 20, pair=pair)
    theta = 10000.0 ** (-2 * pair / D_HEAD)
    assert state.theta == pytest.approx(theta)
    for before, after, pos in [
        (state.q_pair, state.q_turned, 27),
        (state.k_pair, state.k_turned, 23),
    ]:
        expected = turned(before, pos * theta)  # a lone pair: θ_0 = 1 turns by pos · θ
        np.testing.assert_allclose(after, expected, atol=1e-12)
        assert float(np.linalg.norm(after)) == pytest.approx(1.0)
    start = math.atan2(state.q_pair[1], state.q_pair[0]) - math.atan2(
        state.k_pair[1], state.k_pair[0]
    )
    expected = math.degrees(start + 4 * theta)  # the offset is 4
    assert (state.between - expected + 180) % 360 - 180 == pytest.approx(0.0, abs=1e-9)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"m": -1, "n": 0}, r"m must be a whole number >= 0, got -1"),
        ({"m": 0, "n": 1.5}, r"n must be a whole number >= 0, got 1\.5"),
        ({"m": 0, "n": 0, "shift": True}, r"shift must be a whole number >= 0, got True"),
        ({"m": 0, "n": 0, "pair": 32}, r"pair must be one of \[0, 1, .*31\]; got 32"),
        ({"m": 0, "n": 0, "content": "k = q"}, r"content must be one of \['same', 'independent'\]"),
    ],
)
def test_bad_values_are_named(kwargs, match):
    with pytest.raises(ValueError, match=match):
        rope_view(**kwargs)


# ------------------------------------------------------------------------------ the view
def test_controls_are_the_kits_with_their_ranges(explorer):
    c = explorer.controls
    assert list(c) == ["m", "n", "shift", "pair", "content"]
    for name in ("m", "n", "shift", "pair"):
        assert isinstance(c[name], IntSlider) and c[name].description
    assert (c["m"].max, c["n"].max, c["shift"].max, c["pair"].max) == (64, 64, 1000, 31)
    assert isinstance(c["content"], ToggleButtons)
    assert dict(c["content"].options) == CONTENTS


def test_the_view_is_updated_in_place(explorer):
    artists = dict(explorer.artists)
    explorer.set(m=3, n=10, shift=250, pair=2, content="independent")
    assert explorer.artists == artists
    state = explorer.state
    curves = curve_lines(explorer.figure)
    near_x, near_y = curves["near"].get_data()
    np.testing.assert_array_equal(near_x, OFFSETS)
    np.testing.assert_array_equal(near_y, state.curve)
    assert artists["near_dot"].get_data() == ([-7], [state.score])
    assert list(artists["far_dot"].get_data()[0]) == []  # the query is before the key: no dot
    np.testing.assert_array_equal(curves["far"].get_data()[1], state.far)
    np.testing.assert_array_equal(curves["average"].get_data()[1], state.average)
    np.testing.assert_allclose(artists["after"].U, [state.q_turned[0], state.k_turned[0]])
    np.testing.assert_allclose(artists["after"].V, [state.q_turned[1], state.k_turned[1]])
    np.testing.assert_allclose(artists["before"].U, [state.q_pair[0], state.k_pair[0]])
    explorer.set(m=12)
    assert artists["far_dot"].get_data() == ([2], [explorer.state.score])


def test_a_slider_move_and_set_give_the_same_picture(explorer):
    explorer.controls["shift"].value = 321  # as the browser's slider would
    by_slider = explorer.view.frame().copy(), explorer.state.score
    other = RopeExplorer()
    other.set(shift=321)
    assert np.array_equal(other.view.frame(), by_slider[0]) and other.state.score == by_slider[1]


def test_moving_both_changes_only_the_plane(explorer):
    """s turns the arrows; the dot, the curves and the score stay (to rounding)."""
    before = explorer.state
    explorer.set(shift=777)
    after = explorer.state
    assert after.score == pytest.approx(before.score, abs=1e-9)
    near = curve_lines(explorer.figure)["near"]
    np.testing.assert_allclose(near.get_data()[1], before.curve, atol=1e-9)
    assert not np.allclose(after.q_turned, before.q_turned)


def test_axis_limits_are_fixed(explorer):
    limits = [(ax.get_xlim(), ax.get_ylim()) for ax in explorer.figure.axes]
    for values in ({"m": 64, "n": 0}, {"content": "independent", "shift": 1000}, {"pair": 31}):
        explorer.set(**values)
        assert [(ax.get_xlim(), ax.get_ylim()) for ax in explorer.figure.axes] == limits


def test_every_score_stays_inside_the_axes():
    bound = math.sqrt(D_HEAD)  # |q · k| / √d <= |q| |k| / √d = √d
    for content in ("same", "independent"):
        state = rope_view(64, 0, 1000, content=content)
        assert np.abs(np.concatenate([state.curve, state.far, state.average])).max() <= bound + 1e-9


def test_every_control_sweeps_cleanly(explorer):
    for name in explorer.controls:
        for _ in clean_sweep(explorer, name, max_steps=80):
            assert abs(explorer.state.score) <= math.sqrt(D_HEAD) + 1e-9


def test_readout_states_positions_offset_and_score(explorer):
    explorer.set(m=2, n=9, shift=40)
    text = " ".join(assert_shown_cleanly(explorer).split())
    state = explorer.state
    assert "2 + 40 = 42" in text and "9 + 40 = 49" in text
    assert "offset m − n = −7" in text
    shown = re.search(r"RoPE score q·k / √d = +([−\d.]+)", text).group(1)
    assert float(shown.replace("−", "-")) == pytest.approx(state.score, abs=5e-4)
    assert not re.search(r"-\d", text), "numbers use the true minus sign"
    assert " ".join(readout_text(explorer).split()) == text


def test_each_content_keeps_its_own_background(explorer):
    """The curves are background, one look per content: switching back gives the same pixels."""
    first = explorer.view.frame().copy()
    explorer.set(content="independent")
    assert not np.array_equal(explorer.view.frame(), first)
    explorer.set(content="same")
    assert np.array_equal(explorer.view.frame(), first)
    explorer.set(shift=400)  # only the arrows turn: the curves' pixels stay
    assert np.array_equal(explorer.view.frame()[:, 300:], first[:, 300:])


def test_the_dots_stay_light_on_a_dark_page(explorer):
    """An "auto" marker face took the line colour after the dark theme had lightened it and
    was darkened again: the dots vanished on a dark page. Their face and edge are given."""
    from matplotlib.colors import same_color, to_rgba

    explorer.view.set_dark(True)
    for name in ("near_dot", "far_dot"):
        dot = explorer.artists[name]
        for colour in (dot.get_color(), dot.get_markerfacecolor(), dot.get_markeredgecolor()):
            red, green, blue, _ = to_rgba(colour)
            assert 0.2126 * red + 0.7152 * green + 0.0722 * blue > 0.6, (name, colour)
    explorer.view.set_dark(False)
    assert same_color(explorer.artists["near_dot"].get_markerfacecolor(), "black")
