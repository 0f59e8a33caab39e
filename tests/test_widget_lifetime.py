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


class FakeShell:
    """What install() needs of a kernel's shell: IPython's events and a parent header."""

    def __init__(self):
        from IPython.core.events import EventManager, available_events

        self.events = EventManager(self, available_events)
        self.parent_header = {}


def test_any_widget_a_cell_made_is_closed_when_the_cell_runs_again(cell, monkeypatch):
    """The self-test, feedback and course map of lesson 0 are plain ipywidgets."""
    monkeypatch.setattr(widget_lifetime, "_CELL_WIDGETS", {})
    shell = FakeShell()
    assert widget_lifetime.install(shell) and widget_lifetime.install(shell)  # once only
    assert len(shell.events.callbacks["pre_run_cell"]) == 1

    def run(cell_id, count, make):
        cell(cell_id, count)
        shell.events.trigger("pre_run_cell", None)
        made = make()
        shell.events.trigger("post_run_cell", None)
        return made

    first = run("selftest", 1, lambda: widgets.VBox([widgets.HTML("live?")]))
    kept = run("other", 2, lambda: widgets.HTML("another cell"))
    assert live(first) and live(kept)
    second = run("selftest", 3, lambda: widgets.VBox([widgets.HTML("live?")]))
    assert live(first) == [] and live(second) and live(kept)
