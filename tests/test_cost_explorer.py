"""Lesson 8's cost lab: formulas for the memory, a tiled picture, an in-place view."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from explorer_checks import assert_shown_cleanly, clean_sweep, readout_text

from attnlab.explorers.cost import (
    BLOCKS,
    LENGTHS,
    MAX_GRID,
    MIN_DRAWN,
    CostExplorer,
    D,
    cost_state,
    format_bytes,
    working_set,
)
from attnlab.explorers.sweep import control_values

EVERY = [(n, b) for n in LENGTHS for b in BLOCKS]


@pytest.mark.parametrize("n, block_size", EVERY[::7])
def test_state_is_the_formulas(n, block_size):
    s = cost_state(n, block_size)
    b = min(n, block_size)
    assert s.block == b and s.tiles_per_side * b >= n > (s.tiles_per_side - 1) * b
    assert s.matrix_bytes == np.zeros((n, n), dtype=np.float32).nbytes
    assert s.working_bytes == 4 * (2 * b * b + 3 * b * D + b * D + 2 * b)  # Q, K, V tiles too
    assert s.flops == 4 * n * n * D
    i = LENGTHS.index(n)
    assert s.matrix_curve[i] == s.matrix_bytes and s.working_curve[i] == s.working_bytes


@pytest.mark.parametrize("n, block_size", [(16, 4), (64, 64), (256, 16), (32, 1024)])
def test_rescale_multiplies_are_counted_tile_by_tile(n, block_size):
    """Walk the tiles: every (query row, key block) multiplies acc (d) and l (1) once."""
    s = cost_state(n, block_size)
    counted = 0
    for i0 in range(0, n, s.block):
        rows = min(i0 + s.block, n) - i0
        for _ in range(0, n, s.block):
            counted += rows * (D + 1)
    assert s.rescale_flops == counted
    assert 0.5 < s.rescale_flops / (n * n * D / s.block) < 1.1  # about N² d / B


def test_matrix_grows_like_n_squared_and_the_working_set_does_not():
    curves = cost_state(1024, 64)
    np.testing.assert_array_equal(curves.matrix_curve[1:] / curves.matrix_curve[:-1], 4)
    long = np.array(LENGTHS) >= 64
    assert len(set(curves.working_curve[long].tolist())) == 1


def test_the_course_bar_setting_is_far_below_two_percent():
    assert cost_state(16384, 128).fraction < 0.02


@pytest.mark.parametrize("n, block_size", [(1000, 64), (16, 3), (True, 64), (16, None)])
def test_bad_values_are_refused(n, block_size):
    with pytest.raises(ValueError, match="^(n|block_size) must be one of"):
        cost_state(n, block_size)


def test_working_set_and_bytes_text():
    assert working_set(1, d=0, itemsize=1) == 4
    assert [format_bytes(2**k) for k in (0, 10, 20, 30, 40)] == [
        "1 B",
        "1 KiB",
        "1 MiB",
        "1 GiB",
        "1.02e+03 GiB",
    ]


@pytest.fixture
def explorer():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield CostExplorer()


def test_controls(explorer):
    assert list(explorer.controls) == ["n", "block_size"]
    assert explorer.values == {"n": 1024, "block_size": 64}
    assert control_values(explorer.controls["n"]) == list(LENGTHS)
    assert control_values(explorer.controls["block_size"]) == list(BLOCKS)


@pytest.mark.parametrize(
    "name, value", [("n", 2048), ("n", 512), ("block_size", 128), ("block_size", 32)]
)
def test_one_step_changes_the_figure_and_the_readout(explorer, name, value):
    before_pixels = explorer.view.widget.pixels.copy()
    before_text = explorer.readout.value
    explorer.controls[name].value = value
    assert_shown_cleanly(explorer, f"{name}={value}")
    assert not np.array_equal(explorer.view.widget.pixels, before_pixels)
    assert explorer.readout.value != before_text


def test_every_setting_draws_cleanly_and_in_place(explorer):
    artists = explorer.artists
    children = [len(ax.get_children()) for ax in explorer.figure.axes]
    limits = [(ax.get_xlim(), ax.get_ylim()) for ax in explorer.figure.axes]
    for _ in clean_sweep(explorer, "n"):
        for _ in clean_sweep(explorer, "block_size"):
            s = explorer.state
            np.testing.assert_array_equal(artists["working"].get_ydata(), s.working_curve)
            np.testing.assert_array_equal(
                artists["markers"].get_ydata(), [s.matrix_bytes, s.working_bytes]
            )
            segments = artists["grid"].get_segments()
            expected = 0 if s.tiles_per_side > MAX_GRID else 2 * (s.tiles_per_side - 1)
            assert len(segments) == expected
            side = artists["tile"].get_width()
            assert side == max(s.block / s.n, MIN_DRAWN) and artists["tile"].get_height() == side
    assert explorer.artists is artists
    assert [len(ax.get_children()) for ax in explorer.figure.axes] == children
    assert [(ax.get_xlim(), ax.get_ylim()) for ax in explorer.figure.axes] == limits


def test_readout_states_the_numbers(explorer):
    explorer.set(n=4096, block_size=64)
    text = " ".join(readout_text(explorer).split())
    s = explorer.state
    assert f"4,096 × 4,096 = {4096 * 4096:,} scores, {format_bytes(s.matrix_bytes)}" in text
    assert f"{s.tiles:,} tiles in all" in text and format_bytes(s.working_bytes) in text
    assert f"1/{round(1 / s.fraction):,} of the matrix" in text
    assert f"{s.flops:,}" in text and "it saves memory, not work" in text
    assert f"{s.rescale_flops:,} rescale multiplies" in text


def test_readout_when_the_block_is_longer_than_the_sequence(explorer):
    explorer.set(n=16, block_size=1024)
    text = " ".join(readout_text(explorer).split())
    assert "B = 1,024 is more than N, so one block of 16" in text
    assert "the only tile" in text and "tiling does not pay" in text
    assert explorer.artists["caption"].texts == ["N = 16: one tile of 16 × 16"]


def _pixels(ax, x0, y0, x1, y1):
    """The width and height in pixels of a box given in data coordinates."""
    (a, b), (c, d) = ax.transData.transform([(x0, y0), (x1, y1)])
    return abs(c - a), abs(d - b)


@pytest.mark.parametrize(("n", "block_size"), [(16384, 64), (16384, 1), (1024, 64), (16, 1024)])
def test_the_tile_can_be_seen_and_its_walk_along_the_stripe_is_drawn(explorer, n, block_size):
    """Issue 41: the lesson says the tile slides along the stripe, the picture was static,
    and at N = 16,384 the tile was a dot. The tile is at least 8 pixels a side at every
    setting (the caption says when it is drawn larger), and an arrow runs from it along the
    stripe to the last key block, the way the loop walks, whenever there is more than one."""
    explorer.controls["n"].value = n
    explorer.controls["block_size"].value = block_size
    s, artists = explorer.state, explorer.artists
    explorer.figure.canvas.draw()
    tile = artists["tile"]
    ax = tile.axes
    width, height = _pixels(ax, 0, 0, tile.get_width(), tile.get_height())
    assert min(width, height) >= 8, (width, height)
    small = s.block / s.n < MIN_DRAWN
    assert ("drawn larger" in artists["caption"].texts[0]) == small
    walk = artists["walk"]
    assert walk.get_visible() == (s.tiles_per_side > 1)
    if s.tiles_per_side > 1:
        (x0, x1), (y0, y1) = walk.get_data()  # start and end, data coordinates
        assert x0 >= tile.get_width() and x1 >= 0.95  # from the tile to the stripe's far end
        assert y0 == y1 and 0 < y0 < tile.get_height()  # along the stripe
