"""The overflow lab: naive vs stable softmax per dtype against plain math; NaN shown, not leaked."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
from explorer_checks import clean_sweep

from attnlab.explorers.overflow import (
    DTYPES,
    ROWS,
    SCALES,
    OverflowExplorer,
    bar_rectangles,
    overflow_limits,
    overflow_state,
)


@pytest.fixture
def explorer():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield OverflowExplorer()


def test_limits_are_where_exp_overflows():
    with np.errstate(over="ignore"):
        for dtype, limit in zip(DTYPES, overflow_limits().values(), strict=True):
            below = np.exp(dtype(limit) * dtype(0.999))
            above = np.exp(dtype(limit) * dtype(1.001))
            assert np.isfinite(below) and np.isinf(above), dtype
    assert list(overflow_limits().values()) == sorted(overflow_limits().values())


def test_scales_are_log_spaced_from_1_to_1000():
    assert SCALES[0] == 1.0 and SCALES[-1] == 1000.0
    ratios = np.diff(np.log10(SCALES))
    assert np.all(ratios > 0) and ratios.max() < 0.15


@pytest.mark.parametrize("row", list(ROWS))
@pytest.mark.parametrize("scale", SCALES)
def test_naive_breaks_exactly_where_the_math_says(row, scale):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        state = overflow_state(ROWS[row], scale)
    x = scale * ROWS[row]  # (n,)
    for i, dtype in enumerate(DTYPES):
        scores = x.astype(dtype)
        with np.errstate(over="ignore"):
            exps = np.exp(scores.astype(np.float64))  # exact enough, then compared to the limit
        overflows = exps > np.finfo(dtype).max
        np.testing.assert_array_equal(state.naive_nan[i], overflows)
        if not overflows.any():  # no overflow: the two formulas agree to the dtype's precision
            tol = 10 * np.finfo(dtype).eps
            np.testing.assert_allclose(state.naive[i], state.stable[i], rtol=tol, atol=tol)
        expected = exps / exps.sum() if np.isfinite(exps).all() else None
        ref = np.exp(x - x.max()) / np.exp(x - x.max()).sum()
        np.testing.assert_allclose(state.stable[i], ref, atol=2 * np.finfo(dtype).eps)
        if expected is not None and not overflows.any():
            np.testing.assert_allclose(state.naive[i], expected, atol=2e-3)
    assert np.all(np.isfinite(state.stable))
    np.testing.assert_allclose(state.stable.sum(axis=-1), 1.0, atol=2e-3)
    assert state.largest == pytest.approx(x.max())
    np.testing.assert_array_equal(state.exp_overflows, x.max() > state.limits)


def test_shift_invariance_of_the_stable_row():
    row = ROWS["[2, 1, 1]"]
    a = overflow_state(row, 10.0).stable
    b = overflow_state(row - 7.0, 10.0).stable
    np.testing.assert_allclose(a, b, atol=1e-3)


def test_bar_rectangles_geometry():
    corners = bar_rectangles(np.array([[0.5, 1.0], [0.25, 0.0]]))  # (2, 2, 4, 2)
    assert corners.shape == (2, 2, 4, 2)
    widths = corners[..., 1, 0] - corners[..., 0, 0]
    np.testing.assert_allclose(widths, 0.4)
    np.testing.assert_allclose(corners[..., 2, 1], [[0.5, 1.0], [0.25, 0.0]])
    centres = corners[..., :, 0].mean(axis=(0, -1))
    np.testing.assert_allclose(centres, [0.0, 1.0])


def test_view_shows_nan_markers_and_updates_in_place(explorer):
    artists = explorer.artists
    explorer.set(scale=50.0)
    state = explorer.state
    naive = artists["naive"]
    assert explorer.artists is artists
    assert len(naive["nan"].get_paths()) == int(state.naive_nan.sum()) > 0
    assert len(artists["stable"]["nan"].get_paths()) == 0
    heights = [p.vertices[:, 1].max() for p in naive["values"].get_paths()]
    np.testing.assert_allclose(heights, np.nan_to_num(state.naive, nan=0.0).ravel())
    assert artists["marker"].get_xdata()[0] == pytest.approx(state.largest)
    explorer.set(scale=1.0)
    assert len(naive["nan"].get_paths()) == 0


def test_changing_the_row_changes_the_key_groups(explorer):
    explorer.set(row="[2, 1, 1]", scale=100.0)
    ax = explorer.artists["naive"]["values"].axes
    assert ax.get_xlim() == (-0.5, 2.5) and len(ax.get_xticks()) == 3
    assert len(explorer.artists["naive"]["values"].get_paths()) == 3 * 3
    explorer.set(row="[1, 0.5, 2.5, -0.1]")
    assert ax.get_xlim() == (-0.5, 3.5)


def test_every_control_sweeps_cleanly(explorer):
    for row in ROWS:
        explorer.set(row=row)
        for name in explorer.controls:
            list(clean_sweep(explorer, name))  # asserts at every step


def test_readout_says_overflow_in_words(explorer):
    explorer.set(scale=400.0)
    text = re.sub(r"<[^>]+>", " ", explorer.readout.value)
    state = explorer.state
    assert text.count("overflow") == int(state.naive_nan.sum())
    assert text.count("broken") == int(state.naive_broken.sum()) == 3
    for limit in state.limits:
        assert f"{limit:.2f}" in text
    explorer.set(scale=1.0)
    assert "overflow" not in explorer.readout.value and "broken" not in explorer.readout.value


def test_stable_never_breaks_anywhere():
    for row in ROWS.values():
        for scale in SCALES:
            state = overflow_state(row, scale)
            assert np.all(np.isfinite(state.stable))
            assert not np.any(state.stable < 0)


@pytest.mark.parametrize("scale", [1.0, 1000.0])
@pytest.mark.parametrize("row", list(ROWS))
def test_every_weight_column_is_named_by_its_key(explorer, scale, row):
    """Issue 29: the readout's naive and stable weight columns had no key labels."""
    explorer.set(scale=scale, row=row)
    n = explorer.state.scores.size
    headers = re.findall(r"<tr>((?:<th>[^<]*</th>)+)</tr>", explorer.readout.value)
    keys = [h for h in headers if "key 1" in h]
    assert len(keys) == 1, headers
    names = re.findall(r"<th>([^<]*)</th>", keys[0])
    assert names == ["", "", ""] + [f"key {j + 1}" for j in range(n)] * 2
    for panel in ("naive", "stable"):
        ticks = explorer.artists[panel]["values"].axes.get_xticklabels()
        assert [t.get_text() for t in ticks] == [f"key {j + 1}" for j in range(n)]
