"""Drive an explorer's controls from code, exactly as a learner's slider would.

Used by the tests (every value of every control, no error, no warning) and by
``benchmarks/explorers.py`` (time per update).
"""

from __future__ import annotations

import numpy as np
from ipywidgets import widgets


def control_values(control, max_steps: int = 200) -> list:
    """The values a learner can give ``control``, in order (sliders subsampled to ``max_steps``)."""
    if isinstance(control, widgets.widget_selection._Selection):
        return [value for _, value in _labelled(control.options)]
    if isinstance(control, widgets.widget_bool._Bool):
        return [not control.value, control.value]
    if isinstance(control, (widgets.widget_float._Float, widgets.widget_int._Int)):
        step = control.step or (control.max - control.min) / max_steps
        count = int(round((control.max - control.min) / step)) + 1
        values = control.min + step * np.arange(count)
        if count > max_steps:
            values = values[np.linspace(0, count - 1, max_steps).round().astype(int)]
        values = np.clip(values, control.min, control.max)
        kind = int if isinstance(control, widgets.widget_int._Int) else float
        return [kind(v) for v in values]
    raise TypeError(f"don't know how to sweep a {type(control).__name__}")


def _labelled(options):
    for option in options:
        if isinstance(option, tuple) and len(option) == 2:
            yield option
        else:
            yield str(option), option


def sweep(explorer, name: str, max_steps: int = 200):
    """Set control ``name`` to each of its values in turn; yield each value after its update."""
    control = explorer.controls[name]
    start = control.value
    for value in control_values(control, max_steps):
        control.value = value
        yield value
    control.value = start
