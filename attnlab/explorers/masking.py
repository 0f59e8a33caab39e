r"""Lesson 6 explorer, the mask lab: hide keys from queries; see what each way of hiding does.

"The cat sat down" is padded to 6 positions with two ``<pad>`` tokens. The four real
embeddings are those of :func:`attnlab.examples.cat_sat_down`; every ``<pad>`` position
gets the same embedding, :data:`PAD_EMBEDDING` (a fixed vector drawn with seed
:data:`PAD_SEED`, scaled like the real ones), so the two pad rows and columns are equal.
The scores are ``Q Kᵀ / √8`` (6, 6), computed in float64 and rounded once to the chosen
dtype. The boolean mask is ``True`` where query ``i`` may look at key ``j`` (the
convention of :func:`attnlab.scaled_dot_product_attention`):

* ``"causal"``: key ``j <= i`` (:func:`attnlab.attention.causal_mask`);
* ``"padding"``: key ``j < length``, for every query (:func:`attnlab.attention.padding_mask`);
* ``"causal + padding"``: both.

A fully masked row (a query with no key left, e.g. ``length = 0``) is where the ways of
filling the masked scores part company. The fills, and how the weights are computed:

* ``"−∞ (correct)"``: masked scores are ``-inf`` and :func:`attnlab.softmax` gives them
  exactly 0; a fully masked row gives all zeros, never NaN.
* ``"−1e9"``, ``"dtype minimum"`` and ``"0 (wrong)"``: masked scores get that number,
  then a *textbook stable softmax* ``exp(s − max s) / Σ exp(s − max s)`` — what a
  hand-written softmax or ``torch.softmax`` does, with no special case for an all ``-inf``
  row (float16 is computed in float32 and rounded once, as both libraries do). So:

  - ``−1e9``: masked weights are exactly 0 (``exp(−1e9)`` underflows), but a fully
    masked row is ``[−1e9, …]``, its shift is 0 and the row comes out *uniform over the
    masked keys*. In float16, ``−1e9`` does not fit: the cast rounds it to ``-inf``, and
    a fully masked row is then ``-inf − (-inf)`` = NaN.
  - ``dtype minimum`` (``np.finfo(dtype).min``): fits every dtype, so a fully masked
    row is uniform over the masked keys in all three — quietly wrong, never NaN.
  - ``0``: masked keys get real weight (``exp(0 − max)``): attention leaks to them.

* ``"mask after softmax (wrong)"``: the softmax of the *unmasked* scores, with the
  masked weights zeroed afterwards and not renormalised: masked weights are 0, but the
  rows no longer sum to 1.

The view: left, the weights as a heatmap on a fixed ``[0, 1]`` scale with masked cells
hatched, exact zeros written ``0`` and NaN cells grey and written ``nan``; right, each
row's sum (1, or 0 for a fully masked row with the correct fill) with a dotted line at 1.
The pure part is :func:`mask_state`; :class:`MaskExplorer` draws it in place.

Examples
--------
>>> state = mask_state("causal + padding", 4, "−∞ (correct)", "float64")
>>> state.tokens
('The', 'cat', 'sat', 'down', '<pad>', '<pad>')
>>> state.mask.astype(int)[1].tolist(), float(state.leak.max())
([1, 1, 0, 0, 0, 0], 0.0)
>>> bad = mask_state("padding", 0, "−1e9", "float16")          # −1e9 → −∞ in float16
>>> bool(bad.fully_masked_rows.all()), bool(bad.nan_rows.all())
(True, True)
"""

from __future__ import annotations

import html
import math
import re
from dataclasses import dataclass

import ipywidgets as widgets
import numpy as np
from matplotlib.patches import PathPatch

import attnlab
from attnlab._validate import work_dtype
from attnlab.attention import causal_mask, padding_mask
from attnlab.controls import Dropdown, IntSlider, ToggleButtons
from attnlab.examples import cat_sat_down
from attnlab.explorers.base import Explorer, one_of
from attnlab.plots.colours import PALETTE
from attnlab.plots.heatmap import cell_squares, row_bars, show_weights, weights_heatmap
from attnlab.plots.outline_labels import OutlineLabels

__all__ = [
    "DTYPES",
    "FILLS",
    "MASKS",
    "PAD_EMBEDDING",
    "PAD_SEED",
    "SCORES",
    "TOKENS",
    "MaskExplorer",
    "MaskState",
    "mask_state",
]

