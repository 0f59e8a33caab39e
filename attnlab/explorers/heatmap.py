r"""Lesson 4 explorer: read the attention heatmap of "The cat sat down" as d_k and T change.

The running example's queries and keys come from one wide pair of projections
(:func:`attnlab.examples.cat_sat_down_wide`): at head size ``d_k`` they are
``Q = X W_q[:, :d_k]`` and ``K = X W_k[:, :d_k]``, so a larger head adds dimensions
to the same tokens. Softmax sees the raw scores ``Q Kᵀ`` divided by
:math:`\sqrt{d_k} \cdot T` (or by ``T`` alone with the division switched off):

* left, the weights as a heatmap on a fixed ``[0, 1]`` colour scale, one row per
  query (rows sum to 1), the key that receives the most weight outlined;
* right, how spread each row is: its effective number of keys :math:`e^H` (1 = all
  weight on one key, 4 = uniform), the most focused query's bar coloured and its
  row outlined dashed in the heatmap.

Without the division, the raw scores spread further as the head grows, and the rows
collapse onto single keys; with it, the spread of the scores stays near 1 and the rows
stay spread out on average (one small example, so not equally at every head size).

The pure part is :func:`heatmap_state`; :class:`HeatmapExplorer` draws it and changes
the artists in place.

Examples
--------
>>> state = heatmap_state(8, temperature=1.0)
>>> state.tokens, state.weights.shape, round(state.divisor, 3)
(('The', 'cat', 'sat', 'down'), (4, 4), 2.828)
>>> bool(np.allclose(state.weights.sum(axis=1), 1.0))
True
>>> state.tokens[state.hub], round(float(state.column_mass[state.hub]), 2)
('cat', 1.46)
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass

import ipywidgets as widgets
import numpy as np
from matplotlib.patches import Rectangle

import attnlab
from attnlab._validate import positive_finite, positive_int
from attnlab.controls import Checkbox
from attnlab.examples import cat_sat_down_wide
from attnlab.explorers.base import Explorer, one_of, stops_slider, temperature_slider
from attnlab.patterns import column_mass, effective_keys, normalised_entropy
from attnlab.plots.colours import PALETTE
from attnlab.plots.heatmap import row_bars, show_weights, weights_heatmap

__all__ = ["D_K_VALUES", "EXAMPLE", "HeatmapExplorer", "HeatmapState", "heatmap_state"]

D_K_VALUES = tuple(2**i for i in range(10))  # 1, 2, 4, ..., 512: the head sizes offered
EXAMPLE = cat_sat_down_wide(max_d_k=D_K_VALUES[-1])  # built once; x (4, 16), w_q/w_k (16, 512)
for _array in (EXAMPLE.x, EXAMPLE.w_q, EXAMPLE.w_k):
    _array.flags.writeable = False  # shared by every call and every explorer
del _array
MAX_D_K = EXAMPLE.w_q.shape[1]
CELL_SIZE, VALUE_SIZE = 10.0, 9.0  # font sizes in points
FOCUS_COLOUR = PALETTE["vermillion"]
BAR_COLOUR = PALETTE["blue"]
INSIDE = 0.35  # an entropy bar at least this long carries its number inside, in white


@dataclass(frozen=True, eq=False)
class HeatmapState:
    r"""What :func:`heatmap_state` computes: the example's weights at one ``d_k`` and ``T``.

    Attributes
    ----------
    tokens : tuple of str
        The 4 tokens of "The cat sat down".
    d_k : int
    temperature : float
    scaled : bool
    q, k : ndarray, shape (4, d_k)
        Queries and keys at this head size.
    raw : ndarray, shape (4, 4)
        ``q @ k.T``.
    divisor : float
        :math:`\sqrt{d_k} \cdot T` (``T`` when not scaled).
    scores : ndarray, shape (4, 4)
        ``raw / divisor``, what softmax sees.
    score_spread : float
        The standard deviation of ``scores``.
    weights : ndarray, shape (4, 4)
        Rows summing to 1.
    entropy : ndarray, shape (4,)
        Each row's entropy / log 4, in [0, 1].
    effective : ndarray, shape (4,)
        Each row's effective number of keys, ``exp(H)``, in [1, 4].
    column_mass : ndarray, shape (4,)
        The weight each key receives, summed over the queries (they add up to 4).
    focused : int
        Index of the query with the lowest ``entropy`` (the first one on a tie).
    hub : int
        Index of the key with the largest ``column_mass``.
    """

    tokens: tuple[str, ...]
    d_k: int
    temperature: float
    scaled: bool
    q: np.ndarray  # (n, d_k)
    k: np.ndarray  # (n, d_k)
    raw: np.ndarray  # (n_q, n_k)
    divisor: float
    scores: np.ndarray  # (n_q, n_k)
    score_spread: float
    weights: np.ndarray  # (n_q, n_k)
    entropy: np.ndarray  # (n_q,)
    effective: np.ndarray  # (n_q,)
    column_mass: np.ndarray  # (n_k,)
    focused: int
    hub: int


def heatmap_state(d_k: int, temperature: float = 1.0, scaled: bool = True) -> HeatmapState:
    r"""Attention weights of "The cat sat down" at head size ``d_k`` and temperature ``T``.

    Parameters
    ----------
    d_k : int
        Head size, 1 … 512: the first ``d_k`` columns of the example's ``W_q`` and
        ``W_k`` are used.
    temperature : float, default 1.0
        ``T > 0`` and finite; the scores are divided by it as well.
    scaled : bool, default True
        Divide the scores by :math:`\sqrt{d_k}` (True) or not (False).

    Returns
    -------
    HeatmapState
        The scores, weights and how spread each row is.

    Raises
    ------
    ValueError
        If ``d_k`` is not an int in 1 … 512, ``temperature`` is not a positive
        finite number, or ``scaled`` is not a bool. The message names the argument.

    Examples
    --------
    >>> raw = heatmap_state(512, temperature=1.0, scaled=False)
    >>> raw.divisor, bool(raw.entropy.mean() < 0.1)            # collapsed rows
    (1.0, True)
    >>> fixed = heatmap_state(512, temperature=1.0)
    >>> round(fixed.divisor, 2), bool(fixed.entropy.mean() > 0.5)
    (22.63, True)
    """
    d_k = positive_int(d_k, "d_k")
    if d_k > MAX_D_K:
        raise ValueError(
            f"d_k must be at most {MAX_D_K} (the widest head of the example); got {d_k}"
        )
    temperature = positive_finite(temperature, "temperature")
    scaled = one_of(scaled, (True, False), "scaled")
    q = EXAMPLE.x @ EXAMPLE.w_q[:, :d_k]  # (n, d_k)
    k = EXAMPLE.x @ EXAMPLE.w_k[:, :d_k]  # (n, d_k)
    raw = q @ k.T  # (n_q, n_k)
    divisor = (math.sqrt(d_k) if scaled else 1.0) * temperature
    scores = raw / divisor  # (n_q, n_k) what softmax sees
    weights = attnlab.softmax(scores)  # (n_q, n_k) rows sum to 1
    entropy = normalised_entropy(weights)  # (n_q,) in [0, 1]
    effective = effective_keys(weights)  # (n_q,) in [1, n_k]
    mass = column_mass(weights)  # (n_k,) sums to n_q
    return HeatmapState(
        tokens=EXAMPLE.tokens,
        d_k=d_k,
        temperature=temperature,
        scaled=scaled,
        q=q,
        k=k,
        raw=raw,
        divisor=divisor,
        scores=scores,
        score_spread=float(scores.std()),
        weights=weights,
        entropy=entropy,
        effective=effective,
        column_mass=mass,
        focused=int(np.argmin(entropy)),
        hub=int(np.argmax(mass)),
    )


def _cell_outline(width: float, height: float, **style) -> Rectangle:
    """An unfilled rectangle in the focus colour from the heatmap's top-left cell corner,
    ``width`` columns by ``height`` rows (moved later with ``set_x``/``set_y``)."""
    return Rectangle(
        (-0.5, -0.5),
        width,
        height,
        fill=False,
        edgecolor=FOCUS_COLOUR,
        clip_on=False,
        zorder=4,
        **style,
    )


class HeatmapExplorer(Explorer):
    """Slide the head size and the temperature; watch the weight heatmap sharpen or stay put.

    Parameters
    ----------
    **initial
        Starting control values. Controls: ``d_k`` (1, 2, 4, …, 512, starting at
        the running example's 8), ``temperature`` (0.05 … 5, the stops of the
        temperature explorer, starting at 1) and ``scaled`` (divide by √d_k; True).

    Examples
    --------
    >>> explorer = HeatmapExplorer()
    >>> explorer.set(d_k=512, scaled=False)
    >>> bool(explorer.state.entropy.mean() < 0.1)
    True
    >>> explorer.artists["image"].get_clim()                # fixed colour scale
    (0.0, 1.0)
    """

    name = "heatmap"
    figsize = (7.6, 3.4)
    n_tokens = len(EXAMPLE.tokens)

    def make_controls(self) -> dict:
        return {
            "d_k": stops_slider(D_K_VALUES, EXAMPLE.d_k, "head size d_k"),
            "temperature": temperature_slider(),
            "scaled": Checkbox(value=True, description="divide by √d_k"),
        }

    def compute(self, d_k, temperature, scaled) -> HeatmapState:
        return heatmap_state(d_k, temperature, scaled)

    def build(self, figure):
        heat_ax, spread_ax = figure.subplots(1, 2, width_ratios=[1.9, 1.0])
        n = self.n_tokens
        tokens = EXAMPLE.tokens
        heatmap = weights_heatmap(tokens, ax=heat_ax, cell_size=CELL_SIZE)
        heat_ax.set_title("attention weights (each row sums to 1)", fontsize=10)
        hub = heat_ax.add_patch(_cell_outline(1.0, n, linewidth=2.5))  # the hub key's column
        # The most focused query's row, outlined dashed (its bar on the right is coloured too).
        focus_row = heat_ax.add_patch(_cell_outline(n, 1.0, linewidth=2.0, linestyle="--"))

        # Two sets at the same places: the focused query's bar shows in the hub's colour.
        bars, focus_bar, values = row_bars(
            spread_ax,
            tokens,
            (BAR_COLOUR, FOCUS_COLOUR),
            reference=float(n),
            xlim=float(n),
            xlabel="effective number of keys e^H",
            value_size=VALUE_SIZE,
        )
        spread_ax.text(
            float(n),
            1.01,
            "uniform",
            transform=spread_ax.get_xaxis_transform(),
            ha="center",
            va="bottom",
            fontsize=9,
        )
        spread_ax.set_xticks(np.arange(1, n + 1), [str(i) for i in range(1, n + 1)])
        return heatmap | {
            "hub": hub,
            "focus_row": focus_row,
            "bars": bars,
            "focus_bar": focus_bar,
            "values": values,
        }

    def draw(self, artists, state) -> None:
        show_weights(artists, state.weights)  # (n_q, n_k)
        artists["hub"].set_x(state.hub - 0.5)
        artists["focus_row"].set_y(state.focused - 0.5)
        n = state.effective.size
        focused = np.arange(n) == state.focused  # (n_q,)
        artists["bars"].set_values(state.effective, where=~focused)
        artists["focus_bar"].set_values(state.effective, where=focused)
        artists["values"].set_bar_ends(
            state.effective,
            [f"{h:.2f}" for h in state.effective],
            inside=state.effective >= INSIDE * n,
            pad=0.02 * n,
        )

    def describe(self, state) -> str:
        return _readout(state)

    def layout(self) -> widgets.Box:
        c = self.controls
        top = widgets.HBox([c["d_k"], c["temperature"]])
        return widgets.VBox([top, c["scaled"], self.view.widget, self.readout, self.error])


def _readout(state) -> str:
    """The numbers under the figure, as HTML."""
    t = f"{state.temperature:g}"
    if state.scaled:
        how = f"√{state.d_k} · T, with T = {t}"
    else:
        how = f"T = {t}; no division by √d_k"
    focused = html.escape(state.tokens[state.focused])
    hub = html.escape(state.tokens[state.hub])
    n = len(state.tokens)
    return (
        f"<div><b>d_k = {state.d_k}</b> · softmax sees the scores / "
        f"<b>{state.divisor:.3g}</b> ({how}) · their spread (std) is "
        f"<b>{state.score_spread:.3g}</b></div>"
        f"<div>Most focused query: <b>“{focused}”</b> (row {state.focused + 1}, dashed outline), "
        f"e^H = <b>{state.effective[state.focused]:.2f}</b> effective keys of {n} "
        f"(1 = one key, {n} = uniform) · "
        f"the key that receives the most weight: <b>“{hub}”</b> (outlined), "
        f"column mass <b>{state.column_mass[state.hub]:.2f}</b> "
        f"(average {state.column_mass.mean():.2f})</div>"
    )
