"""Will grading have what the answer uses? Names from cells that grading does not run.

Grading runs, in a fresh kernel, the lesson's own cells (from the instructor's source) and the
student's answer cells, nothing else (:mod:`attnlab.grading.grade`). A right answer that
calls a helper defined in a scratch cell, reads a constant set there, or calls an earlier
answer whose cell grading refuses, passes the learner's check and fails in grading with a
``NameError``. This module finds such names in the learner's kernel, from IPython's history of
the cells run as typed:

* a name the answer's code (and the notebook functions it calls) reads from the notebook is
  looked up in the history: the last cell that binds it at the start of a line (``def``,
  ``class``, ``name =``, an import);
* a name the lesson's own cells bind is there in grading whatever the learner did to those
  cells (:func:`lesson_names`, the names each lesson's cells bind, written from ``source/``
  by ``tools/build_notebooks.py`` into ``lesson_names.json``); a cell that defines one of
  the lesson's answers is an answer cell, and it must pass grading's lint
  (:func:`attnlab.exercises.rules.lint.problems`); any other cell is one grading does not run.

Outside IPython, or for a name the history does not bind, nothing is said. In graded use
(:func:`~attnlab.exercises.rules.grading_mode.graded_use`: a lesson fetched with nbgrader, or
grading itself) the check says the answer scores 0 as it stands; in self-study (a clone's
notebooks, a plain IPython shell) it says the answer relies on a cell that is not part of the
exercise, and what grading would do with it if it were handed in.
"""

from __future__ import annotations

import functools
import json
import re
import sys
import types
from pathlib import Path

from attnlab.exercises.kit.calling import is_stub
from attnlab.exercises.kit.exercise_map import EXERCISES
from attnlab.exercises.kit.feedback import Feedback
from attnlab.exercises.kit.outcomes import Outcome
from attnlab.exercises.rules.grading_mode import graded_use, must_pass
from attnlab.exercises.rules.lint import notebook_refused, problems

#: The names each lesson's own cells bind (:func:`lesson_names`), beside the lesson modules.
LESSON_NAMES_FILE = Path(__file__).parents[1] / "lesson_names.json"


def top_level_names(code: str) -> set[str]:
    """The names ``code`` binds at its top level: what it assigns (tuples, loop and ``with``
    targets too), imports, and the functions and classes it defines; not what is bound inside
    a function, a class, a lambda or a comprehension. Magics are read as IPython reads them.

    Examples
    --------
    >>> sorted(top_level_names("import numpy as np\\nq, k = 1, 2\\nfor i in []: pass\\n"
    ...                        "def f(x):\\n    y = x\\n[z for z in ()]"))
    ['f', 'i', 'k', 'np', 'q']
    """
    import ast

    try:
        from IPython.core.inputtransformer2 import TransformerManager

        code = TransformerManager().transform_cell(code)
    except Exception:  # noqa: BLE001 - IPython missing or the cell odd: read it as it is
        pass
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return set()
    found: set[str] = set()
    stack = list(tree.body)
    scopes = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            found.add(node.name)  # the name is bound here; what is inside is not
            continue
        if isinstance(node, scopes):
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            found.add(node.id)
        elif isinstance(node, ast.alias):
            found.add(node.asname or node.name.partition(".")[0])
        stack.extend(ast.iter_child_nodes(node))
    return found - {"*"}


