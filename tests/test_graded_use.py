"""Graded use, end to end with stock nbgrader: what each kind of submission scores.

A temporary course is built from this repository with its ``nbgrader_config.py``; every
lesson is generated (``nbgrader generate_assignment``), and for every lesson a blank, a solved,
a one-exercise-wrong and a right-but-warning submission are autograded (``nbgrader
autograde``); two lessons also get every kind of cheating. The scores are read back from
nbgrader's gradebook and printed as a table (run with ``-s`` to see it).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import graded_course as gc
import pytest
from solution_lines import leaks, notebook_text, wheel_texts

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
#: Lessons that also receive every kind of cheating (a quiz lesson and a forbidden-function one).
CHEAT_LESSONS = ("03-softmax", "07-test-your-understanding")


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    folder = gc.make_course(tmp_path_factory.mktemp("course"))
    for lesson in gc.lessons():
        gc.nbgrader(folder, "generate_assignment", lesson, "--force")
    return folder


@pytest.fixture(scope="module")
def graded(course):
    """lesson -> kind -> (score, expected, max) after autograding every submission."""
    table = {}
    for lesson in gc.lessons():
        source_nb = gc.read(course / "source" / lesson / f"{lesson}.ipynb")
        release_nb = gc.read(course / "release" / lesson / f"{lesson}.ipynb")
        expected = {}
        for kind, nb, points in gc.submissions(lesson, source_nb, release_nb,
                                               cheats=lesson in CHEAT_LESSONS):
            gc.write_submission(course, kind, lesson, nb)
            expected[kind] = points
        gc.nbgrader(course, "autograde", lesson, "--create")
        got = gc.scores(course, lesson)
        table[lesson] = {kind: (*got[kind], expected[kind]) for kind in expected}
    _print(table)
    return table


def _print(table) -> None:
    kinds = list(dict.fromkeys(k for row in table.values() for k in row))
    print("\nscore / max points, per lesson and kind of submission (expected in brackets "
          "where it differs)")
    print(f"{'lesson':<30}" + "".join(f"{k:>22}" for k in kinds))
    for lesson, row in table.items():
        cells = []
        for kind in kinds:
            if kind not in row:
                cells.append(f"{'—':>22}")
                continue
            score, top, want = row[kind]
            mark = "" if abs(score - want) < 1e-9 else f" [{want:g}]"
            cells.append(f"{f'{score:g}/{top:g}{mark}':>22}")
        print(f"{lesson:<30}" + "".join(cells))


def test_every_submission_scores_what_it_should(graded):
    wrong = {(lesson, kind): (score, want) for lesson, row in graded.items()
             for kind, (score, _, want) in row.items() if abs(score - want) > 1e-9}
    assert not wrong, wrong


def test_solved_lessons_earn_every_point_and_cheats_earn_none(graded):
    for lesson, row in graded.items():
        score, top, _ = row["solved"]
        assert score == top > 0 or lesson.startswith("00"), (lesson, row["solved"])
        assert row["blank"][0] == 0
    for lesson in CHEAT_LESSONS:
        cheats = [kind for kind in graded[lesson] if kind not in
                  ("blank", "solved", "one-wrong", "right-but-warns", "forbidden-function")]
        assert len(cheats) >= 10, cheats
        assert all(graded[lesson][kind][0] == 0 for kind in cheats), graded[lesson]


def test_grade_cells_are_silent_on_success(course, graded):
    """No stderr and nothing for nbgrader to coerce in a solved notebook's grade cells."""
    lesson = "03-softmax"
    nb = gc.read(course / "autograded" / "right-but-warns" / lesson / f"{lesson}.ipynb")
    for cell in nb["cells"]:
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade"):
            kinds = {(o["output_type"], o.get("name")) for o in cell["outputs"]}
            assert kinds <= {("display_data", None)}, kinds


def test_feedback_shows_the_reason(course, graded):
    lesson = "03-softmax"
    gc.nbgrader(course, "generate_feedback", lesson, "--student", "forbidden-function")
    html = next((course / "feedback" / "forbidden-function" / lesson).glob("*.html"))
    assert "asks you not to use" in html.read_text(encoding="utf-8")


def test_validate_reports_a_blank_notebook_as_failing(course):
    lesson = "01-dot-product-scores"
    result = gc.nbgrader(course, "validate", str(course / "release" / lesson / f"{lesson}.ipynb"),
                         check=False)
    assert "VALIDATION FAILED" in result.stdout + result.stderr


def test_release_notebooks_hold_no_solution(course):
    """No telling line of any worked solution in what students receive."""
    released = {p.name: notebook_text(p) for p in (course / "release").glob("*/*.ipynb")}
    given = {p.name: notebook_text(p) for p in (ROOT / "notebooks").glob("*.ipynb")}
    assert released.keys() == given.keys()
    assert leaks(released) == []


def test_the_wheel_holds_no_solution_and_no_quiz_key(tmp_path):
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w",
                    str(tmp_path), str(ROOT)], check=True, capture_output=True, timeout=600)
    wheel = next(tmp_path.glob("attnlab-*.whl"))
    texts = wheel_texts(wheel)
    assert not any(name.startswith(("answer_keys/", "source/", "tests/")) for name in texts)
    found = [hit for hit in leaks(texts) if not _given(hit)]
    assert found == []
    key = json.dumps(gc.worked(gc.read(ROOT / "source" / "07-test-your-understanding" /
                                       "07-test-your-understanding.ipynb")))
    assert "answer_keys" not in " ".join(texts) and key


def _given(hit) -> bool:
    """A bug hunt's buggy function is shown to students: its lines are not a solution."""
    import inspect

    from attnlab.exercises import lesson7

    name, _, line = hit
    buggy = "\n".join(inspect.getsource(getattr(lesson7, f)) for f in dir(lesson7)
                      if f.startswith("buggy_"))
    return name.endswith("lesson7.py") and line in {" ".join(x.split()) for x in
                                                   (ln.split("  #")[0] for ln in
                                                    buggy.splitlines())}