MASKS = ("none", "causal", "padding", "causal + padding")
BOTH = MASKS[-1]
CORRECT, BILLION, MINIMUM, ZERO, AFTER = FILLS = (
    "−∞ (correct)",
    "−1e9",
    "dtype minimum",
    "0 (wrong)",
    "mask after softmax (wrong)",
)
DTYPES = ("float64", "float32", "float16")
N_PAD = 2
PAD_SEED = 6  # the <pad> embedding: np.random.default_rng(6).normal(size=16)


def _example():
    ex = cat_sat_down()
    pad = np.random.default_rng(PAD_SEED).normal(size=ex.x.shape[1])  # (d_model,) like ex.x
    x = np.vstack([ex.x, np.tile(pad, (N_PAD, 1))])  # (6, d_model) every pad row the same
    q, k = x @ ex.w_q, x @ ex.w_k  # (6, d_k) each
    return (*ex.tokens, *["<pad>"] * N_PAD), pad, q @ k.T / math.sqrt(ex.d_k)  # (6, 6)


TOKENS, PAD_EMBEDDING, SCORES = _example()  # SCORES: Q Kᵀ / √8 in float64, (6, 6)
for _array in (PAD_EMBEDDING, SCORES):
    _array.flags.writeable = False  # shared by every call and every explorer
del _array
N = len(TOKENS)
N_REAL = N - N_PAD
CELL_SIZE, VALUE_SIZE = 9.0, 9.0  # font sizes in points
OK_COLOUR, BAD_COLOUR = PALETTE["blue"], PALETTE["vermillion"]
MASK_HATCH = "//"  # sparse: Agg draws hatch lines one by one
SUM_LIMIT = 1.3  # the row-sum axis runs 0 … 1.3, room for a label beyond a bar of 1
CAPTION_GAP = 0.35  # the caption sits this far above the top row, in cells
INSIDE = 0.45  # a sum bar at least this long carries its number inside, in white


def _dtype_name(dtype) -> str:
    try:
        name = None if dtype is None or isinstance(dtype, bool) else np.dtype(dtype).name
    except TypeError:
        name = None
    if name not in DTYPES:
        raise ValueError(f"dtype must be one of {list(DTYPES)}; got {dtype!r}")
    return name


def _textbook_softmax(scores: np.ndarray) -> np.ndarray:
    """``exp(s − max) / Σ exp(s − max)`` per row, no special case: an all ``-inf`` row is NaN."""
    work = scores.astype(work_dtype(scores.dtype))  # (n_q, n_k); float16 is computed in float32
    with np.errstate(invalid="ignore"):  # -inf - (-inf) = NaN, on purpose: it is what is shown
        e = np.exp(work - work.max(axis=1, keepdims=True))  # (n_q, n_k)
        return (e / e.sum(axis=1, keepdims=True)).astype(scores.dtype)


@dataclass(frozen=True, eq=False)
class MaskState:
    """What :func:`mask_state` computes: one way of masking the padded example, and its faults.

    Attributes
    ----------
    tokens : tuple of str
        The 6 tokens.
    mask_name : str
    length : int
    fill : str
    dtype : str
        The dtype's name.
    mask : ndarray of bool, shape (6, 6)
        ``True`` where query ``i`` may look at key ``j``.
    fill_value : numpy scalar or None
        What the masked scores became, in ``dtype`` (``None`` for "mask after softmax").
    scores : ndarray, shape (6, 6)
        ``Q Kᵀ / √8`` in ``dtype``.
    filled : ndarray, shape (6, 6)
        The scores softmax sees.
    weights : ndarray, shape (6, 6)
        In ``dtype``, possibly NaN.
    row_sums : ndarray, shape (6,)
        float64.
    leak : ndarray, shape (6,)
        float64, the weight each row puts on masked keys (NaN in a NaN row).
    nan_rows, fully_masked_rows, sum_is_off : ndarray of bool, shape (6,)
        The last is True where a row that is not NaN sums to neither 1 nor, if fully
        masked, 0 (to within ``tolerance``).
    tolerance : float
        6 · eps of the dtype.
    """

    tokens: tuple[str, ...]
    mask_name: str
    length: int
    fill: str
    dtype: str
    mask: np.ndarray  # (n_q, n_k) bool
    fill_value: np.generic | None
    scores: np.ndarray  # (n_q, n_k)
    filled: np.ndarray  # (n_q, n_k)
    weights: np.ndarray  # (n_q, n_k)
    row_sums: np.ndarray  # (n_q,)
    leak: np.ndarray  # (n_q,)
    nan_rows: np.ndarray  # (n_q,) bool
    fully_masked_rows: np.ndarray  # (n_q,) bool
    sum_is_off: np.ndarray  # (n_q,) bool
    tolerance: float


