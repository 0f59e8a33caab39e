r"""The d_k lab: why attention divides the scores by :math:`\sqrt{d_k}`.

One Monte Carlo experiment, seen four ways at once.  For a head size ``d_k``
we draw queries and keys with independent standard-normal entries, take their
dot products, and optionally divide them by :math:`d_k^a`:

* the histogram of the **raw** dot products ``q·k`` (variance ``d_k``);
* the histogram of the **scores fed to softmax**, ``q·k / d_k^a``
  (variance :math:`d_k^{1-2a}`, which is 1 exactly when ``a = 1/2``);
* the softmax **weights of one row** (one query against 16 keys), sorted;
* the **size of the softmax Jacobian** ``diag(p) − p pᵀ`` against ``d_k``: it
  drops towards 0 when rows collapse, which is what stops gradients.

The pure part is :func:`scaling_lab_state`; :class:`ScalingExplorer` draws it
and updates the artists in place.  Samples are cached per ``d_k``
(:func:`dot_products`), so moving the slider never samples twice.

Examples
--------
>>> state = scaling_lab_state(64, exponent=0.5, scaled=True)
>>> state.scores.shape                                   # 250 queries x 16 keys
(250, 16)
>>> bool(50 < state.raw_variance < 80), bool(0.8 < state.score_variance < 1.25)
(True, True)
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

import ipywidgets as widgets
import numpy as np

import attnlab
from attnlab.controls import ToggleButtons
from attnlab.explorers.base import Explorer, stops_slider
from attnlab.plots.colours import PALETTE
from attnlab.plots.distributions import EXPONENT_COLOURS

D_K_VALUES = tuple(2**i for i in range(11))  # 1, 2, 4, ..., 1024
EXPONENTS = (1 / 3, 1 / 2, 2 / 3)
EXPONENT_LABELS = {1 / 3: "⅓", 1 / 2: "½", 2 / 3: "⅔"}
N_SAMPLES = 4000  # dot products per d_k: 250 queries x 16 keys
N_KEYS = 16
SEED = 0
RAW_EDGES = np.linspace(-100.0, 100.0, 81)  # (81,) bins of width 2.5 for q·k
SCORE_EDGES = np.linspace(-10.0, 10.0, 81)  # (81,) bins of width 0.25 for the softmax input
# Bars of width 0.7 at 1..n_keys as one StepPatch: edges of each bar and of the gap after it.
ROW_EDGES = np.column_stack(
    [np.arange(1, N_KEYS + 2) - 0.35, np.arange(1, N_KEYS + 2) + 0.35]
).ravel()[:-1]  # (2 n_keys + 1,)
RAW_YMAX = 0.22  # densities; the tallest raw bin (d_k = 1) is about 0.19
SCORE_YMAX = 1.25  # the tallest score bin (d_k = 1024 divided by d_k^⅔) is about 1.15
JACOBIAN_YMAX = 0.45  # room above the curves (all below 0.35) for the legend
SETTING_COLOURS = EXPONENT_COLOURS  # unscaled (a = 0) and ⅓ warm, ½ blue, ⅔ green

__all__ = [
    "dot_products",
    "scaling_lab_state",
    "ScalingLabState",
    "jacobian_curve",
    "ScalingExplorer",
    "D_K_VALUES",
    "EXPONENTS",
]


def _check_sizes(d_k, n_samples, n_keys, seed):
    """Refuse anything but ints (bools too: ``True == 1`` would share d_k = 1's cache entry)."""
    for name, value, low in (
        ("d_k", d_k, 1),
        ("n_samples", n_samples, 1),
        ("n_keys", n_keys, 1),
        ("seed", seed, 0),
    ):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
            raise ValueError(f"{name} must be an int >= {low}; got {value!r}")
    if n_samples % n_keys:
        raise ValueError(
            f"n_samples must be a multiple of n_keys (rows of n_keys scores); "
            f"got n_samples={n_samples}, n_keys={n_keys}"
        )


def dot_products(
    d_k: int, n_samples: int = N_SAMPLES, n_keys: int = N_KEYS, seed: int = SEED
) -> np.ndarray:
    """Monte Carlo dot products ``q·k`` of standard-normal vectors of length ``d_k`` (cached).

    ``n_samples // n_keys`` queries each meet ``n_keys`` keys; every entry of
    every query and key is an independent N(0, 1) draw.

    Parameters
    ----------
    d_k : int
        Length of the query and key vectors, >= 1.
    n_samples : int, default 4000
        Number of dot products, a multiple of ``n_keys``.
    n_keys : int, default 16
        Keys per query (the length of one softmax row).
    seed : int, default 0
        Fixes the draws: the same arguments always give the same numbers.

    Returns
    -------
    raw : ndarray, shape (n_samples // n_keys, n_keys), float64, read-only
        ``raw[r, j] = q_r · k_rj``.

    Raises
    ------
    ValueError
        If a size is not an int >= 1 (``seed`` >= 0) or ``n_samples`` is not a multiple
        of ``n_keys``.

    Notes
    -----
    The samples for ``d_k`` reuse those for ``d_k // 2`` and append
    ``d_k - d_k // 2`` fresh coordinates to every query and key — the dot
    product is a sum over coordinates, so this *is* a sample at ``d_k``.  The
    whole ladder 1, 2, 4, …, 1024 then costs as much as ``d_k = 1024`` alone
    (about 4.4 million normal draws, a few tens of ms), and each rung is
    computed only when first asked for.  The result is cached, so it is
    read-only.

    Examples
    --------
    >>> raw = dot_products(4)
    >>> raw.shape, raw.flags.writeable
    ((250, 16), False)
    >>> bool(np.array_equal(raw, dot_products(4)))          # deterministic
    True
    """
    _check_sizes(d_k, n_samples, n_keys, seed)
    return _dot_products(int(d_k), int(n_samples), int(n_keys), int(seed))


@lru_cache(maxsize=64)
def _dot_products(d_k, n_samples, n_keys, seed):
    half = d_k // 2
    raw = _dot_products(half, n_samples, n_keys, seed) if half else 0.0
    rng = np.random.default_rng([seed, d_k, n_samples, n_keys])
    n_rows, extra = n_samples // n_keys, d_k - half
    q = rng.standard_normal((n_rows, 1, extra))  # (n_rows, 1, extra)
    k = rng.standard_normal((n_rows, n_keys, extra))  # (n_rows, n_keys, extra)
    out = raw + np.einsum("rid,rjd->rj", q, k)  # (n_rows, n_keys)
    out.flags.writeable = False
    return out


def _divisor(d_k: int, exponent: float, scaled: bool) -> float:
    return float(d_k) ** exponent if scaled else 1.0


@dataclass(frozen=True, eq=False)
class _SoftmaxRows:
    """Every softmax row of one setting and its per-row numbers, read-only (cached).

    Attributes
    ----------
    scores, weights : ndarray, shape (n_rows, n_keys)
    max_weight, entropy : ndarray, shape (n_rows,)
    jacobian_norm : ndarray, shape (n_rows,)
        The Frobenius norm of each row's softmax Jacobian.
    """

    scores: np.ndarray  # (n_rows, n_keys)
    weights: np.ndarray  # (n_rows, n_keys)
    max_weight: np.ndarray  # (n_rows,)
    entropy: np.ndarray  # (n_rows,)
    jacobian_norm: np.ndarray  # (n_rows,)


@lru_cache(maxsize=256)
def _softmax_rows(d_k, exponent, scaled, n_samples, seed, n_keys):
    """Softmax of every row of scores and the per-row numbers the view reports (cached)."""
    scores = _dot_products(d_k, n_samples, n_keys, seed) / _divisor(d_k, exponent, scaled)
    p = attnlab.softmax(scores)  # (n_rows, n_keys)
    jacobian = attnlab.softmax_jacobian(p)  # (n_rows, n_keys, n_keys)
    rows = _SoftmaxRows(
        scores=scores,  # (n_rows, n_keys)
        weights=p,  # (n_rows, n_keys)
        max_weight=p.max(axis=-1),  # (n_rows,)
        entropy=attnlab.entropy(p),  # (n_rows,)
        jacobian_norm=np.linalg.norm(jacobian, axis=(-2, -1)),  # (n_rows,) Frobenius
    )
    for array in vars(rows).values():
        array.flags.writeable = False  # shared through the cache
    return rows


def _cache_key(d_k, exponent, scaled):
    """``(d_k, a, scaled)`` with ``a = 0`` when unscaled, so the raw case is cached once."""
    return d_k, (float(exponent) if scaled else 0.0), bool(scaled)


def jacobian_curve(
    exponent: float = 0.5,
    scaled: bool = True,
    n_samples: int = N_SAMPLES,
    seed: int = SEED,
    n_keys: int = N_KEYS,
    d_ks=D_K_VALUES,
) -> np.ndarray:
    r"""Mean Frobenius norm of the softmax Jacobian ``diag(p) − p pᵀ`` for each ``d_k``.

    Parameters
    ----------
    exponent : float, default 0.5
        Scores are ``q·k / d_k**exponent`` when ``scaled``.
    scaled : bool, default True
        If False the raw ``q·k`` go into softmax (``exponent`` is ignored).
    n_samples, seed, n_keys
        As in :func:`dot_products`.
    d_ks : sequence of int, default 1, 2, 4, …, 1024

    Returns
    -------
    norms : ndarray, shape (len(d_ks),)
        Mean over the rows of :math:`\lVert J \rVert_F`.  A uniform row of
        ``n`` keys gives :math:`\sqrt{n-1}/n` (about 0.24 for 16 keys); a
        one-hot (collapsed) row gives exactly 0.

    Examples
    --------
    >>> raw = jacobian_curve(scaled=False, d_ks=(16, 1024))
    >>> bool(raw[1] < raw[0] / 2)                     # saturation: the gradient dies
    True
    >>> half = jacobian_curve(0.5, d_ks=(16, 1024))
    >>> bool(abs(half[1] - half[0]) < 0.05)           # 1/√d_k keeps it steady
    True
    """
    for d in d_ks:
        _check_sizes(d, n_samples, n_keys, seed)
    return np.array(
        [
            _softmax_rows(
                *_cache_key(int(d), exponent, scaled), n_samples, seed, n_keys
            ).jacobian_norm.mean()
            for d in d_ks
        ]
    )  # (len(d_ks),)


def _density(values: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Histogram heights as a density over *all* samples (values off the edges count too)."""
    counts, _ = np.histogram(values, bins=edges)  # (n_bins,)
    return counts / (values.size * np.diff(edges))  # (n_bins,)


@dataclass(frozen=True, eq=False)
class ScalingLabState:
    """What :func:`scaling_lab_state` computes: the d_k lab at one head size and scaling.

    Attributes
    ----------
    d_k : int
    exponent : float
    scaled : bool
    divisor : float
        ``d_k**a``, or 1 when not scaled.
    raw, scores : ndarray, shape (n_rows, n_keys)
    raw_variance, score_variance : float
        Measured.
    raw_std, score_std : float
    raw_theory : float
        ``d_k``.
    score_theory : float
        ``d_k / divisor**2``.
    raw_density : ndarray, shape (80,)
        Over :data:`RAW_EDGES`.
    score_density : ndarray, shape (80,)
        Over :data:`SCORE_EDGES`.
    off_axis : float
        Share of scores outside the score axis.
    row : ndarray, shape (n_keys,)
        The softmax weights of row 0 sorted from largest.
    row_max_weight, row_entropy : float
    max_weight, entropy, jacobian_norm : float
        Means over all rows.
    max_entropy : float
        ``log n_keys``.
    jacobian_curve : ndarray, shape (11,)
        Over :data:`D_K_VALUES` for this setting.
    """

    d_k: int
    exponent: float
    scaled: bool
    divisor: float
    raw: np.ndarray  # (n_rows, n_keys)
    scores: np.ndarray  # (n_rows, n_keys)
    raw_variance: float
    score_variance: float
    raw_std: float
    score_std: float
    raw_theory: float
    score_theory: float
    raw_density: np.ndarray  # (n_bins,)
    score_density: np.ndarray  # (n_bins,)
    off_axis: float
    row: np.ndarray  # (n_keys,)
    row_max_weight: float
    row_entropy: float
    max_weight: float
    entropy: float
    max_entropy: float
    jacobian_norm: float
    jacobian_curve: np.ndarray  # (len(D_K_VALUES),)


def scaling_lab_state(
    d_k: int,
    exponent: float = 0.5,
    scaled: bool = True,
    n_samples: int = N_SAMPLES,
    seed: int = SEED,
    n_keys: int = N_KEYS,
) -> ScalingLabState:
    r"""Everything the d_k lab shows, for one head size and one way of scaling.

    Parameters
    ----------
    d_k : int
        Head size (length of queries and keys), >= 1.
    exponent : float, default 0.5
        The ``a`` in ``q·k / d_k**a``; ``1/2`` gives unit variance.
    scaled : bool, default True
        If False the raw ``q·k`` go into softmax (as if ``a = 0``).
    n_samples : int, default 4000
        Dot products drawn, in rows of ``n_keys`` (one query against ``n_keys`` keys).
    seed : int, default 0
        Fixes the Monte Carlo draws.
    n_keys : int, default 16
        Length of each softmax row.

    Returns
    -------
    ScalingLabState
        The raw and scaled score distributions, one sample row and the mean softmax
        figures of this setting.

    Raises
    ------
    ValueError
        Bad sizes (see :func:`dot_products`) or an exponent that is not finite.

    Examples
    --------
    >>> raw = scaling_lab_state(1024, scaled=False)
    >>> bool(raw.max_weight > 0.9), bool(raw.entropy < 0.5)      # collapsed rows
    (True, True)
    >>> fixed = scaling_lab_state(1024, exponent=0.5)
    >>> bool(fixed.max_weight < 0.6), bool(fixed.entropy > 1.5)
    (True, True)
    """
    if not np.isfinite(exponent):
        raise ValueError(f"exponent must be a finite number; got {exponent!r}")
    exponent, scaled = float(exponent), bool(scaled)
    raw = dot_products(d_k, n_samples, n_keys, seed)  # (n_rows, n_keys), checks the sizes
    rows = _softmax_rows(*_cache_key(d_k, exponent, scaled), n_samples, seed, n_keys)
    divisor = _divisor(d_k, exponent, scaled)
    scores = rows.scores  # (n_rows, n_keys)
    row = np.sort(rows.weights[0])[::-1]  # (n_keys,) largest first
    off_axis = np.mean((scores < SCORE_EDGES[0]) | (scores > SCORE_EDGES[-1]))
    return ScalingLabState(
        d_k=d_k,
        exponent=exponent,
        scaled=scaled,
        divisor=divisor,
        raw=raw,
        scores=scores,
        raw_variance=float(raw.var()),
        score_variance=float(scores.var()),
        raw_std=float(raw.std()),
        score_std=float(scores.std()),
        raw_theory=float(d_k),
        score_theory=d_k / divisor**2,
        raw_density=_density(raw, RAW_EDGES),
        score_density=_density(scores, SCORE_EDGES),
        off_axis=float(off_axis),
        row=row,
        row_max_weight=float(row[0]),
        row_entropy=float(rows.entropy[0]),
        max_weight=float(rows.max_weight.mean()),
        entropy=float(rows.entropy.mean()),
        max_entropy=float(np.log(n_keys)),
        jacobian_norm=float(rows.jacobian_norm.mean()),
        jacobian_curve=jacobian_curve(exponent, scaled, n_samples, seed, n_keys),
    )


def _fraction(exponent: float) -> str:
    """'½' for 0.5, '⅓' for 1/3, else a plain fraction like '3/4'."""
    return EXPONENT_LABELS.get(exponent, str(Fraction(exponent).limit_denominator(12)))


def _setting_colour(state) -> str:
    key = state.exponent if state.scaled else 0.0
    return SETTING_COLOURS.get(key, PALETTE["purple"])


class ScalingExplorer(Explorer):
    """The d_k lab: slide ``d_k`` and watch the scores, one softmax row and its Jacobian.

    Parameters
    ----------
    **initial
        Starting control values.  Controls: ``d_k`` (1, 2, 4, …, 1024),
        ``scaled`` (True: divide by ``d_k**a``; False: raw ``q·k``) and
        ``exponent`` (``a`` = 1/3, 1/2 or 2/3).

    Examples
    --------
    >>> lab = ScalingExplorer(d_k=256)
    >>> lab.set(scaled=False)
    >>> bool(lab.state.max_weight > 0.8)
    True
    """

    name = "scaling"
    page_draws_moving = True
    figsize = (7.0, 3.9)

    def make_controls(self) -> dict:
        # "scaled" last: with scaling off the exponent does nothing, so code that sweeps the
        # controls in order (tests, benchmarks) should reach the exponent first.
        return {
            "d_k": stops_slider(D_K_VALUES, 64, "head size d_k", width="420px"),
            "exponent": stops_slider(
                EXPONENTS, 0.5, "exponent a", width="260px", label=EXPONENT_LABELS.__getitem__
            ),
            "scaled": ToggleButtons(
                options=[("divide by d_k^a", True), ("raw q·k (no scaling)", False)],
                value=True,
                description="scores fed to softmax",
            ),
        }

    def compute(self, d_k, exponent, scaled) -> ScalingLabState:
        return scaling_lab_state(d_k, exponent, scaled)

    def build(self, figure):
        (raw_ax, score_ax), (row_ax, jac_ax) = figure.subplots(2, 2)
        return {
            **self._build_raw(raw_ax),
            **self._build_scores(score_ax),
            **self._build_row(row_ax),
            **self._build_jacobian(jac_ax),
        }

    @staticmethod
    def _build_histogram(ax, edges, ymax, colour, xlabel, title):
        """A filled histogram (StepPatch) and a ±1 std bar, both moving; fixed limits."""
        hist = ax.stairs(np.zeros(edges.size - 1), edges, fill=True, color=colour, alpha=0.85)
        (spread,) = ax.plot(
            [0, 0],
            [0.93 * ymax] * 2,
            color="black",
            linewidth=1.5,
            marker="|",
            markersize=9,
            label="±1 std",
        )
        ax.set(xlim=edges[[0, -1]], ylim=(0, ymax), xlabel=xlabel, ylabel="density", title=title)
        return hist, spread

    def _build_raw(self, ax):
        hist, spread = self._build_histogram(
            ax, RAW_EDGES, RAW_YMAX, PALETTE["grey"], "q·k", "raw dot products"
        )
        ax.legend(loc="upper left", bbox_to_anchor=(0, 0.86), fontsize=9, frameon=False)
        return {"raw_hist": hist, "raw_spread": spread}

    def _build_scores(self, ax):
        hist, spread = self._build_histogram(
            ax, SCORE_EDGES, SCORE_YMAX, PALETTE["blue"], "score", "scores fed to softmax"
        )
        x = np.linspace(*SCORE_EDGES[[0, -1]], 400)  # (400,)
        ax.plot(
            x,
            np.exp(-(x**2) / 2) / np.sqrt(2 * np.pi),
            color="black",
            linestyle="--",
            linewidth=1,
            label="variance 1",
        )
        ax.legend(loc="upper left", bbox_to_anchor=(0, 0.86), fontsize=9, frameon=False)
        return {"score_hist": hist, "score_spread": spread}

    @staticmethod
    def _build_row(ax):
        hist = ax.stairs(np.zeros(2 * N_KEYS), ROW_EDGES, fill=True, color=PALETTE["blue"])
        ax.axhline(
            1 / N_KEYS, color="black", linestyle="--", linewidth=1, label=f"uniform 1/{N_KEYS}"
        )
        ax.set(
            xlim=(0.4, N_KEYS + 0.6),
            ylim=(0, 1),
            xlabel="key, sorted by weight",
            ylabel="softmax weight",
            title=f"one query, {N_KEYS} keys",
        )
        ax.set_xticks([1, 4, 8, 12, 16])
        ax.legend(loc="upper right", fontsize=9, frameon=False)
        return {"row": hist}

    @staticmethod
    def _build_jacobian(ax):
        for a, label in ((0.0, "raw"), (1 / 3, "a = ⅓"), (1 / 2, "a = ½"), (2 / 3, "a = ⅔")):
            curve = jacobian_curve(a, scaled=a > 0)  # (11,)
            ax.plot(
                D_K_VALUES, curve, color=SETTING_COLOURS[a], linewidth=1.2, alpha=0.5, label=label
            )
        (current,) = ax.plot(D_K_VALUES, np.zeros(len(D_K_VALUES)), color="black", linewidth=2.5)
        (marker,) = ax.plot(
            [D_K_VALUES[0]],
            [0.0],
            marker="o",
            markersize=9,
            color="black",
            markeredgecolor="white",
            linestyle="none",
        )
        ax.set_xscale("log", base=2)
        ax.set_xticks([1, 4, 16, 64, 256, 1024], ["1", "4", "16", "64", "256", "1024"])
        ax.set(
            xlim=(0.8, 1300),
            ylim=(0, JACOBIAN_YMAX),
            xlabel="head size dₖ",  # Unicode subscript: no mathtext parser to build (log_ticks)
            ylabel="mean ‖J‖ (Frobenius)",
            title="softmax Jacobian J = diag(p) − ppᵀ",
        )
        ax.legend(
            loc="upper center",
            fontsize=9,
            frameon=False,
            ncols=4,
            handlelength=1.0,
            columnspacing=0.8,
            handletextpad=0.4,
            borderaxespad=0.2,
        )
        return {"jacobian_curve": current, "jacobian_marker": marker}

    def draw(self, artists, state) -> None:
        colour = _setting_colour(state)
        artists["raw_hist"].set_data(state.raw_density)
        artists["raw_spread"].set_xdata([-state.raw_std, state.raw_std])
        artists["score_hist"].set_data(state.score_density)
        artists["score_hist"].set_color(colour)
        artists["score_spread"].set_xdata([-state.score_std, state.score_std])
        gaps = np.zeros((N_KEYS, 2))  # (n_keys, 2): each bar, then a gap of height 0
        gaps[:, 0] = state.row
        artists["row"].set_data(gaps.ravel())
        artists["row"].set_color(colour)
        artists["jacobian_curve"].set_ydata(state.jacobian_curve)
        artists["jacobian_curve"].set_color(colour)
        artists["jacobian_marker"].set_data([state.d_k], [state.jacobian_norm])
        artists["jacobian_marker"].set_markerfacecolor(colour)

    def describe(self, state) -> str:
        return _readout(state)

    def update(self) -> None:
        super().update()
        self.controls["exponent"].disabled = not self.controls["scaled"].value

    def layout(self) -> widgets.Box:
        c = self.controls
        top = widgets.HBox([c["d_k"], c["exponent"]])
        return widgets.VBox([top, c["scaled"], self.view.widget, self.readout, self.error])


def _readout(state) -> str:
    """The numbers under the figure, as HTML."""
    if state.scaled:
        a = _fraction(state.exponent)
        scaling = f"scores = q·k / d_k<sup>{a}</sup> = q·k / {state.divisor:.4g}"
        theory = f"d_k<sup>1−2a</sup> = {state.score_theory:.3g}"
    else:
        scaling = "scores = raw q·k (no scaling)"
        theory = f"d_k = {state.score_theory:.4g}"
    off = ""
    if state.off_axis > 0:
        off = (
            f" · {100 * state.off_axis:.1f} % of the scores lie beyond "
            f"±{SCORE_EDGES[-1]:g}, off the right-hand axis"
        )
    cell = 'style="padding:0 10px;text-align:right"'
    return (
        f"<div><b>d_k = {state.d_k}</b> · {scaling}</div>"
        '<table style="font-family:monospace;border-collapse:collapse">'
        f"<tr><td></td><th {cell}>measured variance</th><th {cell}>theory</th></tr>"
        f"<tr><td>raw q·k</td><td {cell}><b>{state.raw_variance:.3g}</b></td>"
        f"<td {cell}>d_k = {state.raw_theory:.4g}</td></tr>"
        f"<tr><td>scores fed to softmax</td><td {cell}><b>{state.score_variance:.3g}</b></td>"
        f"<td {cell}>{theory}</td></tr></table>"
        f"<div>Softmax over {N_KEYS} keys, averaged over {state.scores.shape[0]} queries: "
        f"largest weight <b>{state.max_weight:.3f}</b> · entropy <b>{state.entropy:.2f}</b> "
        f"nats (uniform: log {N_KEYS} = {state.max_entropy:.2f}) · Jacobian size "
        f"<b>{state.jacobian_norm:.3f}</b> (collapsed row: 0){off}</div>"
        f"<div>The row drawn: largest weight {state.row_max_weight:.3f}, entropy "
        f"{state.row_entropy:.2f} nats.</div>"
    )
