"""What every checked exercise of every lesson promises, found automatically.

Each ``Exercise`` in ``attnlab.exercises.lessonN`` modules (new lessons are picked up
without editing this file):

* a placeholder answer (``None``, ``...`` or a stub still raising NotImplementedError) is
  *not attempted*, with no traceback;
* an answer that crashes or returns junk is *wrong*, never an exception;
* the worked solution in the lesson's source notebook is *correct*;
* there are 2 or 3 hints and a solution to show; no hint holds a line of any worked solution;
* when grading (``ATTNLAB_REQUIRE_CORRECT=1``) anything but a correct answer raises;
* the worked solution is still accepted in every other form its task allows: computed in
  float32 (judged to float32 precision), returning Python lists, and row by row where the task
  hands over a batch of rows, whose check must then pass such a batch. Where a form does not
  apply, ``NOT_APPLICABLE`` names the exercise and says why (and a test fails if that is stale).

The lesson test files hold what is specific to each check: the correct answers it accepts
and the wrong ones it rejects, with the reason it must give.
"""

from __future__ import annotations

import copy
import importlib
import warnings
from pathlib import Path

import answer_tables
import numpy as np
import pytest
from solution_lines import leaks
from source_answers import worked_answer

import attnlab.exercises
from attnlab.exercises import Exercise, Outcome
from attnlab.exercises.solutions import source_folder, worked_solutions

#: Every exercise of every lesson, from the course's map (tests/test_exercise_map.py keeps the
#: map whole).
EXERCISES: list[Exercise] = list(attnlab.exercises.EXERCISES.values())
by_title = pytest.mark.parametrize("exercise", EXERCISES, ids=lambda e: e.title)


def stub(*args, **kwargs):
    raise NotImplementedError()


def crashes(*args, **kwargs):
    raise KeyError("oops")


def test_every_lesson_with_exercises_is_found():
    lessons = {e.title.split()[1].split(".")[0] for e in EXERCISES if e.title.startswith("Ex")}
    assert len(EXERCISES) >= 10 and {"1", "2", "3"} <= lessons, [e.title for e in EXERCISES]


@by_title
def test_each_check_is_tested_on_enough_right_and_wrong_answers(exercise):
    """At least 2 different correct answers accepted and 3 known-wrong ones rejected."""
    for path in sorted(Path(__file__).parent.glob("test_exercises_lesson*.py")):
        importlib.import_module(path.stem)  # fills answer_tables.COUNTS
    counts = answer_tables.COUNTS.get(exercise.title, {"right": 0, "wrong": 0})
    assert counts["right"] >= 2 and counts["wrong"] >= 3, counts


@by_title
@pytest.mark.parametrize("answer", [None, ..., stub], ids=["None", "Ellipsis", "stub"])
def test_placeholders_are_not_attempted(exercise, answer):
    feedback = exercise.check(answer)
    assert feedback.outcome is Outcome.NOT_ATTEMPTED, feedback.message
    assert "Traceback" not in feedback.message


@by_title
@pytest.mark.parametrize(
    "answer",
    [
        crashes,
        lambda *a, **k: "weights",
        12345.678,
        lambda *a, **k: (*a, "extra"),
        lambda *a, **k: ([1.0, 2.0], [3.0]),
        lambda *a, **k: [[0.5], 1.0, "x"],
        lambda *a, **k: object(),
    ],
    ids=["crashes", "junk", "number", "its-own-inputs", "ragged", "mixed-list", "object"],
)
def test_crashes_and_junk_are_wrong_not_raised(exercise, answer):
    feedback = exercise.check(answer)
    assert feedback.outcome is Outcome.WRONG, feedback.message
    assert "Traceback" not in feedback.message


@by_title
def test_worked_solution_is_correct(exercise):
    feedback = exercise.check(worked_answer(exercise))
    assert feedback.outcome is Outcome.CORRECT, feedback.message


@by_title
def test_hints_come_in_tiers_and_a_solution_is_shown(exercise):
    exercise = copy.copy(exercise)  # hint() remembers how far it got; keep the shared one fresh
    assert 2 <= len(exercise.hints) <= 3
    first, last = exercise.hint(), exercise.hint(len(exercise.hints))
    assert "Hint 1 of" in first.markdown and "last hint" in last.markdown
    assert "A solution" in exercise.solution().markdown


