"""The temperature explorer: numbers against plain math, view updated in place, presets."""

from __future__ import annotations

import math
import re
import warnings

import numpy as np
import pytest
from explorer_checks import clean_sweep

from attnlab.controls import SelectionSlider, Slider
from attnlab.examples import SCORE_ROW
from attnlab.explorers.sweep import control_values
from attnlab.explorers.temperature import (
    PRESETS,
    TEMPERATURES,
    TemperatureExplorer,
    temperature_weights,
)


@pytest.fixture
def explorer():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield TemperatureExplorer()


def by_hand(scores, t):
    """softmax(x / T) written out with Python floats (fine for these moderate inputs)."""
    top = max(scores)
    exps = [math.exp((s - top) / t) for s in scores]
    return [e / sum(exps) for e in exps]


@pytest.mark.parametrize("t", [0.05, 0.3, 1.0, 2.5, 5.0])
@pytest.mark.parametrize("scores", [SCORE_ROW.tolist(), [0.0, 0.0, 0.0, 0.0], [-5, 5, -5, 5]])
def test_weights_match_the_formula(scores, t):
    state = temperature_weights(scores, t)
    np.testing.assert_allclose(state.weights, by_hand(scores, t), rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(state.scaled, np.asarray(scores) / t)
    h = -sum(p * math.log(p) for p in by_hand(scores, t) if p > 0)
    assert state.entropy == pytest.approx(h, abs=1e-12)
    assert state.effective == pytest.approx(math.exp(h))
    assert state.max_weight == pytest.approx(max(by_hand(scores, t)))
    assert state.max_entropy == pytest.approx(math.log(4))


def test_limits_of_temperature():
    assert temperature_weights(SCORE_ROW, 0.05).max_weight == pytest.approx(1.0, abs=1e-12)
    assert temperature_weights(SCORE_ROW, 1e9).effective == pytest.approx(4.0)


def test_starts_at_the_running_example(explorer):
    assert [explorer.controls[f"score_{j + 1}"].value for j in range(4)] == SCORE_ROW.tolist()
    assert explorer.controls["temperature"].value == 1.0
    np.testing.assert_allclose(explorer.state.weights, by_hand(SCORE_ROW.tolist(), 1.0))


def test_temperature_stops_cover_the_range():
    assert TEMPERATURES[0] == 0.05 and TEMPERATURES[-1] == 5.0
    assert list(TEMPERATURES) == sorted(TEMPERATURES) and 1.0 in TEMPERATURES


def test_bars_are_updated_in_place(explorer):
    artists = explorer.artists
    bars, winner = artists["weights"], artists["winner"]
    explorer.set(score_2=4.0, temperature=0.5)
    assert explorer.artists is artists and artists["weights"] is bars
    expected = by_hand([1.0, 4.0, 2.5, -0.1], 0.5)
    np.testing.assert_allclose(bars.values + winner.values, expected)
    np.testing.assert_allclose(artists["scores"].values, [1.0, 4.0, 2.5, -0.1])
    np.testing.assert_allclose(artists["scaled"].values, [2.0, 8.0, 5.0, -0.2])
    assert winner.shown.tolist() == [False, True, False, False]  # the winner is highlighted
    assert (bars.shown == ~winner.shown).all()
    assert winner.get_facecolor() != bars.get_facecolor()


def test_axis_limits_are_fixed(explorer):
    limits = [ax.get_ylim() for ax in explorer.figure.axes]
    for t in (0.05, 5.0):
        explorer.set(temperature=t, score_1=5.0)
        assert [ax.get_ylim() for ax in explorer.figure.axes] == limits


def test_every_control_sweeps_cleanly(explorer):
    for name in explorer.controls:
        for _ in clean_sweep(explorer, name, max_steps=1000):
            assert np.isclose(explorer.state.weights.sum(), 1.0)


def test_extreme_corner_is_stable(explorer):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        explorer.set(score_1=5.0, score_2=-5.0, score_3=-5.0, score_4=5.0, temperature=0.05)
    assert explorer.last_error is None
    np.testing.assert_allclose(explorer.state.weights, [0.5, 0.0, 0.0, 0.5], atol=1e-80)


def test_readout_reports_entropy_and_max_weight(explorer):
    explorer.set(temperature=0.5)
    text = explorer.readout.value
    state = explorer.state
    assert f"{state.max_weight:.3f}" in text and f"{state.entropy:.3f}" in text
    assert "x / T" in text


def buttons(widget):
    """Every Button inside a widget tree."""
    found = []
    for child in getattr(widget, "children", ()):
        if type(child).__name__ == "Button":
            found.append(child)
        found += buttons(child)
    return found


def test_presets_are_buttons_that_set_several_controls(explorer):
    by_label = {b.description: b for b in buttons(explorer.widget)}
    assert set(by_label) == set(PRESETS)
    assert all(type(c).__name__ != "Button" for c in explorer.controls.values())
    by_label["sharp (T = 0.1)"].click()
    assert explorer.controls["temperature"].value == 0.1 and explorer.state.max_weight > 0.99
    explorer.set(score_1=-3.0)
    by_label["flat (T = 5)"].click()
    assert explorer.state.effective > 3.5
    by_label["reset"].click()
    assert explorer.values == TemperatureExplorer().values


def test_one_redraw_per_preset(explorer, monkeypatch):
    explorer.set(score_1=2.0, score_4=3.0, temperature=0.5)
    calls = []
    monkeypatch.setattr(
        explorer.view, "render", lambda readout=None, model=None: calls.append(readout) or False
    )
    reset = next(b for b in buttons(explorer.widget) if b.description == "reset")
    reset.click()
    assert len(calls) == 1 and explorer.values == {**PRESETS["reset"]}
    assert explorer.last_error is None and calls == [explorer.readout.value]


def test_sliders_follow_the_style_rules(explorer):
    for control in explorer.controls.values():
        assert isinstance(control, Slider | SelectionSlider) and control.description
        assert control.label_width == ""  # the label is as wide as its text: never cut
        assert len(control_values(control)) > 2


def _shown_number(text: str) -> float:
    return float(text.replace("\N{MINUS SIGN}", "-"))


@pytest.mark.parametrize("score", [-0.1, -0.02, 0.0, 0.05, 2.0, -5.0, 5.0])
@pytest.mark.parametrize("temperature", [0.05, 1.0, 5.0])
def test_x_over_t_reads_as_the_bar_is_drawn(explorer, score, temperature):
    """Issue 29: x / T = −0.02 read "+0.0"; a non-zero bar now reads with its sign and digits."""
    explorer.set(score_1=score, temperature=temperature)
    drawn = explorer.artists["scaled"].values  # (n,)
    cells = re.findall(
        r"<tr><td>key \d+</td><td>[^<]*</td><td>([^<]*)</td>", explorer.readout.value
    )
    assert len(cells) == drawn.size
    for text, value in zip(cells, explorer.state.scaled, strict=True):
        shown = _shown_number(text)
        assert (shown < 0) == (value < 0) and (shown == 0) == (value == 0), (text, value)
        assert abs(shown - value) <= max(0.05, 0.06 * abs(value)), (text, value)
        assert "-" not in text
