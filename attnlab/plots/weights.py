"""Bar charts of softmax weights: one row of weights, scores beside weights, and temperature sweeps.

Every helper takes ``ax=None`` (or ``axes=None``) and makes its own figure with
``plt.subplots()`` only then; it returns the artists it drew and never touches
rcParams or calls ``plt.show()``.

Examples
--------
>>> from matplotlib.figure import Figure
>>> ax = Figure().subplots()
>>> drawn = weight_bars([0.2, 0.8], labels=["a", "b"], ax=ax)
>>> len(drawn["bars"]), [float(y) for y in ax.get_ylim()]
(2, [0.0, 1.1])
"""

from __future__ import annotations

import numpy as np

import attnlab
from attnlab.plots.colours import PALETTE

__all__ = ["PALETTE", "weight_bars", "score_bars", "scores_and_weights", "weights_by_temperature"]


def _new_axes(ax, ncols=1, figsize=None):
    """``ax`` if given, else fresh axes from ``plt.subplots`` (the only pyplot call here)."""
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt

    _, made = plt.subplots(1, ncols, figsize=figsize, layout="constrained")
    return made


def _labels(labels, n):
    if labels is None:
        return [f"key {j + 1}" for j in range(n)]
    labels = [str(label) for label in labels]
    if len(labels) != n:
        raise ValueError(f"labels must have {n} entries, one per bar; got {len(labels)}")
    return labels


def _row(values, name):
    row = np.asarray(values, dtype=float)  # (n,)
    if row.ndim != 1 or row.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D row; got shape {row.shape}")
    return row


def weight_bars(
    weights,
    labels=None,
    ax=None,
    *,
    color=PALETTE["blue"],
    annotate=True,
    uniform=True,
    title="weights",
):
    """Bar chart of one row of weights on a fixed 0…1.1 axis, with the values written on top.

    Parameters
    ----------
    weights : array_like, shape (n,)
        Non-negative weights, e.g. a softmax row.
    labels : sequence of str, optional
        One label per bar (default ``key 1`` … ``key n``).
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure is made when missing.
    color : colour, default Okabe–Ito blue
    annotate : bool, default True
        Write each weight above its bar (3 decimals).
    uniform : bool, default True
        Draw a dashed line at ``1/n``, the weight every key would get if all
        scores were equal.
    title : str, default "weights"

    Returns
    -------
    dict
        ``bars`` (BarContainer), ``texts`` (list of Text, empty when not
        annotated) and ``uniform`` (Line2D or None).

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> ax = Figure().subplots()
    >>> drawn = weight_bars(attnlab.softmax([2.0, 1.0, 1.0]), ax=ax)
    >>> [t.get_text() for t in drawn["texts"]]
    ['0.576', '0.212', '0.212']
    """
    weights = _row(weights, "weights")  # (n,)
    n = weights.size
    ax = _new_axes(ax)
    positions = np.arange(n)  # (n,)
    bars = ax.bar(positions, weights, width=0.6, color=color)
    texts = []
    if annotate:
        texts = [
            ax.text(x, w + 0.02, f"{w:.3f}", ha="center", va="bottom", fontsize=9)
            for x, w in zip(positions, weights, strict=True)
        ]
    line = None
    if uniform:
        line = ax.axhline(
            1 / n, color=PALETTE["grey"], linestyle="--", linewidth=1, label=f"uniform 1/{n}"
        )
        ax.legend(handles=[line], loc="upper left", fontsize=9, frameon=False)
    ax.set_xticks(positions, _labels(labels, n))
    ax.set_ylim(0, 1.1)  # room for the label of a weight of 1
    ax.set_ylabel("weight")
    ax.set_title(title)
    return {"bars": bars, "texts": texts, "uniform": line}


