"""A temporary nbgrader course built from this repository, and submissions to grade in it.

Used by tests/test_graded_use.py: it copies ``source/``, ``answer_keys/`` and the shipped
``nbgrader_config.py`` into a folder, runs stock nbgrader commands there, and writes the
submissions an instructor meets — blank, solved, one exercise wrong, right but warning — and
every way of cheating the graded-use issue lists.
"""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from attnlab.exercises import EXERCISES
from attnlab.exercises.solutions import BEGIN, END, defined_names

ROOT = Path(__file__).resolve().parents[1]
NBGRADER = [sys.executable, "-m", "nbgrader"]


def lessons() -> list[str]:
    return sorted(p.name for p in (ROOT / "source").iterdir() if (p / f"{p.name}.ipynb").exists())


def make_course(folder: Path) -> Path:
    """A course folder with the repository's sources, keys and nbgrader config."""
    for name in ("source", "answer_keys"):
        shutil.copytree(
            ROOT / name,
            folder / name,
            ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"),
        )
    shutil.copy(ROOT / "nbgrader_config.py", folder / "nbgrader_config.py")
    return folder


def nbgrader_env(**extra: str) -> dict[str, str]:
    """The environment an instructor's shell has: none of the course's own variables, except
    that grading without the sandbox is allowed where bubblewrap cannot run (CI has it, and
    tests/test_grading.py fails there without it)."""
    from attnlab.grading import sandbox

    env = {k: v for k, v in os.environ.items() if not k.startswith(("ATTNLAB_", "NBGRADER_"))}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"  # alembic
    if sandbox.unavailable() is not None:
        env["ATTNLAB_REQUIRE_SANDBOX"] = "0"
    env.update(extra)
    return env


