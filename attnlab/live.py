"""A matplotlib figure that lives in a canvas widget and redraws by blitting.

This is the rendering path every explorer uses. The figure is drawn once in
full, with the moving artists left out, and that background is kept. On each
slider step only the moving artists are drawn onto a copy of the background,
and the RGBA pixels go to a :class:`~attnlab.figure_canvas.FigureCanvas`, which
sends the browser just the rectangles that changed. No figure is rebuilt, no
layout is recomputed, nothing is PNG-encoded, and nothing waits on a round trip
to the front end before drawing.

Why not ``interact`` or ipympl: measured on this kind of machine,
``interact`` with inline re-plotting spends 120–160 ms per step in the kernel,
and ipympl's ``draw_idle`` waits for the browser to ask for the frame
(~80 ms round trip). Blitting costs a few milliseconds
(``benchmarks/explorers.py`` prints the figures; ``benchmarks/latency.py``
measures slider-to-pixels in a real browser).
"""

from __future__ import annotations

import io
from collections.abc import Iterable

import numpy as np
from matplotlib import rcParams
from matplotlib.artist import Artist
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import Collection
from matplotlib.colors import to_rgba
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.text import Text

from attnlab import page_layer
from attnlab.figure_canvas import FigureCanvas


def flatten_artists(obj) -> list[Artist]:
    """Collect the artists in ``obj``: an artist, or any nesting of dicts, lists and containers.

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> ax = Figure().subplots()
    >>> bars = ax.bar([0, 1], [1, 2])
    >>> line, = ax.plot([0, 1])
    >>> len(flatten_artists({"bars": bars, "line": line, "none": None}))
    3
    """
    if obj is None:
        return []
    if isinstance(obj, Artist):
        return [obj]
    if isinstance(obj, dict):
        obj = obj.values()
    if isinstance(obj, Iterable) and not isinstance(obj, str):
        return [artist for item in obj for artist in flatten_artists(item)]
    raise TypeError(f"expected matplotlib artists, got {type(obj).__name__}")


KEPT_BACKGROUNDS = 16  # backgrounds LiveFigure.use_background keeps (~1.4 MB each at 880 × 400)
DARK_FACE = 0.067  # grey level of JupyterLab's dark page (#111111), where white was
DARK_INK = 0.9  # grey level of text and lines that were black (#e6e6e6)
NEUTRAL_SPREAD = 0.12  # a colour whose channels differ by less is a grey: it follows the theme
DIM_LUMINANCE = 0.3  # a data colour darker than this is lightened on a dark page


def themed_colour(rgba, dark: bool) -> tuple:
    """The colour to draw ``rgba`` with on a dark (or light) page; light colours are the originals.

    Greys (white backgrounds, black text, grey grid lines) swap ends of the grey scale: white
    becomes the dark page's grey, black a light ink. Saturated colours (data) keep their hue;
    dark ones are lightened so they stay readable on the dark page. Alpha is kept.

    Parameters
    ----------
    rgba : colour
        Anything :func:`matplotlib.colors.to_rgba` accepts.
    dark : bool
        False returns the colour unchanged (as an RGBA tuple).

    Returns
    -------
    tuple of 4 float

    Examples
    --------
    >>> [round(c, 3) for c in themed_colour("white", dark=True)]
    [0.067, 0.067, 0.067, 1.0]
    >>> [round(c, 3) for c in themed_colour("black", dark=True)]
    [0.9, 0.9, 0.9, 1.0]
    >>> from attnlab.plots.colours import PALETTE
    >>> themed_colour(PALETTE["blue"], dark=True) == to_rgba(PALETTE["blue"])  # a data colour
    True
    >>> themed_colour("white", dark=False)
    (1.0, 1.0, 1.0, 1.0)
    """
    r, g, b, a = to_rgba(rgba)
    if not dark:
        return (r, g, b, a)
    if max(r, g, b) - min(r, g, b) < NEUTRAL_SPREAD:
        grey = DARK_INK - (max(r, g, b) + min(r, g, b)) / 2 * (DARK_INK - DARK_FACE)
        return (grey, grey, grey, a)
    if 0.2126 * r + 0.7152 * g + 0.0722 * b < DIM_LUMINANCE:
        return (r + (1 - r) * 0.45, g + (1 - g) * 0.45, b + (1 - b) * 0.45, a)
    return (r, g, b, a)


def _themed_array(colours: np.ndarray, dark: bool) -> np.ndarray:
    """:func:`themed_colour` for each row of an (n, 4) colour array."""
    return np.array([themed_colour(c, dark) for c in colours]).reshape(-1, 4)  # (n, 4)


