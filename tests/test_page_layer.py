"""The page layer: moving artists as vector shapes (attnlab.page_layer), and how a live figure
and its canvas send them (attnlab.live, attnlab.figure_canvas).

The reference for the shapes is matplotlib's own drawing code: every artist drawn with
``artist.draw`` through :class:`~attnlab.page_layer.ShapeRecorder`. ``record`` reads the
common artists directly instead (much cheaper), and must give the same paths and styles for
every explorer whose page draws its moving artists, over a sweep of its controls, at
devicePixelRatio 1 and 2. What Chromium paints from them is compared with Agg's pixels in
``tests/browser/test_page_layer_in_browser.py``.
"""

from __future__ import annotations

import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from attnlab import page_layer
from attnlab.explorers import all_explorers
from attnlab.explorers.sweep import control_values
from attnlab.figure_canvas import FigureCanvas
from attnlab.live import LiveFigure

PAGED = [cls for cls in all_explorers() if cls.page_draws_moving]
TOLERANCE = 0.11  # px: both round to a tenth of a device pixel


def drawn_by_matplotlib(artists, figure) -> list[list]:
    """Every artist through its own ``draw``: the reference."""
    width, height = figure.canvas.get_width_height(physical=True)
    recorder = page_layer.ShapeRecorder(width, height, figure.dpi)
    for artist in artists:
        if artist.get_visible():
            artist.draw(recorder)
    return recorder.shapes


def merged(shapes) -> list[list]:
    """Shapes as [tokens, style], a text's offset applied, neighbours of one style joined (a
    line collection of one style is one path in ``record``, a path per segment in ``draw``)."""
    out: list[list] = []
    for shape in shapes:
        data, style = shape[0], shape[1]
        dx, dy = shape[2] if len(shape) > 2 else (0.0, 0.0)
        tokens, axis = [], 0
        for token in data.split():
            if token.isalpha():
                tokens.append(token)
                axis = 0
            else:
                tokens.append(float(token) + (dx if axis == 0 else dy))
                axis ^= 1
        if out and out[-1][1] == style:
            out[-1][0].extend(tokens)
        else:
            out.append([tokens, style])
    return out


def assert_same_shapes(got, want, where: str) -> None:
    got, want = merged(got), merged(want)
    assert len(got) == len(want), f"{where}: {len(got)} shapes, matplotlib draws {len(want)}"
    for i, ((tokens, style), (ref_tokens, ref_style)) in enumerate(zip(got, want, strict=True)):
        assert style == ref_style, f"{where}, shape {i}: style {style} != {ref_style}"
        assert len(tokens) == len(ref_tokens), f"{where}, shape {i}: path lengths differ"
        for a, b in zip(tokens, ref_tokens, strict=True):
            if isinstance(a, str) or isinstance(b, str):
                assert a == b, f"{where}, shape {i}: command {a} != {b}"
            else:
                assert abs(a - b) <= TOLERANCE, f"{where}, shape {i}: {a} != {b}"


@pytest.mark.parametrize("ratio", [1, 2])
@pytest.mark.parametrize("cls", PAGED, ids=[cls.name for cls in PAGED])
def test_record_gives_what_matplotlib_draws(cls, ratio):
    explorer = cls()
    live = explorer.view
    live.set_pixel_ratio(ratio)
    texts: dict = {}
    checked = 0
    for name, control in explorer.controls.items():
        for value in control_values(control, max_steps=5):
            control.value = value
            where = f"{cls.name} at {name}={value}, ratio {ratio}"
            shapes = page_layer.record(live._moving, live.figure, texts)
            assert_same_shapes(shapes, drawn_by_matplotlib(live._moving, live.figure), where)
            checked += 1
    assert checked >= 3
    assert texts or not any(type(a).__name__ == "Text" for a in live._moving)


def test_every_paged_explorer_stays_paged_through_a_sweep():
    """No explorer marked page-drawn falls back to Agg (it would lose what it is for)."""
    for cls in PAGED:
        explorer = cls()
        for control in explorer.controls.values():
            for value in control_values(control, max_steps=5):
                control.value = value
        assert explorer.view.page_draws_moving, cls.name
        assert explorer.last_error is None, (cls.name, explorer.last_error)


def small_figure(dpi=50):
    figure = Figure(figsize=(2, 1), dpi=dpi)
    FigureCanvasAgg(figure)
    ax = figure.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    return figure, ax