def score_bars(
    scores, labels=None, ax=None, *, color=PALETTE["grey"], annotate=True, ylim=None, title="scores"
):
    """Bar chart of one row of raw scores, with a zero line (scores may be negative).

    Parameters
    ----------
    scores : array_like, shape (n,)
        Any real numbers.
    labels : sequence of str, optional
        One label per bar (default ``key 1`` … ``key n``).
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure is made when missing.
    color : colour, default grey
    annotate : bool, default True
        Write each score next to its bar end (2 decimals).
    ylim : (float, float), optional
        Fixed y range; by default symmetric around 0 with some room for the labels.
    title : str, default "scores"

    Returns
    -------
    dict
        ``bars`` (BarContainer), ``texts`` (list of Text) and ``zero`` (Line2D).

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> ax = Figure().subplots()
    >>> drawn = score_bars([1.0, -0.5], ax=ax)
    >>> [float(y) for y in ax.get_ylim()]
    [-1.5, 1.5]
    """
    scores = _row(scores, "scores")  # (n,)
    n = scores.size
    ax = _new_axes(ax)
    positions = np.arange(n)  # (n,)
    bars = ax.bar(positions, scores, width=0.6, color=color)
    top = 1.5 * max(float(np.max(np.abs(scores))), 1e-9)
    low, high = ylim if ylim is not None else (-top, top)
    pad = 0.04 * (high - low)
    texts = []
    if annotate:
        texts = [
            ax.text(
                x,
                s + (pad if s >= 0 else -pad),
                f"{s:.2f}",
                ha="center",
                va="bottom" if s >= 0 else "top",
                fontsize=9,
            )
            for x, s in zip(positions, scores, strict=True)
        ]
    zero = ax.axhline(0, color="black", linewidth=0.8)
    ax.set_xticks(positions, _labels(labels, n))
    ax.set_ylim(low, high)
    ax.set_ylabel("score")
    ax.set_title(title)
    return {"bars": bars, "texts": texts, "zero": zero}


def scores_and_weights(scores, labels=None, axes=None, *, temperature=1.0):
    """Scores on the left, their softmax weights on the right: the picture of one softmax row.

    Parameters
    ----------
    scores : array_like, shape (n,)
        One row of scores.
    labels : sequence of str, optional
        One label per key.
    axes : pair of matplotlib.axes.Axes, optional
        Where to draw (scores, weights); a new 1×2 figure is made when missing.
    temperature : float, default 1.0
        Passed to :func:`attnlab.softmax`.

    Returns
    -------
    dict
        ``scores`` and ``weights``: the dicts returned by :func:`score_bars`
        and :func:`weight_bars`.

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> axes = Figure().subplots(1, 2)
    >>> drawn = scores_and_weights([1.0, 0.5, 2.5, -0.1], axes=axes)
    >>> [t.get_text() for t in drawn["weights"]["texts"]]
    ['0.156', '0.094', '0.698', '0.052']
    """
    scores = _row(scores, "scores")  # (n,)
    if axes is None:
        axes = _new_axes(None, ncols=2, figsize=(7, 3))
    score_ax, weight_ax = axes
    weights = attnlab.softmax(scores, temperature=temperature)  # (n,)
    title = "softmax weights" if temperature == 1 else f"softmax weights, T = {temperature:g}"
    return {
        "scores": score_bars(scores, labels, ax=score_ax, title="scores x"),
        "weights": weight_bars(weights, labels, ax=weight_ax, title=title),
    }


def weights_by_temperature(scores, temperatures, labels=None, ax=None):
    """Grouped bars: the softmax weights of one score row at several temperatures.

    Parameters
    ----------
    scores : array_like, shape (n,)
        One row of scores.
    temperatures : sequence of float, length m
        Each ``T > 0``; one colour per temperature (at most 6).
    labels : sequence of str, optional
        One label per key.
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure is made when missing.

    Returns
    -------
    list of BarContainer
        One container per temperature (its label is ``T = …``).

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> ax = Figure().subplots()
    >>> groups = weights_by_temperature([1.0, 0.5, 2.5, -0.1], [0.5, 1, 5], ax=ax)
    >>> [g.get_label() for g in groups]
    ['T = 0.5', 'T = 1', 'T = 5']
    """
    scores = _row(scores, "scores")  # (n,)
    temperatures = [float(t) for t in temperatures]
    colours = ["vermillion", "orange", "blue", "sky", "green", "purple"]
    if not 1 <= len(temperatures) <= len(colours):
        raise ValueError(f"give 1 to {len(colours)} temperatures; got {len(temperatures)}")
    ax = _new_axes(ax)
    n, m = scores.size, len(temperatures)
    width = 0.8 / m
    groups = []
    for i, t in enumerate(temperatures):
        weights = attnlab.softmax(scores, temperature=t)  # (n,)
        offsets = np.arange(n) + (i - (m - 1) / 2) * width  # (n,)
        groups.append(
            ax.bar(offsets, weights, width=width, color=PALETTE[colours[i]], label=f"T = {t:g}")
        )
    ax.set_xticks(np.arange(n), _labels(labels, n))
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("weight")
    ax.set_title("softmax(x / T): small T sharpens, large T flattens")
    ax.legend(fontsize=9, ncols=min(m, 3), loc="upper left")
    return groups