def nbgrader(course: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    """Run a stock nbgrader command in ``course``."""
    result = subprocess.run(
        [*NBGRADER, *args],
        cwd=course,
        env=nbgrader_env(),
        capture_output=True,
        text=True,
        timeout=1800,
    )
    if check and result.returncode != 0:
        raise AssertionError(f"nbgrader {' '.join(args)} failed:\n{result.stderr[-4000:]}")
    return result


def read(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _meta(cell) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {}) or {}


def _code(cell) -> str:
    return "".join(cell["source"])


def _set(cell, code: str) -> None:
    cell["source"] = code


def graded_answers(source_nb) -> list[tuple[str, str, float]]:
    """(solution grade_id, answer function, points) for each graded exercise, in order."""
    solution_of = {}
    for cell in source_nb["cells"]:
        if cell["cell_type"] == "code" and _meta(cell).get("solution"):
            for name in defined_names(_code(cell)):
                solution_of[name] = _meta(cell)["grade_id"]
    return [
        (solution_of[exercise.answer], exercise.answer, float(exercise.points))
        for exercise in checked_exercises(source_nb)
    ]


def checked_exercises(source_nb) -> list:
    """The exercises ``source_nb``'s grade cells check, found by grade_id in the course's map."""
    return [
        EXERCISES.by_grade_id(_meta(cell)["grade_id"])
        for cell in source_nb["cells"]
        if cell["cell_type"] == "code" and _meta(cell).get("grade")
    ]


def worked(source_nb) -> dict[str, str]:
    """Solution grade_id -> the worked answer's code (nbgrader's markers taken out)."""
    return {
        _meta(c)["grade_id"]: "\n".join(
            line for line in _code(c).splitlines() if line.strip() not in (BEGIN, END)
        )
        for c in source_nb["cells"]
        if c["cell_type"] == "code" and _meta(c).get("solution")
    }


def _with_answers(release_nb, answers: dict[str, str]) -> dict:
    nb = copy.deepcopy(release_nb)
    for cell in nb["cells"]:
        grade_id = _meta(cell).get("grade_id")
        if cell["cell_type"] == "code" and grade_id in answers:
            _set(cell, answers[grade_id])
    return nb


def _after_imports(nb, code: str) -> dict:
    """``nb`` with a new code cell holding ``code`` right after its first code cell."""
    nb = copy.deepcopy(nb)
    first = next(i for i, c in enumerate(nb["cells"]) if c["cell_type"] == "code")
    nb["cells"].insert(
        first + 1,
        {
            "cell_type": "code",
            "execution_count": None,
            "id": "cheat",
            "metadata": {},
            "outputs": [],
            "source": code,
        },
    )
    return nb


def _warning_first(code: str) -> str:
    """``code`` whose functions warn (DeprecationWarning) before doing their work."""
    out = []
    for line in code.splitlines():
        out.append(line)
        if line.startswith("def ") and line.rstrip().endswith(":"):
            out += [
                "    import warnings",
                '    warnings.warn("this call is deprecated", DeprecationWarning)',
            ]
    return "\n".join(out)


def _lesson_name(lesson: str) -> str:
    return f"lesson{int(lesson[:2])}"


CHEATS = {
    "patch-checks": lambda name: (
        "from attnlab.exercises.kit.exercise import Exercise\n"
        "from attnlab.exercises.kit.feedback import Feedback\n"
        "from attnlab.exercises.kit.outcomes import Outcome\n"
        "def always_right(self, answer):\n"
        "    return Feedback(self.title, Outcome.CORRECT, 'ok', 1.0)\n"
        "Exercise.check = Exercise.grade = always_right\n"
    ),
    "edit-environment": lambda name: (
        "import os\nos.environ.pop('NBGRADER_EXECUTION', None)\n"
        "os.environ['ATTNLAB_REQUIRE_CORRECT'] = '0'\n"
    ),
    "rebind-names": lambda name: (
        "class Anything:\n    def __getattr__(self, attr):\n        return self\n"
        "    def __call__(self, *args, **kwargs):\n        return None\n"
        f"{name} = Anything()\n"
    ),
    "patch-numpy": lambda name: (
        "import numpy as np\nnp.allclose = lambda *a, **k: True\n"
        "np.isclose = lambda *a, **k: True\nnp.array_equal = lambda *a, **k: True\n"
    ),
    "blank-later-cells": lambda name: (
        "get_ipython().input_transformers_cleanup.append(lambda lines: [])\n"
    ),
    "swallow-errors": lambda name: (
        "get_ipython().set_custom_exc((BaseException,), lambda *args, **kwargs: None)\n"
    ),
}


#: The lessons that stand for each kind of exercise in the grading pipeline's tests: functions
#: judged on cases (lesson 3), a quiz and bug hunts (lesson 7), an answer whose memory is measured
#: (lesson 8). Every kind of submission is graded in these; the other lessons get the kinds
#: that depend on the lesson itself (blank, solved, a partly wrong quiz, a forbidden function).
REPRESENTATIVE = ("03-softmax", "07-test-your-understanding", "08-cost-of-attention")


def submissions(lesson: str, source_nb, release_nb, cheats: bool, every_kind: bool = True):
    """(kind, notebook, expected points) for ``lesson``; every cheat expects 0.

    ``cheats``: add the forbidden-function submission and, with ``every_kind``, every way of
    cheating. ``every_kind``: add the kinds that test the grading pipeline rather than the
    lesson (one exercise wrong, right but warning, the cheats); False grades only blank, solved,
    a partly wrong quiz and (with ``cheats``) a forbidden function.
    """
    answers = graded_answers(source_nb)
    total = sum(points for _, _, points in answers)
    solved = worked(source_nb)
    yield "blank", release_nb, 0.0
    yield "solved", _with_answers(release_nb, solved), total
    if answers and every_kind:
        grade_id, function, points = answers[0]
        junk = f"def {function}(*args, **kwargs):\n    return 12345.678\n"
        yield "one-wrong", _with_answers(release_nb, {**solved, grade_id: junk}), total - points
    quizzes = [(g, f, p) for g, f, p in answers if f.startswith("quiz")]
    if quizzes:  # two answers wrong in the first quiz: each question is worth the same share
        grade_id, function, points = quizzes[0]
        code = solved[grade_id].replace(
            "return answers",
            "answers.update({k: 'z' for k in list(answers)[:2]})\n    return answers",
        )
        n = len(_exercise_for(source_nb, function).checker.__self__.questions)
        yield (
            "quiz-2-wrong",
            _with_answers(release_nb, {**solved, grade_id: code}),
            total - 2 * points / n,
        )
    if every_kind:
        yield (
            "right-but-warns",
            _with_answers(release_nb, {g: _warning_first(code) for g, code in solved.items()}),
            total,
        )
    if not cheats:
        return
    forbidden = {}
    for grade_id, function, points in answers:
        exercise = _exercise_for(source_nb, function)
        if exercise.forbidden and "." in exercise.forbidden[0]:
            forbidden[grade_id] = (
                f"def {function}(*args, **kwargs):\n"
                f"    return {exercise.forbidden[0]}(*args, **kwargs)\n",
                points,
            )
    if forbidden:
        lost = sum(points for _, points in forbidden.values())
        yield (
            "forbidden-function",
            _with_answers(
                release_nb, {**solved, **{g: code for g, (code, _) in forbidden.items()}}
            ),
            total - lost,
        )
    if not every_kind:
        return
    yield from _cheats(lesson, release_nb, answers)


def _cheats(lesson: str, release_nb, answers):
    """(kind, notebook, 0.0) for every way of cheating the grading pipeline."""
    name = _lesson_name(lesson)
    for kind, cell in CHEATS.items():
        yield kind, _after_imports(release_nb, cell(name)), 0.0
    deleted = copy.deepcopy(release_nb)
    deleted["cells"] = [c for c in deleted["cells"] if not _meta(c).get("grade")]
    yield "delete-grade-cells", deleted, 0.0
    edited = copy.deepcopy(release_nb)
    for cell in edited["cells"]:
        if _meta(cell).get("grade"):
            _set(cell, "pass")
    yield "edit-grade-cells", edited, 0.0

    def every_answer(body: str) -> dict[str, str]:
        return {grade_id: body.format(function=function) for grade_id, function, _ in answers}

    # the worked answers, through the package's own reader of source/ (no longer shipped)
    yield (
        "copy-from-package",
        _with_answers(
            release_nb,
            every_answer(
                "from attnlab.exercises.solutions import worked_solution\n"
                "def {function}(*args, **kwargs):\n"
                "    return eval(worked_solution('{function}'))(*args, **kwargs)\n"
            ),
        ),
        0.0,
    )
    # the instructor's source notebook, read from disk next to the grading kernel
    source = f"../../source/{lesson}/{lesson}.ipynb"
    yield (
        "read-source-files",
        _with_answers(
            release_nb,
            every_answer(
                "import numpy as np\n"
                "def {function}(*args, **kwargs):\n"
                f"    lines = np.loadtxt({source!r}, dtype=str, delimiter='\\x00')\n"
                "    return lines[0]\n"
            ),
        ),
        0.0,
    )
    # the grading worker's frame (its response, its tripwire), reached from a generator
    yield (
        "walk-frames",
        _with_answers(
            release_nb,
            every_answer(
                "def {function}(*args, **kwargs):\n"
                "    def peek():\n"
                "        yield walker.gi_frame.f_back.f_back.f_globals\n"
                "    walker = peek()\n"
                "    return next(walker)\n"
            ),
        ),
        0.0,
    )
    tamper = {
        grade_id: (
            "import sys\nsys.modules['attnlab.grading.worker'] = None\n"
            f"def {function}(*args, **kwargs):\n    raise NotImplementedError()\n"
        )
        for grade_id, function, _ in answers
    }
    yield "tamper-in-answer-cell", _with_answers(release_nb, tamper), 0.0


def _exercise_for(source_nb, function: str):
    return next(e for e in checked_exercises(source_nb) if e.answer == function)


def write_submission(course: Path, student: str, lesson: str, nb: dict) -> None:
    folder = course / "submitted" / student / lesson
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{lesson}.ipynb").write_text(json.dumps(nb, indent=1), encoding="utf-8")


def scores(course: Path, lesson: str) -> dict[str, tuple[float, float]]:
    """student -> (score, max score) for ``lesson``, read from nbgrader's gradebook."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", course_id="attnlab") as gb:
        return {s.student.id: (s.score, s.max_score) for s in gb.assignment_submissions(lesson)}
