r"""Lesson 9 explorer: watch one attention head learn to reverse a sequence.

The explorer offers eight runs of the reversal task of :mod:`attnlab.training`, one at each
head width in :data:`D_K_VALUES` with the scores divided by √d_k or not scaled at all (seed
0). Every :data:`attnlab.training.EVAL_EVERY` steps a run kept a snapshot: the heatmap of
the probe sequence, its row entropies and the accuracy, so a slider step only picks one.

Building the explorer trains the run it shows first (:func:`training_run`, about 0.15 s of
CPU here) and then starts the other seven in a background thread
(:func:`train_the_rest`, about 1 s), so the figure appears without waiting for runs nobody
has asked for yet; training all eight before the first picture made Run All → explorer
drawn take 3–4 s in the browser. A step that needs a run still being trained waits for it
(at most one run's time); each run is trained once per kernel and cached.

The view:

* left, the probe sequence's weights on a fixed ``[0, 1]`` colour scale, the anti-diagonal
  (what reversal needs) outlined;
* middle, the training loss against the step (log scale), a marker at the chosen step;
* right, each query's row entropy / log n (0 = reads one key, 1 = uniform).

The pure part is :func:`training_state`; :class:`TrainingExplorer` draws it in place.

Examples
--------
>>> state = training_state(step=0, d_k=16, exponent=0.5)
>>> state.weights.shape, state.tokens
((6, 6), ('C', 'A', 'F', 'E', 'C', 'D'))
>>> late = training_state(step=300, d_k=16, exponent=0.5)
>>> bool(late.anti_diagonal > 0.7 > state.anti_diagonal)
True
"""

from __future__ import annotations

import html
import threading
from dataclasses import dataclass

import ipywidgets as widgets
import numpy as np
from matplotlib.patches import Rectangle

from attnlab.controls import ToggleButtons
from attnlab.explorers.base import Explorer, one_of, stops_slider
from attnlab.plots.bars import Bars
from attnlab.plots.colours import PALETTE
from attnlab.plots.heatmap import show_weights, weights_heatmap
from attnlab.plots.log_ticks import power_of_ten_labels
from attnlab.training import EVAL_EVERY, PROBE, STEPS, anti_diagonal_mass, train

__all__ = [
    "D_K_VALUES",
    "SCALINGS",
    "TrainingExplorer",
    "TrainingState",
    "snapshot_steps",
    "train_the_rest",
    "training_run",
    "training_state",
]

D_K_VALUES = (4, 16, 64, 256)
SCALINGS = (("÷ √d_k", 0.5), ("no scaling", 0.0))
N = len(PROBE)
CELL_SIZE = 9.0
MARK_COLOUR = PALETTE["vermillion"]
BAR_COLOUR = PALETTE["blue"]
LOSS_LIMITS = (5e-4, 10.0)


_RUNS: dict = {}  # {(d_k, exponent): Run}, filled by training_run
_LOCKS = {(d, a): threading.Lock() for d in D_K_VALUES for _, a in SCALINGS}


def training_run(d_k: int, exponent: float):
    """The run at head width ``d_k`` and scaling ``exponent`` (seed 0), trained once and cached.

    Safe to call from several threads: a run asked for while another thread trains it is
    waited for, not trained twice.

    Parameters
    ----------
    d_k : int
        One of :data:`D_K_VALUES`.
    exponent : float
        0.5 (divide by √d_k) or 0.0 (no scaling).

    Returns
    -------
    attnlab.training.Run

    Raises
    ------
    ValueError
        If an argument is not one the explorer offers.
    """
    key = (one_of(d_k, D_K_VALUES, "d_k"), one_of(exponent, [a for _, a in SCALINGS], "exponent"))
    with _LOCKS[key]:
        if key not in _RUNS:
            _RUNS[key] = train(*key, seed=0)
        return _RUNS[key]


def snapshot_steps() -> np.ndarray:
    """The steps every run kept a snapshot at: 0, :data:`~attnlab.training.EVAL_EVERY`, …,
    :data:`~attnlab.training.STEPS` (as :func:`attnlab.training.train` evaluates)."""
    return np.unique(np.r_[np.arange(0, STEPS + 1, EVAL_EVERY), STEPS])  # (n_snapshots,)


