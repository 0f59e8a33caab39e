"""The explorer kit: the choice check, slider makers, the one palette, the weights heatmap."""

import ast
import re
import warnings
from pathlib import Path

import numpy as np
import pytest
from matplotlib.figure import Figure

import attnlab
from attnlab.controls import SelectionSlider, Slider
from attnlab.explorers import all_explorers
from attnlab.explorers.base import (
    TEMPERATURES,
    one_of,
    score_sliders,
    scores_of,
    stops_slider,
    temperature_slider,
)
from attnlab.explorers.sweep import control_values
from attnlab.plots import colours
from attnlab.plots.heatmap import cell_squares, show_weights, unit_squares, weights_heatmap

PACKAGE = Path(attnlab.__file__).parent
KIT = {"base", "number_text", "sweep"}  # what an explorer module may import from its package


# ------------------------------------------------------------------ one_of
@pytest.mark.parametrize(
    "value, options, expected",
    [
        ("b", ("a", "b"), "b"),
        (4.0, (1, 2, 4), 4),  # the option itself comes back, as its own type
        (np.int64(2), (1, 2, 4), 2),
        (1, (0.5, 1.0), 1.0),
        (np.True_, (True, False), True),
        (False, (True, False), False),
    ],
)
def test_one_of_returns_the_option_the_value_equals(value, options, expected):
    found = one_of(value, options, "x")
    assert found == expected
    assert type(found) is type(expected)


@pytest.mark.parametrize(
    "value, options",
    [
        (True, (1, 2, 4)),  # True == 1 in Python, but a bool is not a head count
        (np.False_, (0, 1)),
        (1, (True, False)),
        (3, (1, 2, 4)),
        (None, ("a", "b")),
        ("A", ("a", "b")),
        (np.array([1, 2]), (1, 2)),  # an array never matches (no ambiguous truth value)
        ([1], (1, 2)),
    ],
)
def test_one_of_refuses_anything_else_naming_the_argument_and_the_options(value, options):
    with pytest.raises(ValueError) as caught:
        one_of(value, options, "heads")
    message = str(caught.value)
    assert message.startswith(f"heads must be one of {list(options)}; got ")
    assert message.endswith(repr(value))


def test_one_of_does_not_touch_its_input():
    options = [1, 2, 4]
    one_of(2, options, "x")
    assert options == [1, 2, 4]


# ------------------------------------------------------------------ slider makers
def test_stops_slider_labels_each_stop_and_sets_the_width():
    slider = stops_slider(
        (16, 1024),
        1024,
        "sequence length N",
        label="{:,}".format,
        width="470px",
        label_width="130px",
    )
    assert isinstance(slider, SelectionSlider)
    assert slider.options == (("16", 16), ("1,024", 1024))
    assert slider.value == 1024 and slider.text == "1,024"
    assert slider.description == "sequence length N"
    assert slider.layout.width == "470px" and slider.label_width == "130px"
    assert stops_slider(("a", "b"), "a", "token").layout.width == "330px"


def test_stops_slider_refuses_a_start_that_is_not_a_stop():
    with pytest.raises(ValueError, match="value must be one of the options"):
        stops_slider((1, 2), 3, "d")


def test_temperature_slider_has_every_stop_from_0_05_to_5():
    slider = temperature_slider()
    assert [value for _, value in slider.options] == list(TEMPERATURES)
    assert [label for label, _ in slider.options][:3] == ["0.05", "0.06", "0.08"]
    assert slider.value == 1.0 and (TEMPERATURES[0], TEMPERATURES[-1]) == (0.05, 5.0)
    assert list(TEMPERATURES) == sorted(set(TEMPERATURES))


def test_score_sliders_and_scores_of_round_trip():
    sliders = score_sliders([1.0, -0.5, 2.5], limits=(-3.0, 3.0))
    assert list(sliders) == ["score_1", "score_2", "score_3"]
    assert all(isinstance(s, Slider) and (s.min, s.max) == (-3.0, 3.0) for s in sliders.values())
    assert [s.description for s in sliders.values()] == [
        "score of key 1",
        "score of key 2",
        "score of key 3",
    ]
    values = {"temperature": 2.0} | {key: s.value for key, s in reversed(sliders.items())}
    assert scores_of(values) == [1.0, -0.5, 2.5]


# ------------------------------------------------------------------ one palette
def test_okabe_ito_order_is_the_palette_by_name():
    p = colours.PALETTE
    assert colours.OKABE_ITO == (
        p["blue"],
        p["green"],
        p["vermillion"],
        p["purple"],
        p["orange"],
        p["sky"],
        p["yellow"],
    )
    assert len(set(colours.PALETTE.values())) == len(colours.PALETTE)
    assert all(re.fullmatch(r"#[0-9A-F]{6}", c) for c in colours.PALETTE.values())


