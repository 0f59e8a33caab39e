"""Every explorer, found automatically: swept over every control as a learner would."""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pytest
from explorer_checks import clean_sweep

from attnlab.explorers import Explorer, all_explorers
from attnlab.explorers.sweep import control_values

EXPLORERS = all_explorers()


def test_explorers_are_found():
    if not EXPLORERS:
        pytest.skip("no explorers yet")
    assert all(issubclass(cls, Explorer) for cls in EXPLORERS)


@pytest.fixture(params=EXPLORERS, ids=lambda cls: cls.name)
def explorer(request):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield request.param()


def test_dom_contract(explorer):
    classes = explorer.widget._dom_classes
    assert "attnlab-explorer" in classes and f"attnlab-explorer-{explorer.name}" in classes
    width, height = explorer.view.figure.canvas.get_width_height()
    assert explorer.view.widget.pixels.shape == (height, width, 4)
    assert explorer.view.widget.messages_sent >= 1
    assert explorer.last_error is None and explorer.error.value == ""
    bundle = explorer._repr_mimebundle_()
    assert explorer.view.widget.initial_png[:4] == b"\x89PNG"  # painted before the kernel answers
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert "not live" in bundle["text/plain"]


def test_state_is_a_frozen_dataclass_of_its_module(explorer):
    state = explorer.state
    assert dataclasses.is_dataclass(state) and type(state).__module__ == type(explorer).__module__
    first = dataclasses.fields(state)[0].name
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(state, first, None)  # a view cannot change what compute returned


def test_every_control_sweeps_cleanly(explorer):
    artists = explorer.artists
    for name in explorer.controls:
        list(clean_sweep(explorer, name))  # asserts at every step
        assert explorer.artists is artists, "the view must be updated in place, not rebuilt"


def test_each_control_changes_the_picture(explorer):
    for name, control in explorer.controls.items():
        values = control_values(control)
        if len(values) < 2:
            continue
        explorer.set(**{name: values[0]})
        before = explorer.view.frame().copy()
        explorer.set(**{name: values[-1]})
        after = explorer.view.frame()
        assert not np.array_equal(before, after), f"moving {name} did not change the figure"


def test_errors_are_shown_not_swallowed(explorer, monkeypatch):
    def broken(**values):
        raise ZeroDivisionError("deliberate")

    monkeypatch.setattr(explorer, "compute", broken)
    name, control = next(iter(explorer.controls.items()))
    values = control_values(control)
    control.value = values[-1] if control.value != values[-1] else values[0]
    assert isinstance(explorer.last_error, ZeroDivisionError)
    assert "deliberate" in explorer.error.value
    monkeypatch.undo()
    explorer.update()
    assert explorer.last_error is None and explorer.error.value == ""


def test_replot_matches_the_live_frame_size(explorer):
    png = explorer.replot()
    assert png[:4] == b"\x89PNG"


def test_base_class_is_abstract():
    with pytest.raises(NotImplementedError):
        Explorer()


def test_controls_do_not_echo_their_moves_back(explorer, monkeypatch):
    """A browser move of any control gets no echo_update: the pixels are the first answer."""
    for name, control in explorer.controls.items():
        sent = []
        monkeypatch.setattr(control, "_send", lambda msg, buffers=None, sent=sent: sent.append(msg))
        values = control_values(control)
        state = {"index": 1} if control.has_trait("index") else {"value": values[-1]}
        control.set_state(state)
        assert not [m for m in sent if m.get("method") == "echo_update"], name


MATHTEXT_EXPLORERS = {"mixture"}  # w_A has no Unicode subscript; lesson 5 pays the parser


def test_explorers_draw_no_mathtext_but_the_mixture(explorer, monkeypatch):
    """The first mathtext string builds matplotlib's parser (0.15 s): lessons 2, 3 and 9 paid it
    before their explorer's first picture, for an axis label and log-axis decades alone.
    Those are Unicode now (``attnlab.plots.log_ticks``); this keeps a new label from
    bringing the cost back unnoticed."""
    import matplotlib.mathtext

    parsed = []
    original = matplotlib.mathtext.MathTextParser._parse_cached

    def recording(parser, text, *args):
        parsed.append(text)
        return original(parser, text, *args)

    monkeypatch.setattr(matplotlib.mathtext.MathTextParser, "_parse_cached", recording)
    explorer.view.invalidate()
    explorer.update()
    explorer.view.figure.canvas.draw()
    if explorer.name in MATHTEXT_EXPLORERS:
        assert parsed, f"{explorer.name} draws no mathtext: take it off MATHTEXT_EXPLORERS"
    else:
        assert not parsed, f"{explorer.name} draws mathtext (builds the parser): {parsed}"
