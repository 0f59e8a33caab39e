"""What issue 16 found hard to read in the explorers, checked in the kernel.

The browser suite (tests/browser/test_legibility.py) checks sizes on a 1366 × 768 screen;
these check the texts and the figures' contents: no "-0.0", one minus sign, negative
factors in parentheses, zero weights labelled, no plain-underscore subscripts, numbers
clear of lines, legends clear of bars, and no text too small to read.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
from explorer_checks import readout_text

from attnlab.explorers import all_explorers
from attnlab.explorers.mixture import MixtureExplorer, number_heights
from attnlab.explorers.overflow import OverflowExplorer
from attnlab.explorers.temperature import TemperatureExplorer

NEGATIVE_ZERO = re.compile(r"[-−]0(\.0*)?(?![.\d])")


def quiet(explorer_class, **initial):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return explorer_class(**initial)


# ----------------------------------------------------------------------- lesson 3
def test_temperature_table_never_shows_negative_zero():
    """x / T of a small negative score would round to 0.0: it keeps its sign and digits.

    The table never shows −0.0 or -0.0, and never +0.0 for a value that is not zero (the
    bar beside it is not empty); an exact zero reads +0.0.
    """
    explorer = quiet(TemperatureExplorer)
    explorer.set(score_1=-0.1, temperature=5.0)  # x / T = −0.02 → 0.0 at one decimal
    text = readout_text(explorer)
    assert not NEGATIVE_ZERO.search(text), text
    assert "−0.02" in text and "+0.0 " not in text and "-" not in text, text
    explorer.set(score_1=0.0)
    assert "+0.0" in readout_text(explorer)


def test_overflow_table_has_one_cell_per_weight():
    """When "overflow" replaces a number the columns stay aligned: a cell for every weight."""
    explorer = quiet(OverflowExplorer)
    explorer.set(scale=1000.0)  # float16 and float32 overflow in the naive formula
    rows = re.findall(r"<tr>(.*?)</tr>", explorer.readout.value)
    n = explorer.state.scores.size
    header, keys, body = rows[0], rows[1], rows[2:]
    assert header.count(f'colspan="{n}"') == 2
    assert keys.count("<th>key ") == 2 * n, keys  # each weight column names its key
    assert body
    for row in body:
        assert row.count("<td") == 3 + 2 * n, row
    assert "overflow" in explorer.readout.value
    assert "-" not in readout_text(explorer)  # the score −100 is written with a true minus


# ----------------------------------------------------------------------- lesson 5
def test_mixture_subscripts_are_mathtext_not_underscores():
    explorer = quiet(MixtureExplorer)
    texts = [t.get_text() for t in explorer.figure.findobj(lambda a: hasattr(a, "get_text"))]
    plain = [
        t
        for t in texts
        if re.search(r"\b[wv]_", t.replace("$", " $ ")) and not re.search(r"\$[^$]*[wv]_[^$]*\$", t)
    ]
    assert not plain, plain
    assert any(r"$w_\mathrm{A}$" in t for t in texts)


def test_mixture_numbers_stay_off_the_one_third_line():
    line = 1 / 3
    for w in np.linspace(0, 1, 201):
        heights = number_heights([w, (1 - w) / 2, (1 - w) / 2])
        assert np.all(np.abs(heights - line) >= 0.045 - 1e-12), (w, heights)
    explorer = quiet(MixtureExplorer)
    explorer.set(score_1=0.0, score_2=0.0, score_3=-0.3)  # two weights near 0.3
    offsets = explorer.artists["numbers"].get_offsets()[:, 1]
    assert np.all(np.abs(offsets - line) >= 0.045 - 1e-12), offsets


@pytest.mark.parametrize("w", [0.0, 0.2, 0.9])
def test_mixture_numbers_sit_just_above_bars_away_from_the_line(w):
    (height,) = number_heights([w, 0.5, 0.5])[:1]
    assert height == pytest.approx(w + 0.05)


# ----------------------------------------------------------------------- every explorer
MIN_FONT_PT = 9.0  # 12.5 px at the explorers' 100 dpi: no label smaller on screen
NOTEBOOK_WIDTH_PX = 934  # JupyterLab's output area at 1366 × 768 with the file browser open


def figure_font_sizes(figure):
    """(size in points, what) of every visible non-blank text drawn on ``figure``."""
    from matplotlib.text import Text

    from attnlab.plots.outline_labels import OutlineLabels

    figure.canvas.draw()  # lays out tick labels and legends
    found = []
    for artist in figure.findobj(lambda a: isinstance(a, Text | OutlineLabels)):
        if not artist.get_visible():
            continue
        if isinstance(artist, OutlineLabels):
            if any(t.strip() for t in artist.texts):
                found.append((artist.size, f"labels {artist.texts[:3]}"))
        elif artist.get_text().strip() and _on_figure(artist):
            found.append((artist.get_fontsize(), repr(artist.get_text())))
    return found


def _on_figure(text) -> bool:
    """Whether a Text lies (at least partly) inside the figure: tick labels off the axes don't."""
    box = text.get_window_extent()
    width, height = text.figure.canvas.get_width_height()
    return box.x1 > 0 and box.y1 > 0 and box.x0 < width and box.y0 < height


