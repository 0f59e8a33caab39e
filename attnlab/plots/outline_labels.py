"""Short texts redrawn every frame, as glyph outlines in one artist instead of Text artists.

An explorer that rewrites many numbers per slider step (the 16 cells of a heatmap, a value
beside each bar) pays for font layout and glyph rendering of every
:class:`~matplotlib.text.Text`, every frame: about 7 ms for 16 cell values on this kind of
machine. :class:`OutlineLabels` draws the same texts as filled outlines in one
:class:`~matplotlib.collections.PathCollection`; each distinct string is laid out once and
cached, and a frame costs about 0.2 ms. Sizes are in points, so the labels keep their size
at any dpi (``explorer.save(dpi=200)``).

Examples
--------
>>> from matplotlib.figure import Figure
>>> ax = Figure().subplots()
>>> labels = OutlineLabels(ax, [(0, 0), (1, 0)], size=10)
>>> labels.set_texts(["0.25", "0.75"], ["black", "white"])
>>> labels.texts, len(labels.get_paths())
(['0.25', '0.75'], 2)
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from matplotlib.collections import PathCollection
from matplotlib.font_manager import FontProperties
from matplotlib.path import Path
from matplotlib.textpath import TextPath
from matplotlib.transforms import Affine2D

FONT = FontProperties()  # the default font, looked up once


class OutlineLabels(PathCollection):
    """Short texts anchored at fixed places, drawn by one artist.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        The axes to add the labels to.
    offsets : array_like, shape (n, 2)
        Where each label is anchored, in data coordinates; change them with
        ``set_offsets``.
    size : float
        Font size in points.

    Attributes
    ----------
    texts : list of str
        What each label shows (empty strings until :meth:`set_texts`).
    """

    def __init__(self, ax, offsets, size):
        to_pixels = Affine2D().scale(1 / 72) + ax.figure.dpi_scale_trans  # points -> pixels
        super().__init__(
            [], offsets=offsets, offset_transform=ax.transData, edgecolors="none", zorder=3
        )
        self.set_transform(to_pixels)
        self.size = float(size)
        self.texts = [""] * len(self.get_offsets())
        ax.add_collection(self, autolim=False)

    def set_texts(self, texts, colors, ha=None) -> None:
        """Show ``texts`` (one per label) in ``colors``, centred, or aligned by ``ha``.

        ``ha`` is one of "left", "center", "right" per label: where the anchor sits on
        the text. Every text is centred vertically on its anchor.
        """
        ha = ["center"] * len(texts) if ha is None else list(ha)
        if not len(texts) == len(colors) == len(ha) == len(self.texts):
            raise ValueError(
                f"texts, colors and ha must have one entry per label ({len(self.texts)}); "
                f"got {len(texts)}, {len(colors)} and {len(ha)}"
            )
        self.texts = [str(t) for t in texts]
        self.set_paths([outline(t, self.size, a) for t, a in zip(self.texts, ha, strict=True)])
        self.set_facecolor(list(colors))

    def set_bar_ends(self, ends, texts, *, inside, pad, colors="black") -> None:
        """Write ``texts`` at the ends of horizontal bars, bar ``i`` at y = ``i``.

        A bar flagged ``inside`` carries its text inside its end, right-aligned and white;
        any other has it just beyond its end, left-aligned, in ``colors`` (one colour, or one
        per bar).

        Examples
        --------
        >>> from matplotlib.figure import Figure
        >>> labels = OutlineLabels(Figure().subplots(), [(0, 0), (0, 1)], size=9)
        >>> labels.set_bar_ends([0.75, 0.25], ["0.75", "0.25"], inside=[True, False], pad=0.25)
        >>> labels.get_offsets().tolist(), labels.get_facecolor()[:, 0].tolist()
        ([[0.5, 0.0], [0.5, 1.0]], [1.0, 0.0])
        """
        ends = np.asarray(ends, dtype=float)  # (n,)
        inside = np.asarray(inside, dtype=bool)  # (n,)
        colors = [colors] * ends.size if isinstance(colors, str) else list(colors)
        offsets = np.column_stack([np.where(inside, ends - pad, ends + pad), np.arange(ends.size)])
        self.set_offsets(offsets)  # (n, 2)
        self.set_texts(
            texts,
            ["white" if i else c for i, c in zip(inside, colors, strict=True)],
            ["right" if i else "left" for i in inside],
        )


@lru_cache(maxsize=2048)
def outline(text: str, size: float, ha: str = "center") -> Path:
    """``text`` as a path in points, centred vertically on 0 and aligned on 0 by ``ha``.

    Examples
    --------
    >>> box = outline("0.50", 10.0).get_extents()
    >>> bool(abs(box.x0 + box.x1) < 0.5 and abs(box.y0 + box.y1) < 0.5)   # centred
    True
    >>> len(outline(" ", 10.0).vertices)                                  # nothing to draw
    0
    """
    if ha not in ("left", "center", "right"):
        raise ValueError(f"ha must be 'left', 'center' or 'right'; got {ha!r}")
    if not text.strip():  # nothing to draw (TextPath refuses an empty string)
        return Path(np.zeros((0, 2)), readonly=True)
    path = TextPath((0, 0), text, size=size, prop=FONT)
    # The box of the vertices: fonts put their extreme points on the outline, and this is
    # ~100x faster than Path.get_extents, which solves for the extrema of every curve.
    drawn = path.vertices[path.codes != Path.CLOSEPOLY]  # (n, 2) a closing vertex is a dummy
    (x0, y0), (x1, y1) = drawn.min(axis=0), drawn.max(axis=0)
    dx = {"left": x0, "center": (x0 + x1) / 2, "right": x1}[ha]
    # (n_vertices, 2); read-only, as the cache hands the same path to every caller
    return Path(path.vertices - [dx, (y0 + y1) / 2], path.codes, readonly=True)
