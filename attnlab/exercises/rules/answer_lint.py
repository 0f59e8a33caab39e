"""What grading would refuse in the notebook cell that defined an answer (the grader's own
lint, :mod:`attnlab.exercises.rules.lint`), and the sentence that says so."""

from __future__ import annotations

import linecache
import os
import re

from attnlab.exercises.rules.lint import notebook_refused, problems
from attnlab.exercises.rules.unseen_names import binding_cells, cells_run, running_shell

CELL_FILE = re.compile(r"(^<ipython-input-\d+-)|(ipykernel_\d+[/\\]\d+\.py$)")


def answer_cell_problems(answer, forbidden=(), name: str | None = None) -> list[str]:
    """What grading would refuse in the notebook cell that defined ``answer`` (the same lint,
    :func:`attnlab.exercises.rules.lint.problems`), or ``[]`` outside a notebook.

    The cell is the one ``answer``'s code was compiled from; when that is no cell (a cell run
    under ``%%time`` compiles as ``<timed exec>``; an ``lru_cache`` wrapper, a ``partial`` or
    ``max`` has no code of its own), it is the last cell run that binds ``name`` at its
    start of line (:func:`~attnlab.exercises.rules.unseen_names.binding_cells`), as it was typed:
    grading lints the answer cell as typed, magics included.
    """
    shell = running_shell()
    code = getattr(answer, "__code__", None)
    filename = getattr(code, "co_filename", None)
    if isinstance(filename, str) and CELL_FILE.search(filename):
        source = "".join(linecache.getlines(filename))
    elif shell is not None and name and not _from_a_file(filename):
        source = (binding_cells(cells_run(shell), name, imports=False) or [""])[-1]
    else:
        return []
    if not source:
        return []
    namespace = shell.user_ns if shell is not None else {}
    return problems(source, forbidden=forbidden, refused=notebook_refused(namespace))


def _from_a_file(filename) -> bool:
    """Whether code compiled from ``filename`` came from a file (a module the learner wrote or
    imported), not from a cell or an ``exec``: such an answer is not a cell's to lint."""
    return isinstance(filename, str) and not filename.startswith("<") and os.path.isfile(filename)


def refused_message(reasons) -> str:
    """What a learner (and the grader's feedback) reads about an answer cell grading refuses."""
    return (
        "Your answer cell would not be run for grading, because "
        + "; ".join(reasons)
        + ". Graded answers may use numpy, math and the course's own functions, except those "
        "this exercise asks you to write yourself, and nothing that reaches into the notebook, "
        "the interpreter or the disk. Change the cell, run it, then run this check again."
    )
