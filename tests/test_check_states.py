"""What a learner sees in a real kernel when a check cell meets the states of every day.

One ipykernel (started as JupyterLab starts it) runs the cells a learner runs, and each test
reads the outputs the front end would show (stream text, rich results and error messages):

* an answer cell that stopped (a SyntaxError, an exception above the ``def``) while the stub is
  still defined: the check says the cell did not run and why, never "not attempted yet";
* a check run before its exercise cell, or before the lesson's import: one sentence naming the
  cell to run; a NameError of the learner's own code keeps its traceback;
* a check interrupted while the learner's function loops: one sentence, and the cell fails;
* under nbgrader (``NBGRADER_EXECUTION``) none of this is registered and the cell still fails.
"""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

import pytest

jupyter_client = pytest.importorskip("jupyter_client")

ANSI = re.compile(r"\x1b\[[0-9;]*m")
LESSON_3 = Path(__file__).resolve().parents[1] / "notebooks" / "03-softmax.ipynb"
#: The exercise cell of lesson 3 as the learner receives it (the stub), and a first try at it
#: with a bracket left open on its line 4.
STUB = next(
    "".join(cell["source"])
    for cell in json.loads(LESSON_3.read_text())["cells"]
    if "def softmax_row(" in "".join(cell["source"])
)
BROKEN = STUB.replace(
    "raise NotImplementedError()", "e = np.exp(x - x.max()\n    return e / e.sum()"
)
FIXED = (
    "def softmax_row(x):\n    e = np.exp(np.asarray(x, float) - np.max(x))\n"
    "    return e / e.sum()\n"
)
CHECK = "lesson3.softmax_row.check(softmax_row)"


class Kernel:
    """A real ipykernel; :meth:`run` returns what the learner would see for one cell.

    With the course's kernel configuration, as an installed course has it (``pip install .``
    puts jupyter-config/ipython/ in etc/ipython): the restart_help extension is loaded
    whether or not this environment's etc/ipython holds the file yet (``./run.sh lab``, run
    by another test, copies it there), so the tests do not depend on their order.
    """

    def __init__(self, tmp_path, **env):
        from jupyter_client.manager import KernelManager

        environment = {
            k: v
            for k, v in os.environ.items()
            if k not in ("NBGRADER_EXECUTION", "ATTNLAB_REQUIRE_CORRECT")
        }
        environment.update(HOME=str(tmp_path), MPLBACKEND="agg", **env)
        self.manager = KernelManager(
            kernel_name="python3", transport="ipc", ip=str(tmp_path / "kernel")
        )
        self.manager.start_kernel(
            cwd=str(tmp_path),
            env=environment,
            extra_arguments=["--InteractiveShellApp.extensions=['attnlab.restart_help']"],
        )
        self.client = self.manager.client()
        self.client.start_channels()
        self.client.wait_for_ready(timeout=60)

    def run(self, code: str, interrupt_after: float | None = None, timeout: float = 60):
        """``(status, text)``: the reply's status and every output the cell showed, as text."""
        shown: list[str] = []

        def collect(message):
            kind, content = message["msg_type"], message["content"]
            if kind == "stream":
                shown.append(content["text"])
            elif kind in ("execute_result", "display_data"):
                shown.append(content["data"].get("text/plain", ""))
            elif kind == "error":
                shown.append("\n".join(content["traceback"]))

        msg_id = self.client.execute(code)
        if interrupt_after is not None:
            time.sleep(interrupt_after)
            self.manager.interrupt_kernel()
        reply = self.client.get_shell_msg(timeout=timeout)
        while reply["parent_header"].get("msg_id") != msg_id:
            reply = self.client.get_shell_msg(timeout=timeout)
        while True:  # the outputs, up to the kernel going idle after this cell
            message = self.client.get_iopub_msg(timeout=timeout)
            if message["parent_header"].get("msg_id") != msg_id:
                continue
            if message["msg_type"] == "status" and message["content"]["execution_state"] == "idle":
                break
            collect(message)
        return reply["content"]["status"], ANSI.sub("", "".join(shown)).strip()

    def close(self):
        self.client.stop_channels()
        self.manager.shutdown_kernel(now=True)


@pytest.fixture(scope="module")
def kernel(tmp_path_factory):
    running = Kernel(tmp_path_factory.mktemp("learner"))
    status, text = running.run("import numpy as np\nfrom attnlab.exercises import lesson3")
    assert status == "ok", text
    yield running
    running.close()


def one_sentence(text: str) -> None:
    """What the learner sees is a line or two of prose, not a traceback wall."""
    assert "Traceback" not in text and "File " not in text, text
    assert len(text.splitlines()) <= 2, text


def test_a_syntax_error_in_the_answer_cell_is_named_not_called_not_attempted(kernel):
    assert kernel.run(STUB)[0] == "ok"
    assert "not attempted yet" in kernel.run(CHECK)[1]
    status, _ = kernel.run(BROKEN)
    assert status == "error"
    status, text = kernel.run(CHECK)
    assert status == "ok"
    assert "not attempted" not in text
    assert (
        "answer cell did not run. Your last run of the cell defining `softmax_row` stopped "
        "with SyntaxError: '(' was never closed (line 4); fix it and run that cell "
        "again."
    ) in text, text
    one_sentence(text)
    assert kernel.run(FIXED)[0] == "ok"  # fixed and run: judged again, on the new function
    assert "correct" in kernel.run(CHECK)[1]


