"""The accessible control kit (attnlab.controls): values, rounding, validation, events."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from attnlab import controls as kit
from attnlab.controls import (
    Button,
    Checkbox,
    Dropdown,
    IntSlider,
    Readout,
    SelectionSlider,
    Slider,
    ToggleButtons,
    snap,
)
from attnlab.explorers import all_explorers

JS = Path(kit.__file__).with_name("controls.js").read_text()


def score(**kwargs) -> Slider:
    """A score slider as the explorers make them: -5..5 in steps of 0.1."""
    return Slider(
        **{
            "value": 1.0,
            "min": -5.0,
            "max": 5.0,
            "step": 0.1,
            "description": "score of key 1",
            **kwargs,
        }
    )


def changes(control) -> list:
    """A list that collects the new value of every ``value`` change of ``control``."""
    seen = []
    control.observe(lambda change: seen.append(change["new"]), names="value")
    return seen


# --------------------------------------------------------------------------- rounding


@pytest.mark.parametrize("k", range(0, 101))
def test_every_step_of_a_score_slider_prints_without_float_noise(k):
    slider = score()
    slider.value = -5.0 + k * 0.1  # float arithmetic: 0.7000000000000002 and the like
    assert repr(slider.value) == f"{(k - 50) / 10:.1f}"
    assert slider.text == f"{(k - 50) / 10:.1f}".replace("-", "\N{MINUS SIGN}")


@given(st.floats(min_value=-5.0, max_value=5.0))
def test_snap_lands_on_the_grid_and_stays_in_range(value):
    snapped = snap(value, -5.0, 5.0, 0.1)
    assert -5.0 <= snapped <= 5.0
    assert abs(snapped - value) <= 0.05 + 1e-9
    assert snapped == round(snapped, 1) and repr(snapped) == f"{snapped:.1f}".replace("-0.0", "0.0")


def test_a_value_between_steps_goes_to_the_nearest_step():
    slider = Slider(value=1.0, min=0.0, max=2.0, step=0.05, description="query length |q|")
    slider.value = 1.234
    assert slider.value == 1.25 and slider.text == "1.25"
    slider.value = 0.0001
    assert slider.value == 0.0 and slider.text == "0.00"


def test_the_start_may_be_off_the_grid_but_later_values_snap():
    slider = score(value=1 / np.sqrt(2))
    assert slider.value == pytest.approx(0.7071067811865, abs=1e-12)
    assert slider.text == "0.7"
    slider.value = 1 / np.sqrt(2)
    assert slider.value == 0.7


def test_int_slider_values_are_ints():
    slider = IntSlider(value=4, min=0, max=6, description="real length")
    slider.value = 5.4
    assert slider.value == 5 and type(slider.value) is int and slider.text == "5"
    assert slider.grid() == [0, 1, 2, 3, 4, 5, 6]


def test_grid_is_subsampled_with_both_ends():
    slider = Slider(value=30.0, min=0.0, max=359.0, step=1.0, description="query angle")
    assert len(slider.grid()) == 200 and slider.grid()[0] == 0.0 and slider.grid()[-1] == 359.0
    assert len(slider.grid(max_steps=1000)) == 360


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "kwargs, names",
    [
        ({"min": 5.0, "max": -5.0}, "min must be below max"),
        ({"step": 0.0}, "step must be > 0"),
        ({"step": "0.1"}, "step must be a number"),
        ({"max": float("inf")}, "max must be finite"),
        ({"value": 7.0}, "value must be between -5 and 5 for 'score of key 1'; got 7.0"),
        ({"value": True}, "value must be a number; got True"),
        ({"description": ""}, "description must be a non-empty string"),
    ],
)
def test_bad_slider_arguments_raise_value_errors_naming_them(kwargs, names):
    with pytest.raises(ValueError, match=re.escape(names)):
        score(**kwargs)


def test_bad_values_set_from_code_raise_and_leave_the_control_as_it_was():
    slider = score()
    seen = changes(slider)
    for bad in (9.0, float("nan"), "1.0", None):
        with pytest.raises(ValueError, match="value must be"):
            slider.value = bad
    assert slider.value == 1.0 and seen == []


def test_bad_choices_raise_value_errors_naming_the_argument():
    with pytest.raises(ValueError, match="options must not be empty"):
        Dropdown(options=[], description="dtype")
    with pytest.raises(ValueError, match="options must have distinct labels"):
        Dropdown(options=[("a", 1), ("a", 2)], description="dtype")
    with pytest.raises(ValueError, match=re.escape("value must be one of the options of 'dtype'")):
        Dropdown(options=["float64", "float32"], value="float8", description="dtype")
    choice = SelectionSlider(options=[1, 2, 4], value=2, description="d_k")
    with pytest.raises(ValueError, match=re.escape("index must be in 0..2 for 'd_k'; got 3")):
        choice.index = 3
    with pytest.raises(ValueError, match="value must be one of the options"):
        choice.value = 3
    assert (choice.index, choice.value) == (1, 2)
    with pytest.raises(ValueError, match="value must be True or False"):
        Checkbox(value=1, description="scaled")
    with pytest.raises(ValueError, match="callback must be callable"):
        Button(description="reset").on_click("reset")


def test_a_bool_option_is_never_matched_by_a_number():
    toggle = ToggleButtons(
        options=[("on", True), ("off", False)], value=False, description="scaling"
    )
    with pytest.raises(ValueError, match="value must be one of the options"):
        toggle.value = 1
    numbers = SelectionSlider(options=[("0", 0), ("1", 1)], value=1, description="n")
    with pytest.raises(ValueError, match="value must be one of the options"):
        numbers.value = True


# --------------------------------------------------------------------------- value <-> index


@pytest.mark.parametrize("cls", [SelectionSlider, Dropdown, ToggleButtons])
def test_value_and_index_round_trip(cls):
    options = [("0.05", 0.05), ("1", 1.0), ("5", 5.0)]
    choice = cls(options=options, value=1.0, description="temperature T")
    assert choice.options == tuple(options) and choice.labels == ["0.05", "1", "5"]
    for index, (label, value) in enumerate(options):
        choice.index = index  # what the page does
        assert choice.value == value and choice.text == label
        choice.value = value  # what code does
        assert choice.index == index
    choice.value = 5  # an equal number of another type picks the option itself
    assert choice.value == 5.0 and type(choice.value) is float and choice.index == 2


@pytest.mark.parametrize("via", ["value", "index", "page"])
def test_observe_fires_once_per_change_whoever_makes_it(via):
    choice = SelectionSlider(options=[1, 2, 4, 8], value=2, description="head size d_k")
    seen = changes(choice)
    if via == "value":
        choice.value = 8
    elif via == "index":
        choice.index = 3
    else:
        choice.set_state({"index": 3})  # a move in the page, as the comm delivers it
    assert seen == [8]
    choice.value = 8  # no change: no event
    assert seen == [8]


def test_slider_observe_fires_once_per_change_from_code_and_from_the_page():
    slider = score()
    seen = changes(slider)
    slider.value = 0.7000000000000002
    slider.value = 0.7  # the same after rounding: no second event
    slider.set_state({"value": 0.8})  # a move in the page
    assert seen == [0.7, 0.8]


def test_checkbox_and_button_events():
    box = Checkbox(value=True, description="divide by √d_k")
    seen = changes(box)
    box.set_state({"value": False})
    assert seen == [False] and box.grid() == [True, False]
    pressed = []
    button = Button(description="reset")
    button.on_click(lambda b: pressed.append(b.description))
    button._on_page_message(button, {"event": "click"}, [])  # a click in the page
    button._on_page_message(button, {"event": "hover"}, [])  # anything else is ignored
    button.click()
    assert pressed == ["reset", "reset"]


def test_page_moves_are_not_echoed_back(monkeypatch):
    """A move in the page gets no echo_update: the explorer's pixels are the first answer."""
    for control, state in [
        (score(), {"value": 0.5}),
        (SelectionSlider(options=[1, 2], value=1, description="d_k"), {"index": 1}),
        (Checkbox(value=True, description="scaled"), {"value": False}),
    ]:
        sent = []
        monkeypatch.setattr(control, "_send", lambda msg, buffers=None, sent=sent: sent.append(msg))
        control.set_state(state)
        assert not [m for m in sent if m.get("method") == "echo_update"], control


