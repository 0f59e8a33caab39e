"""Grade one submitted notebook against the lesson's source, outside the student's kernel.

:func:`grade_notebook` is the whole procedure (see :mod:`attnlab.grading`); the nbgrader
preprocessor in :mod:`attnlab.grading.nbgrader_plugin` calls it and writes the results into
the grade cells.
"""

from __future__ import annotations

import ast
import os
from dataclasses import dataclass

from attnlab.exercises.keys import load_key
from attnlab.exercises.kit.exercise_map import EXERCISES
from attnlab.exercises.kit.feedback import Feedback
from attnlab.exercises.kit.outcomes import Outcome
from attnlab.exercises.rules.answer_cells import grading_note
from attnlab.exercises.rules.answer_lint import refused_message
from attnlab.exercises.rules.grading_mode import grading_seed
from attnlab.exercises.rules.left_out import left_out
from attnlab.exercises.rules.lint import (
    MAX_CELL,
    imported_modules,
    imported_names,
    problems,
    too_long,
)
from attnlab.exercises.solutions import defined_names
from attnlab.grading.remote import CleanKernel, RemoteFunction, arm, remember
from attnlab.grading.worker import NO_PROCESSES

#: The most code (characters) all of a notebook's answer cells may hold together.
MAX_ANSWERS = 4 * MAX_CELL


@dataclass(frozen=True)
class Result:
    """The grade of one grade cell.

    Attributes
    ----------
    grade_id : str
        nbgrader's id of the grade cell.
    points, max_points : float
        What the answer earned, out of what the cell is worth.
    feedback : Feedback
        The check's verdict, as the learner would see it.
    """

    grade_id: str
    points: float
    max_points: float
    feedback: Feedback


def _nbgrader(cell) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {}) or {}


def _code(cell) -> str:
    source = cell.get("source", "")
    return source if isinstance(source, str) else "".join(source)


def skipped(cell: dict) -> bool:
    """Lesson cells the grading kernel need not run: help panels, explorers, and the cells the
    source marks to be left out (:mod:`attnlab.exercises.rules.left_out`)."""
    code = _code(cell)
    return left_out(cell) or ".help_panel()" in code or "Explorer(" in code


