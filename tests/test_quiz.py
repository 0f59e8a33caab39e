"""The quiz engine on its own (attnlab.exercises.quiz), with a small made-up quiz "T".

Its key is a module written to a temporary answer_keys/ folder, found the way a clone of the
course finds answer_keys/lesson7.py; an empty folder stands for a graded course run, where the
key is not installed and the answers are only recorded.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from attnlab.exercises import Outcome, lesson7
from attnlab.exercises.kit.outcomes import Wrong
from attnlab.exercises.quiz import Key, Question, Questions

KEY_MODULE = """
from attnlab.exercises.quiz import Key

def key_t(scope):
    n = scope["n"]
    return {
        "T1": Key(n * (n + 1) / 2, why_not=((n * n, "That counts every entry, masked or not."),),
                  nudge="Count the entries on and below the diagonal."),
        "T2": Key("a", why_not=(("b", "A softmax runs along a row."),),
                  nudge="Think of what the softmax normalises."),
        "T3": Key(0.5, nudge="Exponentiate each score, then divide by the sum."),
        "T4": Key(float("-inf"), why_not=((0.0, "log(1) is 0, but this weight is not 1."),),
                  nudge="What is the log of a weight of exactly 0?"),
    }
"""

RIGHT = {"T1": 10, "T2": "a", "T3": 0.5, "T4": float("-inf")}


def toy_questions() -> list[Question]:
    n = 4
    return [
        Question(
            "T1",
            6,
            "the causal mask",
            f"How many entries of a {n}-token causal mask are True?",
            tolerance=0.5,
        ),
        Question(
            "T2",
            3,
            "what adds up to 1",
            "After a softmax over the keys, what sums to 1?",
            options=(("a", "each row"), ("b", "each column"), ("c", "the whole matrix")),
        ),
        Question("T3", 3, "softmax by hand", "What is softmax([0, 0])[0]?", tolerance=1e-3),
        Question("T4", 3, "log-softmax", "What is log of a fully masked weight?", tolerance=1e-6),
    ]


def toy_quiz() -> Questions:
    return Questions("T", toy_questions(), {"n": 4}, key_file="toyquiz")


@pytest.fixture
def keyed(monkeypatch, tmp_path):
    """The toy quiz with its key installed (a clone of the course, or an instructor's run)."""
    folder = tmp_path / "answer_keys"
    folder.mkdir()
    (folder / "toyquiz.py").write_text(KEY_MODULE, encoding="utf-8")
    monkeypatch.setenv("ATTNLAB_ANSWER_KEYS", str(folder))
    monkeypatch.delenv("ATTNLAB_REQUIRE_CORRECT", raising=False)
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    return toy_quiz()


@pytest.fixture
def unkeyed(monkeypatch, tmp_path):
    """The toy quiz with no key installed (a graded course run)."""
    (tmp_path / "answer_keys").mkdir()
    monkeypatch.setenv("ATTNLAB_ANSWER_KEYS", str(tmp_path / "answer_keys"))
    monkeypatch.delenv("ATTNLAB_REQUIRE_CORRECT", raising=False)
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    return toy_quiz()


def grade(quiz: Questions, answer):
    return quiz.exercise("Quiz T", hints=["Re-read lessons 3 and 6."]).grade(answer)


def with_(**changes):
    return {**RIGHT, **changes}


# ---------------------------------------------------------------- the key
def test_the_key_is_read_from_the_key_folder_and_built_from_the_scope(keyed):
    key = keyed.key()
    assert set(key) == {"T1", "T2", "T3", "T4"} and all(isinstance(k, Key) for k in key.values())
    assert key["T1"].answer == 10  # 4 · 5 / 2, from scope["n"] = 4
    other = Questions("T", toy_questions(), {"n": 6}, key_file="toyquiz").key()
    assert other["T1"].answer == 21


def test_without_the_key_file_there_is_no_key(unkeyed):
    assert unkeyed.key() is None


# ---------------------------------------------------------------- scoring and partial credit
def test_all_right_is_correct_with_full_points(keyed):
    assert keyed.check(RIGHT) is None
    feedback = grade(keyed, RIGHT)
    assert feedback.outcome is Outcome.CORRECT and feedback.score == 1.0 and bool(feedback)


@pytest.mark.parametrize(
    ("answers", "score"),
    [
        (with_(T1=16), 0.75),
        (with_(T1=16, T2="b"), 0.5),
        (with_(T1=16, T2="b", T3=0.9), 0.25),
        (with_(T1=16, T2="b", T3=0.9, T4=0.0), 0.0),
        ({"T3": 0.5}, 0.25),  # the others unanswered: the same share as wrong
        ({"T1": 10, "T2": "a", "T3": ..., "T4": None}, 0.5),
    ],
)
def test_each_question_earns_an_equal_share(keyed, answers, score):
    feedback = grade(keyed, answers)
    assert feedback.outcome is Outcome.WRONG and not feedback
    assert feedback.score == pytest.approx(score)


def test_the_message_sorts_right_wrong_and_open_with_reasons(keyed):
    feedback = grade(keyed, {"T1": 16, "T2": "A", "T3": "lots", "T4": ...})
    lines = feedback.message.splitlines()
    assert lines[0] == "1 of 4 right so far; not yet right: T1, T3; not answered yet: T4."
    assert lines[1] == "✗ T1 (you said 16): That counts every entry, masked or not."
    assert lines[2] == "✗ T3 (you said 'lots'): this one wants a number, not 'lots'."
    assert lines[3].startswith("✓ right: T2.")
    assert "Stuck? Press Next hint in the panel below this check, or run `.hint()`." in (
        feedback.message
    )


def test_no_summary_line_of_right_answers_when_none_is_right(keyed):
    message = grade(keyed, with_(T1=3, T2="c", T3=1, T4=1)).message
    assert message.startswith("0 of 4 right so far; not yet right: T1, T2, T3, T4.")
    assert "✓" not in message


# ---------------------------------------------------------------- judging one question
@pytest.mark.parametrize(
    ("question", "given", "reason"),
    [
        ("T1", 16, "That counts every entry, masked or not."),  # a known wrong number
        ("T1", 16.4, "That counts every entry, masked or not."),  # within the tolerance of it
        ("T1", 12, "Count the entries on and below the diagonal."),  # any other number
        ("T1", 10.6, "Count the entries on and below the diagonal."),  # just outside the tolerance
        (
            "T1",
            math.nan,
            "yours is not-a-number (nan); Count the entries on and below the diagonal.",
        ),
        ("T2", "b", "A softmax runs along a row."),  # a known wrong option
        ("T2", "c", "Think of what the softmax normalises."),  # any other option
        ("T4", -1e300, "What is the log of a weight of exactly 0?"),  # finite is not -inf
        ("T4", 0.0, "log(1) is 0, but this weight is not 1."),
    ],
)
def test_a_wrong_answer_gets_its_reason_and_never_the_answer(keyed, question, given, reason):
    ok, said = keyed.by_key[question].judge(given, keyed.key()[question])
    assert (ok, said) == (False, reason)
    feedback = grade(keyed, with_(**{question: given}))
    assert f"✗ {question} (you said " in feedback.message and reason in feedback.message


@pytest.mark.parametrize(
    ("question", "given"),
    [
        ("T1", 10),
        ("T1", 10.5),
        ("T1", 9.5),
        ("T1", "10"),
        ("T1", " 10.0 "),
        ("T1", np.int64(10)),
        ("T1", np.array([10.0])),
        ("T1", np.float32(10.2)),
        ("T2", "a"),
        ("T2", "A"),
        ("T2", "(a)"),
        ("T2", " a. "),
        ("T2", "a:"),
        ("T2", "Each Row"),
        ("T3", 0.5009),
        ("T3", "0.4991"),
        ("T4", float("-inf")),
        ("T4", "-inf"),
        ("T4", "−inf"),
        ("T4", np.float16(-np.inf)),
    ],
)
def test_a_right_answer_in_any_reasonable_spelling_is_right(keyed, question, given):
    assert keyed.by_key[question].judge(given, keyed.key()[question]) == (True, "")
    assert grade(keyed, with_(**{question: given})).outcome is Outcome.CORRECT


@pytest.mark.parametrize(
    ("question", "given", "reason"),
    [
        ("T1", "ten", "this one wants a number, not 'ten'."),
        ("T1", True, "this one wants a number, not True."),
        ("T1", [10], "this one wants a number, not [10]."),
        ("T1", np.array([10, 10]), "this one wants a number, not [10, 10]."),
        ("T2", 1, "this one is multiple choice: answer with a letter, a, b or c (yours is 1)."),
        ("T2", "e", "'e' is not one of the options; answer a, b or c."),
        ("T2", "each key", "'each key' is not one of the options; answer a, b or c."),
    ],
)
def test_a_malformed_answer_says_what_form_the_answer_takes(keyed, question, given, reason):
    q = keyed.by_key[question]
    assert q.judge(given, keyed.key()[question]) == (False, reason)
    assert q.well_formed(given) == reason
    assert reason in grade(keyed, with_(**{question: given})).message


def test_infinite_answers_match_only_the_same_infinity():
    q = Question("Z1", 3, "t", "p", tolerance=1e9)
    assert q.judge(math.inf, Key(math.inf)) == (True, "")
    assert q.judge(-math.inf, Key(math.inf, nudge="no")) == (False, "no")
    assert q.judge(1e300, Key(math.inf, nudge="no")) == (False, "no")
    assert q.judge(math.inf, Key(1.0, nudge="no")) == (False, "no")


# ---------------------------------------------------------------- the answer as a whole
@pytest.mark.parametrize(
    "answers", [{}, {"T1": ...}, {"T1": None, "T2": "  "}, dict.fromkeys(RIGHT, ...)]
)
def test_nothing_filled_in_is_not_attempted(keyed, answers):
    feedback = grade(keyed, answers)
    assert feedback.outcome is Outcome.NOT_ATTEMPTED
    assert feedback.message == (
        "Put your answers in the dict (replace each `...`), run that "
        "cell, then run this check again."
    )


@pytest.mark.parametrize("stub", [None, ...])
def test_the_answer_left_as_the_stub_is_not_attempted(keyed, stub):
    assert grade(keyed, stub).outcome is Outcome.NOT_ATTEMPTED


def test_keys_are_matched_whatever_their_case_and_spaces(keyed):
    assert grade(keyed, {" t1": 10, "t2 ": "a", "T3": 0.5, "t4": "-inf"}).outcome is (
        Outcome.CORRECT
    )


def test_a_stray_key_is_named_with_the_quiz_questions(keyed):
    feedback = grade(keyed, with_(X9=1, A1="b"))
    assert feedback.outcome is Outcome.WRONG and feedback.score == 0.0
    assert feedback.message.startswith(
        "Your answers have the key(s) 'X9', 'A1', but quiz T has "
        "the questions T1, T2, T3, T4. Use those as the keys"
    )


@pytest.mark.parametrize(("answer", "shown"), [([10, "a"], "[10, 'a']"), ("a", "'a'"), (10, "10")])
def test_an_answer_that_is_not_a_dict_is_refused(keyed, answer, shown):
    feedback = grade(keyed, answer)
    assert feedback.outcome is Outcome.WRONG and feedback.score == 0.0
    assert feedback.message.startswith(
        "Your answers should be a dict from question to answer, "
        f"like {{'T1': 'b', ...}}; got {shown}."
    )


def test_a_function_returning_the_dict_is_judged_like_the_dict(keyed):
    assert grade(keyed, lambda: dict(RIGHT)).outcome is Outcome.CORRECT
    partial = grade(keyed, lambda: with_(T2="b"))
    assert partial.outcome is Outcome.WRONG and partial.score == pytest.approx(0.75)


def test_a_function_still_raising_not_implemented_is_not_attempted(keyed):
    def stub():
        raise NotImplementedError()

    feedback = grade(keyed, stub)
    assert feedback.outcome is Outcome.NOT_ATTEMPTED
    assert "delete the `raise NotImplementedError()` line" in feedback.message


def test_a_function_that_fails_is_wrong_with_its_error(keyed):
    feedback = grade(keyed, lambda: 1 / 0)
    assert feedback.outcome is Outcome.WRONG and "ZeroDivisionError" in feedback.message


def test_the_answers_are_not_changed_by_the_check(keyed):
    answers = {"T1": np.array([10.0]), "t2": " (b) ", "T3": "0.5", "T4": ...}
    kept = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in answers.items()}
    grade(keyed, answers)
    assert answers.keys() == kept.keys() and all(
        np.array_equal(answers[k], kept[k])
        if isinstance(kept[k], np.ndarray)
        else answers[k] is kept[k]
        for k in kept
    )