def mask_state(mask: str, length: int, fill: str, dtype: str) -> MaskState:
    r"""The masked attention weights of the padded "The cat sat down", one way of masking.

    Parameters
    ----------
    mask : str
        One of :data:`MASKS`: ``"none"``, ``"causal"``, ``"padding"``,
        ``"causal + padding"``.
    length : int
        The real length, 0 … 6: the padding mask hides the keys ``j >= length``.
        (It is ignored by ``"none"`` and ``"causal"``.)
    fill : str
        One of :data:`FILLS`, how the masked scores are filled (see the module notes).
    dtype : str
        ``"float64"``, ``"float32"`` or ``"float16"`` (anything ``np.dtype`` turns
        into one of them); the scores, the filled scores and the weights are in it.

    Returns
    -------
    MaskState
        The mask, the filled scores, the weights and what is wrong with each row.

    Raises
    ------
    ValueError
        If ``mask``, ``fill`` or ``dtype`` is not one of the options, or ``length``
        is not an int in 0 … 6. The message names the argument.

    Examples
    --------
    >>> leaky = mask_state("padding", 4, "0 (wrong)", "float64")
    >>> bool(leaky.leak[0] > 0.1), bool(np.allclose(leaky.row_sums, 1))
    (True, True)
    >>> late = mask_state("causal", 4, "mask after softmax (wrong)", "float64")
    >>> float(late.leak.max()), bool(late.row_sums[0] < 0.5), int(late.sum_is_off.sum())
    (0.0, True, 5)
    >>> uniform = mask_state("padding", 0, "dtype minimum", "float16")
    >>> sorted(set(uniform.weights.ravel().tolist())), bool(uniform.nan_rows.any())
    ([0.1666259765625], False)
    """
    mask_name = one_of(mask, MASKS, "mask")
    if isinstance(length, bool | np.bool_) or not isinstance(length, int | np.integer):
        raise ValueError(f"length must be an int in 0 … {N}; got {length!r}")
    if not 0 <= length <= N:
        raise ValueError(f"length must lie in 0 … {N}; got {length}")
    length = int(length)
    fill = one_of(fill, FILLS, "fill")
    dtype = _dtype_name(dtype)

    allowed = np.ones((N, N), dtype=bool)  # (n_q, n_k) True = may attend
    if "causal" in mask_name:
        allowed &= causal_mask(N)
    if "padding" in mask_name:
        allowed &= padding_mask([length], N)[0]  # (1, n_k) broadcasts over the queries
    scores = SCORES.astype(dtype, copy=False)  # (n_q, n_k) read-only like SCORES in float64
    with np.errstate(over="ignore"):  # −1e9 overflows float16 to -inf: that is the lesson
        fill_value = {
            CORRECT: -np.inf,
            BILLION: -1e9,
            MINIMUM: np.finfo(dtype).min,
            ZERO: 0.0,
            AFTER: None,
        }[fill]
        fill_value = None if fill_value is None else np.array(fill_value).astype(dtype)[()]
    if fill == AFTER:
        filled = scores
        weights = np.where(allowed, attnlab.softmax(scores), 0).astype(dtype)  # no renormalising
    else:
        filled = np.where(allowed, scores, fill_value).astype(dtype)  # (n_q, n_k)
        soft = attnlab.softmax if fill == CORRECT else _textbook_softmax
        weights = soft(filled)  # (n_q, n_k)

    wide = weights.astype(np.float64)  # (n_q, n_k)
    row_sums = wide.sum(axis=1)  # (n_q,)
    leak = np.where(allowed, 0.0, wide).sum(axis=1)  # (n_q,) NaN in a NaN row
    nan_rows = np.isnan(wide).any(axis=1)  # (n_q,)
    fully_masked = ~allowed.any(axis=1)  # (n_q,)
    tolerance = N * float(np.finfo(dtype).eps)
    with np.errstate(invalid="ignore"):
        fine = (np.abs(row_sums - 1) <= tolerance) | (fully_masked & (row_sums == 0))
    return MaskState(
        tokens=TOKENS,
        mask_name=mask_name,
        length=length,
        fill=fill,
        dtype=dtype,
        mask=allowed,
        fill_value=fill_value,
        scores=scores,
        filled=filled,
        weights=weights,
        row_sums=row_sums,
        leak=leak,
        nan_rows=nan_rows,
        fully_masked_rows=fully_masked,
        sum_is_off=~fine & ~nan_rows,
        tolerance=tolerance,
    )


