"""An explorer's moving artists as vector shapes that the page draws over the figure.

Before, every slider step drew the moving artists into the figure's pixels with Agg.
The kernel then compared the frame with the last one and sent the changed pixels. Now
the same artists are drawn through :class:`ShapeRecorder`, a matplotlib renderer that
rasterises nothing. It keeps each path it is handed (glyphs included: text becomes its
outlines, as with ``svg.fonttype = 'path'``) as a list: the path in SVG syntax, in the
canvas's device pixels, and its style. The page builds a ``Path2D`` from each one and
fills and strokes it over the kept background (``figure_canvas.js``).

So the kernel sends no pixels while a slider is dragged. It sends a few hundred bytes of
shapes, at any devicePixelRatio, and does no pixel work at all: no restore of the
background, no diff of two frames, no copy. Only the background still travels as pixels,
and only when it changes.

An artist that needs what this module does not draw raises :class:`Unsupported`: an
image, hatching, Gouraud shading, a sketch. Its figure then keeps drawing every moving
artist with Agg, as before (:class:`attnlab.live.LiveFigure`).

Examples
--------
>>> from matplotlib.figure import Figure
>>> from matplotlib.backends.backend_agg import FigureCanvasAgg
>>> figure = Figure(figsize=(2, 1), dpi=50)
>>> canvas = FigureCanvasAgg(figure)
>>> ax = figure.add_axes((0, 0, 1, 1))
>>> line, = ax.plot([0, 1], [0, 1], color="red", linewidth=1.44)  # 1 px at 50 dpi
>>> ax.set_xlim(0, 1); ax.set_ylim(0, 1)
(0.0, 1.0)
(0.0, 1.0)
>>> (path, style), = record([line], figure)
>>> path, style["stroke"], style["width"]
('M 0 50 L 100 0', '#ff0000ff', 1.0)
"""

from __future__ import annotations

import numpy as np
from matplotlib import _path
from matplotlib.backend_bases import GraphicsContextBase, RendererBase
from matplotlib.collections import LineCollection
from matplotlib.colors import to_rgba
from matplotlib.lines import Line2D
from matplotlib.patches import Rectangle
from matplotlib.path import Path
from matplotlib.text import Text
from matplotlib.transforms import Affine2D, IdentityTransform

#: SVG path commands for matplotlib's MOVETO, LINETO, CURVE3, CURVE4 and CLOSEPOLY.
_COMMANDS = [b"M", b"L", b"Q", b"C", b"Z"]
#: Decimals kept in a coordinate: a tenth of a device pixel.
_PRECISION = 1
_CAPS = {"butt": "butt", "round": "round", "projecting": "square"}
_JOINS = {"miter": "miter", "round": "round", "bevel": "bevel"}


class Unsupported(Exception):
    """An artist needs something the page's shapes do not draw (named in the message)."""


def record(artists, figure, texts: dict | None = None) -> list[list]:
    """The shapes the page draws for ``artists``, in z-order as given.

    The common artists (a plain line, an upright rectangle, a line collection of one
    style, a text) are read directly, which costs a fraction of drawing them; any other
    artist is drawn through :class:`ShapeRecorder`. Both give the same shapes
    (``tests/test_page_layer.py``).

    Parameters
    ----------
    artists : sequence of matplotlib.artist.Artist
        Artists of ``figure``, in the order to draw them (the last on top).
    figure : matplotlib.figure.Figure
        Their figure, with a canvas: its size in pixels and its dpi place every shape.
    texts : dict, optional
        A cache of text outlines kept between calls (a text that only moves is laid out
        once); the caller empties it when the figure's dpi or size changes.

    Returns
    -------
    list of list
        Per path drawn: the SVG path data in device pixels (y downwards, from the
        canvas's top-left corner), its style (:meth:`ShapeRecorder.style`) and, for a
        text drawn where it was first laid out, ``[dx, dy]``: how far to move it.

    Raises
    ------
    Unsupported
        An artist draws something the page cannot (an image, hatching, ...).
    """
    width, height = figure.canvas.get_width_height(physical=True)
    recorder = ShapeRecorder(width, height, figure.dpi)
    texts = {} if texts is None else texts
    for artist in artists:
        if not artist.get_visible():
            continue
        kind = type(artist)
        if kind is Line2D and _plain_line(artist):
            recorder.line(artist)
        elif kind is Rectangle and _plain_patch(artist) and artist.get_angle() == 0:
            recorder.rectangle(artist)
        elif kind is LineCollection and _plain_lines(artist):
            recorder.line_collection(artist)
        elif kind is Text and _plain_text(artist):
            recorder.text(artist, texts)
        else:
            artist.draw(recorder)
    return recorder.shapes


