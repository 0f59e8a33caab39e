"""Are we grading? Answered here, and only here.

* :func:`must_pass`: under nbgrader (``NBGRADER_EXECUTION``) or ``ATTNLAB_REQUIRE_CORRECT=1``
  anything but *correct* raises;
* :func:`validating`: inside ``nbgrader validate`` (a learner reads what it says);
* :func:`in_grading_kernel`: this is the kernel that grades: the one flag the grading worker
  sets when it arms that kernel (:func:`arm_grading_kernel`, from
  :func:`attnlab.grading.worker.start`), before any student code runs there;
* :func:`autograded`: the grading kernel, or nbgrader's autograder (not its validator);
* :func:`graded_use`: graded work rather than self-study, which decides the words a check
  uses (a lesson fetched with nbgrader and open in Jupyter, or grading itself);

and, for every check, whether solutions are shown and the grading salt mixed into every seeded
case generator. Nothing here imports the grader (:mod:`attnlab.grading`).
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import re
import sys
from pathlib import Path

import numpy as np


def _started_in() -> Path | None:
    try:
        return Path.cwd()
    except OSError:  # the folder was removed under the process
        return None


#: The folder this process started in, as the exercises were first imported: a Jupyter kernel
#: starts in its notebook's folder, and a later ``os.chdir`` in a cell does not move it.
STARTED_IN = _started_in()

#: A lesson's own folder, as ``nbgrader fetch_assignment`` makes it (``03-softmax``).
LESSON_FOLDER = re.compile(r"\d\d-[\w-]+")

#: Set once, by the grading worker arming the grading kernel (:func:`arm_grading_kernel`).
_GRADING_KERNEL = False


def arm_grading_kernel() -> None:
    """Mark this process as the grading kernel: called by the grading worker when it arms the
    kernel (:func:`attnlab.grading.worker.start`), before any student code runs there. A
    process that merely imported the worker (a test run) is not grading."""
    global _GRADING_KERNEL
    _GRADING_KERNEL = True


def in_grading_kernel() -> bool:
    """Whether this is the grading kernel, its worker armed (:func:`arm_grading_kernel`)."""
    return _GRADING_KERNEL


def must_pass() -> bool:
    """True under nbgrader's autograder/validator or with ``ATTNLAB_REQUIRE_CORRECT=1``."""
    return bool(os.environ.get("NBGRADER_EXECUTION")) or (
        os.environ.get("ATTNLAB_REQUIRE_CORRECT") == "1"
    )


def validating() -> bool:
    """True inside ``nbgrader validate`` (it sets ``NBGRADER_VALIDATING=1`` in the kernel)."""
    return os.environ.get("NBGRADER_VALIDATING") == "1"


def autograded() -> bool:
    """Under autograding or in the grading kernel: grades are being decided, nobody reads the
    learner-side sentences. ``nbgrader validate`` is not grading: a learner reads what it says."""
    return in_grading_kernel() or (bool(os.environ.get("NBGRADER_EXECUTION")) and not validating())


def in_notebook_kernel() -> bool:
    """Whether this process is a Jupyter kernel, where a notebook is open (IPython's
    ``ZMQInteractiveShell``); a plain IPython shell, plain Python and a test run are not."""
    if "IPython" not in sys.modules:
        return False
    from IPython import get_ipython

    return type(get_ipython()).__name__ == "ZMQInteractiveShell"


def lesson_folder(folder=None) -> bool:
    """Whether ``folder`` (default: :data:`STARTED_IN`, where the kernel started) is one
    lesson's folder as ``nbgrader fetch_assignment`` lays it out: ``03-softmax/`` holding
    ``03-softmax.ipynb``. A clone of the course keeps its lessons side by side in
    ``notebooks/``. (nbgrader's cell metadata cannot tell: the clone's notebooks are made with
    nbgrader's own preprocessors and carry it too.)

    >>> lesson_folder("/nowhere/03-softmax")
    False
    """
    folder = STARTED_IN if folder is None else Path(folder)
    return bool(
        folder is not None
        and LESSON_FOLDER.fullmatch(folder.name)
        and (folder / f"{folder.name}.ipynb").is_file()
    )


def graded_use(folder=None) -> bool:
    """Whether this notebook is graded work rather than self-study: under grading
    (:func:`must_pass`, :func:`in_grading_kernel`), or a Jupyter kernel
    (:func:`in_notebook_kernel`) started in a lesson's folder as nbgrader fetches it
    (:func:`lesson_folder`; ``folder`` stands for where the kernel started).

    A clone of the course, and a plain IPython shell (it has no notebook to hand in, wherever
    it runs), are self-study.
    """
    if must_pass() or in_grading_kernel():
        return True
    return in_notebook_kernel() and lesson_folder(folder)


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


def grading_salt() -> int | None:
    """The salt of the grading under way (:func:`grading_seed`), or None in a learner's check."""
    return _SALT.get()


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