# (artist type, colour property) pairs the theme changes; each has get_<p> and set_<p>
_PROPERTIES = [
    (Text, ("color",)),
    (Line2D, ("color", "markerfacecolor", "markeredgecolor")),
    (Patch, ("facecolor", "edgecolor")),
    (Collection, ("facecolor", "edgecolor")),
]


class FigureTheme:
    """Restyles a figure for a light or dark page, and back, without touching rcParams.

    Every colour is computed from the colour the artist had before the first restyle
    (kept here), so restyling twice changes nothing and going back to light restores
    exactly what was drawn. Colour-mapped content (images, meshes, and everything drawn
    over them, such as cell values on a heatmap) is left as it is; the axes around it
    follow the theme.

    Parameters
    ----------
    figure : matplotlib.figure.Figure

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> figure = Figure()
    >>> ax = figure.subplots()
    >>> line, = ax.plot([0, 1], color="black")
    >>> theme = FigureTheme(figure)
    >>> theme.apply(dark=True)
    >>> [round(c, 2) for c in figure.patch.get_facecolor()], line.get_color() != "black"
    ([0.07, 0.07, 0.07, 1.0], True)
    >>> theme.apply(dark=False)
    >>> line.get_color(), figure.patch.get_facecolor()
    ('black', (1.0, 1.0, 1.0, 1.0))
    """

    def __init__(self, figure: Figure):
        self.figure = figure
        self.dark = False
        self._originals: dict[tuple[int, str], tuple[Artist, object]] = {}
        self._applied: dict[tuple[int, str], object] = {}
        self._modes: dict[tuple[int, str], bool] = {}  # whether dark colours are applied
        self._themed: set[int] = set()  # ids of the artists the last apply() restyled

    def apply(self, dark: bool) -> None:
        """Restyle every themed artist of the figure for a dark (or light) page."""
        self.dark = bool(dark)
        for axes in self.figure.get_axes():
            self._restyle_ticks(axes)
        artists = self._artists()
        self._themed = {id(artist) for artist in artists}
        for artist in artists:
            self.restyle(artist)

    def follow(self, artists: list[Artist]) -> None:
        """Restyle those of ``artists`` the theme covers, if their colours changed since.

        For the moving artists, whose colours an explorer's ``draw`` may set on any frame.
        """
        if self.dark:
            for artist in artists:
                if id(artist) in self._themed:
                    self.restyle(artist)

    def restyle(self, artist: Artist) -> None:
        """Give one artist the colours of the current theme (from its original colours).

        A colour changed by someone else since the last restyle (an explorer's ``draw``)
        becomes that artist's new original.
        """
        for kind, properties in _PROPERTIES:
            if isinstance(artist, kind):
                for name in properties:
                    self._restyle_property(artist, name)
        if isinstance(artist, Text) and artist.get_bbox_patch() is not None:
            self.restyle(artist.get_bbox_patch())

    def _restyle_property(self, artist: Artist, name: str) -> None:
        if _follows_line_colour(artist, name):
            return  # an "auto" marker colour is the line's colour, restyled with it
        key = (id(artist), name)
        current = _raw_colour(artist, name)
        known = key in self._originals
        if known and _same(current, self._applied[key]):
            if self._modes[key] == self.dark:
                return  # nothing changed since the last restyle
        elif known or self.dark:  # new, or changed by someone else: a new original
            self._originals[key] = (artist, _copy(current), _copy(current))
            self._applied[key], self._modes[key] = _copy(current), False
            if not self.dark:
                return
        else:
            return  # never restyled and the page is light: nothing to do
        _, raw, shown = self._originals[key]
        getattr(artist, f"set_{name}")(_themed(shown, True) if self.dark else raw)
        self._applied[key], self._modes[key] = _copy(_raw_colour(artist, name)), self.dark

    def _restyle_ticks(self, axes) -> None:
        """Ticks made later (new tick positions) take the theme's colours too.

        Only the axis' defaults for new ticks change here (``Axis.set_tick_params``, which
        also recolours the ticks that exist: their colours are put back at once); the ticks
        that exist are restyled one by one with the other artists, so colours an explorer gave
        single tick labels stay. Going back to light, a default the axis never had is set to
        the rcParams colour a new tick would have taken (rcParams themselves are only read).
        """
        for axis in (axes.xaxis, axes.yaxis):
            ticks = axis.get_major_ticks() + axis.get_minor_ticks()
            for which in ("major", "minor"):
                key = (id(axis), f"new ticks {which}")
                if key not in self._originals:
                    if not self.dark or not ticks:
                        continue
                    first = ticks[0]
                    shown = {
                        "color": first.tick1line.get_color(),
                        "labelcolor": first.label1.get_color(),
                        "grid_color": first.gridline.get_color(),
                    }
                    given = axis.get_tick_params(which=which)
                    raw = {name: given.get(name) for name in shown}
                    self._originals[key] = (axis, raw, shown)
                _, raw, shown = self._originals[key]
                colours = {
                    name: _themed(shown[name], True)
                    if self.dark
                    else _new_tick_default(axis, name, raw[name])
                    for name in raw
                }
                _set_new_tick_colours(axis, which, colours)

    def _artists(self) -> list[Artist]:
        """Every artist the theme restyles, figure and axes chrome first."""
        figure = self.figure
        found: list[Artist] = [figure.patch, *figure.texts]
        for legend in figure.legends:
            found += _legend_artists(legend)
        for axes in figure.get_axes():
            found += [
                axes.patch,
                *axes.spines.values(),
                *_titles(axes),
                axes.xaxis.label,
                axes.yaxis.label,
                axes.xaxis.get_offset_text(),
                axes.yaxis.get_offset_text(),
            ]
            for axis in (axes.xaxis, axes.yaxis):
                for tick in axis.get_major_ticks() + axis.get_minor_ticks():
                    found += [
                        tick.tick1line,
                        tick.tick2line,
                        tick.label1,
                        tick.label2,
                        tick.gridline,
                    ]
            if axes.get_legend() is not None:
                found += _legend_artists(axes.get_legend())
            if not _colour_mapped(axes):
                found += [*axes.lines, *axes.patches, *axes.collections, *axes.texts]
            else:  # only what sits on the page, not over the data: titles in axes
                # coordinates, unclipped captions drawn above the axes
                found += [t for t in axes.texts if t.get_transform() is not axes.transData]
                found += [
                    c for c in axes.collections if c.get_array() is None and not c.get_clip_on()
                ]
                for table in axes.tables:
                    for cell in table.get_celld().values():
                        found += [cell, cell.get_text()]
        return found


