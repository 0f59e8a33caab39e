"""The bug lab (lesson 7): each bug against plain numpy, its symptom, and the view."""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pytest
from explorer_checks import assert_shown_cleanly, readout_text

from attnlab.examples import cat_sat_down, cat_sat_down_wide
from attnlab.explorers.bug_lab import (
    BUGS,
    DTYPES,
    HEADS,
    SCALES,
    TOKENS,
    BugLabExplorer,
    bug_lab_state,
)
from attnlab.explorers.sweep import control_values

SCALE_BUG, AFTER, ZERO, SHIFT = BUGS
EVERY = list(itertools.product(BUGS, HEADS, SCALES, TOKENS, DTYPES))


def plain_softmax(s):
    e = np.exp(s - s.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def reference(heads, scale, divisor=None):
    """Scores of the first head, rebuilt from the wide example, and the causal mask."""
    ex = cat_sat_down_wide(max_d_k=16)
    d = 16 // heads
    x = ex.x * scale
    raw = (x @ ex.w_q[:, :d]) @ (x @ ex.w_k[:, :d]).T
    return raw / (divisor or math.sqrt(d)), np.tri(4, dtype=bool)


def test_two_heads_is_the_running_example():
    ex = cat_sat_down()
    scores, _ = reference(2, 1.0)
    np.testing.assert_allclose(scores, (ex.x @ ex.w_q) @ (ex.x @ ex.w_k).T / math.sqrt(8))


@pytest.mark.parametrize("heads", HEADS)
@pytest.mark.parametrize("scale", [0.5, 1.0, 3.0])
def test_float32_weights_match_plain_numpy(heads, scale):
    scores, causal = reference(heads, scale)
    right = plain_softmax(np.where(causal, scores, -np.inf))
    expected = {
        SCALE_BUG: plain_softmax(np.where(causal, reference(heads, scale, 4.0)[0], -np.inf)),
        AFTER: plain_softmax(scores) * causal,
        ZERO: plain_softmax(np.where(causal, scores, 0.0)),
        SHIFT: right,  # no overflow at these scales in float32
    }
    for bug in BUGS:
        state = bug_lab_state(bug, heads, scale, "cat", "float32")
        np.testing.assert_allclose(state.right, right, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(state.wrong, expected[bug], rtol=1e-5, atol=1e-6, err_msg=bug)


def test_the_correct_side_never_breaks():
    for bug, heads, scale, query, dtype in EVERY:
        state = bug_lab_state(bug, heads, scale, query, dtype)
        assert not np.isnan(state.right).any()
        np.testing.assert_allclose(state.right_sums, 1.0, atol=1e-3)
        assert np.all(state.right[~np.tri(4, dtype=bool)] == 0)


def test_the_scale_bug_flattens_by_root_h_and_vanishes_with_one_head():
    for heads, scale in itertools.product(HEADS, SCALES):
        state = bug_lab_state(SCALE_BUG, heads, scale, "cat")
        assert math.isclose(state.wrong_divisor / state.divisor, math.sqrt(heads))
        if heads == 1:
            np.testing.assert_array_equal(state.wrong, state.right)
        else:  # every row with a choice is flatter: its largest weight is smaller
            rows = slice(1, None)
            assert np.all(state.wrong[rows].max(axis=1) < state.right[rows].max(axis=1) + 1e-6)


def test_mask_after_softmax_loses_weight_and_zero_fill_leaks():
    for heads, scale in itertools.product(HEADS, SCALES):
        late = bug_lab_state(AFTER, heads, scale, "The")
        assert np.all(late.wrong_sums[:3] <= 1 + 1e-6)  # less, unless the future got ~0 anyway
        assert math.isclose(late.wrong_sums[3], 1, rel_tol=1e-5)  # the last row sees every key
        if scale <= 1:
            assert np.all(late.wrong_sums[:3] < 0.99), (heads, scale)
        assert np.all(late.leak == 0)
        leaky = bug_lab_state(ZERO, heads, scale, "The")
        assert leaky.leak[3] == 0  # nothing to leak to from the last row
        if scale <= 1:  # larger scores can outshine exp(0) = 1
            assert np.all(leaky.leak[:3] > 0.01), (heads, scale)
        np.testing.assert_allclose(leaky.wrong_sums, 1.0, rtol=1e-5)


@pytest.mark.parametrize("dtype", DTYPES)
def test_no_max_shift_breaks_exactly_where_exp_overflows_or_every_exp_underflows(dtype):
    tiny = math.log(float(np.finfo(dtype).tiny)) - 20  # below it, exp is 0 even subnormal
    for heads, scale in itertools.product(HEADS, SCALES):
        state = bug_lab_state(SHIFT, heads, scale, "sat", dtype)
        allowed = np.where(np.tri(4, dtype=bool), state.scores, -np.inf)
        over = allowed.max(axis=1) > state.limit
        under = allowed.max(axis=1) < tiny
        assert np.all(state.nan_rows[over | under]), (heads, scale)
        fine = allowed.max(axis=1) < state.limit - 1  # well inside: same as correct
        fine &= allowed.max(axis=1) > tiny + 40
        np.testing.assert_allclose(state.wrong[fine], state.right[fine], atol=2e-3)
    assert bug_lab_state(SHIFT, 4, 12.0, "cat", dtype).nan_rows.any()
    assert not bug_lab_state(SHIFT, 4, 1.0, "cat", dtype).nan_rows.any()


def test_limits_are_the_logs_of_the_largest_numbers():
    assert round(bug_lab_state(SHIFT, 4, 1.0, "cat", "float16").limit, 2) == round(
        math.log(65504), 2
    )
    assert bug_lab_state(SHIFT, 4, 1.0, "cat", "float32").limit == pytest.approx(
        math.log(float(np.finfo(np.float32).max))
    )


def test_nothing_warns_at_any_setting():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for setting in EVERY[::7]:
            bug_lab_state(*setting)


@pytest.mark.parametrize(
    "args, name",
    [
        (("off by one", 4, 1.0, "cat"), "bug"),
        ((SCALE_BUG, 3, 1.0, "cat"), "heads"),
        ((SCALE_BUG, True, 1.0, "cat"), "heads"),
        ((SCALE_BUG, 4, 5.0, "cat"), "scale"),
        ((SCALE_BUG, 4, 1.0, "dog"), "query"),
        ((SCALE_BUG, 4, 1.0, "cat", "float64"), "dtype"),
    ],
)
def test_bad_inputs_are_refused(args, name):
    with pytest.raises(ValueError, match=f"^{name}"):
        bug_lab_state(*args)


# ------------------------------------------------------------------ the explorer
@pytest.fixture
def explorer():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield BugLabExplorer()


def test_controls_and_start(explorer):
    c = explorer.controls
    assert list(c) == ["bug", "heads", "scale", "query", "dtype"]
    assert explorer.values == {
        "bug": SCALE_BUG,
        "heads": 4,
        "scale": 1.0,
        "query": "cat",
        "dtype": "float32",
    }
    assert control_values(c["heads"]) == list(HEADS)
    assert control_values(c["scale"]) == list(SCALES)
    assert control_values(c["query"]) == list(TOKENS)
    assert not any(getattr(control, "disabled", False) for control in c.values())


@pytest.mark.parametrize("bug", BUGS)
@pytest.mark.parametrize("name", ["heads", "scale", "query"])
def test_every_slider_step_changes_pixels_and_readout(bug, name):
    """What the browser suite presses: one step of each slider, from the start, per bug."""
    lab = BugLabExplorer(bug=bug)
    values = control_values(lab.controls[name])
    start = values.index(lab.controls[name].value)
    for step in (start + 1, start - 1):
        lab.set(**{name: values[start]})
        pixels, text = lab.view.widget.pixels.copy(), lab.readout.value
        lab.controls[name].value = values[step]
        assert_shown_cleanly(lab, f"{bug}, {name}={values[step]!r}")
        assert not np.array_equal(lab.view.widget.pixels, pixels), (bug, name, step)
        assert lab.readout.value != text, (bug, name, step)


def test_cells_show_the_state(explorer):
    explorer.set(bug=SHIFT, scale=12.0, dtype="float16")
    state = explorer.state
    for side in ("right", "wrong"):
        shown = explorer.artists[f"{side}_squares"].get_array()
        weights = getattr(state, side).ravel()
        np.testing.assert_array_equal(np.ma.getmaskarray(shown), np.isnan(weights))
        np.testing.assert_array_equal(shown.filled(-1), np.nan_to_num(weights, nan=-1))
    texts = np.array(explorer.artists["wrong_cells"].texts).reshape(4, 4)
    assert np.all(texts[np.isnan(state.wrong)] == "nan")
    assert "nan" not in explorer.artists["right_cells"].texts


def test_selected_row_is_outlined_and_barred(explorer):
    for token in TOKENS:
        explorer.set(query=token)
        i = TOKENS.index(token)
        assert (
            explorer.artists["right_row"].get_y()
            == explorer.artists["wrong_row"].get_y()
            == i - 0.5
        )
        np.testing.assert_allclose(explorer.artists["right_bars"].values, explorer.state.right[i])


def test_draw_never_adds_artists(explorer):
    before = explorer.figure.findobj(lambda artist: True)
    for settings in [
        {"bug": SHIFT, "scale": 12.0, "dtype": "float16"},
        {"bug": AFTER},
        {"heads": 1, "query": "down"},
    ]:
        explorer.set(**settings)
    after = explorer.figure.findobj(lambda artist: True)
    assert set(map(id, after)) == set(map(id, before))


def words(explorer):
    return " ".join(readout_text(explorer).split())


def test_readout_tells_each_symptom(explorer):
    text = words(explorer)
    assert "divides by √16 = 4 instead of √4 = 2" in text and "2× too small" in text
    explorer.set(heads=1)
    assert "the bug changes nothing" in words(explorer)
    explorer.set(bug=AFTER, heads=4)
    sums = explorer.state.wrong_sums
    assert f"3 of 4 rows sum to less than 1; row “The” keeps only {sums[0]:.3f}" in words(explorer)
    explorer.set(bug=ZERO)
    assert f"Weight on future keys: {explorer.state.leak.sum():.3f} in all" in words(explorer)
    explorer.set(bug=SHIFT)
    assert "No overflow yet" in words(explorer)
    explorer.set(scale=12.0, dtype="float16")
    text = assert_shown_cleanly(explorer)
    assert "where exp overflows float16" in text and "came out not-a-number" in text
