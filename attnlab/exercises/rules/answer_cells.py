"""Is the answer where grading looks for it? The notebook mistakes that hide a right answer.

Grading reads a student's answer from the exercise's **answer cell**: the solution cell that
carries the exercise's nbgrader ``grade_id`` (its hidden tag). A right function elsewhere is
invisible to it. Three mistakes pass the learner's check and ``nbgrader validate`` unless they
are looked for, and this module looks for them in the notebook file itself:

* **untagged** — the function the check ran is defined in a cell without the tag (the learner
  deleted the answer cell and typed the function again in a new cell, or wrote it below the
  stub);
* **duplicate** — two cells carry the answer cell's tag (the answer cell was copied and
  pasted), which nbgrader cannot grade;
* **missing** — no cell holds the answer any more (deleted; the kernel may still remember the
  function from an earlier run).

Where the notebook is:

* in a learner's kernel, Jupyter Server sets ``JPY_SESSION_NAME`` to the notebook's path
  (``SessionManager.get_kernel_env``) and ipykernel copies it into the notebook as
  ``__session__``;
* under ``nbgrader validate`` (``NBGRADER_VALIDATING=1``) the kernel runs in the notebook's
  folder; the notebook is the one there whose code cells are the cells this kernel has run.

When no notebook is found (plain IPython, another front end, a renamed notebook) nothing is
said. Under autograding (``NBGRADER_EXECUTION`` without ``NBGRADER_VALIDATING``) and in the
grading kernel nothing is looked for: grades are decided from the source notebook
(:func:`grading_note` explains a 0 there).
"""

from __future__ import annotations

import ast
import json
import os
import re
import textwrap
from pathlib import Path

from attnlab.exercises.kit.calling import is_stub
from attnlab.exercises.kit.exercise_map import EXERCISES
from attnlab.exercises.kit.feedback import Feedback
from attnlab.exercises.kit.outcomes import Outcome
from attnlab.exercises.rules.answer_lint import CELL_FILE
from attnlab.exercises.rules.grading_mode import autograded, must_pass, validating
from attnlab.exercises.rules.lint import MAX_CELL
from attnlab.exercises.rules.unseen_names import running_shell

#: How wide the lines of an error are (``nbgrader validate`` cuts lines longer than 87).
WIDTH = 76

UNDO = (
    "Edit → Undo Delete Cells (or press Z with no cell being edited) until the answer cell is back"
)
PASTE_BACK = (
    "If Undo no longer reaches it, open a fresh copy of this notebook (fetch the assignment "
    "again into another folder, or ask your instructor), select its answer cell, Edit → Copy "
    "Cells, and here Edit → Paste Cells Above the check cell: a pasted cell keeps its tag."
)


class AnswerCellError(AssertionError):
    """The check's failure when the notebook hides the answer from grading (under
    ``nbgrader validate`` or ``ATTNLAB_REQUIRE_CORRECT=1``): shown as its message alone, in
    lines ``nbgrader validate`` prints whole."""

    def _render_traceback_(self) -> list[str]:
        return wrapped(str(self))


def wrapped(text: str) -> list[str]:
    """``text`` in lines of at most :data:`WIDTH` characters (paragraphs kept)."""
    lines = []
    for paragraph in text.split("\n"):
        lines += textwrap.wrap(paragraph, WIDTH, break_on_hyphens=False) or [""]
    return lines


# ------------------------------------------------------------------------- reading a notebook
def _meta(cell) -> dict:
    return (cell.get("metadata") or {}).get("nbgrader") or {}


def _code(cell) -> str:
    source = cell.get("source", "")
    return source if isinstance(source, str) else "".join(source)


def _is_code(cell) -> bool:
    return cell.get("cell_type") == "code"


_DEF = re.compile(r"^(?:async[ \t]+)?def[ \t]+([A-Za-z_]\w*)[ \t]*\(", re.MULTILINE)