def _titles(axes) -> list[Text]:
    """The axes' three titles (centre, left, right): its Text children that are not ``texts``."""
    texts = {id(text) for text in axes.texts}
    return [a for a in axes.get_children() if isinstance(a, Text) and id(a) not in texts]


def _new_tick_default(axis, name: str, given):
    """The tick colour ``name`` new ticks of ``axis`` get: ``given``, else what rcParams say."""
    if given is not None:
        return given
    tick = f"{axis.axis_name}tick"
    if name == "grid_color":
        return rcParams["grid.color"]
    if name == "labelcolor" and rcParams[f"{tick}.labelcolor"] != "inherit":
        return rcParams[f"{tick}.labelcolor"]
    return rcParams[f"{tick}.color"]


def _set_new_tick_colours(axis, which: str, colours: dict) -> None:
    """Set the colours new ``which`` ticks of ``axis`` get; the ticks that exist keep theirs.

    ``Axis.set_tick_params`` also recolours the existing ticks (and the offset text, and a
    grid colour with an alpha channel sets the grid lines' alpha): their colours are read
    before and set back after.
    """
    ticks = axis.majorTicks if which == "major" else axis.minorTicks
    kept = []
    for tick in ticks:
        for line in (tick.tick1line, tick.tick2line):
            kept += [(line.set_color, line.get_color())]
            kept += [(line.set_markeredgecolor, line.get_markeredgecolor())]
        kept += [(text.set_color, text.get_color()) for text in (tick.label1, tick.label2)]
        kept += [(tick.gridline.set_color, tick.gridline.get_color())]
        kept += [(tick.gridline.set_alpha, tick.gridline.get_alpha())]
    offset = axis.get_offset_text()
    kept += [(offset.set_color, offset.get_color())]
    axis.set_tick_params(which=which, **colours)
    for setter, value in kept:
        setter(value)


def _legend_artists(legend) -> list[Artist]:
    return [legend.get_frame(), legend.get_title(), *legend.get_texts(), *legend.legend_handles]


def _colour_mapped(axes) -> bool:
    """Whether the axes show an image or colour-mapped collection (their data keeps colours)."""
    return bool(axes.images) or any(c.get_array() is not None for c in axes.collections)