@functools.cache
def lesson_names() -> dict[int, frozenset[str]]:
    """Lesson number -> the names its own code cells (neither answer nor grade cells) bind."""
    try:
        data = json.loads(LESSON_NAMES_FILE.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {int(lesson): frozenset(names) for lesson, names in data.items()}


def running_shell():
    """The IPython shell this code runs in, or None (IPython not loaded, or no shell)."""
    if "IPython" not in sys.modules:
        return None
    from IPython import get_ipython

    return get_ipython()


def cells_run(shell) -> list:
    """The cells ``shell`` has run, as typed (its raw input history; else ``_ih``)."""
    history = getattr(getattr(shell, "history_manager", None), "input_hist_raw", None)
    return list(history) if history else list(shell.user_ns.get("_ih", []))


def _binding(name: str, imports: bool) -> re.Pattern:
    n = re.escape(name)
    imported = rf"|^(?:from\s+\S+\s+)?import\s.*\b{n}\b" if imports else ""
    return re.compile(
        rf"^(?:(?:async\s+)?def|class)\s+{n}\b|^{n}\s*(?::[^=\n]*)?=(?!=){imported}", re.M
    )


def binding_cells(cells, name: str, imports: bool = True) -> list[str]:
    """The ``cells`` (as typed) that bind ``name`` at the start of a line (``def``, ``class``,
    ``name =``, and with ``imports`` an import), in order."""
    pattern = _binding(name, imports)
    return [c for c in cells if isinstance(c, str) and pattern.search(c)]


def _names_read(code: types.CodeType) -> set[str]:
    """The global names ``code`` and the code nested in it (inner functions, lambdas) read."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _names_read(const)
    return names


def unseen_names(answer, lesson: int, answers, shell=None) -> list[str]:
    """Why names ``answer`` uses will not exist where grading runs it: one sentence per name.

    ``answers`` are the names of the lesson's answer functions; ``shell`` the learner's
    IPython (default: the running one). Functions the answer calls that the notebook defines
    are followed, and what they use is looked at too.

    Examples
    --------
    >>> shell = type("Shell", (), {})()
    >>> shell.user_ns = {"_ih": ["", "def biggest(xs):\\n    return max(xs)",
    ...                          "def largest_score(s):\\n    return biggest(s)"]}
    >>> exec(shell.user_ns["_ih"][1], shell.user_ns); exec(shell.user_ns["_ih"][2], shell.user_ns)
    >>> unseen_names(shell.user_ns["largest_score"], 0, {"largest_score"}, shell)[0][:40]
    '`biggest` is defined in a cell that grad'
    """
    shell = running_shell() if shell is None else shell
    if shell is None or not isinstance(getattr(answer, "__code__", None), types.CodeType):
        return []
    cells = cells_run(shell)
    own = lesson_names().get(lesson)
    if not cells or own is None:
        return []
    import builtins

    reasons, seen, todo = [], set(), [answer]
    while todo:
        function = todo.pop()
        namespace = getattr(function, "__globals__", {})
        for name in sorted(_names_read(function.__code__) - seen):
            seen.add(name)
            if name not in namespace or namespace[name] is answer:
                continue  # an attribute, a builtin, or the answer itself (recursion)
            if hasattr(builtins, name) and namespace[name] is getattr(builtins, name):
                continue
            if name in own:
                continue  # the lesson's own cells bind it, in grading too
            kinds = [_kind(cell, answers, shell) for cell in binding_cells(cells, name)]
            if not kinds:
                continue  # bound where the history does not show
            if "answer" in kinds:
                if isinstance(namespace[name], types.FunctionType):
                    todo.append(namespace[name])  # what it uses must be there too
                continue
            refused = [kind for kind in kinds if isinstance(kind, tuple)]
            if refused:
                reasons.append(
                    f"`{name}` comes from an answer cell that grading refuses "
                    f"({refused[-1][1]}), so it will not exist there"
                )
                continue
            reasons.append(
                f"`{name}` is defined in a cell that grading does not run (it runs the "
                "lesson's own cells and your answer cells, nothing else), so there your "
                f"function fails with NameError: name '{name}' is not defined. Move `{name}` "
                "into your answer cell"
            )
    return reasons


def _kind(cell: str, answers, shell):
    """``"answer"``, ``("refused", why)`` for an answer cell grading refuses, or ``"other"``:
    what grading does with ``cell`` (the lesson's own cells bind nothing beyond
    :func:`lesson_names`)."""
    if not any(re.search(rf"^(?:async\s+)?def\s+{re.escape(a)}\b", cell, re.M) for a in answers):
        return "other"
    refused = problems(cell, refused=notebook_refused(shell.user_ns))
    return ("refused", refused[0]) if refused else "answer"


def unseen_reviewed(exercise, answer, feedback):
    """``feedback``, or why grading will not have what ``answer`` uses (:func:`unseen_names`),
    as :func:`attnlab.exercises.rules.answer_cells.reviewed` says where the answer itself is; under
    :func:`~attnlab.exercises.rules.grading_mode.must_pass` that raises ``AssertionError``.
    Never fails on its own account."""
    if exercise.id is None or is_stub(answer) or feedback.outcome is Outcome.NOT_GRADED:
        return feedback
    try:
        lesson = exercise.id.split(".")[0]
        # the lesson's own exercises: its module, imported, has defined them all
        answers = {e.answer for key, e in EXERCISES.loaded().items() if key.split(".")[0] == lesson}
        reasons = unseen_names(answer, int(lesson), answers)
    except Exception:  # noqa: BLE001 - looking must never break a check
        return feedback
    if not reasons:
        return feedback
    if feedback.outcome is Outcome.CORRECT:
        verdict = "Your function itself passes the check."
    else:
        verdict = f"The check also says: {feedback.outcome.value}. {feedback.message}"
    if graded_use():
        said = f"This answer scores 0 as it stands: {'; '.join(reasons)}.\n{verdict}"
    else:  # self-study: nothing is handed in, so say what the answer relies on
        said = (
            "Your answer relies on a cell that is not part of the exercise. It works here; "
            "if you hand it in for grading, grading would not see that cell and the answer "
            f"would score 0: {'; '.join(reasons)}.\n{verdict}"
        )
    problem = Feedback(exercise.title, Outcome.NOT_GRADED, said.strip())
    if must_pass():
        raise AssertionError(str(problem))
    return problem