@by_title
def test_no_hint_gives_the_code_away(exercise):
    """The last tier guides; it never holds a telling line of a worked solution."""
    texts = {f"hint {i}": text for i, text in enumerate(exercise.hints, 1)}
    assert leaks(texts) == []


@by_title
def test_grading_raises_unless_correct(exercise, monkeypatch):
    monkeypatch.setenv("ATTNLAB_REQUIRE_CORRECT", "1")
    for answer in (None, crashes):
        with pytest.raises(AssertionError):
            exercise.check(answer)
    assert exercise.check(worked_answer(exercise))


# ----------------------------------------------------------- formulations every task allows
#
# Each exercise is also tried on answers that compute the same thing in another way the task
# allows: in float32 (float-array inputs cast to float32, so the answer is float32 and must be
# accepted to float32 precision), returning Python lists (``.tolist()``) where the answer is an
# array, and, where the task hands over a batch of rows, row by row. Where a formulation does
# not apply, NOT_APPLICABLE says so and why; a test fails if an exercise is neither tried nor
# listed (and if a listed reason is stale: the formulation applies after all).

FORMULATIONS = ("float32", "lists", "row by row")

#: (exercise title, formulation) -> why the formulation does not apply to that task.
NOT_APPLICABLE = {
    ("Warm-up (the largest score)", "lists"): "the answer is one number, not an array",
    ("Warm-up (the largest score)", "row by row"): "the task is one row, not a batch",
    ("Exercise 1.1 (one dot product)", "lists"): "the answer is one number, not an array",
    ("Exercise 1.1 (one dot product)", "row by row"): "the task is one pair of vectors",
    ("Exercise 1.3 (the shape of the scores)", "float32"): "the inputs are three ints",
    ("Exercise 1.3 (the shape of the scores)", "lists"): "the answer is a tuple of ints",
    ("Exercise 1.3 (the shape of the scores)", "row by row"): "the inputs are three ints",
    ("Exercise 1.4 (a query that ignores a key)", "row by row"): "the task is one 2-D key",
    ("Exercise 2.1 (measure Var(q · k))", "lists"): "the answer is one number",
    ("Exercise 2.1 (measure Var(q · k))", "row by row"): "one variance over all the rows: "
    "the rows are samples of one statistic, not a batch",
    ("Exercise 2.2 (the factor that gives unit variance)", "float32"): "the input is an int",
    ("Exercise 2.2 (the factor that gives unit variance)", "lists"): "the answer is a number",
    ("Exercise 2.2 (the factor that gives unit variance)", "row by row"): "the input is an int",
    ("Exercise 2.3 (which rows collapse?)", "row by row"): "the answer is a list of row "
    "numbers, which a row-by-row loop cannot return without knowing its row index",
    ("Exercise 3.1 (softmax of one row)", "row by row"): "the task is one row",
    ("Exercise 4.2 (name the four patterns)", "float32"): "the answer is a dict of names",
    ("Exercise 4.2 (name the four patterns)", "lists"): "the answer is a dict of names",
    ("Exercise 4.2 (name the four patterns)", "row by row"): "the answer is a dict of names",
    ("Exercise 4.3 (the hub key)", "lists"): "the answer is one token (a str)",
    ("Exercise 4.3 (the hub key)", "row by row"): "the hub is found from all rows together",
    ("Exercise 5.1 (mix the values for one query)", "row by row"): "the task is one query",
    ("Exercise 5.3 (the box every output lies in)", "row by row"): "the box is found from "
    "all the value rows together",
    ("Exercise 6.1 (the shapes of batched attention)", "float32"): "the inputs are ints",
    ("Exercise 6.1 (the shapes of batched attention)", "lists"): "the answer is shapes",
    ("Exercise 6.1 (the shapes of batched attention)", "row by row"): "the inputs are ints",
    ("Exercise 6.2 (a causal mask from scratch)", "float32"): "the input is an int",
    ("Exercise 6.2 (a causal mask from scratch)", "row by row"): "the input is an int",
    ("Exercise 6.3 (softmax with a mask)", "row by row"): "the mask would have to be split "
    "with the scores (it broadcasts), which a generic row loop cannot do",
    ("Exercise 7.1 (quiz A: scores, scaling and softmax)", "float32"): "a quiz: letters",
    ("Exercise 7.1 (quiz A: scores, scaling and softmax)", "lists"): "a quiz: letters",
    ("Exercise 7.1 (quiz A: scores, scaling and softmax)", "row by row"): "a quiz: letters",
    ("Exercise 7.2 (quiz B: heatmaps, values, shapes and masks)", "float32"): "a quiz",
    ("Exercise 7.2 (quiz B: heatmaps, values, shapes and masks)", "lists"): "a quiz",
    ("Exercise 7.2 (quiz B: heatmaps, values, shapes and masks)", "row by row"): "a quiz",
    ("Exercise 7.3 (bug hunt: scaling by \u221ad_model)", "row by row"): "the rows of x are "
    "the keys as well as the queries, so no row can be computed alone",
    ("Exercise 7.4 (bug hunt: masking after the softmax)", "row by row"): "a causal row "
    "depends on its position, which one query alone does not know",
    ("Exercise 8.1 (memory of the scores)", "float32"): "the inputs are sizes and a dtype",
    ("Exercise 8.1 (memory of the scores)", "lists"): "the answer is a number of bytes",
    ("Exercise 8.1 (memory of the scores)", "row by row"): "the inputs are sizes and a dtype",
    ("Exercise 8.2 (the online softmax update)", "row by row"): "one running (m, l) state",
    ("Exercise 8.3 (one tile of attention)", "row by row"): "m, l and acc would have to be "
    "split with the rows of scores, which a generic row loop cannot do",
    ("Exercise 7.6 (an input that exposes the bug)", "float32"): "the answer takes no input: "
    "it returns one (scores, mask)",
    ("Exercise 7.6 (an input that exposes the bug)", "row by row"): "the answer takes no input",
    ("Exercise 8.4 (the whole tiled loop)", "row by row"): "it also returns the tile count of "
    "the whole loop, and a causal row depends on its position",
    ("Exercise 9.2 (one attention backward step)", "row by row"): "the gradients of k and v "
    "add up over all the queries",
    ("Exercise 9.3 (which token does the head read?)", "float32"): "the answer is a token",
    ("Exercise 9.3 (which token does the head read?)", "lists"): "the answer is a token",
    ("Exercise 9.3 (which token does the head read?)", "row by row"): "the answer is a token",
    ("Exercise 10.1 (rotate one pair)", "row by row"): "the answer is one pair, not rows",
    ("Exercise 10.3 (attention with RoPE)", "row by row"): "every query attends to every key",
    ("Exercise 10.4 (the causal ALiBi bias)", "row by row"): "the answer is built from sizes and "
    "slopes, not from rows",
    ("Exercise 11.1 (previous-token scores)", "row by row"): "a head's score averages over all "
    "its rows (queries)",
    ("Exercise 11.2 (the induction score: prefix matching)", "row by row"): "a head's score "
    "averages over the repeat's rows, found by the length",
    ("Exercise 11.3 (predict the next token as the two heads do)", "row by row"): "each "
    "prediction reads the earlier copy, L positions back in the sequence",
    ("Exercise 11.3 (predict the next token as the two heads do)", "float32"): "the inputs and "
    "the answer are token ids, integers",
}