def test_an_older_attempt_is_not_judged_silently_after_the_cell_fails(kernel):
    assert kernel.run(FIXED)[0] == "ok"
    status, _ = kernel.run("undefined_helper()\n" + FIXED)  # stops above the def
    assert status == "error"
    text = kernel.run(CHECK)[1]
    assert "stopped with NameError: name 'undefined_helper' is not defined" in text, text
    assert "correct" not in text.replace("did not run", "")
    status, _ = kernel.run(FIXED + "softmax_row(None)\n")  # the def ran; the error is below it
    assert status == "error"
    assert "correct" in kernel.run(CHECK)[1]


def test_a_check_before_its_exercise_cell_says_which_cell_to_run(kernel):
    status, text = kernel.run("lesson3.stable_softmax.check(stable_softmax)")
    assert status == "error"  # the cell still fails: Run All stops here
    assert text == (
        "`stable_softmax` is not defined yet: run the cell that defines it (the "
        "exercise cell above) first."
    ), text


def test_a_check_whose_answer_cell_never_ran_through_says_why(kernel):
    status, _ = kernel.run("def softmax_with_temperature(x, t):\n    return x +\n")
    assert status == "error"
    status, text = kernel.run("lesson3.temperature.check(softmax_with_temperature)")
    assert status == "error"
    assert text.startswith(
        "`softmax_with_temperature` is not defined. Your last run of the "
        "cell defining `softmax_with_temperature` stopped with "
        "SyntaxError: invalid syntax (line 2)"
    ), text
    one_sentence(text)


def test_a_check_before_the_lesson_import_says_to_run_the_first_cell(kernel):
    """Before the lesson's import (or after a restart) the course's kernel extension answers:
    one sentence naming the missing name and what to run."""
    status, text = kernel.run("lesson5.mix_one.check(mix_one)")
    assert status == "error"
    assert text.startswith("`lesson5` is not defined") and "Run ▸ Run All Cells" in text, text
    one_sentence(text)


def test_the_learners_own_name_errors_keep_their_traceback(kernel):
    status, text = kernel.run("def f():\n    return not_a_name\n\nf()")
    assert status == "error"
    assert "Traceback (most recent call last)" in text, text  # the usual traceback
    assert "NameError: name 'not_a_name' is not defined" in text
    status, text = kernel.run("total = missing_value + 1")
    assert status == "error" and "NameError" in text and "not defined yet" not in text


def test_an_interrupted_check_says_so_in_one_sentence(kernel):
    assert kernel.run("def softmax_row(x):\n    while True:\n        pass\n")[0] == "ok"
    status, text = kernel.run(CHECK, interrupt_after=3)
    assert status == "error"  # still a failed cell
    assert re.fullmatch(
        r"Check interrupted: your function was still running after \d+ s\. "
        r"If it loops forever, look at .*",
        text,
    ), text
    one_sentence(text)


def test_nothing_changes_under_nbgrader(tmp_path):
    graded = Kernel(tmp_path, NBGRADER_EXECUTION="autograde")
    try:
        assert graded.run("import numpy as np\nfrom attnlab.exercises import lesson3")[0] == "ok"
        assert graded.run(STUB)[0] == "ok"
        assert graded.run(BROKEN)[0] == "error"
        status, text = graded.run(CHECK)
        assert status == "error" and "AssertionError" in text and "not attempted yet" in text
        status, text = graded.run("lesson3.stable_softmax.check(stable_softmax)")
        assert status == "error" and "Traceback (most recent call last)" in text, text
        assert "NameError" in text and "not defined yet" not in text
        # Only the course's kernel extension is registered (and it leaves errors as they are
        # under grading, as just seen); the check cells' watcher is not.
        watching = "print(getattr(get_ipython(), '_attnlab_watching', False))"
        assert graded.run(watching)[1] == "False"
    finally:
        graded.close()


def test_nothing_is_registered_in_a_grading_kernel(tmp_path):
    """The grading kernel imports its worker first and arms it before any lesson cell
    (attnlab.grading.remote.CleanKernel, grade.grade_notebook); a process that only imported
    the worker (a test run) is not a grading kernel."""
    grading = Kernel(tmp_path)
    try:
        assert grading.run("import attnlab.grading.worker as __attnlab_worker__")[0] == "ok"
        assert grading.run("__attnlab_worker__.start('00' * 32)")[0] == "ok"
        assert grading.run("from attnlab.exercises import lesson3")[0] == "ok"
        status, text = grading.run(
            "from attnlab.exercises import cells\n"
            "print(cells.watch(), getattr(get_ipython(), '_attnlab_watching', False))"
        )
        assert (status, text) == ("ok", "False False")
        status, text = grading.run("lesson3.stable_softmax.check(stable_softmax)")
        assert status == "error" and "Traceback (most recent call last)" in text, text
    finally:
        grading.close()


def test_a_process_that_only_imported_the_worker_is_not_a_grading_kernel():
    """The learner-side checks once went silent for the rest of a test run after any test
    imported the worker (order-dependent failures of tests/test_answer_cells.py in CI)."""
    import attnlab.grading.worker  # noqa: F401 - imported, never armed
    from attnlab.exercises import cells
    from attnlab.exercises.rules import grading_mode

    assert not grading_mode.in_grading_kernel()
    assert not cells._under_grading()
