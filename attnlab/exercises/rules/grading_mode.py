"""How a check behaves under grading: when anything but *correct* must raise, whether
solutions are shown, and the grading salt mixed into every seeded case generator."""

from __future__ import annotations

import contextlib
import contextvars
import os

import numpy as np


def must_pass() -> bool:
    """True under nbgrader's autograder/validator or with ``ATTNLAB_REQUIRE_CORRECT=1``."""
    return bool(os.environ.get("NBGRADER_EXECUTION")) or (
        os.environ.get("ATTNLAB_REQUIRE_CORRECT") == "1"
    )


def graded_use(folder=None) -> bool:
    """Whether this notebook is graded work rather than self-study: under grading
    (:func:`must_pass`), or its kernel started in one lesson's folder as ``nbgrader
    fetch_assignment`` lays it out (``03-softmax/03-softmax.ipynb``; ``folder`` stands for where
    the kernel started, :data:`attnlab.progress.STARTED_IN`).

    A clone of the course keeps its lessons side by side in ``notebooks/``, a plain IPython
    shell has no notebook to hand in: both are self-study. (nbgrader's cell metadata cannot
    tell: the clone's notebooks are made with nbgrader's own preprocessors and carry it too.)
    """
    if must_pass():
        return True
    from pathlib import Path

    from attnlab.progress import LESSON_FOLDER, STARTED_IN

    folder = STARTED_IN if folder is None else Path(folder)
    return bool(
        folder is not None
        and LESSON_FOLDER.fullmatch(folder.name)
        and (folder / f"{folder.name}.ipynb").is_file()
    )


def solutions_hidden() -> bool:
    """Instructors set ``ATTNLAB_HIDE_SOLUTIONS=1`` to switch :meth:`Exercise.solution` off."""
    return os.environ.get("ATTNLAB_HIDE_SOLUTIONS") == "1"


#: Extra entropy for every seeded generator a check draws its cases from; set by the grading
#: process (:func:`grading_seed`) to a number drawn at grading time. None in a learner's check,
#: which stays deterministic.
_SALT: contextvars.ContextVar[int | None] = contextvars.ContextVar("salt", default=None)


@contextlib.contextmanager
def grading_seed(salt: int | None):
    """Draw the cases of every check run inside the block from seeds mixed with ``salt``.

    The lessons seed their cases (``np.random.default_rng(7)``) so a learner's check is the
    same every time; a precomputed table of outputs would pass those. Under grading the same
    generators are seeded with ``[seed, salt]`` instead, ``salt`` drawn from ``os.urandom`` when
    the notebook is graded, so the inputs cannot be known in advance. That includes the cases
    every check with inputs draws with ``Cases(fresh=...)`` (random shapes and values and the
    exercise's edge cases, after its shipped ones, which are literal arrays a table could hold).
    """
    token = _SALT.set(salt)
    try:
        yield
    finally:
        _SALT.reset(token)


@contextlib.contextmanager
def salted_seeds():
    """While a check draws its cases: ``np.random.default_rng(seed)`` seeded with the grading
    salt as well (see :func:`grading_seed`); nothing changes when there is none."""
    salt = _SALT.get()
    if salt is None:
        yield
        return
    original = np.random.default_rng

    def default_rng(seed=None):
        if seed is None or isinstance(seed, (np.random.SeedSequence, np.random.BitGenerator)):
            return original(seed)
        seed = [int(s) for s in np.ravel(seed)] if np.ndim(seed) else [int(seed)]
        return original([*seed, salt])

    np.random.default_rng = default_rng
    try:
        yield
    finally:
        np.random.default_rng = original
