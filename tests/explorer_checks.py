"""What every explorer test checks while it moves a control: the learner sees no trouble."""

from __future__ import annotations

import re
import warnings

from attnlab.explorers.sweep import sweep

NAN_OR_INF = re.compile(r"\b(nan|inf)\b", re.IGNORECASE)


def readout_text(explorer) -> str:
    """The explorer's readout as plain text (tags replaced by spaces)."""
    return re.sub(r"<[^>]+>", " ", explorer.readout.value)


def assert_shown_cleanly(explorer, where: str = "") -> str:
    """No error from the last update and no nan/inf in the readout; returns the readout text."""
    assert explorer.last_error is None, f"{where}: {explorer.last_error!r}"
    text = readout_text(explorer)
    assert not NAN_OR_INF.search(text), f"{where} shows {text!r}"
    return text


def clean_sweep(explorer, name: str, max_steps: int = 200):
    """Like :func:`sweep`, with warnings as errors and each step shown cleanly; yields values."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for value in sweep(explorer, name, max_steps):
            assert_shown_cleanly(explorer, f"{name}={value!r}")
            yield value
