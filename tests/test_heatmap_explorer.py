"""The heatmap explorer (lesson 4): weights against plain numpy, properties of T and d_k, view."""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pytest
from explorer_checks import assert_shown_cleanly, clean_sweep, readout_text
from matplotlib.colors import to_rgba

from attnlab import scaled_dot_product_attention
from attnlab.examples import cat_sat_down, cat_sat_down_wide
from attnlab.explorers.heatmap import D_K_VALUES, EXAMPLE, HeatmapExplorer, heatmap_state
from attnlab.explorers.sweep import control_values
from attnlab.explorers.temperature import TEMPERATURES
from attnlab.plots.weights import PALETTE

SETTINGS = list(itertools.product(D_K_VALUES, TEMPERATURES, (True, False)))  # every slider stop
WIDE = cat_sat_down_wide(512)  # the test's own copy of the example


def reference(d_k, t, scaled):
    """Everything the explorer shows, written out in plain numpy from the example's matrices."""
    q = WIDE.x @ WIDE.w_q[:, :d_k]
    k = WIDE.x @ WIDE.w_k[:, :d_k]
    raw = q @ k.T
    scores = raw / ((math.sqrt(d_k) if scaled else 1.0) * t)
    e = np.exp(scores - scores.max(axis=1, keepdims=True))
    w = e / e.sum(axis=1, keepdims=True)
    logs = np.log(np.where(w > 0, w, 1.0))  # 0 log 0 = 0
    entropy = -(w * logs).sum(axis=1) / math.log(w.shape[1])
    return raw, scores, w, entropy, w.sum(axis=0)