#: Exercises whose task hands over a batch of rows (a matrix, one row per query), with the
#: arguments that hold it (split together): each is tried row by row, and the check must pass
#: such a batch.
ROW_BATCHES = {
    "Exercise 1.2 (the score matrix)": (0,),
    "Exercise 3.2 (stable softmax of a score matrix)": (0,),
    "Exercise 3.3 (softmax with temperature)": (0,),
    "Exercise 4.1 (the entropy of every row)": (0,),
    "Exercise 5.2 (every output at once)": (0,),
    "Exercise 7.5 (bug hunt: softmax without the max shift)": (0,),
    "Exercise 9.1 (the gradient of softmax)": (0, 1),
    "Exercise 10.2 (RoPE for a whole head)": (0, 1),
}

#: (exercise title, formulation) -> why the check fails it: other engineers' exercises, for
#: the lead to follow up (strict xfail, so a fix makes the suite say so).
KNOWN_FAILURES: dict[tuple[str, str], str] = {}


def _float_array(value) -> bool:
    return isinstance(value, np.ndarray) and value.dtype.kind == "f"


#: Exercises whose task asks for some inputs to be read a block at a time and never copied
#: whole (a copy would break the memory the check measures): their float32 form casts those
#: inputs (by position) one block at a time, as the task asks, and the others whole.
CAST_BY_BLOCK = {"Exercise 8.4 (the whole tiled loop)": (1, 2)}  # k and v


