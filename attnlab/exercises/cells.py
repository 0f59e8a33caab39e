"""What the learner's kernel last did with answer cells, and one plain sentence for a check
cell that cannot run.

Importing this module (a lesson does, through its exercises) inside IPython calls :func:`watch`
once, which

* follows every cell run (IPython's ``pre_run_cell`` and ``post_run_cell`` events) and notes,
  for each top-level function a cell tries to define, whether the cell's latest run stopped
  before defining it (a ``SyntaxError``, an exception raised above the ``def``, an
  interrupt). :meth:`~attnlab.exercises.kit.exercise.Exercise.check` asks
  :func:`stale_message`, so a check on the function that is still bound from before (the
  stub, an older attempt) says the cell did not run and why, instead of judging the old
  function;
* shows a ``NameError`` raised by a check cell (``lesson3.softmax_row.check(softmax_row)``
  run before its exercise cell, or before the import of ``lesson3``) as one sentence saying
  which cell to run. Every other ``NameError`` keeps its usual traceback.

Outside IPython nothing is registered. Under grading nothing is registered either: not when a
check must pass (nbgrader's ``NBGRADER_EXECUTION``, ``ATTNLAB_REQUIRE_CORRECT=1``) and not in
the grading kernel (:func:`~attnlab.exercises.rules.grading_mode.in_grading_kernel`: its
worker is armed before any cell), so graded runs
see exactly what they saw before. ``nbgrader validate`` (``NBGRADER_VALIDATING=1``) registers
both: what it prints is read by the learner.
"""

from __future__ import annotations

import ast
import re
import sys

from attnlab.exercises.rules.grading_mode import in_grading_kernel, must_pass, validating

#: Name -> (the object the name was still bound to, why its cell stopped), for every function
#: whose defining cell's latest run stopped before the ``def`` ran.
_FAILED: dict[str, tuple[object, str]] = {}
#: Stands for "no such name" in :data:`_FAILED` and the snapshots.
_MISSING = object()
#: The cell being run and, for each function it defines, what the name was bound to before.
_RUNNING: dict = {"cell": "", "before": {}, "tag": None}
#: Name -> the cell that last defined it, as JupyterLab and Notebook 7 describe the cell they
#: run (the execute request's metadata holds the cell's id and its metadata, nbgrader's tag
#: included): ``{"cell_id": ..., "grade_id": ... or None}``. Known before the notebook is saved.
DEFINED_IN: dict[str, dict] = {}

_DEF = re.compile(r"^(?:async[ \t]+)?def[ \t]+([A-Za-z_]\w*)[ \t]*\(", re.MULTILINE)
_LESSON = re.compile(r"lesson\d+\Z")


def defined_functions(code: str) -> list[str]:
    """The top-level functions ``code`` defines; a regex on ``def name(`` if it does not parse.

    Examples
    --------
    >>> defined_functions("def f(x):\\n    return x\\n\\ndef g():\\n    pass")
    ['f', 'g']
    >>> defined_functions("def softmax_row(x):\\n    return x +")  # a SyntaxError
    ['softmax_row']
    """
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # what ast.parse raises
        return _DEF.findall(code)
    return [
        node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    ]


def why_stopped(error: BaseException) -> str:
    """``"SyntaxError: invalid syntax (line 3)"``: the error a cell stopped with, in one line.

    Examples
    --------
    >>> why_stopped(ValueError("bad shape"))
    'ValueError: bad shape'
    """
    if isinstance(error, SyntaxError):
        where = f" (line {error.lineno})" if error.lineno else ""
        text = f"{type(error).__name__}: {error.msg}{where}"
    else:
        message = str(error).strip().splitlines()
        text = f"{type(error).__name__}: {message[0]}" if message else type(error).__name__
    return text if len(text) <= 200 else f"{text[:200]}…"


def _failed_sentence(name: str, why: str) -> str:
    if why.startswith("KeyboardInterrupt"):
        return (
            f"Your last run of the cell defining `{name}` was interrupted before it got "
            "that far; run that cell again."
        )
    return (
        f"Your last run of the cell defining `{name}` stopped with {why}; fix it and run "
        "that cell again."
    )


def stale_message(answer) -> str | None:
    """Why ``answer`` is not the learner's latest code, or None when it is (or nothing is known).

    ``answer`` is stale when it is still bound, in the notebook, to the name of a function
    whose defining cell's latest run stopped before the ``def`` ran.
    """
    if not _FAILED:
        return None
    namespace = _namespace()
    for name, (old, why) in list(_FAILED.items()):
        if old is answer and old is not _MISSING and namespace.get(name, _MISSING) is answer:
            return _failed_sentence(name, why)
    return None


def _namespace() -> dict:
    shell = _shell()
    return shell.user_ns if shell is not None else {}


def _shell():
    if "IPython" not in sys.modules:
        return None
    from IPython import get_ipython

    return get_ipython()


def _python(shell, raw: str) -> str:
    """The cell as Python (magics turned into calls), or the raw text if that fails."""
    try:
        return shell.transform_cell(raw)
    except Exception:  # noqa: BLE001 - a cell IPython cannot transform: read it as it is
        return raw


def _cell_tag(shell) -> dict | None:
    """The running cell's id and nbgrader tag, from the front end's execute request, or None
    when it does not send them (plain IPython, nbclient, other front ends). JupyterLab and
    Notebook 7 send the cell's metadata with its ``cellId`` and ``deletedCells``."""
    try:
        metadata = shell.kernel.get_parent("shell").get("metadata") or {}
    except Exception:  # noqa: BLE001 - no kernel, an older one: nothing is known
        return None
    if not isinstance(metadata, dict) or not metadata.get("cellId"):
        return None
    if "deletedCells" not in metadata:  # JupyterLab's and Notebook 7's request, not another's
        return None
    nbgrader = metadata.get("nbgrader") if isinstance(metadata.get("nbgrader"), dict) else {}
    solution = bool(nbgrader.get("solution"))
    return {
        "cell_id": metadata["cellId"],
        "grade_id": nbgrader.get("grade_id") if solution else None,
    }