def _themed(colour, dark: bool):
    """:func:`themed_colour` for a colour as an artist returns it: one colour or an array.

    Fully transparent colours ("none") stay transparent.
    """
    if not dark:
        return colour
    if isinstance(colour, np.ndarray) and colour.ndim == 2:
        return _themed_array(colour, dark)
    if isinstance(colour, str) and colour.lower() == "none" or to_rgba(colour)[3] == 0:
        return "none"
    return themed_colour(colour, dark)


def _raw_colour(artist: Artist, name: str):
    """The colour to give the artist's setter to draw it as it is drawn now (and to compare).

    A patch's ``get_facecolor``/``get_edgecolor`` include the patch's own alpha, which its
    setters apply again: with an alpha set, the colour's alpha is left out (1), so setting
    the colour back, or changing the alpha alone, restyles nothing. A transparent colour
    ("none", or no fill) is "none", which stays transparent whatever the alpha.
    """
    colour = getattr(artist, f"get_{name}")()
    if isinstance(artist, Patch):
        alpha = artist.get_alpha()
        if colour[3] == 0 and alpha != 0:
            return "none"
        if alpha is not None:
            return (*colour[:3], 1.0)
    return colour


def _follows_line_colour(artist: Artist, name: str) -> bool:
    """Whether ``name`` is a line's marker colour left on "auto", which draws the line's colour.

    Restyled on its own it would be read after the line's colour had changed and taken for an
    original: a black marker on a dark page came out dark grey (0.15), and light again after.
    """
    if not isinstance(artist, Line2D) or name not in ("markerfacecolor", "markeredgecolor"):
        return False
    raw = getattr(artist, f"_{name}", None)  # matplotlib keeps "auto" here until drawn
    return isinstance(raw, str) and raw.lower() == "auto"


def _copy(colour):
    return colour.copy() if isinstance(colour, np.ndarray) else colour


def _same(a, b) -> bool:
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        return a.shape == b.shape and np.array_equal(a, b)
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return False
    return type(a) is type(b) and a == b