def _plain_line(line: Line2D) -> bool:
    return (
        line.get_marker() in (None, "None", "none", "", " ")
        and line.get_drawstyle() == "default"
        and not line.get_path_effects()
        and line.get_gapcolor() is None
        and line.get_sketch_params() is None
        and not line.get_rasterized()
    )


def _plain_patch(patch) -> bool:
    return (
        patch.get_hatch() is None
        and not patch.get_path_effects()
        and patch.get_sketch_params() is None
        and not patch.get_rasterized()
    )


def _plain_lines(collection: LineCollection) -> bool:
    return (
        len(collection.get_colors()) == 1
        and collection.get_colors()[0][3] == 1  # one path: overlaps are not blended twice
        and collection.get_alpha() in (None, 1)
        and len(collection.get_linewidths()) == 1
        and len(collection.get_linestyles()) == 1
        and len(collection.get_offsets()) <= 1
        and not np.any(collection.get_offsets())
        and collection.get_hatch() is None
        and not collection.get_path_effects()
        and collection.get_sketch_params() is None
        and collection.get_transform().is_affine
        and not collection.get_rasterized()
    )


def _plain_text(text: Text) -> bool:
    return (
        text.get_bbox_patch() is None
        and not text.get_usetex()
        and not text.get_wrap()
        and text.get_text() != ""
    )


