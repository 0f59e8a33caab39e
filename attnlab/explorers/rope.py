"""Lesson 10 explorer: move a query and a key, watch the rotary (RoPE) score.

RoPE turns each pair of dimensions ``(2i, 2i+1)`` of a query at position ``m`` by
``m · θ_i`` and of a key at position ``n`` by ``n · θ_i``
(:func:`attnlab.positions.apply_rope`), so their score depends only on ``m − n``:

* **move both by s** (the query to ``m + s``, the key to ``n + s``): both arrows turn by the
  same angle, the angle between them stays, and the score stays put;
* **change m or n**: the offset changes, and the score moves along its curve;
* **far apart**: with ``k = q`` the score falls, unevenly, as the distance grows (RoFormer's
  "long-term decay"); for a key unrelated to the query there is nothing to decay.

Left: one pair of dimensions as a plane (faint: before the rotation). Middle: the score
against the offset ``m − n`` with the key where it is. Right: the score against the distance,
on a log axis to 10 000. The dots are the score computed at the current positions. As the
curves depend only on the offset, they are drawn once per key content (in the kept
background); :func:`rope_view` recomputes them at every step, and the tests check that they
never move.

:func:`rope_view` is the pure computation the explorer shows.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from attnlab.controls import IntSlider, ToggleButtons
from attnlab.explorers.base import SLIDER_WIDTH, Explorer, one_of
from attnlab.explorers.number_text import num
from attnlab.plots.colours import PALETTE, QUERY_COLOUR
from attnlab.plots.log_ticks import power_of_ten_labels
from attnlab.plots.vectors import plane, plot_vectors
from attnlab.positions import apply_rope, position_frequencies

__all__ = ["CONTENTS", "D_HEAD", "RopeExplorer", "RopeView", "curve_lines", "rope_view"]

D_HEAD = 64  # head dimension: 32 pairs, frequencies 1 … 10000^(-62/64)
OFFSETS = np.arange(-64, 65)  # (129,) the middle panel's offsets m − n
DISTANCES = np.unique(np.round(np.logspace(0, 4, 240)).astype(int))  # (n_far,) 1 … 10^4
CONTENTS = {"k = q": "same", "k independent of q": "independent"}
KEY_COLOUR = PALETTE["vermillion"]
# The dots' face and edge are given, not left "auto": an auto face took the line colour after
# the dark theme had lightened it and was darkened again, so the dots vanished on a dark page.
DOT_STYLE = {
    "color": QUERY_COLOUR,
    "markerfacecolor": QUERY_COLOUR,
    "markeredgecolor": QUERY_COLOUR,
    "markersize": 6,
    "zorder": 5,
}


def _content(seed: int) -> np.ndarray:
    """A fixed random row of length √d (unit-variance entries on average), read-only."""
    row = np.random.default_rng(seed).normal(size=D_HEAD)  # (d,)
    row *= math.sqrt(D_HEAD) / np.linalg.norm(row)
    row.setflags(write=False)
    return row


QUERY = _content(10)  # (d,)
OTHER_KEY = _content(11)  # (d,)
THETA = position_frequencies(D_HEAD)  # (d/2,)
# What the score at each distance is on average over random contents (entries of variance 1):
# E[q · R(r) q] / √d = Σ_i E|q_pair i|² cos(r θ_i) / √d = √d · mean_i cos(r θ_i); 0 for a key
# independent of q.
AVERAGE_SAME = math.sqrt(D_HEAD) * np.cos(DISTANCES[:, None] * THETA).mean(axis=1)  # (n_far,)
AVERAGE_INDEPENDENT = np.zeros(DISTANCES.shape)  # (n_far,)
for _curve in (AVERAGE_SAME, AVERAGE_INDEPENDENT):
    _curve.setflags(write=False)


@dataclass(frozen=True, eq=False)
class RopeView:
    """What :func:`rope_view` computes: one query and one key at their positions.

    Attributes
    ----------
    m, n, shift : int
        The query at ``m + shift``, the key at ``n + shift``.
    pair : int
        The pair of dimensions ``(2 pair, 2 pair + 1)`` the plane shows.
    content : str
        ``"same"`` (``k = q``) or ``"independent"``.
    offset : int
        ``m − n``.
    score : float
        ``q_{m+s} · k_{n+s} / √d`` with RoPE.
    plain : float
        ``q · k / √d`` without positions.
    offsets, curve : ndarray, shape (129,)
        The score with the key where it is and the query ``offsets`` positions after it.
    distances, far : ndarray, shape (n_far,)
        The same for distances 1 … 10⁴ (log-spaced).
    average : ndarray, shape (n_far,)
        What ``far`` is on average over random contents: ``√d · mean_i cos(r θ_i)`` for
        ``k = q``, 0 for an independent key.
    theta : float
        ``θ_pair``, radians per position.
    q_pair, k_pair : ndarray, shape (2,)
        The pair before the rotation, as unit vectors.
    q_turned, k_turned : ndarray, shape (2,)
        The pair after it, as unit vectors.
    between : float
        The angle from the turned key to the turned query in this pair, degrees in (−180, 180].
    """

    m: int
    n: int
    shift: int
    pair: int
    content: str
    offset: int
    score: float
    plain: float
    offsets: np.ndarray  # (129,)
    curve: np.ndarray  # (129,)
    distances: np.ndarray  # (n_far,)
    far: np.ndarray  # (n_far,)
    average: np.ndarray  # (n_far,)
    theta: float
    q_pair: np.ndarray  # (2,)
    k_pair: np.ndarray  # (2,)
    q_turned: np.ndarray  # (2,)
    k_turned: np.ndarray  # (2,)
    between: float


def _unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v)  # (2,)


def rope_view(m, n, shift=0, pair=0, content="same") -> RopeView:
    """The RoPE score of the course's query and key at positions ``m + shift`` and ``n + shift``.

    Parameters
    ----------
    m, n : int
        Query and key positions before the shift, >= 0.
    shift : int, default 0
        Added to both positions, >= 0.
    pair : int, default 0
        Which pair of dimensions the plane shows, ``0 .. D_HEAD/2 − 1``.
    content : {"same", "independent"}
        ``k = q`` (the query meets itself), or a key drawn independently of it.

    Returns
    -------
    RopeView

    Raises
    ------
    ValueError
        A position or shift that is negative or not a whole number, a pair out of range, an
        unknown content.

    Examples
    --------
    >>> a, b = rope_view(5, 2), rope_view(5, 2, shift=700)
    >>> round(a.score, 9) == round(b.score, 9), a.offset
    (True, 3)
    >>> state = rope_view(4, 4)                           # no offset: no rotation between them
    >>> bool(np.isclose(state.score, state.plain))
    True
    """
    for name, value in (("m", m), ("n", n), ("shift", shift)):
        if isinstance(value, bool) or not float(value).is_integer() or value < 0:
            raise ValueError(f"{name} must be a whole number >= 0, got {value!r}")
    m, n, shift = int(m), int(n), int(shift)
    pair = one_of(pair, range(D_HEAD // 2), "pair")
    content = one_of(content, tuple(CONTENTS.values()), "content")
    key = QUERY if content == "same" else OTHER_KEY  # (d,)
    q_at, k_at = m + shift, n + shift
    # One call rotates everything: the query at q_at, at k_at + every offset and distance of
    # the curves, and the key at k_at.
    at = np.concatenate([[q_at], k_at + OFFSETS, k_at + DISTANCES, [k_at]])  # (n_rows,)
    rows = np.concatenate([np.broadcast_to(QUERY, (at.size - 1, D_HEAD)), key[None, :]])
    turned = apply_rope(rows, at)  # (n_rows, d)
    scores = turned[:-1] @ turned[-1] / math.sqrt(D_HEAD)  # (n_rows - 1,) q_at · k_at / √d
    score, near, far = scores[0], scores[1 : 1 + OFFSETS.size], scores[1 + OFFSETS.size :]
    dims = slice(2 * pair, 2 * pair + 2)
    q_turned, k_turned = _unit(turned[0, dims]), _unit(turned[-1, dims])
    between = math.degrees(
        math.atan2(
            k_turned[0] * q_turned[1] - k_turned[1] * q_turned[0], float(k_turned @ q_turned)
        )
    )
    return RopeView(
        m=m,
        n=n,
        shift=shift,
        pair=pair,
        content=content,
        offset=m - n,
        score=float(score),
        plain=float(QUERY @ key) / math.sqrt(D_HEAD),
        offsets=OFFSETS,
        curve=near,
        distances=DISTANCES,
        far=far,
        average=AVERAGE_SAME if content == "same" else AVERAGE_INDEPENDENT,
        theta=float(THETA[pair]),
        q_pair=_unit(QUERY[dims]),
        k_pair=_unit(key[dims]),
        q_turned=q_turned,
        k_turned=k_turned,
        between=between,
    )


def curve_lines(figure) -> dict:
    """The curves of a :class:`RopeExplorer` figure, by name: ``near``, ``average``, ``far``.

    They are background lines (drawn once per key content), found by their ``gid``.
    """
    return {line.get_gid(): line for ax in figure.axes for line in ax.get_lines() if line.get_gid()}


class RopeExplorer(Explorer):
    """Move a query and a key (or both together); the rotary score stays or moves.

    Parameters
    ----------
    **initial
        Starting control values: ``m``, ``n`` (0 … 64), ``shift`` (0 … 1000), ``pair``
        (0 … 31) and ``content`` (``"same"`` or ``"independent"``).

    Examples
    --------
    >>> explorer = RopeExplorer(m=6, n=2)
    >>> before = explorer.state.score
    >>> explorer.controls["shift"].value = 500          # as the slider would
    >>> bool(np.isclose(explorer.state.score, before)), explorer.state.offset
    (True, 4)
    """

    name = "rope"
    page_draws_moving = True
    figsize = (9.0, 3.4)

    def make_controls(self) -> dict:
        def slider(value, high, description):
            return IntSlider(
                value=value, min=0, max=high, description=description, layout={"width": "440px"}
            )

        return {
            "m": slider(6, 64, "query position m"),
            "n": slider(2, 64, "key position n"),
            "shift": slider(0, 1000, "move both by s"),
            "pair": IntSlider(
                value=0,
                min=0,
                max=D_HEAD // 2 - 1,
                description="pair i in the plane",
                layout={"width": SLIDER_WIDTH},
            ),
            "content": ToggleButtons(
                options=list(CONTENTS.items()), value="same", description="key content"
            ),
        }

    def compute(self, m, n, shift, pair, content) -> RopeView:
        return rope_view(m, n, shift, pair, content)

    def build(self, figure):
        ax_plane, ax_near, ax_far = figure.subplots(1, 3, width_ratios=[0.8, 1.0, 1.0])
        plane(ax_plane, limit=1.3)
        ax_plane.set_xticks([-1, 0, 1])
        ax_plane.set_yticks([-1, 0, 1])
        ax_plane.set(xlabel="dimension 2i", ylabel="dimension 2i + 1")
        ax_plane.set_title(
            "pair i: k orange, q the other", fontsize=10
        )  # q is ink: black, white on a dark page
        colours = [QUERY_COLOUR, KEY_COLOUR]
        before = plot_vectors([[1.0, 0.0], [0.0, 1.0]], colors=colours, ax=ax_plane, width=0.012)
        before.arrows.set_alpha(0.3)  # faint: before the rotation
        after = plot_vectors(
            [[1.0, 0.0], [0.0, 1.0]], colors=colours, ax=ax_plane, width=0.018, zorder=6
        )

        limit = 1.15 * math.sqrt(D_HEAD)
        for ax in (ax_near, ax_far):
            ax.axhline(0, color="0.6", linewidth=0.8)
            ax.set_ylim(-limit, limit)
            ax.grid(True, color="0.92", linewidth=0.6)
            ax.set_axisbelow(True)
        ax_near.set_xlim(OFFSETS[0], OFFSETS[-1])
        ax_near.set(xlabel="offset m − n", ylabel="score  q·k / √d")
        ax_near.set_title("score against the offset", fontsize=10)
        ax_near.plot([], [], color=PALETTE["blue"], linewidth=1.2, gid="near")
        (near_dot,) = ax_near.plot([], [], "o", **DOT_STYLE)

        ax_far.set_xscale("log")
        power_of_ten_labels(ax_far.xaxis)
        ax_far.set_xlim(DISTANCES[0], DISTANCES[-1])
        ax_far.set(xlabel="distance m − n (query after key)")
        ax_far.set_title("far apart", fontsize=10)
        ax_far.plot(
            [],
            [],
            color=PALETTE["grey"],
            linestyle="--",
            linewidth=1.0,
            label="average over contents",
            gid="average",
        )
        ax_far.plot([], [], color=PALETTE["blue"], linewidth=1.0, label="this q, k", gid="far")
        (far_dot,) = ax_far.plot([], [], "o", **DOT_STYLE)
        ax_far.legend(loc="lower left", fontsize=9, frameon=False)
        return {
            "before": before.arrows,
            "after": after.arrows,
            "near_dot": near_dot,
            "far_dot": far_dot,
        }

    def draw(self, artists, state) -> None:
        before = np.stack([state.q_pair, state.k_pair])  # (2, 2)
        after = np.stack([state.q_turned, state.k_turned])  # (2, 2)
        artists["before"].set_UVC(before[:, 0], before[:, 1])
        artists["after"].set_UVC(after[:, 0], after[:, 1])
        figure = artists["near_dot"].figure
        curves = curve_lines(figure)
        curves["near"].set_data(state.offsets, state.curve)
        curves["average"].set_data(state.distances, state.average)
        curves["far"].set_data(state.distances, state.far)
        if figure is self.view.figure:  # the curves are background: one look per content
            self.view.use_background(state.content)
        artists["near_dot"].set_data([state.offset], [state.score])
        if state.offset >= 1:
            artists["far_dot"].set_data([state.offset], [state.score])
        else:
            artists["far_dot"].set_data([], [])

    def describe(self, state) -> str:
        return (
            f"<div>query at m + s = {state.m} + {state.shift} = <b>{state.m + state.shift}</b>, "
            f"key at n + s = {state.n} + {state.shift} = <b>{state.n + state.shift}</b>, "
            f"offset m − n = <b>{num(state.offset, 0)}</b></div>"
            f"<div>RoPE score q·k / √d = <b>{num(state.score, 3)}</b> "
            f"(without positions: {num(state.plain, 3)}); moving both by s leaves it where "
            "it is</div>"
            f"<div>pair {state.pair} turns {state.theta:.3g} rad per position; "
            f"the turned k → q angle in it: {num(state.between, 1)}°</div>"
        )