class MaskExplorer(Explorer):
    """Mask the padded sentence causally, by padding or both, and fill the masked scores.

    Parameters
    ----------
    **initial
        Starting control values. Controls: ``mask`` (:data:`MASKS`, starting at
        "causal + padding", a decoder reading a padded batch), ``length`` (the real
        length 0 … 6, starting at 4; greyed out while the mask has no padding part,
        since only the padding mask reads it), ``fill``
        (:data:`FILLS`, starting at "−∞ (correct)") and ``dtype`` (:data:`DTYPES`,
        starting at "float64").

    Examples
    --------
    >>> lab = MaskExplorer(mask="padding", length=0, fill="−1e9", dtype="float16")
    >>> lab.artists["cells"].texts[:2], lab.artists["sum_labels"].texts[0]
    (['nan', 'nan'], 'nan')
    """

    name = "masking"
    figsize = (8.0, 3.9)

    def make_controls(self) -> dict:
        return {
            "mask": ToggleButtons(options=list(MASKS), value=BOTH, description="mask"),
            "length": IntSlider(
                value=N_REAL,
                min=0,
                max=N,
                step=1,
                description="real length",
                layout=widgets.Layout(width="330px"),
            ),
            "fill": Dropdown(
                options=list(FILLS), value=CORRECT, description="masked scores set to"
            ),
            "dtype": Dropdown(options=list(DTYPES), value="float64", description="dtype"),
        }

    def compute(self, mask, length, fill, dtype) -> MaskState:
        return mask_state(mask, length, fill, dtype)

    def update(self) -> None:
        """Grey the length slider out when the mask ignores it, then redraw."""
        self.controls["length"].disabled = "padding" not in str(self.controls["mask"].value)
        super().update()

    def build(self, figure):
        heat_ax, sum_ax = figure.subplots(1, 2, width_ratios=[2.4, 1.0])
        heatmap = weights_heatmap(TOKENS, ax=heat_ax, cell_size=CELL_SIZE)
        # The masked cells: one hatched path whose squares change, not 36 patches.
        hidden = PathPatch(
            cell_squares(np.ones((N, N), dtype=bool)),
            facecolor="none",
            edgecolor="white",
            hatch=MASK_HATCH,
            linewidth=0,
            alpha=0.55,
            zorder=2,
        )
        heat_ax.add_patch(hidden)
        # The title says what the masked scores became: outlines, as a Text costs ~2 ms a frame.
        caption = OutlineLabels(heat_ax, [((N - 1) / 2, -0.5 - CAPTION_GAP)], CELL_SIZE)
        caption.set_clip_on(False)

        # Two sets at the same places: a row whose sum is off (or nan) shows its bar in red.
        bars, bad_bars, labels = row_bars(
            sum_ax,
            TOKENS,
            (OK_COLOUR, BAD_COLOUR),
            reference=1.0,
            xlim=SUM_LIMIT,
            xlabel="row sum",
            value_size=VALUE_SIZE,
        )
        sum_ax.set_title("should be 1\n(0 if nothing to see)", fontsize=9)
        sum_ax.set_xticks([0.0, 0.5, 1.0], ["0", "0.5", "1"])
        return heatmap | {
            "hidden": hidden,
            "caption": caption,
            "bars": bars,
            "bad_bars": bad_bars,
            "sum_labels": labels,
        }

    def draw(self, artists, state) -> None:
        show_weights(artists, state.weights, exact_zero=True)  # (n_q, n_k) NaN shown as nan
        artists["hidden"].set_path(cell_squares(state.mask))
        artists["caption"].set_texts([_caption(state)], ["black"])
        self._mark_seen_pads(artists["image"].axes, seen_pads(state))

        sums = np.where(state.nan_rows, 0.0, state.row_sums)  # (n_q,)
        bad = state.sum_is_off | state.nan_rows  # (n_q,)
        artists["bars"].set_values(sums, where=~bad)
        artists["bad_bars"].set_values(sums, where=bad)
        texts = [
            "nan" if n else _sum_text(s)
            for s, n in zip(state.row_sums, state.nan_rows, strict=True)
        ]
        artists["sum_labels"].set_bar_ends(
            sums, texts, inside=sums >= INSIDE, pad=0.03, colors=np.where(bad, BAD_COLOUR, "black")
        )

    def _mark_seen_pads(self, ax, seen) -> None:
        """Key labels of the <pad> tokens a query can see turn vermillion, as in the readout.

        Tick labels are background: each of their few looks (which pads are seen) is drawn
        once, restyled for the page's theme, and kept by the view for the next time.
        """
        seen = tuple(bool(flag) for flag in seen)
        if getattr(ax, "attnlab_seen_pads", None) == seen:
            return
        first = not hasattr(ax, "attnlab_seen_pads")
        ax.attnlab_seen_pads = seen
        labels = ax.get_xticklabels()  # (n,) the keys
        for label, flag in zip(labels, seen, strict=True):
            if first:
                label.attnlab_colour = label.get_color()  # as built, before any marking
            label.set_color(BAD_COLOUR if flag else label.attnlab_colour)
            label.set_fontweight("bold" if flag else "normal")
        if ax.figure is self.view.figure:
            for label in labels:
                self.view.theme.restyle(label)
            self.view.use_background(seen)

    def describe(self, state) -> str:
        return _readout(state)

    def layout(self) -> widgets.Box:
        c = self.controls
        top = widgets.HBox([c["fill"], c["dtype"]])
        return widgets.VBox(
            [c["mask"], c["length"], top, self.view.widget, self.readout, self.error]
        )