# ------------------------------------------------------------------ the numbers
@pytest.mark.parametrize("d_k", D_K_VALUES)
@pytest.mark.parametrize("t", [0.05, 0.3, 1.0, 5.0])
@pytest.mark.parametrize("scaled", [True, False])
def test_weights_match_plain_numpy(d_k, t, scaled):
    raw, scores, w, entropy, mass = reference(d_k, t, scaled)
    state = heatmap_state(d_k, t, scaled)
    np.testing.assert_allclose(state.raw, raw, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(state.scores, scores, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(state.weights, w, rtol=1e-9, atol=1e-15)
    np.testing.assert_allclose(state.entropy, entropy, atol=1e-9)
    np.testing.assert_allclose(state.effective, np.exp(entropy * math.log(4)), rtol=1e-9)
    np.testing.assert_allclose(state.column_mass, mass, atol=1e-12)
    assert state.score_spread == pytest.approx(np.std(scores), rel=1e-12)
    assert state.q.shape == state.k.shape == (4, d_k)


@pytest.mark.parametrize("t", [1.0, 2.0, 0.1])
def test_head_size_8_is_the_running_examples_attention(t):
    """At d_k = 8 the weights are those of the library's attention on the running example."""
    ex = cat_sat_down()
    q, k, v = ex.x @ ex.w_q, ex.x @ ex.w_k, ex.x @ ex.w_v
    _, weights = scaled_dot_product_attention(q, k, v, scale=1 / (math.sqrt(ex.d_k) * t))
    np.testing.assert_allclose(heatmap_state(ex.d_k, t).weights, weights, rtol=1e-12)
    assert heatmap_state(ex.d_k, t).tokens == ex.tokens


def test_rows_sum_to_one_at_every_slider_stop():
    for d_k, t, scaled in SETTINGS:
        state = heatmap_state(d_k, t, scaled)
        where = f"d_k={d_k}, T={t}, scaled={scaled}"
        np.testing.assert_allclose(state.weights.sum(axis=1), 1.0, rtol=1e-12, err_msg=where)
        assert np.all(state.weights >= 0), where
        assert np.all((state.entropy >= 0) & (state.entropy <= 1)), where
        assert state.column_mass.sum() == pytest.approx(4.0), where


def test_divisor_is_root_d_k_times_t():
    for d_k, t, scaled in SETTINGS:
        state = heatmap_state(d_k, t, scaled)
        assert state.divisor == (math.sqrt(d_k) * t if scaled else t), (d_k, t, scaled)
        assert (state.d_k, state.temperature, state.scaled) == (d_k, t, scaled)


def test_focused_query_and_hub_key():
    """Ties (rows that all collapsed) may go either way; the pick must be a true extreme."""
    for d_k, t, scaled in SETTINGS:
        _, _, _, entropy, mass = reference(d_k, t, scaled)
        state = heatmap_state(d_k, t, scaled)
        assert entropy[state.focused] <= entropy.min() + 1e-9, (d_k, t, scaled)
        assert mass[state.hub] >= mass.max() - 1e-9, (d_k, t, scaled)


@pytest.mark.parametrize("d_k", D_K_VALUES)
@pytest.mark.parametrize("scaled", [True, False])
def test_lowering_t_never_raises_a_rows_entropy(d_k, scaled):
    entropies = np.array([heatmap_state(d_k, t, scaled).entropy for t in TEMPERATURES])  # (T, 4)
    assert np.all(np.diff(entropies, axis=0) >= -1e-12), entropies.round(4)
    assert np.all(entropies[0] < entropies[-1])  # and T = 0.05 is strictly sharper than T = 5


def mean_entropy(d_k, scaled):
    return float(heatmap_state(d_k, 1.0, scaled).entropy.mean())


def test_without_scaling_a_wide_head_collapses_the_rows():
    """Measured: mean H / log 4 of 0.66 at d_k = 8, 0.00002 at d_k = 512."""
    assert mean_entropy(512, scaled=False) < 0.1
    assert mean_entropy(512, scaled=False) < mean_entropy(8, scaled=False) / 4


def test_with_scaling_the_rows_keep_their_spread():
    """Measured: between 0.57 (d_k = 64) and 0.98 (d_k = 1) at every head size; unscaled the
    rows are collapsed from d_k = 64 on (at most 0.03)."""
    means = [mean_entropy(d_k, scaled=True) for d_k in D_K_VALUES]
    assert min(means) > 0.5 and max(means) < 1.0, np.round(means, 3)
    for d_k in (64, 128, 256, 512):
        assert mean_entropy(d_k, scaled=True) > 10 * mean_entropy(d_k, scaled=False), d_k


def test_score_spread_grows_with_d_k_only_without_scaling():
    raw = [heatmap_state(d_k, 1.0, False).score_spread for d_k in (8, 512)]
    fixed = [heatmap_state(d_k, 1.0, True).score_spread for d_k in (8, 512)]
    assert raw[1] > 5 * raw[0]
    assert fixed[1] < 2 * fixed[0]


@pytest.mark.parametrize("bad", [0, -8, 513, 1024, 2.5, 8.0, True, "8", None])
def test_bad_d_k_is_refused(bad):
    with pytest.raises(ValueError, match="^d_k"):
        heatmap_state(bad)


@pytest.mark.parametrize("bad", [0, -1.0, float("nan"), float("inf"), "1", None, True])
def test_bad_temperature_is_refused(bad):
    with pytest.raises(ValueError, match="^temperature"):
        heatmap_state(8, bad)


@pytest.mark.parametrize("bad", ["yes", 1, None])
def test_bad_scaled_is_refused(bad):
    with pytest.raises(ValueError, match="^scaled"):
        heatmap_state(8, 1.0, bad)


def test_any_head_size_up_to_512_works():
    state = heatmap_state(100, 1.0)
    np.testing.assert_allclose(state.weights, reference(100, 1.0, True)[2], rtol=1e-9)


def test_the_shared_example_cannot_be_changed():
    with pytest.raises(ValueError):
        EXAMPLE.w_q[0, 0] = 1.0
    np.testing.assert_array_equal(EXAMPLE.w_q, WIDE.w_q)


# ------------------------------------------------------------------ the explorer
@pytest.fixture
def explorer():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield HeatmapExplorer()


def test_controls(explorer):
    c = explorer.controls
    assert list(c) == ["d_k", "temperature", "scaled"]
    assert explorer.values == {"d_k": 8, "temperature": 1.0, "scaled": True}
    assert explorer.values["d_k"] == cat_sat_down().d_k
    assert control_values(c["d_k"]) == [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]
    assert control_values(c["temperature"]) == list(TEMPERATURES)
    assert c["d_k"].description == "head size d_k"
    assert c["temperature"].description == "temperature T"
    assert c["scaled"].description == "divide by √d_k"
    for name in ("d_k", "temperature"):
        assert c[name].label_width == ""  # the label is as wide as its text: never cut


def test_starts_at_the_running_example(explorer):
    np.testing.assert_allclose(explorer.state.weights, reference(8, 1.0, True)[2], rtol=1e-9)
    text = readout_text(explorer)
    assert "2.83" in text and "√8" in text and "T = 1" in text


@pytest.mark.parametrize("name, value", [("d_k", 64), ("temperature", 0.2), ("scaled", False)])
def test_moving_a_control_changes_the_figure_and_the_readout(explorer, name, value):
    before_pixels = explorer.view.widget.pixels.copy()
    before_text = explorer.readout.value
    explorer.controls[name].value = value  # exactly what the slider does
    assert_shown_cleanly(explorer, f"{name}={value!r}")
    assert getattr(explorer.state, name) == value
    assert not np.array_equal(explorer.view.widget.pixels, before_pixels)
    assert explorer.readout.value != before_text
    settings = {**{"d_k": 8, "temperature": 1.0, "scaled": True}, name: value}
    expected = reference(settings["d_k"], settings["temperature"], settings["scaled"])[2]
    np.testing.assert_allclose(explorer.artists["image"].get_array(), expected, rtol=1e-9)


def test_every_control_sweeps_cleanly(explorer):
    image = explorer.artists["image"]
    for name in explorer.controls:
        for value in clean_sweep(explorer, name):
            state = explorer.state
            assert getattr(state, name) == value
            np.testing.assert_allclose(state.weights.sum(axis=1), 1.0)
            np.testing.assert_array_equal(image.get_array(), state.weights)
            assert image.get_clim() == (0.0, 1.0)


def test_colour_scale_stays_fixed(explorer):
    image = explorer.artists["image"]
    axes = explorer.figure.axes
    limits = [(ax.get_xlim(), ax.get_ylim()) for ax in axes]
    for d_k, t, scaled in [(512, 0.05, False), (1, 5.0, True), (64, 0.5, False)]:
        explorer.set(d_k=d_k, temperature=t, scaled=scaled)
        assert image.get_clim() == (0.0, 1.0)
        assert image.cmap.name.startswith("viridis")
        assert explorer.figure.axes == axes
        assert [(ax.get_xlim(), ax.get_ylim()) for ax in axes] == limits


def every_artist(figure):
    return figure.findobj(lambda artist: True)


def test_draw_never_adds_artists(explorer):
    before = every_artist(explorer.figure)
    children = [len(ax.get_children()) for ax in explorer.figure.axes]
    for d_k, t, scaled in [(512, 0.05, False), (2, 3.0, True), (128, 0.1, True)]:
        explorer.set(d_k=d_k, temperature=t, scaled=scaled)
        explorer.draw(explorer.artists, explorer.state)
    after = every_artist(explorer.figure)
    assert len(after) == len(before) and set(map(id, after)) == set(map(id, before))
    assert [len(ax.get_children()) for ax in explorer.figure.axes] == children


def test_cells_show_the_weights_with_contrast(explorer):
    explorer.set(d_k=512, temperature=0.05, scaled=False)  # every row collapses to one key
    w = reference(512, 0.05, False)[2]
    cells = explorer.artists["cells"]
    assert cells.texts == [f"{x:.2f}" for x in w.ravel()]
    assert set(cells.texts) == {"0.00", "1.00"}
    colours = cells.get_facecolor()  # (16, 4) RGBA
    for x, colour in zip(w.ravel(), colours, strict=True):
        # dark viridis purple at 0 takes white text, bright yellow at 1 black text
        assert tuple(colour[:3]) == ((0.0, 0.0, 0.0) if x > 0.5 else (1.0, 1.0, 1.0))


def test_cell_labels_sit_on_their_cells(explorer):
    """Label k is drawn at the centre of cell (k // 4, k % 4), in row-major order."""
    offsets = explorer.artists["cells"].get_offsets()
    assert [tuple(xy) for xy in offsets] == [(j, i) for i in range(4) for j in range(4)]


def test_entropy_bars_follow_the_heatmap_rows(explorer):
    explorer.set(d_k=32, temperature=0.5, scaled=False)
    entropy = reference(32, 0.5, False)[3]
    bars, focus = explorer.artists["bars"], explorer.artists["focus_bar"]  # one bar per row
    effective = np.exp(entropy * math.log(4))  # e^H, from H / log 4
    np.testing.assert_allclose(bars.values + focus.values, effective, atol=1e-9)
    heat_ax, spread_ax = explorer.figure.axes[0], bars.axes
    # query 0 at the top of both panels (display y grows upwards)
    bar_y = [spread_ax.transData.transform((0, y))[1] for y in bars.positions]
    row_y = [heat_ax.transData.transform((0, i))[1] for i in range(4)]
    assert bar_y == sorted(bar_y, reverse=True) and row_y == sorted(row_y, reverse=True)
    np.testing.assert_allclose(bar_y, row_y, atol=1.0)  # and level with the heatmap rows
    assert spread_ax.get_xlim() == (0.0, 4.0)
    focused = int(np.argmin(entropy))
    assert focus.shown.tolist() == [i == focused for i in range(4)]
    assert (bars.shown == ~focus.shown).all()
    assert bars.get_facecolor() == to_rgba(PALETTE["blue"])
    assert focus.get_facecolor() == to_rgba(PALETTE["vermillion"])
    assert explorer.artists["values"].texts == [f"{h:.2f}" for h in effective]


def test_uniform_line_at_four_keys(explorer):
    spread_ax = explorer.artists["bars"].axes
    lines = [line for line in spread_ax.get_lines() if line.get_linestyle() == ":"]
    assert len(lines) == 1 and set(lines[0].get_xdata()) == {4.0}
    assert "uniform" in [text.get_text() for text in spread_ax.texts]


def test_hub_key_is_outlined(explorer):
    for settings in [{"d_k": 8}, {"d_k": 512, "temperature": 0.5, "scaled": False}]:
        explorer.set(**settings)
        values = explorer.values
        mass = reference(values["d_k"], values["temperature"], values["scaled"])[4]
        assert explorer.artists["hub"].get_x() == int(np.argmax(mass)) - 0.5


def words(explorer):
    """The readout as plain text with single spaces."""
    return " ".join(readout_text(explorer).split())


@pytest.mark.parametrize("settings", [{}, {"d_k": 64, "temperature": 0.5}, {"scaled": False}])
def test_readout_names_the_focused_query_and_the_hub_key(explorer, settings):
    explorer.set(**settings)
    values = explorer.values
    _, scores, _, entropy, mass = reference(values["d_k"], values["temperature"], values["scaled"])
    focused, hub = int(np.argmin(entropy)), int(np.argmax(mass))
    tokens, text = EXAMPLE.tokens, words(explorer)
    assert f"their spread (std) is {np.std(scores):.3g} " in text
    assert f"Most focused query: “{tokens[focused]}” (row {focused + 1}" in text
    assert f"e^H = {math.exp(entropy[focused] * math.log(4)):.2f} effective keys of 4" in text
    assert f"the most weight: “{tokens[hub]}” (outlined), column mass {mass[hub]:.2f} " in text


def test_readout_states_the_divisor(explorer):
    explorer.set(d_k=64, temperature=0.5, scaled=True)
    raw = reference(64, 0.5, True)[0]
    text = words(explorer)
    assert "scores / 4 (√64 · T, with T = 0.5)" in text  # √64 · 0.5 = 4

    explorer.set(scaled=False)
    text = words(explorer)
    assert "scores / 0.5 (T = 0.5; no division by √d_k)" in text
    assert f"{np.std(raw / 0.5):.3g}" in text


def test_labels_are_sized_in_points(explorer):
    """The cell labels keep their size in a copy saved at another dpi (``explorer.save``)."""
    figure, cells = explorer.figure, explorer.artists["cells"]
    inch = cells.get_transform().transform([(72.0, 0.0)])[0, 0]  # 72 points, in pixels
    assert inch == pytest.approx(figure.dpi)
    figure.set_dpi(200)
    try:
        assert cells.get_transform().transform([(72.0, 0.0)])[0, 0] == pytest.approx(200)
    finally:
        figure.set_dpi(explorer.dpi)


EXTREMES = list(
    itertools.product(D_K_VALUES, (TEMPERATURES[0], 1.0, TEMPERATURES[-1]), (True, False))
)


@pytest.mark.parametrize("d_k, t, scaled", EXTREMES)
def test_the_row_the_readout_names_is_marked_in_the_heatmap(explorer, d_k, t, scaled):
    """Issue 29: the readout said "row 4, highlighted" and no row of the heatmap was marked."""
    explorer.set(d_k=d_k, temperature=t, scaled=scaled)
    text = words(explorer)
    row = int(text.split("Most focused query:")[1].split("(row ")[1].split(",")[0])
    outline = explorer.artists["focus_row"]
    assert outline.get_visible() and outline.get_linestyle() == "--"
    assert outline.get_y() == row - 1 - 0.5 and outline.get_height() == 1.0
    assert outline.get_width() == len(EXAMPLE.tokens) and outline.get_x() == -0.5
    assert explorer.artists["focus_bar"].shown.tolist() == [i == row - 1 for i in range(4)]
    assert f"(row {row}, dashed outline)" in text