def defines(code: str, name: str) -> bool:
    """Whether ``code`` defines ``name`` at its top level (``def``, assignment); a cell that
    does not parse counts when it has a ``def name(`` line.

    Examples
    --------
    >>> defines("def f(x):\\n    return x", "f"), defines("f(2)", "f"), defines("def f(x:", "f")
    (True, False, True)

    A cell longer than grading reads (:data:`~attnlab.exercises.rules.lint.MAX_CELL`) is never
    parsed and defines nothing: grading reads the other cells in the one process that grades the
    class, and ``ast.parse`` of a 1 MB cell took 8 s and 600 MB there.
    """
    if len(code) > MAX_CELL:
        return False
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return name in _DEF.findall(code)
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            return True
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                return True
    return False


def _heading(cells, before: int, fallback: str) -> str:
    """The nearest Markdown heading above cell ``before`` naming an exercise, else
    ``fallback``."""
    for cell in reversed(cells[:before]):
        if cell.get("cell_type") != "markdown":
            continue
        for line in _code(cell).splitlines():
            if line.startswith("#") and "exercise" in line.lower():
                return line.lstrip("#").strip()
    return fallback


def find_problem(
    nb: dict,
    exercise: str | None,
    function: str | None,
    title: str,
    answer_source: str | None = None,
    live: dict[str, dict] | None = None,
) -> tuple[str, str] | None:
    """``(kind, message)`` when ``nb`` hides the answer ``function`` of ``exercise`` from
    grading, else None. ``kind`` is ``"untagged"``, ``"duplicate"`` or ``"missing"``.

    Parameters
    ----------
    nb : dict
        The notebook (nbformat JSON).
    exercise : str or None
        ``"lesson3.softmax_row"``: the check cell ``lesson3.softmax_row.check(...)``; None
        matches any exercise checking ``function``.
    function : str or None
        The answer's name, as the check cell passes it; None: the one the check cell of
        ``exercise`` passes.
    title : str
        The exercise's title, used when the notebook has no heading for it.
    answer_source : str, optional
        The code of the cell the checked function came from (known in a learner's kernel):
        finds that cell even when it is below the check.
    live : dict, optional
        Name -> the cell that last defined it as the front end described it when it ran
        (:func:`attnlab.exercises.cells.defining_cell`): its tag counts even before the
        notebook is saved.

    A notebook without the exercise's check cell is not this exercise's notebook: None.
    """
    cells = nb.get("cells") or []
    checks = [
        (i, checked.answer)
        for i, cell in enumerate(cells)
        if _is_code(cell)
        and (checked := EXERCISES.by_check_cell(_code(cell))) is not None
        and (function is None or checked.answer == function)
        and (exercise is None or checked.name == exercise)
    ]
    if not checks or (exercise is None and function is None):
        return None
    check, function = checks[0]
    heading = _heading(cells, check, title)
    solutions = [i for i, c in enumerate(cells) if _is_code(c) and _meta(c).get("solution")]
    tags = {
        _meta(cells[i]).get("grade_id") for i in solutions if defines(_code(cells[i]), function)
    }
    if not tags:  # no tagged cell defines it: the solution cell of this exercise's stretch
        start = max(
            [i for i in range(check) if _is_code(cells[i]) and _meta(cells[i]).get("grade")],
            default=-1,
        )
        tags = {_meta(cells[i]).get("grade_id") for i in solutions if start < i < check}
    tags.discard(None)
    tagged = [i for i in solutions if _meta(cells[i]).get("grade_id") in tags]

    seen: dict[str, list[int]] = {}
    for i in tagged:
        seen.setdefault(_meta(cells[i])["grade_id"], []).append(i)
    doubled = next((found for found in seen.values() if len(found) > 1), None)
    if doubled:
        same = len({_code(cells[i]).strip() for i in doubled}) == 1
        which = (
            "They hold the same code, so delete either one."
            if same
            else "Keep the one holding your answer and delete the other."
        )
        return "duplicate", (
            f"{len(doubled)} cells carry the hidden tag of the answer cell of "
            f'"{heading}", as happens when the answer cell is copied and pasted. nbgrader '
            "cannot grade a notebook in which two cells share a tag, so as it stands this "
            f"exercise scores 0.\nTo fix it: delete the copy. {which} Click the copy, then "
            "Edit → Delete Cells; run the answer cell that is left, then this check again."
        )

    ran_in = (live or {}).get(function)
    if ran_in is not None:  # the front end said which cell defined it, tag and all
        if ran_in.get("grade_id") in tags:
            return None
        return _untagged(function, heading, bool(tagged))
    defining = None
    if answer_source is not None and answer_source.strip():
        matching = [
            i
            for i, c in enumerate(cells)
            if _is_code(c) and _code(c).strip() == answer_source.strip()
        ]
        if matching:  # the cell that defined the checked function; the tagged one if it is
            defining = next((i for i in matching if i in tagged), matching[-1])
    if defining is None:
        above = [
            i for i in range(check) if _is_code(cells[i]) and defines(_code(cells[i]), function)
        ]
        defining = above[-1] if above else None
    if defining is not None and defining in tagged:
        return None

    cell_is = _cell_is(heading)
    if defining is not None:
        return _untagged(function, heading, bool(tagged))
    if tagged:
        return "missing", (
            f'The answer cell of "{heading}" no longer defines `{function}`, and no other '
            "cell does either (your kernel may still remember it from an earlier run). "
            "Grading runs only the answer cell, so as it stands this exercise scores 0.\nTo "
            f"fix it: write `{function}` back into {cell_is}, run it, then run this check "
            "again."
        )
    return "missing", (
        f'The answer cell of "{heading}" is gone from the notebook and no cell defines '
        f"`{function}` (your kernel may still remember it from an earlier run). Grading "
        "reads your answer only from that cell, so as it stands this exercise scores 0.\nTo "
        f'fix it: {UNDO}, right under "{heading}"; write your answer in it, run it, then '
        f"run this check again. {PASTE_BACK}"
    )


