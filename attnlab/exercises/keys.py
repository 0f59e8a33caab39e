"""Answer keys that must not ship with the package: found beside it, or where an instructor says.

The quizzes (lesson 7's, and exercise 4.2, naming the four heatmaps) are marked against keys
(:class:`attnlab.exercises.quiz.Key`) kept in the repository's ``answer_keys/`` folder,
outside the installed package, so that a graded course run (which installs attnlab from a
wheel) gives students no way to read them. A self-study learner working from a clone has
the folder beside the package and gets question-by-question feedback; an instructor who wants
students to have that feedback in a graded run points ``ATTNLAB_ANSWER_KEYS`` at a copy of
the folder.
"""

from __future__ import annotations

import functools
import importlib.util
import os
from pathlib import Path


def key_folder() -> Path | None:
    """``$ATTNLAB_ANSWER_KEYS``, else the repository's ``answer_keys/``; None if neither exists."""
    named = os.environ.get("ATTNLAB_ANSWER_KEYS")
    folder = Path(named) if named else Path(__file__).resolve().parents[2] / "answer_keys"
    return folder if folder.is_dir() else None


def load_key(lesson: str):
    """The key module ``answer_keys/<lesson>.py``, imported, or None when it is not here.

    A key is read once per process and then kept: the grading process reads every key before
    any student's code runs (:func:`attnlab.grading.grade.grade_notebook`), so a file changed
    on disk afterwards is never run.

    Examples
    --------
    >>> load_key("no-such-lesson") is None
    True
    """
    folder = key_folder()
    path = folder / f"{lesson}.py" if folder else None
    if path is None or not path.is_file():
        return None
    return _import_key(str(path.resolve()), lesson)


@functools.cache
def _import_key(path: str, lesson: str):
    spec = importlib.util.spec_from_file_location(f"attnlab_answer_keys_{lesson}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
