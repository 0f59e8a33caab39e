"""Worked solutions, read from the lesson sources in the course repository.

The solutions live in one place only: the solution cells of ``source/NN-name/NN-name.ipynb``
(between nbgrader's ``### BEGIN SOLUTION`` and ``### END SOLUTION``). A self-study learner
working from a clone of the repository has that folder beside the package, so
:meth:`~attnlab.exercises.kit.exercise.Exercise.solution` can show the worked answer, under the same
function name the check asks for. The package built for a graded course (``pip wheel .``)
holds no ``source/`` folder and so no solution.

An exercise is found by the grade cell that checks it: ``lesson1.dot.check(dot)`` names the
exercise ``lesson1.dot`` and its answer function ``dot``; the solution cell is the one that
defines ``dot``.
"""

from __future__ import annotations

import ast
import functools
import json
import os
from pathlib import Path

BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"


def source_folder() -> Path | None:
    """The repository's ``source/`` folder, or None when attnlab was installed without it.

    ``ATTNLAB_SOURCE`` may point at another copy (an instructor's course folder).
    """
    named = os.environ.get("ATTNLAB_SOURCE")
    folder = Path(named) if named else Path(__file__).resolve().parents[2] / "source"
    return folder if folder.is_dir() else None


def checked_call(code: str) -> tuple[str, str] | None:
    """``("lesson1.dot", "dot")`` for a grade cell ``lesson1.dot.check(dot)``, else None.

    >>> checked_call("lesson1.dot.check(dot)")
    ('lesson1.dot', 'dot')
    >>> checked_call("print(1)") is None
    True
    """
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "check"
            and len(node.args) == 1
            and isinstance(node.args[0], ast.Name)
        ):
            target = node.func.value
            if (
                isinstance(target, ast.Attribute)
                and isinstance(target.value, ast.Name)
                and target.value.id.startswith("lesson")
            ):
                return f"{target.value.id}.{target.attr}", node.args[0].id
    return None


def defined_names(code: str) -> set[str]:
    """The top-level functions and variables a cell defines.

    >>> sorted(defined_names("def f(x):\\n    return x\\ny = 2"))
    ['f', 'y']
    """
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return set()
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return names


def without_markers(code: str) -> str:
    """A solution cell's code with nbgrader's BEGIN/END SOLUTION lines taken out."""
    kept = [line for line in code.splitlines() if line.strip() not in (BEGIN, END)]
    return "\n".join(kept).strip("\n")


@functools.lru_cache(maxsize=4)
def _index(folder: str) -> dict[str, str]:
    """Exercise name -> the source of its solution cell, for every lesson in ``folder``."""
    found = {}
    for path in sorted(Path(folder).glob("*/*.ipynb")):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        solutions = {}
        for cell in cells:
            code = "".join(cell.get("source", ""))
            meta = cell.get("metadata", {}).get("nbgrader", {})
            if cell["cell_type"] != "code":
                continue
            if meta.get("solution"):
                for name in defined_names(code):
                    solutions[name] = code
            elif meta.get("grade") and (called := checked_call(code)):
                exercise, answer = called
                if answer in solutions:
                    found[exercise] = without_markers(solutions[answer])
    return found


def worked_solution(exercise: str | None) -> str | None:
    """The worked solution of ``exercise`` (``"lesson1.dot"``), or None if there is none here."""
    folder = source_folder()
    if folder is None or exercise is None:
        return None
    return _index(str(folder)).get(exercise)


#: What nbgrader puts in place of a solution (ClearSolutions' ``code_stub`` for Python).
STUB = ("# YOUR CODE HERE", "raise NotImplementedError()")


def stubbed(code: str) -> str:
    """A solution cell as the learner gets it: each solution region replaced by :data:`STUB`
    at the region's indentation, as nbgrader's ClearSolutions does.

    >>> print(stubbed("def f(x):\\n    ### BEGIN SOLUTION\\n    return x\\n    ### END SOLUTION"))
    def f(x):
        # YOUR CODE HERE
        raise NotImplementedError()
    """
    lines, inside = [], False
    for line in code.splitlines():
        if line.strip() == BEGIN:
            indent = line[: len(line) - len(line.lstrip())]
            lines += [indent + stub for stub in STUB]
            inside = True
        elif line.strip() == END:
            inside = False
        elif not inside:
            lines.append(line)
    return "\n".join(lines).strip("\n")


def _answer_cells(path: Path) -> dict[str, str]:
    """Exercise name -> the code of its answer cell in the notebook at ``path``."""
    found, answers = {}, {}
    for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
        code = "".join(cell.get("source", ""))
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell["cell_type"] != "code":
            continue
        if meta.get("solution"):
            for name in defined_names(code):
                answers[name] = code
        elif meta.get("grade") and (called := checked_call(code)):
            exercise, answer = called
            if answer in answers:
                found[exercise] = answers[answer]
    return found


def learner_folder() -> Path | None:
    """The repository's ``notebooks/`` folder (the learner notebooks), or None."""
    folder = Path(__file__).resolve().parents[2] / "notebooks"
    return folder if folder.is_dir() else None


def original_stub(exercise: str | None) -> str | None:
    """The answer cell of ``exercise`` (``"lesson1.dot"``) as the learner notebook gives it:
    from ``notebooks/``, else made from the source notebook; None if neither is here."""
    if exercise is None:
        return None
    lesson = exercise.partition(".")[0].removeprefix("lesson")
    pattern = f"{int(lesson):02d}-*.ipynb" if lesson.isdigit() else "*.ipynb"
    if (folder := learner_folder()) is not None:
        for path in sorted(folder.glob(pattern)):
            if (code := _answer_cells(path).get(exercise)) is not None:
                return code.strip("\n")
    if (folder := source_folder()) is not None:
        for path in sorted(folder.glob(f"*/{pattern}")):
            if (code := _answer_cells(path).get(exercise)) is not None:
                return stubbed(code)
    return None