def defining_cell(name: str) -> dict | None:
    """The cell that last defined ``name`` (see :data:`DEFINED_IN`), or None if unknown."""
    return DEFINED_IN.get(name)


def _before_cell(shell, info) -> None:
    raw = getattr(info, "raw_cell", None) or ""
    names = defined_functions(_python(shell, raw))
    _RUNNING["cell"] = raw
    _RUNNING["before"] = {name: shell.user_ns.get(name, _MISSING) for name in names}
    _RUNNING["tag"] = _cell_tag(shell) if names else None


def _after_cell(shell, result) -> None:
    raw = getattr(getattr(result, "info", None), "raw_cell", None)
    before = _RUNNING["before"] if raw == _RUNNING["cell"] else {}
    error = result.error_before_exec or result.error_in_exec
    for name, old in before.items():
        now = shell.user_ns.get(name, _MISSING)
        if error is not None and now is old:
            _FAILED[name] = (now, why_stopped(error))
        else:
            _FAILED.pop(name, None)
            if now is not old and _RUNNING.get("tag") is not None:
                DEFINED_IN[name] = _RUNNING["tag"]
            elif now is not old:
                DEFINED_IN.pop(name, None)


def _checked_names(cell: str) -> tuple[set[str], set[str]]:
    """The answers a cell passes to ``lessonN.<exercise>.check(...)``, and the ``lessonN``
    modules it uses."""
    try:
        tree = ast.parse(cell)
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # what ast.parse raises
        return set(), set()
    answers, lessons = set(), set()
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and _LESSON.match(node.value.id)
        ):
            lessons.add(node.value.id)
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "check"
            and isinstance(node.func.value, ast.Attribute)
            and isinstance(node.func.value.value, ast.Name)
            and _LESSON.match(node.func.value.value.id)
        ):
            answers.update(arg.id for arg in node.args if isinstance(arg, ast.Name))
    return answers, lessons


def name_error_sentence(error: NameError, cell: str) -> str | None:
    """One sentence for a NameError raised by a check cell, else None (keep the traceback).

    Examples
    --------
    >>> name_error_sentence(NameError("name 'dot' is not defined", name="dot"),
    ...                     "lesson1.dot.check(dot)")
    '`dot` is not defined yet: run the cell that defines it (the exercise cell above) first.'
    >>> name_error_sentence(NameError("name 'x' is not defined", name="x"), "print(x)") is None
    True
    """
    name = getattr(error, "name", None)
    if not name:
        found = re.match(r"name '(\w+)' is not defined", str(error))
        name = found.group(1) if found else None
    answers, lessons = _checked_names(cell)
    if name in answers:
        from attnlab.exercises.rules.answer_cells import missing_sentence

        lost = missing_sentence(name, cell)  # the notebook lost the exercise's answer cell
        if lost is not None:
            return f"`{name}` is not defined. {lost}"
        old, why = _FAILED.get(name, (None, None))
        if old is _MISSING:
            return f"`{name}` is not defined. {_failed_sentence(name, why)}"
        return (
            f"`{name}` is not defined yet: run the cell that defines it (the exercise cell "
            "above) first."
        )
    if name in lessons:
        return (
            f"`{name}` is not defined yet: run the notebook's first code cell (it imports "
            f"`{name}` with `from attnlab.exercises import {name}`) first."
        )
    return None


def _raised_at_top_of_cell(tb) -> bool:
    """True when the innermost frame of ``tb`` is the cell's own top level."""
    while tb.tb_next is not None:
        tb = tb.tb_next
    return tb.tb_frame.f_code.co_name == "<module>"


def _show_name_error(shell, etype, value, tb, tb_offset=None) -> None:
    """IPython's custom handler for NameError: a sentence for check cells, else the usual.

    The cell fails either way (IPython records the error before calling the handler).
    """
    sentence = None
    if tb is not None and _raised_at_top_of_cell(tb):
        sentence = name_error_sentence(value, _RUNNING["cell"])
    if sentence is None:
        shell.showtraceback((etype, value, tb), tb_offset=tb_offset)
    else:
        sys.last_type, sys.last_value, sys.last_traceback = etype, value, tb  # for %debug
        from attnlab.exercises.rules.answer_cells import wrapped

        lines = wrapped(sentence) if validating() else [sentence]  # validate cuts long lines
        shell._showtraceback(etype, value, lines)  # what ipykernel sends as the error


def _under_grading() -> bool:
    """Under autograding or in the grading kernel; ``nbgrader validate`` is not grading (a
    learner reads what it says)."""
    if in_grading_kernel():
        return True
    return must_pass() and not validating()


def watch() -> bool:
    """Register the cell watcher and the NameError sentence with IPython, once per shell.

    Returns True if the watcher is registered (now or before), False outside IPython and
    under grading. The NameError sentence is left out when the shell already has a custom
    exception handler (that one is kept).
    """
    shell = _shell()
    if shell is None or not hasattr(shell, "events") or _under_grading():
        return False
    if getattr(shell, "_attnlab_watching", False):
        return True
    shell.events.register("pre_run_cell", lambda info: _before_cell(shell, info))
    shell.events.register("post_run_cell", lambda result: _after_cell(shell, result))
    if not shell.custom_exceptions:
        shell.set_custom_exc((NameError,), _show_name_error)
    shell._attnlab_watching = True
    return True


watch()  # inside IPython (not under grading): plain sentences for check cells
