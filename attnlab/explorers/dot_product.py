"""Lesson 1 explorer: turn and stretch a 2-D query, watch its dot products with fixed keys.

The query is ``q = length · (cos angle, sin angle)``. Against each fixed key k_j
the score is the dot product ``q · k_j = q₁k₁ + q₂k₂ = |q| |k_j| cos θ_j``, so

* a key the query points along (θ near 0°) scores high and positive;
* a key at right angles (θ = 90°) scores exactly 0, however long either vector is;
* a key pointing away (θ near 180°) scores negative;
* doubling the query's length doubles every score.

Left: the plane, with the keys (fixed), the query (moving) and the query's shadow
(projection) on one chosen key's line. Right: the scores as bars on a fixed scale.

:func:`dot_product_scores` is the pure computation the explorer shows.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

import ipywidgets as widgets
import numpy as np
from matplotlib.collections import LineCollection

import attnlab
from attnlab.controls import Slider, ToggleButtons
from attnlab.examples import query_and_keys_2d
from attnlab.explorers.base import Explorer
from attnlab.explorers.number_text import factor, num
from attnlab.plots.colours import OKABE_ITO, QUERY_COLOUR
from attnlab.plots.vectors import label_position, plane, plot_vectors

ALIGNED_DEG = 5.0  # within this many degrees of 0° (180°) a pair reads as aligned (opposite)
ORTHOGONAL_DEG = 1.0  # within this many degrees of 90° a pair reads as orthogonal
LEGEND_BAND = 1.3  # the score axis runs to 1.3 × the largest score: the legend sits above


@dataclass(frozen=True, eq=False)
class DotProductScores:
    """What :func:`dot_product_scores` computes: one query, its scores and its geometry.

    Attributes
    ----------
    angle : float
        Direction of the query, in degrees.
    length : float
        ``|q|``.
    projection : int
        Index of the key whose shadow the view draws; -1 for none.
    query : ndarray, shape (2,)
    scores : ndarray, shape (n_k,)
        ``scores[j] = q · keys[j]``.
    key_lengths : ndarray, shape (n_k,)
    cosines : ndarray, shape (n_k,)
        cos of the angle between q and each key.
    angles_deg : ndarray, shape (n_k,)
        That angle, in [0, 180].
    defined : ndarray of bool, shape (n_k,)
        False where q or the key is the zero vector (the angle is then undefined and
        ``cosines``/``angles_deg`` hold 0).
    projections : ndarray, shape (n_k, 2)
        The shadow of q on each key's line, ``(q·k / |k|²) k`` (the zero vector for a
        zero key).
    """

    angle: float
    length: float
    projection: int
    query: np.ndarray  # (2,)
    scores: np.ndarray  # (n_k,)
    key_lengths: np.ndarray  # (n_k,)
    cosines: np.ndarray  # (n_k,)
    angles_deg: np.ndarray  # (n_k,)
    defined: np.ndarray  # (n_k,) bool
    projections: np.ndarray  # (n_k, 2)


def dot_product_scores(angle_deg, length, keys, projection=-1) -> DotProductScores:
    """The query at ``angle_deg`` with length ``length``, and its dot product with every key.

    Parameters
    ----------
    angle_deg : float
        Direction of the query, in degrees anticlockwise from dimension 1.
    length : float
        Length of the query, ``|q| >= 0``.
    keys : array_like, shape (n_k, 2)
        The fixed keys, one per row; finite.
    projection : int, default -1
        Index of the key whose shadow the view draws (-1 for none); only recorded.

    Returns
    -------
    DotProductScores
        The query, its score with every key, the angles and the shadows.

    Raises
    ------
    ValueError
        If ``length`` is negative or not finite, ``keys`` is not (n_k, 2) and finite, or
        ``projection`` is not -1 or the index of a key.

    Examples
    --------
    >>> keys = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]])   # aligned, orthogonal, opposite
    >>> state = dot_product_scores(0.0, 2.0, keys)
    >>> state.scores.tolist()
    [2.0, 0.0, -2.0]
    >>> state.angles_deg.round().tolist()
    [0.0, 90.0, 180.0]
    >>> dot_product_scores(90.0, 1.0, keys).scores.round(12).tolist()
    [0.0, 1.0, -0.0]
    """
    length = float(length)
    if not (np.isfinite(length) and length >= 0):
        raise ValueError(f"length must be finite and >= 0; got {length}")
    keys = np.asarray(keys, dtype=float)  # (n_k, 2)
    if keys.ndim != 2 or keys.shape[1] != 2 or not np.all(np.isfinite(keys)):
        raise ValueError(f"keys must be a finite array of shape (n_k, 2); got shape {keys.shape}")
    projection = int(projection)
    if not -1 <= projection < len(keys):
        raise ValueError(
            f"projection must be -1 (none) or a key index below {len(keys)}; got {projection}"
        )
    angle = np.deg2rad(angle_deg)
    query = length * np.array([np.cos(angle), np.sin(angle)])  # (2,)
    scores = attnlab.attention_scores(query[None, :], keys, scale=1.0)[0]  # (n_k,)
    key_lengths = np.linalg.norm(keys, axis=1)  # (n_k,)
    norms = length * key_lengths  # (n_k,) |q| |k_j|
    defined = norms > 0  # (n_k,)
    cosines = np.divide(scores, norms, out=np.zeros_like(scores), where=defined)  # (n_k,)
    cosines = np.clip(cosines, -1.0, 1.0)
    angles_deg = np.where(defined, np.rad2deg(np.arccos(cosines)), 0.0)  # (n_k,)
    squared = key_lengths**2  # (n_k,)
    along = np.divide(scores, squared, out=np.zeros_like(scores), where=squared > 0)  # (n_k,)
    projections = along[:, None] * keys  # (n_k, 2)
    return DotProductScores(
        angle=float(angle_deg),
        length=length,
        projection=projection,
        query=query,
        scores=scores,
        key_lengths=key_lengths,
        cosines=cosines,
        angles_deg=angles_deg,
        defined=defined,
        projections=projections,
    )


def geometry_word(angle_deg, defined=True) -> str:
    """How a query and a key sit relative to each other, in words, from the angle between them.

    Parameters
    ----------
    angle_deg : float
        Angle between the two vectors, in [0, 180].
    defined : bool, default True
        False when either vector is zero (there is no angle).

    Examples
    --------
    >>> [geometry_word(a) for a in (0, 40, 90, 120, 180)]
    ['aligned', 'partly aligned', 'orthogonal', 'partly opposed', 'opposite']
    >>> geometry_word(0, defined=False)
    'no direction (zero vector)'
    """
    if not defined:
        return "no direction (zero vector)"
    if angle_deg <= ALIGNED_DEG:
        return "aligned"
    if angle_deg >= 180 - ALIGNED_DEG:
        return "opposite"
    if abs(angle_deg - 90) <= ORTHOGONAL_DEG:
        return "orthogonal"
    return "partly aligned" if angle_deg < 90 else "partly opposed"


def reach_segments(extents, cap=0.12):
    """Line segments drawing ``±extents[j]`` as a capped vertical bar at x = j.

    The score ``q·k = |q| |k| cos θ`` can only lie between ``-|q| |k|`` and
    ``+|q| |k|``; the explorer draws that range behind each bar.

    Parameters
    ----------
    extents : array_like, shape (n_k,)
        Non-negative half-heights ``|q| |k_j|``.
    cap : float
        Half-width of the end caps, in bar-axis units.

    Returns
    -------
    ndarray, shape (3 n_k, 2, 2)
        For each key: the vertical segment, the top cap, the bottom cap.

    Examples
    --------
    >>> reach_segments([2.0]).tolist()
    [[[0.0, -2.0], [0.0, 2.0]], [[-0.12, 2.0], [0.12, 2.0]], [[-0.12, -2.0], [0.12, -2.0]]]
    """
    extents = np.asarray(extents, dtype=float)  # (n_k,)
    x = np.arange(len(extents), dtype=float)  # (n_k,)
    vertical = np.stack([np.stack([x, -extents], -1), np.stack([x, extents], -1)], 1)
    top = np.stack([np.stack([x - cap, extents], -1), np.stack([x + cap, extents], -1)], 1)
    bottom = np.stack([np.stack([x - cap, -extents], -1), np.stack([x + cap, -extents], -1)], 1)
    return np.stack([vertical, top, bottom], 1).reshape(-1, 2, 2)  # (3 n_k, 2, 2)


class DotProductExplorer(Explorer):
    """Rotate and stretch a 2-D query; its dot products with three fixed keys update live.

    Parameters
    ----------
    keys : array_like, shape (n_k, 2), optional
        Fixed keys; default the keys of :func:`attnlab.examples.query_and_keys_2d`.
    labels : sequence of str, optional
        Names of the keys; default that example's labels.
    **initial
        Starting control values: ``angle``, ``length``, ``projection``.

    Examples
    --------
    >>> explorer = DotProductExplorer(angle=0, length=1)
    >>> explorer.state.scores.round(2).tolist()
    [1.0, 0.0, -1.0]
    >>> explorer.controls["length"].value = 2.0      # as a slider would
    >>> explorer.state.scores.round(2).tolist()
    [2.0, 0.0, -2.0]
    """

    name = "dot-product"
    page_draws_moving = True
    figsize = (7.0, 3.2)
    max_length = 2.0

    def __init__(self, keys=None, labels=None, **initial):
        example = query_and_keys_2d()
        self.keys = np.asarray(example.keys if keys is None else keys, dtype=float)  # (n_k, 2)
        self.labels = tuple(example.labels if labels is None else labels)
        if len(self.labels) != len(self.keys):
            raise ValueError(
                f"labels must name every key: {len(self.keys)} keys, {len(self.labels)} labels"
            )
        self.colours = [OKABE_ITO[j % len(OKABE_ITO)] for j in range(len(self.keys))]
        super().__init__(**initial)

    # ------------------------------------------------------------------ controls
    def make_controls(self) -> dict:
        wide = widgets.Layout(width="420px")
        return {
            "angle": Slider(
                value=30.0,
                min=0.0,
                max=359.0,
                step=1.0,
                description="query angle (degrees)",
                layout=wide,
            ),
            "length": Slider(
                value=1.0,
                min=0.0,
                max=self.max_length,
                step=0.05,
                description="query length |q|",
                layout=wide,
            ),
            "projection": ToggleButtons(
                options=[*((label, j) for j, label in enumerate(self.labels)), ("none", -1)],
                value=0,
                description="show the shadow of q on key",
            ),
        }

    def compute(self, angle, length, projection) -> DotProductScores:
        return dot_product_scores(angle, length, self.keys, projection)

    # ---------------------------------------------------------------------- view
    @property
    def limit(self) -> float:
        """Half-width of the plane: room for the longest key or query, and their labels."""
        longest = max(self.max_length, float(np.max(np.linalg.norm(self.keys, axis=1))))
        return 1.12 * longest + 0.15

    @property
    def score_limit(self) -> float:
        """Fixed y-limit of the bar chart: the largest |q·k| any slider setting can give."""
        return 1.1 * self.max_length * float(np.max(np.linalg.norm(self.keys, axis=1)))

    def build(self, figure):
        ax_plane, ax_bars = figure.subplots(1, 2, width_ratios=[1.0, 1.1])
        plane(ax_plane, limit=self.limit)
        ax_plane.set_title("query q (moves) and keys (fixed)", fontsize=10)
        plot_vectors(self.keys, self.labels, colors=self.colours, ax=ax_plane)
        query = plot_vectors(
            [[1.0, 0.0]], ["q"], colors=[QUERY_COLOUR], ax=ax_plane, width=0.018, zorder=6
        )
        (key_line,) = ax_plane.plot([], [], linestyle=":", color="0.45", linewidth=1.0, zorder=1)
        (shadow,) = ax_plane.plot([], [], linewidth=7, alpha=0.35, solid_capstyle="butt", zorder=2)
        (drop,) = ax_plane.plot([], [], linestyle="--", color="0.35", linewidth=1.0, zorder=2)

        n_k = len(self.keys)
        ax_bars.axhline(0, color="0.3", linewidth=0.8)
        bars = ax_bars.bar(range(n_k), np.zeros(n_k), width=0.6, color=self.colours)
        reach = LineCollection(
            [], colors="0.35", linewidths=1.2, zorder=0.5, label="possible range  ±|q| |k|"
        )
        ax_bars.add_collection(reach, autolim=False)
        ax_bars.legend(handles=[reach], loc="upper right", fontsize=9, frameon=False)
        ax_bars.set_xticks(range(n_k), [f"q · {label}" for label in self.labels])
        ax_bars.set_xlim(-0.6, n_k - 0.4)
        # A band above the largest score for the legend, which no bar or range reaches.
        ax_bars.set_ylim(-self.score_limit, LEGEND_BAND * self.score_limit)
        ax_bars.set_ylabel("score  q · k")
        ax_bars.set_title("dot product with each key", fontsize=10)
        ax_bars.grid(True, axis="y", color="0.92", linewidth=0.6)
        ax_bars.set_axisbelow(True)
        return {
            "query": query.arrows,
            "query_label": query.labels[0],
            "key_line": key_line,
            "shadow": shadow,
            "drop": drop,
            "bars": list(bars),
            "reach": reach,
        }

    def draw(self, artists, state) -> None:
        (x, y) = state.query
        artists["query"].set_UVC([x], [y])
        artists["query_label"].set_position(label_position(state.query, 0.14))
        for bar, score in zip(artists["bars"], state.scores, strict=True):
            bar.set_height(score)
        artists["reach"].set_segments(reach_segments(state.length * state.key_lengths))
        self._draw_projection(artists, state)

    def _draw_projection(self, artists, state) -> None:
        j = state.projection
        if j < 0 or state.key_lengths[j] == 0:
            for name in ("key_line", "shadow", "drop"):
                artists[name].set_data([], [])
            return
        direction = self.keys[j] / state.key_lengths[j]  # (2,) unit vector along key j
        far = 2 * self.limit * direction  # (2,) beyond the plane's edge
        artists["key_line"].set_data([-far[0], far[0]], [-far[1], far[1]])
        foot = state.projections[j]  # (2,) the shadow's end
        artists["shadow"].set_data([0.0, foot[0]], [0.0, foot[1]])
        artists["shadow"].set_color(self.colours[j])
        artists["drop"].set_data([state.query[0], foot[0]], [state.query[1], foot[1]])

    def describe(self, state) -> str:
        q1, q2 = state.query
        head = (
            f"<p><b>q</b> = ({num(q1)}, {num(q2)}), length |q| = {num(state.length)}, "
            f"angle {state.angle:.0f}°</p>"
        )
        rows = []
        for j, label in enumerate(self.labels):
            k1, k2 = self.keys[j]
            defined = bool(state.defined[j])
            theta = f"{state.angles_deg[j]:.0f}°" if defined else "—"
            cosine = num(state.cosines[j]) if defined else "—"
            polar = (
                f"{num(state.length)} × {num(state.key_lengths[j])} × "
                f"{factor(state.cosines[j])} = "
                f"{num(state.length * state.key_lengths[j] * state.cosines[j])}"
                if defined
                else "— (a zero vector has no angle; its dot products are 0)"
            )
            rows.append(
                f"<tr><td style='color:{self.colours[j]}'><b>{html.escape(label)}</b></td>"
                f"<td>({num(k1)}, {num(k2)})</td>"
                f"<td>{factor(q1)}·{factor(k1)} + {factor(q2)}·{factor(k2)} = "
                f"<b>{num(state.scores[j])}</b></td>"
                f"<td>{theta}</td><td>{cosine}</td>"
                f"<td>{polar}</td><td>{geometry_word(state.angles_deg[j], defined)}</td></tr>"
            )
        table = (
            "<table style='border-collapse:collapse' cellpadding='3'>"
            "<tr><th>key</th><th>k</th><th>q·k = q₁k₁ + q₂k₂</th><th>angle θ</th>"
            "<th>cos θ</th><th>|q| |k| cos θ</th><th>q and k are</th></tr>"
            + "".join(rows)
            + "</table>"
        )
        return head + table
