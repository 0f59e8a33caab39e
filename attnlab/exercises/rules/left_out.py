"""Lesson cells that grading leaves out: the ones no answer needs and that cost much to run.

Lesson 11 trains a model for a minute of CPU, then reads it; no answer cell and no check needs
any of it. Its source notebook marks those cells ``{"attnlab": {"grading": "skip"}}`` (cell
metadata), and both grading kernels leave them out: the one that calls the answers
(:mod:`attnlab.grading.grade`) and nbgrader's Execute (:mod:`attnlab.grading.execute`), where
the cell shows a one-line note instead of its outputs. The mark is read from the instructor's
source notebook only, never from a submission; ``tests/test_grading_skips.py`` checks that no
cell grading runs needs a name only a left-out cell binds.

Examples
--------
>>> left_out({"cell_type": "code", "source": "run = train()",
...           "metadata": {"attnlab": {"grading": "skip"}}})
True
>>> left_out({"cell_type": "code", "source": "run = train()", "metadata": {}})
False
"""

from __future__ import annotations

#: The cell metadata that marks a lesson cell grading leaves out: ``metadata[a][b] == c``.
SKIP = ("attnlab", "grading", "skip")

#: What nbgrader's Execute shows in a left-out cell of the graded notebook.
LEFT_OUT_NOTE = (
    "not run by the grader: this lesson cell trains or reads the lesson's model, which no "
    "answer needs (it runs in your own copy of the lesson)"
)


def left_out(cell: dict) -> bool:
    """Whether ``cell`` (nbformat JSON, from the **source** notebook) carries :data:`SKIP`."""
    meta = cell.get("metadata", {}) or {}
    return cell.get("cell_type") == "code" and (meta.get(SKIP[0]) or {}).get(SKIP[1]) == SKIP[2]
