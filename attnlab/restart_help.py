"""One sentence instead of a traceback when a cell uses a name the lesson's earlier cells define.

After a kernel restart every import and variable is gone. A check cell run on its own then
stopped with a six-line ``NameError: name 'lesson3' is not defined``. Loaded as an IPython
extension by the course's kernel configuration (``jupyter-config/ipython/``, installed into
the environment's ``etc/ipython`` by ``pip install .`` and by ``./run.sh lab``), a
``NameError`` for a name the course's cells define (``lesson3``, ``attnlab``, ``np``, an
explorer, ...) is shown as one sentence naming what to run. Any other ``NameError`` (a typo
in the learner's own code) keeps IPython's usual traceback.
"""

from __future__ import annotations

import re
import sys

__all__ = ["ADVICE", "course_name", "load_ipython_extension", "sentence"]

#: What to do, as the menus of JupyterLab and Notebook 7 both name it.
ADVICE = "Run ▸ Run All Cells (or Run ▸ Run All Above Selected Cell, then this cell)"
COURSE_NAMES = re.compile(
    r"^(lesson\d+|attnlab|examples|np|plt|math|time|[A-Z]\w*Explorer|softmax|"
    r"scaled_dot_product_attention)$"
)
_MISSING = re.compile(r"name '([^']+)' is not defined")


def course_name(error: BaseException) -> str | None:
    """The missing name, if ``error`` is a NameError for a name the course's cells define.

    >>> course_name(NameError("name 'lesson3' is not defined"))
    'lesson3'
    >>> course_name(NameError("name 'my_typo' is not defined")) is None
    True
    """
    found = _MISSING.search(str(error))
    if isinstance(error, NameError) and found and COURSE_NAMES.match(found.group(1)):
        return found.group(1)
    return None


def sentence(name: str) -> str:
    """What the learner sees instead of the traceback.

    >>> sentence("lesson3")  # doctest: +ELLIPSIS
    "`lesson3` is not defined: the kernel has restarted ... Run ▸ Run All Cells ..."
    """
    return (
        f"`{name}` is not defined: the kernel has restarted (or the lesson's first cells "
        f"have not run), so this cell cannot run on its own. {ADVICE}."
    )


def _grading() -> bool:
    """Under autograding or in the grading kernel: errors stay as they are. ``nbgrader
    validate`` is not grading: a learner reads what it says, so its sentences are kept."""
    from attnlab.exercises.rules.grading_mode import autograded

    return autograded()


def _handler(shell, etype, value, tb, tb_offset=None):
    """IPython's custom exception handler: it shows the error itself (``run_code`` only
    calls it), one sentence for a course name; any other NameError goes to the check cells'
    own handler once a lesson has loaded it (:mod:`attnlab.exercises.cells`, which keeps
    a handler it finds), else IPython's usual traceback."""
    name = None if _grading() else course_name(value)
    if name is None:
        cells = sys.modules.get("attnlab.exercises.cells")
        show = getattr(cells, "_show_name_error", None)
        if show is not None and not _grading():
            show(shell, etype, value, tb, tb_offset=tb_offset)
        else:
            shell.showtraceback((etype, value, tb), tb_offset=tb_offset)
        return None
    stb = [sentence(name)]
    shell._showtraceback(etype, value, stb)  # the kernel sends it as the cell's error output
    return stb


def load_ipython_extension(ipython) -> None:
    """Show a course name's ``NameError`` as one sentence (``%load_ext attnlab.restart_help``)."""
    ipython.set_custom_exc((NameError,), _handler)
