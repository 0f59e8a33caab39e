"""Overflow lab: naive and stable softmax side by side in float16, float32 and float64.

A fixed score row ``x`` is multiplied by a scale ``s`` (1 … 1000, log-spaced) and
cast to each dtype. The naive formula ``exp(x) / sum(exp(x))`` overflows as soon
as the largest score passes ``ln(max of the dtype)`` — about 11 for float16, 89
for float32 and 710 for float64 — and returns NaN; the max-shifted
:func:`attnlab.softmax` never does. The pure part is :func:`overflow_state`.

Examples
--------
>>> {name: round(limit, 2) for name, limit in overflow_limits().items()}
{'float16': 11.09, 'float32': 88.72, 'float64': 709.78}
>>> state = overflow_state([2.0, 1.0, 1.0], scale=100.0)
>>> state.naive_broken.tolist(), bool(np.isfinite(state.stable).all())
([True, True, False], True)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from matplotlib.collections import PolyCollection
from matplotlib.patches import Patch

import attnlab
from attnlab.controls import Dropdown
from attnlab.examples import COLLAPSE_ROW, SCORE_ROW
from attnlab.explorers.base import Explorer, stops_slider
from attnlab.explorers.number_text import general
from attnlab.plots.colours import PALETTE
from attnlab.plots.log_ticks import power_of_ten_labels

GROUP_WIDTH = 0.8  # of the unit space between two keys

DTYPES = (np.float16, np.float32, np.float64)
DTYPE_COLOURS = (PALETTE["orange"], PALETTE["green"], PALETTE["blue"])
NAN_COLOUR = PALETTE["vermillion"]
NAN_FILL = "#fbe3d6"
# Sparse hatching: Agg draws hatch lines one by one, and "xxx" made a frame twice as slow.
NAN_HATCH = "//"


def row_label(row) -> str:
    """A score row as the learner would type it, e.g. ``[2, 1, 1]``.

    Examples
    --------
    >>> row_label(np.array([1.0, 0.5, 2.5, -0.1]))
    '[1, 0.5, 2.5, -0.1]'
    """
    return "[" + ", ".join(f"{float(v):g}" for v in row) + "]"


# The rows the lab offers, labelled from the data so a label cannot drift from its row.
ROWS = {row_label(row): row for row in (SCORE_ROW, COLLAPSE_ROW)}
# 1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8 in each decade: roughly log-spaced, readable labels.
SCALES = tuple(float(m * 10.0**e) for e in range(3) for m in (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8))
SCALES = (*SCALES, 1000.0)
RULER_RANGE = (1.0, 5000.0)


def overflow_limits() -> dict:
    """``ln`` of the largest finite number of each dtype: where ``exp`` overflows.

    Returns
    -------
    dict of str to float
        ``{"float16": …, "float32": …, "float64": …}``, from ``np.finfo``.

    Examples
    --------
    >>> limits = overflow_limits()
    >>> list(limits)
    ['float16', 'float32', 'float64']
    >>> with np.errstate(over="ignore"):
    ...     bool(np.isinf(np.exp(np.float32(limits["float32"] + 0.01))))
    True
    """
    return {np.dtype(d).name: float(np.log(np.finfo(d).max)) for d in DTYPES}


@dataclass(frozen=True, eq=False)
class OverflowState:
    """What :func:`overflow_state` computes: naive and stable softmax of one row in 3 dtypes.

    Attributes
    ----------
    row : ndarray, shape (n,)
        The score row, float64.
    scale : float
    scores : ndarray, shape (n,)
        ``scale * row``, float64.
    largest : float
        Its max.
    dtypes : tuple of str
        The 3 dtype names.
    limits : ndarray, shape (3,)
        ln of each dtype's max.
    naive, stable : ndarray, shape (3, n)
        Weights as float64 (``naive`` may hold NaN).
    naive_nan : ndarray of bool, shape (3, n)
    naive_broken : ndarray of bool, shape (3,)
        True where the naive row has NaN or does not sum to 1 (a float16 sum can overflow
        while each term still fits).
    exp_overflows : ndarray of bool, shape (3,)
        True where ``largest`` exceeds the dtype's limit.
    """

    row: np.ndarray  # (n,)
    scale: float
    scores: np.ndarray  # (n,)
    largest: float
    dtypes: tuple[str, ...]
    limits: np.ndarray  # (3,)
    naive: np.ndarray  # (3, n)
    stable: np.ndarray  # (3, n)
    naive_nan: np.ndarray  # (3, n) bool
    naive_broken: np.ndarray  # (3,) bool
    exp_overflows: np.ndarray  # (3,) bool


def overflow_state(row, scale) -> OverflowState:
    """Naive and stable softmax of ``scale * row`` in float16, float32 and float64.

    Parameters
    ----------
    row : array_like, shape (n,)
        A score row (finite).
    scale : float
        Multiplies the row before it is cast to each dtype.

    Returns
    -------
    OverflowState
        The scores, both softmaxes in every dtype, and where the naive one breaks.

    Notes
    -----
    No floating-point warning escapes: :func:`attnlab.naive_softmax` silences
    its own overflow, and the stable softmax cannot overflow.

    Examples
    --------
    >>> s = overflow_state([1.0, 0.5, 2.5, -0.1], scale=1.0)
    >>> bool(np.allclose(s.naive, s.stable, atol=1e-3)), s.naive_broken.tolist()
    (True, [False, False, False])
    >>> s = overflow_state([1.0, 0.5, 2.5, -0.1], scale=1000.0)
    >>> s.naive_nan.tolist()[2], s.stable[2].tolist()
    ([True, False, True, False], [0.0, 0.0, 1.0, 0.0])
    """
    row = np.asarray(row, dtype=np.float64)  # (n,)
    scores = scale * row  # (n,)
    naive = np.stack(
        [attnlab.naive_softmax(scores.astype(d)).astype(np.float64) for d in DTYPES]
    )  # (3, n)
    stable = np.stack(
        [attnlab.softmax(scores.astype(d)).astype(np.float64) for d in DTYPES]
    )  # (3, n)
    naive_nan = np.isnan(naive)  # (3, n)
    sums = np.where(naive_nan, 0.0, naive).sum(axis=-1)  # (3,)
    limits = np.array(list(overflow_limits().values()))  # (3,)
    largest = float(np.max(scores))
    return OverflowState(
        row=row,
        scale=float(scale),
        scores=scores,
        largest=largest,
        dtypes=tuple(np.dtype(d).name for d in DTYPES),
        limits=limits,
        naive=naive,
        stable=stable,
        naive_nan=naive_nan,
        naive_broken=naive_nan.any(axis=-1) | ~np.isclose(sums, 1.0, atol=1e-2),
        exp_overflows=largest > limits,
    )


def bar_rectangles(heights) -> np.ndarray:
    """Corners of grouped bars: group ``j`` at x = j, one bar per row of ``heights``.

    Parameters
    ----------
    heights : ndarray, shape (m, n)
        Bar ``(i, j)`` is the ``i``-th bar of group ``j``.

    Returns
    -------
    ndarray, shape (m, n, 4, 2)
        The four (x, y) corners of each bar, counter-clockwise from bottom left.

    Examples
    --------
    >>> bar_rectangles(np.array([[1.0]])).tolist()
    [[[[-0.4, 0.0], [0.4, 0.0], [0.4, 1.0], [-0.4, 1.0]]]]
    """
    m, n = heights.shape
    width = GROUP_WIDTH / m
    left = np.arange(n)[None, :] + (np.arange(m)[:, None] - m / 2) * width  # (m, n)
    right = left + width  # (m, n)
    zero = np.zeros_like(heights)  # (m, n)
    corners = [(left, zero), (right, zero), (right, heights), (left, heights)]
    return np.stack([np.stack(c, axis=-1) for c in corners], axis=-2)  # (m, n, 4, 2)


class OverflowExplorer(Explorer):
    """Scale a score row until the naive softmax breaks, dtype by dtype; the stable one never does.

    Parameters
    ----------
    **initial
        Starting control values: ``scale`` (one of :data:`SCALES`, 1 … 1000)
        and ``row`` (a key of :data:`ROWS`).

    Examples
    --------
    >>> lab = OverflowExplorer(scale=50.0)
    >>> lab.state.naive_broken.tolist()
    [True, True, False]
    """

    name = "overflow"
    figsize = (7.0, 4.1)

    def make_controls(self) -> dict:
        return {
            "scale": stops_slider(
                SCALES, 1.0, "scale s (scores = s · x)", label="{:g}".format, width="480px"
            ),
            "row": Dropdown(options=list(ROWS), value=next(iter(ROWS)), description="score row x"),
        }

    def compute(self, scale, row) -> OverflowState:
        return overflow_state(ROWS[row], scale)

    def build(self, figure):
        grid = figure.add_gridspec(2, 2, height_ratios=(1, 2.6))
        ruler = figure.add_subplot(grid[0, :])
        naive_ax = figure.add_subplot(grid[1, 0])
        stable_ax = figure.add_subplot(grid[1, 1], sharey=naive_ax)
        marker = self._build_ruler(ruler)
        n = max(r.size for r in ROWS.values())
        naive = self._build_bars(naive_ax, n, "naive  exp(x) / Σ exp(x)")
        stable = self._build_bars(stable_ax, n, "stable  exp(x − max) / Σ exp(x − max)")
        stable_ax.tick_params(labelleft=False)
        naive_ax.set_ylabel("weight")
        handles = [Patch(color=colour) for colour in DTYPE_COLOURS]
        handles.append(Patch(facecolor=NAN_FILL, edgecolor=NAN_COLOUR, hatch=NAN_HATCH))
        labels = [*(np.dtype(d).name for d in DTYPES), "NaN (overflow)"]
        figure.legend(
            handles, labels, loc="outside lower center", ncols=4, fontsize=9, frameon=False
        )
        return {"marker": marker, "naive": naive, "stable": stable}

    def _build_ruler(self, ax):
        """One lane per dtype: where its exp fits (colour) and where it overflows (red hatch)."""
        for i, (limit, colour) in enumerate(
            zip(overflow_limits().values(), DTYPE_COLOURS, strict=True)
        ):
            ax.barh(
                i, limit - RULER_RANGE[0], left=RULER_RANGE[0], height=0.6, color=colour, alpha=0.35
            )
            ax.barh(
                i,
                RULER_RANGE[1] - limit,
                left=limit,
                height=0.6,
                facecolor="white",
                edgecolor=NAN_COLOUR,
                hatch="////",
                linewidth=0,
            )
            ax.text(limit / 1.12, i, f"ln(max) = {limit:.1f}", ha="right", va="center", fontsize=9)
        ax.set_xscale("log")
        power_of_ten_labels(ax.xaxis)
        ax.set_xlim(*RULER_RANGE)
        ax.set_ylim(-0.5, len(DTYPES) - 0.5)
        ax.set_yticks(range(len(DTYPES)), [np.dtype(d).name for d in DTYPES], fontsize=9)
        ax.tick_params(axis="x", labelsize=9)
        ax.set_xlabel("largest score max(s · x)  (naive softmax computes exp of it)", fontsize=9)
        (marker,) = ax.plot([1, 1], [-0.5, len(DTYPES) - 0.5], color="black", linewidth=2)
        return marker

    def _build_bars(self, ax, n, title):
        """Grouped bars (one group per key, one bar per dtype) and NaN markers, as 2 collections.

        One collection per kind instead of one Rectangle per bar: blitting draws
        2 artists per panel instead of 24, which keeps an update well under 10 ms.
        """
        values = PolyCollection([], facecolors=[], edgecolors="none")
        nan = PolyCollection(
            [], facecolors=NAN_FILL, edgecolors=NAN_COLOUR, hatch=NAN_HATCH, linewidths=0.8
        )
        ax.add_collection(values)
        ax.add_collection(nan)
        ax.set_xticks(np.arange(n), [f"key {j + 1}" for j in range(n)], fontsize=9)
        ax.set_xlim(-0.5, n - 0.5)
        ax.set_ylim(0, 1.05)
        ax.set_title(title, fontsize=9)
        return {"values": values, "nan": nan}

    def draw(self, artists, state) -> None:
        self._fit_keys(artists, state.row.size)
        x = min(max(state.largest, RULER_RANGE[0]), RULER_RANGE[1])
        artists["marker"].set_xdata([x, x])
        self._draw_bars(artists["naive"], state.naive)
        self._draw_bars(artists["stable"], state.stable)

    def _fit_keys(self, artists, n) -> None:
        """Show ``n`` key groups; each row length's background is drawn once, then kept."""
        axes = [artists[panel]["values"].axes for panel in ("naive", "stable")]
        if axes[0].get_xlim() == (-0.5, n - 0.5):
            return
        for ax in axes:
            ax.set_xticks(np.arange(n), [f"key {j + 1}" for j in range(n)], fontsize=9)
            ax.set_xlim(-0.5, n - 0.5)
        self.view.use_background(n)

    @staticmethod
    def _draw_bars(drawn, weights):
        """Bars of height ``weights`` (3, n); a NaN entry becomes a full-height hatched marker."""
        is_nan = np.isnan(weights)  # (3, n)
        heights = np.where(is_nan, 0.0, weights)  # (3, n)
        drawn["values"].set_verts(bar_rectangles(heights).reshape(-1, 4, 2))
        drawn["values"].set_facecolor([c for c in DTYPE_COLOURS for _ in range(weights.shape[-1])])
        drawn["nan"].set_verts(bar_rectangles(np.ones_like(weights))[is_nan])

    def describe(self, state) -> str:
        scores = ", ".join(general(v, 6) for v in state.scores)
        n = state.scores.size
        rows = "".join(
            f"<tr><td>{name}</td><td>{limit:.2f}</td>"
            f"<td>{_verdict(broken)}</td>{_weights(naive)}{_weights(stable)}</tr>"
            for name, limit, broken, naive, stable in zip(
                state.dtypes,
                state.limits,
                state.naive_broken,
                state.naive,
                state.stable,
                strict=True,
            )
        )
        return (
            f"<div>s = {state.scale:g}: scores s · x = [{scores}]; the largest, "
            f"<b>{general(state.largest, 6)}</b>, is what the naive formula exponentiates.</div>"
            '<table style="font-family:monospace;text-align:right;border-spacing:10px 0">'
            "<tr><th>dtype</th><th>ln(max)</th><th>naive</th>"
            f'<th colspan="{n}">naive weights</th><th colspan="{n}">stable weights</th></tr>'
            f"{_key_header(n)}{rows}</table>"
        )


def _key_header(n: int) -> str:
    """The second header row: each weight column named by its key, as the figure's ticks.

    >>> _key_header(2)
    '<tr><th></th><th></th><th></th><th>key 1</th><th>key 2</th><th>key 1</th><th>key 2</th></tr>'
    """
    keys = "".join(f"<th>key {j + 1}</th>" for j in range(n))
    return f"<tr>{'<th></th>' * 3}{keys}{keys}</tr>"


def _verdict(broken) -> str:
    if broken:
        return f'<b style="color:{NAN_COLOUR}">broken</b>'
    return "fine"


def _weights(row) -> str:
    """One table cell per weight, to 3 decimals; a NaN is the word "overflow" in red.

    A cell each keeps the columns aligned from row to row when "overflow" (8 letters)
    replaces a number (5).
    """
    cells = [
        f'<b style="color:{NAN_COLOUR}">overflow</b>' if np.isnan(w) else f"{w:.3f}" for w in row
    ]
    return "".join(f"<td>{cell}</td>" for cell in cells)
