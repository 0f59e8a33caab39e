"""An answer grading cannot see: in a cell without the exercise's tag, in a copied answer cell,
or gone. The learner's check and ``nbgrader validate`` say so
(attnlab/exercises/rules/answer_cells.py), and grading's feedback says why a right function
scored 0."""

from __future__ import annotations

import copy
import json
import linecache
import subprocess
from pathlib import Path

import graded_course as gc
import pytest

from attnlab.exercises import Outcome, cells, lesson3
from attnlab.exercises.rules import answer_cells
from attnlab.exercises.rules.answer_cells import AnswerCellError, find_problem, grading_note
from attnlab.grading.grade import _with_layout_note

ROOT = Path(__file__).resolve().parents[1]
LESSON = "03-softmax"
ANSWER_ID, FUNCTION = "softmax-row", "softmax_row"
RIGHT = (
    "import numpy as np\n\n"
    "def softmax_row(x):\n"
    "    e = np.exp(x - np.max(x))\n"
    "    return e / e.sum()\n"
)


def _learner_nb() -> dict:
    return json.loads((ROOT / "notebooks" / f"{LESSON}.ipynb").read_text(encoding="utf-8"))


def _tag(cell) -> str | None:
    return (cell.get("metadata", {}).get("nbgrader") or {}).get("grade_id")


def _index(nb, grade_id) -> int:
    return next(i for i, c in enumerate(nb["cells"]) if _tag(c) == grade_id)


def _new_cell(code: str, cell_id: str) -> dict:
    return {
        "cell_type": "code",
        "execution_count": None,
        "id": cell_id,
        "metadata": {},
        "outputs": [],
        "source": code,
    }


def with_answers(nb, answers: dict[str, str]) -> dict:
    """``nb`` with the code of the answer cells ``answers`` (grade_id -> code) written in."""
    nb = copy.deepcopy(nb)
    for cell in nb["cells"]:
        if _tag(cell) in answers:
            cell["source"] = answers[_tag(cell)]
    return nb


def mistake(nb, kind: str, code: str = RIGHT, grade_id: str = ANSWER_ID) -> dict:
    """``nb`` with the answer cell ``grade_id`` holding ``code``, then one learner mistake:

    * ``untagged``: the answer cell deleted, ``code`` typed again in a new cell in its place;
    * ``below``: the answer cell left as it is (the stub), ``code`` in a new cell under it;
    * ``duplicate``: the answer cell (holding ``code``) copied and pasted below itself;
    * ``missing``: the answer cell deleted;
    * ``solved``: no mistake.
    """
    nb = copy.deepcopy(nb)
    i = _index(nb, grade_id)
    cells = nb["cells"]
    if kind == "untagged":
        cells[i] = _new_cell(code, "retyped")
    elif kind == "below":
        cells.insert(i + 1, _new_cell(code, "retyped"))
    elif kind == "duplicate":
        cells[i]["source"] = code
        pasted = copy.deepcopy(cells[i])
        pasted["id"] = "pasted"
        cells.insert(i + 1, pasted)
    elif kind == "missing":
        del cells[i]
    elif kind == "solved":
        cells[i]["source"] = code
    else:
        raise ValueError(kind)
    return nb


def write(folder: Path, nb, name: str = f"{LESSON}.ipynb") -> Path:
    path = folder / name
    path.write_text(json.dumps(nb, indent=1), encoding="utf-8")
    return path


def right_function():
    namespace: dict = {}
    exec(compile(RIGHT, "<answer>", "exec"), namespace)
    return namespace[FUNCTION]


def cell_function(code: str, number: int = 7):
    """A function as a notebook cell defines it: its code file is the cell's, in linecache."""
    filename = f"/tmp/ipykernel_4242/{number}.py"
    linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
    namespace: dict = {}
    exec(compile(code, filename, "exec"), namespace)
    return namespace[FUNCTION]


@pytest.fixture
def session(monkeypatch, tmp_path):
    """Open a notebook as JupyterLab does: its path in ``JPY_SESSION_NAME``."""
    monkeypatch.delenv("NBGRADER_VALIDATING", raising=False)

    def open_notebook(nb) -> Path:
        path = write(tmp_path, nb)
        monkeypatch.setenv("JPY_SESSION_NAME", str(path))
        return path

    return open_notebook


