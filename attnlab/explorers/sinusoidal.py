"""Lesson 10 explorer: the sinusoidal encoding, two of its rows, and their dot product.

The encoding of Vaswani et al. (:func:`attnlab.positions.sinusoidal_positions`) gives
position ``pos`` the row ``PE[pos]`` with ``PE[pos, 2i] = sin(pos θ_i)`` and
``PE[pos, 2i+1] = cos(pos θ_i)``, ``θ_i = base^(−2i/d)``. Since
``sin a sin b + cos a cos b = cos(a − b)``, the dot product of two rows is

``PE[p] · PE[p + r] = Σ_i cos(r θ_i)``,

a function of the offset ``r`` alone; divided by its largest value ``d/2`` (each pair has
length 1) it is the cosine of the angle between the two rows.

Left: the matrix ``PE`` (positions 0 … 128 down, dimensions across), with rows ``p`` and
``p + r`` marked. Right: the dot product over ``d/2`` against the offset: the line is
``Σ_i cos(r θ_i) / (d/2)`` (no ``p`` in it), the small dots are the products of rows ``p``
and ``p + r`` of the matrix at the current ``p``, and the large dot is the current ``r``.
Moving ``p`` moves the marked rows but no dot: only the offset counts. ``d`` and the base
change the frequencies and so the matrix and the curve.

The matrix and the curve for each ``(d, base)`` are computed once and kept (read-only, see
:func:`encoding`); as they do not depend on ``p`` or ``r``, they are drawn in the kept
background, one look per ``(d, base)`` (:meth:`attnlab.live.LiveFigure.use_background`), so a
step of ``p`` or ``r`` redraws only the two row marks, the dots and the offset's line.

:func:`sinusoidal_view` is the pure computation the explorer shows.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
from matplotlib import patheffects
from matplotlib.ticker import MaxNLocator

from attnlab.controls import IntSlider
from attnlab.explorers.base import Explorer, one_of, stops_slider
from attnlab.explorers.number_text import num
from attnlab.plots.colours import PALETTE, QUERY_COLOUR
from attnlab.positions import position_frequencies, sinusoidal_positions

__all__ = [
    "BASES",
    "D_MODELS",
    "N_POSITIONS",
    "SinusoidalExplorer",
    "SinusoidalView",
    "background_artists",
    "encoding",
    "sinusoidal_view",
]

D_MODELS = (2, 4, 8, 16, 32, 64, 128)  # the d_model slider's stops (even)
BASES = (10, 30, 100, 300, 1_000, 3_000, 10_000, 30_000, 100_000)  # log-spaced, 10 … 10⁵
P_MAX = 64  # the largest position p
R_MAX = 64  # the largest offset r
N_POSITIONS = P_MAX + R_MAX + 1  # rows of the matrix shown: positions 0 … p_max + r_max
OFFSETS = np.arange(R_MAX + 1)  # (R_MAX + 1,) the right panel's offsets r
OFFSETS.setflags(write=False)
CMAP = "RdBu_r"  # as the lesson's static figure: red +1, white 0, blue −1
ROW_COLOUR = PALETTE["green"]  # row p: a data colour, the same on a light and a dark page
OTHER_ROW_COLOUR = PALETTE["vermillion"]  # row p + r, the offset's line and its dot
_OUTLINED = [patheffects.withStroke(linewidth=3.5, foreground="white")]


@functools.lru_cache(maxsize=len(D_MODELS) * len(BASES))
def encoding(d_model: int, base: float) -> tuple[np.ndarray, np.ndarray]:
    """The matrix and frequencies for one ``(d_model, base)``, computed once, read-only.

    Parameters
    ----------
    d_model : int
        Even, one of :data:`D_MODELS`.
    base : float
        One of :data:`BASES`.

    Returns
    -------
    pe : ndarray, shape (N_POSITIONS, d_model)
        :func:`attnlab.positions.sinusoidal_positions` for positions 0 … ``N_POSITIONS − 1``.
    curve : ndarray, shape (R_MAX + 1,)
        ``Σ_i cos(r θ_i) / (d/2)`` for ``r = 0 … R_MAX``.

    Examples
    --------
    >>> pe, curve = encoding(4, 100)
    >>> pe.shape, float(curve[0]), pe.flags.writeable
    ((129, 4), 1.0, False)
    """
    pe = sinusoidal_positions(N_POSITIONS, d_model, base=base)  # (N, d)
    theta = position_frequencies(d_model, base=base)  # (d/2,)
    curve = np.cos(OFFSETS[:, None] * theta).mean(axis=1)  # (R_MAX + 1,)
    for array in (pe, curve):
        array.setflags(write=False)
    return pe, curve


@dataclass(frozen=True, eq=False)
class SinusoidalView:
    """What :func:`sinusoidal_view` computes: two rows of the encoding and their dot product.

    Attributes
    ----------
    d_model : int
    base : float
    p, r : int
        The rows ``p`` and ``p + r``.
    pe : ndarray, shape (N_POSITIONS, d_model)
        The encoding of positions 0 … ``N_POSITIONS − 1`` (read-only).
    theta : ndarray, shape (d_model / 2,)
        ``base^(−2i/d)``, radians per position of pair ``i``.
    offsets : ndarray, shape (R_MAX + 1,)
        ``0 … R_MAX``.
    curve : ndarray, shape (R_MAX + 1,)
        ``Σ_i cos(r θ_i) / (d/2)`` at each offset: the formula, with no ``p`` in it.
    rows : ndarray, shape (R_MAX + 1,)
        ``PE[p] · PE[p + r] / (d/2)`` from the matrix's rows at this ``p``, at each offset.
    dot : float
        ``PE[p] · PE[p + r]``.
    cosine : float
        ``dot / (d/2)``, the cosine of the angle between the two rows.
    dot_from_zero : float
        ``PE[0] · PE[r]``: the same offset from position 0.
    """

    d_model: int
    base: float
    p: int
    r: int
    pe: np.ndarray  # (N_POSITIONS, d)
    theta: np.ndarray  # (d/2,)
    offsets: np.ndarray  # (R_MAX + 1,)
    curve: np.ndarray  # (R_MAX + 1,)
    rows: np.ndarray  # (R_MAX + 1,)
    dot: float
    cosine: float
    dot_from_zero: float


def sinusoidal_view(d_model=64, base=10_000, p=10, r=5) -> SinusoidalView:
    """Rows ``p`` and ``p + r`` of the sinusoidal encoding and their dot product.

    Parameters
    ----------
    d_model : int, default 64
        The width, one of :data:`D_MODELS` (even).
    base : float, default 10000
        One of :data:`BASES`.
    p : int, default 10
        The first row, ``0 … 64``.
    r : int, default 5
        The offset to the second row, ``0 … 64``.

    Returns
    -------
    SinusoidalView

    Raises
    ------
    ValueError
        ``d_model`` or ``base`` not one of the stops, ``p`` or ``r`` not a whole number in
        ``0 … 64``.

    Examples
    --------
    >>> a, b = sinusoidal_view(p=3, r=7), sinusoidal_view(p=50, r=7)
    >>> bool(np.isclose(a.dot, b.dot)), round(a.cosine, 4)
    (True, 0.727)
    >>> sinusoidal_view(r=0).cosine                      # a row with itself: d/2 over d/2
    1.0
    """
    d_model = one_of(d_model, D_MODELS, "d_model")
    base = one_of(base, BASES, "base")
    for name, value, high in (("p", p, P_MAX), ("r", r, R_MAX)):
        if isinstance(value, bool) or not float(value).is_integer() or not 0 <= value <= high:
            raise ValueError(f"{name} must be a whole number in 0 … {high}, got {value!r}")
    p, r = int(p), int(r)
    pe, curve = encoding(d_model, base)  # (N, d), (R_MAX + 1,)
    half = d_model / 2
    rows = pe[p : p + R_MAX + 1] @ pe[p] / half  # (R_MAX + 1,) PE[p + r'] · PE[p] / (d/2)
    dot = float(pe[p] @ pe[p + r])
    return SinusoidalView(
        d_model=d_model,
        base=base,
        p=p,
        r=r,
        pe=pe,
        theta=position_frequencies(d_model, base=base),
        offsets=OFFSETS,
        curve=curve,
        rows=rows,
        dot=dot,
        cosine=dot / half,
        dot_from_zero=float(pe[0] @ pe[r]),
    )


def background_artists(figure) -> dict:
    """The background of a :class:`SinusoidalExplorer` figure: ``matrix`` (the image of PE)
    and ``curve`` (``Σ_i cos(r θ_i) / (d/2)``), found by their ``gid``.

    They change with ``d_model`` and the base only, so they are drawn once per pair of them.
    """
    found = {a.get_gid(): a for ax in figure.axes for a in (*ax.images, *ax.lines) if a.get_gid()}
    return {"matrix": found["matrix"], "curve": found["curve"]}


class SinusoidalExplorer(Explorer):
    """Pick two rows of the sinusoidal encoding; their dot product depends on the offset only.

    Parameters
    ----------
    **initial
        Starting control values: ``d_model`` (one of :data:`D_MODELS`), ``base`` (one of
        :data:`BASES`), ``p`` and ``r`` (0 … 64).

    Examples
    --------
    >>> explorer = SinusoidalExplorer(p=3, r=7)
    >>> before = explorer.state.dot
    >>> explorer.controls["p"].value = 60               # as the slider would
    >>> bool(np.isclose(explorer.state.dot, before)), explorer.state.r
    (True, 7)
    """

    name = "sinusoidal"
    figsize = (9.0, 3.6)

    def make_controls(self) -> dict:
        def slider(value, high, description):
            return IntSlider(
                value=value, min=0, max=high, description=description, layout={"width": "440px"}
            )

        return {
            "d_model": stops_slider(D_MODELS, 64, "width d_model", width="440px"),
            "base": stops_slider(BASES, 10_000, "base", label="{:,}".format, width="440px"),
            "p": slider(10, P_MAX, "position p"),
            "r": slider(5, R_MAX, "offset r"),
        }

    def compute(self, d_model, base, p, r) -> SinusoidalView:
        return sinusoidal_view(d_model, base, p, r)

    def build(self, figure):
        ax_pe, ax_dot = figure.subplots(1, 2, width_ratios=[1.0, 1.25])
        ax_pe.imshow(
            np.zeros((N_POSITIONS, 2)),
            cmap=CMAP,
            vmin=-1,
            vmax=1,
            aspect="auto",
            interpolation="nearest",
            extent=(-0.5, 1.5, N_POSITIONS - 0.5, -0.5),
            gid="matrix",
        )
        ax_pe.set_ylim(N_POSITIONS - 0.5, -0.5)
        ax_pe.xaxis.set_major_locator(MaxNLocator(nbins=5, integer=True))
        ax_pe.set(xlabel="dimension (pairs 2i, 2i + 1)", ylabel="position")
        ax_pe.set_title("PE: red +1, white 0, blue −1", fontsize=10)
        rows = [
            ax_pe.plot(
                [0, 1],
                [0, 0],
                color=colour,
                linewidth=1.6,
                transform=ax_pe.get_yaxis_transform(),  # x across the axes, y a position
                path_effects=_OUTLINED,
                label=label,
            )[0]
            for colour, label in ((ROW_COLOUR, "row p"), (OTHER_ROW_COLOUR, "row p + r"))
        ]

        ax_dot.axhline(0, color="0.6", linewidth=0.8)
        ax_dot.grid(True, color="0.92", linewidth=0.6)
        ax_dot.set_axisbelow(True)
        ax_dot.set_xlim(-1, R_MAX + 1)
        ax_dot.set_ylim(-1.1, 1.1)
        ax_dot.set(xlabel="offset r", ylabel="PE[p] · PE[p + r] ÷ (d/2)")
        ax_dot.set_title("the dot product of two rows", fontsize=10)
        here = ax_dot.axvline(0, color=OTHER_ROW_COLOUR, linewidth=0.9, linestyle=":")
        (curve,) = ax_dot.plot(
            [], [], color=PALETTE["blue"], linewidth=1.4, label="Σᵢ cos(r θᵢ) ÷ (d/2)", gid="curve"
        )
        (dots,) = ax_dot.plot(
            [],
            [],
            "o",
            color=QUERY_COLOUR,
            markerfacecolor=QUERY_COLOUR,  # given, not "auto": each follows the theme alone
            markeredgecolor=QUERY_COLOUR,
            markersize=2.6,
            label="rows p, p + r of PE, this p",
        )
        (dot,) = ax_dot.plot(
            [],
            [],
            "o",
            markerfacecolor=OTHER_ROW_COLOUR,
            markeredgecolor=QUERY_COLOUR,
            markersize=8,
            zorder=5,
            label="at this r",
        )
        figure.legend(
            handles=[*rows, curve, dots, dot],
            loc="outside lower center",
            ncols=5,
            fontsize=9,
            frameon=False,
            columnspacing=1.2,
            handlelength=1.6,
        )
        return {"row_p": rows[0], "row_pr": rows[1], "here": here, "dots": dots, "dot": dot}

    def draw(self, artists, state) -> None:
        d = state.d_model
        figure = artists["dots"].figure
        matrix, curve = background_artists(figure).values()
        matrix.set_data(state.pe)
        matrix.set_extent((-0.5, d - 0.5, N_POSITIONS - 0.5, -0.5))
        matrix.axes.set_xlim(-0.5, d - 0.5)
        matrix.axes.set_ylim(N_POSITIONS - 0.5, -0.5)
        curve.set_data(state.offsets, state.curve)
        if figure is self.view.figure:  # the matrix and the curve: one background per (d, base)
            self.view.use_background((d, state.base))
        artists["row_p"].set_ydata([state.p, state.p])
        artists["row_pr"].set_ydata([state.p + state.r, state.p + state.r])
        artists["here"].set_xdata([state.r, state.r])
        artists["dots"].set_data(state.offsets, state.rows)
        artists["dot"].set_data([state.r], [state.cosine])

    def describe(self, state) -> str:
        half = state.d_model // 2
        return (
            f"<div>d_model = <b>{state.d_model}</b>: {half} pair{'s' if half > 1 else ''}, "
            f"θ from 1 down to {state.theta[-1]:.3g} rad per position (base "
            f"{state.base:,})</div>"
            f"<div>rows p = <b>{state.p}</b> and p + r = {state.p} + {state.r} = "
            f"<b>{state.p + state.r}</b>: PE[p] · PE[p + r] = <b>{num(state.dot, 3)}</b> "
            f"of at most d/2 = {half}, over d/2 <b>{num(state.cosine, 3)}</b></div>"
            f"<div>from position 0, the same offset: PE[0] · PE[r] = "
            f"<b>{num(state.dot_from_zero, 3)}</b>; moving p leaves it where it is</div>"
        )