class Float32Blocks(np.ndarray):
    """A float64 array whose every slice comes out cast to float32: the inputs of a task that
    forbids copying them whole, converted a block at a time as its text asks."""

    def __getitem__(self, index):
        return np.asarray(super().__getitem__(index), dtype=np.float32)


def in_float32(answer, by_block=()):
    """The answer computed in float32: every float-array input is cast first (those at the
    positions ``by_block`` a block at a time, as they are sliced)."""

    def cast(position, a):
        if not _float_array(a):
            return a
        return a.view(Float32Blocks) if position in by_block else a.astype(np.float32)

    def answer_in_float32(*args, **kwargs):
        args = [cast(p, a) for p, a in enumerate(args)]
        kwargs = {k: v.astype(np.float32) if _float_array(v) else v for k, v in kwargs.items()}
        return answer(*args, **kwargs)

    return answer_in_float32


def as_lists(answer):
    """The answer returned as (nested) Python lists where it is an array."""

    def answer_as_lists(*args, **kwargs):
        return listed(answer(*args, **kwargs))

    return answer_as_lists


def listed(result):
    """``result`` with every array of 1 or more dims (also inside a tuple) made a list."""
    if isinstance(result, tuple):
        return tuple(listed(item) for item in result)
    return result.tolist() if isinstance(result, np.ndarray) and result.ndim else result


def has_array(result) -> bool:
    if isinstance(result, tuple):
        return any(has_array(item) for item in result)
    return isinstance(result, np.ndarray) and result.ndim > 0


def row_by_row(answer, positions: tuple):
    """The answer applied to one row of the arguments at ``positions`` at a time (a batch of
    one row, shape (1, n)), the results stacked."""

    def answer_row_by_row(*args):
        if np.ndim(args[positions[0]]) < 2:  # a single row: nothing to split
            return answer(*args)

        def one(i):
            return [a[i : i + 1] if p in positions else a for p, a in enumerate(args)]

        rows = [answer(*one(i)) for i in range(len(args[positions[0]]))]
        return np.concatenate([np.asarray(row) for row in rows])

    return answer_row_by_row


def calls_made(exercise, answer) -> list[tuple]:
    """The argument tuples the check passes to ``answer`` (the answer is still judged)."""
    seen = []

    def spy(*args, **kwargs):
        seen.append(args + tuple(kwargs.values()))
        return answer(*args, **kwargs)

    exercise.check(spy)
    return seen


def applies(exercise, formulation, worked) -> bool:
    """Whether ``formulation`` changes anything for ``exercise`` (judged from what it is fed)."""
    if formulation == "row by row":
        return exercise.title in ROW_BATCHES
    seen = calls_made(exercise, worked)
    if formulation == "float32":
        return any(_float_array(a) for args in seen for a in args)
    return any(has_array(worked(*copy.deepcopy(args))) for args in seen)


def formulated(formulation, worked, exercise):
    if formulation == "float32":
        return in_float32(worked, CAST_BY_BLOCK.get(exercise.title, ()))
    if formulation == "lists":
        return as_lists(worked)
    return row_by_row(worked, ROW_BATCHES[exercise.title])


