"""Lesson 0's first explorer: four score sliders and a bar chart that marks the largest score.

It asks nothing new (lesson 0 is about how the course works): a score row, as lesson 1 will
compute them, shown as bars; the largest is coloured and its lead over the runner-up is
reported. The pure part is :func:`largest_score`.

Examples
--------
>>> state = largest_score([1.0, 0.5, 2.5, -0.1])
>>> state.winner, state.largest, state.lead
(2, 2.5, 1.5)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attnlab.examples import SCORE_ROW
from attnlab.explorers.base import Explorer, score_sliders, scores_of
from attnlab.explorers.number_text import plus_minus
from attnlab.plots.colours import PALETTE

SCORE_RANGE = (-5.0, 5.0)


@dataclass(frozen=True, eq=False)
class LargestScore:
    """What :func:`largest_score` finds in one row of scores.

    Attributes
    ----------
    scores : ndarray, shape (n,)
    winner : int
        Index of the first largest score.
    largest : float
    lead : float
        The largest minus the second largest; 0 for a tie.
    ties : list of int
        Indices of every key sharing the largest score.
    """

    scores: np.ndarray  # (n,)
    winner: int
    largest: float
    lead: float
    ties: list[int]


def largest_score(scores) -> LargestScore:
    """The largest score of a row, which key has it, and how far ahead of the next it is.

    Parameters
    ----------
    scores : array_like, shape (n,), n >= 2

    Returns
    -------
    LargestScore
        The largest score, which key has it, its lead and every key tied with it.

    Examples
    --------
    >>> largest_score([3.0, -1.0, 3.0]).ties
    [0, 2]
    >>> largest_score([-2.0, -0.5]).largest  # the largest can be negative
    -0.5
    """
    scores = np.asarray(scores, dtype=float)  # (n,)
    if scores.ndim != 1 or scores.size < 2:
        raise ValueError(f"scores must be one row of at least 2 numbers; got shape {scores.shape}")
    ordered = np.sort(scores)  # (n,) ascending
    winner = int(np.argmax(scores))
    return LargestScore(
        scores=scores,
        winner=winner,
        largest=float(ordered[-1]),
        lead=float(ordered[-1] - ordered[-2]),
        ties=[int(j) for j in np.flatnonzero(scores == ordered[-1])],
    )


class ScoreRowExplorer(Explorer):
    """Drag four scores; the bar of the largest is coloured and its lead is reported.

    Examples
    --------
    >>> explorer = ScoreRowExplorer()
    >>> explorer.set(score_1=4.0)
    >>> explorer.state.winner, explorer.state.lead
    (0, 1.5)
    """

    name = "score-row"
    page_draws_moving = True
    figsize = (5.0, 2.6)
    n_keys = SCORE_ROW.size

    def make_controls(self) -> dict:
        return score_sliders(SCORE_ROW, SCORE_RANGE)

    def compute(self, **scores) -> LargestScore:
        return largest_score(scores_of(scores))

    def build(self, figure):
        ax = figure.subplots()
        keys = np.arange(self.n_keys)  # (n,)
        bars = ax.bar(keys, np.zeros(self.n_keys), width=0.6, color=PALETTE["grey"])
        ax.axhline(0, color="black", linewidth=0.8)
        (top,) = ax.plot(
            [-0.5, self.n_keys - 0.5],
            [0, 0],
            color=PALETTE["vermillion"],
            linestyle="--",
            linewidth=1,
        )
        ax.set(
            ylim=SCORE_RANGE,
            xlim=(-0.5, self.n_keys - 0.5),
            ylabel="score",
            title="one query's scores against four keys",
        )
        ax.set_xticks(keys, [f"key {j + 1}" for j in keys])
        return {"bars": list(bars), "top": top}

    def draw(self, artists, state) -> None:
        for j, (bar, score) in enumerate(zip(artists["bars"], state.scores, strict=True)):
            bar.set_height(score)
            bar.set_color(PALETTE["vermillion"] if j in state.ties else PALETTE["grey"])
        artists["top"].set_ydata([state.largest, state.largest])

    def describe(self, state) -> str:
        keys = " and ".join(f"key {j + 1}" for j in state.ties)
        if len(state.ties) > 1:
            largest = plus_minus(state.largest, 1)
            verdict = f"a tie: {keys} share the largest score, <b>{largest}</b>"
        else:
            verdict = (
                f"largest: <b>{keys}</b> with <b>{plus_minus(state.largest, 1)}</b>, "
                f"ahead of the next by <b>{state.lead:.1f}</b>"
            )
        return f"<div>{verdict}</div>"
