"""A check cell run alone after a kernel restart says in one sentence what to run (issue 29).

It printed six lines ending ``NameError: name 'lesson3' is not defined``. The course's kernel
configuration (jupyter-config/ipython/ipython_kernel_config.py) loads attnlab.restart_help.
"""

from __future__ import annotations

import queue
import re
from pathlib import Path

import pytest
from jupyter_client.manager import start_new_kernel

from attnlab.restart_help import ADVICE

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "jupyter-config" / "ipython" / "ipython_kernel_config.py"


def error_of(client, code: str) -> dict | None:
    """The error message a cell's run sends (None if it ran cleanly)."""
    msg_id = client.execute(code)
    error = None
    while True:
        try:
            msg = client.get_iopub_msg(timeout=60)
        except queue.Empty:
            pytest.fail(f"no reply from the kernel to {code!r}")
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        if msg["msg_type"] == "error":
            error = msg["content"]
        if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            return error


@pytest.fixture(scope="module")
def kernel():
    manager, client = start_new_kernel(extra_arguments=[f"--config={CONFIG}"])
    try:
        yield client
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


def test_a_check_cell_after_a_restart_says_what_to_run(kernel):
    error = error_of(kernel, "lesson3.softmax.check(softmax)")
    lines = [line for line in error["traceback"] if line.strip()]
    assert len(lines) == 1, error["traceback"]
    assert "`lesson3` is not defined" in lines[0] and ADVICE in lines[0]
    assert error["ename"] == "NameError"  # still an error: Run All stops, nbval still fails


def test_a_learners_own_typo_keeps_the_usual_traceback(kernel):
    error = error_of(kernel, "my_typo + 1")
    text = re.sub(r"\x1b\[[0-9;]*m", "", "\n".join(error["traceback"]))
    assert "NameError: name 'my_typo' is not defined" in text and ADVICE not in text


def test_the_kernel_configuration_is_installed_where_ipython_reads_it():
    """pip install . (Binder, hubs) copies it into etc/ipython; ./run.sh lab copies it too."""
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert '"etc/ipython" = ["jupyter-config/ipython/ipython_kernel_config.py"]' in pyproject
    assert (
        'cp jupyter-config/ipython/ipython_kernel_config.py "$VENV/etc/ipython/"'
        in (ROOT / "run.sh").read_text()
    )
    assert 'extra_extensions = ["attnlab.restart_help"]' in CONFIG.read_text()


def test_the_check_cells_own_sentences_still_show_once_a_lesson_is_loaded(kernel):
    """attnlab.exercises.cells keeps a custom handler it finds: this one hands over to it."""
    assert error_of(kernel, "from attnlab.exercises import lesson3") is None
    error = error_of(kernel, "lesson3.softmax_row.check(softmax_row)")
    lines = [line for line in error["traceback"] if line.strip()]
    assert len(lines) == 1 and "softmax_row" in lines[0] and ADVICE not in lines[0], lines


def test_nbgrader_validate_keeps_the_learners_sentences(monkeypatch):
    """``nbgrader validate`` (NBGRADER_EXECUTION and NBGRADER_VALIDATING=1) is read by the
    learner: the check cells' sentences stay ("gone from the notebook"); only autograding
    leaves errors as they are."""
    from attnlab import restart_help

    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    monkeypatch.delenv("NBGRADER_VALIDATING", raising=False)
    assert restart_help._grading()
    monkeypatch.setenv("NBGRADER_VALIDATING", "1")
    assert not restart_help._grading()
    monkeypatch.delenv("NBGRADER_EXECUTION")
    monkeypatch.delenv("NBGRADER_VALIDATING")
    assert not restart_help._grading()