class ShapeRecorder(RendererBase):
    """A matplotlib renderer that keeps every path as an SVG path string and a style.

    Parameters
    ----------
    width, height : int
        The canvas in device pixels.
    dpi : float
        Device pixels per inch (a point is ``dpi / 72`` pixels).

    Attributes
    ----------
    shapes : list of [str, dict]
        What was drawn, in order (see :func:`record`).
    """

    def __init__(self, width: int, height: int, dpi: float):
        super().__init__()
        self.width, self.height, self.dpi = width, height, dpi
        self.shapes: list[list] = []
        # matplotlib's display coordinates have y upwards from the bottom; the canvas's downwards
        self._flip = Affine2D().scale(1.0, -1.0).translate(0.0, height)

    def flipy(self) -> bool:
        return False  # text is placed in display coordinates, flipped with everything else

    def get_canvas_width_height(self):
        return self.width, self.height

    def points_to_pixels(self, points):
        return points * self.dpi / 72.0

    def new_gc(self):
        return GraphicsContextBase()

    # ------------------------------------------------------------------ drawing
    def draw_path(self, gc, path, transform, rgbFace=None):
        if gc.get_hatch() is not None:
            raise Unsupported("hatching")
        if gc.get_sketch_params() is not None:
            raise Unsupported("sketch")
        style = self.style(gc, rgbFace)
        if style is None:
            return
        filled = "fill" in style
        # As Agg does: snap rectilinear paths to the pixel grid, clip and simplify unfilled ones.
        cleaned = path.cleaned(
            transform + self._flip,
            remove_nans=True,
            clip=None if filled else (-self.width, -self.height, 2 * self.width, 2 * self.height),
            simplify=path.should_simplify and not filled,
            curves=True,
            stroke_width=style.get("width", 0.0),
            snap=gc.get_snap(),
        )
        data = _svg(cleaned, IdentityTransform())
        if data:
            self.shapes.append([data, style])

    def line(self, line: Line2D) -> None:
        """A plain :class:`~matplotlib.lines.Line2D`, read directly (what its ``draw`` draws)."""
        if line.get_linestyle() in ("None", "none", " ", ""):
            return
        gc = self._artist_gc(line)
        gc.set_foreground(to_rgba(line.get_color(), line.get_alpha()), isRGBA=True)
        gc.set_linewidth(line.get_linewidth())
        dashed = line.is_dashed()
        gc.set_capstyle(line.get_dash_capstyle() if dashed else line.get_solid_capstyle())
        gc.set_joinstyle(line.get_dash_joinstyle() if dashed else line.get_solid_joinstyle())
        gc.set_dashes(*line._dash_pattern)  # (offset, dashes) in points, scaled by the width
        xy = line.get_xydata()  # (n, 2) data
        transform = line.get_transform()
        points = transform.transform_non_affine(xy) if not transform.is_affine else xy
        path = Path(points, _interpolation_steps=1)
        self.draw_path(gc, path, transform.get_affine(), None)

    def rectangle(self, patch: Rectangle) -> None:
        """An upright :class:`~matplotlib.patches.Rectangle`, read directly."""
        x0, y0, x1, y1 = patch.get_bbox().extents  # data units
        corners = [[x0, y0], [x1, y0], [x1, y1], [x0, y1], [x0, y0]]
        path = Path(corners, closed=True)
        self._patch(patch, path, patch.get_data_transform())

    def _patch(self, patch, path, transform) -> None:
        gc = self._artist_gc(patch)
        edge = patch.get_edgecolor()
        width = patch.get_linewidth()
        if edge[3] == 0 or patch.get_linestyle() in ("None", "none", " ", ""):
            width = 0
        gc.set_foreground(edge, isRGBA=True)
        gc.set_linewidth(width)
        gc.set_dashes(*patch._dash_pattern)
        gc.set_capstyle(patch.get_capstyle())
        gc.set_joinstyle(patch.get_joinstyle())
        gc.set_alpha(patch.get_alpha())
        face = patch.get_facecolor()
        self.draw_path(gc, path, transform, None if face[3] == 0 else face)

    def line_collection(self, collection: LineCollection) -> None:
        """A :class:`~matplotlib.collections.LineCollection` of one style, as one path."""
        segments = [np.asarray(s, dtype=float) for s in collection.get_segments() if len(s)]
        if not segments:
            return
        gc = self._artist_gc(collection)
        gc.set_foreground(collection.get_colors()[0], isRGBA=True)
        gc.set_alpha(collection.get_alpha())
        gc.set_linewidth(collection.get_linewidths()[0])
        gc.set_dashes(*collection.get_linestyles()[0])
        if collection.get_capstyle():
            gc.set_capstyle(collection.get_capstyle())
        if collection.get_joinstyle():
            gc.set_joinstyle(collection.get_joinstyle())
        vertices = np.concatenate(segments)  # (n, 2) data
        codes = np.full(len(vertices), Path.LINETO, dtype=Path.code_type)  # (n,)
        codes[np.cumsum([0] + [len(s) for s in segments[:-1]])] = Path.MOVETO
        path = Path(vertices, codes)
        path.should_simplify = False  # matplotlib draws each segment as a path of its own
        self.draw_path(gc, path, collection.get_transform(), None)

    def text(self, text: Text, cache: dict) -> None:
        """A :class:`~matplotlib.text.Text`: laid out and outlined once, then only moved."""
        anchor = text.get_transform().transform(text.get_unitless_position())  # (2,) display
        clip = text.get_clip_box() if text.get_clip_on() else None
        key = (
            id(text),
            text.get_text(),
            text.get_fontproperties(),
            text.get_rotation(),
            text.get_rotation_mode(),
            text.get_horizontalalignment(),
            text.get_verticalalignment(),
            text._get_multialignment(),
            text._linespacing,
            to_rgba(text.get_color()),
            text.get_alpha(),
            tuple(text.get_path_effects()),
            None if clip is None else tuple(clip.extents),
            text.get_clip_path(),
            self.dpi,
            self.width,
            self.height,
        )
        kept = cache.get(key)
        if kept is None:
            start = len(self.shapes)
            text.draw(self)
            kept = cache[key] = (self.shapes[start:], anchor)
            del self.shapes[start:]
            if len(cache) > 64:  # a text whose string changes every step: keep the newest
                for old in list(cache)[:32]:
                    del cache[old]
        shapes, first = kept
        dx, dy = float(anchor[0] - first[0]), float(first[1] - anchor[1])  # canvas: y down
        moved = [round(dx, 2), round(dy, 2)]
        for data, style in shapes:
            self.shapes.append([data, style, moved] if dx or dy else [data, style])

    def _artist_gc(self, artist) -> GraphicsContextBase:
        """A graphics context with the artist's clip and snap, as ``Artist._set_gc_clip`` sets."""
        gc = self.new_gc()
        if artist.get_clip_on():
            gc.set_clip_rectangle(artist.get_clip_box())
            gc.set_clip_path(artist.get_clip_path())
        gc.set_snap(artist.get_snap())
        gc.set_antialiased(True)
        return gc

    def draw_image(self, gc, x, y, im, transform=None):
        raise Unsupported("an image")

    def draw_gouraud_triangles(self, gc, triangles_array, colors_array, transform):
        raise Unsupported("Gouraud shading")

    def option_image_nocomposite(self):
        return True

    # ------------------------------------------------------------------ style
    def style(self, gc, rgb_face) -> dict | None:
        """A shape's style for the page, or None when it would draw nothing.

        Keys: ``fill`` and ``stroke`` (``#rrggbbaa``), ``width`` (stroke width in device
        pixels), ``cap``, ``join``, ``dash`` and ``offset`` (device pixels), ``clip``
        (``[x, y, width, height]`` in device pixels, y downwards) and ``clipPath`` (SVG
        path data).
        """
        style: dict = {}
        forced = gc.get_forced_alpha()
        if rgb_face is not None:
            alpha = gc.get_alpha() if forced else (rgb_face[3] if len(rgb_face) > 3 else 1.0)
            if alpha > 0:
                style["fill"] = _hex(rgb_face[:3], alpha)
        width = self.points_to_pixels(gc.get_linewidth())
        stroke = gc.get_rgb()
        if width > 0 and stroke[3] > 0:
            style["stroke"] = _hex(stroke[:3], stroke[3])
            style["width"] = round(float(width), 3)
            style["cap"] = _CAPS.get(gc.get_capstyle(), "butt")
            style["join"] = _JOINS.get(gc.get_joinstyle(), "round")
            offset, dashes = gc.get_dashes()
            if dashes is not None and len(dashes):
                style["dash"] = [round(float(self.points_to_pixels(d)), 2) for d in dashes]
                style["offset"] = round(float(self.points_to_pixels(offset or 0)), 2)
        if not style:
            return None
        box = gc.get_clip_rectangle()
        if box is not None:
            x0, y0, x1, y1 = box.extents
            style["clip"] = [round(float(v), 2) for v in (x0, self.height - y1, x1 - x0, y1 - y0)]
        clip_path, clip_transform = gc.get_clip_path()
        if clip_path is not None:
            style["clipPath"] = _svg(clip_path, clip_transform + self._flip)
        return style


def _svg(path, transform) -> str:
    """SVG path data of ``path`` under ``transform`` (matplotlib's own writer, in C)."""
    data = _path.convert_to_string(path, transform, None, False, None, _PRECISION, _COMMANDS, False)
    return data.replace(b" \n", b" ").decode("ascii").rstrip()


def _hex(rgb, alpha) -> str:
    """``#rrggbbaa`` of components in [0, 1].

    >>> _hex((1.0, 0.5, 0.0), 0.25)
    '#ff800040'
    """
    parts = (*rgb, alpha)
    return "#" + "".join(f"{min(255, max(0, round(255 * float(p)))):02x}" for p in parts)
