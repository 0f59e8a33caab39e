"""Close the widgets a cell made when the same cell runs again (issue 29: saved lessons grew).

Every run of an explorer's cell made a new explorer, and the old one's widget models stayed
alive in the kernel: JupyterLab saves the state of every live model with the notebook, so a
lesson saved after three Run Alls held three copies of every explorer (each control with its
own copy of the front-end code). :func:`adopt` records a widget tree under the cell that
made it (JupyterLab and Notebook 7 send the cell's id with each run); when that cell runs
again and makes a new tree, the trees of its earlier runs are closed. Outside a notebook
kernel (no cell id) nothing is recorded.

:func:`install` (run when ``attnlab`` is imported in a kernel) does the same for every
widget a cell makes (the self-test, feedback, the course map): the widgets made during a
cell's run are closed when that cell runs again.
"""

from __future__ import annotations

import ipywidgets as widgets

__all__ = ["adopt", "close_tree", "current_cell", "install"]

_MADE: dict[str, tuple[int, list]] = {}  # cell id -> (its run's execution count, trees)


def current_cell() -> tuple[str, int] | None:
    """The id of the cell running now and the kernel's execution count, or None."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython comes with ipywidgets
        return None
    shell = get_ipython()
    header = getattr(shell, "parent_header", None) or {}
    cell = (header.get("metadata") or {}).get("cellId")
    if not cell:
        return None
    return str(cell), int(shell.execution_count)


def close_tree(root: widgets.Widget) -> int:
    """Close ``root`` and every widget it holds (children, layout, style, ...); how many.

    Examples
    --------
    >>> box = widgets.VBox([widgets.HTML("a"), widgets.HBox([widgets.HTML("b")])])
    >>> close_tree(box) >= 4, box.comm is None
    (True, True)
    """
    seen: set[int] = set()
    stack = [root]
    while stack:
        widget = stack.pop()
        if id(widget) in seen or not isinstance(widget, widgets.Widget):
            continue
        seen.add(id(widget))
        for name in widget.keys:
            value = getattr(widget, name, None)
            if isinstance(value, widgets.Widget):
                stack.append(value)
            elif isinstance(value, list | tuple):
                stack.extend(v for v in value if isinstance(v, widgets.Widget))
        widget.close()
    return len(seen)


def adopt(root: widgets.Widget, cell: tuple[str, int] | None = None) -> widgets.Widget:
    """Record ``root`` as made by the running cell, closing that cell's earlier trees.

    Parameters
    ----------
    root : ipywidgets.Widget
        The widget a cell shows (an explorer's box, a help panel).
    cell : (str, int), optional
        The cell id and execution count; by default :func:`current_cell`.

    Returns
    -------
    ipywidgets.Widget
        ``root``.
    """
    cell = cell or current_cell()
    if cell is None:
        return root
    cell_id, run = cell
    made_in, trees = _MADE.get(cell_id, (run, []))
    if made_in != run:
        for tree in trees:
            close_tree(tree)
        trees = []
    trees.append(root)
    _MADE[cell_id] = (run, trees)
    return root


_RUN: dict[str, object] = {}  # the running cell: its id and the widgets open before it
_CELL_WIDGETS: dict[str, list] = {}  # cell id -> the widgets its latest run made


def _open_widgets() -> dict:
    from ipywidgets.widgets import widget

    return dict(getattr(widget, "_instances", {}))


def _before(info=None) -> None:
    """pre_run_cell: close what this cell's earlier run made; note the widgets open now."""
    cell = current_cell()
    _RUN.clear()
    if cell is None:
        return
    for old in _CELL_WIDGETS.pop(cell[0], []):
        old.close()
    _RUN.update(cell=cell[0], before=set(_open_widgets()))


def _after(result=None) -> None:
    """post_run_cell: record the widgets this run made (and left open) under its cell."""
    if "cell" not in _RUN:
        return
    made = [w for key, w in _open_widgets().items() if key not in _RUN["before"]]
    if made:
        _CELL_WIDGETS[_RUN["cell"]] = made
    _RUN.clear()


def install(shell=None) -> bool:
    """Close a cell's widgets when the cell runs again, in this kernel; False outside one.

    Examples
    --------
    >>> install()  # not in a kernel here
    False
    """
    if shell is None:
        try:
            from IPython import get_ipython
        except ImportError:  # pragma: no cover
            return False
        shell = get_ipython()
    events = getattr(shell, "events", None)
    if events is None or not hasattr(shell, "parent_header"):
        return False
    if not getattr(shell, "_attnlab_widget_lifetime", False):
        events.register("pre_run_cell", _before)
        events.register("post_run_cell", _after)
        shell._attnlab_widget_lifetime = True
    return True


install()  # imported by the explorers' kit: in a kernel, from the lesson's first cell on
