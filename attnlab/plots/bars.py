"""Bars redrawn every frame, as one path instead of one Rectangle per bar.

``ax.bar`` makes a :class:`~matplotlib.patches.Rectangle` per bar, and an explorer that
moves its bars on every slider step pays a whole patch draw per bar per frame (its own
transform, graphics context and Agg call): about 0.08-0.15 ms a bar on this kind of
machine. :class:`Bars` is one :class:`~matplotlib.patches.PathPatch` whose path holds
every bar as a closed rectangle, so a frame costs one draw (four bars: 0.61 ms as
Rectangles, 0.24 ms as one path). Agg snaps the rectangles' edges to whole pixels exactly
as it snaps a Rectangle's, so the pixels are the same as ``ax.bar``'s; ``tests/test_bars.py``
compares them.

All bars share one colour; a legend shows them as one entry, like ``ax.bar(label=...)``.

Examples
--------
>>> from matplotlib.figure import Figure
>>> ax = Figure().subplots()
>>> bars = Bars(ax, [0, 1, 2], 0.5, facecolor="tab:blue", label="weights")
>>> bars.set_values([0.2, 0.5, 0.3])
>>> bars.values.tolist()
[0.2, 0.5, 0.3]
>>> bars.get_path().vertices[5:10].tolist()   # bar 1: from its base, anticlockwise
[[0.75, 0.0], [1.25, 0.0], [1.25, 0.5], [0.75, 0.5], [0.75, 0.0]]
"""

from __future__ import annotations

import numpy as np
from matplotlib.patches import PathPatch
from matplotlib.path import Path

#: One bar: the four corners in a Rectangle's order, then the closing vertex.
_CODES = [Path.MOVETO, Path.LINETO, Path.LINETO, Path.LINETO, Path.CLOSEPOLY]


class Bars(PathPatch):
    """Bars of one colour from a common base at 0, drawn as a single path.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        The axes to add the bars to.
    positions : array_like, shape (n,)
        Centre of each bar along the category axis (x, or y when ``horizontal``).
    thickness : float
        Width of every bar (its height when ``horizontal``), in data units; > 0.
    horizontal : bool, default False
        Bars grow along x, like ``ax.barh``; otherwise along y, like ``ax.bar``.
    **kwargs
        :class:`~matplotlib.patches.Patch` properties (``facecolor``, ``label``, ...);
        the defaults are those of the Rectangles ``ax.bar`` makes.

    Attributes
    ----------
    positions : ndarray, shape (n,)
        The bars' centres (read-only).
    thickness : float
    horizontal : bool

    Notes
    -----
    As with ``ax.bar``, the axes' data limits take in the bars as they are made (all of
    length 0, so the category axis fits them and the value axis sticks at their base), and
    :meth:`set_values` does not move the limits: an explorer sets the value axis's limits
    itself, as a picture whose scale must not move from step to step.
    """

    _edge_default = False  # like a Rectangle: no edge unless one is asked for (PathPatch: black)

    def __init__(self, ax, positions, thickness: float, *, horizontal: bool = False, **kwargs):
        positions = np.array(positions, dtype=float)  # (n,) a copy: the caller's is not kept
        if positions.ndim != 1 or not np.isfinite(positions).all():
            raise ValueError(
                f"positions must be a 1-D array of finite numbers; got shape {positions.shape}"
            )
        if not (np.isfinite(thickness) and thickness > 0):
            raise ValueError(f"thickness must be a finite number > 0; got {thickness!r}")
        positions.flags.writeable = False
        self.positions = positions
        self.thickness = float(thickness)
        self.horizontal = bool(horizontal)
        self._values = np.zeros(positions.size)  # (n,)
        self._shown = np.ones(positions.size, dtype=bool)  # (n,)
        super().__init__(self._bars_path(), **kwargs)
        (self.sticky_edges.x if self.horizontal else self.sticky_edges.y).append(0.0)
        ax.add_patch(self)
        ax.autoscale(enable=None)  # as ax.bar does: fit the view at the next draw

    @property
    def values(self) -> np.ndarray:
        """Each bar's length, shape ``(n,)`` (a copy); 0 for a bar not shown."""
        return np.where(self._shown, self._values, 0.0)

    @property
    def shown(self) -> np.ndarray:
        """Which bars are drawn, shape ``(n,)`` (a copy)."""
        return self._shown.copy()

    def set_values(self, values, where=None) -> None:
        """Give bar ``i`` the length ``values[i]`` (negative values grow the other way).

        Parameters
        ----------
        values : array_like, shape (n,)
            Finite lengths, one per bar.
        where : array_like of bool, shape (n,), optional
            Draw only the bars where this is True (default: all). Two sets of bars in two
            colours at the same positions, each showing the bars the other leaves out, give
            bars whose colour changes from frame to frame. A bar of length 0 that is shown
            still draws its edge, if it has one, as a Rectangle of width 0 does.

        Raises
        ------
        ValueError
            If ``values`` is not one finite number per bar, or ``where`` not one bool per bar.
        """
        values = np.array(values, dtype=float)  # (n,) a copy
        if values.shape != self._values.shape:
            raise ValueError(
                f"values must have one entry per bar, shape {self._values.shape}; "
                f"got shape {values.shape}"
            )
        if not np.isfinite(values).all():
            raise ValueError(f"values must be finite; got {values.tolist()}")
        shown = np.ones(values.shape, dtype=bool) if where is None else np.asarray(where)
        if shown.shape != values.shape or shown.dtype != bool:
            raise ValueError(
                f"where must be one bool per bar, shape {values.shape}; "
                f"got {shown.dtype} with shape {shown.shape}"
            )
        self._values, self._shown = values, shown.copy()
        self.set_path(self._bars_path())

    def _bars_path(self) -> Path:
        """Every bar as a closed rectangle, corners in the order a Rectangle's path has."""
        low = self.positions[self._shown] - self.thickness / 2  # (m,) the bars shown
        high = low + self.thickness  # (m,)
        base = np.zeros_like(low)  # (m,)
        end = self._values[self._shown]  # (m,)
        if self.horizontal:
            x0, x1, y0, y1 = base, end, low, high  # (m,) each
        else:
            x0, x1, y0, y1 = low, high, base, end  # (m,) each
        xs = np.stack([x0, x1, x1, x0, x0], axis=1)  # (m, 5)
        ys = np.stack([y0, y0, y1, y1, y0], axis=1)  # (m, 5)
        return Path(np.stack([xs, ys], axis=-1).reshape(-1, 2), np.tile(_CODES, low.size))