def _number(value) -> str:
    """A score as the lab writes it: ``−∞``, ``−1e9``, ``−65504``, ``−3.4028e38``."""
    value = float(value)
    if math.isinf(value):
        return "−∞" if value < 0 else "+∞"
    text = re.sub(r"e\+?(-?)0*(\d)", r"e\1\2", f"{value:.5g}")
    return text.replace("-", "−")


def _sum_text(total: float) -> str:
    return "0" if total == 0 else f"{total:.3f}"


def _caption(state) -> str:
    """The heatmap's title: what the masked scores became, in which dtype."""
    if state.fill == AFTER:
        how = "masked weights zeroed after softmax"
    elif state.fill == BILLION and math.isinf(state.fill_value):
        how = f"masked scores → −1e9, which is −∞ in {state.dtype}"
    else:
        how = f"masked scores → {_number(state.fill_value)}"
    return f"weights in {state.dtype} · {how}"


def _rows(flags, tokens) -> str:
    """Rows as "2 “cat”, 5 “<pad>”" (1-based), escaped for HTML; or "all of them"."""
    if np.all(flags):
        return "all of them"
    return ", ".join(f"{i + 1} “{html.escape(tokens[i])}”" for i in np.flatnonzero(flags))


def _what_is_masked(state) -> str:
    n_hidden = int((~state.mask).sum())
    parts = []
    if "causal" in state.mask_name:
        parts.append("each query sees only itself and earlier keys")
    if "padding" in state.mask_name:
        hidden = N - state.length
        if hidden:
            keys = f"keys {state.length + 1}–{N} are" if hidden > 1 else f"key {N} is"
            parts.append(f"{keys} hidden from every query")
        else:
            parts.append("the padding mask hides nothing at real length 6")
    what = "; ".join(parts) or "nothing is masked"
    return (
        f"<div><b>{html.escape(state.mask_name)}</b> mask, real length {state.length}: "
        f"{what} — <b>{n_hidden}</b> of {N * N} cells masked (hatched).{_pads_seen(state)}"
        "</div>"
    )


def seen_pads(state) -> np.ndarray:
    """Which positions hold a ``<pad>`` token whose key some query can see, shape (n,) bool.

    Examples
    --------
    >>> seen_pads(mask_state("padding", 4, "−∞ (correct)", "float64")).tolist()
    [False, False, False, False, False, False]
    >>> seen_pads(mask_state("causal + padding", 6, "−∞ (correct)", "float64")).tolist()
    [False, False, False, False, True, True]
    """
    is_pad = np.array([token == "<pad>" for token in state.tokens])  # (n,)
    return is_pad & state.mask.any(axis=0)  # (n,) a key column with an allowed cell


