"""What issue 16 found hard to read in the explorers, checked in the kernel.

The browser suite (tests/browser/test_legibility.py) checks sizes on a 1366 × 768 screen;
these check the texts and the figures' contents: no "-0.0", one minus sign, negative
factors in parentheses, zero weights labelled, no plain-underscore subscripts, numbers
clear of lines, legends clear of bars, and no text too small to read.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
from explorer_checks import readout_text

from attnlab.explorers.mixture import MixtureExplorer, number_heights
from attnlab.explorers.overflow import OverflowExplorer
from attnlab.explorers.temperature import TemperatureExplorer

NEGATIVE_ZERO = re.compile(r"[-−]0(\.0*)?(?![.\d])")


def quiet(explorer_class, **initial):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return explorer_class(**initial)


# ----------------------------------------------------------------------- lesson 3
def test_temperature_table_never_shows_negative_zero():
    """x / T of a small negative score rounds to 0.0: shown as +0.0, never −0.0 or -0.0."""
    explorer = quiet(TemperatureExplorer)
    explorer.set(score_1=-0.1, temperature=5.0)  # x / T = −0.02 → 0.0 at one decimal
    text = readout_text(explorer)
    assert not NEGATIVE_ZERO.search(text), text
    assert "+0.0" in text and "-" not in text


def test_overflow_table_has_one_cell_per_weight():
    """When "overflow" replaces a number the columns stay aligned: a cell for every weight."""
    explorer = quiet(OverflowExplorer)
    explorer.set(scale=1000.0)  # float16 and float32 overflow in the naive formula
    rows = re.findall(r"<tr>(.*?)</tr>", explorer.readout.value)
    n = explorer.state.scores.size
    header, body = rows[0], rows[1:]
    assert header.count(f'colspan="{n}"') == 2
    for row in body:
        assert row.count("<td") == 3 + 2 * n, row
    assert "overflow" in explorer.readout.value
    assert "-" not in readout_text(explorer)  # the score −100 is written with a true minus


# ----------------------------------------------------------------------- lesson 5
def test_mixture_subscripts_are_mathtext_not_underscores():
    explorer = quiet(MixtureExplorer)
    texts = [t.get_text() for t in explorer.figure.findobj(lambda a: hasattr(a, "get_text"))]
    plain = [t for t in texts if re.search(r"\b[wv]_", t.replace("$", " $ "))
             and not re.search(r"\$[^$]*[wv]_[^$]*\$", t)]  # fmt: skip
    assert not plain, plain
    assert any(r"$w_\mathrm{A}$" in t for t in texts)


def test_mixture_numbers_stay_off_the_one_third_line():
    line = 1 / 3
    for w in np.linspace(0, 1, 201):
        heights = number_heights([w, (1 - w) / 2, (1 - w) / 2])
        assert np.all(np.abs(heights - line) >= 0.045 - 1e-12), (w, heights)
    explorer = quiet(MixtureExplorer)
    explorer.set(score_1=0.0, score_2=0.0, score_3=-0.3)  # two weights near 0.3
    offsets = explorer.artists["numbers"].get_offsets()[:, 1]
    assert np.all(np.abs(offsets - line) >= 0.045 - 1e-12), offsets


@pytest.mark.parametrize("w", [0.0, 0.2, 0.9])
def test_mixture_numbers_sit_just_above_bars_away_from_the_line(w):
    (height,) = number_heights([w, 0.5, 0.5])[:1]
    assert height == pytest.approx(w + 0.05)
