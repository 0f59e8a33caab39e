"""Worked solutions, read from the lesson sources in the course repository.

The solutions live in one place only: the solution cells of ``source/NN-name/NN-name.ipynb``
(between nbgrader's ``### BEGIN SOLUTION`` and ``### END SOLUTION``). A self-study learner
working from a clone of the repository has that folder beside the package, so
:meth:`~attnlab.exercises.kit.exercise.Exercise.solution` can show the worked answer, under the same
function name the check asks for. The package built for a graded course (``pip wheel .``)
holds no ``source/`` folder and so no solution.

An exercise's answer cell is the solution cell of its lesson's notebook that defines the
exercise's answer function (:attr:`~attnlab.exercises.kit.exercise.Exercise.answer`, from the
course's map :data:`~attnlab.exercises.kit.exercise_map.EXERCISES`).
"""

from __future__ import annotations

import ast
import functools
import json
import os
from pathlib import Path

from attnlab.exercises.kit.exercise_map import EXERCISES

BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"


def source_folder() -> Path | None:
    """The repository's ``source/`` folder, or None when attnlab was installed without it.

    ``ATTNLAB_SOURCE`` may point at another copy (an instructor's course folder).
    """
    named = os.environ.get("ATTNLAB_SOURCE")
    folder = Path(named) if named else Path(__file__).resolve().parents[2] / "source"
    return folder if folder.is_dir() else None


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
def worked_solutions(folder: str) -> dict[str, str]:
    """Exercise name -> its worked solution (the solution cell without nbgrader's markers), for
    every lesson in the source ``folder``."""
    return {
        name: without_markers(code)
        for path in sorted(Path(folder).glob("*/*.ipynb"))
        for name, code in answer_cells_in(path).items()
    }


def worked_solution(exercise: str | None) -> str | None:
    """The worked solution of ``exercise`` (``"lesson1.dot"``), or None if there is none here."""
    folder = source_folder()
    if folder is None or exercise is None:
        return None
    return worked_solutions(str(folder)).get(exercise)


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


def answer_cells_in(path: Path) -> dict[str, str]:
    """Exercise name -> the code of its answer cell in the lesson notebook at ``path``
    (``NN-name.ipynb``: lesson ``NN``'s exercises)."""
    if not path.name[:2].isdigit():
        return {}
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return answer_cells(cells, int(path.name[:2]))


def answer_cells(cells: list, lesson: int) -> dict[str, str]:
    """Exercise name -> the code of its answer cell among a notebook's ``cells`` (nbformat
    cell dicts) of lesson number ``lesson``."""
    defining = {}
    for cell in cells:
        if cell["cell_type"] == "code" and cell.get("metadata", {}).get("nbgrader", {}).get(
            "solution"
        ):
            code = "".join(cell.get("source", ""))
            for name in defined_names(code):
                defining[name] = code
    return {
        exercise.name: defining[exercise.answer]
        for exercise in EXERCISES.of_lesson(lesson)
        if exercise.answer in defining
    }


#: The answer cells as the lessons ship them (exercise name -> stub), beside this module:
#: written from ``source/`` by ``tools/build_notebooks.py`` with nbgrader's own ClearSolutions,
#: the same text the learner notebooks in ``notebooks/`` start with, and kept up to date by a
#: test. It is package data, so a graded installation has it too.
STUBS_FILE = Path(__file__).with_name("stubs.json")


@functools.lru_cache(maxsize=1)
def shipped_stubs() -> dict[str, str]:
    """Exercise name -> its answer cell as the lesson shipped it (:data:`STUBS_FILE`); empty
    if the file is missing or unreadable."""
    try:
        table = json.loads(STUBS_FILE.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in table.items() if isinstance(v, str)} if isinstance(table, dict) else {}


def original_stub(exercise: str | None) -> str | None:
    """The answer cell of ``exercise`` (``"lesson1.dot"``) as the lesson shipped it, whatever the
    learner has since typed and saved in their notebook: from the package's :data:`STUBS_FILE`,
    else made from the source notebook the way nbgrader makes it; None if neither is here.

    The learner's own ``notebooks/`` are never read: they hold the learner's answers.
    """
    if exercise is None:
        return None
    if (stub := shipped_stubs().get(exercise)) is not None:
        return stub
    lesson = exercise.partition(".")[0].removeprefix("lesson")
    pattern = f"{int(lesson):02d}-*.ipynb" if lesson.isdigit() else "*.ipynb"
    if (folder := source_folder()) is not None:
        for path in sorted(folder.glob(f"*/{pattern}")):
            if (code := answer_cells_in(path).get(exercise)) is not None:
                return stubbed(code)
    return None
