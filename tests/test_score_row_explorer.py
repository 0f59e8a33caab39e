"""Lesson 0's score-row explorer: the largest score, its lead, ties and bad rows."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from attnlab.explorers.score_row import ScoreRowExplorer, largest_score

rows = st.lists(st.floats(-5, 5, allow_nan=False), min_size=2, max_size=8)


@given(rows)
def test_largest_score_agrees_with_numpy(row):
    state = largest_score(row)
    assert state.largest == max(row) and state.winner == int(np.argmax(row))
    assert state.lead == pytest.approx(sorted(row)[-1] - sorted(row)[-2])
    assert state.ties == [j for j, x in enumerate(row) if x == max(row)]


@pytest.mark.parametrize("bad", [[1.0], [], [[1.0, 2.0]]])
def test_a_row_needs_two_scores(bad):
    with pytest.raises(ValueError, match="scores must be one row"):
        largest_score(bad)


def test_a_tie_colours_both_bars_and_says_so():
    explorer = ScoreRowExplorer()
    explorer.set(score_1=2.5)
    assert explorer.state.ties == [0, 2] and explorer.state.lead == 0
    assert "a tie: key 1 and key 3" in explorer.readout.value
    colours = [bar.get_facecolor() for bar in explorer.artists["bars"]]
    assert colours[0] == colours[2] != colours[1]


def test_the_dashed_line_follows_the_largest_score():
    explorer = ScoreRowExplorer()
    explorer.set(score_1=-1.0, score_2=-2.0, score_3=-0.5, score_4=-3.0)
    assert list(explorer.artists["top"].get_ydata()) == [-0.5, -0.5]
    assert "key 3</b> with <b>−0.5" in explorer.readout.value