CASES = [
    pytest.param(
        exercise,
        formulation,
        id=f"{exercise.title}: {formulation}",
        marks=[pytest.mark.xfail(strict=True, reason=KNOWN_FAILURES[exercise.title, formulation])]
        if (exercise.title, formulation) in KNOWN_FAILURES
        else [],
    )
    for exercise in EXERCISES
    for formulation in FORMULATIONS
]


@pytest.mark.parametrize(("exercise", "formulation"), CASES)
def test_every_formulation_the_task_allows_is_accepted(exercise, formulation):
    worked = worked_answer(exercise)
    reason = NOT_APPLICABLE.get((exercise.title, formulation))
    if reason is not None:
        assert not applies(exercise, formulation, worked), (
            f"NOT_APPLICABLE says {formulation!r} does not apply ({reason}), but it does"
        )
        return
    assert applies(exercise, formulation, worked), (
        f"{formulation!r} changes nothing for this check: list it in NOT_APPLICABLE with the reason"
    )
    feedback = exercise.check(formulated(formulation, worked, exercise))
    assert feedback.outcome is Outcome.CORRECT, feedback.message


@pytest.mark.parametrize("title", sorted(ROW_BATCHES))
def test_checks_of_batch_tasks_pass_a_batch(title):
    """A task that takes one row per query is checked on several rows at once."""
    exercise = next(e for e in EXERCISES if e.title == title)
    seen = calls_made(exercise, worked_answer(exercise))
    batches = [args[ROW_BATCHES[title][0]] for args in seen]
    assert any(np.ndim(b) >= 2 and np.shape(b)[0] >= 2 for b in batches), [
        np.shape(b) for b in batches
    ]


def test_tables_name_real_exercises_and_formulations():
    titles = {e.title for e in EXERCISES}
    for title, formulation in [*NOT_APPLICABLE, *KNOWN_FAILURES]:
        assert title in titles and formulation in FORMULATIONS, (title, formulation)
    assert set(ROW_BATCHES) <= titles


# ------------------------------------------------- every known mistake, in every shape, is told
#
# The lesson test files list each check's known-wrong answers (their ``test_rejects`` tables,
# which feed each as it is written). Fed each of them in every formulation tried above
# (float32, lists, row by row where the task hands over rows), a check answers with feedback:
# never an exception of its own, whatever shape the wrong answer comes back in.


def known_mistakes() -> list:
    """``(exercise, name, answer)`` for every wrong answer in the lesson test files' tables."""
    found = []
    for path in sorted(Path(__file__).parent.glob("test_exercises_lesson*.py")):
        module = importlib.import_module(path.stem)
        rejects = getattr(module, "test_rejects", None)
        for mark in getattr(rejects, "pytestmark", []):
            if mark.name != "parametrize":
                continue
            for param in mark.args[1]:
                table, name = param.values
                answer, reason = table.wrong[name]
                if COSTLY in reason:
                    continue
                found.append((table.exercise, name, answer))
    return found


#: What lesson 9's reasons for an answer stopped at its time limit say (differences, one forward
#: pass per input): such an answer is stopped before its result is looked at, so feeding it in
#: other shapes tests nothing more and costs the whole time limit each time (2-8 s).
COSTLY = "forward passes per"


#: Each mistake in every formulation but the one it is written in: as written, each is judged by
#: its own table's ``test_rejects`` (rejected, with its reason, no traceback, warnings as errors).
MISTAKES = [
    pytest.param(exercise, answer, formulation, id=f"{exercise.title}: {name}: {formulation}")
    for exercise, name, answer in known_mistakes()
    for formulation in FORMULATIONS
    if formulation != "row by row" or exercise.title in ROW_BATCHES
]


def test_every_exercise_has_known_mistakes_to_feed():
    titles = {param.values[0].title for param in MISTAKES}
    assert titles == {e.title for e in EXERCISES if answer_tables.COUNTS.get(e.title)}


@pytest.mark.parametrize(("exercise", "answer", "formulation"), MISTAKES)
def test_every_known_mistake_in_every_shape_gets_feedback_not_an_exception(
    exercise, answer, formulation
):
    answer = formulated(formulation, answer, exercise)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        feedback = exercise.check(answer)  # an exception here fails the test
    assert feedback.outcome in tuple(Outcome), feedback
    assert feedback.message and "Traceback" not in feedback.message