def test_the_palette_is_written_down_once():
    """No other module of the package spells out one of the palette's colours."""
    palette = {c.lower() for c in colours.PALETTE.values()}
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "colours.py":
            continue
        for line_number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            spelled = {c.lower() for c in re.findall(r"#[0-9A-Fa-f]{6}\b", line)}
            if spelled & palette:
                found.append(f"{path.relative_to(PACKAGE)}:{line_number}: {line.strip()}")
    assert not found, "\n".join(found)


def test_plot_modules_hand_on_the_one_palette():
    from attnlab.plots import distributions, vectors, weights

    assert weights.PALETTE is colours.PALETTE
    assert vectors.OKABE_ITO is colours.OKABE_ITO
    assert distributions.EXPONENT_COLOURS[0.5] == colours.PALETTE["blue"]


# ------------------------------------------------------------------ explorers use the kit only
def explorer_modules():
    return sorted(p for p in (PACKAGE / "explorers").glob("*.py") if p.stem not in KIT)


@pytest.mark.parametrize("path", explorer_modules(), ids=lambda p: p.stem)
def test_an_explorer_imports_no_other_explorer(path):
    imported = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            imported.add(node.module)
        elif isinstance(node, ast.Import):
            imported.update(alias.name for alias in node.names)
    siblings = {m.rsplit(".", 1)[1] for m in imported if m.startswith("attnlab.explorers.")}
    assert siblings <= KIT, f"{path.stem} imports {sorted(siblings - KIT)}"


def test_every_explorer_module_is_checked():
    modules = {cls.__module__.rsplit(".", 1)[1] for cls in all_explorers()}
    assert modules <= {p.stem for p in explorer_modules()}
    assert len(modules) >= 10


# ------------------------------------------------------------------ the weights heatmap
def test_weights_heatmap_without_ax_makes_its_own_figure_and_returns_its_artists():
    import matplotlib.pyplot as plt

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        drawn = weights_heatmap(["The", "cat", "sat"])
    try:
        assert set(drawn) == {"image", "squares", "cells"}
        ax = drawn["image"].axes
        assert drawn["squares"].axes is ax and drawn["cells"].axes is ax
        assert [t.get_text() for t in ax.get_xticklabels()] == ["The", "cat", "sat"]
        assert [t.get_text() for t in ax.get_yticklabels()] == ["The", "cat", "sat"]
        assert (ax.get_xlabel(), ax.get_ylabel()) == ("key", "query")
        assert len(ax.figure.axes) == 2  # the heatmap and its colour bar
        assert ax.figure.axes[1].get_ylabel() == "weight"
        assert drawn["image"].get_clim() == (0.0, 1.0)
        assert drawn["image"].cmap.name.startswith(colours.WEIGHT_CMAP)
        assert not drawn["image"].get_visible()
        np.testing.assert_array_equal(
            drawn["squares"].get_paths()[1].vertices[:4], unit_squares(3)[1]
        )
        offsets = drawn["cells"].get_offsets()
        np.testing.assert_array_equal(offsets[:4], [[0, 0], [1, 0], [2, 0], [0, 1]])
    finally:
        plt.close(drawn["image"].axes.figure)


def test_weights_heatmap_options():
    fig = Figure()
    drawn = weights_heatmap("ab", ax=fig.subplots(), colorbar=False, squares=False, cell_size=12.0)
    assert set(drawn) == {"image", "cells"}
    assert drawn["image"].get_visible() and len(fig.axes) == 1
    assert drawn["cells"].size == 12.0
    with pytest.raises(ValueError, match="^tokens"):
        weights_heatmap([], ax=Figure().subplots())


def test_show_weights_changes_the_artists_in_place():
    drawn = weights_heatmap(["a", "b"], ax=Figure().subplots())
    before = {key: id(artist) for key, artist in drawn.items()}
    weights = np.array([[1.0, 0.0], [np.nan, 0.004]])  # (2, 2)
    copy = weights.copy()
    show_weights(drawn, weights, fmt="{:.1f}", exact_zero=True)
    np.testing.assert_array_equal(weights, copy)  # not mutated
    assert {key: id(artist) for key, artist in drawn.items()} == before
    assert drawn["cells"].texts == ["1.0", "0", "nan", "0.0"]
    shown = drawn["squares"].get_array()
    assert shown.mask.tolist() == [False, False, True, False]  # NaN: the "bad" grey
    np.testing.assert_array_equal(drawn["image"].get_array(), np.ma.masked_invalid(weights))
    faces = drawn["cells"].get_facecolor()  # (4, 4) RGBA
    assert faces[2].tolist() == [0.0, 0.0, 0.0, 1.0]  # "nan" is written in black
    assert faces[0].tolist() == [0.0, 0.0, 0.0, 1.0]  # black on viridis' yellow 1.0
    assert faces[1].tolist() == [1.0, 1.0, 1.0, 1.0]  # white on its dark purple 0
    show_weights(drawn, [[0.0, 1.0], [0.5, 0.5]])
    assert drawn["cells"].texts == ["0.00", "1.00", "0.50", "0.50"]  # exact zero off