# ---------------------------------------------------------------- graded: recorded, not judged
def test_without_the_key_complete_answers_are_recorded_right_or_wrong(unkeyed):
    for answers in (RIGHT, with_(T1=16, T2="b", T3=0.9)):
        feedback = grade(unkeyed, answers)
        assert feedback.outcome is Outcome.RECORDED and bool(feedback), feedback.message
        assert feedback.message == (
            "All 4 answers of quiz T are recorded. In this course run "
            "the quiz is marked after you submit, one point share per "
            "question."
        )
        assert feedback.score == 0.0  # marked after submission, not here


def test_without_the_key_missing_and_malformed_answers_are_named(unkeyed):
    feedback = grade(unkeyed, {"T1": 16, "T2": "e", "T3": "lots"})
    assert feedback.outcome is Outcome.WRONG and feedback.score == 0.0
    lines = feedback.message.splitlines()
    assert lines[0] == "Not answered yet: T4."
    assert lines[1] == "✗ T2: 'e' is not one of the options; answer a, b or c."
    assert lines[2].startswith("✗ T3: this one wants a number, not 'lots'.")
    assert "T1" not in feedback.message  # a wrong number is well formed: never judged here
    assert "right" not in feedback.message


def test_under_grading_only_correct_or_recorded_passes(keyed, monkeypatch):
    monkeypatch.setenv("ATTNLAB_REQUIRE_CORRECT", "1")
    exercise = keyed.exercise("Quiz T", hints=["h"])
    assert exercise.check(RIGHT).outcome is Outcome.CORRECT
    with pytest.raises(AssertionError, match="3 of 4 right so far"):
        exercise.check(with_(T2="b"))
    monkeypatch.setenv("ATTNLAB_ANSWER_KEYS", "/nonexistent/answer_keys")
    assert exercise.check(with_(T2="b")).outcome is Outcome.RECORDED
    with pytest.raises(AssertionError, match="Not answered yet: T4"):
        exercise.check({"T1": 10, "T2": "a", "T3": 0.5})


