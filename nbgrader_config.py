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

# The course's answer keys (the quizzes of lessons 4 and 7) live outside the package; grading
# reads them here.
os.environ.setdefault("ATTNLAB_ANSWER_KEYS", str(HERE / "answer_keys"))
os.environ.setdefault("ATTNLAB_SOURCE", str(HERE / "source"))
# Read the keys now, before any submission runs anywhere (attnlab.exercises.keys keeps them).
from attnlab.exercises.keys import load_key  # noqa: E402

load_key("lesson4")
load_key("lesson7")

# Every kernel that runs a student's code runs in the sandbox (attnlab/grading/sandbox.py), with
# an allow-listed environment and caps on memory, processes, disk and files (ATTNLAB_GRADING_MEMORY,
# ATTNLAB_GRADING_PROCESSES, ATTNLAB_GRADING_DISK, ATTNLAB_GRADING_FILES: "3G", 256, "256M",
# 10000 unless set). Neither kernel starts a process once running (the Execute kernel from its
# first cell, the grading kernel once armed), so the memory cap holds for the whole sandbox.
# nbgrader's own Execute step runs everything the submission holds (the grades are decided apart,
# but its outputs become the student's feedback): LimitedExecute runs it in the sandbox with an
# asynchronous kernel manager (so the cell timeout fires), kills a cell that ignores the
# interrupt, caps the notebook's time and its output as it arrives, and sanitizes the outputs.
#
# Grades are decided outside the student's kernel (attnlab/grading): nbgrader still executes
# the submission for the student's own outputs, then GradeOutsideKernel re-grades every grade
# cell in a fresh kernel holding only the student's answer cells, before the grades are saved;
# SanitizeOutputs cleans the notebook once more (no script reaches the formgrader or feedback).
# A submission's cell metadata in nbgrader's own version before nbgrader checks it: a version
# error there stops the whole autograde run, not the one notebook (a student's
# "schema_version": 4 left every student after them ungraded).
c.Autograde.sanitize_preprocessors = [
    "nbgrader.preprocessors.ClearOutput",
    "nbgrader.preprocessors.DeduplicateIds",
    "nbgrader.preprocessors.OverwriteKernelspec",
    "attnlab.grading.nbgrader_plugin.NormalizeCellMetadata",
    "nbgrader.preprocessors.OverwriteCells",
    "nbgrader.preprocessors.CheckCellMetadata",
]
c.Autograde.autograde_preprocessors = [
    "attnlab.grading.execute.LimitedExecute",
    "nbgrader.preprocessors.IgnorePattern",
    "nbconvert.preprocessors.ClearMetadataPreprocessor",
    "nbgrader.preprocessors.LimitOutput",
    "attnlab.grading.nbgrader_plugin.GradeOutsideKernel",
    "attnlab.grading.execute.SanitizeOutputs",
    "nbgrader.preprocessors.SaveAutoGrades",
    "nbgrader.preprocessors.AssignLatePenalties",
    "nbgrader.preprocessors.CheckCellMetadata",
]
# A student who deletes a grade cell gets it back, scored by the checks, not left for hand grading.
c.OverwriteCells.add_missing_cells = True
# A cell still running after this many seconds is interrupted, and its kernel killed when it
# does not stop; the code the student wrote (answer cells, cells added or changed) gets
# student_cells_timeout seconds in all, the whole notebook notebook_timeout seconds (a few
# times the slowest lesson's honest run: docs/instructors.md).
c.Execute.timeout = 120
c.LimitedExecute.student_cells_timeout = 60
c.LimitedExecute.notebook_timeout = 300
# Output kept per cell and per notebook, dropped beyond as it arrives (bytes).
c.LimitedExecute.max_cell_output = 1 * 2**20
c.LimitedExecute.max_output = 8 * 2**20

# Settings of your own course (a course id, the timeouts, a late penalty, another exchange) go
# into nbgrader_config.local.py beside this file, which git ignores; it is read last, so what it
# sets wins. A local file that cannot be read stops every nbgrader command here, naming it:
# nbgrader logs a config file that raises and goes on *without it*, and without this file it
# would grade with its defaults (no sandbox, grades decided in the student's own kernel).
LOCAL_CONFIG = HERE / "nbgrader_config.local.py"
if LOCAL_CONFIG.exists():
    try:
        load_subconfig(str(LOCAL_CONFIG))  # noqa: F821 - provided by traitlets' config loader
    except Exception as error:  # noqa: BLE001 - any error: say which file, stop
        raise SystemExit(
            f"attnlab: {LOCAL_CONFIG} could not be read ({type(error).__name__}: {error}); "
            "nbgrader stopped rather than grade without the course's settings. Fix or remove it."
        ) from error