def _bound_names(code: str) -> set[str]:
    """The names a lesson cell binds at its top level: definitions, assignments, imports."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return set()
    names = defined_names(code)
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).partition(".")[0] for a in node.names)
    return names


def _checked_exercises(source_nb) -> list:
    """The exercises the grade cells check, in notebook order (found in the course's map by
    each grade cell's ``grade_id``; a grade cell the map does not know is not graded)."""
    return [
        exercise
        for cell in source_nb["cells"]
        if cell["cell_type"] == "code"
        and _nbgrader(cell).get("grade")
        and (exercise := EXERCISES.by_grade_id(_nbgrader(cell).get("grade_id"))) is not None
    ]


def _forbidden_of(source_nb) -> dict[str, tuple]:
    """For each answer function: the names its exercise forbids."""
    return {exercise.answer: exercise.forbidden for exercise in _checked_exercises(source_nb)}


def counts_held_memory(source_nb) -> bool:
    """Whether a check of this notebook measures memory (8.4), so that what every answer cell
    allocates and keeps is counted from the first answer cell on (``tracemalloc`` in the
    grading kernel). Only then: the tracing makes every later cell, the lesson's and the
    student's, many times slower (lesson 9, traced because its checks time their calls:
    graded in 30 s instead of 3.4 s, and its timed calls ran traced against an untraced
    forward pass)."""
    return any(
        getattr(exercise.checker, "measures_memory", False)
        for exercise in _checked_exercises(source_nb)
    )


def answer_cells(source_nb, student_nb) -> dict[str, tuple[str, list[str]]]:
    """grade_id -> (the student's code, why it cannot be graded) for every solution cell.

    A solution cell the student deleted counts as left blank (the stub from the release).
    """
    forbidden = _forbidden_of(source_nb)
    lesson_imports = set().union(
        *[
            imported_names(_code(c))
            for c in source_nb["cells"]
            if c["cell_type"] == "code" and not _nbgrader(c).get("solution")
        ]
    )
    submitted = {
        _nbgrader(c).get("grade_id"): _code(c)
        for c in student_nb["cells"]
        if c["cell_type"] == "code" and _nbgrader(c).get("solution")
    }
    total = 0  # the answer cells taken so far, each within MAX_CELL
    cells = {}
    for cell in source_nb["cells"]:
        meta = _nbgrader(cell)
        if cell["cell_type"] != "code" or not meta.get("solution"):
            continue
        code = submitted.get(meta["grade_id"], "raise NotImplementedError()")
        if len(code) <= MAX_CELL:
            total += len(code)
        if total > MAX_ANSWERS:  # refused before anything is parsed; the cells before stand
            cells[meta["grade_id"]] = (
                code,
                [too_long(total, MAX_ANSWERS, "the answer cells up to this one")],
            )
            continue
        names = defined_names(_code(cell))
        banned = [name for answer in names for name in forbidden.get(answer, ())]
        cells[meta["grade_id"]] = (code, problems(code, forbidden=banned, refused=lesson_imports))
    return cells


def _refused(title: str, reasons: list[str]) -> Feedback:
    text = refused_message(reasons).replace("would not be run", "was not run")
    return Feedback(title, Outcome.WRONG, text, 0.0)


def _with_layout_note(feedback: Feedback, source_nb, student_nb, function: str) -> Feedback:
    """``feedback``, first saying so when the student wrote ``function`` in a cell without the
    answer cell's tag (grading reads only the answer cell: that code was not graded)."""
    grade_id = next(
        (
            _nbgrader(c).get("grade_id")
            for c in source_nb["cells"]
            if c["cell_type"] == "code"
            and _nbgrader(c).get("solution")
            and function in defined_names(_code(c))
        ),
        None,
    )
    note = grading_note(student_nb, grade_id, function)
    if not note:
        return feedback
    return Feedback(
        feedback.exercise, feedback.outcome, f"{note}\n{feedback.message}", feedback.score
    )


def _graded(kernel, meta, refused_names, salt, source_nb, student_nb) -> Result | None:
    """The result of one grade cell, checked where it stands in the notebook: the namespace is
    the one the learner's own run had there, so a later lesson cell that assigns a name the
    answer also uses (lesson 8's ``starts``) does not change what is graded; None for a grade
    cell that checks no exercise."""
    exercise = EXERCISES.by_grade_id(meta.get("grade_id"))
    if exercise is None:
        return None
    max_points = float(meta.get("points", 0))
    if exercise.answer in refused_names:
        feedback = _refused(exercise.title, refused_names[exercise.answer])
    else:
        with grading_seed(salt):
            try:
                feedback = exercise.grade(RemoteFunction(kernel, exercise.answer))
            except (ArithmeticError, RecursionError, MemoryError) as exc:
                # a value the check could not take in (10**4000 where a number is asked
                # for: float() overflows), not a grading failure: this exercise earns
                # nothing, the others keep theirs (a red team's crashed the whole notebook)
                feedback = Feedback(
                    exercise.title,
                    Outcome.WRONG,
                    f"The check could not read your answer: {type(exc).__name__} "
                    f"({str(exc)[:200]}). Return a value of the kind the exercise asks for.",
                    0.0,
                )
    if feedback.outcome is not Outcome.CORRECT:  # an answer left outside its cell?
        feedback = _with_layout_note(feedback, source_nb, student_nb, exercise.answer)
    score = 1.0 if feedback.outcome is Outcome.CORRECT else feedback.score
    if feedback.outcome is Outcome.RECORDED:
        score = 0.0
    return Result(meta["grade_id"], round(score * max_points, 4), max_points, feedback)


def grade_notebook(source_nb, student_nb, cwd, config=None) -> list[Result]:
    """Grade every grade cell of ``source_nb`` on the answers in ``student_nb``.

    Parameters
    ----------
    source_nb : dict
        The instructor's source notebook (nbformat JSON): the lesson's cells and its grade
        cells are taken from here, never from the submission.
    student_nb : dict
        The submitted notebook: only its solution cells are used, matched by grade_id.
    cwd : path
        Folder the grading kernel runs in.
    config : traitlets Config, optional
        nbgrader's configuration, for :class:`CleanKernel` (its time limits, the exchange).

    Returns
    -------
    list of Result
        One per grade cell of ``source_nb``, in notebook order.
    """
    answers = answer_cells(source_nb, student_nb)
    refused_names: dict[str, list[str]] = {}
    results = []
    for key in {f"lesson{exercise.lesson}" for exercise in _checked_exercises(source_nb)}:
        load_key(key)  # read now, before any student code runs anywhere
    forbidden = {name for names in _forbidden_of(source_nb).values() for name in names}
    bare = {name for name in forbidden if "." not in name}  # the notebook's own functions
    salt = int.from_bytes(os.urandom(8), "little")  # this grading's cases, unknown before
    counted = counts_held_memory(source_nb)
    with CleanKernel(cwd, **({} if config is None else {"config": config})) as kernel:
        arm(kernel, forbidden)  # the report key and the forbidden functions, before any answer
        if counted:  # what importing allocates is the library's, not the answer's
            modules = sorted(
                set().union(*[imported_modules(c) for c, why in answers.values() if not why])
            )
            kernel.run(f"__attnlab_worker__.preimport({modules!r})", remember=True)
        for cell in source_nb["cells"]:  # in notebook order, each check where its cell stands
            meta = _nbgrader(cell)
            if cell["cell_type"] != "code":
                continue
            code = _code(cell)
            if meta.get("grade"):
                result = _graded(kernel, meta, refused_names, salt, source_nb, student_nb)
                if result is not None:
                    results.append(result)
            elif meta.get("solution"):
                student_code, reasons = answers[meta["grade_id"]]
                if not reasons:
                    if counted:  # from here, what is allocated and kept counts against memory
                        kernel.run("__attnlab_worker__.student_code_begins()", remember=True)
                    status, error = kernel.run(student_code, remember=True)
                    if error.startswith("TimeoutError"):
                        reasons = ["it was still running after the time limit, so it was stopped"]
                    elif "may not start processes" in error:  # the worker's audit hook said so
                        reasons = [f"it tried to start a process ({error[:300]}): {NO_PROCESSES}"]
                if reasons:
                    for name in defined_names(code):
                        refused_names[name] = reasons
            elif not skipped(cell):
                kernel.run(code, remember=True)
                remember(kernel, bare & _bound_names(code))
    return results
