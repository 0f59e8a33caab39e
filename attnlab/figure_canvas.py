"""A ``<canvas>`` widget that shows RGBA frames, sending only the pixels that changed.

This is how an explorer's figure reaches the browser. Each new frame is compared
with the one the browser already has; the changed pixels are cut into a few
rectangles (one per band of rows) and sent as raw RGBA in one binary message,
which the page paints with ``putImageData``. Nothing is PNG-encoded in the kernel
or decoded in the page, and a slider step that moves three bars sends the strip
of pixels around those bars, not the whole figure.

Why not ``ipywidgets.Image``: measured in JupyterLab on this kind of machine, an
Image spends about 20 ms loading the new ``blob:`` URL and a few more decoding
the PNG, on top of the kernel's encode, which alone put every explorer over the
course's 50 ms slider-to-pixels bar (``benchmarks/latency.py`` prints the
breakdown). The front end is a dozen lines of JavaScript (``figure_canvas.js``)
served by anywidget from the kernel, so nothing is fetched from the network.
"""

from __future__ import annotations

from pathlib import Path

import anywidget
import numpy as np
import traitlets

from attnlab._png import encode_png

BAND_ROWS = 32
GAP_COLUMNS = 48
MAX_PIXEL_RATIO = 3.0  # a screen reporting more still gets 3 device pixels per CSS pixel

#: The page's theme as the last canvas view reported it (None: no view has said yet). Static
#: figures (:mod:`attnlab.plots.display`) are drawn for it.
PAGE = {"dark": None}


def page_is_dark() -> bool:
    """Whether the page showing the kernel's widgets has a dark theme, as last reported.

    False until a figure canvas view has reported its page's theme.
    """
    return bool(PAGE["dark"])


def pixel_ratio(value) -> float:
    """A view's reported ``devicePixelRatio`` as the ratio to draw at: in [1, 3], 2 decimals.

    >>> pixel_ratio(2), pixel_ratio(1.25), pixel_ratio(0.5), pixel_ratio("junk"), pixel_ratio(9)
    (2.0, 1.25, 1.0, 1.0, 3.0)
    """
    try:
        ratio = float(value)
    except (TypeError, ValueError):
        return 1.0
    if ratio != ratio:  # NaN
        return 1.0
    return round(min(max(ratio, 1.0), MAX_PIXEL_RATIO), 2)


def changed_rects(
    old: np.ndarray, new: np.ndarray, band: int = BAND_ROWS, gap: int = GAP_COLUMNS
) -> list[tuple]:
    """Rectangles covering every pixel that differs between two frames.

    The frame is cut into bands of ``band`` rows. In each band with a change, the changed
    columns are grouped into runs that no ``gap`` or more unchanged columns interrupt, and
    each run gives the smallest rectangle holding its changed pixels. So two panels that
    change side by side (a heatmap and its bars) travel as two rectangles, not as one
    spanning the unchanged panel between them (measured when the split came in, the
    median step of lesson 9's explorer went from 750 KB to 262 KB).

    Parameters
    ----------
    old, new : ndarray of uint8, shape (height, width, 4)
        Two RGBA frames of the same shape.
    band : int
        Rows per band: smaller bands fit the changes more tightly, in more rectangles.
    gap : int
        Unchanged columns that split a band's changes into two rectangles.

    Returns
    -------
    list of (x, y, width, height)
        In pixels, top to bottom, left to right within a band; empty when the frames are
        equal. No two overlap.

    Examples
    --------
    >>> old = np.zeros((64, 100, 4), dtype=np.uint8)
    >>> new = old.copy()
    >>> new[3, 2:5] = 255; new[40, 7] = 255
    >>> changed_rects(old, new)
    [(2, 3, 3, 1), (7, 40, 1, 1)]
    >>> new[5, 90] = 255   # 85 unchanged columns from the first change: a rectangle of its own
    >>> changed_rects(old, new)
    [(2, 3, 3, 1), (90, 5, 1, 1), (7, 40, 1, 1)]
    >>> changed_rects(old, old)
    []
    """
    if old.shape != new.shape:
        raise ValueError(f"old and new frames differ in shape: {old.shape} vs {new.shape}")
    changed = _as_words(old) != _as_words(new)  # (height, width): one uint32 per pixel
    rows_changed = changed.any(axis=1)  # (height,)
    rects = []
    for top in range(0, changed.shape[0], band):
        if not rows_changed[top : top + band].any():
            continue
        block = changed[top : top + band]  # (<= band, width)
        cols = np.flatnonzero(block.any(axis=0))  # (n_changed_columns,)
        breaks = np.flatnonzero(np.diff(cols) > gap)  # (n_runs - 1,) last column of each run
        starts = np.concatenate([cols[:1], cols[breaks + 1]])  # (n_runs,)
        ends = np.concatenate([cols[breaks], cols[-1:]])  # (n_runs,)
        for x0, x1 in zip(starts.tolist(), ends.tolist(), strict=True):
            run = rows_changed[top : top + band] if breaks.size == 0 else block[:, x0 : x1 + 1]
            rows = np.flatnonzero(run if run.ndim == 1 else run.any(axis=1))  # changed rows
            y0 = top + int(rows[0])
            rects.append((x0, y0, x1 - x0 + 1, top + int(rows[-1]) - y0 + 1))
    return rects


