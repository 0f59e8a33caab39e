"""Graded use, end to end with stock nbgrader: what each kind of submission scores.

For every lesson a temporary course is built from this repository with its
``nbgrader_config.py`` (one folder per lesson, so two lessons can be graded at once), the
lesson is generated (``nbgrader generate_assignment``), and a blank, a solved, a partly wrong
quiz and a forbidden-function submission are autograded (``nbgrader autograde``): what depends
on the lesson. The kinds that test the grading pipeline itself (one exercise wrong, right but
warning, and every kind of cheating) are graded in the lessons that stand for each kind of
exercise (``graded_course.REPRESENTATIVE``: functions, a quiz with bug hunts, an answer whose
memory is measured), not in all ten. The scores are read back from nbgrader's gradebook and
printed as a table (run with ``-s`` to see it).
"""

from __future__ import annotations

import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import graded_course as gc
import pytest
from solution_lines import leaks, notebook_text, quiz_key_leaks, wheel_texts

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
#: Submissions that are not cheating: every other kind must score 0 for what it touches.
HONEST = ("blank", "solved", "one-wrong", "right-but-warns", "quiz-2-wrong", "forbidden-function")


def _grade_lesson(folder: Path, lesson: str) -> dict:
    """kind -> (score, max, expected) for every submission of ``lesson``, in its own course."""
    course = gc.make_course(folder)
    gc.nbgrader(course, "generate_assignment", lesson, "--force")
    source_nb = gc.read(course / "source" / lesson / f"{lesson}.ipynb")
    release_nb = gc.read(course / "release" / lesson / f"{lesson}.ipynb")
    expected = {}
    every_kind = lesson in gc.REPRESENTATIVE
    for kind, nb, points in gc.submissions(
        lesson, source_nb, release_nb, cheats=True, every_kind=every_kind
    ):
        gc.write_submission(course, kind, lesson, nb)
        expected[kind] = points
    log = gc.nbgrader(course, "autograde", lesson, "--create")
    (course / "autograde.log").write_text(log.stdout + log.stderr, encoding="utf-8")
    got = gc.scores(course, lesson)
    return {kind: (*got[kind], expected[kind]) for kind in expected}


@pytest.fixture(scope="module")
def courses(tmp_path_factory):
    """lesson -> the course folder it was graded in."""
    return {lesson: tmp_path_factory.mktemp(lesson) for lesson in gc.lessons()}


@pytest.fixture(scope="module")
def graded(courses):
    """lesson -> kind -> (score, max, expected) after autograding every submission."""
    # The lessons graded with every kind of submission go first, and later lessons (longer
    # notebooks: lesson 8's runs longest) before earlier ones: in lesson order lesson 8
    # started third from last and the pool's last minutes graded it alone.
    later_first = sorted(courses, reverse=True)
    order = sorted(later_first, key=lambda lesson: lesson not in gc.REPRESENTATIVE)  # stable
    with ThreadPoolExecutor(max_workers=2) as pool:  # nbgrader runs in subprocesses
        futures = {lesson: pool.submit(_grade_lesson, courses[lesson], lesson) for lesson in order}
        table = {lesson: futures[lesson].result() for lesson in courses}
    print(score_table(table))
    return table


def score_table(table) -> str:
    """Kinds of submission down, lessons across; ``score/max``, ``[expected]`` where it differs.

    >>> print(score_table({"03-softmax": {"blank": (0.0, 5.0, 0.0), "solved": (4.0, 5.0, 5.0)}}))
    <BLANKLINE>
    score / max points per kind of submission and lesson ([expected] where it differs)
    kind                       03
    blank                     0/5
    solved                4/5 [5]
    """
    kinds = list(dict.fromkeys(k for row in table.values() for k in row))
    lines = [
        "",
        "score / max points per kind of submission and lesson ([expected] where it differs)",
        f"{'kind':<22}" + "".join(f"{lesson[:2]:>9}" for lesson in table),
    ]
    for kind in kinds:
        cells = []
        for row in table.values():
            if kind not in row:
                cells.append(f"{'—':>9}")
                continue
            score, top, want = row[kind]
            mark = "" if abs(score - want) < 1e-9 else f" [{want:g}]"
            cells.append(f"{f'{score:g}/{top:g}{mark}':>9}")
        lines.append(f"{kind:<22}" + "".join(cells))
    return "\n".join(lines)


