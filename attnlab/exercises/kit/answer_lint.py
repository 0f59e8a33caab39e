"""What grading would refuse in the notebook cell that defined an answer (the grader's own
lint, :mod:`attnlab.grading.lint`), and the sentence that says so."""

from __future__ import annotations

import re

CELL_FILE = re.compile(r"(^<ipython-input-\d+-)|(ipykernel_\d+[/\\]\d+\.py$)")


def answer_cell_problems(answer, forbidden=()) -> list[str]:
    """What grading would refuse in the notebook cell that defined ``answer`` (the same lint,
    :func:`attnlab.grading.lint.problems`), or ``[]`` outside a notebook."""
    code = getattr(answer, "__code__", None)
    filename = getattr(code, "co_filename", "")
    if not isinstance(filename, str) or not CELL_FILE.search(filename):
        return []
    import linecache

    from attnlab.grading.lint import notebook_refused, problems

    source = "".join(linecache.getlines(filename))
    if not source:
        return []
    try:
        from IPython import get_ipython

        shell = get_ipython()
        namespace = shell.user_ns if shell is not None else {}
    except ImportError:
        namespace = {}
    return problems(source, forbidden=forbidden, refused=notebook_refused(namespace))


def refused_message(reasons) -> str:
    """What a learner (and the grader's feedback) reads about an answer cell grading refuses."""
    return (
        "Your answer cell would not be run for grading, because "
        + "; ".join(reasons)
        + ". Graded answers may use numpy, math and the course's own functions, and nothing "
        "that reaches into the notebook, the interpreter or the disk. Change the cell, run "
        "it, then run this check again."
    )