def test_a_dashed_translucent_line_keeps_its_style_in_device_pixels():
    figure, ax = small_figure(dpi=72)  # a point is a pixel
    (line,) = ax.plot([0, 1], [0.5, 0.5], linestyle="--", linewidth=2, color="C0", alpha=0.5)
    ((data, style),) = page_layer.record([line], figure)
    assert style["stroke"].endswith("80")  # alpha 0.5
    assert style["width"] == 2.0
    assert style["dash"] == [7.4, 3.2]  # matplotlib's dashes: 3.7 and 1.6 line widths
    assert style["cap"] == "butt" and style["join"] == "round"
    assert data.startswith("M 0 ")
    figure.set_dpi(144)  # twice the device pixels: twice the width and dashes
    ((_, style),) = page_layer.record([line], figure)
    assert style["width"] == 4.0 and style["dash"] == [14.8, 6.4]


def test_a_text_that_only_moves_is_outlined_once():
    figure, ax = small_figure()
    text = ax.text(0.2, 0.5, "q", fontsize=10)
    texts: dict = {}
    (first,) = page_layer.record([text], figure, texts)
    text.set_position((0.6, 0.25))
    (moved,) = page_layer.record([text], figure, texts)
    assert moved[0] == first[0]  # the same outline ...
    assert moved[2] == [40.0, 12.5]  # ... moved 0.4 of 100 px right, 0.25 of 50 px down
    assert len(texts) == 1
    text.set_text("k")
    (other,) = page_layer.record([text], figure, texts)
    assert other[0] != first[0] and len(texts) == 2
    assert_same_shapes([other], drawn_by_matplotlib([text], figure), "a new string")


@pytest.mark.parametrize(
    "make, why",
    [
        (lambda ax: ax.imshow(np.eye(3)), "an image"),
        (lambda ax: ax.bar([0.5], [0.5], hatch="//")[0], "hatching"),
    ],
    ids=["image", "hatch"],
)
def test_what_the_page_cannot_draw_is_refused(make, why):
    figure, ax = small_figure()
    artist = make(ax)
    with pytest.raises(page_layer.Unsupported, match=why):
        page_layer.record([artist], figure)


def test_a_live_figure_falls_back_to_agg_and_sends_a_whole_frame():
    live = LiveFigure(figsize=(2, 1), dpi=50, page_draws_moving=True)
    ax = live.figure.subplots()
    (line,) = ax.plot([0, 1], [0, 1])
    live.set_moving([line])
    sent = []
    live.widget.send = lambda content, buffers=None: sent.append((content, buffers))
    live.render()
    assert "shapes" in sent[-1][0] and sent[-1][0]["rects"] == [[0, 0, 100, 50]]
    line.set_ydata([1, 0])
    live.render()  # only the shapes travel: no pixels
    assert sent[-1][0]["rects"] == [] and len(sent[-1][1][0]) == 0
    assert live.render() is False and len(sent) == 2  # nothing changed: nothing sent
    image = ax.imshow(np.eye(2), extent=(0, 1, 0, 1))
    live.set_moving([line, image])
    live.render()
    assert not live.page_draws_moving
    content, buffers = sent[-1]
    assert "shapes" not in content and content["rects"] == [[0, 0, 100, 50]]
    assert len(buffers[0]) == 100 * 50 * 4


def test_pixels_are_the_whole_picture_while_the_page_draws_shapes():
    live = LiveFigure(figsize=(2, 1), dpi=50, page_draws_moving=True)
    ax = live.figure.subplots()
    (line,) = ax.plot([0, 1], [0, 1], linewidth=4, color="black")
    live.set_moving([line])
    live.render()
    shown = live.widget.pixels
    assert not shown.flags.writeable
    np.testing.assert_array_equal(shown, live.frame())  # the line is in it ...
    background = np.array(live.background())
    assert (np.abs(shown.astype(int) - background).max(axis=2) > 64).sum() > 50  # ... not here
    live.widget.prepare_display()
    assert live.widget.initial_png.startswith(b"\x89PNG")


def test_a_canvas_refuses_shapes_without_a_first_frame():
    canvas = FigureCanvas()
    with pytest.raises(ValueError, match="rgba may be None only with shapes"):
        canvas.show(None, shapes=[])
