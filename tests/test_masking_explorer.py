"""The mask lab (lesson 6): masks and fills against plain numpy, their properties, the view."""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pytest
from explorer_checks import assert_shown_cleanly, clean_sweep, readout_text
from matplotlib.colors import to_rgba

from attnlab.examples import cat_sat_down
from attnlab.explorers.masking import BOTH, DTYPES, FILLS, MASKS, MaskExplorer, mask_state
from attnlab.explorers.sweep import control_values
from attnlab.plots.colours import PALETTE

CORRECT, BILLION, MINIMUM, ZERO, AFTER = FILLS
LENGTHS = range(7)
EVERY = list(itertools.product(MASKS, LENGTHS, FILLS, DTYPES))


def reference_scores():
    """Q Kᵀ / √8 of the padded sentence, rebuilt here: the pad embedding is seed 6's normal row."""
    ex = cat_sat_down()
    pad = np.random.default_rng(6).normal(size=16)
    x = np.vstack([ex.x, pad, pad])  # (6, 16)
    return (x @ ex.w_q) @ (x @ ex.w_k).T / math.sqrt(8)


SCORES = reference_scores()


def reference_mask(mask, length):
    i, j = np.indices((6, 6))
    causal = j <= i if "causal" in mask else np.ones((6, 6), bool)
    padding = j < length if "padding" in mask else np.ones((6, 6), bool)
    return causal & padding