# --------------------------------------------------------------------------- the page side


def test_every_control_kind_has_a_renderer_with_an_accessible_name():
    classes = (Slider, SelectionSlider, Dropdown, ToggleButtons, Checkbox, Button, Readout)
    kinds = {cls.kind.default_value for cls in classes}
    for kind in kinds:
        assert re.search(rf'^\s*"?{re.escape(kind)}"?: render\w+,$', JS, re.M), kind
    assert 'make("label", { for: id' in JS and 'make("legend"' in JS  # names for inputs, groups
    # Lumino ignores keys on an element with this attribute: it is put on the focused control
    # for one key press the control keeps, from a capturing window listener that runs before
    # Lumino's, never left on an element (then Ctrl+S, Shift+Enter and Escape died there);
    # tests/browser/test_learner_keys.py presses the keys in both front ends.
    assert 'const SUPPRESS_ATTRIBUTE = "data-lm-suppress-shortcuts"' in JS
    assert JS.count("setAttribute(SUPPRESS_ATTRIBUTE") == JS.count("removeAttribute(SUPPRESS_") == 1
    assert 'window.addEventListener("keydown", onKeyDown, true)' in JS
    for tag in ("input", "select", "button"):
        assert f'make("{tag}"' not in JS and f'focusable("{tag}"' in JS, tag
    assert 'role: "status", "aria-live": "polite"' in JS
    assert 'setAttribute("aria-valuetext"' in JS and ".toFixed(" in JS