def test_show_weights_refuses_another_shape():
    drawn = weights_heatmap(["a", "b"], ax=Figure().subplots())
    with pytest.raises(
        ValueError,
        match=r"^weights must keep the drawn shape \(2, 2\); "
        r"got shape \(1, 4\)",
    ):
        show_weights(drawn, np.ones((1, 4)) / 4)


def test_cell_squares_covers_the_false_cells_only():
    path = cell_squares(np.array([[True, False], [False, False]]))
    corners = path.vertices.reshape(-1, 5, 2)[:, :4]  # (m, 4, 2)
    np.testing.assert_array_equal(corners, unit_squares(2)[1:])
    assert len(cell_squares(np.ones((3, 3), dtype=bool)).vertices) == 0


def test_bar_end_labels_sit_inside_long_bars_and_beyond_short_ones():
    from attnlab.plots.outline_labels import OutlineLabels

    labels = OutlineLabels(Figure().subplots(), np.zeros((3, 2)), size=9)
    labels.set_bar_ends(
        [1.0, 0.2, 0.0],
        ["1", "0.2", "nan"],
        inside=[True, False, False],
        pad=0.05,
        colors=["red", "red", "black"],
    )
    np.testing.assert_allclose(labels.get_offsets(), [[0.95, 0], [0.25, 1], [0.05, 2]])
    faces = labels.get_facecolor()  # (3, 4) RGBA
    assert faces.tolist() == [[1, 1, 1, 1], [1, 0, 0, 1], [0, 0, 0, 1]]  # white inside
    assert labels.texts == ["1", "0.2", "nan"]
    ends = [outline.vertices[:, 0] for outline in labels.get_paths()]
    assert np.mean(ends[0]) < 0 < np.mean(ends[1])  # right-aligned inside, left beyond
    with pytest.raises(ValueError, match="one entry per label"):
        labels.set_bar_ends([1.0], ["1"], inside=[True], pad=0.05)


@pytest.mark.parametrize("cls", all_explorers(), ids=lambda cls: cls.name)
def test_a_step_sends_its_readout_with_its_pixels(cls, monkeypatch):
    """The frame message carries the readout it goes with, so the page shows both in one task."""
    explorer = cls()
    sent = []
    monkeypatch.setattr(
        explorer.view.widget, "send", lambda content, buffers=None: sent.append(content)
    )
    name, control = next(iter(explorer.controls.items()))
    for value in control_values(control, max_steps=6):
        if value == control.value:
            continue
        sent.clear()
        control.value = value
        assert explorer.last_error is None, explorer.last_error
        tiles = [m for m in sent if m.get("kind") == "tiles"]
        if tiles:  # a step that changed pixels: one message, with the readout of that step
            assert len(tiles) == 1, (name, value)
            assert (
                tiles[0]["readout"] == explorer.readout.value == explorer.describe(explorer.state)
            ), (name, value)
            return
    pytest.fail(f"no step of {name!r} changed the figure")


@pytest.mark.parametrize("cls", all_explorers(), ids=lambda cls: cls.name)
def test_a_handed_over_readout_travels_once_per_step(cls, monkeypatch):
    """Once the page says it sets the Readout model from the frames (``readout-handoff``), a
    step that changes pixels sends one message (the frame, carrying the readout and its model
    id) and no Readout state update; the kernel's ``readout.value`` is still the step's. A step
    with no new pixels, or before the page said so, sends the Readout's state as before."""
    explorer = cls()
    canvas, readout = explorer.view.widget, explorer.readout
    frames, states = [], []
    monkeypatch.setattr(canvas, "send", lambda content, buffers=None: frames.append(content))
    monkeypatch.setattr(readout, "_send", lambda msg, buffers=None: states.append(msg["state"]))
    # ipywidgets sends state only through a comm with a kernel; once ipykernel's kernel module
    # has been imported in this process (other tests do), a widget's comm has none outside a
    # running kernel, and no state would be sent at all (the fresh-clone CI failed so).
    monkeypatch.setattr(readout.comm, "kernel", object(), raising=False)
    name, control = next(iter(explorer.controls.items()))
    values = [v for v in control_values(control, max_steps=8) if v != control.value]
    handed = False
    for value in values:
        frames.clear(), states.clear()
        before = readout.value
        control.value = value
        assert explorer.last_error is None, explorer.last_error
        step_readout = explorer.describe(explorer.state)
        assert readout.value == step_readout, (name, value)
        tiles = [m for m in frames if m.get("kind") == "tiles"]
        if not tiles:  # nothing drawn changed: the readout goes as state, if it changed
            assert states == ([{"value": step_readout}] if step_readout != before else [])
            continue
        assert tiles[-1]["readout"] == step_readout
        assert tiles[-1]["readout_model"] == readout.model_id
        if not handed:  # the page has not said it hands readouts over: the state goes too
            assert states == ([{"value": step_readout}] if step_readout != before else [])
            canvas._on_view_message(
                canvas, {"kind": "readout-handoff", "model": readout.model_id}, []
            )
            handed = True
        else:
            assert states == [], (name, value, states)
            return
    pytest.fail(f"fewer than two steps of {name!r} changed the figure")