# ---------------------------------------------------------------- a rule across questions
def _each_once(answer) -> dict:
    """A form for the toy quiz: T2 and T4 are letters that must differ."""
    if answer.get("T2") == answer.get("T4") and answer.get("T2"):
        raise Wrong(f"T2 and T4 are both {answer['T2']!r}: use each letter once.")
    return answer


def test_a_form_judges_the_whole_answer_with_or_without_the_key(monkeypatch, tmp_path):
    (tmp_path / "none").mkdir()
    for keys in (str(tmp_path / "none"), None):
        if keys:
            monkeypatch.setenv("ATTNLAB_ANSWER_KEYS", keys)
        else:
            folder = tmp_path / "answer_keys"
            folder.mkdir()
            (folder / "toyquiz.py").write_text(
                KEY_MODULE.replace("def key_t(", "def key_t_2("), encoding="utf-8"
            )
            monkeypatch.setenv("ATTNLAB_ANSWER_KEYS", str(folder))
        quiz = Questions("T.2", toy_questions(), {"n": 4}, key_file="toyquiz", form=_each_once)
        feedback = grade(quiz, with_(T2="b", T4="b"))
        assert feedback.outcome is Outcome.WRONG
        assert "use each letter once" in feedback.message
    assert grade(quiz, RIGHT).outcome is Outcome.CORRECT  # key_t_2: "." read as "_"