def test_focus_ring_is_at_least_two_pixels():
    rings = re.findall(r"outline:\s*(\d+)px solid", kit.CSS)
    assert rings and all(int(width) >= 2 for width in rings)
    assert ":focus-visible" in kit.CSS


def test_readout_is_a_widget_with_the_readout_class():
    readout = Readout("<b>x</b>").add_class("attnlab-readout")
    assert readout.value == "<b>x</b>" and "attnlab-readout" in readout._dom_classes


@pytest.mark.parametrize("cls", all_explorers(), ids=lambda cls: cls.name)
def test_every_explorer_uses_the_kit_with_named_controls(cls):
    explorer = cls()
    for name, control in explorer.controls.items():
        assert isinstance(control, kit.Control), name
        assert control.description.strip(), name
        assert (
            control.trait_metadata(
                "value" if isinstance(control, Slider | Checkbox) else "index", "echo_update"
            )
            is False
        ), name
    assert isinstance(explorer.readout, Readout)
    assert "attnlab-readout" in explorer.readout._dom_classes


# ------------------------------------------------------------------ one minus sign (issue 29)


def test_a_negative_slider_value_reads_with_the_minus_sign_the_readouts_use():
    """Readouts write −0.50 (U+2212, as matplotlib's ticks); the slider beside them did "-0.50"."""
    slider = score()
    slider.value = -0.5
    assert slider.text == "\N{MINUS SIGN}0.5" and "-" not in slider.text
    slider.value = 0.0
    assert slider.text == "0.0"


@pytest.mark.skipif(shutil.which("node") is None, reason="needs Node.js")
def test_the_page_writes_slider_values_as_python_does():
    """controls.js's numberText (the readout and aria-valuetext) against controls._text_of."""
    match = re.search(r"^function numberText\(.*?^}$", JS, re.M | re.S)
    assert match, "controls.js has no numberText function"
    # values on their step's grid, as a slider holds them (off-grid halves round differently)
    cases = [(-5.0, 0), (-5.0, 1), (-0.5, 1), (-0.04, 2), (-0.0, 1), (0.0, 2), (0.04, 2)]
    cases += [(0.7, 1), (2.25, 2), (64.0, 0), (-0.05, 2), (-1e-12, 2)]
    script = (
        match.group(0)
        + f"\nconsole.log(JSON.stringify({json.dumps(cases)}.map(([v, d]) => numberText(v, d))));"
    )
    out = subprocess.run(["node", "-e", script], capture_output=True, text=True, check=True).stdout
    assert json.loads(out) == [kit._text_of(v, d) for v, d in cases]
