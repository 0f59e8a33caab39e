"""A right answer that calls a helper from another cell: the check says so in the words of
where the learner is (issue 41). Self-study (a plain IPython shell wherever it runs, a clone's
notebooks) hears that the answer relies on a cell that is not part of the exercise, and what
grading would do if they handed it in; graded use (a lesson fetched with nbgrader and open in
Jupyter, or grading itself) hears that it scores 0 as it stands."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

#: A plain IPython shell (what ``ipython`` in a terminal runs), three cells typed in turn.
SHELL = textwrap.dedent(
    """
    from IPython.terminal.interactiveshell import TerminalInteractiveShell
    shell = TerminalInteractiveShell.instance()
    for cell in (
        "import numpy as np\\nfrom attnlab.exercises import lesson3",
        "def exps(x):\\n    return np.exp(np.asarray(x, float))",
        "def softmax_row(x):\\n    e = exps(x)\\n    return e / e.sum()",
        "said = str(lesson3.softmax_row.check(softmax_row))",
    ):
        assert shell.run_cell(cell, store_history=True).success, cell
    print(shell.user_ns["said"])
    """
)


def said_in(folder) -> str:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("NBGRADER_EXECUTION", "ATTNLAB_REQUIRE_CORRECT")
    }
    env.update(HOME=str(folder), MPLBACKEND="agg")
    done = subprocess.run(
        [sys.executable, "-c", SHELL],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_self_study_hears_self_study_words(tmp_path):
    folder = tmp_path / "attention-course" / "notebooks"
    folder.mkdir(parents=True)
    said = said_in(folder)
    assert "`exps`" in said
    assert "scores 0 as it stands" not in said, said
    assert "relies on a cell that is not part of the exercise" in said, said
    assert "if you hand it in for grading" in said, said
    assert "Your function itself passes the check." in said


def test_a_plain_shell_in_a_fetched_lesson_hears_self_study_words(tmp_path):
    """A plain IPython shell has no notebook to hand in, wherever it runs (issue 45: it was
    told "This answer scores 0 as it stands" in a fetched lesson's folder)."""
    folder = tmp_path / "03-softmax"  # as nbgrader fetch_assignment lays a lesson out
    folder.mkdir()
    (folder / "03-softmax.ipynb").write_text("{}")
    said = said_in(folder)
    assert "scores 0 as it stands" not in said, said
    assert "relies on a cell that is not part of the exercise" in said, said
    assert "`exps` is defined in a cell that grading does not run" in said


def test_a_fetched_lesson_open_in_jupyter_hears_what_grading_will_do(tmp_path):
    from test_check_states import Kernel

    folder = tmp_path / "03-softmax"  # as nbgrader fetch_assignment lays a lesson out
    folder.mkdir()
    (folder / "03-softmax.ipynb").write_text("{}")
    kernel = Kernel(folder)
    try:
        for cell in (
            "import numpy as np\nfrom attnlab.exercises import lesson3",
            "def exps(x):\n    return np.exp(np.asarray(x, float))",
            "def softmax_row(x):\n    e = exps(x)\n    return e / e.sum()",
        ):
            assert kernel.run(cell)[0] == "ok", cell
        status, said = kernel.run("print(lesson3.softmax_row.check(softmax_row))")
    finally:
        kernel.close()
    assert status == "ok", said
    assert "This answer scores 0 as it stands" in said, said
    assert "`exps` is defined in a cell that grading does not run" in said
    assert "if you hand it in" not in said


def test_graded_use_is_known_from_where_the_notebook_is(tmp_path, monkeypatch):
    from attnlab.exercises.rules import grading_mode

    lesson = tmp_path / "03-softmax"
    lesson.mkdir()
    assert not grading_mode.lesson_folder(lesson)  # a folder of that name alone is not one
    (lesson / "03-softmax.ipynb").write_text("{}")
    assert grading_mode.lesson_folder(lesson)
    assert not grading_mode.lesson_folder(tmp_path)
    assert not grading_mode.graded_use(lesson)  # not a notebook's kernel: self-study
    monkeypatch.setattr(grading_mode, "in_notebook_kernel", lambda: True)
    assert grading_mode.graded_use(lesson)
    assert not grading_mode.graded_use(tmp_path)
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    assert grading_mode.graded_use(tmp_path)


pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
