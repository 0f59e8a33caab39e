"""Numbers and arrays written as a learner writes them, for feedback: ``[0, 0.25, 1]``."""

from __future__ import annotations

import functools

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


def static_help(exercise) -> str:
    """An exercise's hints (and, unless solutions are off, its worked solution) as Markdown, each
    in a collapsed ``<details>`` block: what its help panel shows where widgets cannot run
    (the course's static site, nbconvert, a file viewer).

    Solutions are left out when ``ATTNLAB_HIDE_SOLUTIONS=1`` (an instructor's site, a graded
    run) or when the installation has none.

    Examples
    --------
    >>> from attnlab.exercises import lesson1
    >>> text = static_help(lesson1.dot)
    >>> text.count("<summary>Hint "), "</details>" in text
    (3, True)
    """
    from attnlab.exercises.rules.grading_mode import solutions_hidden
    from attnlab.exercises.solutions import worked_solution

    count = len(exercise.hints)
    blocks = [
        f"**Stuck on {exercise.title}?** Open the hints one at a time "
        "(in the live notebook, the Next hint button shows them)."
        if count
        else f"**{exercise.title}** has no hints."
    ]
    for number, hint in enumerate(exercise.hints, 1):
        blocks.append(
            f'<details class="attnlab-hint">\n<summary>Hint {number} of {count}</summary>\n\n'
            f"{hint}\n\n</details>"
        )
    body = None if solutions_hidden() else worked_solution(exercise.name)
    if body is not None:
        blocks.append(
            '<details class="attnlab-solution">\n<summary>A solution (after you have had a '
            f"go)</summary>\n\n```python\n{body}\n```\n\n</details>"
        )
    return "\n\n".join(blocks)


def static_help_text(exercise) -> str:
    """The hints of :func:`static_help` as plain text (no solution): a help panel's
    ``text/plain``, for front ends that show neither widgets nor Markdown.

    Examples
    --------
    >>> from attnlab.exercises import lesson1
    >>> static_help_text(lesson1.dot).splitlines()[0]
    'Help for Exercise 1.1 (one dot product): hints, one per line; `.solution()` shows a solution.'
    """
    lines = [f"Help for {exercise.title}: hints, one per line; `.solution()` shows a solution."]
    lines += [f"Hint {n} of {len(exercise.hints)}: {h}" for n, h in enumerate(exercise.hints, 1)]
    return "\n".join(lines)


def help_panel_box(children, exercise):
    """The help panel's box: an ``ipywidgets.VBox`` whose display adds the static hints.

    JupyterLab shows the live buttons (the widget view ranks first there); the bundle also
    carries :func:`static_help` as ``text/markdown`` and :func:`static_help_text` as
    ``text/plain``, in place of the box's ``VBox(children=...)`` repr.
    """
    return _help_panel_class()(children, exercise=exercise)


@functools.cache
def _help_panel_class():
    import ipywidgets as widgets

    class HelpPanel(widgets.VBox):
        """A help panel: live buttons, and readable hints where widgets cannot run."""

        def __init__(self, children, exercise):
            super().__init__(children)
            self._exercise = exercise

        def _repr_mimebundle_(self, **kwargs):
            bundle = super()._repr_mimebundle_(**kwargs)
            if bundle is None:  # a closed panel: nothing to show
                return bundle
            bundle["text/markdown"] = static_help(self._exercise)
            bundle["text/plain"] = static_help_text(self._exercise)
            return bundle

    return HelpPanel