def _cell_is(heading: str) -> str:
    return f'the cell right under "{heading}" that started with `# YOUR CODE HERE`'


def _untagged(function: str, heading: str, tagged: bool) -> tuple[str, str]:
    """The message for an answer defined in a cell without the tag (``tagged``: the answer
    cell is still in the notebook)."""
    contract = (
        f"Grading reads your answer only from the exercise's answer cell ({_cell_is(heading)}), "
        "which carries the exercise's hidden nbgrader tag; a cell you add does not have it"
    )
    if tagged:
        return "untagged", (
            f"Your `{function}` comes from a cell that is not the exercise's answer cell. "
            f"{contract}, so as it stands this answer scores 0.\nTo fix it: copy your code "
            "into the answer cell (replacing what is there) and run it, then delete the other "
            "cell (click it, Edit → Delete Cells) and run this check again."
        )
    return "untagged", (
        f"Your `{function}` is in a cell that is not the exercise's answer cell, and the "
        "answer cell itself is gone from the notebook (deleted, or its tag was lost). "
        f"{contract}, so as it stands this answer scores 0.\nTo fix it: {UNDO} under "
        f'"{heading}", copy your code into it and run it, then delete the new cell '
        f"(click it, Edit → Delete Cells) and run this check again. {PASTE_BACK}"
    )


# -------------------------------------------------------------------- finding the notebook
def _shell():  # a seam the tests replace
    return running_shell()


def _read(path: Path) -> dict | None:
    try:
        nb = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return nb if isinstance(nb, dict) and isinstance(nb.get("cells"), list) else None


def _ran_here(nb: dict, history: list[str]) -> bool:
    """Whether the kernel's inputs so far are ``nb``'s non-empty code cells, in order."""
    code = [_code(c).strip() for c in nb["cells"] if _is_code(c) and _code(c).strip()]
    return bool(history) and code[: len(history)] == history


def notebook() -> dict | None:
    """The notebook this kernel runs (see the module docstring), or None when unknown."""
    shell = _shell()
    if validating():
        raw = getattr(getattr(shell, "history_manager", None), "input_hist_raw", None) or []
        history = [cell.strip() for cell in raw[1:] if cell.strip()]
        found = [nb for p in sorted(Path.cwd().glob("*.ipynb")) if (nb := _read(p)) is not None]
        found = [nb for nb in found if _ran_here(nb, history)]
        return found[0] if len(found) == 1 else None
    named = os.environ.get("JPY_SESSION_NAME")
    if not named and shell is not None:
        named = shell.user_ns.get("__session__")
    if not isinstance(named, str) or not named.endswith(".ipynb"):
        return None
    path = Path(named)
    if not path.is_file():  # a path relative to the server's root, not to this folder
        path = Path.cwd() / path.name
    return _read(path) if path.is_file() else None


