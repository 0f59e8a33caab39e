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
from matplotlib.artist import Artist
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

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


class LiveFigure:
    """A figure shown in a :class:`~attnlab.figure_canvas.FigureCanvas`, redrawn by blitting.

    Parameters
    ----------
    figsize : (float, float)
        Figure size in inches.
    dpi : float
        Pixels per inch of the frames sent to the browser.

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
    must change (new axis limits), call :meth:`invalidate` first.

    Examples
    --------
    >>> live = LiveFigure(figsize=(2, 1), dpi=50)
    >>> ax = live.figure.subplots()
    >>> line, = ax.plot([0, 1], [0, 1])
    >>> live.set_moving([line])
    >>> live.render()
    >>> live.widget.pixels.shape  # (height, width, RGBA)
    (50, 100, 4)
    """

    def __init__(self, figsize=(7.0, 3.2), dpi=100):
        self.figure = Figure(figsize=figsize, dpi=dpi, layout="constrained")
        FigureCanvasAgg(self.figure)
        width, height = self.figure.canvas.get_width_height()
        self.widget = FigureCanvas(width=width, height=height)
        self._moving: list[Artist] = []
        self._background = None

    def set_moving(self, artists) -> None:
        """Declare the artists that change between frames; they are left out of the background."""
        self._moving = sorted(flatten_artists(artists), key=lambda a: a.get_zorder())
        for artist in self._moving:
            artist.set_animated(True)
        self.invalidate()

    def invalidate(self) -> None:
        """Forget the background, so the next :meth:`render` draws the whole figure again."""
        self._background = None

    def frame(self) -> np.ndarray:
        """Draw the current state and return its pixels, shape ``(height, width, 4)``, uint8."""
        canvas = self.figure.canvas
        if self._background is None:
            canvas.draw()  # lays out the figure and draws everything but the moving artists
            self._background = canvas.copy_from_bbox(self.figure.bbox)
        else:
            canvas.restore_region(self._background)
        for artist in self._moving:
            self.figure.draw_artist(artist)
        return np.asarray(canvas.buffer_rgba())  # (height, width, 4)

    def render(self) -> None:
        """Draw the current state and send it to the browser."""
        self.widget.show(self.frame())

    def to_png(self, dpi=None) -> bytes:
        """The whole figure as a PNG file (slow path, for saving and slides)."""
        buffer = io.BytesIO()
        self.figure.savefig(buffer, format="png", dpi=dpi or self.figure.dpi)
        self.invalidate()  # saving redraws the canvas, so the kept background is stale
        return buffer.getvalue()
