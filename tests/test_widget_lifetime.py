"""Running a cell again closes the widgets its earlier run made (issue 29: saved lessons grew).

JupyterLab saves every live widget model with the notebook: three Run Alls kept three copies
of every explorer and help panel. The kernel is told the running cell's id by the front end;
here it is given directly.
"""

from __future__ import annotations

import warnings

import ipywidgets as widgets
import pytest

from attnlab import widget_lifetime
from attnlab.exercises import lesson3
from attnlab.explorers.score_row import ScoreRowExplorer


@pytest.fixture
def cell(monkeypatch):
    """Set the running cell: cell("a", 1) is cell a's first run."""
    now = {}
    monkeypatch.setattr(widget_lifetime, "current_cell", lambda: now.get("cell"))
    monkeypatch.setattr(widget_lifetime, "_MADE", {})

    def run(cell_id, count):
        now["cell"] = (cell_id, count)

    return run


def live(root) -> list:
    """The widgets of a tree whose models are still open."""
    found = []
    stack, seen = [root], set()
    while stack:
        w = stack.pop()
        if id(w) in seen or not isinstance(w, widgets.Widget):
            continue
        seen.add(id(w))
        if w.comm is not None:
            found.append(w)
        for name in w.keys:
            value = getattr(w, name, None)
            stack.extend(value if isinstance(value, list | tuple) else [value])
    return found


def explorer():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ScoreRowExplorer()


def test_running_an_explorers_cell_again_closes_the_old_explorer(cell):
    cell("explorer-cell", 5)
    first = explorer()
    assert len(live(first.widget)) > 5
    cell("explorer-cell", 9)  # Run All again
    second = explorer()
    assert live(first.widget) == [], "the first run's widgets are still open (and saved)"
    assert len(live(second.widget)) > 5


def test_other_cells_and_the_same_run_keep_theirs(cell):
    cell("a", 1)
    one, two = explorer(), explorer()  # two explorers made by one run
    cell("b", 2)
    other = explorer()
    assert live(one.widget) and live(two.widget) and live(other.widget)


def test_running_a_help_panels_cell_again_closes_the_old_panel(cell):
    exercise = lesson3.softmax_row
    cell("help", 3)
    first = exercise.help_panel()
    cell("help", 7)
    second = exercise.help_panel()
    assert live(first) == [] and live(second)


def test_outside_a_notebook_nothing_is_closed(cell):
    first = explorer()
    second = explorer()
    assert live(first.widget) and live(second.widget)
