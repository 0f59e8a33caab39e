"""Close the widgets a cell made when the same cell runs again (issue 29: saved lessons grew).

Every run of an explorer's cell made a new explorer, and the old one's widget models stayed
alive in the kernel: JupyterLab saves the state of every live model with the notebook, so a
lesson saved after three Run Alls held three copies of every explorer (each control with its
own copy of the front-end code). :func:`adopt` records a widget tree under the cell that
made it (JupyterLab and Notebook 7 send the cell's id with each run); when that cell runs
again and makes a new tree, the trees of its earlier runs are closed. Outside a notebook
kernel (no cell id) nothing is recorded.
"""

from __future__ import annotations

import ipywidgets as widgets

__all__ = ["adopt", "close_tree", "current_cell"]

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
