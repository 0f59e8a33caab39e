r"""Lesson 7 explorer, the bug lab: a correct attention and a buggy one, side by side.

The input is "The cat sat down" (:func:`attnlab.examples.cat_sat_down_wide`, d_model = 16),
multiplied by an *input scale*, in a decoder: a causal mask hides the future. A layer with
``h`` heads gives each head d_head = 16 / h dimensions; the lab shows the first head, whose
queries and keys are ``X W_q[:, :d_head]`` and ``X W_k[:, :d_head]`` (at h = 2 that is the
running example of lessons 1–6). The correct weights are

    softmax(where(causal, Q Kᵀ / √d_head, −∞))

computed in the chosen dtype (the scores are computed in float64 and rounded once, and
:func:`attnlab.softmax` works in float32 for float16, as libraries do). Each bug is a class
of mistake that has shipped in published attention code:

* ``"÷ √d_model, not √d_head"``: the scores are divided by √16 whatever the head size, √h
  times too much: the weights come out too flat (and not at all with one head);
* ``"mask after softmax"``: the softmax of the unmasked scores, the future weights zeroed
  afterwards: rows no longer sum to 1;
* ``"mask with 0, not −∞"``: the future scores set to 0 before the softmax: exp(0) = 1, so
  weight leaks to the future;
* ``"no max shift"``: :func:`attnlab.naive_softmax` in the dtype itself: once a score passes
  log(max of the dtype), about 11.09 in float16 and 88.72 in float32, exp overflows and the
  row turns to NaN.

The view: the correct weights and the buggy ones as heatmaps on a fixed ``[0, 1]`` scale
(future cells hatched, NaN cells grey and written ``nan``), the chosen query's row outlined
in both, and that row's weights as pairs of bars. The pure part is :func:`bug_lab_state`;
:class:`BugLabExplorer` draws it in place.

Examples
--------
>>> state = bug_lab_state("÷ √d_model, not √d_head", heads=4, scale=1.0, query="cat")
>>> state.d_head, round(state.divisor, 3), round(state.wrong_divisor, 3)
(4, 2.0, 4.0)
>>> bool(state.right[1].max() > state.wrong[1].max())     # the bug flattens the row
True
>>> late = bug_lab_state("mask after softmax", 2, 1.0, "cat")
>>> round(float(late.wrong_sums[1]), 3) < 1.0
True
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass

import ipywidgets as widgets
import numpy as np
from matplotlib.patches import PathPatch, Rectangle

import attnlab
from attnlab.controls import Dropdown, ToggleButtons
from attnlab.examples import cat_sat_down_wide
from attnlab.explorers.base import Explorer, one_of, stops_slider
from attnlab.plots.bars import Bars
from attnlab.plots.colours import PALETTE
from attnlab.plots.heatmap import cell_squares, show_weights, weights_heatmap
from attnlab.plots.outline_labels import OutlineLabels

__all__ = [
    "BUGS",
    "DTYPES",
    "HEADS",
    "SCALES",
    "TOKENS",
    "BugLabExplorer",
    "BugLabState",
    "bug_lab_state",
]

SCALE_BUG, AFTER, ZERO, SHIFT = BUGS = (
    "÷ √d_model, not √d_head",
    "mask after softmax",
    "mask with 0, not −∞",
    "no max shift",
)
HEADS = (1, 2, 4, 8, 16)  # with d_model = 16: head sizes 16, 8, 4, 2, 1
SCALES = (0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0)  # the scores grow like scale²
DTYPES = ("float32", "float16")
EXAMPLE = cat_sat_down_wide(max_d_k=16)  # x (4, 16); w_q, w_k (16, 16)
for _array in (EXAMPLE.x, EXAMPLE.w_q, EXAMPLE.w_k):
    _array.flags.writeable = False  # shared by every call and every explorer
del _array
TOKENS = EXAMPLE.tokens
N = len(TOKENS)
D_MODEL = EXAMPLE.x.shape[1]
CAUSAL = attnlab.causal_mask(N)  # (n, n) True where query i may see key j
CELL_SIZE, CAPTION_SIZE = 9.0, 9.0  # font sizes in points
BAR_TOP = 1.25  # the weight axis: bars up to 1, the legend above them
RIGHT_COLOUR, BUG_COLOUR = PALETTE["blue"], PALETTE["vermillion"]
CAPTION_GAP = 0.3  # captions sit this far above the top row, in cells
BAR_WIDTH = 0.38


@dataclass(frozen=True, eq=False)
class BugLabState:
    """What :func:`bug_lab_state` computes: the first head's weights, correct and with a bug.

    Attributes
    ----------
    tokens : tuple of str
    bug : str
    heads : int
    d_head : int
    scale : float
    query : int
        Row index of the query compared.
    dtype : str
    divisor : float
        √d_head.
    wrong_divisor : float
        √d_model for the scaling bug, else √d_head.
    scores : ndarray, shape (4, 4)
        float64, the correct scaled scores as rounded to ``dtype``.
    right, wrong : ndarray, shape (4, 4)
        float64 weights (``wrong`` may hold NaN).
    diff : ndarray, shape (4, 4)
        ``|wrong − right|`` (NaN where ``wrong`` is).
    right_sums, wrong_sums : ndarray, shape (4,)
    leak : ndarray, shape (4,)
        Weight on future keys.
    nan_rows : ndarray of bool, shape (4,)
    top_score : float
        The largest allowed score.
    row_tops : ndarray, shape (4,)
        Each row's largest allowed score.
    limit : float
        log of the dtype's largest number.
    """

    tokens: tuple[str, ...]
    bug: str
    heads: int
    d_head: int
    scale: float
    query: int
    dtype: str
    divisor: float
    wrong_divisor: float
    scores: np.ndarray  # (n, n)
    right: np.ndarray  # (n, n)
    wrong: np.ndarray  # (n, n)
    diff: np.ndarray  # (n, n)
    right_sums: np.ndarray  # (n,)
    wrong_sums: np.ndarray  # (n,)
    leak: np.ndarray  # (n,)
    nan_rows: np.ndarray  # (n,) bool
    top_score: float
    row_tops: np.ndarray  # (n,)
    limit: float


def bug_lab_state(
    bug: str, heads: int, scale: float, query: str, dtype: str = "float32"
) -> BugLabState:
    """The first head's weights, correct and with ``bug``, on the scaled running example.

    Parameters
    ----------
    bug : str
        One of :data:`BUGS`.
    heads : int
        One of :data:`HEADS`; the head size is ``16 // heads``.
    scale : float
        One of :data:`SCALES`; the embeddings are multiplied by it (the scores by its square).
    query : str
        The token whose row is compared, one of :data:`TOKENS`.
    dtype : str, default "float32"
        One of :data:`DTYPES`.

    Returns
    -------
    BugLabState
        The correct and the buggy weights of the first head, and how they differ.

    Raises
    ------
    ValueError
        If an argument is not one of its options; the message names it.

    Examples
    --------
    >>> leaky = bug_lab_state("mask with 0, not −∞", 2, 1.0, "The")
    >>> bool(leaky.leak[0] > 0.5), float(leaky.leak[-1])     # "The" sees only itself
    (True, 0.0)
    >>> hot = bug_lab_state("no max shift", 4, 12.0, "down", "float16")
    >>> bool(hot.nan_rows.any()), round(hot.limit, 2)
    (True, 11.09)
    """
    bug = one_of(bug, BUGS, "bug")
    heads = one_of(heads, HEADS, "heads")
    scale = one_of(scale, SCALES, "scale")
    row = one_of(query, TOKENS, "query")
    dtype = one_of(dtype, DTYPES, "dtype")
    d_head = D_MODEL // heads
    x = EXAMPLE.x * scale  # (n, d_model)
    q, k = x @ EXAMPLE.w_q[:, :d_head], x @ EXAMPLE.w_k[:, :d_head]  # (n, d_head) each
    raw = q @ k.T  # (n, n) float64
    divisor = math.sqrt(d_head)
    wrong_divisor = math.sqrt(D_MODEL) if bug == SCALE_BUG else divisor
    scores = (raw / divisor).astype(dtype)  # (n, n) rounded once, as a library would
    masked = np.where(CAUSAL, scores, -np.inf).astype(dtype)  # (n, n)
    right = attnlab.softmax(masked)  # (n, n) in dtype
    if bug == SCALE_BUG:
        wrong = attnlab.softmax(np.where(CAUSAL, raw / wrong_divisor, -np.inf).astype(dtype))
    elif bug == AFTER:
        wrong = attnlab.softmax(scores) * CAUSAL  # (n, n) not renormalised
    elif bug == ZERO:
        wrong = attnlab.softmax(np.where(CAUSAL, scores, 0).astype(dtype))  # (n, n)
    else:
        wrong = attnlab.naive_softmax(masked)  # (n, n) exp in dtype: may overflow to NaN
    right, wrong = right.astype(np.float64), wrong.astype(np.float64)  # (n, n) each
    nan_rows = np.isnan(wrong).any(axis=1)  # (n,)
    return BugLabState(
        tokens=TOKENS,
        bug=bug,
        heads=heads,
        d_head=d_head,
        scale=scale,
        query=TOKENS.index(row),
        dtype=dtype,
        divisor=divisor,
        wrong_divisor=wrong_divisor,
        scores=scores.astype(np.float64),
        right=right,
        wrong=wrong,
        diff=np.abs(wrong - right),
        right_sums=right.sum(axis=1),
        wrong_sums=wrong.sum(axis=1),
        leak=np.where(CAUSAL, 0.0, wrong).sum(axis=1),
        nan_rows=nan_rows,
        top_score=float(scores[CAUSAL].max()),
        row_tops=masked.astype(np.float64).max(axis=1),
        limit=math.log(float(np.finfo(dtype).max)),
    )


class BugLabExplorer(Explorer):
    """Pick a bug; move the head count, the input scale and the query; compare with the correct.

    Parameters
    ----------
    **initial
        Starting control values. Controls: ``bug`` (:data:`BUGS`, starting with the √d_model
        bug), ``heads`` (:data:`HEADS`, starting at 4, so d_head = 4), ``scale``
        (:data:`SCALES`, starting at 1), ``query`` (a token, starting at "cat") and ``dtype``
        (:data:`DTYPES`, starting at float32). Every slider changes the picture at every
        setting.

    Examples
    --------
    >>> lab = BugLabExplorer(bug="no max shift", scale=12.0, dtype="float16")
    >>> "nan" in lab.artists["wrong_cells"].texts
    True
    """

    name = "bug_lab"
    figsize = (8.8, 3.5)  # 880 px: fits the 904 px notebook at 1366 wide with a 280 px sidebar

    def make_controls(self) -> dict:
        return {
            "bug": Dropdown(options=list(BUGS), value=SCALE_BUG, description="bug"),
            "heads": stops_slider(HEADS, 4, f"heads (d_model = {D_MODEL})"),
            "scale": stops_slider(SCALES, 1.0, "input scale", label="{:g}".format),
            "query": stops_slider(TOKENS, "cat", "query row"),
            "dtype": ToggleButtons(options=list(DTYPES), value="float32", description="dtype"),
        }

    def compute(self, bug, heads, scale, query, dtype) -> BugLabState:
        return bug_lab_state(bug, heads, scale, query, dtype)

    def build(self, figure):
        right_ax, wrong_ax, bar_ax = figure.subplots(1, 3, width_ratios=[1.0, 1.22, 1.0])
        drawn = {}
        for side, ax in (("right", right_ax), ("wrong", wrong_ax)):
            heat = weights_heatmap(TOKENS, ax=ax, colorbar=side == "wrong", cell_size=CELL_SIZE)
            future = PathPatch(
                cell_squares(CAUSAL),
                facecolor="none",
                edgecolor="white",
                hatch="//",
                linewidth=0,
                alpha=0.55,
                zorder=2,
            )
            ax.add_patch(future)  # never changes, but is redrawn over the moving colours
            row = Rectangle(
                (-0.5, 0.5),
                N,
                1.0,
                fill=False,
                linewidth=2.5,
                zorder=4,
                edgecolor=RIGHT_COLOUR if side == "right" else BUG_COLOUR,
            )
            ax.add_patch(row)
            caption = OutlineLabels(ax, [((N - 1) / 2, -0.5 - CAPTION_GAP)], CAPTION_SIZE)
            caption.set_clip_on(False)
            ax.set_title(" ", fontsize=3 * CAPTION_SIZE)  # keeps room for the caption
            drawn |= {f"{side}_{key}": artist for key, artist in heat.items()}
            drawn |= {f"{side}_future": future, f"{side}_row": row, f"{side}_caption": caption}
        wrong_ax.set_ylabel("")  # the left heatmap names the rows for both

        keys = np.arange(N)  # (n_k,)
        right_bars = Bars(
            bar_ax, keys - BAR_WIDTH / 2, BAR_WIDTH, facecolor=RIGHT_COLOUR, label="correct"
        )
        wrong_bars = Bars(
            bar_ax, keys + BAR_WIDTH / 2, BAR_WIDTH, facecolor=BUG_COLOUR, label="with the bug"
        )
        nan_marks = OutlineLabels(
            bar_ax, np.column_stack([keys + BAR_WIDTH / 2, np.full(N, 0.06)]), 9.0
        )
        bar_caption = OutlineLabels(bar_ax, [((N - 1) / 2, BAR_TOP + 0.06)], CAPTION_SIZE)
        bar_caption.set_clip_on(False)
        bar_ax.set_title(" ", fontsize=3 * CAPTION_SIZE)
        # The legend has its own band above weight 1, where no bar reaches.
        bar_ax.set(xlim=(-0.6, N - 0.4), ylim=(0.0, BAR_TOP), xlabel="key")
        bar_ax.set_yticks([0.0, 0.25, 0.5, 0.75, 1.0], ["0", "0.25", "0.5", "0.75", "1"])
        bar_ax.set_xticks(keys, TOKENS)
        bar_ax.legend(
            loc="upper center",
            fontsize=9,
            frameon=False,
            ncols=2,
            bbox_to_anchor=(0.5, 1.0),
            handlelength=1.0,
            columnspacing=1.0,
        )
        for spine in ("top", "right"):
            bar_ax.spines[spine].set_visible(False)
        bar_ax.spines["left"].set_bounds(0.0, 1.0)
        return drawn | {
            "right_bars": right_bars,
            "wrong_bars": wrong_bars,
            "nan_marks": nan_marks,
            "bar_caption": bar_caption,
        }

    def draw(self, artists, state) -> None:
        for side in ("right", "wrong"):
            heat = {key: artists[f"{side}_{key}"] for key in ("image", "squares", "cells")}
            show_weights(heat, getattr(state, side), exact_zero=True)  # 0: the hatched future
            artists[f"{side}_row"].set_y(state.query - 0.5)
        artists["right_caption"].set_texts(
            [f"correct · ÷ √{state.d_head} · {state.dtype}"], ["black"]
        )
        artists["wrong_caption"].set_texts([_bug_caption(state)], [BUG_COLOUR])
        i = state.query
        artists["right_bars"].set_values(state.right[i])
        wrong_row = state.wrong[i]  # (n_k,)
        artists["wrong_bars"].set_values(np.nan_to_num(wrong_row))
        artists["nan_marks"].set_texts(
            ["nan" if np.isnan(w) else "" for w in wrong_row], [BUG_COLOUR] * N
        )
        sums = "nan" if state.nan_rows[i] else f"{state.wrong_sums[i]:.2f}"
        artists["bar_caption"].set_texts(
            [f"row “{state.tokens[i]}” sums to {state.right_sums[i]:.2f} | {sums}"], ["black"]
        )

    def describe(self, state) -> str:
        return _readout(state)

    def layout(self) -> widgets.Box:
        c = self.controls
        return widgets.VBox(
            [
                c["bug"],
                widgets.HBox([c["heads"], c["scale"]]),
                widgets.HBox([c["query"], c["dtype"]]),
                self.view.widget,
                self.readout,
                self.error,
            ]
        )


def _bug_caption(state) -> str:
    if state.bug == SCALE_BUG:
        return f"bug · ÷ √{D_MODEL} · {state.dtype}"
    return f"bug · {state.bug} · {state.dtype}"


def _row(values) -> str:
    return "[" + ", ".join(f"{v:.3f}" for v in values) + "]"


def _symptom(state) -> str:
    """What the bug does at this setting, in one HTML sentence (never the words nan or inf)."""
    tokens = state.tokens
    if state.bug == SCALE_BUG:
        if state.heads == 1:
            return (
                "With one head, d_head = d_model: the bug changes nothing, which is how it "
                "survives single-head tests. Add heads."
            )
        factor = state.wrong_divisor / state.divisor
        return (
            f"The bug divides by √{D_MODEL} = {state.wrong_divisor:g} instead of "
            f"√{state.d_head} = {state.divisor:.3g}: the scores are "
            f"<b>{factor:.3g}×</b> too small (√h), a temperature of {factor:.3g}. "
            f"Largest weight per row, on average: correct "
            f"<b>{state.right.max(axis=1).mean():.3f}</b>, with the bug "
            f"<b>{state.wrong.max(axis=1).mean():.3f}</b>."
        )
    if state.bug == AFTER:
        short = state.wrong_sums < 1 - 1e-3  # (n,)
        lost = 1 - state.wrong_sums
        worst = int(np.argmax(lost))
        return (
            f"<b>{int(short.sum())}</b> of {N} rows sum to less than 1; row "
            f"“{html.escape(tokens[worst])}” keeps only <b>{state.wrong_sums[worst]:.3f}"
            "</b>: the future's share is thrown away, not handed to the allowed keys."
        )
    if state.bug == ZERO:
        worst = int(np.argmax(state.leak))
        return (
            f"Weight on future keys: <b>{state.leak.sum():.3f}</b> in all; the most, "
            f"<b>{state.leak[worst]:.3f}</b>, in row “{html.escape(tokens[worst])}”. "
            "exp(0) = 1, so a score of 0 is not 'never'."
        )
    if state.nan_rows.any():
        over = state.nan_rows & (state.row_tops > state.limit)  # (n,) exp overflowed
        under = state.nan_rows & ~over  # (n,) every exp underflowed to 0: 0 / 0
        parts = []
        if over.any():
            parts.append(
                f"in <b>{int(over.sum())}</b> row(s) a score passes {state.limit:.4g}, "
                f"where exp overflows {state.dtype} (∞ / ∞)"
            )
        if under.any():
            parts.append(
                f"in <b>{int(under.sum())}</b> row(s) every score is so negative "
                "that each exp underflows to 0 (0 / 0)"
            )
        return (
            f"The largest score is <b>{state.top_score:.4g}</b>; "
            f"{' and '.join(parts)}: {int(state.nan_rows.sum())} row(s) came out "
            "not-a-number. Subtracting each row's max avoids both."
        )
    return (
        f"No overflow yet: the largest score, <b>{state.top_score:.4g}</b>, is below "
        f"{state.limit:.4g}, where exp overflows {state.dtype}. Raise the input scale, or "
        "switch to float16."
    )


def _readout(state) -> str:
    """The numbers under the figure, as HTML."""
    i = state.query
    token = html.escape(state.tokens[i])
    wrong = "not-a-number" if state.nan_rows[i] else _row(state.wrong[i])
    finite = state.diff[~state.nan_rows]  # (m, n) the rows that are numbers
    where = "in the rows that are numbers" if state.nan_rows.any() else "anywhere"
    gap = f"{where}: {finite.max():.3f}" if finite.size else "— no row is a number"
    return (
        f"<div><b>{html.escape(state.bug)}</b> · d_model = {D_MODEL}, <b>{state.heads}</b> "
        f"head(s) of size d_head = <b>{state.d_head}</b> (the first head is shown) · input × "
        f"{state.scale:g} · {state.dtype}, causal mask.</div>"
        f"<div>{_symptom(state)}</div>"
        f"<div>Row “{token}”: correct <b>{_row(state.right[i])}</b>, with the bug "
        f"<b>{wrong}</b> · largest weight difference {gap}.</div>"
    )
