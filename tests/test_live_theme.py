"""Explorer figures follow JupyterLab's theme (kernel side), and a saved explorer shows its figure.

The canvas view reports the page's theme ({kind: "theme", dark}); LiveFigure restyles the
figure from the colours it had (never from rcParams) and sends a new frame. The browser half
is tested in tests/browser/test_dark_theme.py.
"""

from __future__ import annotations

import base64
import io

import numpy as np
import pytest
from matplotlib.colors import to_rgba
from matplotlib.image import imread
from matplotlib.lines import Line2D
from matplotlib.text import Text

from attnlab.explorers import all_explorers
from attnlab.live import FigureTheme, LiveFigure, _raw_colour, themed_colour


@pytest.fixture(params=all_explorers(), ids=lambda cls: cls.__name__)
def explorer(request):
    return request.param()


def luminance(rgba: np.ndarray) -> np.ndarray:
    return rgba[..., :3].astype(float) @ [0.2126, 0.7152, 0.0722]  # (...,)


def themed_colours(theme: FigureTheme) -> dict:
    """Every colour the theme looks after, as each artist reports it now (copies)."""
    return {
        key: np.array(to_rgba_or_array(_raw_colour(artist, key[1])))
        for key, (artist, *_) in theme._originals.items()
        if not key[1].startswith("new ticks")
    }


def text_and_line_colours(figure) -> dict:
    """id -> repr of the colour of every Text and Line2D in the figure."""
    found = figure.findobj(lambda a: isinstance(a, (Text, Line2D)))
    return {id(a): repr(a.get_color()) for a in found}


def to_rgba_or_array(colour):
    if isinstance(colour, np.ndarray):
        return colour.copy()
    return to_rgba(colour) if colour is not None else (np.nan,) * 4


def test_themed_colour_swaps_greys_keeps_data_colours_and_alpha():
    assert themed_colour("white", True)[:3] == pytest.approx((0.067,) * 3)
    assert themed_colour("black", True)[:3] == pytest.approx((0.9,) * 3)
    assert themed_colour((0.5, 0.5, 0.5, 0.3), True)[3] == 0.3
    assert themed_colour("#d55e00", True) == to_rgba("#d55e00")  # vermillion: a data colour
    navy = themed_colour("#000080", True)
    assert luminance(np.array(navy)) > luminance(np.array(to_rgba("#000080")))  # lightened
    assert themed_colour("#123456", False) == to_rgba("#123456")


def test_explorer_turns_dark_is_idempotent_and_switches_back_exactly(explorer):
    view = explorer.view
    light = view.frame().copy()
    assert luminance(light[2, 2]) > 240
    before = text_and_line_colours(view.figure)

    view.set_dark(True)
    dark = view.widget.pixels
    assert luminance(dark[2, 2]) < 30, "the figure's background must be dark"
    assert (luminance(dark) > 200).mean() > 0.002, "text and lines must be light"
    once = themed_colours(view.theme)
    view.theme.apply(True)
    assert {k: v.tolist() for k, v in themed_colours(view.theme).items()} == {
        k: v.tolist() for k, v in once.items()
    }, "restyling twice must change nothing"

    explorer.update()  # a slider step while dark keeps the page dark
    assert luminance(view.widget.pixels[2, 2]) < 30

    view.set_dark(False)
    after = text_and_line_colours(view.figure)
    changed = [k for k in before if before[k] != after.get(k)]
    assert not changed, f"{len(changed)} artists kept a dark-theme colour"
    assert luminance(view.widget.pixels[2, 2]) > 240


def test_colour_mapped_content_keeps_its_colours():
    live = LiveFigure(figsize=(3, 2), dpi=50)
    ax = live.figure.subplots()
    image = ax.imshow(np.arange(4.0).reshape(2, 2), cmap="viridis")
    cell = ax.text(0, 0, "0.0", color="white")  # a value on a heatmap cell
    title = ax.set_title("weights", color="black")
    live.set_moving([image, cell])
    live.render()
    live.set_dark(True)
    assert cell.get_color() == "white" and image.get_cmap().name == "viridis"
    assert to_rgba(title.get_color())[0] > 0.8  # the title above the data follows the page


def test_auto_marker_colours_follow_their_line_on_a_dark_page_and_back():
    """A black marker left on "auto" was restyled after its line and taken for a new
    original: dark grey (0.15) on the dark page, invisible, and light grey back on white."""
    live = LiveFigure(figsize=(3, 2), dpi=50)
    ax = live.figure.subplots()
    (dots,) = ax.plot([0, 1], [0, 1], linestyle="none", marker="o", color="black")
    (ringed,) = ax.plot([0, 1], [1, 0], marker="o", color="black", markerfacecolor="white")
    live.render()
    live.set_dark(True)
    for colour in (dots.get_markerfacecolor(), dots.get_markeredgecolor()):
        assert to_rgba(colour)[0] > 0.8, colour  # light ink, as the line
    assert to_rgba(ringed.get_markerfacecolor())[0] < 0.1  # a set white face: the page grey
    live.set_dark(False)
    assert to_rgba(dots.get_markerfacecolor()) == to_rgba("black")
    assert to_rgba(dots.get_markeredgecolor()) == to_rgba("black")
    assert to_rgba(ringed.get_markerfacecolor()) == to_rgba("white")


def test_pixels_come_back_exactly_on_a_settled_figure():
    live = LiveFigure(figsize=(3, 2), dpi=50)
    ax = live.figure.subplots()
    (line,) = ax.plot([0, 1], [0, 1], color="black")
    bars = ax.bar([0, 1], [0.5, 1.0], color=["#0072b2", "0.5"], edgecolor="none", alpha=0.5)
    ax.legend([line], ["line"])
    ax.grid(True)
    live.set_moving([line])
    for _ in range(3):  # constrained layout settles in a few draws
        live.invalidate()
        light = live.frame().copy()
    live.set_dark(True)
    assert bars[0].get_facecolor()[:3] == pytest.approx(to_rgba("#0072b2")[:3])
    live.set_dark(False)
    assert np.array_equal(live.widget.pixels, light)


def test_saved_output_has_the_figure_as_png_and_says_to_rerun_the_cell(explorer):
    bundle = explorer._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    picture = imread(io.BytesIO(base64.b64decode(bundle["image/png"])), format="png")
    width, height = explorer.view.figure.canvas.get_width_height()
    assert picture.shape[:2] == (height, width)
    assert np.array_equal((picture * 255).round().astype(np.uint8), explorer.view.widget.pixels)
    text = bundle["text/plain"]
    assert f"the {explorer.name} explorer" in text and "run this cell again" in text