@pytest.fixture(scope="module", params=all_explorers(), ids=lambda cls: cls.__name__)
def any_explorer(request):
    return quiet(request.param)


def test_no_text_below_the_minimum_size(any_explorer):
    small = [
        (size, what) for size, what in figure_font_sizes(any_explorer.figure) if size < MIN_FONT_PT
    ]
    assert not small, f"texts under {MIN_FONT_PT} pt: {small}"


def test_figure_fits_the_notebook_width_unsqueezed(any_explorer):
    width, _ = any_explorer.figure.canvas.get_width_height()
    assert width <= NOTEBOOK_WIDTH_PX


# ----------------------------------------------------------------------- legends clear
def legend_box(ax):
    """The drawn legend's box in display pixels."""
    ax.figure.canvas.draw()
    return ax.get_legend().get_window_extent()


def crosses(artist, box) -> bool:
    """Whether ``artist`` (a patch or line) is drawn through ``box`` (display pixels)."""
    path = artist.get_transform().transform_path(artist.get_path())
    return path.intersects_bbox(box, filled=not hasattr(artist, "get_xydata"))


def test_scaling_plots_never_run_through_their_legends():
    """Issue 16: at extreme settings the histogram ran through the legend."""
    from attnlab.explorers.scaling import ScalingExplorer

    explorer = quiet(ScalingExplorer)
    a = explorer.artists
    moving = {
        "raw_hist": a["raw_hist"],
        "score_hist": a["score_hist"],
        "row": a["row"],
        "jacobian_curve": a["jacobian_curve"],
    }
    boxes = {name: legend_box(artist.axes) for name, artist in moving.items()}
    crossed = []
    for d_k in [1, 2, 4, 16, 64, 256, 1024]:
        for scaled, exponent in [(False, 0.5), (True, 1 / 3), (True, 0.5), (True, 2 / 3)]:
            explorer.set(d_k=d_k, scaled=scaled, exponent=exponent)
            crossed += [
                (name, d_k, scaled, exponent)
                for name, artist in moving.items()
                if crosses(artist, boxes[name])
            ]
    assert not crossed


def test_bug_lab_bars_stay_below_the_legend_and_zero_cells_say_0():
    """Issue 16: bars covered the legend; a cell whose weight is exactly 0 was blank."""
    from attnlab.explorers.bug_lab import BugLabExplorer

    explorer = quiet(BugLabExplorer)
    box = legend_box(explorer.artists["right_bars"].axes)
    for query in ["The", "cat", "sat", "down"]:
        explorer.set(query=query)
        bars = [explorer.artists["right_bars"], explorer.artists["wrong_bars"]]  # 4 bars each
        assert not any(crosses(side, box) for side in bars), query
    explorer.set(query="The")
    for side in ("right", "wrong"):
        weights = getattr(explorer.state, side)  # (n, n): the causal future is exactly 0
        texts = np.array(explorer.artists[f"{side}_cells"].texts).reshape(weights.shape)
        assert (weights == 0).any()
        assert set(texts[weights == 0]) == {"0"}
        assert "" not in set(texts.ravel())


# ----------------------------------------------------------------------- lesson 6
def test_mask_lab_marks_pad_keys_the_mask_lets_through():
    """Issue 16: at real length 6 the <pad> labels stayed as if nothing were odd."""
    from matplotlib.colors import same_color

    from attnlab.explorers.masking import BAD_COLOUR, MaskExplorer

    explorer = quiet(MaskExplorer)  # causal + padding, real length 4: pads hidden
    keys = explorer.figure.axes[0].get_xticklabels()
    assert [label.get_text() for label in keys][-2:] == ["<pad>", "<pad>"]
    assert not any(same_color(label.get_color(), BAD_COLOUR) for label in keys)
    assert "&lt;pad&gt;" not in explorer.readout.value
    explorer.set(length=6)
    marked = [same_color(label.get_color(), BAD_COLOUR) for label in keys]
    assert marked == [False] * 4 + [True, True]
    text = readout_text(explorer)
    assert "keys 5–6 hold &lt;pad&gt;" in text and "real length 6 counts 2 of them as words" in text
    explorer.set(length=5)
    assert [same_color(label.get_color(), BAD_COLOUR) for label in keys][-2:] == [True, False]
    explorer.set(length=4)
    assert not any(same_color(label.get_color(), BAD_COLOUR) for label in keys)


