"""Drive an explorer's controls from code, exactly as a learner's slider would.

Used by the tests (every value of every control, no error, no warning) and by
``benchmarks/explorers.py`` (time per update).
"""

from __future__ import annotations

from attnlab.controls import Checkbox, Choice, Slider


def control_values(control, max_steps: int = 200) -> list:
    """The values a learner can give ``control``, in order (sliders subsampled to ``max_steps``).

    Examples
    --------
    >>> control_values(Slider(value=0, min=0, max=1, step=0.5, description="p"))
    [0.0, 0.5, 1.0]
    """
    if isinstance(control, (Slider, Choice, Checkbox)):
        return control.grid(max_steps)
    raise TypeError(f"don't know how to sweep a {type(control).__name__}")


def sweep(explorer, name: str, max_steps: int = 200):
    """Set control ``name`` to each of its values in turn; yield each value after its update."""
    control = explorer.controls[name]
    start = control.value
    for value in control_values(control, max_steps):
        control.value = value
        yield value
    control.value = start
