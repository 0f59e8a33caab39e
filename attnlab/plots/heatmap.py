"""A score or attention matrix as a heatmap: rows are queries, columns are keys.

:func:`plot_heatmap` draws the matrix with token labels and the value written in
every cell, and returns the image and the cell texts so an explorer can change
them in place with :func:`update_heatmap` (no new artists, no new colour bar).

Colour scales: scores that take both signs get the diverging ``RdBu_r`` map
centred on 0 (red positive, blue negative); non-negative matrices such as
attention weights get ``viridis``. Both stay readable for the common kinds of
colour blindness. Pass ``vmin``/``vmax`` to fix the scale, e.g. ``0, 1`` for
weights, so that pictures can be compared.

Explorers show attention weights with :func:`weights_heatmap` and change them with
:func:`show_weights`: the same labelled picture, drawn by artists that are quick to redraw.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from matplotlib import colormaps
from matplotlib.axes import Axes
from matplotlib.collections import PolyCollection
from matplotlib.colorbar import Colorbar
from matplotlib.image import AxesImage
from matplotlib.path import Path

from attnlab.plots.bars import Bars
from attnlab.plots.colours import WEIGHT_CMAP
from attnlab.plots.outline_labels import OutlineLabels


def as_colormap(cmap):
    """A :class:`~matplotlib.colors.Colormap` from a name or a colormap (no global state used)."""
    return colormaps[cmap] if isinstance(cmap, str) else cmap


def default_limits(matrix):
    """The colour limits used when none are given.

    Symmetric ``(-m, m)`` with ``m = max |matrix|`` if any entry is negative,
    else ``(0, max)``; never an empty range.

    Parameters
    ----------
    matrix : array_like, shape (n_rows, n_cols)

    Returns
    -------
    (float, float)

    Examples
    --------
    >>> default_limits([[1.0, -3.0], [2.0, 0.5]])
    (-3.0, 3.0)
    >>> default_limits([[0.2, 0.8]])
    (0.0, 0.8)
    >>> default_limits([[0.0]])
    (0.0, 1.0)
    >>> default_limits([[1.0, -np.inf]])   # masked entries are ignored
    (0.0, 1.0)
    """
    matrix = np.asarray(matrix, dtype=float)
    finite = matrix[np.isfinite(matrix)]  # masked entries (±inf) do not set the scale
    if finite.size == 0:
        return (0.0, 1.0)
    top = float(np.max(np.abs(finite))) or 1.0
    return (-top, top) if np.min(finite) < 0 else (0.0, top)


def default_cmap(vmin, vmax) -> str:
    """``"RdBu_r"`` when the colour range spans 0 from both sides, else ``"viridis"``.

    Examples
    --------
    >>> default_cmap(-2, 2), default_cmap(0, 1)
    ('RdBu_r', 'viridis')
    """
    return "RdBu_r" if vmin < 0 < vmax else "viridis"


@dataclass(frozen=True, eq=False)
class HeatmapArtists:
    """What :func:`plot_heatmap` drew; :func:`update_heatmap` changes these artists in place.

    Attributes
    ----------
    image : matplotlib.image.AxesImage
    texts : ndarray of matplotlib.text.Text, shape (n_rows, n_cols), or None
        The cell texts; ``None`` without annotations.
    colorbar : matplotlib.colorbar.Colorbar or None
    fmt : str
        Format of the cell texts.
    ax : matplotlib.axes.Axes
    """

    image: AxesImage
    texts: np.ndarray | None  # (n_rows, n_cols) Text
    colorbar: Colorbar | None
    fmt: str
    ax: Axes


def plot_heatmap(
    matrix,
    row_labels=None,
    col_labels=None,
    *,
    ax=None,
    vmin=None,
    vmax=None,
    cmap=None,
    annotate=True,
    fmt="{:.2f}",
    row_title="query",
    col_title="key",
    colorbar=True,
    colorbar_label="score",
    fontsize=10,
):
    """Draw ``matrix`` as a heatmap with labelled rows (queries) and columns (keys).

    Parameters
    ----------
    matrix : array_like, shape (n_rows, n_cols)
        Real numbers, e.g. raw scores ``Q @ K.T`` or attention weights. Entries
        that are ``±inf`` (masked scores) are drawn light grey and written ``−∞``
        / ``+∞``; NaN is refused.
    row_labels, col_labels : sequence of str, optional
        Tick labels (tokens); default ``0, 1, ...``.
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure is made when missing.
    vmin, vmax : float, optional
        Fixed colour limits; each defaults to :func:`default_limits`.
    cmap : str or Colormap, optional
        Defaults to :func:`default_cmap` of the limits.
    annotate : bool, default True
        Write each value in its cell (black or white, whichever reads better).
    fmt : str, default ``"{:.2f}"``
        Format of the cell texts.
    row_title, col_title : str
        Axis labels, default ``"query"`` and ``"key"``.
    colorbar : bool, default True
        Add a colour bar labelled ``colorbar_label``.
    fontsize : float, default 10
        Size of the cell texts.

    Returns
    -------
    HeatmapArtists
        ``image`` (:class:`~matplotlib.image.AxesImage`), ``texts`` (object array
        of :class:`~matplotlib.text.Text`, shape (n_rows, n_cols), or ``None``
        without annotations), ``colorbar`` (or ``None``), ``fmt`` and ``ax``.

    Raises
    ------
    ValueError
        If ``matrix`` is not 2-D or contains NaN, or a label list has the wrong length.

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> scores = np.array([[2.0, -1.0, 0.5], [0.0, 1.5, -2.0]])     # 2 queries, 3 keys
    >>> drawn = plot_heatmap(scores, ["a", "b"], ["x", "y", "z"], ax=Figure().subplots())
    >>> drawn.texts.shape, drawn.texts[0, 1].get_text(), drawn.image.get_clim()
    ((2, 3), '-1.00', (-2.0, 2.0))
    """
    matrix = _as_matrix(matrix)
    n_rows, n_cols = matrix.shape
    row_labels = _labels(row_labels, n_rows, "row_labels")
    col_labels = _labels(col_labels, n_cols, "col_labels")
    low, high = default_limits(matrix)
    vmin = low if vmin is None else float(vmin)
    vmax = high if vmax is None else float(vmax)
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(
            figsize=(1.0 + 0.9 * n_cols, 0.6 + 0.75 * n_rows), layout="constrained"
        )
    colours = as_colormap(cmap or default_cmap(vmin, vmax)).with_extremes(bad="0.85")
    image = ax.imshow(
        np.ma.masked_invalid(matrix),
        cmap=colours,
        vmin=vmin,
        vmax=vmax,
        aspect="auto",
        interpolation="nearest",
    )
    ax.set_xticks(range(n_cols), col_labels)
    ax.set_yticks(range(n_rows), row_labels)
    ax.tick_params(length=0)
    ax.set_xlabel(col_title)
    ax.set_ylabel(row_title)
    for spine in ax.spines.values():
        spine.set_visible(False)
    texts = None
    if annotate:
        texts = np.empty((n_rows, n_cols), dtype=object)  # (n_rows, n_cols) Text
        for i in range(n_rows):
            for j in range(n_cols):
                texts[i, j] = ax.text(j, i, "", ha="center", va="center", fontsize=fontsize)
    bar = ax.figure.colorbar(image, ax=ax, label=colorbar_label) if colorbar else None
    drawn = HeatmapArtists(image=image, texts=texts, colorbar=bar, fmt=fmt, ax=ax)
    update_heatmap(drawn, matrix)
    return drawn


def update_heatmap(drawn, matrix) -> None:
    """Show a new ``matrix`` (same shape) in a heatmap made by :func:`plot_heatmap`, in place.

    The colour limits stay as they were, so frames can be compared.

    Parameters
    ----------
    drawn : HeatmapArtists
        What :func:`plot_heatmap` returned.
    matrix : array_like, shape (n_rows, n_cols)

    Raises
    ------
    ValueError
        If the shape differs from the one drawn, or ``matrix`` contains NaN.

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> drawn = plot_heatmap([[0.1, 0.9]], vmin=0, vmax=1, ax=Figure().subplots())
    >>> update_heatmap(drawn, [[0.7, 0.3]])
    >>> [t.get_text() for t in drawn.texts[0]]
    ['0.70', '0.30']
    """
    matrix = _as_matrix(matrix)
    shown = drawn.image.get_array().shape
    if matrix.shape != shown:
        raise ValueError(f"matrix must keep the drawn shape {shown}; got shape {matrix.shape}")
    drawn.image.set_data(np.ma.masked_invalid(matrix))  # (n_rows, n_cols)
    if drawn.texts is None:
        return
    texts, colours = cell_labels(drawn.image, matrix, drawn.fmt)
    for (i, j), text in np.ndenumerate(drawn.texts):
        text.set_text(texts[i, j])
        text.set_color(colours[i, j])


def cell_labels(image, matrix, fmt="{:.2f}") -> tuple[np.ndarray, np.ndarray]:
    """The text of every cell and the colour that reads best on it, black or white.

    For explorers that write the cell values with their own, faster artist
    (:class:`attnlab.plots.outline_labels.OutlineLabels`) instead of Text artists.

    Parameters
    ----------
    image : matplotlib.image.AxesImage
        The heatmap's image (``plot_heatmap(...).image``): its colour map and limits.
    matrix : array_like, shape (n_rows, n_cols)
    fmt : str, default ``"{:.2f}"``

    Returns
    -------
    texts, colours : ndarray of str, shape (n_rows, n_cols) each
        ``fmt`` of each value (``−∞``/``+∞`` for infinities), and ``"white"`` on dark
        cells, ``"black"`` on light ones.

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> drawn = plot_heatmap([[0.1, 0.9]], vmin=0, vmax=1, cmap="viridis",
    ...                      ax=Figure().subplots(), annotate=False)
    >>> texts, colours = cell_labels(drawn.image, [[0.1, 0.9]])
    >>> texts.tolist(), colours.tolist()
    ([['0.10', '0.90']], [['white', 'black']])
    """
    matrix = _as_matrix(matrix)
    rgba = image.cmap(image.norm(np.ma.masked_invalid(matrix)))  # (n_rows, n_cols, 4)
    dark = rgba[..., :3] @ np.array([0.2126, 0.7152, 0.0722]) < 0.5  # (n_rows, n_cols)
    texts = np.array([[_cell_text(v, fmt) for v in row] for row in matrix], dtype=object)
    colours = np.where(dark, "white", "black").astype(object)  # (n_rows, n_cols)
    return texts, colours


def weights_heatmap(tokens, *, ax=None, colorbar=True, squares=True, cell_size=9.0) -> dict:
    """An (n, n) attention-weights heatmap for an explorer, to change with :func:`show_weights`.

    Token labels on both axes, the colour map :data:`~attnlab.plots.colours.WEIGHT_CMAP`
    on the fixed scale 0 … 1 (so frames compare), and the value of every cell written by one
    :class:`~attnlab.plots.outline_labels.OutlineLabels` artist (~0.2 ms a frame, where 16
    Text artists took ~7 ms).

    Parameters
    ----------
    tokens : sequence of str, length n
        The queries (rows) and keys (columns).
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure is made when missing.
    colorbar : bool, default True
        Add a colour bar labelled "weight".
    squares : bool, default True
        Colour the cells with one collection of n² squares and hide the image: ~0.3 ms a
        frame, where the image, resampled to the axes every frame, took ~3 ms. The hidden
        image still holds the weights and gives the colour bar and the label colours.
    cell_size : float, default 9.0
        Font size of the cell values, in points.

    Returns
    -------
    dict of str to Artist
        The artists a new frame changes: ``"image"`` (the
        :class:`~matplotlib.image.AxesImage`, hidden when ``squares``), ``"squares"`` (a
        :class:`~matplotlib.collections.PolyCollection`, only when ``squares``) and
        ``"cells"`` (the labels, row by row). An explorer can merge them into its artists.

    Raises
    ------
    ValueError
        If ``tokens`` is empty.

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> drawn = weights_heatmap(["a", "b"], ax=Figure().subplots())
    >>> drawn["image"].get_visible(), drawn["image"].get_clim(), len(drawn["cells"].texts)
    (False, (0.0, 1.0), 4)
    >>> show_weights(drawn, [[1.0, 0.0], [0.5, 0.5]])
    >>> drawn["cells"].texts, drawn["squares"].get_array().tolist()
    (['1.00', '0.00', '0.50', '0.50'], [1.0, 0.0, 0.5, 0.5])
    """
    tokens = [str(token) for token in tokens]
    n = len(tokens)
    if n == 0:
        raise ValueError("tokens must name at least one token; got none")
    heat = plot_heatmap(
        np.full((n, n), 1.0 / n),
        tokens,
        tokens,
        ax=ax,
        vmin=0.0,
        vmax=1.0,
        cmap=WEIGHT_CMAP,
        annotate=False,
        colorbar=colorbar,
        colorbar_label="weight",
    )
    drawn = {"image": heat.image}
    if squares:
        heat.image.set_visible(False)
        drawn["squares"] = PolyCollection(
            unit_squares(n),
            cmap=heat.image.get_cmap(),
            norm=heat.image.norm,
            edgecolors="none",
            zorder=1,
        )
        heat.ax.add_collection(drawn["squares"], autolim=False)
    cells = [(j, i) for i in range(n) for j in range(n)]  # (n * n,) (x, y) row by row
    drawn["cells"] = OutlineLabels(heat.ax, cells, cell_size)
    return drawn


def row_bars(ax, tokens, colours, *, reference, xlim, xlabel, value_size):
    """A panel of one horizontal bar per heatmap row, beside :func:`weights_heatmap`.

    Query 0 on top with its token as the tick label, as in the heatmap; two sets of bars at
    the same places (say, the usual colour and a highlight, the caller shows each bar in one
    of them), a value label per row, and a dotted reference line. The top and right spines
    are hidden. The caller sets the x ticks, a title and anything else.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
    tokens : sequence of str
        One per row.
    colours : (colour, colour)
        The face and edge colour of each set of bars.
    reference : float
        Where the dotted vertical line stands (a row's expected value).
    xlim : float
        The right end of the x axis (the left is 0).
    xlabel : str
    value_size : float
        Font size of the value labels (:class:`~attnlab.plots.outline_labels.OutlineLabels`).

    Returns
    -------
    bars, other : attnlab.plots.bars.Bars
        The two sets of bars, in the order of ``colours``.
    labels : attnlab.plots.outline_labels.OutlineLabels
        One label per row, at ``(0, row)`` until moved.

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> ax = Figure().subplots()
    >>> bars, other, labels = row_bars(
    ...     ax, ["a", "b"], ("C0", "C1"), reference=1.0, xlim=2.0, xlabel="sum", value_size=8
    ... )
    >>> [float(y) for y in ax.get_ylim()], [t.get_text() for t in ax.get_yticklabels()]
    ([1.5, -0.5], ['a', 'b'])
    """
    n = len(tokens)
    rows = np.arange(n)  # (n,) query 0 at the top, as in the heatmap
    bars, other = (
        Bars(ax, rows, 0.6, horizontal=True, facecolor=colour, edgecolor=colour)
        for colour in colours
    )
    labels = OutlineLabels(ax, np.column_stack([np.zeros(n), rows]), value_size)
    ax.axvline(reference, color="black", linestyle=":", linewidth=1.2)
    ax.set(xlim=(0.0, xlim), ylim=(n - 0.5, -0.5), xlabel=xlabel)
    ax.set_yticks(rows, tokens)
    ax.tick_params(axis="y", length=0)
    ax.spines[["top", "right"]].set_visible(False)
    return bars, other, labels


def show_weights(drawn, weights, *, fmt="{:.2f}", exact_zero=False) -> None:
    """Show ``weights`` in a heatmap made by :func:`weights_heatmap`, changing its artists in place.

    Parameters
    ----------
    drawn : dict
        What :func:`weights_heatmap` returned (other keys are ignored).
    weights : array_like, shape (n, n)
        May hold NaN (a broken softmax): such a cell is drawn in the "bad" grey and written
        "nan".
    fmt : str, default ``"{:.2f}"``
        Format of the cell values.
    exact_zero : bool, default False
        Write an exact 0 as "0", told apart from a small weight shown as "0.00".

    Raises
    ------
    ValueError
        If ``weights`` does not have the drawn shape (n, n).

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> drawn = weights_heatmap(["a", "b"], ax=Figure().subplots(), squares=False)
    >>> show_weights(drawn, [[1.0, 0.0], [np.nan, 0.001]], exact_zero=True)
    >>> drawn["cells"].texts
    ['1.00', '0', 'nan', '0.00']
    """
    weights = np.asarray(weights, dtype=np.float64)  # (n_q, n_k)
    image = drawn["image"]
    shape = image.get_array().shape  # (n, n)
    if weights.shape != shape:
        raise ValueError(f"weights must keep the drawn shape {shape}; got shape {weights.shape}")
    is_nan = np.isnan(weights)  # (n_q, n_k)
    shown = np.ma.masked_invalid(weights)  # (n_q, n_k) NaN in the colour map's "bad" grey
    image.set_data(shown)
    if "squares" in drawn:
        drawn["squares"].set_array(shown.ravel())  # (n_q * n_k,)
    texts, colours = cell_labels(image, np.where(is_nan, 0.0, weights), fmt)
    if exact_zero:
        texts[weights == 0] = "0"
    texts[is_nan], colours[is_nan] = "nan", "black"
    drawn["cells"].set_texts(texts.ravel(), colours.ravel())


def unit_squares(n: int) -> np.ndarray:
    """The corners of every cell of an (n, n) heatmap, row by row, shape (n * n, 4, 2).

    Examples
    --------
    >>> unit_squares(2)[1].tolist()   # row 0, column 1
    [[0.5, -0.5], [1.5, -0.5], [1.5, 0.5], [0.5, 0.5]]
    """
    rows, cols = np.divmod(np.arange(n * n), n)  # (n * n,) each
    corners = np.array([(-0.5, -0.5), (0.5, -0.5), (0.5, 0.5), (-0.5, 0.5)])  # (4, 2) x, y
    return np.column_stack([cols, rows])[:, None, :] + corners  # (n * n, 4, 2)


def cell_squares(mask) -> Path:
    """One path made of the unit squares of the cells where ``mask`` (n_q, n_k) is False.

    One compound path, hatched in a single draw: ~0.3 ms a frame, where a hatched
    collection of up to 36 squares took ~2.3 ms.

    Examples
    --------
    >>> cell_squares(np.array([[True, False]])).vertices.tolist()
    [[0.5, -0.5], [1.5, -0.5], [1.5, 0.5], [0.5, 0.5], [0.5, -0.5]]
    """
    rows, cols = np.nonzero(~np.asarray(mask, dtype=bool))  # (m,) each
    corners = np.array([(-0.5, -0.5), (0.5, -0.5), (0.5, 0.5), (-0.5, 0.5), (-0.5, -0.5)])
    vertices = np.column_stack([cols, rows])[:, None, :] + corners  # (m, 5, 2)
    codes = [Path.MOVETO, *[Path.LINETO] * 3, Path.CLOSEPOLY] * len(rows)  # (5 m,)
    return Path(vertices.reshape(-1, 2), codes if len(rows) else None)


def _cell_text(value: float, fmt: str) -> str:
    if np.isinf(value):
        return "−∞" if value < 0 else "+∞"
    return fmt.format(value)


def _as_matrix(matrix) -> np.ndarray:
    matrix = np.asarray(matrix, dtype=float)
    if matrix.ndim != 2:
        raise ValueError(f"matrix must be 2-D (n_rows, n_cols); got shape {matrix.shape}")
    if np.isnan(matrix).any():
        raise ValueError(f"matrix must not contain NaN; got NaN in shape {matrix.shape}")
    return matrix


def _labels(labels, n: int, name: str) -> list[str]:
    if labels is None:
        return [str(i) for i in range(n)]
    labels = [str(label) for label in labels]
    if len(labels) != n:
        raise ValueError(f"{name} must have {n} entries; got {len(labels)}")
    return labels