# ------------------------------------------------------------------------------- scipy
# An answer may use scipy (docs/instructors.md, "What an answer cell may contain"): where a
# task allows a scipy formulation, the learner's check accepts it and the grading lint lets it
# through; where scipy has the very function the task asks for, it is forbidden like the
# course's own, and both say so.

#: (exercise id, what it is) -> an answer cell that computes the task with scipy.
SCIPY_RIGHT = {
    ("4.1", "scipy.special.entr"): (
        "import scipy.special\n"
        "def row_entropy(weights):\n"
        "    return scipy.special.entr(weights).sum(axis=1)  # (n_q,)\n"
    ),
    ("4.1", "scipy.special.xlogy"): (
        "from scipy.special import xlogy\n"
        "def row_entropy(weights):\n"
        "    return -xlogy(weights, weights).sum(axis=1)  # (n_q,)\n"
    ),
    ("7.3", "scipy.special.softmax"): "scipy-softmax",  # the worked fix, scipy's softmax
    ("7.4", "scipy.special.softmax"): "scipy-softmax",
}

#: (exercise id, the function) -> an answer cell that hands the task to scipy: forbidden.
SCIPY_FORBIDDEN = {
    ("3.1", "scipy.special.softmax"): (
        "import scipy.special\ndef softmax_row(x):\n    return scipy.special.softmax(x)\n"
    ),
    ("3.2", "scipy.special.logsumexp"): (
        "from scipy.special import logsumexp\n"
        "def stable_softmax(scores):\n"
        "    return np.exp(scores - logsumexp(scores, axis=-1, keepdims=True))  # (n_q, n_k)\n"
    ),
    ("3.3", "scipy.special.log_softmax"): (
        "import scipy.special\n"
        "def softmax_with_temperature(x, T):\n"
        "    return np.exp(scipy.special.log_softmax(x / T, axis=-1))\n"
    ),
    ("4.1", "scipy.stats.entropy"): (
        "import scipy.stats\n"
        "def row_entropy(weights):\n"
        "    return scipy.stats.entropy(weights, axis=1)  # (n_q,)\n"
    ),
    ("6.3", "scipy.special.logsumexp"): (
        "from scipy.special import logsumexp\n"
        "def masked_softmax(scores, mask):\n"
        "    filled = np.where(mask, scores, -np.inf)  # (n_q, n_k)\n"
        "    with np.errstate(all='ignore'):\n"
        "        out = np.exp(filled - logsumexp(filled, axis=-1, keepdims=True))\n"
        "    return np.nan_to_num(out)\n"
    ),
}


def _scipy_code(exercise_id: str, code: str) -> str:
    if code != "scipy-softmax":
        return code
    exercise = attnlab.exercises.EXERCISES[exercise_id]
    worked = worked_solutions(str(source_folder()))[exercise.name]
    assert "attnlab.softmax(" in worked, exercise.title
    return "import scipy.special\n" + worked.replace("attnlab.softmax(", "scipy.special.softmax(")


def _defined(exercise, code: str):
    from source_answers import _import_cell

    namespace: dict = {}
    exec(_import_cell(exercise.name.split(".")[0]), namespace)  # noqa: S102 - course cell
    exec(code, namespace)  # noqa: S102 - the table's answer
    return namespace[exercise.answer]


@pytest.mark.parametrize(
    ("key", "code"), SCIPY_RIGHT.items(), ids=[" ".join(k) for k in SCIPY_RIGHT]
)
def test_an_answer_written_with_scipy_is_accepted(key, code):
    from attnlab.exercises.rules.lint import problems

    exercise = attnlab.exercises.EXERCISES[key[0]]
    code = _scipy_code(key[0], code)
    assert key[1].rpartition(".")[2] in code
    assert problems(code, forbidden=exercise.forbidden) == []
    feedback = exercise.check(_defined(exercise, code))
    assert feedback.outcome is Outcome.CORRECT, feedback.message