def test_no_quiz_key_is_in_the_package_sources():
    """What the wheel is built from holds no line of a quiz key and no letter-to-name key (the
    slow wheel test scans the built wheel itself)."""
    from solution_lines import quiz_key_leaks, quiz_key_pairs

    package = Path(__file__).resolve().parents[1] / "attnlab"
    texts = {
        str(path): path.read_text(encoding="utf-8", errors="replace")
        for path in package.rglob("*")
        if path.is_file() and path.suffix not in {".pyc", ".png", ".woff2"}
    }
    assert quiz_key_pairs(), "the scan should know 4.2's key"
    assert quiz_key_leaks(texts) == []


# ---------------------------------------------------------------- how the quiz shows
def test_the_template_leaves_every_answer_open():
    assert toy_quiz().template() == (
        "{\n"
        '    "T1": ...,  # a number\n'
        '    "T2": ...,  # a letter\n'
        '    "T3": ...,  # a number\n'
        '    "T4": ...,  # a number\n'
        "}"
    )


def test_the_markdown_names_the_lesson_links_it_and_lists_the_options():
    text = toy_quiz()._repr_markdown_()
    assert str(toy_quiz()) == text
    blocks = text.split("\n\n")
    assert len(blocks) == 4
    assert blocks[0] == (
        "**T1** · *the causal mask*, from lesson 6, [The full formula, shapes "
        "and masking](06-full-formula.ipynb). How many entries of a 4-token "
        "causal mask are True?"
    )
    assert blocks[1].splitlines()[1:] == [
        "  - **(a)** each row",
        "  - **(b)** each column",
        "  - **(c)** the whole matrix",
    ]
    assert "[Softmax](03-softmax.ipynb)" in blocks[1]


