"""The d_k lab (lesson 2): its Monte Carlo numbers match the theory; its view updates in place."""

from __future__ import annotations

import itertools
import math
import re
import warnings

import numpy as np
import pytest
from explorer_checks import assert_shown_cleanly

from attnlab.explorers import scaling
from attnlab.explorers.scaling import (
    D_K_VALUES,
    EXPONENTS,
    ScalingExplorer,
    dot_products,
    jacobian_curve,
    scaling_lab_state,
)

SETTINGS = [(a, True) for a in EXPONENTS] + [(0.5, False)]  # (exponent, scaled)


def relative_standard_error(d_k: int, n_rows: int = 250, n_keys: int = 16) -> float:
    """Standard error of the measured variance of q·k, relative to d_k, for the lab's layout.

    Each row is one query against ``n_keys`` keys. With x = q·k for Gaussian q, k:
    Var(x²) = 2 d² + 6 d and, within a row, Cov(x_j², x_l²) = Var(|q|²) = 2 d.
    """
    row_mean_var = ((2 * d_k**2 + 6 * d_k) + (n_keys - 1) * 2 * d_k) / n_keys
    return math.sqrt(row_mean_var / n_rows) / d_k


@pytest.mark.parametrize("d_k", D_K_VALUES)
@pytest.mark.parametrize("exponent, scaled", SETTINGS)
def test_measured_variance_follows_the_theory(d_k, exponent, scaled):
    state = scaling_lab_state(d_k, exponent, scaled)
    a = exponent if scaled else 0.0
    theory = d_k ** (1 - 2 * a)
    tolerance = 4 * relative_standard_error(d_k)
    assert state.score_theory == pytest.approx(theory)
    assert state.score_variance == pytest.approx(theory, rel=tolerance)
    assert state.raw_variance == pytest.approx(d_k, rel=tolerance)


def test_only_the_half_exponent_keeps_variance_one():
    """Across 1 … 1024 the variance of q·k/d_k^a drifts for a = ⅓ and ⅔, and stays ~1 for ½."""
    spread = {a: [scaling_lab_state(d, a).score_variance for d in D_K_VALUES] for a in EXPONENTS}
    assert max(spread[0.5]) < 1.25 and min(spread[0.5]) > 0.8
    assert spread[1 / 3][-1] > 8  # 1024^(1/3) ≈ 10
    assert spread[2 / 3][-1] < 0.12  # 1024^(-1/3) ≈ 0.099


@pytest.mark.parametrize("d_k", D_K_VALUES)
@pytest.mark.parametrize("exponent, scaled", SETTINGS)
def test_softmax_numbers_are_in_range(d_k, exponent, scaled):
    state = scaling_lab_state(d_k, exponent, scaled)
    n = state.row.size
    assert 0 <= state.entropy <= state.max_entropy + 1e-12
    assert state.max_entropy == pytest.approx(math.log(n))
    assert 0 <= state.row_entropy <= math.log(n) + 1e-12
    assert 1 / n - 1e-12 <= state.max_weight <= 1
    assert state.row.sum() == pytest.approx(1)
    assert np.all(np.diff(state.row) <= 0), "the row is drawn sorted, largest first"
    assert 0 <= state.jacobian_norm <= 0.5  # ‖diag(p) − ppᵀ‖_F ≤ 1/2 for any p
    assert 0 <= state.off_axis <= 1
    assert np.all(np.isfinite(state.jacobian_curve))


def test_raw_scores_saturate_and_kill_the_jacobian():
    raw = jacobian_curve(scaled=False)  # (11,)
    from_eight = raw[D_K_VALUES.index(8) :]
    assert np.all(np.diff(from_eight) < 0), f"not decreasing from d_k = 8: {raw.round(3)}"
    assert raw[-1] < raw[0] / 3
    collapsed = scaling_lab_state(1024, scaled=False)
    assert collapsed.max_weight > 0.9 and collapsed.entropy < 0.4


def test_half_exponent_keeps_the_jacobian_steady_and_two_thirds_flattens_rows():
    half = jacobian_curve(0.5)
    assert half.max() / half.min() < 1.15
    flat = scaling_lab_state(1024, exponent=2 / 3)
    assert flat.entropy > 0.97 * flat.max_entropy  # nearly uniform: scores barely matter