def test_every_submission_scores_what_it_should(graded):
    wrong = {
        (lesson, kind): (score, want)
        for lesson, row in graded.items()
        for kind, (score, _, want) in row.items()
        if abs(score - want) > 1e-9
    }
    assert not wrong, wrong


def test_solved_lessons_earn_every_point_and_cheats_earn_none(graded):
    assert set(gc.REPRESENTATIVE) <= set(graded), "a representative lesson is missing"
    for lesson, row in graded.items():
        score, top, _ = row["solved"]
        assert score == top > 0, (lesson, row["solved"])
        assert row["blank"][0] == 0
        if lesson not in gc.REPRESENTATIVE:
            assert "one-wrong" not in row, "pipeline kinds run in the representative lessons"
            continue
        cheats = [kind for kind in row if kind not in HONEST]
        assert len(cheats) >= 12, cheats
        assert {kind: row[kind][0] for kind in cheats} == dict.fromkeys(cheats, 0.0), lesson


def test_grade_cells_are_silent_on_success(courses, graded):
    """No stderr and nothing for nbgrader to coerce in a solved notebook's grade cells."""
    lesson = "03-softmax"
    nb = gc.read(courses[lesson] / "autograded" / "right-but-warns" / lesson / f"{lesson}.ipynb")
    for cell in nb["cells"]:
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade"):
            kinds = {(o["output_type"], o.get("name")) for o in cell["outputs"]}
            assert kinds <= {("display_data", None)}, kinds


def test_nbgrader_never_coerces_a_grade(courses, graded):
    """A passing grade cell leaves nbgrader nothing to convert ('cannot be converted to a
    float' is nbgrader's deprecated fallback for a cell that printed a result)."""
    logs = {
        lesson: (folder / "autograde.log").read_text(encoding="utf-8")
        for lesson, folder in courses.items()
    }
    assert all(" of " in log and " points" in log for log in logs.values())  # ours ran
    assert [lesson for lesson, log in logs.items() if "converted to a float" in log] == []


def test_feedback_shows_the_reason(courses, graded):
    lesson = "03-softmax"
    gc.nbgrader(courses[lesson], "generate_feedback", lesson, "--student", "forbidden-function")
    html = next((courses[lesson] / "feedback" / "forbidden-function" / lesson).glob("*.html"))
    assert "asks you not to use" in html.read_text(encoding="utf-8")


def test_validate_reports_a_blank_notebook_as_failing(courses, graded):
    lesson = "01-dot-product-scores"
    course = courses[lesson]
    result = gc.nbgrader(
        course, "validate", str(course / "release" / lesson / f"{lesson}.ipynb"), check=False
    )
    assert "VALIDATION FAILED" in result.stdout + result.stderr


def test_release_notebooks_hold_no_solution(courses, graded):
    """No telling line of any worked solution in what students receive."""
    released = {
        p.name: notebook_text(p)
        for folder in courses.values()
        for p in (folder / "release").glob("*/*.ipynb")
    }
    given = {p.name: notebook_text(p) for p in (ROOT / "notebooks").glob("*.ipynb")}
    assert released.keys() == given.keys()
    assert leaks(released, in_order=True) == []
    assert leaks(given, in_order=True) == []


def test_the_wheel_holds_no_solution_and_no_quiz_key(tmp_path):
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(ROOT)],
        check=True,
        capture_output=True,
        timeout=600,
    )
    wheel = next(tmp_path.glob("attnlab-*.whl"))
    texts = wheel_texts(wheel)
    assert not any(name.startswith(("answer_keys/", "source/", "tests/")) for name in texts)
    found = [hit for hit in leaks(texts) if not _given(hit)]
    assert found == []
    key = json.dumps(
        gc.worked(
            gc.read(
                ROOT / "source" / "07-test-your-understanding" / "07-test-your-understanding.ipynb"
            )
        )
    )
    assert "answer_keys" not in " ".join(texts) and key
    assert quiz_key_leaks(texts) == []  # no line of a quiz key, no letter -> pattern mapping


def _given(hit) -> bool:
    """A bug hunt's buggy function is shown to students: its lines are not a solution."""
    import inspect

    from attnlab.exercises import lesson7

    name, _, line = hit
    buggy = "\n".join(
        inspect.getsource(getattr(lesson7, f)) for f in dir(lesson7) if f.startswith("buggy_")
    )
    return name.endswith("lesson7.py") and line in {
        " ".join(x.split()) for x in (ln.split("  #")[0] for ln in buggy.splitlines())
    }
