"""Arrows on a plane: 2-D queries, keys and values drawn from the origin.

The lessons draw 2-D vectors to show what a dot product measures (lesson 1) and
where a weighted mixture of values lands (lesson 5). :func:`plane` sets up a
square, equal-aspect plane with fixed limits; :func:`plot_vectors` draws arrows
on it and returns them, so an explorer can move them with
``quiver.set_UVC(u, v)`` and ``text.set_position``.

Colours are the Okabe–Ito palette of :mod:`attnlab.plots.colours`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from matplotlib.axes import Axes
from matplotlib.lines import Line2D
from matplotlib.quiver import Quiver
from matplotlib.text import Text

from attnlab.plots.colours import OKABE_ITO, QUERY_COLOUR

__all__ = [
    "OKABE_ITO",
    "QUERY_COLOUR",
    "PlaneArtists",
    "VectorArtists",
    "label_position",
    "plane",
    "plot_vectors",
]


def _axes(ax):
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=(3.6, 3.6))
    return ax


@dataclass(frozen=True, eq=False)
class PlaneArtists:
    """What :func:`plane` drew.

    Attributes
    ----------
    ax : matplotlib.axes.Axes
    lines : list of matplotlib.lines.Line2D
        The axis lines (and the unit circle, when drawn).
    """

    ax: Axes
    lines: list[Line2D]


@dataclass(frozen=True, eq=False)
class VectorArtists:
    """What :func:`plot_vectors` drew.

    Attributes
    ----------
    arrows : matplotlib.quiver.Quiver
        All the arrows; move them with ``set_UVC(u, v)``.
    labels : list of matplotlib.text.Text
        The tip labels (empty without labels).
    """

    arrows: Quiver
    labels: list[Text]


def plane(ax=None, limit=2.0, *, unit_circle=True, grid=True):
    """A square plane centred on the origin, equal aspect, fixed limits ``±limit``.

    Parameters
    ----------
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure is made when missing.
    limit : float, default 2.0
        Both axes run from ``-limit`` to ``limit``.
    unit_circle : bool, default True
        Draw the circle of length 1 (dashed, light grey) as a yardstick.
    grid : bool, default True
        Light grid lines.

    Returns
    -------
    PlaneArtists
        ``ax`` and ``lines``: the axis lines (and the circle, when drawn).

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> p = plane(Figure().subplots(), limit=1.5)
    >>> [float(x) for x in p.ax.get_xlim()], p.ax.get_aspect()
    ([-1.5, 1.5], 1.0)
    """
    ax = _axes(ax)
    lines = [
        ax.axhline(0, color="0.55", linewidth=0.8, zorder=0),
        ax.axvline(0, color="0.55", linewidth=0.8, zorder=0),
    ]
    if unit_circle:
        theta = np.linspace(0, 2 * np.pi, 181)  # (181,)
        (circle,) = ax.plot(
            np.cos(theta), np.sin(theta), color="0.75", linestyle="--", linewidth=0.8, zorder=0
        )
        lines.append(circle)
    ax.set_xlim(-limit, limit)
    ax.set_ylim(-limit, limit)
    ax.set_aspect("equal", adjustable="box")
    if grid:
        ax.grid(True, color="0.92", linewidth=0.6)
        ax.set_axisbelow(True)
    ax.set_xlabel("dimension 1")
    ax.set_ylabel("dimension 2")
    return PlaneArtists(ax=ax, lines=lines)


def plot_vectors(
    vectors,
    labels=None,
    *,
    colors=None,
    ax=None,
    width=0.014,
    label_offset=0.12,
    fontsize=11,
    zorder=3,
):
    """Draw 2-D vectors as arrows from the origin, each with an optional label at its tip.

    Parameters
    ----------
    vectors : array_like, shape (n, 2)
        One row per arrow (a single vector of shape (2,) is allowed).
    labels : sequence of str, optional
        ``n`` labels, written just beyond each tip.
    colors : sequence of colours, optional
        ``n`` colours; defaults to :data:`OKABE_ITO` in order.
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure is made when missing. Axis limits are left
        alone (set them first, e.g. with :func:`plane`), so the arrows never
        rescale the plot.
    width : float, default 0.014
        Shaft width as a fraction of the plot width.
    label_offset : float, default 0.12
        Gap between a tip and its label, in data units, along the arrow.
    fontsize : float, default 11
    zorder : float, default 3

    Returns
    -------
    VectorArtists
        ``arrows``: the :class:`~matplotlib.quiver.Quiver` (move it with
        ``set_UVC(u, v)``); ``labels``: list of :class:`~matplotlib.text.Text`
        (empty without labels).

    Raises
    ------
    ValueError
        If ``vectors`` is not (n, 2), or ``labels``/``colors`` have the wrong length.

    Notes
    -----
    Arrows are drawn in data units (``angles="xy", scale_units="xy", scale=1``),
    so a vector (1, 0) reaches exactly x = 1. A zero vector draws nothing.

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> ax = plane(Figure().subplots()).ax
    >>> drawn = plot_vectors([[1, 0], [0, 1]], ["A", "B"], ax=ax)
    >>> drawn.arrows.U.tolist(), [t.get_text() for t in drawn.labels]
    ([1.0, 0.0], ['A', 'B'])
    """
    vectors = np.asarray(vectors, dtype=float)
    if vectors.ndim == 1:
        vectors = vectors[None, :]  # (1, 2)
    if vectors.ndim != 2 or vectors.shape[1] != 2:
        raise ValueError(f"vectors must have shape (n, 2); got shape {vectors.shape}")
    n = len(vectors)
    colors = list(colors) if colors is not None else [OKABE_ITO[i % 7] for i in range(n)]
    if len(colors) != n:
        raise ValueError(f"colors must have {n} entries (one per vector); got {len(colors)}")
    if labels is not None and len(labels) != n:
        raise ValueError(f"labels must have {n} entries (one per vector); got {len(labels)}")
    ax = _axes(ax)
    limits = ax.get_xlim(), ax.get_ylim()
    arrows = ax.quiver(
        np.zeros(n),
        np.zeros(n),
        vectors[:, 0],
        vectors[:, 1],
        color=colors,
        angles="xy",
        scale_units="xy",
        scale=1,
        width=width,
        zorder=zorder,
    )
    ax.set_xlim(*limits[0])
    ax.set_ylim(*limits[1])
    texts = []
    for vector, label, color in zip(vectors, labels or [None] * n, colors, strict=True):
        if label is None:
            continue
        x, y = label_position(vector, label_offset)
        texts.append(
            ax.text(
                x,
                y,
                label,
                color=color,
                fontsize=fontsize,
                fontweight="bold",
                ha="center",
                va="center",
                zorder=zorder + 1,
            )
        )
    return VectorArtists(arrows=arrows, labels=texts)


def label_position(vector, offset=0.12):
    """Where a tip label goes: ``offset`` beyond the tip, along the arrow.

    Parameters
    ----------
    vector : array_like, shape (2,)
    offset : float

    Returns
    -------
    (float, float)
        For a zero vector, a point just above the origin.

    Examples
    --------
    >>> label_position([2.0, 0.0], offset=0.5)
    (2.5, 0.0)
    """
    x, y = (float(v) for v in vector)
    length = float(np.hypot(x, y))
    if length == 0:
        return 0.0, offset
    return x + offset * x / length, y + offset * y / length