def _looking() -> bool:
    """Look at the notebook here? Not under autograding, not in the grading kernel."""
    return not autograded()


def _cell_source(answer) -> str | None:

    filename = getattr(getattr(answer, "__code__", None), "co_filename", "")
    if not isinstance(filename, str) or not CELL_FILE.search(filename):
        return None
    import linecache

    return "".join(linecache.getlines(filename)) or None


def _answer_name(answer, exercise) -> str | None:
    """The answer's name when the exercise cannot say which check cell is its own."""
    if exercise.name is not None:
        return None  # the check cell of the exercise names it
    name = getattr(answer, "__name__", None)
    return name if isinstance(name, str) and name.isidentifier() else None


def reviewed(exercise, answer, feedback, defined_in=None):
    """``feedback``, or a :class:`~attnlab.exercises.kit.feedback.Feedback` saying why grading
    will not see ``answer`` (see :func:`find_problem`; ``defined_in`` is the cell watcher's
    record of the cell that last defined each function, :data:`attnlab.exercises.cells.DEFINED_IN`,
    passed in by the check); under
    :func:`~attnlab.exercises.rules.grading_mode.must_pass` that raises
    :class:`AnswerCellError`. Never fails on its own account."""

    if is_stub(answer) or not _looking():
        return feedback
    try:
        function = _answer_name(answer, exercise)
        nb = notebook() if function or exercise.name else None
        found = (
            find_problem(
                nb, exercise.name, function, exercise.title, _cell_source(answer), defined_in
            )
            if nb is not None
            else None
        )
    except Exception:  # noqa: BLE001 - looking must never break a check
        return feedback
    if found is None:
        return feedback
    if feedback.outcome is Outcome.CORRECT:
        verdict = "Your function itself passes the check."
    else:
        verdict = f"The check also says: {feedback.outcome.value}. {feedback.message}".strip()
    problem = Feedback(exercise.title, Outcome.NOT_GRADED, f"{found[1]}\n{verdict}")
    if must_pass():
        raise AnswerCellError(str(problem))
    return problem


def missing_sentence(function: str, check_cell: str) -> str | None:
    """For a NameError on ``function`` in a check cell: why, when the notebook has lost the
    exercise's answer cell; else None (the usual sentence stands)."""
    if not _looking():
        return None
    try:
        checked = EXERCISES.by_check_cell(check_cell)
        nb = notebook() if checked is not None and checked.answer == function else None
        found = find_problem(nb, checked.name, function, checked.name) if nb is not None else None
    except Exception:  # noqa: BLE001 - never worse than the usual sentence
        return None
    return found[1] if found is not None else None


# ----------------------------------------------------------------------------- grading
def grading_note(student_nb: dict, grade_id: str | None, function: str) -> str:
    """Why a 0 may be the notebook's layout, for the feedback: ``function`` is defined in a
    student cell without the answer cell's tag (``grade_id``), or ''."""
    cells = student_nb.get("cells") or []
    tagged = [
        c
        for c in cells
        if _is_code(c) and _meta(c).get("solution") and _meta(c).get("grade_id") == grade_id
    ]
    others = [c for c in cells if _is_code(c) and c not in tagged and defines(_code(c), function)]
    if not others or any(_code(c).strip() == _code(o).strip() for c in tagged for o in others):
        return ""
    state = (
        "The answer cell itself was missing from your notebook."
        if not tagged
        else "The answer cell itself did not hold that code."
    )
    first = _code(others[-1]).strip().splitlines()[0][:60]
    return (
        f"Your notebook defines `{function}` in a cell without the exercise's tag (it starts "
        f"`{first}`), and grading reads only the exercise's answer cell (the cell under the "
        f"exercise that started with `# YOUR CODE HERE`), so that code was not graded. "
        f"{state} Next time write the answer in the answer cell; the check in your notebook "
        "says so when it finds this."
    )