# --------------------------------------------------------------------- finding the mistakes
@pytest.mark.parametrize(
    "kind, found",
    [
        ("untagged", "untagged"),
        ("below", "untagged"),
        ("duplicate", "duplicate"),
        ("missing", "missing"),
        ("solved", None),
    ],
)
def test_each_mistake_is_found_in_the_notebook(kind, found):
    nb = mistake(_learner_nb(), kind)
    problem = find_problem(nb, "lesson3.softmax_row", None, "Exercise 3.1")
    assert (problem[0] if problem else None) == found
    # the other exercises of the notebook are where they should be
    assert find_problem(nb, "lesson3.stable_softmax", None, "Exercise 3.2") is None


def test_the_messages_say_what_happened_and_how_to_fix_it_in_jupyterlab():
    nb = _learner_nb()
    kind, untagged = find_problem(mistake(nb, "untagged"), "lesson3.softmax_row", None, "x")
    assert "not the exercise's answer cell" in untagged
    assert "Edit → Undo Delete Cells" in untagged and "Edit → Delete Cells" in untagged
    assert '"Exercise 3.1 — softmax of one row"' in untagged  # the heading the learner sees
    _, below = find_problem(mistake(nb, "below"), "lesson3.softmax_row", None, "x")
    assert "copy your code into the answer cell" in below and "Undo" not in below
    _, duplicate = find_problem(mistake(nb, "duplicate"), "lesson3.softmax_row", None, "x")
    assert "copied and pasted" in duplicate and "delete the copy" in duplicate
    _, missing = find_problem(mistake(nb, "missing"), "lesson3.softmax_row", None, "x")
    assert "gone from the notebook" in missing and "Edit → Undo Delete Cells" in missing
    for message in (untagged, below, duplicate, missing):
        assert "scores 0" in message


def test_the_cell_the_function_came_from_counts_even_below_the_check():
    """In a learner's kernel the answer's own cell is known: a new cell at the bottom of the
    notebook is found though the answer cell above the check still holds the stub."""
    nb = copy.deepcopy(_learner_nb())
    nb["cells"].append(_new_cell(RIGHT, "at-the-bottom"))
    assert find_problem(nb, "lesson3.softmax_row", None, "x") is None  # nothing above says so
    kind, _ = find_problem(nb, "lesson3.softmax_row", None, "x", answer_source=RIGHT)
    assert kind == "untagged"
    solved = mistake(_learner_nb(), "solved")
    assert find_problem(solved, "lesson3.softmax_row", None, "x", answer_source=RIGHT) is None