def train_the_rest() -> threading.Thread:
    """Start training every run not trained yet in a daemon thread, and return the thread.

    A run that fails here is left untrained: the step that needs it trains it again in the
    foreground, where its error is shown in the explorer.
    """

    def work():
        for key in _LOCKS:
            try:
                training_run(*key)
            except Exception:  # noqa: BLE001, S112 - retried (and shown) by the step that needs it
                continue

    thread = threading.Thread(target=work, name="attnlab-training", daemon=True)
    thread.start()
    return thread


@dataclass(frozen=True, eq=False)
class TrainingState:
    """What :func:`training_state` reads: one run's snapshot at one step.

    Attributes
    ----------
    tokens : tuple of str
        The probe sequence.
    step : int
    d_k : int
    exponent : float
    weights : ndarray, shape (n, n)
        Of the probe sequence.
    entropy : ndarray, shape (n,)
    anti_diagonal : float
        Lesson 4's diagonal mass read right to left.
    reads : ndarray of int, shape (n,)
        The key each query weights most.
    accuracy, eval_loss : float
        On the evaluation batch.
    loss : ndarray, shape (steps,)
        The whole training-loss curve.
    step_loss : float
        Its value at ``step`` (at step 0, the first batch's).
    solved_at : int or None
    """

    tokens: tuple[str, ...]
    step: int
    d_k: int
    exponent: float
    weights: np.ndarray  # (n, n)
    entropy: np.ndarray  # (n,)
    anti_diagonal: float
    reads: np.ndarray  # (n,) int
    accuracy: float
    eval_loss: float
    loss: np.ndarray  # (steps,)
    step_loss: float
    solved_at: int | None


def training_state(step: int, d_k: int, exponent: float) -> TrainingState:
    """The snapshot of run (``d_k``, ``exponent``) at ``step``.

    Parameters
    ----------
    step : int
        One of the run's snapshot steps, 0, 10, …, :data:`attnlab.training.STEPS`.
    d_k, exponent
        As in :func:`training_run`.

    Returns
    -------
    TrainingState
        The probe's weights, the evaluation figures and the loss curve.

    Raises
    ------
    ValueError
        If an argument is not one the explorer offers; the message names it.
    """
    run = training_run(d_k, exponent)  # checks both: the options the explorer offers
    where = np.flatnonzero(run.eval_steps == step)
    if isinstance(step, bool) or where.size == 0:
        raise ValueError(f"step must be one of the snapshot steps 0, 10, … {STEPS}; got {step!r}")
    i = int(where[0])
    weights = run.weights[i]  # (n, n)
    return TrainingState(
        tokens=PROBE,
        step=int(step),
        d_k=run.d_k,
        exponent=run.exponent,
        weights=weights,
        entropy=run.entropy[i],
        anti_diagonal=float(anti_diagonal_mass(weights)),
        reads=weights.argmax(axis=1),
        accuracy=float(run.accuracy[i]),
        eval_loss=float(run.eval_loss[i]),
        loss=run.loss,
        step_loss=float(run.loss[max(int(step) - 1, 0)]),
        solved_at=run.solved_at,
    )


