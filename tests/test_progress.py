"""A learner's "done so far" and "start again", as a learner gets them in a kernel.

* Passing an exercise's check marks it done in lesson 0's course map and in
  ``attnlab.exercises.progress.progress()``, in a later kernel too (one file per copy of the
  course, under ``HOME``); a failed check after it marks it not done again; grading and plain
  Python record nothing. Two copies of the course on one account keep separate records.
* ``exercise.stub()`` (and the help panel's "Get the stub back") gives the answer cell exactly as
  the learner notebook has it, and pasting it back and running it gives "not attempted yet".
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import numpy as np
import pytest
from test_check_states import Kernel

from attnlab.exercises import EXERCISES, progress
from attnlab.exercises.kit.outcomes import Outcome
from attnlab.exercises.solutions import answer_cells_in

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
IMPORTS = (
    "import numpy as np\nfrom attnlab.exercises.progress import course_map\n"
    "from attnlab.exercises import lesson0"
)
RIGHT = "def largest_score(scores):\n    return max(scores)\n"
WRONG = "def largest_score(scores):\n    return scores[0]\n"
CHECK = "lesson0.largest_score.check(largest_score)"


def lesson_0_row(text: str) -> str:
    return next(line for line in text.splitlines() if line.startswith("0  Start here"))


@pytest.fixture
def home(tmp_path):
    return tmp_path


def test_a_passed_exercise_shows_as_done_in_the_course_map(home):
    learner = Kernel(home)
    try:
        assert learner.run(IMPORTS)[0] == "ok"
        assert lesson_0_row(learner.run("course_map()")[1]).endswith("ready  0 of 1 done")
        stub = answer_cells_in(NOTEBOOKS / "00-start-here.ipynb")["lesson0.largest_score"]
        assert learner.run(stub)[0] == "ok"
        assert "not attempted yet" in learner.run(CHECK)[1]
        assert not list(home.glob(".attnlab/progress*.json"))  # a first stub: no file
        assert learner.run(WRONG)[0] == "ok"
        assert "not yet right" in learner.run(CHECK)[1]
        assert lesson_0_row(learner.run("course_map()")[1]).endswith("0 of 1 done")
        assert learner.run(RIGHT)[0] == "ok"
        assert "correct" in learner.run(CHECK)[1]
        assert lesson_0_row(learner.run("course_map()")[1]).endswith("✓ 1 of 1 done")
        _, listed = learner.run(
            "import attnlab.exercises.progress\nattnlab.exercises.progress.progress()"
        )
        assert "Warm-up (the largest score): ✓ done" in listed
        assert re.search(r"\b1 of \d+ exercises done\.", listed), listed
    finally:
        learner.close()
    later = Kernel(home)  # the next day: a new kernel of the same learner
    try:
        assert later.run(IMPORTS)[0] == "ok"
        status, shown = later.run("course_map()._repr_markdown_()")
        assert status == "ok" and "| 20 min | ready | ✓ 1 of 1 |" in shown, shown
        assert later.run(WRONG)[0] == "ok"  # broken again: no longer done
        later.run(CHECK)
        assert lesson_0_row(later.run("course_map()")[1]).endswith("0 of 1 done")
    finally:
        later.close()
    (path,) = home.glob(".attnlab/progress-*.json")
    saved = json.loads(path.read_text())
    assert saved == {"course": str(home), "exercises": {"lesson0.largest_score": "not yet right"}}


def test_two_copies_of_the_course_keep_separate_progress(home):
    """Two learners on one computer account, each with a clone of the course (issue 41: the
    course map showed another learner's 30 exercises as done). Each kernel starts in its copy's
    notebooks folder, as Jupyter starts a notebook's kernel; nbgrader's layout, one folder per
    lesson, is one copy too."""
    copies = {}
    for who in ("ada", "bob"):
        folder = home / who / "attention-course" / "notebooks"
        folder.mkdir(parents=True)
        copies[who] = folder
    fetched = home / "fetched"
    for lesson in ("00-start-here", "01-dot-product-scores"):
        (fetched / lesson).mkdir(parents=True)
        (fetched / lesson / f"{lesson}.ipynb").write_text("{}")

    def in_copy(folder, *cells):
        learner = Kernel(home)  # the same HOME: one account
        try:
            assert learner.run(f"import os\nos.chdir({str(folder)!r})")[0] == "ok"
            assert learner.run(IMPORTS)[0] == "ok"
            shown = [learner.run(cell)[1] for cell in cells]
            return lesson_0_row(learner.run("course_map()")[1]), shown
        finally:
            learner.close()

    row, _ = in_copy(copies["ada"], RIGHT, CHECK)
    assert row.endswith("✓ 1 of 1 done")
    row, _ = in_copy(copies["bob"])
    assert row.endswith("0 of 1 done") and "✓" not in row
    row, _ = in_copy(copies["ada"])
    assert row.endswith("✓ 1 of 1 done")  # ada's copy kept hers
    row, _ = in_copy(fetched / "01-dot-product-scores", RIGHT, CHECK)
    row, _ = in_copy(fetched / "00-start-here")  # another lesson folder of the same copy
    assert row.endswith("✓ 1 of 1 done")
    assert len(list(home.glob(".attnlab/progress-*.json"))) == 2
    # nothing written among the course's files
    assert {p.parent for p in home.rglob("*progress*.json")} == {home / ".attnlab"}


def test_nothing_is_recorded_under_nbgrader(home):
    grading = Kernel(home, NBGRADER_EXECUTION="autograde")
    try:
        assert grading.run(IMPORTS)[0] == "ok"
        assert grading.run(RIGHT)[0] == "ok"
        assert grading.run(CHECK)[0] == "ok"
    finally:
        grading.close()
    assert not (home / ".attnlab").exists()


def test_nothing_is_recorded_outside_a_kernel(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTNLAB_PROGRESS", str(tmp_path / "progress.json"))
    from attnlab.exercises import lesson0

    assert lesson0.largest_score.check(max)
    assert progress.recorded() == {}
    assert progress.record("lesson0.largest_score", "correct", force=True)
    assert progress.progress().done(0) == (1, 1)
    progress.forget()
    assert progress.recorded() == {}


def _every_exercise():
    found = []
    for path in sorted(NOTEBOOKS.glob("*.ipynb")):
        for name, stub in answer_cells_in(path).items():
            found.append(pytest.param(EXERCISES.by_name(name), stub, id=name))
    return found


def test_every_exercise_has_its_answer_cell_in_a_learner_notebook():
    assert [e.name for e, _ in (p.values for p in _every_exercise())] == [
        e.name for e in EXERCISES.values()
    ]


@pytest.mark.parametrize(("exercise", "stub"), _every_exercise())
def test_the_stub_comes_back_as_the_notebook_gave_it_and_runs_as_not_attempted(exercise, stub):
    shown = exercise.stub().markdown
    assert f"```python\n{stub.strip()}\n```" in shown
    assert "paste this over it" in shown
    namespace = {"np": np}
    exec(stub, namespace)  # the learner pastes it back and runs the cell
    (function,) = [v for k, v in namespace.items() if callable(v) and k != "np"]
    assert copy.copy(exercise).grade(function).outcome is Outcome.NOT_ATTEMPTED


def test_the_help_panel_gives_the_stub_back(capsys):
    from attnlab.exercises import lesson1

    panel = lesson1.dot.help_panel()
    buttons = panel.children[0].children
    assert [b.description for b in buttons] == ["Next hint", "Show a solution", "Get the stub back"]
    buttons[2].click()
    assert "def dot(q, k):" in capsys.readouterr().out


def test_a_wrong_answer_points_at_the_button_below_it():
    from attnlab.exercises import lesson1

    message = copy.copy(lesson1.dot).check(lambda q, k: 0.0).message
    assert "Press Next hint in the panel below this check, or run `lesson1.dot.hint()`" in message
