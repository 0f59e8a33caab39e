r"""Pictures for lesson 2 (why divide by √d_k): score distributions, collapse and saturation.

Every helper takes ``ax=None`` (a new figure is made with ``plt.subplots()`` only
then), returns the artists it drew, leaves global matplotlib state alone and
never calls ``plt.show()``.  The data are computed by the caller (the notebook
shows that code); the helpers only draw.

Examples
--------
>>> from matplotlib.figure import Figure
>>> rng = np.random.default_rng(0)
>>> ax = Figure().subplots()
>>> drawn = dot_product_histograms({4: rng.normal(0, 2, 500), 64: rng.normal(0, 8, 500)}, ax=ax)
>>> [patch.get_label() for patch in drawn]
['d_k = 4', 'd_k = 64']
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

import attnlab
from attnlab.plots.colours import PALETTE

__all__ = [
    "EXPONENT_COLOURS",
    "dot_product_histograms",
    "variance_by_exponent",
    "softmax_rows",
    "saturation_curves",
]

COLOURS = ("blue", "orange", "green", "vermillion", "purple", "sky", "grey")
# One colour per way of scaling, shared with the d_k lab: no scaling and a = 1/3 under-correct
# (warm colours), a = 1/2 is right (blue), a = 2/3 over-corrects (green).
EXPONENT_COLOURS = {
    0.0: PALETTE["vermillion"],
    1 / 3: PALETTE["orange"],
    1 / 2: PALETTE["blue"],
    2 / 3: PALETTE["green"],
}


def _new_axes(ax):
    """``ax`` if given, else fresh axes from ``plt.subplots`` (the only pyplot call here)."""
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt

    _, made = plt.subplots(figsize=(7, 3.2), layout="constrained")
    return made


def _one_per(values, xs: np.ndarray, name: str, what: str) -> np.ndarray:
    """``values`` as floats, or a ValueError unless there is one per entry of ``xs``."""
    values = np.asarray(values, dtype=float)
    if values.shape != xs.shape:
        raise ValueError(f"{name} must have one {what}, shape {xs.shape}; got shape {values.shape}")
    return values


def _colour(i: int) -> str:
    return PALETTE[COLOURS[i % len(COLOURS)]]


def _plain_numbers(axis) -> None:
    """Tick labels like 0.25, 1, 64 instead of 2^-2, 2^0, 2^6."""
    from matplotlib.ticker import FuncFormatter

    axis.set_major_formatter(FuncFormatter(lambda value, _pos: f"{value:g}"))


def dot_product_histograms(samples, ax=None, *, edges=None, xlabel="q·k", title=None):
    """Outlined density histograms of dot products, one per head size, on shared bins.

    Parameters
    ----------
    samples : dict of label -> array_like, shape (n,)
        Dot products for each ``d_k`` (any iterable of 1-D samples).  Integer
        keys are shown as ``d_k = …``, other keys as they are.
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure is made when missing.
    edges : array_like, shape (n_bins + 1,), optional
        Bin edges; default 81 edges spanning the widest sample symmetrically.
    xlabel : str, default "q·k"
    title : str, optional

    Returns
    -------
    list of matplotlib.patches.StepPatch
        One outlined histogram per entry of ``samples`` (label ``d_k = …``).
        Samples outside ``edges`` are not drawn but still count in the density.

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> ax = Figure().subplots()
    >>> drawn = dot_product_histograms({"four": [-1.5, -0.5, 0.5, 0.5]}, ax=ax,
    ...                                edges=[-2, -1, 0, 1, 2])
    >>> drawn[0].get_data().values.tolist()          # density: counts / (n * width)
    [0.25, 0.25, 0.5, 0.0]
    """
    arrays = {key: np.asarray(values, dtype=float).ravel() for key, values in samples.items()}
    if not arrays or any(a.size == 0 for a in arrays.values()):
        raise ValueError("samples must map each label to a non-empty 1-D sample")
    if edges is None:
        reach = max(float(np.max(np.abs(a))) for a in arrays.values()) or 1.0
        edges = np.linspace(-reach, reach, 81)  # (81,)
    edges = np.asarray(edges, dtype=float)  # (n_bins + 1,)
    ax = _new_axes(ax)
    drawn = []
    for i, (key, values) in enumerate(arrays.items()):
        counts, _ = np.histogram(values, bins=edges)  # (n_bins,)
        density = counts / (values.size * np.diff(edges))  # (n_bins,)
        label = f"d_k = {key}" if isinstance(key, (int, np.integer)) else str(key)
        drawn.append(ax.stairs(density, edges, color=_colour(i), linewidth=1.6, label=label))
    ax.set_xlim(edges[0], edges[-1])
    ax.set_ylim(bottom=0)
    ax.set(xlabel=xlabel, ylabel="density")
    if title:
        ax.set_title(title)
    ax.legend(fontsize=9, frameon=False)
    return drawn


def variance_by_exponent(d_ks, measured, ax=None, *, title=None):
    r"""Measured variance of ``q·k / d_k^a`` against ``d_k`` on log–log axes, with the theory.

    The theory line for exponent ``a`` is :math:`d_k^{1-2a}`: slope ``1 - 2a``
    on log–log axes, flat (variance 1) only for ``a = 1/2``.

    Parameters
    ----------
    d_ks : array_like, shape (m,)
        Head sizes, > 0.
    measured : dict of float -> array_like, shape (m,)
        For each exponent ``a`` (0 means unscaled), the measured variances.
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure is made when missing.
    title : str, optional

    Returns
    -------
    dict
        ``measured`` and ``theory``: lists of Line2D, one per exponent, in the
        order of ``measured``.

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> ax = Figure().subplots()
    >>> d = np.array([1, 4, 16])
    >>> drawn = variance_by_exponent(d, {0.0: [1.1, 3.9, 16.5], 0.5: [1.1, 0.98, 1.03]}, ax=ax)
    >>> drawn["theory"][0].get_ydata().tolist(), drawn["theory"][1].get_ydata().tolist()
    ([1.0, 4.0, 16.0], [1.0, 1.0, 1.0])
    >>> [line.get_label() for line in drawn["measured"]]
    ['raw q·k (a = 0)', 'a = 1/2']
    """
    d_ks = np.asarray(d_ks, dtype=float)  # (m,)
    if d_ks.ndim != 1 or d_ks.size == 0 or np.any(d_ks <= 0):
        raise ValueError(f"d_ks must be a non-empty 1-D array of sizes > 0; got {d_ks!r}")
    ax = _new_axes(ax)
    drawn = {"measured": [], "theory": []}
    for i, (a, values) in enumerate(measured.items()):
        values = _one_per(values, d_ks, f"measured[{a!r}]", "variance per d_k")  # (m,)
        label = "raw q·k (a = 0)" if a == 0 else f"a = {_fraction(a)}"
        colour = EXPONENT_COLOURS.get(float(a), _colour(i + 4))
        (theory,) = ax.plot(d_ks, d_ks ** (1 - 2 * a), color=colour, linestyle="--", linewidth=1)
        (points,) = ax.plot(d_ks, values, color=colour, marker="o", linestyle="none", label=label)
        drawn["theory"].append(theory)
        drawn["measured"].append(points)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    _plain_numbers(ax.xaxis)
    _plain_numbers(ax.yaxis)
    ax.set(xlabel="head size d_k", ylabel="variance of q·k / d_k^a")
    ax.set_title(title or "dots: measured · dashed: theory d_k^(1 − 2a)")
    ax.legend(fontsize=9, frameon=False)
    return drawn


def _fraction(a) -> str:
    return str(Fraction(float(a)).limit_denominator(12))


def softmax_rows(rows, ax=None, *, labels=None, title="softmax weights"):
    """Grouped bars: the softmax weights of several score rows over the same keys.

    Parameters
    ----------
    rows : dict of str -> array_like, shape (n,)
        Score rows (not weights); each is turned into weights with
        :func:`attnlab.softmax`.  At most 7 rows.
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure is made when missing.
    labels : sequence of str, optional
        One label per key (default ``key 1`` … ``key n``).
    title : str, default "softmax weights"

    Returns
    -------
    list of matplotlib.container.BarContainer
        One group per row, labelled with its key in ``rows``.

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> ax = Figure().subplots()
    >>> groups = softmax_rows({"x1": [2, 1, 1], "x10": [20, 10, 10]}, ax=ax)
    >>> [round(float(bar.get_height()), 3) for bar in groups[0]]
    [0.576, 0.212, 0.212]
    """
    rows = {str(name): np.asarray(scores, dtype=float) for name, scores in rows.items()}
    sizes = {row.shape for row in rows.values()}
    if not 1 <= len(rows) <= len(COLOURS) or len(sizes) != 1 or len(next(iter(sizes))) != 1:
        raise ValueError(
            f"rows must hold 1 to {len(COLOURS)} 1-D score rows of the same length; "
            f"got shapes {[row.shape for row in rows.values()]}"
        )
    n, m = next(iter(sizes))[0], len(rows)
    ax = _new_axes(ax)
    width = 0.8 / m
    groups = []
    for i, (name, scores) in enumerate(rows.items()):
        offsets = np.arange(n) + (i - (m - 1) / 2) * width  # (n,)
        groups.append(
            ax.bar(offsets, attnlab.softmax(scores), width=width, color=_colour(i), label=name)
        )
    ax.axhline(1 / n, color="black", linestyle=":", linewidth=1)
    names = [f"key {j + 1}" for j in range(n)] if labels is None else list(labels)
    ax.set_xticks(np.arange(n), names)
    ax.set(ylim=(0, 1.05), ylabel="weight", title=title)
    ax.legend(fontsize=9, frameon=False, loc="upper right")
    return groups


def saturation_curves(
    factors,
    curves,
    ax=None,
    *,
    xlabel="scale factor c",
    title="softmax(c · x) as the scale factor c grows",
):
    """Lines against a log-scaled factor: e.g. the max weight and the Jacobian size of softmax(c x).

    Parameters
    ----------
    factors : array_like, shape (m,)
        Positive scale factors, shown on a log axis.
    curves : dict of str -> array_like, shape (m,)
        One curve per label, e.g. ``{"largest weight": ..., "‖J‖ (Frobenius)": ...}``.
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure is made when missing.
    xlabel, title : str

    Returns
    -------
    list of matplotlib.lines.Line2D
        One line per curve.

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> ax = Figure().subplots()
    >>> c = np.array([0.1, 1.0, 10.0])
    >>> lines = saturation_curves(c, {"a": [0.4, 0.6, 1.0], "b": [0.3, 0.2, 0.0]}, ax=ax)
    >>> [line.get_label() for line in lines], ax.get_xscale()
    (['a', 'b'], 'log')
    """
    factors = np.asarray(factors, dtype=float)  # (m,)
    if factors.ndim != 1 or np.any(factors <= 0):
        raise ValueError(f"factors must be a 1-D array of numbers > 0; got {factors!r}")
    ax = _new_axes(ax)
    lines = []
    for i, (label, values) in enumerate(curves.items()):
        values = _one_per(values, factors, f"curve {label!r}", "value per factor")  # (m,)
        (line,) = ax.plot(factors, values, color=_colour(i), linewidth=2, label=label)
        lines.append(line)
    ax.set_xscale("log")
    _plain_numbers(ax.xaxis)
    ax.set_ylim(0, max(1.0, max(float(np.max(line.get_ydata())) for line in lines)) * 1.05)
    ax.set(xlabel=xlabel, title=title)
    ax.legend(fontsize=9, frameon=False)
    return lines