def _pads_seen(state) -> str:
    """A sentence when <pad> keys are visible: why, and that their labels are marked."""
    seen = np.flatnonzero(seen_pads(state)) + 1  # 1-based positions
    if not seen.size:
        return ""
    keys = f"keys {seen[0]}–{seen[-1]} hold" if seen.size > 1 else f"key {seen[0]} holds"
    why = ""
    if "padding" in state.mask_name and state.length > N_REAL:
        why = (
            f": real length {state.length} counts {seen.size} of them as words, "
            f"but the sentence has {N_REAL}"
        )
    return (
        f" The <span style='color:{BAD_COLOUR}'><b>{keys} &lt;pad&gt;</b></span> "
        f"and the mask lets queries see them{why}."
    )


def _sums_sentence(state) -> str:
    """What the row-sum bars show when every row sums as it should: 1, or 0 with no key left.

    Only rows whose bar is drawn at 0 are said to sum to 0 (a fully masked row filled with
    ``dtype minimum`` or ``0`` is uniform and sums to 1, as its bar shows).

    Examples
    --------
    >>> _sums_sentence(mask_state("padding", 0, "dtype minimum", "float64"))
    'Every row sums to 1.'
    >>> _sums_sentence(mask_state("padding", 0, "−∞ (correct)", "float64"))
    'Every row sums to 0: no query has a key left.'
    """
    zero = state.row_sums == 0  # (n_q,) only fully masked rows with the correct fill
    if not zero.any():
        return "Every row sums to 1."
    if zero.all():
        return "Every row sums to 0: no query has a key left."
    return f"Every row sums to 1, except {_rows(zero, state.tokens)}, which sum to 0 (no key left)."


def _readout(state) -> str:
    """The numbers under the figure, as HTML; NaN is written "not-a-number" (a word test)."""
    tokens = state.tokens
    lines = [_what_is_masked(state), f"<div>{html.escape(_caption(state))}.</div>"]
    leaking = (state.leak > 0) & ~state.nan_rows  # (n_q,)
    if leaking.any():
        worst = int(np.argmax(np.where(leaking, state.leak, -1.0)))
        lines.append(
            f"<div><b>{int(leaking.sum())}</b> row(s) put weight on masked keys, "
            f"<b>{state.leak[leaking].sum():.3f}</b> in all; the most, "
            f"<b>{state.leak[worst]:.3f}</b>, in row {worst + 1} “{html.escape(tokens[worst])}”."
            "</div>"
        )
    elif (~state.mask).any() and not state.nan_rows.all():
        others = " other" if state.nan_rows.any() else ""
        lines.append(
            f"<div>No{others} row puts any weight on a masked key "
            "(masked weights are exactly 0).</div>"
        )
    if state.sum_is_off.any():
        sums = state.row_sums[state.sum_is_off]
        lines.append(
            f"<div><b>{int(state.sum_is_off.sum())}</b> row(s) do not sum to 1: "
            f"{_rows(state.sum_is_off, tokens)}; sums {sums.min():.3f} … {sums.max():.3f}."
            "</div>"
        )
    elif not state.nan_rows.any():
        lines.append(f"<div>{_sums_sentence(state)}</div>")
    if state.nan_rows.any():
        lines.append(
            f"<div><b>{int(state.nan_rows.sum())}</b> row(s) came out not-a-number "
            f"(0 / 0, in grey): {_rows(state.nan_rows, tokens)}.</div>"
        )
    full = state.fully_masked_rows
    if full.any():
        rows = _rows(full, tokens)
        if state.nan_rows[full].all():
            fate = "not-a-number"
        elif np.all(state.row_sums[full] == 0):
            fate = "all zeros"
        elif np.allclose(state.leak[full], 1.0, atol=state.tolerance):
            share = float(state.weights[full].astype(np.float64).max())
            fate = f"uniform, {share:.3f} on each masked key"
        else:
            fate = f"sums {state.row_sums[full].min():.3f} … {state.row_sums[full].max():.3f}"
        count = int(full.sum())
        lines.append(
            f"<div><b>{count}</b> fully masked row(s), no key left: {rows} — {fate}.</div>"
        )
    return "".join(lines)