def test_mask_lab_pad_marks_follow_a_dark_page():
    """Marking and unmarking a <pad> label on a dark page leaves it in the dark theme's colour."""
    from matplotlib.colors import same_color

    from attnlab.explorers.masking import BAD_COLOUR, MaskExplorer

    explorer = quiet(MaskExplorer)
    keys = explorer.figure.axes[0].get_xticklabels()
    explorer.view.set_dark(True)
    dark_text = keys[0].get_color()
    assert not same_color(dark_text, "black")
    explorer.set(length=6)
    assert same_color(keys[5].get_color(), BAD_COLOUR)
    explorer.set(length=4)
    assert same_color(keys[5].get_color(), dark_text)
    explorer.view.set_dark(False)
    assert all(same_color(label.get_color(), "black") for label in keys)


# ----------------------------------------------------------------------- one minus sign
@pytest.mark.parametrize(
    ("explorer_class", "values"),
    [
        ("MixtureExplorer", {"score_3": -2.0}),
        ("ScoreRowExplorer", {"score_1": -1.0, "score_2": -2.0, "score_3": -0.5, "score_4": -3.0}),
        ("TemperatureExplorer", {"score_1": -3.0}),
        ("OverflowExplorer", {"row": "[1, 0.5, 2.5, -0.1]"}),
    ],
)
def test_readouts_write_negative_numbers_with_the_true_minus(explorer_class, values):
    """The figures' ticks write −; a readout beside them writing - read as a different sign."""
    cls = {c.__name__: c for c in all_explorers()}[explorer_class]
    explorer = quiet(cls)
    explorer.set(**values)
    text = readout_text(explorer)
    assert "−" in text, text  # a negative number is shown ...
    assert not re.search(r"-\d", text), text  # ... never with a hyphen-minus
    assert not NEGATIVE_ZERO.search(text), text
    assert not re.search(r"\b[wv]_", text), text  # subscripts as <sub>, not underscores


def test_no_figure_text_writes_a_subscript_with_a_plain_underscore(any_explorer):
    """Issue 16 found "w_A" in lesson 5's figure: subscripts are mathtext ($w_\\mathrm{A}$)."""
    from matplotlib.text import Text

    from attnlab.plots.outline_labels import OutlineLabels

    figure = any_explorer.figure
    figure.canvas.draw()
    texts = [t.get_text() for t in figure.findobj(Text)]
    texts += [s for labels in figure.findobj(OutlineLabels) for s in labels.texts]
    plain = [t for t in texts if re.search(r"[A-Za-z]_[A-Za-z0-9{]", re.sub(r"\$[^$]*\$", "", t))]
    assert not plain


def drawn_through(artist, box) -> bool:
    """Whether a moving line, patch or (un-offset) collection is drawn through ``box``."""
    from matplotlib.collections import LineCollection, PolyCollection
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    if not artist.get_visible():
        return False
    if isinstance(artist, Line2D | Patch):
        filled = isinstance(artist, Patch) and artist.get_fill()
        path = artist.get_transform().transform_path(artist.get_path())
        return path.intersects_bbox(box, filled=filled)
    if isinstance(artist, LineCollection | PolyCollection) and len(artist.get_offsets()) <= 1:
        transform, filled = artist.get_transform(), isinstance(artist, PolyCollection)
        return any(
            transform.transform_path(p).intersects_bbox(box, filled=filled)
            for p in artist.get_paths()
        )
    return False


def test_nothing_moving_runs_through_a_legend(any_explorer):
    """Issue 16: bars covered lesson 7's legend, a histogram ran through lesson 2's.

    Every control is swept (12 values each); no moving bar, line or patch may cross the
    box of a legend, of its axes or of the figure.
    """
    from attnlab.explorers.sweep import control_values
    from attnlab.live import flatten_artists

    explorer = any_explorer
    figure = explorer.figure
    figure.canvas.draw()
    legends = [ax.get_legend() for ax in figure.axes if ax.get_legend()] + figure.legends
    if not legends:
        pytest.skip(f"{type(explorer).__name__} has no legend")
    boxes = [legend.get_window_extent() for legend in legends]
    moving = list(flatten_artists(explorer.artists))
    crossed = set()
    for name, control in explorer.controls.items():
        start = control.value
        for value in control_values(control, 12):
            control.value = value
            crossed |= {
                (type(a).__name__, name, str(value))
                for a in moving
                for box in boxes
                if drawn_through(a, box)
            }
        control.value = start
    assert not crossed, sorted(crossed)[:10]
