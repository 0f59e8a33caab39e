"""Temperature explorer: four score sliders and a temperature slider driving softmax weights live.

The pure part is :func:`temperature_weights`; :class:`TemperatureExplorer` draws
the scores and the weights ``softmax(x / T)`` as two bar charts and updates the
bar heights in place. The presets ("sharp", "flat", "reset") are buttons that set
several controls at once with :meth:`Explorer.set`.

Examples
--------
>>> state = temperature_weights([1.0, 0.5, 2.5, -0.1], temperature=1.0)
>>> state.weights.round(3).tolist()
[0.156, 0.094, 0.698, 0.052]
>>> bool(np.isclose(state.weights.sum(), 1.0))
True
"""

from __future__ import annotations

import html
from dataclasses import dataclass

import ipywidgets as widgets
import numpy as np

import attnlab
from attnlab.controls import Button
from attnlab.examples import SCORE_ROW
from attnlab.explorers.base import (
    TEMPERATURES,
    Explorer,
    score_sliders,
    scores_of,
    temperature_slider,
)
from attnlab.explorers.number_text import plus_minus, signed_value
from attnlab.plots.bars import Bars
from attnlab.plots.colours import PALETTE

__all__ = [
    "PRESETS",
    "TEMPERATURES",
    "TemperatureExplorer",
    "TemperatureWeights",
    "temperature_weights",
]

SCORE_RANGE = (-5.0, 5.0)
PRESETS = {
    "sharp (T = 0.1)": {"temperature": 0.1},
    "flat (T = 5)": {"temperature": 5.0},
    "reset": {**{f"score_{j + 1}": float(s) for j, s in enumerate(SCORE_ROW)}, "temperature": 1.0},
}


@dataclass(frozen=True, eq=False)
class TemperatureWeights:
    """What :func:`temperature_weights` computes: one score row's weights at temperature ``T``.

    Attributes
    ----------
    scores : ndarray, shape (n,)
    temperature : float
    scaled : ndarray, shape (n,)
        ``scores / T``.
    weights : ndarray, shape (n,)
        Summing to 1.
    entropy : float
        In nats.
    max_entropy : float
        ``log n``.
    effective : float
        ``exp(entropy)``: how many keys the row "spreads over", between 1 and n.
    max_weight : float
    winner : int
        Index of ``max_weight``.
    """

    scores: np.ndarray  # (n,)
    temperature: float
    scaled: np.ndarray  # (n,)
    weights: np.ndarray  # (n,)
    entropy: float
    max_entropy: float
    effective: float
    max_weight: float
    winner: int


def temperature_weights(scores, temperature) -> TemperatureWeights:
    """Softmax weights of one score row at temperature ``T``, with the numbers the view reports.

    Parameters
    ----------
    scores : array_like, shape (n,)
        One row of scores.
    temperature : float
        ``T > 0``.  The stable :func:`attnlab.softmax` is used, so tiny ``T``
        (huge ``x / T``) cannot overflow.

    Returns
    -------
    TemperatureWeights
        The weights, their entropy and the largest weight.

    Examples
    --------
    >>> sharp = temperature_weights([1.0, 0.5, 2.5, -0.1], 0.05)
    >>> round(sharp.max_weight, 6), sharp.winner
    (1.0, 2)
    >>> flat = temperature_weights([1.0, 0.5, 2.5, -0.1], 1e6)
    >>> round(flat.effective, 3)
    4.0
    """
    scores = np.asarray(scores, dtype=float)  # (n,)
    weights = attnlab.softmax(scores, temperature=temperature)  # (n,)
    h = float(attnlab.entropy(weights))
    winner = int(np.argmax(weights))
    return TemperatureWeights(
        scores=scores,
        temperature=float(temperature),
        scaled=scores / temperature,  # (n,)
        weights=weights,
        entropy=h,
        max_entropy=float(np.log(scores.size)),
        effective=float(np.exp(h)),
        max_weight=float(weights[winner]),
        winner=winner,
    )


