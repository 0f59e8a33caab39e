r"""The quiz engine: questions answered several at once, judged one by one, partial credit.

A quiz is a :class:`Questions`: a list of :class:`Question` (multiple choice when it has
options, else a number) shown as Markdown in a notebook. The learner answers with a dict from
question to answer (an option letter, or a number) and passes it, or a function returning it,
to :meth:`Questions.check` (as an :class:`~attnlab.exercises.kit.exercise.Exercise` from
:meth:`Questions.exercise`). The check says question by question which answers are right,
which are not yet (with a reason that does not give the answer away) and which are still open;
each question earns an equal share of the points.

The right answers are not in the questions: they are in a :class:`Key` per question, returned by
``key_<part>(scope)`` of the key module ``answer_keys/<key_file>.py`` (read by
:func:`attnlab.exercises.keys.load_key`), which does not ship with the installed package. Where
that module is not at hand (a graded course run), the check cannot judge: it says which answers
are missing or malformed and, once all are there, that they are recorded
(:class:`~attnlab.exercises.kit.outcomes.Recorded`), to be marked after submission.

Examples
--------
>>> q = Question("Z1", 3, "softmax by hand", "What is softmax([0, 0])[0]?", tolerance=1e-3)
>>> q.judge(0.5004, Key(0.5, nudge="Exponentiate, then divide by the sum."))
(True, '')
>>> q.judge("1/2", Key(0.5))
(False, "this one wants a number, not '1/2'.")
>>> c = Question("Z2", 3, "what adds up to 1", "Which sums to 1?",
...              options=(("a", "each row"), ("b", "each column")))
>>> c.judge("(B)", Key("a", why_not=(("b", "Softmax runs along a row."),)))
(False, 'Softmax runs along a row.')
>>> quiz = Questions("Z", [q, c], scope={}, key_file="no-such-quiz")  # no key installed
>>> exercise = quiz.exercise("Quiz Z", hints=["Re-read lesson 3."])
>>> print(exercise.check({"Z1": 0.5}).message)
Not answered yet: Z2. Stuck? Press Next hint in the panel below this check, or run `.hint()`.
>>> exercise.check({"Z1": 0.5, "Z2": "a"}).outcome.name
'RECORDED'
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from attnlab.course import lesson
from attnlab.exercises.keys import load_key
from attnlab.exercises.kit.calling import call, is_stub
from attnlab.exercises.kit.display import one_line
from attnlab.exercises.kit.exercise import Exercise
from attnlab.exercises.kit.outcomes import NotAttempted, Recorded, Wrong

__all__ = ["Key", "Question", "Questions"]


@dataclass(frozen=True)
class Question:
    """One quiz question: multiple choice when it has ``options``, else a number.

    The right answer is not here: it is in the quiz's :class:`Key`, which lives outside the
    installed package (see :mod:`attnlab.exercises.keys`).

    Attributes
    ----------
    key : str
        ``"A1"``, ``"B7"`` …: the key of its answer in the learner's dict.
    lesson : int
        The lesson whose objective it checks.
    topic : str
        The idea it tests, in a few words (shown with the lesson's title and a link).
    prompt : str
        Markdown; every number in it is computed.
    options : tuple of (letter, text)
        Empty for a question answered with a number. A choice may be given by its letter
        (``"b"``, ``"(B)"``) or by its full text.
    tolerance : float
        How far a number may be from the answer (and from a known wrong number).

    Examples
    --------
    >>> q = Question("Z1", 6, "the causal mask", "How many entries of a 3-token causal "
    ...              "mask are True?", tolerance=0.5)
    >>> q.judge(6.2, Key(6)), q.judge(9, Key(6, why_not=((9, "That counts every entry."),)))
    ((True, ''), (False, 'That counts every entry.'))
    >>> q.judge(float("nan"), Key(6, nudge="Count the lower triangle."))
    (False, 'yours is not-a-number (nan); Count the lower triangle.')
    """

    key: str
    lesson: int
    topic: str
    prompt: str
    options: tuple = ()
    tolerance: float = 0.0

    def judge(self, given, key: Key) -> tuple[bool, str]:
        """``(True, "")`` if ``given`` is right by ``key``, else ``(False, reason)``."""
        if self.options:
            return self._judge_choice(given, key)
        return self._judge_number(given, key)

    def _letter(self, given) -> tuple[str | None, str]:
        """The option letter ``given`` names, or ``(None, reason)`` when it names none."""
        letters = [letter for letter, _ in self.options]
        spelled = f"{', '.join(letters[:-1])} or {letters[-1]}"
        if not isinstance(given, str):
            return None, (
                f"this one is multiple choice: answer with a letter, {spelled} "
                f"(yours is {one_line(given)})."
            )
        letter = given.strip().strip("().:").strip().lower()
        texts = {text.lower(): letter for letter, text in self.options}
        letter = texts.get(given.strip().lower(), letter)
        if letter not in letters:
            return None, f"{given!r} is not one of the options; answer {spelled}."
        return letter, ""

    def _judge_choice(self, given, key: Key) -> tuple[bool, str]:
        letter, reason = self._letter(given)
        if letter is None:
            return False, reason
        if letter == key.answer:
            return True, ""
        return False, dict(key.why_not).get(letter, key.nudge)

    def _judge_number(self, given, key: Key) -> tuple[bool, str]:
        value = _as_number(given)
        if value is None:
            return False, f"this one wants a number, not {one_line(given)}."
        if math.isnan(value):
            return False, "yours is not-a-number (nan); " + key.nudge
        if _near(value, key.answer, self.tolerance):
            return True, ""
        for wrong, reason in key.why_not:
            if _near(value, wrong, self.tolerance):
                return False, reason
        return False, key.nudge

    def well_formed(self, given) -> str:
        """Why ``given`` cannot be an answer to this question at all, or ``""``."""
        if self.options:
            return self._letter(given)[1]
        value = _as_number(given)
        return "" if value is not None else f"this one wants a number, not {one_line(given)}."

    def markdown(self) -> str:
        """The question as the notebook shows it, with the idea it tests and its lesson.

        Examples
        --------
        >>> q = Question("Z1", 3, "row sums", "What does each row sum to?")
        >>> print(q.markdown())
        **Z1** · *row sums*, from lesson 3, [Softmax](03-softmax.ipynb). What does each row sum to?
        """
        entry = lesson(self.lesson)  # its title and notebook, from the course map
        text = (
            f"**{self.key}** · *{self.topic}*, from lesson {self.lesson}, "
            f"[{entry.title}]({entry.notebook}.ipynb). {self.prompt}"
        )
        for letter, option in self.options:
            text += f"\n  - **({letter})** {option}"
        return text


@dataclass(frozen=True)
class Key:
    """The right answer to one question and what to say about known wrong ones.

    Attributes
    ----------
    answer : str or float
        The right option letter, or the right number.
    why_not : tuple of (letter or number, reason)
        What to say about a known wrong answer; a reason never names the right answer.
    nudge : str
        What to say about any other wrong answer.
    """

    answer: object
    why_not: tuple = ()
    nudge: str = ""


def _as_number(value) -> float | None:
    """``value`` as a float when it is one number (a string with a minus sign − too), else None.

    Examples
    --------
    >>> _as_number("−2.5"), _as_number(np.array([3])), _as_number(True), _as_number("b")
    (-2.5, 3.0, None, None)
    """
    if isinstance(value, bool | np.bool_):
        return None
    if isinstance(value, numbers.Real):
        return float(value)
    if isinstance(value, np.ndarray) and value.size == 1 and value.dtype.kind in "fiu":
        return float(value.ravel()[0])
    if isinstance(value, str):
        try:
            return float(value.replace("−", "-"))
        except ValueError:
            return None
    return None


def _near(value: float, target, tolerance: float) -> bool:
    target = float(target)
    if math.isinf(target) or math.isinf(value):
        return value == target
    return abs(value - target) <= tolerance


def _placeholder(value) -> bool:
    return is_stub(value) or (isinstance(value, str) and not value.strip())


def _keys(keys) -> str:
    return ", ".join(keys)


class Questions:
    """The questions of one part of a quiz; shows them as Markdown in a notebook.

    Each question earns an equal share of the quiz's points (partial credit). Where the key
    is at hand (a clone of the course repository, or an instructor's grading run) the check
    says question by question what is right; in a graded course run it is not installed, so
    the check only records the answers and says how many are filled in.

    Parameters
    ----------
    part : str
        The quiz's name (``"A"``, ``"4.2"``); its key is ``key_<part>`` of the key module, in
        lower case with any ``.`` written ``_`` (``key_a``, ``key_4_2``).
    questions : iterable of Question
        At least one, each with its own ``key``.
    scope : dict
        The values the questions were built from; the key module computes the answers from it.
    key_file : str
        The key module's name in ``answer_keys/`` (``"lesson7"``), for
        :func:`attnlab.exercises.keys.load_key`.
    form : callable, optional
        ``form(answer) -> dict``: reads the learner's answer (or the function returning it)
        into ``{question key: answer}``, raising :class:`Wrong` when the answer as a whole is
        malformed (a rule across questions, such as each option used once) or
        :class:`NotAttempted`. It never sees the key, so what it says is the same with the
        key at hand or not.

    Raises
    ------
    ValueError
        ``questions`` is empty, or two questions share a key.

    Examples
    --------
    >>> quiz = Questions("Z", [Question("Z1", 1, "a score", "What is q·k?")], {}, key_file="z")
    >>> print(quiz.template())
    {
        "Z1": ...,  # a number
    }
    """

    def __init__(self, part: str, questions, scope: dict, *, key_file: str, form=None):
        self.part = part
        self.form = form
        self.questions = list(questions)
        self.by_key = {q.key: q for q in self.questions}
        if not self.questions or len(self.by_key) != len(self.questions):
            raise ValueError(
                f"questions of quiz {part} must be at least one, each with its own "
                f"key; got the keys {[q.key for q in self.questions]}"
            )
        self.scope = scope
        self.key_file = key_file

    def template(self) -> str:
        """The answer dict with every answer left as ``...``, as Python source."""
        lines = [
            f'    "{q.key}": ...,  # {"a letter" if q.options else "a number"}'
            for q in self.questions
        ]
        return "{\n" + "\n".join(lines) + "\n}"

    def _repr_markdown_(self) -> str:
        return "\n\n".join(q.markdown() for q in self.questions)

    def __str__(self) -> str:
        return self._repr_markdown_()

    def key(self) -> dict | None:
        """Question -> :class:`Key`, or None when the key is not installed here."""
        module = load_key(self.key_file)
        if module is None:
            return None
        return getattr(module, f"key_{self.part.lower().replace('.', '_')}")(self.scope)

    def exercise(self, title: str, hints, **place) -> Exercise:
        """This quiz as an exercise: its check is :meth:`check`, its hints ``hints``; ``place``
        is where it sits in the course (``id=``, ``attr=``, … as :class:`Exercise` takes them)."""
        return Exercise(title, self.check, hints=hints, **place)

    def check(self, answer) -> None:
        """The checker: returns if every answer is right, else raises :class:`Wrong`.

        The :class:`Wrong` carries the share of questions answered right as its ``score``.
        Without the key, raises :class:`Recorded` once every question has an answer.
        """
        given = _as_answers(answer, self)
        known = {str(k).strip().upper(): v for k, v in given.items()}
        strays = [str(k) for k in given if str(k).strip().upper() not in self.by_key]
        if strays:
            raise Wrong(
                f"Your answers have the key(s) {_keys(map(repr, strays))}, but quiz "
                f"{self.part} has the questions {_keys(self.by_key)}. Use those as "
                "the keys of the dict."
            )
        if not known or all(_placeholder(v) for v in known.values()):
            raise NotAttempted(
                "Put your answers in the dict (replace each `...`), run that "
                "cell, then run this check again."
            )
        key = self.key()
        if key is None:
            self._record(known)
        right, wrong, open_ = [], [], []
        for question in self.questions:
            value = known.get(question.key)
            if _placeholder(value):
                open_.append(question.key)
                continue
            ok, reason = question.judge(value, key[question.key])
            if ok:
                right.append(question.key)
            else:
                wrong.append((question.key, one_line(value), reason))
        if not wrong and not open_:
            return
        summary = f"{len(right)} of {len(self.questions)} right so far"
        if wrong:
            summary += f"; not yet right: {_keys(k for k, _, _ in wrong)}"
        if open_:
            summary += f"; not answered yet: {_keys(open_)}"
        lines = [f"{summary}."]
        lines += [f"✗ {key} (you said {shown}): {reason}" for key, shown, reason in wrong]
        if right:
            lines.append(f"✓ right: {_keys(right)}.")
        raise Wrong("\n".join(lines), score=len(right) / len(self.questions))

    def _record(self, known: dict) -> None:
        """Without the key: say which answers are missing or malformed, else :class:`Recorded`."""
        open_ = [q.key for q in self.questions if _placeholder(known.get(q.key))]
        odd = [
            (q.key, q.well_formed(known[q.key]))
            for q in self.questions
            if q.key not in open_ and q.well_formed(known[q.key])
        ]
        lines = []
        if open_:
            lines.append(f"Not answered yet: {_keys(open_)}.")
        lines += [f"✗ {key}: {reason}" for key, reason in odd]
        if lines:
            raise Wrong("\n".join(lines))
        raise Recorded(
            f"All {len(self.questions)} answers of quiz {self.part} are recorded. "
            "In this course run the quiz is marked after you submit, one point "
            "share per question."
        )


def _as_answers(answer, questions: Questions) -> Mapping:
    if questions.form is not None:
        return questions.form(answer)
    if callable(answer):
        try:
            answer = call(answer)
        except NotAttempted:
            raise NotAttempted(
                "Replace each `...` in the dict with your answer, delete the "
                "`raise NotImplementedError()` line, run the cell, then run "
                "this check again."
            ) from None
    if not isinstance(answer, dict):  # an OrderedDict or a defaultdict is one; a ChainMap is not
        first = questions.questions[0].key
        also = (
            " Make it a plain dict (`dict(...)` of yours): grading reads only a dict."
            if isinstance(answer, Mapping)
            else ""
        )
        raise Wrong(
            f"Your answers should be a dict from question to answer, like "
            f"{{'{first}': 'b', ...}}; got {one_line(answer)}.{also}"
        )
    return answer
