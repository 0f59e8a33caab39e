"""Grading that nothing in a student's notebook can change.

nbgrader runs a student's notebook in one kernel and scores each grade cell by its output.
Everything the notebook ran before a grade cell shares that kernel, so a notebook can patch a
check, rebind the name a grade cell calls, edit ``os.environ`` or make the cell print nothing
at all. :class:`~attnlab.grading.nbgrader_plugin.GradeOutsideKernel`, an nbgrader
preprocessor switched on by the course's ``nbgrader_config.py``, therefore re-grades every grade
cell outside that kernel:

1. :mod:`~attnlab.exercises.rules.lint` reads each answer cell (the cells nbgrader marks as solution
   cells) and refuses the ones that import, introspect or patch anything
   (``import os``, ``get_ipython``, ``__class__``, ``setattr`` …) or name a function the
   exercise forbids;
2. :mod:`~attnlab.grading.remote` starts a fresh kernel and runs the lesson's own cells from
   the instructor's source notebook, with only the student's clean answer cells put in place
   of the solution cells — none of the student's other cells run there;
3. the checks run in the grading process itself, calling the student's functions in that
   kernel through :class:`~attnlab.grading.remote.RemoteFunction`: arguments go in, plain data
   (numbers, strings, arrays) comes back (:mod:`~attnlab.grading.wire`), and the verdict is
   reached where no student code runs;
4. each grade cell's outputs are replaced: nothing on success, a numeric result for partial
   credit (quizzes), an error with the check's reason otherwise.
"""