class TrainingExplorer(Explorer):
    """Slide through training; switch the head width and the √d_k scaling.

    Parameters
    ----------
    **initial
        Starting control values. Controls: ``step`` (the snapshot steps, starting at 0),
        ``d_k`` (:data:`D_K_VALUES`, starting at 16) and ``exponent`` (0.5 for ÷ √d_k,
        0.0 for no scaling).

    Examples
    --------
    >>> explorer = TrainingExplorer()
    >>> explorer.set(step=300)
    >>> bool(explorer.state.anti_diagonal > 0.7)
    True
    """

    name = "training"
    figsize = (8.8, 3.4)  # 880 px: fits the 904 px notebook at 1366 wide with a 280 px sidebar

    def __init__(self, **initial):
        super().__init__(**initial)  # trains the run shown first, and draws it
        self.training = train_the_rest()  # the other seven, while the learner reads

    def make_controls(self) -> dict:
        steps = snapshot_steps()
        return {
            "step": stops_slider(steps.tolist(), 0, "training step", width="420px"),
            "d_k": stops_slider(D_K_VALUES, 16, "head size d_k", width="300px"),
            "exponent": ToggleButtons(options=list(SCALINGS), value=0.5, description="scores"),
        }

    def compute(self, step, d_k, exponent) -> TrainingState:
        return training_state(step, d_k, exponent)

    def build(self, figure):
        heat_ax, loss_ax, ent_ax = figure.subplots(1, 3, width_ratios=[1.25, 1.1, 0.8])
        heat = weights_heatmap(PROBE, ax=heat_ax, colorbar=False, cell_size=CELL_SIZE)
        for i in range(N):  # the anti-diagonal, what reversal needs
            heat_ax.add_patch(
                Rectangle(
                    (N - 1 - i - 0.5, i - 0.5),
                    1,
                    1,
                    fill=False,
                    edgecolor="white",
                    linestyle="--",
                    linewidth=1.2,
                    zorder=3,
                )
            )
        heat_ax.set_title("weights of the probe sequence", fontsize=9)

        (curve,) = loss_ax.plot(
            np.arange(1, STEPS + 1), np.ones(STEPS), color=BAR_COLOUR, linewidth=1.0
        )
        (marker,) = loss_ax.plot([1], [1.0], "o", color=MARK_COLOUR, markersize=7, zorder=4)
        loss_ax.set(
            yscale="log", xlim=(0, STEPS), ylim=LOSS_LIMITS, xlabel="step", ylabel="training loss"
        )
        power_of_ten_labels(loss_ax.yaxis)
        loss_ax.set_title("loss (cross-entropy)", fontsize=9)
        loss_ax.spines[["top", "right"]].set_visible(False)
        ent_ax.spines[["top", "right"]].set_visible(False)

        rows = np.arange(N)
        bars = Bars(ent_ax, rows, 0.6, horizontal=True, facecolor=BAR_COLOUR)
        ent_ax.axvline(1.0, color="black", linestyle=":", linewidth=1.0)
        ent_ax.set(xlim=(0.0, 1.0), ylim=(N - 0.5, -0.5), xlabel=f"row entropy H / log {N}")
        ent_ax.set_yticks(rows, [f"{i}:{t}" for i, t in enumerate(PROBE)])
        ent_ax.set_title("how spread each query is", fontsize=9)
        return heat | {"curve": curve, "marker": marker, "bars": bars}

    def draw(self, artists, state) -> None:
        show_weights(artists, state.weights)  # (n, n)
        loss = np.clip(state.loss, *LOSS_LIMITS)  # (steps,) drawn inside the fixed limits
        artists["curve"].set_ydata(loss)
        artists["marker"].set_data([max(state.step, 1)], [loss[max(state.step - 1, 0)]])
        artists["bars"].set_values(state.entropy)

    def describe(self, state) -> str:
        scaling = "÷ √d_k" if state.exponent == 0.5 else "no scaling"
        reads = ", ".join(
            f"{html.escape(state.tokens[i])}→{j}" for i, j in enumerate(state.reads.tolist())
        )
        solved = (
            "never, within the budget" if state.solved_at is None else f"at step {state.solved_at}"
        )
        return (
            f"<div><b>step {state.step}</b> · d_k = {state.d_k}, {scaling} · training loss "
            f"<b>{state.step_loss:.3g}</b> · accuracy on 256 held-out sequences "
            f"<b>{state.accuracy:.1%}</b> (solved {solved})</div>"
            f"<div>Anti-diagonal mass <b>{state.anti_diagonal:.2f}</b> (1 = every query reads "
            f"its mirror position, {1 / N:.2f} = uniform) · mean row entropy "
            f"<b>{state.entropy.mean():.2f}</b> · key each query weights most: {reads}</div>"
        )

    def layout(self) -> widgets.Box:
        c = self.controls
        top = widgets.HBox([c["step"], c["d_k"]])
        return widgets.VBox([top, c["exponent"], self.view.widget, self.readout, self.error])