def plain_softmax(s):
    """exp(s - max) / sum, row by row, in float64."""
    e = np.exp(s - s.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def reference_weights(mask, length, fill):
    """float64 weights, for rows that are not fully masked (the fills agree on nothing else)."""
    allowed = reference_mask(mask, length)
    if fill == AFTER:
        return np.where(allowed, plain_softmax(SCORES), 0.0)
    if fill == ZERO:
        return plain_softmax(np.where(allowed, SCORES, 0.0))
    partial = allowed.any(axis=1, keepdims=True)
    safe = np.where(allowed, SCORES, -1e300)  # exp underflows to exactly 0 in float64
    return np.where(partial, plain_softmax(safe), 0.0)


TOL = {"float64": 1e-12, "float32": 1e-6, "float16": 2e-3}


# ------------------------------------------------------------------ the numbers
@pytest.mark.parametrize("mask", MASKS)
@pytest.mark.parametrize("fill", FILLS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_weights_match_plain_numpy(mask, fill, dtype):
    for length in LENGTHS:
        state = mask_state(mask, length, fill, dtype)
        assert state.weights.dtype == state.scores.dtype == np.dtype(dtype)
        np.testing.assert_allclose(state.scores, SCORES, rtol=TOL[dtype], atol=TOL[dtype])
        np.testing.assert_array_equal(state.mask, reference_mask(mask, length))
        rows = reference_mask(mask, length).any(axis=1)  # the rows with a key left
        expected = reference_weights(mask, length, fill)
        np.testing.assert_allclose(
            state.weights[rows],
            expected[rows],
            rtol=TOL[dtype],
            atol=TOL[dtype],
            err_msg=f"{mask}, length {length}, {fill}, {dtype}",
        )


def test_causal_mask_is_the_lower_triangle():
    for length in LENGTHS:
        state = mask_state("causal", length, CORRECT, "float64")
        np.testing.assert_array_equal(state.mask, np.tril(np.ones((6, 6), bool)))


@pytest.mark.parametrize("length", LENGTHS)
def test_padding_hides_the_keys_from_length_on(length):
    state = mask_state("padding", length, CORRECT, "float64")
    for i, j in np.ndindex(6, 6):
        assert state.mask[i, j] == (j < length), (i, j)
    both = mask_state("causal + padding", length, CORRECT, "float64").mask
    np.testing.assert_array_equal(both, state.mask & np.tril(np.ones((6, 6), bool)))


def test_no_mask_hides_nothing_at_any_length():
    for length in LENGTHS:
        assert mask_state("none", length, ZERO, "float64").mask.all()


def test_minus_infinity_is_correct_everywhere():
    """Masked weights exactly 0, rows sum to 1, fully masked rows exactly 0 and never NaN."""
    for mask, length, _, dtype in EVERY:
        state = mask_state(mask, length, CORRECT, dtype)
        where = f"{mask}, length {length}, {dtype}"
        w = state.weights.astype(np.float64)
        assert not np.isnan(w).any(), where
        assert np.all(w[~state.mask] == 0.0), where
        full = ~state.mask.any(axis=1)
        np.testing.assert_array_equal(state.fully_masked_rows, full, err_msg=where)
        assert np.all(w[full] == 0.0), where
        np.testing.assert_allclose(w[~full].sum(axis=1), 1.0, atol=6 * TOL[dtype], err_msg=where)
        assert np.all(state.leak == 0.0) and not state.nan_rows.any(), where
        assert not state.sum_is_off.any(), where


def test_fully_masked_rows_only_when_padding_hides_everything():
    for mask, length, fill, dtype in EVERY:
        state = mask_state(mask, length, fill, dtype)
        expected = "padding" in mask and length == 0
        assert state.fully_masked_rows.all() == expected, (mask, length)
        assert state.fully_masked_rows.any() == expected, (mask, length)


def test_zero_fill_leaks_weight_to_masked_keys():
    for mask, length, _, dtype in EVERY:
        state = mask_state(mask, length, ZERO, dtype)
        hidden = ~state.mask.all(axis=1)  # rows with a masked key
        assert np.all(state.leak[hidden] > 0.01), (mask, length, dtype)
        assert np.all(state.leak[~hidden] == 0.0)
        np.testing.assert_allclose(state.row_sums, 1.0, atol=6 * TOL[dtype])
    np.testing.assert_allclose(mask_state("padding", 4, ZERO, "float64").leak, zero_fill_leak())


def zero_fill_leak(length=4):
    """The weight each row puts on keys >= length when the padding-masked scores are set to 0."""
    allowed = reference_mask("padding", length)
    return np.where(allowed, 0, plain_softmax(np.where(allowed, SCORES, 0.0))).sum(axis=1)


def test_mask_after_softmax_rows_sum_below_one():
    for mask, length, _, dtype in EVERY:
        state = mask_state(mask, length, AFTER, dtype)
        hidden = ~state.mask.all(axis=1)
        where = (mask, length, dtype)
        assert np.all(state.row_sums[hidden] < 1 - 0.01), where
        np.testing.assert_array_equal(state.sum_is_off, hidden & state.mask.any(axis=1))
        assert np.all(state.weights[~state.mask] == 0) and np.all(state.leak == 0), where
        unmasked = plain_softmax(SCORES)
        np.testing.assert_allclose(
            state.row_sums, np.where(state.mask, unmasked, 0).sum(axis=1), atol=6 * TOL[dtype]
        )


@pytest.mark.parametrize("mask", ["padding", "causal + padding"])
def test_minus_1e9_in_float16_becomes_minus_infinity_and_nan(mask):
    """−1e9 overflows float16 to −∞; the textbook softmax then makes 0/0 of a fully masked row."""
    state = mask_state(mask, 0, BILLION, "float16")
    assert state.fill_value == -np.inf and state.filled.dtype == np.float16
    assert np.all(np.isneginf(state.filled))
    assert state.nan_rows.all() and np.isnan(state.weights).all()
    assert np.isnan(state.row_sums).all() and np.isnan(state.leak).all()
    # A row with a key left is fine: the same −∞ gives exactly 0.
    partial = mask_state(mask, 3, BILLION, "float16")
    assert not partial.nan_rows.any() and np.all(partial.weights[~partial.mask] == 0)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_minus_1e9_in_wider_dtypes_gives_uniform_rows_over_masked_keys(dtype):
    state = mask_state("padding", 0, BILLION, dtype)
    assert state.fill_value == -1e9 and not state.nan_rows.any()
    np.testing.assert_allclose(state.weights, 1 / 6, rtol=TOL[dtype])
    np.testing.assert_allclose(state.leak, 1.0, atol=TOL[dtype])


@pytest.mark.parametrize("dtype", DTYPES)
def test_dtype_minimum_gives_uniform_rows_over_masked_keys(dtype):
    state = mask_state("padding", 0, MINIMUM, dtype)
    assert state.fill_value == np.finfo(dtype).min
    assert not state.nan_rows.any()
    np.testing.assert_allclose(state.weights.astype(float), 1 / 6, rtol=TOL[dtype])
    # and with a key left, a masked key gets exactly nothing
    partial = mask_state("padding", 2, MINIMUM, dtype)
    assert np.all(partial.weights[:, 2:] == 0) and np.all(partial.leak == 0)


def test_nothing_warns_at_any_setting():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for setting in EVERY:
            mask_state(*setting)


def test_nan_only_where_documented():
    for mask, length, fill, dtype in EVERY:
        state = mask_state(mask, length, fill, dtype)
        expected = fill == BILLION and dtype == "float16" and state.fully_masked_rows.any()
        assert state.nan_rows.any() == expected, (mask, length, fill, dtype)


@pytest.mark.parametrize(
    "args, name",
    [
        (("causal mask", 4, CORRECT, "float64"), "mask"),
        ((None, 4, CORRECT, "float64"), "mask"),
        (("causal", -1, CORRECT, "float64"), "length"),
        (("causal", 7, CORRECT, "float64"), "length"),
        (("causal", 4.0, CORRECT, "float64"), "length"),
        (("causal", True, CORRECT, "float64"), "length"),
        (("causal", "4", CORRECT, "float64"), "length"),
        (("causal", 4, "-inf", "float64"), "fill"),
        (("causal", 4, 0, "float64"), "fill"),
        (("causal", 4, CORRECT, "int32"), "dtype"),
        (("causal", 4, CORRECT, None), "dtype"),
        (("causal", 4, CORRECT, "float128"), "dtype"),
        (("causal", 4, CORRECT, True), "dtype"),
    ],
)
def test_bad_inputs_are_refused(args, name):
    with pytest.raises(ValueError, match=f"^{name}"):
        mask_state(*args)


def test_dtype_objects_are_accepted():
    assert mask_state("causal", 4, CORRECT, np.float16).dtype == "float16"


def test_the_shared_scores_cannot_be_changed():
    state = mask_state("none", 4, CORRECT, "float64")
    with pytest.raises(ValueError):
        state.scores[0, 0] = 1.0  # float64 scores are the shared array itself, read-only


# ------------------------------------------------------------------ the explorer
@pytest.fixture
def explorer():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield MaskExplorer()


def test_controls(explorer):
    c = explorer.controls
    assert list(c) == ["mask", "length", "fill", "dtype"]
    assert explorer.values == {
        "mask": "causal + padding",
        "length": 4,
        "fill": CORRECT,
        "dtype": "float64",
    }
    assert control_values(c["mask"]) == list(MASKS)
    assert control_values(c["length"]) == list(LENGTHS)
    assert control_values(c["fill"]) == list(FILLS)
    assert control_values(c["dtype"]) == ["float64", "float32", "float16"]
    assert c["length"].description == "real length"


def test_length_slider_is_live_exactly_when_the_padding_mask_reads_it(explorer):
    for mask in MASKS:
        explorer.controls["mask"].value = mask  # as the toggle buttons do
        assert explorer.controls["length"].disabled == ("padding" not in mask), mask
        assert explorer.last_error is None


BASE = {"mask": "causal + padding", "length": 4, "fill": CORRECT, "dtype": "float64"}


@pytest.mark.parametrize(
    "name, value", [("mask", "none"), ("length", 2), ("fill", ZERO), ("dtype", "float16")]
)
def test_moving_a_control_changes_the_figure_and_the_readout(explorer, name, value):
    explorer.set(**BASE)
    before_pixels = explorer.view.widget.pixels.copy()
    before_text = explorer.readout.value
    explorer.controls[name].value = value  # exactly what the widget does
    assert_shown_cleanly(explorer, f"{name}={value!r}")
    assert not np.array_equal(explorer.view.widget.pixels, before_pixels)
    assert explorer.readout.value != before_text
    settings = {**BASE, name: value}
    expected = mask_state(**settings).weights.astype(float)
    np.testing.assert_array_equal(explorer.artists["image"].get_array(), expected)


def test_every_control_sweeps_cleanly(explorer):
    explorer.set(mask="padding", fill=BILLION, dtype="float16")  # length 0 gives NaN rows
    image = explorer.artists["image"]
    for name in explorer.controls:
        for _ in clean_sweep(explorer, name):
            state = explorer.state
            shown = image.get_array()
            np.testing.assert_array_equal(np.ma.getmaskarray(shown), np.isnan(state.weights))
            np.testing.assert_array_equal(shown.filled(-1), np.nan_to_num(state.weights, nan=-1))
            assert image.get_clim() == (0.0, 1.0)


def every_artist(figure):
    return figure.findobj(lambda artist: True)


def test_draw_never_adds_artists(explorer):
    before = every_artist(explorer.figure)
    children = [len(ax.get_children()) for ax in explorer.figure.axes]
    limits = [(ax.get_xlim(), ax.get_ylim()) for ax in explorer.figure.axes]
    for settings in [BASE, {"length": 0, "fill": BILLION, "dtype": "float16"}, {"mask": "none"}]:
        explorer.set(**settings)
        explorer.draw(explorer.artists, explorer.state)
    after = every_artist(explorer.figure)
    assert len(after) == len(before) and set(map(id, after)) == set(map(id, before))
    assert [len(ax.get_children()) for ax in explorer.figure.axes] == children
    assert [(ax.get_xlim(), ax.get_ylim()) for ax in explorer.figure.axes] == limits


def test_nan_cells_are_grey_and_labelled(explorer):
    explorer.set(mask="padding", length=0, fill=BILLION, dtype="float16")
    assert explorer.state.nan_rows.all()
    assert explorer.artists["cells"].texts == ["nan"] * 36
    assert explorer.artists["sum_labels"].texts == ["nan"] * 6
    assert np.ma.getmaskarray(explorer.artists["image"].get_array()).all()
    text = assert_shown_cleanly(explorer)
    assert "6 row(s) came out not-a-number" in " ".join(text.split())


def test_cells_show_exact_zeros_and_values(explorer):
    explorer.set(**BASE)
    w = explorer.state.weights
    texts = np.array(explorer.artists["cells"].texts).reshape(6, 6)
    assert np.all(texts[~explorer.state.mask] == "0")
    for (i, j), x in np.ndenumerate(w):
        if explorer.state.mask[i, j]:
            assert texts[i, j] == f"{x:.2f}", (i, j)


def test_masked_cells_are_hatched(explorer):
    for settings in [BASE, {"mask": "none"}, {"mask": "padding", "length": 0}]:
        explorer.set(**settings)
        hidden = explorer.artists["hidden"]
        assert hidden.get_hatch() == "//"
        corners = hidden.get_path().vertices.reshape(-1, 5, 2)  # (m, 5, 2) closed squares
        centres = {(int(y), int(x)) for x, y in corners[:, :4].mean(axis=1)}
        assert centres == {tuple(ij) for ij in np.argwhere(~explorer.state.mask)}


def test_row_sum_bars(explorer):
    explorer.set(mask="causal", fill=AFTER)
    state = explorer.state
    blue, red = explorer.artists["bars"], explorer.artists["bad_bars"]  # one bar per row in all
    np.testing.assert_allclose(blue.values + red.values, state.row_sums)
    assert explorer.artists["sum_labels"].texts == [f"{s:.3f}" for s in state.row_sums]
    assert red.shown.tolist() == [True] * 5 + [False]  # the last row sees every key: sums to 1
    assert (blue.shown == ~red.shown).all()
    assert blue.get_facecolor() == blue.get_edgecolor() == to_rgba(PALETTE["blue"])
    assert red.get_facecolor() == red.get_edgecolor() == to_rgba(PALETTE["vermillion"])
    sum_ax = blue.axes
    lines = [line for line in sum_ax.get_lines() if line.get_linestyle() == ":"]
    assert len(lines) == 1 and set(lines[0].get_xdata()) == {1.0}


def words(explorer):
    return " ".join(readout_text(explorer).split())


def test_readout_tells_the_leak(explorer):
    explorer.set(mask="padding", length=4, fill=ZERO)
    leak = zero_fill_leak()
    worst = int(np.argmax(leak))
    text = words(explorer)
    assert "keys 5–6 are hidden from every query — 12 of 36 cells masked" in text
    assert f"6 row(s) put weight on masked keys, {leak.sum():.3f} in all" in text
    assert f"the most, {leak[worst]:.3f} , in row {worst + 1} “sat”" in text  # tags -> spaces
    assert "Every row sums to 1" in text


def test_readout_tells_rows_that_do_not_sum_to_one(explorer):
    explorer.set(mask="causal", fill=AFTER)
    sums = explorer.state.row_sums[:5]
    text = words(explorer)
    assert "No row puts any weight on a masked key" in text
    assert "5 row(s) do not sum to 1: 1 “The”" in text
    assert f"sums {sums.min():.3f} … {sums.max():.3f}" in text
    assert "weights zeroed after softmax" in text


@pytest.mark.parametrize(
    "fill, dtype, fate",
    [
        (CORRECT, "float16", "all zeros"),
        (MINIMUM, "float32", "uniform, 0.167 on each masked key"),
        (BILLION, "float64", "uniform, 0.167 on each masked key"),
        (BILLION, "float16", "not-a-number"),
    ],
)
def test_readout_tells_what_became_of_fully_masked_rows(explorer, fill, dtype, fate):
    explorer.set(mask="causal + padding", length=0, fill=fill, dtype=dtype)
    text = words(explorer)
    assert f"6 fully masked row(s), no key left: all of them — {fate}." in text


def test_readout_names_the_fill_value(explorer):
    explorer.set(mask="causal", fill=MINIMUM, dtype="float16")
    assert "masked scores → −65504" in words(explorer)
    explorer.set(fill=BILLION)
    assert "−1e9, which is −∞ in float16" in words(explorer)
    explorer.set(dtype="float64")
    assert "masked scores → −1e9" in words(explorer) and "which is" not in words(explorer)


def test_colour_squares_show_the_weights_nan_in_the_bad_grey():
    """The cells are coloured by one collection of squares (fast), from the same weights."""
    explorer = MaskExplorer(mask="padding", length=0, fill="−1e9", dtype="float16")
    squares = explorer.artists["squares"]
    weights = explorer.state.weights.astype(np.float64)  # (6, 6), all NaN here
    shown = squares.get_array()
    assert np.ma.getmaskarray(shown).all() and np.isnan(weights).all()
    explorer.set(mask="causal", fill="−∞ (correct)", dtype="float64")
    np.testing.assert_array_equal(squares.get_array(), explorer.state.weights.ravel())
    assert not explorer.artists["image"].get_visible()  # kept for the colour bar only


def test_a_kept_background_draws_the_same_pixels_as_a_full_redraw():
    """Tick-label looks are kept per look: coming back to one paints what a fresh draw paints."""
    explorer = MaskExplorer(length=0)  # every pad seen: the tick labels' marked look
    marked = explorer.view.frame().copy()  # (height, width, 4)
    explorer.set(mask="none", length=6)  # another look, drawn in full once
    explorer.set(mask="causal")
    explorer.set(mask=BOTH, length=0)  # back: the kept background, no full draw
    again = explorer.view.frame().copy()
    explorer.view.invalidate()  # the same state drawn from scratch
    redrawn = explorer.view.frame().copy()
    assert np.array_equal(again, marked)
    assert np.array_equal(again, redrawn)
    assert len(explorer.view._backgrounds) == 1  # invalidate() forgot the kept looks


def test_returning_to_a_look_needs_no_full_draw(monkeypatch):
    """Only the first visit of each tick-label look draws the whole figure."""
    explorer = MaskExplorer()
    full_draws = []
    draw = explorer.view.figure.canvas.draw
    monkeypatch.setattr(explorer.view.figure.canvas, "draw", lambda: full_draws.append(1) or draw())
    for mask in ["none", BOTH, "none", BOTH, "none"]:
        explorer.set(mask=mask)
    assert len(full_draws) == 1  # "none" once; BOTH was drawn when the explorer was built


@pytest.fixture(scope="module")
def one_explorer():
    """One explorer for a sweep that sets every control each time (building a figure per
    setting made the sweep of 420 settings take minutes of the fast loop)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield MaskExplorer()


@pytest.mark.parametrize("mask, length, fill, dtype", EVERY)
def test_the_sums_readout_says_what_the_bars_show(one_explorer, mask, length, fill, dtype):
    """Issue 29: at real length 0 with the dtype-minimum or 0 fill the readout said "Every row
    sums to 1, or to 0 where the query has no key left" beside bars all at 1.000."""
    explorer = one_explorer
    explorer.set(mask=mask, length=length, fill=fill, dtype=dtype)
    drawn = explorer.artists["bars"].values + explorer.artists["bad_bars"].values  # (n_q,)
    labels = explorer.artists["sum_labels"].texts
    text = words(explorer)
    if "Every row sums to 1." in text:
        assert labels == ["1.000"] * 6 and np.allclose(drawn, 1.0, atol=1e-3), text
    elif "Every row sums to 0" in text:
        assert labels == ["0"] * 6 and (drawn == 0).all(), text
    elif "Every row sums to 1, except" in text:
        zero = [i for i, label in enumerate(labels) if label == "0"]
        assert zero and all(labels[i] == "1.000" for i in range(6) if i not in zero), text
        assert all(f"{i + 1} “" in text.split("except")[1] for i in zero), text
        assert (drawn[zero] == 0).all()
    else:
        assert "Every row sums" not in text
        off = "do not sum to 1" in text or "not-a-number" in text
        assert off, f"the readout says nothing of the sums: {text}"
    assert "or to 0 where" not in text
