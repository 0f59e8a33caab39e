"""nbgrader configuration for the attnlab course (this folder is the course directory).

Stock nbgrader commands run from this folder: ``nbgrader generate_assignment 03-softmax``,
``nbgrader release_assignment``, ``nbgrader collect``, ``nbgrader autograde``,
``nbgrader generate_feedback``, ``nbgrader export``. See docs/instructors.md.
"""

import os
from pathlib import Path

c = get_config()  # noqa: F821 - provided by nbgrader when it reads this file

HERE = Path(__file__).resolve().parent

c.CourseDirectory.course_id = "attnlab"
c.CourseDirectory.root = str(HERE)
c.CourseDirectory.source_directory = "source"
c.CourseDirectory.release_directory = "release"
c.CourseDirectory.submitted_directory = "submitted"
c.CourseDirectory.autograded_directory = "autograded"
c.CourseDirectory.feedback_directory = "feedback"

# The exchange moves assignments between instructor and students. On one machine or a
# JupyterHub with a shared folder this is the usual place; change it per deployment.
c.Exchange.root = os.environ.get("ATTNLAB_EXCHANGE", "/srv/nbgrader/exchange")

# Student code runs only inside the grading sandbox (bubblewrap; see attnlab/grading/sandbox.py):
# without it, grading stops with an error that says so. Set ATTNLAB_REQUIRE_SANDBOX=0 to grade
# without it anyway (docs/instructors.md says what that gives up).
os.environ.setdefault("ATTNLAB_REQUIRE_SANDBOX", "1")

# The course's answer keys (the lesson 7 quiz) live outside the package; grading reads them here.
os.environ.setdefault("ATTNLAB_ANSWER_KEYS", str(HERE / "answer_keys"))
os.environ.setdefault("ATTNLAB_SOURCE", str(HERE / "source"))
# Read the keys now, before any submission runs anywhere (attnlab.exercises.keys keeps them).
from attnlab.exercises.keys import load_key  # noqa: E402

load_key("lesson7")

# Every kernel that runs a student's code runs in the sandbox, nbgrader's own included: the
# Execute step below runs everything the submission holds (the grades are decided apart, but
# that code must not reach the course folder either).
c.Execute.kernel_manager_class = "attnlab.grading.sandbox.SandboxedKernelManager"

# Grades are decided outside the student's kernel (attnlab/grading): nbgrader still executes
# the submission for the student's own outputs, then GradeOutsideKernel re-grades every grade
# cell in a fresh kernel holding only the student's answer cells, before the grades are saved.
c.Autograde.autograde_preprocessors = [
    "nbgrader.preprocessors.Execute",
    "nbgrader.preprocessors.IgnorePattern",
    "nbconvert.preprocessors.ClearMetadataPreprocessor",
    "nbgrader.preprocessors.LimitOutput",
    "attnlab.grading.nbgrader_plugin.GradeOutsideKernel",
    "nbgrader.preprocessors.SaveAutoGrades",
    "nbgrader.preprocessors.AssignLatePenalties",
    "nbgrader.preprocessors.CheckCellMetadata",
]
# A student who deletes a grade cell gets it back, scored by the checks, not left for hand grading.
c.OverwriteCells.add_missing_cells = True
# A cell that hangs does not hold up a whole class.
c.Execute.timeout = 120
