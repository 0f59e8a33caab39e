"""Numbers and arrays written as a learner writes them, for feedback: ``[0, 0.25, 1]``."""

from __future__ import annotations

import numpy as np


def short(value) -> str:
    """A number or an array as a learner writes it: ``[0, 0.25, 1]``, without numpy's padding.

    At most 4 significant digits, no alignment padding, long rows elided; anything that is
    not numeric (or a ragged list) falls back to ``repr``.

    >>> short(np.array([[0.0, 1.0], [0.25, -1e-9]]))
    '[[0, 1], [0.25, -1e-09]]'
    >>> short([[1, 2], [3]])
    '[[1, 2], [3]]'
    >>> short((np.array([1.5, 2.0]), 1.0))
    '([1.5, 2], 1.0)'
    """
    if isinstance(value, np.ndarray) or isinstance(value, (list, tuple)):
        try:
            array = np.asarray(value)
        except ValueError:  # a ragged list: each item as a learner writes it
            items = ", ".join(short(item) for item in value)
            return f"[{items}]" if isinstance(value, list) else f"({items})"
        if array.dtype.kind in "fiub":
            return _nested(array)
    return repr(value)


def _nested(array: np.ndarray) -> str:
    if array.ndim == 0:
        return _number(array[()])
    items = list(array) if len(array) <= 20 else [*array[:3], None, *array[-3:]]
    return "[" + ", ".join("..." if a is None else _nested(np.asarray(a)) for a in items) + "]"


def _number(x) -> str:
    if isinstance(x, (bool, np.bool_)):
        return str(bool(x))
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    x = float(x)
    if x != 0 and np.isfinite(x) and not 1e-4 <= abs(x) < 1e6:
        return np.format_float_scientific(x, precision=3, trim="-")
    return np.format_float_positional(x, precision=4, fractional=False, trim="-")


def one_line(value) -> str:
    """What the learner returned, in one line of at most 300 characters; never fails."""
    try:
        text = short(value)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 300 else f"{text[:300]}…"


def hidden_difference(got, expected) -> str:
    """When ``got`` and ``expected`` print alike, a sentence giving the difference the digits
    hide (so a message never calls equal-looking numbers wrong without saying why); else ''.

    Examples
    --------
    >>> hidden_difference([1.0, 2.0], [1.0, 2.00004])
    ' They agree to the digits shown, but differ by up to 4e-05, more than rounding (even in \
float32) explains.'
    >>> hidden_difference([1.0], [1.5])
    ''
    """
    if short(got) != short(expected):
        return ""
    gap = float(np.max(np.abs(np.asarray(got, float) - np.asarray(expected, float))))
    return (
        f" They agree to the digits shown, but differ by up to {gap:.3g}, more than "
        "rounding (even in float32) explains."
    )


#: The most warnings :func:`warned` names, and the longest it lets one be (characters): numpy
#: raises a few distinct ones; an answer that raises thousands of its own makes no longer
#: a message (a red team's 300,000 made a 451 MB graded notebook before this).
WARNINGS_NAMED, WARNING_CHARS = 4, 200


def warned(messages) -> str:
    """The end of a reason that names the numpy warnings, or nothing if there were none.

    Examples
    --------
    >>> warned(["overflow encountered in exp"])
    ' numpy warned: overflow encountered in exp.'
    >>> warned([f"warning {n}" for n in range(10)])
    ' numpy warned: warning 0; warning 1; warning 2; warning 3; and 6 more.'
    """
    if not messages:
        return ""
    messages = list(messages)
    named = [m if len(m) <= WARNING_CHARS else m[:WARNING_CHARS] + "…" for m in messages]
    more = len(named) - WARNINGS_NAMED
    listed = "; ".join(named[:WARNINGS_NAMED] + ([f"and {more} more"] if more > 0 else []))
    return f" numpy warned: {listed}."