def test_samples_are_deterministic_and_cached():
    first = dot_products(32)
    assert first is dot_products(32)
    assert not first.flags.writeable
    scaling._dot_products.cache_clear()
    scaling._softmax_rows.cache_clear()
    again = dot_products(32)
    assert again is not first and np.array_equal(again, first)
    other_seed = dot_products(32, seed=1)
    assert not np.array_equal(other_seed, first)


def test_larger_d_k_appends_independent_coordinates():
    """dot_products(2d) = dot_products(d) + the dot product of d fresh coordinates."""
    extra = dot_products(512) - dot_products(256)  # (n_rows, n_keys)
    assert extra.var() == pytest.approx(256, rel=4 * relative_standard_error(256))
    assert abs(np.corrcoef(extra.ravel(), dot_products(256).ravel())[0, 1]) < 0.1


@pytest.mark.parametrize("bad", [0, -4, 2.5, True, "64"])
def test_bad_d_k_is_refused(bad):
    with pytest.raises(ValueError, match="d_k"):
        scaling_lab_state(bad)


def test_bad_sizes_are_refused():
    with pytest.raises(ValueError, match="multiple of n_keys"):
        scaling_lab_state(4, n_samples=100, n_keys=16)
    with pytest.raises(ValueError, match="exponent"):
        scaling_lab_state(4, exponent=float("nan"))


def test_odd_d_k_also_works():
    state = scaling_lab_state(48, exponent=0.5, n_samples=800, n_keys=8, seed=3)
    assert state.scores.shape == (100, 8)
    assert state.raw_variance == pytest.approx(48, rel=0.3)


# ------------------------------------------------------------------------ the view
@pytest.fixture
def lab():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield ScalingExplorer()


def test_histograms_fit_the_fixed_axes():
    """No setting produces a bin taller than the fixed y-limits (nothing is clipped)."""
    for d_k, (exponent, scaled) in itertools.product(D_K_VALUES, SETTINGS):
        state = scaling_lab_state(d_k, exponent, scaled)
        assert state.raw_density.max() < scaling.RAW_YMAX
        assert state.score_density.max() < scaling.SCORE_YMAX
        assert state.jacobian_curve.max() < scaling.JACOBIAN_YMAX


def test_full_sweep_of_every_combination(lab):
    """All 66 combinations of the controls: no error, no warning, no nan/inf, limits fixed."""
    artists = lab.artists
    axes = lab.figure.axes
    limits = [(ax.get_xlim(), ax.get_ylim()) for ax in axes]
    for d_k, exponent, scaled in itertools.product(D_K_VALUES, EXPONENTS, (True, False)):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            lab.set(d_k=d_k, exponent=exponent, scaled=scaled)
        text = assert_shown_cleanly(lab, f"d_k={d_k}, exponent={exponent}, scaled={scaled}")
        assert f"d_k = {d_k}" in text
        assert lab.controls["exponent"].disabled is (not scaled)
    assert lab.artists is artists and lab.figure.axes == axes
    assert [(ax.get_xlim(), ax.get_ylim()) for ax in axes] == limits


def test_artists_show_the_state(lab):
    lab.set(d_k=256, scaled=False)
    state = lab.state
    assert np.array_equal(lab.artists["raw_hist"].get_data().values, state.raw_density)
    assert np.array_equal(lab.artists["score_hist"].get_data().values, state.score_density)
    bars = lab.artists["row"].get_data().values  # bars and the gaps between them
    assert np.array_equal(bars[::2], state.row) and not bars[1::2].any()
    x, y = lab.artists["jacobian_marker"].get_data()
    assert list(x) == [256] and y[0] == pytest.approx(state.jacobian_norm)
    assert lab.artists["raw_spread"].get_xdata()[1] == pytest.approx(state.raw_std)


def test_every_slider_step_changes_the_picture(lab):
    """What the browser test does: one step of each slider changes the pixels shown."""
    for name in ("d_k", "exponent"):
        control = lab.controls[name]
        options = [value for _, value in control.options]
        before = lab.view.widget.pixels.copy()
        index = options.index(control.value)
        control.value = options[index + 1 if index + 1 < len(options) else index - 1]
        assert (lab.view.widget.pixels != before).any(), name


def test_readout_states_measured_and_theory(lab):
    lab.set(d_k=1024, exponent=1 / 3, scaled=True)
    text = re.sub(r"<[^>]+>", "", lab.readout.value)
    assert "measured variance" in text and "theory" in text
    assert f"{lab.state.score_variance:.3g}" in text
    assert f"{1024 ** (1 / 3):.3g}" in text
    lab.set(scaled=False)
    assert "off the right-hand axis" in lab.readout.value
