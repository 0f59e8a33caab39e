"""Lesson 11 explorer: scrub through training and watch the two heads form.

A run of :func:`attnlab.induction.train` keeps the weights of every evaluation
(:class:`attnlab.induction.Progress` hands them out; the lesson collects them in its progress
bar's callback). :func:`training_history` runs each of them on one repeated sequence and keeps
the two layers' attention patterns, with the run's losses and scores: every frame is computed
once, and the slider only picks one.

Left and middle: the patterns of layer 0 and layer 1 (rows are queries, columns keys, the
colour scale fixed to 0 … 1, the repeat's first query marked). Right: the losses on the two
halves and the two scores during training, with the chosen step marked. Drag the step across
the phase change and both patterns form together: the previous-token line below the diagonal
in layer 0, the induction line ``L − 1`` positions back in layer 1.

:func:`training_history` is the pure computation; without a run the explorer shows a short
run of a small model (:func:`default_history`, trained once per process).

Examples
--------
>>> history = default_history()
>>> history.weights.shape[1:] == (2, history.n, history.n)
True
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from attnlab.attention_only import ModelConfig, forward
from attnlab.explorers.base import Explorer, stops_slider
from attnlab.explorers.number_text import num
from attnlab.induction import InductionConfig, eval_batch, train
from attnlab.plots.colours import PALETTE, WEIGHT_CMAP

__all__ = [
    "InductionExplorer",
    "InductionFrame",
    "TrainingHistory",
    "default_history",
    "induction_frame",
    "training_history",
]


@dataclass(frozen=True, eq=False)
class TrainingHistory:
    """A run's evaluations and both layers' patterns on one sequence, at every evaluation."""

    steps: np.ndarray  #: (m,) the evaluated steps
    tokens: np.ndarray  #: (n,) the sequence shown: L tokens, then the same L again
    length: int  #: L
    weights: np.ndarray  #: (m, 2, n, n) layer 0's and layer 1's pattern at each step
    first_loss: np.ndarray  #: (m,) first-half loss on the evaluation batch
    repeat_loss: np.ndarray  #: (m,) repeated-half loss
    previous_token: np.ndarray  #: (m,) layer 0's previous-token score
    induction: np.ndarray  #: (m,) layer 1's induction score

    @property
    def n(self) -> int:
        """Length of the sequence shown, 2L."""
        return int(self.tokens.size)


def training_history(run, snapshots: dict, length: int = 10) -> TrainingHistory:
    """Both layers' patterns at every evaluation of ``run``, on one sequence of its batch.

    Parameters
    ----------
    run : attnlab.induction.Run
        A two-layer run with one head per layer (its curves and scores are kept).
    snapshots : dict of int to dict
        Step -> the weights at that step (``Progress.params``), for every step of
        ``run.eval_steps``.
    length : int, default 10
        The repeat length ``L`` of the sequence shown: the first sequence of the fixed
        evaluation batch with that length.

    Returns
    -------
    TrainingHistory

    Raises
    ------
    ValueError
        For a run that is not two layers of one head, a missing snapshot, or a length no
        sequence of the evaluation batch has.
    """
    model = run.config.model
    if model.n_layers != 2 or model.n_heads != 1:
        raise ValueError(
            "run must be a two-layer model with one head per layer, got n_layers = "
            f"{model.n_layers}, n_heads = {model.n_heads}"
        )
    missing = [int(s) for s in run.eval_steps if int(s) not in snapshots]
    if missing:
        raise ValueError(f"snapshots has no weights for steps {missing[:5]}")
    batch = eval_batch(run.config)
    rows = np.flatnonzero(batch.lengths == length)
    if rows.size == 0:
        raise ValueError(
            f"length must be a repeat length of the evaluation batch "
            f"({run.config.min_repeat} … {run.config.max_repeat}), got {length}"
        )
    seq = batch.tokens[rows[0], : 2 * length]  # (2L,)
    frames = []
    for step in run.eval_steps:
        _, cache = forward(snapshots[int(step)], seq[None], check=False)
        frames.append([w[0, 0] for w in cache.weights])  # 2 × (n, n)
    weights = np.array(frames, dtype=float)  # (m, 2, n, n)
    weights.setflags(write=False)
    return TrainingHistory(
        steps=np.asarray(run.eval_steps),
        tokens=seq,
        length=int(length),
        weights=weights,
        first_loss=np.asarray(run.first_loss),
        repeat_loss=np.asarray(run.repeat_loss),
        previous_token=np.asarray(run.previous_token)[:, 0, 0],
        induction=np.asarray(run.induction)[:, 1, 0],
    )


@functools.lru_cache(maxsize=1)
def default_history() -> TrainingHistory:
    """A short run of a small model (vocab 8, repeats of 3 to 6, 150 steps): what the explorer
    shows when it is given no run. Trained once per process."""
    config = InductionConfig(
        model=ModelConfig(vocab=8, n_ctx=12, d_model=16, n_layers=2, n_heads=1, d_head=8),
        steps=150,
        min_repeat=3,
        max_repeat=6,
        eval_every=25,
        eval_size=32,
    )
    snapshots = {}
    run = train(config, seed=0, callback=lambda p: snapshots.update({p.step: p.params}))
    length = int(eval_batch(config).lengths.max())
    return training_history(run, snapshots, length)


@dataclass(frozen=True, eq=False)
class InductionFrame:
    """What the explorer shows at one evaluated step (:func:`induction_frame`)."""

    step: int
    index: int  #: position of ``step`` in the history
    layer0: np.ndarray  #: (n, n) layer 0's pattern
    layer1: np.ndarray  #: (n, n) layer 1's pattern
    first_loss: float
    repeat_loss: float
    previous_token: float
    induction: float


def induction_frame(history: TrainingHistory, step: int) -> InductionFrame:
    """The frame of ``history`` at ``step`` (one of ``history.steps``).

    Examples
    --------
    >>> h = default_history()
    >>> induction_frame(h, int(h.steps[-1])).layer1.shape == (h.n, h.n)
    True
    """
    where = np.flatnonzero(history.steps == step)
    if where.size == 0:
        raise ValueError(f"step must be one of the evaluated steps, got {step!r}")
    i = int(where[0])
    return InductionFrame(
        step=int(step),
        index=i,
        layer0=history.weights[i, 0],
        layer1=history.weights[i, 1],
        first_loss=float(history.first_loss[i]),
        repeat_loss=float(history.repeat_loss[i]),
        previous_token=float(history.previous_token[i]),
        induction=float(history.induction[i]),
    )


class InductionExplorer(Explorer):
    """Drag the training step; both heads' patterns and the curves follow.

    Parameters
    ----------
    history : TrainingHistory, optional
        From :func:`training_history`; :func:`default_history` when missing.
    **initial
        Starting control value: ``step`` (one of the history's steps; the last by default).

    Examples
    --------
    >>> explorer = InductionExplorer()
    >>> first = int(explorer.history.steps[0])
    >>> explorer.controls["step"].value = first          # as the slider would
    >>> explorer.state.step == first
    True
    """

    name = "induction"
    figsize = (8.8, 3.9)  # 880 px: fits the 904 px notebook at 1366 wide with a 280 px sidebar

    def __init__(self, history: TrainingHistory | None = None, **initial):
        self.history = default_history() if history is None else history
        if not isinstance(self.history, TrainingHistory):
            raise ValueError(
                "history must be a TrainingHistory (training_history(run, snapshots)), got "
                f"{type(self.history).__name__}"
            )
        super().__init__(**initial)

    def make_controls(self) -> dict:
        steps = [int(s) for s in self.history.steps]
        return {"step": stops_slider(steps, steps[-1], "training step", width="520px")}

    def compute(self, step) -> InductionFrame:
        return induction_frame(self.history, step)

    def build(self, figure):
        h = self.history
        ax0, ax1, ax_curve = figure.subplots(1, 3, width_ratios=[1, 1, 1.35])
        images = []
        for layer, ax in enumerate((ax0, ax1)):
            image = ax.imshow(
                np.zeros((h.n, h.n)), cmap=WEIGHT_CMAP, vmin=0, vmax=1, interpolation="nearest"
            )
            ticks = [0, h.length, h.n - 1]  # the start, the repeat's first token, the last
            ax.set_xticks(ticks, [str(t) for t in ticks], fontsize=9)
            ax.set_yticks(ticks, [str(t) for t in ticks], fontsize=9)
            ax.axhline(h.length - 0.5, color=PALETTE["vermillion"], linewidth=0.8)
            ax.set_title(f"layer {layer}", fontsize=10)
            ax.set_xlabel("key position", fontsize=9)
            images.append(image)
        ax0.set_ylabel("query position", fontsize=9)
        steps = h.steps
        ax_curve.plot(steps, h.first_loss, color=PALETTE["blue"], label="first half")
        ax_curve.plot(steps, h.repeat_loss, color=PALETTE["orange"], label="repeated half")
        score_axis = ax_curve.twinx()
        score_axis.plot(
            steps, h.previous_token, "--", color=PALETTE["green"], label="previous-token score"
        )
        score_axis.plot(steps, h.induction, "--", color=PALETTE["purple"], label="induction score")
        score_axis.set_ylim(0, 1)
        score_axis.set_ylabel("score (mean weight)", fontsize=9)
        ax_curve.set_ylim(0, max(4.2, float(np.max(h.first_loss)) + 0.2))
        ax_curve.set_xlabel("training step", fontsize=9)
        ax_curve.set_ylabel("loss (nats)", fontsize=9)
        ax_curve.set_title("losses (solid) and scores (dashed)", fontsize=10)
        here = ax_curve.axvline(steps[-1], color="0.4", linewidth=1.2)
        handles = ax_curve.get_lines()[:2] + score_axis.get_lines()
        figure.legend(
            handles=handles,
            loc="outside lower right",
            ncols=4,
            fontsize=9,
            frameon=False,
            columnspacing=1.2,
            handlelength=1.6,
        )
        return {"layer0": images[0], "layer1": images[1], "here": here}

    def draw(self, artists, state) -> None:
        artists["layer0"].set_data(state.layer0)
        artists["layer1"].set_data(state.layer1)
        artists["here"].set_xdata([state.step, state.step])

    def describe(self, state) -> str:
        return (
            f"<div>step <b>{state.step}</b>: repeated half <b>{num(state.repeat_loss, 3)}</b> "
            f"nats, first half {num(state.first_loss, 3)} nats</div>"
            f"<div>layer 0's previous-token score <b>{num(state.previous_token, 2)}</b>, "
            f"layer 1's induction score <b>{num(state.induction, 2)}</b> (the sequence: "
            f"L = {self.history.length}, the red line marks the start of the repeat)</div>"
        )
