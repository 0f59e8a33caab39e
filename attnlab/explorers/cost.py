r"""Lesson 8 explorer, the cost lab: the N × N score matrix against one tile of it.

Two sliders, the sequence length ``N`` and the block size ``B`` (powers of two). Left,
the score matrix of one head drawn as a square: the grid of ``B × B`` tiles that
:func:`attnlab.tiling.tiled_attention` walks through (when there are few
enough to draw), the query block it is working on (a light stripe), the one tile in
memory (dark, at the stripe's first key block; never smaller than :data:`MIN_DRAWN` of the side,
so it stays visible, and the caption says when it is drawn larger) and an arrow from it along
the stripe: the loop slides the tile one key block at a time to the stripe's end, then starts the
next stripe down. Right, on log–log
axes, the bytes of the whole score matrix (``N² · 4`` in float32, slope 2: double N,
four times the memory) and of the tiled working set (the Q, K and V tiles being read, one
tile of scores and its exponentials, and the running ``m``, ``ℓ`` and ``acc``), which does
not grow with N once ``N >= B``; a marker on each at the current N. The readout also counts
the arithmetic: tiling saves memory, not work; it adds about ``N² d / B`` rescale multiplies.

Every number comes from formulas in :func:`cost_state`, never from a live timing, so
the explorer is deterministic. The head size is :data:`D` = 64 and the dtype float32,
the setting of the course's memory bar.

Examples
--------
>>> state = cost_state(1024, 64)
>>> state.tiles_per_side, state.matrix_bytes, state.working_bytes
(16, 4194304, 98816)
>>> round(100 * state.fraction, 2)
2.36
>>> state.rescale_flops, round(state.rescale_flops / state.flops, 5)
(1064960, 0.00397)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import ipywidgets as widgets
import numpy as np
from matplotlib.collections import LineCollection
from matplotlib.patches import Rectangle

from attnlab.explorers.base import Explorer, one_of, stops_slider
from attnlab.plots.colours import PALETTE
from attnlab.plots.outline_labels import OutlineLabels

__all__ = [
    "BLOCKS",
    "D",
    "LENGTHS",
    "CostExplorer",
    "CostState",
    "cost_state",
    "format_bytes",
    "working_set",
]

LENGTHS = tuple(2**e for e in range(4, 15))  # N = 16 … 16384
BLOCKS = tuple(2**e for e in range(0, 11))  # B = 1 … 1024
D = 64  # head size d_k = d_v
ITEMSIZE = np.dtype(np.float32).itemsize
MAX_GRID = 64  # tile boundaries are drawn up to this many tiles per side
MATRIX_COLOUR, TILE_COLOUR = PALETTE["vermillion"], PALETTE["blue"]
LABEL_SIZE = 9.0  # points
MIN_DRAWN = 0.035  # a tile or stripe thinner than this (about 10 pixels) is drawn this thick


def working_set(block, d=D, itemsize=ITEMSIZE):
    """Bytes the tiled loop holds besides the inputs and the output, for a block size ``block``.

    The tiles of Q, K and V being read (``block × d`` each: a fast on-chip memory must hold
    them too), one ``block × block`` tile of scores and one of their exponentials, the
    running weighted sum ``acc`` (``block × d``) and the running max and sum (``block``
    each). With ``d_k = d_v = d``.

    Examples
    --------
    >>> working_set(64)
    98816
    >>> working_set(np.array([1, 2]), d=1, itemsize=1).tolist()
    [8, 20]
    """
    block = np.asarray(block, dtype=np.int64)
    tiles_in = 3 * block * d  # the Q, K and V tiles
    result = (2 * block * block + tiles_in + block * d + 2 * block) * itemsize
    return int(result) if result.ndim == 0 else result


@dataclass(frozen=True, eq=False)
class CostState:
    """What :func:`cost_state` computes: memory and flops of attention at one ``N`` and ``B``.

    Attributes
    ----------
    n : int
    block_size : int
    block : int
        The block actually used, ``min(B, N)``.
    tiles_per_side : int
        ``ceil(N / block)``.
    tiles : int
        Its square.
    matrix_bytes : int
        ``N² · 4``.
    working_bytes : int
        :func:`working_set`.
    fraction : float
        Working / matrix.
    flops : int
        ``4 N² d``: ``QKᵀ`` and the weighted sum, both ways.
    rescale_flops : int
        What tiling adds: per query row and key block, ``acc`` and ``ℓ`` are multiplied by
        the rescale factor, ``N · ceil(N / B) · (d + 1)``, about ``N² d / B``.
    lengths : ndarray, shape (L,)
        :data:`LENGTHS` as an array.
    matrix_curve, working_curve : ndarray, shape (L,)
        Bytes at every length.
    """

    n: int
    block_size: int
    block: int
    tiles_per_side: int
    tiles: int
    matrix_bytes: int
    working_bytes: int
    fraction: float
    flops: int
    rescale_flops: int
    lengths: np.ndarray  # (L,)
    matrix_curve: np.ndarray  # (L,)
    working_curve: np.ndarray  # (L,)


def cost_state(n, block_size) -> CostState:
    """What the cost lab shows for sequence length ``n`` and block size ``block_size``.

    Parameters
    ----------
    n : int
        One of :data:`LENGTHS`.
    block_size : int
        One of :data:`BLOCKS`; a block larger than ``n`` is one block of ``n``.

    Returns
    -------
    CostState
        The full matrix's and the tiles' memory, the flops, and both curves over ``N``.

    Raises
    ------
    ValueError
        If ``n`` or ``block_size`` is not one of the slider values.

    Examples
    --------
    >>> s = cost_state(16, 1024)          # a block beyond N: one tile, the whole matrix
    >>> s.block, s.tiles, s.working_bytes > s.matrix_bytes
    (16, 1, True)
    >>> s = cost_state(16384, 64)
    >>> s.matrix_bytes // 2**20, s.working_bytes // 2**10, f"{s.fraction:.4%}"
    (1024, 96, '0.0092%')
    """
    n = one_of(n, LENGTHS, "n")
    block_size = one_of(block_size, BLOCKS, "block_size")
    block = min(block_size, n)
    lengths = np.array(LENGTHS)  # (L,)
    per_side = -(-n // block)
    matrix = n * n * ITEMSIZE
    working = working_set(block)
    return CostState(
        n=n,
        block_size=block_size,
        block=block,
        tiles_per_side=per_side,
        tiles=per_side * per_side,
        matrix_bytes=matrix,
        working_bytes=working,
        fraction=working / matrix,
        flops=4 * n * n * D,
        rescale_flops=n * per_side * (D + 1),
        lengths=lengths,
        matrix_curve=lengths * lengths * ITEMSIZE,  # (L,)
        working_curve=working_set(np.minimum(block_size, lengths)),  # (L,)
    )


def format_bytes(count) -> str:
    """Bytes in binary units, 3 significant digits: ``'268 B'``, ``'48.5 KiB'``, ``'1 GiB'``.

    Examples
    --------
    >>> format_bytes(268), format_bytes(49664), format_bytes(2**30), format_bytes(1536 * 2**20)
    ('268 B', '48.5 KiB', '1 GiB', '1.5 GiB')
    """
    count = float(count)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if count < 1024 or unit == "GiB":
            return f"{count:.3g} {unit}"
        count /= 1024
    raise AssertionError("unreachable")


def _grid_segments(state) -> list:
    """Tile boundaries in matrix fractions, or none when there are too many to see."""
    if state.tiles_per_side > MAX_GRID or state.tiles_per_side == 1:
        return []
    cuts = np.arange(1, state.tiles_per_side) * state.block / state.n  # (t - 1,)
    return [[(c, 0.0), (c, 1.0)] for c in cuts] + [[(0.0, c), (1.0, c)] for c in cuts]


class CostExplorer(Explorer):
    """Change N and the block size: the N × N matrix grows like N², one tile does not.

    Parameters
    ----------
    **initial
        Starting control values: ``n`` (one of :data:`LENGTHS`, starting at 1024)
        and ``block_size`` (one of :data:`BLOCKS`, starting at 64).

    Examples
    --------
    >>> lab = CostExplorer(n=256, block_size=64)
    >>> lab.state.tiles, len(lab.artists["grid"].get_segments())
    (16, 6)
    """

    name = "cost"
    page_draws_moving = True
    figsize = (8.6, 3.9)

    def make_controls(self) -> dict:
        # The same widths for both: the tracks line up.
        same = {"label": "{:,}".format, "width": "470px", "label_width": "130px"}
        return {
            "n": stops_slider(LENGTHS, 1024, "sequence length N", **same),
            "block_size": stops_slider(BLOCKS, 64, "block size B", **same),
        }

    def compute(self, n, block_size) -> CostState:
        return cost_state(n, block_size)

    def build(self, figure):
        matrix_ax, memory_ax = figure.subplots(1, 2, width_ratios=[1.0, 1.45])
        matrix_ax.add_patch(
            Rectangle(
                (0, 0),
                1,
                1,
                facecolor=MATRIX_COLOUR,
                alpha=0.12,
                edgecolor=MATRIX_COLOUR,
                linewidth=1.2,
            )
        )
        matrix_ax.set(xlim=(-0.02, 1.02), ylim=(1.02, -0.12), aspect="equal")
        matrix_ax.set_xticks([])
        matrix_ax.set_yticks([])
        matrix_ax.set_xlabel("keys →", fontsize=9)
        matrix_ax.set_ylabel("← queries", fontsize=9)
        for side in matrix_ax.spines.values():
            side.set_visible(False)
        grid = LineCollection([], colors="white", linewidths=0.6)
        matrix_ax.add_collection(grid, autolim=False)
        stripe = Rectangle((0, 0), 1, 0, facecolor=TILE_COLOUR, alpha=0.25, edgecolor="none")
        tile = Rectangle((0, 0), 0, 0, facecolor=TILE_COLOUR, edgecolor=TILE_COLOUR, linewidth=1.5)
        matrix_ax.add_patch(stripe)
        matrix_ax.add_patch(tile)
        # The tile's walk: from it along the stripe to the last key block (arrowhead at the end).
        (walk,) = matrix_ax.plot(
            [0, 1],
            [0, 0],
            color=TILE_COLOUR,
            linewidth=1.2,
            marker=">",
            markevery=[1],
            markersize=5,
        )
        caption = OutlineLabels(matrix_ax, [(0.5, -0.06)], LABEL_SIZE)
        caption.set_clip_on(False)

        lengths = np.array(LENGTHS)
        memory_ax.loglog(
            lengths,
            lengths * lengths * ITEMSIZE,
            color=MATRIX_COLOUR,
            linewidth=2,
            label="N × N scores (plain)",
        )
        (working,) = memory_ax.loglog(
            lengths,
            lengths * 0 + working_set(1),
            color=TILE_COLOUR,
            linewidth=2,
            label="tiled working set",
        )
        (now,) = memory_ax.plot([1, 1], [1, 1], color="black", linestyle=":", linewidth=1)
        (markers,) = memory_ax.plot(
            [1, 1], [1, 1], linestyle="none", marker="o", markersize=6, color="black"
        )
        values = OutlineLabels(memory_ax, [(1, 1), (1, 1)], LABEL_SIZE)
        low, high = working_set(1) / 3, 2**33
        memory_ax.set(
            xlim=(LENGTHS[0] / 1.4, LENGTHS[-1] * 1.4),
            ylim=(low, high),
            xlabel="sequence length N",
            ylabel="bytes (float32, d = 64)",
        )
        ticks = [2**10, 2**20, 2**30]
        memory_ax.set_yticks(ticks, [format_bytes(t) for t in ticks])
        memory_ax.set_xticks([16, 128, 1024, 16384], ["16", "128", "1,024", "16,384"])
        memory_ax.minorticks_off()
        memory_ax.grid(True, which="major", alpha=0.3)
        memory_ax.legend(loc="upper left", fontsize=9, frameon=False)
        memory_ax.spines[["top", "right"]].set_visible(False)
        return {
            "grid": grid,
            "stripe": stripe,
            "tile": tile,
            "walk": walk,
            "caption": caption,
            "working": working,
            "now": now,
            "markers": markers,
            "values": values,
        }

    def draw(self, artists, state) -> None:
        size = state.block / state.n  # a tile's side, as a fraction of the matrix
        drawn = max(size, MIN_DRAWN)
        artists["grid"].set_segments(_grid_segments(state))
        artists["stripe"].set_height(drawn)
        artists["tile"].set_width(drawn)
        artists["tile"].set_height(drawn)
        artists["walk"].set_data([drawn + 0.02, 0.97], [drawn / 2, drawn / 2])
        artists["walk"].set_visible(state.tiles_per_side > 1)
        per_side = state.tiles_per_side
        grid = f"{per_side:,} × {per_side:,} tiles" if state.tiles > 1 else "one tile"
        shown = " (drawn larger)" if size < MIN_DRAWN else ""
        artists["caption"].set_texts(
            [f"N = {state.n:,}: {grid} of {state.block:,} × {state.block:,}{shown}"], ["black"]
        )
        artists["working"].set_ydata(state.working_curve)
        ys = [state.matrix_bytes, state.working_bytes]
        # Up to the higher marker only: a line to the top would cross the legend at small N.
        artists["now"].set_data([state.n, state.n], [artists["now"].axes.get_ylim()[0], max(ys)])
        artists["markers"].set_data([state.n, state.n], ys)
        right = state.n <= 1024  # numbers to the right of the markers, or to the left
        gap = 1.2 if right else 1 / 1.2
        above = [3.0 if y >= other else 1 / 3 for y, other in zip(ys, ys[::-1], strict=True)]
        low = artists["now"].axes.get_ylim()[0]
        above = [1.0 if y * f < 1.5 * low else f for y, f in zip(ys, above, strict=True)]  # room
        artists["values"].set_offsets(
            [[state.n * gap, y * f] for y, f in zip(ys, above, strict=True)]
        )
        artists["values"].set_texts(
            [format_bytes(y) for y in ys],
            [MATRIX_COLOUR, TILE_COLOUR],
            ["left" if right else "right"] * 2,
        )

    def describe(self, state) -> str:
        return _readout(state)

    def layout(self) -> widgets.Box:
        c = self.controls
        return widgets.VBox([c["n"], c["block_size"], self.view.widget, self.readout, self.error])


def _readout(state) -> str:
    """The numbers under the figure, as HTML."""
    n, b = state.n, state.block
    clipped = (
        f" (B = {state.block_size:,} is more than N, so one block of {n:,})"
        if state.block_size > n
        else ""
    )
    if state.fraction < 0.01:
        share = f"1/{round(1 / state.fraction):,} of the matrix"
    elif state.fraction < 1:
        share = f"{100 * state.fraction:.3g} % of the matrix"
    else:
        share = f"{state.fraction:.3g} × the matrix: at this N tiling does not pay"
    tiles = f"{state.tiles:,} tiles in all" if state.tiles > 1 else "the only tile"
    return (
        f"<div>N = <b>{n:,}</b>: the score matrix of one head holds {n:,} × {n:,} = "
        f"<b>{n * n:,}</b> scores, <b>{format_bytes(state.matrix_bytes)}</b> in float32.</div>"
        f"<div>Tiled with B = <b>{b:,}</b>{clipped}: one {b:,} × {b:,} tile at a time, "
        f"{tiles}; the working set is <b>{format_bytes(state.working_bytes)}</b>, "
        f"{share}.</div>"
        f"<div>The plain way does 4·N²·d = <b>{state.flops:,}</b> floating-point operations "
        f"(about {_power_of_ten(state.flops)}); tiling adds N·⌈N/B⌉·(d + 1) = "
        f"<b>{state.rescale_flops:,}</b> rescale multiplies (about N²d/B, "
        f"{100 * state.rescale_flops / state.flops:.2g} % more): it saves memory, not "
        "work.</div>"
    )


def _power_of_ten(count: int) -> str:
    exponent = int(math.floor(math.log10(count)))
    return f"{count / 10**exponent:.1f} × 10<sup>{exponent}</sup>"