class TemperatureExplorer(Explorer):
    """Drag the four scores and the temperature; watch ``softmax(x / T)`` sharpen and flatten.

    Parameters
    ----------
    **initial
        Starting control values, e.g. ``TemperatureExplorer(temperature=0.5)``.
        Controls: ``score_1`` … ``score_4`` (−5 … 5, starting at
        :data:`attnlab.examples.SCORE_ROW`) and ``temperature`` (0.05 … 5,
        roughly log-spaced stops).

    Examples
    --------
    >>> explorer = TemperatureExplorer()
    >>> explorer.set(temperature=0.1)
    >>> round(explorer.state.max_weight, 3)
    1.0
    """

    name = "temperature"
    page_draws_moving = True
    figsize = (7.0, 3.2)
    n_keys = SCORE_ROW.size

    def make_controls(self) -> dict:
        return score_sliders(SCORE_ROW, SCORE_RANGE) | {"temperature": temperature_slider()}

    def compute(self, temperature, **scores) -> TemperatureWeights:
        return temperature_weights(scores_of(scores), temperature)

    def build(self, figure):
        score_ax, weight_ax = figure.subplots(1, 2)
        keys = np.arange(self.n_keys)  # (n,)
        labels = [f"key {j + 1}" for j in keys]
        score_bars = Bars(score_ax, keys, 0.6, facecolor=PALETTE["grey"], label="x")
        scaled_bars = Bars(
            score_ax,
            keys,
            0.78,
            fill=False,
            edgecolor="black",
            linewidth=1.2,
            linestyle="--",
            label="x / T (cut off at the edge)",
        )
        score_ax.axhline(0, color="black", linewidth=0.8)
        score_ax.set(ylim=SCORE_RANGE, ylabel="score", title="scores x and what softmax sees")
        score_ax.set_xticks(keys, labels)
        # Two sets at the same places: the largest weight's bar shows in vermillion.
        weight_bars, winner_bar = (
            Bars(weight_ax, keys, 0.6, facecolor=PALETTE[name], edgecolor=PALETTE[name])
            for name in ("blue", "vermillion")
        )
        weight_ax.axhline(
            1 / self.n_keys,
            color=PALETTE["grey"],
            linestyle="--",
            linewidth=1,
            label=f"uniform 1/{self.n_keys}",
        )
        weight_ax.set(ylim=(0, 1), ylabel="weight", title="softmax(x / T)")
        weight_ax.set_xticks(keys, labels)
        # Under both panels: inside, the bars (x / T runs to either edge) would cross it.
        figure.legend(loc="outside lower center", ncols=3, fontsize=9, frameon=False)
        return {
            "scores": score_bars,
            "scaled": scaled_bars,
            "weights": weight_bars,
            "winner": winner_bar,
        }

    def draw(self, artists, state) -> None:
        artists["scores"].set_values(state.scores)
        artists["scaled"].set_values(state.scaled)  # clipped by the axes when |x / T| > 5
        winner = np.arange(state.weights.size) == state.winner  # (n,)
        artists["weights"].set_values(state.weights, where=~winner)
        artists["winner"].set_values(state.weights, where=winner)

    def describe(self, state) -> str:
        rows = "".join(
            f"<tr><td>key {j + 1}</td><td>{plus_minus(x, 2)}</td><td>{signed_value(xs, 1)}</td>"
            f"<td><b>{_weight(w)}</b></td></tr>"
            for j, (x, xs, w) in enumerate(
                zip(state.scores, state.scaled, state.weights, strict=True)
            )
        )
        return (
            f"<div>T = {state.temperature:g} · largest weight <b>{state.max_weight:.3f}</b> "
            f"(key {state.winner + 1}) · entropy <b>{state.entropy:.3f}</b> nats "
            f"of at most {state.max_entropy:.3f} · spread over about "
            f"<b>{state.effective:.2f}</b> of {state.scores.size} keys</div>"
            '<table style="font-family:monospace;text-align:right;border-spacing:12px 0">'
            "<tr><th>key</th><th>x</th><th>x / T</th><th>weight</th></tr>"
            f"{rows}</table>"
        )

    def layout(self) -> widgets.Box:
        buttons = []
        for label, values in PRESETS.items():
            button = Button(description=label)
            button.on_click(lambda _button, values=values: self.set(**values))
            buttons.append(button)
        scores = widgets.VBox([self.controls[f"score_{j + 1}"] for j in range(self.n_keys)])
        right = widgets.VBox([self.controls["temperature"], widgets.HBox(buttons)])
        return widgets.VBox(
            [widgets.HBox([scores, right]), self.view.widget, self.readout, self.error]
        )


def _weight(w: float) -> str:
    """A weight with 3 decimals, saying so when a nonzero weight is too small to show."""
    if 0 < w < 5e-4:
        return html.escape("< 0.001")
    return f"{w:.3f}"