@pytest.mark.parametrize(
    ("key", "code"), SCIPY_FORBIDDEN.items(), ids=[" ".join(k) for k in SCIPY_FORBIDDEN]
)
def test_an_answer_that_hands_the_task_to_scipy_is_refused(key, code):
    """The check and the grading lint both refuse it and name the function."""
    from attnlab.exercises.rules.lint import problems

    exercise = attnlab.exercises.EXERCISES[key[0]]
    assert key[1] in exercise.forbidden
    refused = problems(code, forbidden=exercise.forbidden)
    assert refused and key[1].rpartition(".")[2] in refused[0], refused
    feedback = exercise.check(_defined(exercise, code))
    assert feedback.outcome is Outcome.WRONG, feedback.message
    assert key[1].rpartition(".")[2] in feedback.message, feedback.message


# ----------------------------------------------------------- cases drawn at grading time
#
# Every check whose answer takes inputs draws more cases when it is graded
# (``Cases(fresh=...)``, seeded with the grading salt), so a table of the shipped cases'
# outputs earns nothing (issue 39). The learner's check draws them from a fixed seed.

#: The exercises whose answer is a fixed fact, not a function of inputs: nothing to draw.
FIXED_FACTS = {
    "4.2": "a quiz: the pattern of each of four fixed heatmaps",
    "7.1": "a quiz: letters and numbers read off the lesson's examples",
    "7.2": "a quiz: letters and numbers read off the lesson's examples",
    "7.6": "the answer is an input the learner builds (called with no arguments)",
    "9.3": "the tokens read off one heatmap the lesson shows (called with no arguments)",
}

#: Grading salts the fresh cases are drawn with in these tests (any number would do); the
#: answers are judged under the first (one salt keeps the fast loop fast; the attack suite and
#: every graded-use test draw their own).
SALTS = (1, 2024)


def _cases_of(exercise):
    from attnlab.exercises.kit.cases import Cases

    return exercise.checker if isinstance(exercise.checker, Cases) else None


def _drawn(exercise, salt=None) -> list:
    from attnlab.exercises.rules.grading_mode import grading_seed

    with grading_seed(salt):
        return _cases_of(exercise).drawn()


def _same(a, b) -> bool:
    """Two drawn case lists are the same (arrays compared by value)."""
    return _key(a) == _key(b)


def _key(value):
    """A hashable stand-in for ``value`` (arrays by shape and values, containers by their
    items), for comparing cases and for a table keyed by a call's arguments."""
    if isinstance(value, np.ndarray):
        if value.dtype.kind in "fiub":
            return ("array", value.shape, np.asarray(value, dtype=float).tobytes())
        return ("array", value.shape, repr(value.tolist()))
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(_key(v) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple((k, _key(v)) for k, v in value.items()))
    if hasattr(value, "__dataclass_fields__"):
        return (
            type(value).__name__,
            tuple(_key(getattr(value, f)) for f in value.__dataclass_fields__),
        )
    return repr(value)


@by_title
def test_graded_cases_are_drawn_at_grading_time(exercise):
    """An exercise with inputs adds cases drawn from the grading salt: each grading draws
    others, a learner's check always the same; a fixed fact is listed in FIXED_FACTS."""
    if exercise.id in FIXED_FACTS:
        assert _cases_of(exercise) is None or _cases_of(exercise).fresh is None
        return
    cases = _cases_of(exercise)
    assert cases is not None and cases.fresh is not None, "declare Cases(fresh=...)"
    learner = _drawn(exercise)
    assert _same(learner, _drawn(exercise)), "the learner's check must draw the same cases"
    first, second = (_drawn(exercise, salt) for salt in SALTS)
    assert not _same(first, learner) and not _same(first, second)
    fixed = list(cases.cases())  # the shipped ones are still tried first, for feedback
    assert len(first) > len(fixed)


def _table_answer(exercise, worked):
    """A lookup table of the worked answer's outputs on the learner's check's cases, as a
    student who read the installed package could write one; any other input gets 0."""
    table = {}

    def spy(*args, **kwargs):
        result = worked(*copy.deepcopy(args), **copy.deepcopy(kwargs))
        table[_key((args, kwargs))] = copy.deepcopy(result)
        return result

    exercise.check(spy)

    def looked_up(*args, **kwargs):
        return copy.deepcopy(table.get(_key((args, kwargs)), 0.0))

    return looked_up


