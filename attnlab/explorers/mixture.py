r"""Lesson 5 explorer: the attention output as a weighted mix of three 2-D values.

The values ``v_A, v_B, v_C`` of :func:`attnlab.examples.query_and_keys_2d` are fixed points
on a plane; the sliders set each key's score ``x_j`` and the temperature ``T``. The output is

.. math::

    \text{output} = \sum_j w_j v_j, \qquad w = \operatorname{softmax}(x / T),

and since the weights are non-negative and sum to 1 it always lies in the triangle the three
values span (their convex hull): the output's barycentric coordinates in that triangle are
the attention weights themselves.

* left, the plane: the values (faint arrows), the triangle, the three contributions
  ``w_j v_j`` laid tip to tail from the origin (they end at the output), the output, and a
  line from the output to each value, as thick as that value's weight;
* right, the weights as bars in the values' colours, on a fixed 0 … 1 scale, and the
  current ``T`` (with equal scores it changes nothing else: the output stays at the centroid).

The sliders start at the example's scaled scores ``keys @ query / √2`` (:data:`EXAMPLE_SCORES`).
The pure part is :func:`mixture_state`; :class:`MixtureExplorer` draws it and changes the
artists in place.

Examples
--------
>>> state = mixture_state(EXAMPLE_SCORES)
>>> state.weights.round(3).tolist(), state.output.round(3).tolist()
([0.509, 0.358, 0.133], [1.064, 0.904])
>>> bool(np.allclose(state.barycentric, state.weights))    # the weights are the position
True
>>> mixture_state([0.0, 0.0, 0.0]).output.round(3).tolist()   # equal scores: the centroid
[0.5, 0.667]
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass

import ipywidgets as widgets
import numpy as np
from matplotlib.collections import LineCollection
from matplotlib.lines import Line2D
from matplotlib.patches import FancyArrow, Polygon

import attnlab
from attnlab._validate import as_float_array, positive_finite
from attnlab.examples import query_and_keys_2d
from attnlab.explorers.base import Explorer, score_sliders, scores_of, temperature_slider
from attnlab.explorers.number_text import num, plus_minus
from attnlab.mixing import barycentric, weighted_values
from attnlab.plots.colours import PALETTE
from attnlab.plots.outline_labels import OutlineLabels
from attnlab.plots.vectors import plane, plot_vectors

__all__ = [
    "COLOURS",
    "EXAMPLE",
    "EXAMPLE_SCORES",
    "PLANE_LIMITS",
    "MixtureExplorer",
    "MixtureState",
    "mixture_state",
]

EXAMPLE = query_and_keys_2d()  # query (2,), keys (3, 2), values (3, 2), labels A, B, C
# The example's scaled dot-product scores, where the score sliders start.
EXAMPLE_SCORES = EXAMPLE.keys @ EXAMPLE.query / math.sqrt(EXAMPLE.query.size)  # (n_k,)
for _array in (EXAMPLE.query, EXAMPLE.keys, EXAMPLE.values, EXAMPLE_SCORES):
    _array.flags.writeable = False  # shared by every call and every explorer
del _array
N_VALUES = len(EXAMPLE.values)
SCORE_RANGE = (-5.0, 5.0)
#: One colour per value (A, B, C), on the plane and on the weight bars.
COLOURS = (PALETTE["blue"], PALETTE["green"], PALETTE["vermillion"])
OUTPUT_COLOUR = "black"
#: The output's marker, a ring, on the plane and (smaller) in its legend.
OUTPUT_RING = {
    "linestyle": "none",
    "marker": "o",
    "markerfacecolor": "white",
    "markeredgecolor": OUTPUT_COLOUR,
}
SHOWN = 5e-4  # a weight below this prints as 0.000
_LOW, _HIGH = EXAMPLE.values.min(axis=0) - 0.5, EXAMPLE.values.max(axis=0) + 0.5  # (2,) each
_SIDE = float(np.max(_HIGH - _LOW))  # a square window around the values, room for the labels
#: Fixed limits of the plane, ((x_low, x_high), (y_low, y_high)): every value, the origin and
#: the labels, centred on the values.
PLANE_LIMITS = tuple((float(c - _SIDE / 2), float(c + _SIDE / 2)) for c in (_LOW + _HIGH) / 2)
del _LOW, _HIGH, _SIDE
ARROW_WIDTH, HEAD_WIDTH, HEAD_LENGTH = 0.045, 0.14, 0.17  # contribution arrows, in data units
PULL_WIDTH = (0.6, 5.0)  # line width of a pull line: base + slope * weight, in points
WEIGHT_SIZE = 9.0  # font size of the numbers above the bars, in points
WEIGHT_TOP, T_LABEL_Y = 1.22, 1.16  # the weight axis ends above the numbers and the T label


@dataclass(frozen=True, eq=False)
class MixtureState:
    r"""What :func:`mixture_state` computes: the weights, the output and how it is built.

    Attributes
    ----------
    labels : tuple of str
        The 3 values' names.
    values : ndarray, shape (3, 2)
        The fixed values.
    scores : ndarray, shape (3,)
    temperature : float
    weights : ndarray, shape (3,)
        Summing to 1.
    output : ndarray, shape (2,)
        :math:`\sum_j w_j v_j`.
    contributions : ndarray, shape (3, 2)
        Row ``j`` = :math:`w_j v_j`.
    partial_sums : ndarray, shape (4, 2)
        0, then the contributions added one by one, so the last row is the output (the
        tip-to-tail path).
    barycentric : ndarray, shape (3,)
        The weights of the three values that reproduce the output
        (:func:`attnlab.mixing.barycentric`), equal to ``weights`` up to rounding.
    distances : ndarray, shape (3,)
        From the output to each value.
    nearest : int
        Index of the value closest to the output.
    largest : int
        Index of the largest weight (the first one on a tie).
    """

    labels: tuple[str, ...]
    values: np.ndarray  # (n_k, 2)
    scores: np.ndarray  # (n_k,)
    temperature: float
    weights: np.ndarray  # (n_k,)
    output: np.ndarray  # (2,)
    contributions: np.ndarray  # (n_k, 2)
    partial_sums: np.ndarray  # (n_k + 1, 2)
    barycentric: np.ndarray  # (n_k,)
    distances: np.ndarray  # (n_k,)
    nearest: int
    largest: int


def mixture_state(scores, temperature: float = 1.0) -> MixtureState:
    r"""Weights, output and contributions of the example's three values for one score row.

    Parameters
    ----------
    scores : array_like, shape (3,)
        One score per key (and so per value A, B, C); finite.
    temperature : float, default 1.0
        ``T > 0`` and finite; the weights are ``softmax(scores / T)``.

    Returns
    -------
    MixtureState
        The weights, the output, its contributions and which value it lands nearest.

    Raises
    ------
    ValueError
        If ``scores`` is not 3 finite numbers or ``temperature`` is not a positive finite
        number. The message names the argument (and the shape it got).

    Examples
    --------
    >>> sharp = mixture_state([2.0, 1.0, 0.0], temperature=0.05)
    >>> sharp.output.round(6).tolist(), sharp.largest, sharp.nearest     # all on A
    ([2.0, 0.5], 0, 0)
    >>> state = mixture_state([1.0, 1.0, -1.0])
    >>> bool(np.allclose(state.partial_sums[-1], state.output))          # tip to tail
    True
    >>> mixture_state([1.0, 2.0])
    Traceback (most recent call last):
    ...
    ValueError: scores must have shape (3,), one score per value (A, B, C); got shape (2,)
    """
    scores = as_float_array(scores, "scores", allow_inf=False)
    if scores.shape != (N_VALUES,):
        raise ValueError(
            f"scores must have shape ({N_VALUES},), one score per value "
            f"({', '.join(EXAMPLE.labels)}); got shape {scores.shape}"
        )
    scores = scores.astype(float)  # (n_k,) float64, whatever float came in
    temperature = positive_finite(temperature, "temperature")
    values = EXAMPLE.values  # (n_k, 2)
    weights = attnlab.softmax(scores, temperature=temperature)  # (n_k,)
    output = weighted_values(weights, values)  # (2,)
    contributions = weights[:, None] * values  # (n_k, 2) row j = w_j v_j
    partial_sums = np.vstack([np.zeros(2), np.cumsum(contributions, axis=0)])  # (n_k + 1, 2)
    distances = np.linalg.norm(values - output, axis=1)  # (n_k,)
    return MixtureState(
        labels=EXAMPLE.labels,
        values=values,
        scores=scores,
        temperature=temperature,
        weights=weights,
        output=output,
        contributions=contributions,
        partial_sums=partial_sums,
        barycentric=barycentric(output, values),
        distances=distances,
        nearest=int(np.argmin(distances)),
        largest=int(np.argmax(weights)),
    )


class MixtureExplorer(Explorer):
    """Drag the three scores and the temperature; watch the output move inside the triangle.

    Parameters
    ----------
    **initial
        Starting control values. Controls: ``score_1`` … ``score_3`` (−5 … 5, starting at
        :data:`EXAMPLE_SCORES`, the example's ``keys @ query / √2``) and ``temperature``
        (0.05 … 5, the stops of the temperature explorer, starting at 1).

    Examples
    --------
    >>> explorer = MixtureExplorer()
    >>> explorer.set(score_1=5.0, score_2=-5.0, score_3=-5.0, temperature=0.05)
    >>> explorer.state.output.round(6).tolist()                # the output sits on A
    [2.0, 0.5]
    >>> explorer.artists["output"].get_xydata().round(6).tolist()
    [[2.0, 0.5]]
    """

    name = "mixture"
    page_draws_moving = True
    figsize = (6.2, 3.5)

    def make_controls(self) -> dict:
        return score_sliders(EXAMPLE_SCORES, SCORE_RANGE) | {"temperature": temperature_slider()}

    def compute(self, temperature, **scores) -> MixtureState:
        return mixture_state(scores_of(scores), temperature)

    def build(self, figure):
        plane_ax, bar_ax = figure.subplots(1, 2, width_ratios=[2.6, 1.0])
        values, labels = EXAMPLE.values, EXAMPLE.labels
        plane(plane_ax, unit_circle=False)
        plane_ax.set(xlim=PLANE_LIMITS[0], ylim=PLANE_LIMITS[1])
        mix = " + ".join(rf"$w_\mathrm{{{label}}}$·{label}" for label in labels)
        plane_ax.set_title(f"output = {mix}", fontsize=10)
        plane_ax.add_patch(
            Polygon(values, closed=True, facecolor="0.5", alpha=0.12, edgecolor="none", zorder=0.5)
        )
        plane_ax.add_patch(
            Polygon(
                values,
                closed=True,
                fill=False,
                edgecolor="0.55",
                linewidth=0.9,
                linestyle="--",
                zorder=0.6,
            )
        )
        faint = plot_vectors(
            values, labels, colors=COLOURS, ax=plane_ax, width=0.008, label_offset=0.22, zorder=1
        )
        faint.arrows.set_alpha(0.4)

        pulls = LineCollection(
            np.zeros((N_VALUES, 2, 2)), colors=COLOURS, alpha=0.45, capstyle="round", zorder=2
        )
        plane_ax.add_collection(pulls, autolim=False)
        steps = [
            FancyArrow(
                0.0,
                0.0,
                0.0,
                0.0,
                width=ARROW_WIDTH,
                length_includes_head=True,
                facecolor=colour,
                edgecolor="white",
                linewidth=0.5,
                zorder=4,
            )
            for colour in COLOURS
        ]
        for step in steps:
            plane_ax.add_patch(step)
        (output,) = plane_ax.plot(
            [0.0], [0.0], **OUTPUT_RING, markersize=9, markeredgewidth=2.2, zorder=5
        )
        plane_ax.legend(
            handles=[
                Line2D(
                    [],
                    [],
                    **OUTPUT_RING,
                    markersize=7,
                    markeredgewidth=1.8,
                    label=r"output $\Sigma_j\, w_j v_j$",
                ),
                Line2D([], [], color="0.3", linewidth=3, label=r"$w_j v_j$, tip to tail"),
                Line2D(
                    [],
                    [],
                    color="0.3",
                    alpha=0.45,
                    linewidth=2,
                    label=r"to $v_j$, as thick as $w_j$",
                ),
            ],
            loc="lower right",
            fontsize=9,
            frameon=True,
            framealpha=0.9,
            handlelength=1.6,
        )

        keys = np.arange(N_VALUES)  # (n_k,)
        bars = bar_ax.bar(keys, np.zeros(N_VALUES), width=0.6, color=COLOURS)
        numbers = OutlineLabels(bar_ax, np.column_stack([keys, np.zeros(N_VALUES)]), WEIGHT_SIZE)
        # The figure says which T it shows (with equal scores nothing else changes with T).
        temperature = OutlineLabels(bar_ax, [((N_VALUES - 1) / 2, T_LABEL_Y)], WEIGHT_SIZE + 1)
        bar_ax.axhline(1 / N_VALUES, color=PALETTE["grey"], linestyle="--", linewidth=1, zorder=0)
        bar_ax.set(xlim=(-0.5, N_VALUES - 0.5), ylim=(0.0, WEIGHT_TOP), ylabel="weight w")
        bar_ax.set_title("softmax(x / T)", fontsize=10)
        bar_ax.set_xticks(keys, labels, fontweight="bold")
        for tick, colour in zip(bar_ax.get_xticklabels(), COLOURS, strict=True):
            tick.set_color(colour)
        bar_ax.set_yticks([0.0, 1 / N_VALUES, 0.5, 1.0], ["0", f"1/{N_VALUES}", "0.5", "1"])
        bar_ax.get_yticklabels()[1].set_color(PALETTE["grey"])  # equal weights, dashed line
        bar_ax.spines[["top", "right"]].set_visible(False)
        return {
            "pulls": pulls,
            "steps": steps,
            "output": output,
            "bars": list(bars),
            "numbers": numbers,
            "temperature": temperature,
        }

    def draw(self, artists, state) -> None:
        out = state.output  # (2,)
        artists["output"].set_data([out[0]], [out[1]])
        artists["pulls"].set_segments(
            np.stack([np.broadcast_to(out, state.values.shape), state.values], axis=1)
        )  # (n_k, 2, 2) from the output to each value
        base, slope = PULL_WIDTH
        artists["pulls"].set_linewidth(base + slope * state.weights)  # (n_k,)
        path = zip(artists["steps"], state.partial_sums[:-1], state.contributions, strict=True)
        for step, start, c in path:  # tip to tail: arrow j starts where arrow j - 1 ends
            length = float(np.hypot(*c))
            shrink = min(1.0, length / (1.5 * HEAD_LENGTH))  # short arrows: thinner, small heads
            step.set_data(
                x=start[0],
                y=start[1],
                dx=c[0],
                dy=c[1],
                width=ARROW_WIDTH * shrink,
                head_width=HEAD_WIDTH * shrink,
                head_length=HEAD_LENGTH * shrink,
            )
        for bar, w in zip(artists["bars"], state.weights, strict=True):
            bar.set_height(w)
        keys = np.arange(N_VALUES)  # (n_k,)
        artists["numbers"].set_offsets(np.column_stack([keys, number_heights(state.weights)]))
        artists["numbers"].set_texts([f"{w:.2f}" for w in state.weights], ["black"] * N_VALUES)
        artists["temperature"].set_texts([f"T = {state.temperature:g}"], ["black"])

    def describe(self, state) -> str:
        return _readout(state)

    def layout(self) -> widgets.Box:
        scores = widgets.VBox([self.controls[f"score_{j + 1}"] for j in range(N_VALUES)])
        top = widgets.HBox([scores, self.controls["temperature"]])
        return widgets.VBox([top, self.view.widget, self.readout, self.error])


def number_heights(weights, gap=0.05, clear=0.045):
    """Where the weight above each bar goes: ``gap`` above the bar, but off the dashed 1/n line.

    A number centred within ``clear`` of the line 1/n (equal weights) would be crossed
    by it, so it moves up to ``clear`` above the line.

    Parameters
    ----------
    weights : array_like, shape (n_k,)
        Bar heights, in [0, 1].
    gap, clear : float
        In weight units: the number's centre above the bar top, and its half-height
        plus a margin.

    Returns
    -------
    ndarray, shape (n_k,)

    Examples
    --------
    >>> number_heights([0.6, 0.3, 0.1]).round(3).tolist()   # 0.35 would sit on 1/3
    [0.65, 0.378, 0.15]
    """
    weights = np.asarray(weights, dtype=float)  # (n_k,)
    line = 1 / weights.size
    heights = weights + gap  # (n_k,)
    on_line = np.abs(heights - line) < clear  # (n_k,)
    return np.where(on_line, line + clear, heights)  # (n_k,)


def _vector(v, digits: int = 2) -> str:
    return "(" + ", ".join(num(x, digits) for x in v) + ")"


def _weight(w: float, digits: int = 3) -> str:
    """A weight with ``digits`` decimals, saying so when a nonzero weight is too small to show."""
    if 0 < w < 0.5 * 10.0**-digits:
        return html.escape("< " + f"{10.0**-digits:.{digits}f}")
    return f"{w:.{digits}f}"


def _where(state) -> str:
    """Where the output sits in the triangle, in words, from its barycentric weights."""
    labels = state.labels
    if np.any(state.barycentric < -1e-9):  # cannot happen for softmax weights; said if it does
        return "<b>outside</b> the triangle"
    shown = [j for j in range(N_VALUES) if state.barycentric[j] >= SHOWN]
    hidden = [labels[j] for j in range(N_VALUES) if j not in shown]
    small = {
        0: "",
        1: f" (the weight of {''.join(hidden)} is below 0.001)",
        2: f" (the weights of {' and '.join(hidden)} are below 0.001)",
    }[len(hidden)]
    if len(shown) == 1:
        return f"almost at the corner <b>{labels[shown[0]]}</b> of the triangle{small}"
    if len(shown) == 2:
        return f"next to the edge <b>{''.join(labels[j] for j in shown)}</b> of the triangle{small}"
    return f"<b>inside</b> the triangle {''.join(labels)}"


def _readout(state) -> str:
    """The numbers under the figure, as HTML: the weighted sum written out, and where it lands."""
    labels = [html.escape(label) for label in state.labels]
    cells = 'style="padding:0 8px"'
    rows = "".join(
        f"<tr><td style='padding:0 8px;color:{colour}'><b>{label}</b> (key {j + 1})</td>"
        f"<td {cells}>{plus_minus(x)}</td>"
        f"<td {cells}><b>{_weight(w)}</b></td><td {cells}>{_vector(v)}</td>"
        f"<td {cells}>{_vector(c)}</td></tr>"
        for j, (label, colour, x, w, v, c) in enumerate(
            zip(
                labels,
                COLOURS,
                state.scores,
                state.weights,
                state.values,
                state.contributions,
                strict=True,
            )
        )
    )
    total = (
        f"<tr style='border-top:1px solid #999'><td {cells}>sum</td><td></td>"
        f"<td {cells}>{state.weights.sum():.3f}</td><td></td>"
        f"<td {cells}><b>{_vector(state.output)}</b> = output</td></tr>"
    )
    table = (
        '<table style="font-family:monospace;text-align:right;border-collapse:collapse">'
        f"<tr><th {cells}>value</th><th {cells}>score x</th><th {cells}>weight w</th>"
        f"<th {cells}>v</th><th {cells}>w · v</th></tr>{rows}{total}</table>"
    )
    gap = float(np.abs(state.barycentric - state.weights).max())
    bary = ", ".join(_weight(b) for b in np.clip(state.barycentric, 0.0, None))
    nearest, largest = labels[state.nearest], labels[state.largest]
    agree = "equal up to rounding" if gap < 1e-9 else f"they differ by up to {gap:.1g}"
    return (
        f"<div>T = {state.temperature:g} · w = softmax(x / T) · "
        "output = Σ w<sub>j</sub> v<sub>j</sub> = "
        f"<b>{_vector(state.output)}</b></div>{table}"
        f"<div>The output lies {_where(state)}. Its barycentric weights "
        f"({bary}) are the attention weights ({agree}).</div>"
        f"<div>Largest weight: <b>{largest}</b> ({_weight(state.weights[state.largest])}) · "
        f"value nearest the output: <b>{nearest}</b> "
        f"(distance {num(state.distances[state.nearest])})</div>"
    )