def _as_words(rgba: np.ndarray) -> np.ndarray:
    """View each RGBA pixel as one uint32 (a copy only if ``rgba`` is not contiguous)."""
    return np.ascontiguousarray(rgba).view(np.uint32)[..., 0]  # (height, width)


class FigureCanvas(anywidget.AnyWidget):
    """A widget showing RGBA frames in a ``<canvas class="attnlab-figure">``.

    Call :meth:`show` with each new frame; only what changed since the last one is sent.
    Every view asks for the whole frame when it appears, so a figure displayed twice, or
    re-rendered by JupyterLab, is never stale.

    Attributes
    ----------
    pixels : ndarray of uint8, shape (height, width, 4), or None
        The frame last shown (read-only), None before the first. While the page draws
        shapes over a background, the kernel draws that whole frame with Agg when asked.
    messages_sent : int
        Binary frame messages sent so far (a frame with no changed pixel sends none).
    readouts_handed_over : set of str
        Model ids of the :class:`~attnlab.controls.Readout` widgets whose HTML the page sets
        itself from the frames (a view said so): their own ``value`` need not travel again.

    Examples
    --------
    >>> canvas = FigureCanvas()
    >>> frame = np.full((4, 6, 4), 255, dtype=np.uint8)
    >>> canvas.show(frame)  # sent, with no readout for a page to hand over
    False
    >>> (canvas.width, canvas.height, canvas.messages_sent)
    (6, 4, 1)
    >>> frame[1, 2] = (0, 0, 0, 255)
    >>> canvas.readouts_handed_over.add("r1")  # a view said it sets readout r1 from frames
    >>> canvas.show(frame, "<b>1</b>", "r1")  # the frame carried r1's HTML to the page
    True
    >>> canvas.messages_sent, canvas.pixels[1, 2].tolist()
    (2, [0, 0, 0, 255])
    >>> canvas.show(frame, "<b>1</b>", "r1")  # nothing changed: nothing sent, nothing carried
    False
    >>> canvas.messages_sent
    2
    """

    _esm = Path(__file__).with_name("figure_canvas.js")
    width = traitlets.Int(0).tag(sync=True)
    height = traitlets.Int(0).tag(sync=True)
    alt = traitlets.Unicode("").tag(sync=True)
    initial_png = traitlets.Bytes(b"").tag(sync=True)
    #: Device pixels per CSS pixel the frames are drawn at: the page shows the canvas at
    #: ``width / scale`` CSS pixels (set by :class:`attnlab.live.LiveFigure`).
    scale = traitlets.Float(1.0).tag(sync=True)
    #: The screen's devicePixelRatio as the last view reported it (kernel-side only, in [1, 3]).
    pixel_ratio = traitlets.Float(1.0)
    #: Whether the page shows a dark theme, as the last view reported it (kernel-side only;
    #: :class:`attnlab.live.LiveFigure` restyles its figure when it changes).
    dark = traitlets.Bool(False)

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._pixels: np.ndarray | None = None
        self._shapes: list | None = None
        #: Draws the whole frame (background and shapes) in the kernel, for :attr:`pixels`
        #: while the page draws shapes (set by :class:`attnlab.live.LiveFigure`).
        self.draw_whole = None
        self.messages_sent = 0
        self.readouts_handed_over: set[str] = set()
        self.on_msg(self._on_view_message)

    @property
    def pixels(self) -> np.ndarray | None:
        """The frame last shown, read-only."""
        if self._pixels is None:
            return None
        if self._shapes is not None and self.draw_whole is not None:
            whole = np.array(self.draw_whole())  # the shapes over the background, as Agg draws them
            whole.flags.writeable = False
            return whole
        view = self._pixels.view()
        view.flags.writeable = False
        return view

    def show(
        self,
        rgba: np.ndarray | None,
        readout: str | None = None,
        readout_model: str | None = None,
        shapes: list | None = None,
    ) -> bool:
        """Show a new frame, sending the browser only the rectangles that changed.

        Parameters
        ----------
        rgba : ndarray of uint8, shape (height, width, 4), or None
            Straight (not premultiplied) RGBA, rows top to bottom, as Agg renders it.
            With ``shapes``, the figure without them (its background); None when that
            background is the one last shown.
        readout : str, optional
            HTML of the explorer's readout that goes with this frame. It rides in the same
            message as the pixels, and the page hands it to the
            :class:`~attnlab.controls.Readout` of the same explorer in the same task, so
            figure and numbers change in one painted frame (as two messages, the readout
            came 1-5 ms later and now and then a frame later). The Readout's own ``value``
            must still be set: it is what the kernel, a saved notebook and a view that
            appears later read.
        readout_model : str, optional
            The ``model_id`` of that Readout. The page then sets the Readout model's value
            itself, in the same task (``figure_canvas.js``), and once a view has said it does
            so, the Readout's own state update need not be sent: one kernel message fewer per
            slider step (:meth:`attnlab.controls.Readout.show`).
        shapes : list, optional
            The moving artists as vector shapes (:func:`attnlab.page_layer.record`), which
            the page draws over ``rgba``. Then no pixels travel while only they change.

        Returns
        -------
        bool
            True when this frame's message carried ``readout`` to a page that hands it to
            ``readout_model`` (so the Readout's value has reached every view without a
            message of its own); False otherwise (nothing changed, so nothing was sent, or no
            view has said it hands readouts over).
        """
        if rgba is None:
            if self._pixels is None or shapes is None:
                raise ValueError("rgba may be None only with shapes, after a first frame")
            rgba = self._pixels
        rgba = np.asarray(rgba)
        if rgba.dtype != np.uint8 or rgba.ndim != 3 or rgba.shape[2] != 4:
            raise ValueError(
                f"rgba must be uint8 with shape (height, width, 4); got {rgba.dtype} {rgba.shape}"
            )
        height, width = rgba.shape[:2]
        if self._pixels is None or self._pixels.shape != rgba.shape:
            self.width, self.height = width, height
            rects = [(0, 0, width, height)]
        elif (shapes is None) != (self._shapes is None):  # the page changes how it paints
            rects = [(0, 0, width, height)]
        elif rgba is self._pixels:
            rects = []
        else:
            rects = changed_rects(self._pixels, rgba)
        if rgba is not self._pixels:
            self._pixels = rgba.copy()
        if not rects and shapes == self._shapes:
            return False
        self._shapes = shapes
        self._send_tiles(rects, readout, readout_model)
        return readout is not None and readout_model in self.readouts_handed_over

    def prepare_display(self) -> None:
        """Store the current frame as PNG in the widget state, for views about to appear.

        A new view paints this at once, before the kernel (perhaps still busy running the
        next cells) answers its request for a fresh frame.
        """
        if self._pixels is not None:
            self.initial_png = encode_png(self.pixels)

    def _send_tiles(
        self, rects: list[tuple], readout: str | None = None, readout_model: str | None = None
    ) -> None:
        tiles = [self._pixels[y : y + h, x : x + w] for x, y, w, h in rects]  # (h, w, 4) each
        payload = b"".join(np.ascontiguousarray(tile).tobytes() for tile in tiles)
        message = {"kind": "tiles", "width": int(self.width), "height": int(self.height)}
        message["scale"] = float(self.scale)
        if readout is not None:
            message["readout"] = str(readout)
            if readout_model is not None:
                message["readout_model"] = str(readout_model)
        if self._shapes is not None:
            message["shapes"] = self._shapes
        self.send({**message, "rects": [list(r) for r in rects]}, buffers=[payload])
        self.messages_sent += 1

    def _on_view_message(self, widget, content, buffers) -> None:
        kind = content.get("kind")
        if kind == "theme":
            self.dark = PAGE["dark"] = bool(content.get("dark"))
        elif kind == "screen":
            self.pixel_ratio = pixel_ratio(content.get("ratio"))
        elif kind == "readout-handoff" and isinstance(content.get("model"), str):
            self.readouts_handed_over.add(content["model"])
        elif kind == "frame-please" and self._pixels is not None:
            self._send_tiles([(0, 0, self._pixels.shape[1], self._pixels.shape[0])])