class LiveFigure:
    """A figure shown in a :class:`~attnlab.figure_canvas.FigureCanvas`, redrawn by blitting.

    Parameters
    ----------
    figsize : (float, float)
        Figure size in inches.
    dpi : float
        Pixels per inch of the frames sent to the browser on a 1x screen. On a HiDPI screen
        (the view reports its ``devicePixelRatio``) the figure is drawn at ``dpi`` times that
        ratio and shown at the same CSS size, so its text is sharp (:meth:`set_pixel_ratio`).

    Attributes
    ----------
    figure : matplotlib.figure.Figure
        A pyplot-free figure with an Agg canvas (no global state is touched).
    widget : attnlab.figure_canvas.FigureCanvas
        The widget the frames are sent to.

    Notes
    -----
    Call :meth:`set_moving` with the artists that change between frames, then
    :meth:`render` after each change. Anything else (axes, ticks, labels,
    reference lines) is background and is drawn once. If the background itself
    must change (new axis limits), call :meth:`invalidate` first. A background that
    comes back (tick labels that take one of a few looks) can instead be named with
    :meth:`use_background`: each look is drawn once and kept, so returning to it costs
    no full redraw.

    Examples
    --------
    >>> live = LiveFigure(figsize=(2, 1), dpi=50)
    >>> ax = live.figure.subplots()
    >>> line, = ax.plot([0, 1], [0, 1])
    >>> live.set_moving([line])
    >>> live.render()  # True only when a readout rode along to a page that hands it over
    False
    >>> live.widget.pixels.shape  # (height, width, RGBA)
    (50, 100, 4)
    """

    def __init__(self, figsize=(7.0, 3.2), dpi=100, page_draws_moving=False):
        self.figure = Figure(figsize=figsize, dpi=dpi, layout="constrained")
        self.page_draws_moving = bool(page_draws_moving)
        self._texts: dict = {}  # text outlines kept by page_layer.record
        self._background_sent = False  # the page has the current background (page mode)
        self.base_dpi = float(dpi)
        FigureCanvasAgg(self.figure)
        width, height = self.figure.canvas.get_width_height()
        self.widget = FigureCanvas(width=width, height=height)
        self.theme = FigureTheme(self.figure)
        self._moving: list[Artist] = []
        self._backgrounds: dict = {}  # background key -> pixels saved by copy_from_bbox
        self._key = None  # the key of the background the figure shows now
        self.widget.draw_whole = self.frame
        self.widget.observe(self._on_theme, names="dark")
        self.widget.observe(self._on_pixel_ratio, names="pixel_ratio")

    def set_moving(self, artists) -> None:
        """Declare the artists that change between frames; they are left out of the background."""
        self._moving = sorted(flatten_artists(artists), key=lambda a: a.get_zorder())
        for artist in self._moving:
            artist.set_animated(True)
        self.invalidate()

    def invalidate(self) -> None:
        """Forget every kept background, so the next :meth:`render` draws the whole figure."""
        self._backgrounds.clear()
        self._background_sent = False
        self._texts.clear()

    def use_background(self, key) -> None:
        """Say that the background now looks as it did under ``key`` (any hashable).

        The caller has just restyled background artists (say, tick label colours) to one of
        a few looks; the first frame under a new ``key`` draws the whole figure, later ones
        reuse its pixels. A theme change or :meth:`invalidate` forgets them all. At most
        :data:`KEPT_BACKGROUNDS` looks are kept. The layout of the first look drawn is kept
        for all of them (the layout engine is switched off after it), so a kept background
        always lines up with the moving artists drawn over it.
        """
        if key != self._key:
            self._background_sent = False
        self._key = key

    def background(self) -> np.ndarray:
        """Draw the figure without its moving artists; its pixels, ``(height, width, 4)``, uint8."""
        canvas = self.figure.canvas
        background = self._backgrounds.get(self._key)
        if background is None:
            canvas.draw()  # lays out the figure and draws everything but the moving artists
            if self._key is not None:  # looks come back: all must share this one layout
                self.figure.set_layout_engine("none")  # positions stay where they are now
            if len(self._backgrounds) >= KEPT_BACKGROUNDS:
                self._backgrounds.clear()
            self._backgrounds[self._key] = canvas.copy_from_bbox(self.figure.bbox)
        else:
            canvas.restore_region(background)
        return np.asarray(canvas.buffer_rgba())  # (height, width, 4)

    def frame(self) -> np.ndarray:
        """Draw the current state and return its pixels, shape ``(height, width, 4)``, uint8."""
        pixels = self.background()
        self.theme.follow(self._moving)
        renderer = self.figure.canvas.get_renderer()  # what Figure.draw_artist asks for
        for artist in self._moving:
            artist.draw(renderer)
        return pixels

    def set_dark(self, dark: bool) -> None:
        """Restyle the figure for a dark (or light) page and send the new frame.

        The canvas view calls this (through ``widget.dark``) with the JupyterLab theme.
        """
        if bool(dark) == self.theme.dark:
            return
        self.theme.apply(dark)
        self.invalidate()
        self.render()

    def _on_theme(self, change) -> None:
        self.set_dark(change["new"])

    def set_pixel_ratio(self, ratio: float) -> None:
        """Draw at ``ratio`` device pixels per CSS pixel (the screen's devicePixelRatio).

        The figure's dpi becomes ``base_dpi * ratio``; the canvas keeps its CSS size (the
        widget's ``scale``), every kept background is redrawn, and the new frame is sent.
        The canvas view calls this (through ``widget.pixel_ratio``) when it appears.

        Examples
        --------
        >>> live = LiveFigure(figsize=(2, 1), dpi=50)
        >>> live.set_pixel_ratio(2)
        >>> live.widget.pixels.shape, live.widget.scale
        ((100, 200, 4), 2.0)
        """
        ratio = float(ratio)
        if ratio == self.widget.scale and self.figure.dpi == self.base_dpi * ratio:
            return
        self.figure.set_dpi(self.base_dpi * ratio)
        self.widget.scale = ratio
        self.invalidate()
        self.render()

    def _on_pixel_ratio(self, change) -> None:
        self.set_pixel_ratio(change["new"])

    def render(self, readout: str | None = None, readout_model: str | None = None) -> bool:
        """Draw the current state and send it to the browser (with ``readout``'s HTML, if given).

        See :meth:`attnlab.figure_canvas.FigureCanvas.show` for what ``readout`` and
        ``readout_model`` do and what is returned.
        """
        if self.page_draws_moving:
            background = None if self._background_sent else self.background()
            self.theme.follow(self._moving)
            try:
                shapes = page_layer.record(self._moving, self.figure, self._texts)
            except page_layer.Unsupported:
                self.page_draws_moving = False  # drawn with Agg from now on, as before
            else:
                self._background_sent = True
                return self.widget.show(background, readout, readout_model, shapes=shapes)
        return self.widget.show(self.frame(), readout, readout_model)

    def to_png(self, dpi=None) -> bytes:
        """The whole figure as a PNG file (slow path, for saving and slides)."""
        buffer = io.BytesIO()
        self.figure.savefig(buffer, format="png", dpi=dpi or self.base_dpi)
        self.invalidate()  # saving redraws the canvas, so the kept background is stale
        return buffer.getvalue()