@by_title
def test_a_table_of_the_learners_cases_earns_nothing_in_grading(exercise):
    """The lookup-table attack, on every exercise: a table of the cases the learner's check
    tries passes that check (where a table can at all), but never grading."""
    from attnlab.exercises.rules.grading_mode import grading_seed

    if exercise.id in FIXED_FACTS:
        return
    table = _table_answer(exercise, worked_answer(exercise))
    for salt in SALTS[:1]:
        with grading_seed(salt):
            feedback = exercise.grade(table)
        assert feedback.outcome is not Outcome.CORRECT, (salt, feedback.message)


def _fresh_only(exercise):
    """The exercise checked on the cases grading draws only: ``fresh``'s, and those of the
    shipped cases that a seeded generator draws (they differ from the learner's check's
    under a grading salt); the literal ones are left out."""
    import dataclasses

    cases = _cases_of(exercise)
    learner = {_key(case) for case in _drawn(exercise)}
    only = copy.copy(exercise)
    only.checker = dataclasses.replace(
        cases, cases=lambda: [c for c in cases.cases() if _key(c) not in learner]
    )
    return only


def _tables():
    for path in sorted(Path(__file__).parent.glob("test_exercises_lesson*.py")):
        importlib.import_module(path.stem)
    return answer_tables.TABLES


def _graded_answers(kind: str):
    return [
        pytest.param(table, name, id=f"{table.exercise.title}: {name}")
        for table in _tables()
        if _cases_of(table.exercise) is not None and table.exercise.id not in FIXED_FACTS
        for name, _ in (table.named_right() if kind == "right" else table.wrong.items())
    ]


@pytest.mark.parametrize(("table", "name"), _graded_answers("right"))
def test_right_answers_pass_the_cases_drawn_at_grading_time(table, name):
    from attnlab.exercises.rules.grading_mode import grading_seed

    answer = dict(table.named_right())[name]
    for salt in SALTS[:1]:
        with grading_seed(salt):
            feedback = answer_tables.judged(_fresh_only(table.exercise), answer)
        assert feedback.outcome is Outcome.CORRECT, (salt, feedback.message)


#: Wrong answers of the tables that are wrong only on a shipped case (they test the message
#: that case gives), so the drawn cases alone need not catch them.
WRONG_ONLY_ON_A_SHIPPED_CASE = {
    (
        "Exercise 6.1 (the shapes of batched attention)",
        "weights (batch, n) as an int array, on other sizes",
    ): "wrong only when batch is 4",
}


@pytest.mark.parametrize(("table", "name"), _graded_answers("wrong"))
def test_known_mistakes_fail_the_cases_drawn_at_grading_time(table, name):
    """Each known mistake is caught on the drawn cases alone."""
    from attnlab.exercises.rules.grading_mode import grading_seed

    if (table.exercise.title, name) in WRONG_ONLY_ON_A_SHIPPED_CASE:
        return
    answer, reason = table.wrong[name]
    for salt in SALTS[:1]:
        with grading_seed(salt):
            feedback = answer_tables.judged(_fresh_only(table.exercise), answer)
        assert feedback.outcome is not Outcome.CORRECT, (salt, feedback.message)


@pytest.mark.parametrize(("exercise", "formulation"), CASES)
def test_every_formulation_passes_the_cases_drawn_at_grading_time(exercise, formulation):
    from attnlab.exercises.rules.grading_mode import grading_seed

    if exercise.id in FIXED_FACTS or (exercise.title, formulation) in NOT_APPLICABLE:
        return
    if (exercise.title, formulation) in KNOWN_FAILURES:
        pytest.xfail(KNOWN_FAILURES[exercise.title, formulation])
    answer = formulated(formulation, worked_answer(exercise), exercise)
    for salt in SALTS[:1]:
        with grading_seed(salt):
            feedback = exercise.grade(answer)
        assert feedback.outcome is Outcome.CORRECT, (salt, feedback.message)