@pytest.mark.parametrize(
    ("questions", "named"),
    [
        ([], "[]"),
        ([Question("T1", 1, "t", "p"), Question("T1", 1, "t", "q")], "['T1', 'T1']"),
    ],
)
def test_a_quiz_needs_questions_with_distinct_keys(questions, named):
    with pytest.raises(ValueError, match=rf"questions of quiz T .* got the keys \{named}"):
        Questions("T", questions, {}, key_file="toyquiz")


@pytest.mark.parametrize("kind", ["ChainMap", "UserDict"])
def test_a_mapping_that_is_not_a_dict_is_refused_before_grading_too(keyed, kind):
    """Grading reads a dict only (its subclasses too: OrderedDict, defaultdict), so the
    learner's check refuses a ChainMap or a UserDict of right answers with the same reason,
    before submission (the second red team of 2026-12-06: 6 of 6 in the learner's check, 0
    in grading)."""
    import collections

    from attnlab.exercises.kit.outcomes import Wrong

    wrapped = getattr(collections, kind)(RIGHT)
    with pytest.raises(Wrong, match="Make it a plain dict"):
        keyed.check(wrapped)
    assert keyed.check(collections.OrderedDict(RIGHT)) is None


def _quizzes() -> list[Questions]:
    """Every quiz the course declares (a :class:`Questions` at the top of a lesson module)."""
    import importlib

    from attnlab.exercises import EXERCISES

    found = {}
    for exercise in EXERCISES.values():
        module = importlib.import_module(f"attnlab.exercises.{exercise.name.partition('.')[0]}")
        for value in vars(module).values():
            if isinstance(value, Questions):
                found[id(value)] = value
    return list(found.values())


def test_every_quiz_stub_comment_names_the_kind_of_answer_its_question_wants():
    """The answer cells as shipped (stubs.json, the learner notebooks' text) mark each question
    ``# a letter`` or ``# a number``; that must be what its :class:`Question` judges (issue 41:
    quiz A marked A1 and A5 "a letter", and both want numbers)."""
    import re

    from attnlab.exercises.solutions import shipped_stubs

    line = re.compile(r'^\s*"(?P<key>[^"]+)": \.\.\.,\s*# (?P<kind>a letter|a number)\s*$', re.M)
    said = {}
    for stub in shipped_stubs().values():
        for match in line.finditer(stub):
            said[match["key"]] = match["kind"]
    compared = 0
    for quiz in _quizzes():
        for question in quiz.questions:
            if question.key in said:
                wanted = "a letter" if question.options else "a number"
                assert said[question.key] == wanted, (
                    f"quiz {quiz.part}'s stub marks {question.key} {said[question.key]!r}; "
                    f"it wants {wanted}"
                )
                compared += 1
    assert compared >= len(lesson7.QUESTIONS_A.questions) + len(lesson7.QUESTIONS_B.questions)