def test_a_notebook_without_the_exercise_is_not_judged():
    nb = {"cells": [_new_cell(RIGHT, "a")], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    assert find_problem(nb, "lesson3.softmax_row", None, "x") is None


# ----------------------------------------------------------------- the learner's own check
@pytest.mark.parametrize("kind", ["untagged", "duplicate", "missing"])
def test_the_check_says_grading_will_not_see_the_answer(session, kind):
    session(mistake(_learner_nb(), kind))
    feedback = lesson3.softmax_row.check(right_function())
    assert feedback.outcome is Outcome.NOT_GRADED and not feedback
    assert "scores 0" in feedback.message
    assert "Your function itself passes the check." in feedback.message
    assert "grading will not see this answer" in str(feedback)


def test_the_check_finds_the_notebook_through_ipython_session(monkeypatch, tmp_path):
    """ipykernel copies ``JPY_SESSION_NAME`` into the notebook as ``__session__``."""
    path = write(tmp_path, mistake(_learner_nb(), "missing"))
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    monkeypatch.delenv("NBGRADER_VALIDATING", raising=False)
    shell = type("Shell", (), {"user_ns": {"__session__": str(path)}})()
    monkeypatch.setattr(answer_cells, "_shell", lambda: shell)
    assert lesson3.softmax_row.check(right_function()).outcome is Outcome.NOT_GRADED


def test_a_right_answer_in_its_cell_is_just_correct(session):
    session(mistake(_learner_nb(), "solved"))
    assert lesson3.softmax_row.check(cell_function(RIGHT)).outcome is Outcome.CORRECT


def test_no_notebook_no_false_alarm(monkeypatch, tmp_path):
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    monkeypatch.delenv("NBGRADER_VALIDATING", raising=False)
    assert lesson3.softmax_row.check(right_function()).outcome is Outcome.CORRECT
    monkeypatch.setenv("JPY_SESSION_NAME", str(tmp_path / "renamed.ipynb"))  # not there
    assert lesson3.softmax_row.check(right_function()).outcome is Outcome.CORRECT
    other = write(tmp_path, {"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
    monkeypatch.setenv("JPY_SESSION_NAME", str(other))  # a notebook without this exercise
    assert lesson3.softmax_row.check(right_function()).outcome is Outcome.CORRECT
    (tmp_path / "broken.ipynb").write_text("{not json", encoding="utf-8")
    monkeypatch.setenv("JPY_SESSION_NAME", str(tmp_path / "broken.ipynb"))
    assert lesson3.softmax_row.check(right_function()).outcome is Outcome.CORRECT


def test_a_wrong_answer_in_the_wrong_cell_hears_both(session):
    session(mistake(_learner_nb(), "untagged"))
    feedback = lesson3.softmax_row.check(cell_function("def softmax_row(x):\n    return x\n"))
    assert feedback.outcome is Outcome.NOT_GRADED
    assert "The check also says: not yet right." in feedback.message


def test_a_check_that_must_pass_fails_with_the_message_in_short_lines(session, monkeypatch):
    session(mistake(_learner_nb(), "duplicate"))
    monkeypatch.setenv("ATTNLAB_REQUIRE_CORRECT", "1")
    with pytest.raises(AnswerCellError) as raised:
        lesson3.softmax_row.check(right_function())
    lines = raised.value._render_traceback_()
    assert "delete the copy" in " ".join(lines)
    assert max(map(len, lines)) <= answer_cells.WIDTH


def test_autograding_does_not_look(session, monkeypatch):
    session(mistake(_learner_nb(), "missing"))
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    assert bool(lesson3.softmax_row.check(right_function()))


def test_a_check_cell_whose_answer_cell_is_gone_says_so(session):
    """After a restart the function is not defined at all: the NameError sentence says why."""
    session(mistake(_learner_nb(), "missing"))
    sentence = cells.name_error_sentence(
        NameError("name 'softmax_row' is not defined", name="softmax_row"),
        "lesson3.softmax_row.check(softmax_row)",
    )
    assert sentence.startswith("`softmax_row` is not defined. The answer cell of")
    assert "Edit → Undo Delete Cells" in sentence


def test_validation_finds_the_notebook_its_kernel_ran(monkeypatch, tmp_path):
    """Under ``nbgrader validate`` the notebook is the one in the working folder whose code
    cells this kernel ran (another copy beside it does not confuse it)."""
    nb = mistake(_learner_nb(), "missing")
    write(tmp_path, nb)
    write(tmp_path, _learner_nb(), "03-softmax-Copy1.ipynb")
    ran = [gc._code(c) for c in nb["cells"] if c["cell_type"] == "code" and gc._code(c).strip()]
    history = type("History", (), {"input_hist_raw": ["", *ran]})()
    shell = type("Shell", (), {"history_manager": history, "user_ns": {}})()
    monkeypatch.setattr(answer_cells, "_shell", lambda: shell)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NBGRADER_VALIDATING", "1")
    assert answer_cells.notebook() == nb
    history.input_hist_raw = ["", "print('another notebook')"]
    assert answer_cells.notebook() is None


# ------------------------------------------------------------------------------ grading
def test_grading_feedback_says_why_an_untagged_answer_scored_nothing():
    from attnlab.exercises.kit.feedback import Feedback

    source_nb = gc.read(ROOT / "source" / LESSON / f"{LESSON}.ipynb")
    stub = Feedback("Exercise 3.1", Outcome.NOT_ATTEMPTED, "Write your answer…")
    for kind in ("untagged", "below"):
        student = mistake(_learner_nb(), kind)
        note = grading_note(student, ANSWER_ID, FUNCTION)
        assert "in a cell without the exercise's tag" in note
        assert "starts `import numpy as np`" in note
        told = _with_layout_note(stub, source_nb, student, FUNCTION)
        assert told.message.startswith("Your notebook defines `softmax_row` in a cell without")
        assert told.outcome is stub.outcome and told.score == 0
    for kind in ("solved", "missing", "duplicate"):
        assert grading_note(mistake(_learner_nb(), kind), ANSWER_ID, FUNCTION) == ""


# ------------------------------------------------------------- stock nbgrader validate
@pytest.mark.slow
def test_stock_nbgrader_validate_reports_each_mistake(tmp_path):
    """A lesson 3 release notebook, every other exercise solved, validated as a student does:
    ``nbgrader validate`` in the notebook's folder, without the course's config."""
    course = gc.make_course(tmp_path / "course")
    gc.nbgrader(course, "generate_assignment", LESSON, "--force")
    source_nb = gc.read(course / "source" / LESSON / f"{LESSON}.ipynb")
    release_nb = gc.read(course / "release" / LESSON / f"{LESSON}.ipynb")
    solved = with_answers(release_nb, gc.worked(source_nb))
    right = gc.worked(source_nb)[ANSWER_ID]
    said, codes = {}, {}
    for kind in ("solved", "untagged", "duplicate", "missing"):
        folder = tmp_path / "student" / kind
        folder.mkdir(parents=True)
        path = write(folder, mistake(solved, kind, right))
        result = subprocess.run(
            [*gc.NBGRADER, "validate", path.name],
            cwd=folder,
            env=gc.nbgrader_env(),
            capture_output=True,
            text=True,
            timeout=900,
        )
        said[kind], codes[kind] = result.stdout + result.stderr, result.returncode
        print(f"\n===== nbgrader validate: {kind} (exit {result.returncode})\n{said[kind]}")
    assert "Success! Your notebook passes all the tests." in said["solved"], said["solved"]
    for kind, words in [
        ("untagged", "not the exercise's answer cell"),
        ("missing", "gone from the notebook"),
    ]:
        assert "VALIDATION FAILED ON 1 CELL(S)!" in said[kind], said[kind]
        assert "Success!" not in said[kind]
        assert words in " ".join(said[kind].split()), said[kind]
    # Two cells with one grade_id: nbgrader's own metadata check stops validate before any cell
    # runs (so the check's sentence cannot appear there); the learner's check says it instead.
    assert "Duplicate grade id: softmax-row" in said["duplicate"], said["duplicate"]
    assert "Success!" not in said["duplicate"] and codes["duplicate"] != 0


def test_jupyterlab_says_which_cell_ran_before_the_notebook_is_saved():
    """JupyterLab sends the running cell's metadata (nbgrader's tag included) with its id: a
    function from an untagged cell is found though the saved file still shows the stub."""
    saved = _learner_nb()
    untagged = {FUNCTION: {"cell_id": "new", "grade_id": None}}
    kind, message = find_problem(saved, "lesson3.softmax_row", None, "x", live=untagged)
    assert kind == "untagged" and "copy your code into the answer cell" in message
    tagged = {FUNCTION: {"cell_id": "a986415a", "grade_id": ANSWER_ID}}
    assert find_problem(saved, "lesson3.softmax_row", None, "x", live=tagged) is None


def test_the_running_cell_is_read_from_jupyterlabs_request_only():
    def shell_sending(metadata):
        kernel = type("Kernel", (), {"get_parent": lambda self, channel: {"metadata": metadata}})
        return type("Shell", (), {"kernel": kernel()})()

    lab = {"cellId": "c1", "deletedCells": [], "recordTiming": False}
    tag = {"solution": True, "grade_id": ANSWER_ID}
    assert cells._cell_tag(shell_sending(lab)) == {"cell_id": "c1", "grade_id": None}
    assert cells._cell_tag(shell_sending({**lab, "nbgrader": tag}))["grade_id"] == ANSWER_ID
    assert cells._cell_tag(shell_sending({"cellId": "c1"})) is None  # not JupyterLab's request
    assert cells._cell_tag(shell_sending({})) is None
    assert cells._cell_tag(object()) is None


def test_validate_gets_the_plain_sentences_autograding_does_not(monkeypatch):
    monkeypatch.setenv("NBGRADER_EXECUTION", "validate")
    monkeypatch.setenv("NBGRADER_VALIDATING", "1")
    assert not cells._under_grading()
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    monkeypatch.delenv("NBGRADER_VALIDATING")
    assert cells._under_grading()


def test_the_check_refuses_a_lesson_constant_as_grading_does(monkeypatch):
    """Lesson 2's setup cell imports ``N_KEYS`` (an int) from ``attnlab.explorers.scaling``,
    which answers may not import: grading refuses the name, and the learner's check must too
    (a red team's right ``unit_variance_scale(d_k, n_keys=N_KEYS)`` was "correct" in the
    notebook and scored 0)."""
    import IPython

    from attnlab.exercises import lesson2
    from attnlab.exercises.rules.answer_lint import answer_cell_problems

    setup = "from attnlab.explorers.scaling import D_K_VALUES, N_KEYS\n"
    answer = (
        "import math\n\ndef unit_variance_scale(d_k, n_keys=N_KEYS):\n"
        "    return 1 / math.sqrt(d_k)\n"
    )
    filename = "<ipython-input-7-0123456789ab>"
    linecache.cache[filename] = (len(answer), None, answer.splitlines(True), filename)
    namespace = {"_ih": ["", setup, answer], "N_KEYS": 2048, "D_K_VALUES": (1, 2)}
    exec(compile(answer, filename, "exec"), namespace)  # noqa: S102 - the learner's cell
    shell = type("Shell", (), {"user_ns": namespace})()
    monkeypatch.setattr(IPython, "get_ipython", lambda: shell)
    function = namespace["unit_variance_scale"]
    reasons = answer_cell_problems(function)
    assert any("N_KEYS" in reason for reason in reasons), reasons
    feedback = lesson2.unit_variance_scale.check(function)
    assert feedback.outcome is not Outcome.CORRECT and "N_KEYS" in feedback.message
    linecache.cache.pop(filename, None)


def _shell_that_ran(monkeypatch, cells: list[str], namespace: dict):
    """A stand-in for the learner's IPython that ran ``cells`` (as typed) into ``namespace``."""
    import IPython

    history = type("History", (), {"input_hist_raw": ["", *cells]})()
    shell = type("Shell", (), {"user_ns": namespace, "history_manager": history})()
    monkeypatch.setattr(IPython, "get_ipython", lambda: shell)


@pytest.mark.parametrize(
    "cell, compiled, exercise, reason",
    [
        (  # %%time compiles the cell as "<timed exec>": a right answer, refused in grading
            "%%time\ndef largest_score(scores):\n    return max(scores)\n",
            ("def largest_score(scores):\n    return max(scores)\n", "<timed exec>"),
            "lesson0.largest_score",
            "%%time",
        ),
        (  # an lru_cache wrapper has no code of its own; the cell also draws with plt
            "import functools\nimport numpy as np\n\n@functools.lru_cache\ndef causal(n):\n"
            "    return np.tril(np.ones((n, n), dtype=bool))\n\nplt.imshow(causal(4))\n",
            (
                "import functools\nimport numpy as np\n\n@functools.lru_cache\ndef causal(n):\n"
                "    return np.tril(np.ones((n, n), dtype=bool))\n",
                "<string>",
            ),
            "lesson6.causal_mask_from_scratch",
            "plt",
        ),
    ],
    ids=["time-magic", "lru-cache-and-plt"],
)
def test_the_check_lints_the_answer_cell_as_typed_when_the_function_has_no_cell(
    monkeypatch, cell, compiled, exercise, reason
):
    """The sixth red team's right answers that the learner's check called correct and grading
    refused: the check finds the cell that binds the answer's name in the history as typed,
    and refuses what grading refuses."""
    import importlib

    import matplotlib.pyplot as plt

    namespace = {"plt": plt}
    exec(compile(compiled[0], compiled[1], "exec"), namespace)  # noqa: S102 - the cell's code
    _shell_that_ran(monkeypatch, ["from attnlab.exercises import lesson0", cell], namespace)
    module, attr = exercise.split(".")
    check = getattr(importlib.import_module(f"attnlab.exercises.{module}"), attr)
    function = namespace[check.answer]
    feedback = check.check(function)
    assert feedback.outcome is Outcome.WRONG, feedback.message
    assert reason in feedback.message and "would not be run for grading" in feedback.message


def test_an_answer_from_a_module_file_is_not_taken_for_a_cell(monkeypatch):
    """A function the learner imported from a file of their own keeps being checked as it is
    (grading has no such file to lint; the check says nothing it cannot know)."""
    from attnlab.exercises import lesson0
    from attnlab.exercises.rules.answer_lint import answer_cell_problems

    _shell_that_ran(monkeypatch, ["largest_score = max  # import os"], {})
    assert answer_cell_problems(lesson0.largest_score.check, (), "largest_score") == []


# ----------------------------------------------------------------- what the answer uses
def _ran(monkeypatch, cells: list[str]) -> dict:
    """Run ``cells`` as a learner's kernel would (each compiled as a cell file, kept in the
    history as typed) and return the namespace."""
    namespace: dict = {}
    for number, cell in enumerate(cells, start=1):
        filename = f"<ipython-input-{number}-{number:012x}>"
        linecache.cache[filename] = (len(cell), None, cell.splitlines(True), filename)
        exec(compile(cell, filename, "exec"), namespace)  # noqa: S102 - the learner's cell
    _shell_that_ran(monkeypatch, cells, namespace)
    return namespace


LESSON1_SETUP = next(  # the lesson's first code cell, as the release has it
    "".join(c["source"])
    for c in json.loads((ROOT / "notebooks" / "01-dot-product-scores.ipynb").read_text())["cells"]
    if c["cell_type"] == "code"
)
DOT = (
    "import numpy as np\n\ndef dot(q, k):\n"
    "    return float(np.sum(np.asarray(q) * np.asarray(k)))\n"
)
SCORE_MATRIX = (
    "import numpy as np\n\ndef score_matrix(Q, K):\n"
    "    return np.array([[dot(q, k) for k in K] for q in Q])\n"
)


@pytest.mark.parametrize(
    "cells, said",
    [
        (  # the seventh red team's: a helper in a scratch cell the answer cell calls
            [LESSON1_SETUP, "def helper(q, k):\n    return sum(a * b for a, b in zip(q, k))\n",
             DOT, "import numpy as np\n\ndef score_matrix(Q, K):\n"
             "    return np.array([[helper(q, k) for k in K] for q in Q])\n"],
            "`helper` is defined in a cell that grading does not run",
        ),
        (  # and: an earlier answer, whose cell grading refuses (a magic), called by a later one
            [LESSON1_SETUP, DOT + "%timeit dot([1.0], [2.0])\n", SCORE_MATRIX],
            "`dot` comes from an answer cell that grading refuses",
        ),
    ],
    ids=["scratch-helper", "refused-earlier-answer"],
)  # fmt: skip
def test_the_check_says_what_grading_will_not_have(monkeypatch, cells, said):
    from attnlab.exercises import lesson1

    namespace = _ran(monkeypatch, [c.replace("%timeit", "# %timeit") for c in cells])
    _shell_that_ran(monkeypatch, cells, namespace)  # the history holds the cells as typed
    feedback = lesson1.score_matrix.check(namespace["score_matrix"])
    assert feedback.outcome is Outcome.NOT_GRADED, feedback.message
    assert said in feedback.message and "Your function itself passes the check." in feedback.message


@pytest.mark.parametrize(
    "setup", [LESSON1_SETUP, "# my notes\n" + LESSON1_SETUP], ids=["as", "edited"]
)
def test_an_answer_using_the_lesson_and_other_answers_is_just_checked(monkeypatch, setup):
    """Names the lesson's own cells bind are there in grading, even when the learner edited
    the cell that binds them (grading runs the lesson's cells from the source)."""
    from attnlab.exercises import lesson1

    namespace = _ran(monkeypatch, [setup, DOT, SCORE_MATRIX])
    assert lesson1.score_matrix.check(namespace["score_matrix"]).outcome is Outcome.CORRECT
