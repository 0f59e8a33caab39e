r"""Lesson 7 — test your understanding: a checked quiz in two parts and three bug hunts.

* :data:`quiz_a` (7.1) and :data:`quiz_b` (7.2): the questions of :data:`QUESTIONS_A` (lessons
  1–3: scores, scaling, softmax) and :data:`QUESTIONS_B` (lessons 4–6: heatmaps, values, the
  full formula and masks). A learner answers several at once, as a dict from question to
  answer (a letter for a multiple-choice question, a number otherwise), and the check says,
  question by question, which are right, which are not yet (with a reason that does not give
  the answer away) and which are still unanswered. Every number in a question is computed
  here from :mod:`attnlab` and its running examples.
* Three bug hunts, each a bug class that has shipped in published attention code. The learner
  reads the buggy function (``buggy_*``, shown in the notebook), finds the bug and writes the
  fixed function; the check runs it on inputs chosen to expose the bug:

  - :data:`scale_bug` (7.3): ``multi_head_attention(x, w_q, w_k, w_v, n_heads)`` divides
    by √d_model instead of √d_head, the size of one head;
  - :data:`mask_bug` (7.4): ``causal_attention(q, k, v)`` zeroes the future weights after
    the softmax instead of masking the scores before it;
  - :data:`shift_bug` (7.5): ``stable_attention(q, k, v)`` exponentiates the scores without
    subtracting each row's max, and overflows to NaN in float16 and float32.

References come from :func:`attnlab.scaled_dot_product_attention`; known mistakes are
recognised by recomputing them on the same input.

Examples
--------
>>> feedback = quiz_a.check({"A1": "b", "A4": 64})  # in a clone of the course repository
>>> print(feedback.message.splitlines()[0])
1 of 11 right so far; not yet right: A1; not answered yet: A2, A3, A5, A6, A7, A8, A9, A10, A11.
>>> round(feedback.score, 3)  # one question of 11: its share of the points
0.091
>>> "√d_model" in scale_bug.check(buggy_multi_head_attention).message
True
>>> bool(shift_bug.check(buggy_stable_attention))
False
"""

from __future__ import annotations

import inspect
import math
import numbers
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

import attnlab
from attnlab.examples import (
    COLLAPSE_ROW,
    SCORE_ROW,
    cat_sat_down,
    cat_sat_down_wide,
    dog_bites_man,
    query_and_keys_2d,
)
from attnlab.exercises.core import (
    Exercise,
    NotAttempted,
    Recorded,
    Text,
    Wrong,
    _short,
    call,
    call_watching,
    is_stub,
    one_line,
    warned,
)
from attnlab.exercises.keys import load_key
from attnlab.mixing import barycentric
from attnlab.patterns import column_mass, normalised_entropy, pattern_example

__all__ = [
    "QUESTIONS_A",
    "QUESTIONS_B",
    "Key",
    "Question",
    "Questions",
    "buggy_causal_attention",
    "buggy_multi_head_attention",
    "buggy_stable_attention",
    "listing",
    "mask_bug",
    "mask_cases",
    "quiz_a",
    "quiz_b",
    "scale_bug",
    "scale_cases",
    "shift_bug",
    "shift_cases",
]


def listing(function) -> Text:
    """The source of ``function`` as a Markdown code block (how the notebook shows a bug).

    Examples
    --------
    >>> listing(listing).markdown.splitlines()[:2]
    ['```python', 'def listing(function) -> Text:']
    """
    return Text(f"```python\n{textwrap.dedent(inspect.getsource(function))}```")


# ================================================================= the quiz
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
    prompt : str
        Markdown; every number in it is computed.
    options : tuple of (letter, text)
    tolerance : float
        How far a number may be from the answer (and from a known wrong number).
    """

    key: str
    lesson: int
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
            return None, (f"this one is multiple choice: answer with a letter, {spelled} "
                          f"(yours is {one_line(given)}).")
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
        """The question as the notebook shows it, with the lesson it comes from."""
        text = f"**{self.key}** *(lesson {self.lesson})*. {self.prompt}"
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
    """The questions of one part of the quiz; shows them as Markdown in a notebook.

    Each question earns an equal share of the quiz's points (partial credit). Where the key
    is at hand (a clone of the course repository, or an instructor's grading run) the check
    says question by question what is right; in a graded course run it is not installed, so
    the check only records the answers and says how many are filled in.

    Examples
    --------
    >>> [q.key for q in QUESTIONS_A.questions][:3], len(QUESTIONS_B.questions)
    (['A1', 'A2', 'A3'], 12)
    """

    def __init__(self, part: str, questions, scope: dict):
        self.part = part
        self.questions = list(questions)
        self.by_key = {q.key: q for q in self.questions}
        self.scope = scope

    def template(self) -> str:
        """The answer dict with every answer left as ``...``, as Python source."""
        lines = [f'    "{q.key}": ...,  # {"a letter" if q.options else "a number"}'
                 for q in self.questions]
        return "{\n" + "\n".join(lines) + "\n}"

    def _repr_markdown_(self) -> str:
        return "\n\n".join(q.markdown() for q in self.questions)

    def __str__(self) -> str:
        return self._repr_markdown_()

    def key(self) -> dict | None:
        """Question -> :class:`Key`, or None when the key is not installed here."""
        module = load_key("lesson7")
        return None if module is None else getattr(module, f"key_{self.part.lower()}")(self.scope)

    def check(self, answer) -> None:
        """The checker: returns if every answer is right, else raises :class:`Wrong`.

        The :class:`Wrong` carries the share of questions answered right as its ``score``.
        Without the key, raises :class:`Recorded` once every question has an answer.
        """
        given = _as_answers(answer, self)
        known = {str(k).strip().upper(): v for k, v in given.items()}
        strays = [str(k) for k in given if str(k).strip().upper() not in self.by_key]
        if strays:
            raise Wrong(f"Your answers have the key(s) {_keys(map(repr, strays))}, but quiz "
                        f"{self.part} has the questions {_keys(self.by_key)}. Use those as "
                        "the keys of the dict.")
        if not known or all(_placeholder(v) for v in known.values()):
            raise NotAttempted("Put your answers in the dict (replace each `...`), run that "
                               "cell, then run this check again.")
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
        odd = [(q.key, q.well_formed(known[q.key])) for q in self.questions
               if q.key not in open_ and q.well_formed(known[q.key])]
        lines = []
        if open_:
            lines.append(f"Not answered yet: {_keys(open_)}.")
        lines += [f"✗ {key}: {reason}" for key, reason in odd]
        if lines:
            raise Wrong("\n".join(lines))
        raise Recorded(f"All {len(self.questions)} answers of quiz {self.part} are recorded. "
                       "In this course run the quiz is marked after you submit, one point "
                       "share per question.")


def _as_answers(answer, questions: Questions) -> Mapping:
    if callable(answer):
        try:
            answer = call(answer)
        except NotAttempted:
            raise NotAttempted("Replace each `...` in the dict with your answer, delete the "
                               "`raise NotImplementedError()` line, run the cell, then run "
                               "this check again.") from None
    if not isinstance(answer, Mapping):
        first = questions.questions[0].key
        raise Wrong(f"Your answers should be a dict from question to answer, like "
                    f"{{'{first}': 'b', ...}}; got {one_line(answer)}.")
    return answer


# ---------------------------------------------------------------- part A: lessons 1-3
def _questions_a() -> tuple[list[Question], dict]:
    cross = (np.zeros((5, 4)) @ np.zeros((7, 4)).T).shape  # (n_q, n_k) from (5, d_k) (7, d_k)
    dog = dog_bites_man()
    qi, kj = dog.tokens.index("bites"), dog.tokens.index("dog")
    q, k = dog.q[qi], dog.k[kj]  # (d_k,) each
    d = q.size
    raw = float(q @ k)
    geometry = np.array([[3.0, 0.0], [0.0, 5.0], [-1.0, 0.0], [0.5, 0.5]])  # (4, 2) keys
    g_scores = geometry @ np.array([1.0, 0.0])  # (4,)
    d_var, wide = 64, 512
    collapsed = attnlab.softmax(COLLAPSE_ROW * 100)  # (3,)
    jac = attnlab.softmax_jacobian(collapsed)  # (3, 3)
    plain = SCORE_ROW / SCORE_ROW.sum()  # (4,) what dividing by the sum gives
    p = attnlab.softmax(SCORE_ROW)  # (4,)
    hot = attnlab.softmax(SCORE_ROW, temperature=5.0)
    limits = {t: math.log(float(np.finfo(t).max)) for t in (np.float16, np.float32, np.float64)}
    far = np.array([0.0, -800.0])
    with np.errstate(divide="ignore", under="ignore"):
        naive_log = float(np.log(attnlab.softmax(far))[1])  # -inf: the softmax underflowed
    qs = [
        Question(
            "A1", 1,
            "Cross-attention: 5 queries of one sentence read 7 keys of another, with "
            "d_k = 4, so Q has shape (5, 4) and K has shape (7, 4). What is the shape of "
            "Q Kᵀ?",
            options=(("a", str(cross)), ("b", str(cross[::-1])), ("c", "(4, 4)"),
                     ("d", "(5, 4)")),
        ),
        Question(
            "A2", 1,
            f'In "{" ".join(dog.tokens)}", query "{dog.tokens[qi]}" is q = {_short(q)} and key '
            f'"{dog.tokens[kj]}" is k = {_short(k)} (d_k = {d}). What is their **scaled** '
            "score q·k / √d_k?",
            tolerance=1e-3,
        ),
        Question(
            "A3", 1,
            f"A query q = [1, 0] meets four keys: (a) {_short(geometry[0])}, (b) "
            f"{_short(geometry[1])}, (c) {_short(geometry[2])} and (d) {_short(geometry[3])}. "
            "Which key gets the **lowest** score?",
            options=tuple(zip("abcd", (f"key {_short(g)}" for g in geometry), strict=True)),
        ),
        Question(
            "A4", 2,
            f"q and k each have d_k = {d_var} entries, independent, with mean 0 and variance "
            "1. What is the variance of q·k?",
            tolerance=1e-6,
        ),
        Question(
            "A5", 2,
            "Dividing q·k by d_kᵃ leaves it a variance of d_k^(1 − 2a). Which divisor keeps "
            "the variance of the scaled scores at 1 for every d_k?",
            options=(("a", "d_k^(1/3)"), ("b", "d_k^(1/2)"), ("c", "d_k^(2/3)"), ("d", "d_k")),
        ),
        Question(
            "A6", 2,
            f"p = softmax({_short(COLLAPSE_ROW)} × 100) has largest weight {collapsed.max():.6f}"
            ": it has collapsed. What does its Jacobian diag(p) − p pᵀ look like?",
            options=(("a", "almost all zeros: almost no gradient reaches the scores"),
                     ("b", "close to the identity matrix: the gradient passes unchanged"),
                     ("c", "large on the winning key, small elsewhere"),
                     ("d", "undefined, because p has a weight of 1")),
        ),
        Question(
            "A7", 3,
            f"Dividing the scores {_short(SCORE_ROW)} by their sum gives {_short(plain)}. "
            "Why doesn't attention make its weights that way?",
            options=(("a", "it would be slower than exponentiating"),
                     ("b", "a negative score gives a negative weight, and scores that add "
                           "up to 0 cannot be divided at all"),
                     ("c", "the weights would not add up to 1"),
                     ("d", "it would change which key has the largest score")),
        ),
        Question(
            "A8", 3,
            f"What is the softmax weight of the **third** key for the scores "
            f"{_short(SCORE_ROW)}? Give 3 decimals.",
            tolerance=2e-3,
        ),
        Question(
            "A9", 3,
            "Divide those scores by a temperature T = 5 before the softmax. The weights "
            "become",
            options=(("a", "flatter, with a higher entropy, and the keys keep their order"),
                     ("b", "sharper, with a lower entropy"),
                     ("c", "flatter, and the order of the keys can change"),
                     ("d", "the same: softmax does not change when the scores change "
                           "together")),
        ),
        Question(
            "A10", 3,
            "Above which score x does exp(x) overflow to inf in **float16**? Give 2 decimals.",
            tolerance=0.01,
        ),
        Question(
            "A11", 3,
            f"For x = {_short(far)} in float64, np.log(softmax(x))[1] is {naive_log:g}. "
            "What is the exact-enough value, log_softmax(x)[1]? Give 2 decimals.",
            tolerance=0.01,
        ),
    ]
    return qs, {name: value for name, value in locals().items() if name != "qs"}


# ---------------------------------------------------------------- part B: lessons 4-6
def _questions_b() -> tuple[list[Question], dict]:
    cat = cat_sat_down()
    q, k, v = cat.x @ cat.w_q, cat.x @ cat.w_k, cat.x @ cat.w_v  # (4, 8) each
    _, cat_w = attnlab.scaled_dot_product_attention(q, k, v)  # (4, 4)
    busiest = float(column_mass(cat_w).max())
    h = normalised_entropy(attnlab.softmax(SCORE_ROW))
    raw_h = float(attnlab.entropy(attnlab.softmax(SCORE_ROW)))
    link = pattern_example("link")
    shown = "\n".join(f"    {t:>7} {_short(row.round(2))}" for t, row in
                      zip(link.tokens, link.weights, strict=True))
    two_d = query_and_keys_2d()
    w2 = attnlab.softmax(two_d.keys @ two_d.query)  # (3,)
    out = w2 @ two_d.values  # (2,)
    mean = two_d.values.mean(axis=0)  # (2,)
    points = {"a": np.array([2.0, 2.0]), "b": mean.round(2), "c": np.array([-1.5, 0.0]),
              "d": np.array([1.5, 1.5])}
    inside = {key: bool(np.all(barycentric(p, two_d.values) >= 0)) for key, p in points.items()}
    n_mask = 6
    causal = int(attnlab.causal_mask(n_mask).sum())
    with np.errstate(over="ignore"):
        fill16 = np.float16(-1e9)
    shapes = np.zeros((2, 8, 10, 8)) @ np.zeros((2, 8, 10, 8)).swapaxes(-1, -2)
    qs = [
        Question(
            "B1", 4,
            "In a heatmap of self-attention weights, rows are queries and columns are keys. "
            "Which always add up to 1?",
            options=(("a", "each row"), ("b", "each column"), ("c", "both"),
                     ("d", "only the whole matrix")),
        ),
        Question(
            "B2", 4,
            f"What is the normalised entropy H / log n of softmax({_short(SCORE_ROW)})? Give "
            "3 decimals.",
            tolerance=2e-3,
        ),
        Question(
            "B3", 4,
            f"Which pattern do these weights show?\n\n```\n{shown}\n```",
            options=(("a", "diagonal dominance"), ("b", "off-diagonal links"),
                     ("c", "uniform rows"), ("d", "a hub column")),
        ),
        Question(
            "B4", 4,
            "You draw a heatmap of weights with the colour scale stretched from the smallest "
            "to the largest weight shown, instead of fixed at [0, 1]. What can mislead you?",
            options=(("a", "almost uniform weights look as contrasted as sharp ones"),
                     ("b", "nothing: the colours only relabel the same numbers"),
                     ("c", "the rows no longer add up to 1"),
                     ("d", "the largest weight may no longer be the brightest cell")),
        ),
        Question(
            "B5", 6,
            'In a trained model, the largest weight in the row of "cat" is on "sat". Which '
            "claim does that support on its own?",
            options=(("a", 'the value vector of "sat" gets the largest share of the mix '
                           'that makes the output of "cat"'),
                     ("b", '"sat" is the reason for what the model predicts at "cat"'),
                     ("c", '"sat" adds the longest vector to the output of "cat"'),
                     ("d", 'removing "sat" would change the model\'s output the most')),
        ),
        Question(
            "B6", 5,
            f"A 2-D query {_short(two_d.query)} has keys {_short(two_d.keys)} and values "
            f"{_short(two_d.values)}. Without scaling, its weights are softmax(keys @ query) "
            f"= {_short(w2.round(4))}. What is the **first** coordinate of its output? Give 3 "
            "decimals.",
            tolerance=2e-3,
        ),
        Question(
            "B7", 6,
            "A batch of 2 sequences of 10 tokens, d_model = 64, 8 heads of size 8. What "
            "shape do the attention weights of all the heads have?",
            options=(("a", str(shapes.shape)), ("b", "(2, 10, 64)"), ("c", "(2, 8, 10, 8)"),
                     ("d", "(8, 10, 10)")),
        ),
        Question(
            "B8", 5,
            "Self-attention computes K = X W_K and V = X W_V from the same tokens. Why two "
            "matrices?",
            options=(("a", "W_K decides how a token is found; W_V what it passes on once "
                           "found"),
                     ("b", "no reason: they are always equal"),
                     ("c", "W_V decides the weights, W_K the output"),
                     ("d", "W_V only changes the shape")),
        ),
        Question(
            "B9", 5,
            f"Three 2-D value vectors: {_short(two_d.values)}. Which point can an attention "
            "output over them be?",
            options=tuple((key, str(_short(p))) for key, p in points.items()),
        ),
        Question(
            "B10", 5,
            "Raise the score of one key, A, and leave the others. The output",
            options=(("a", "moves towards the value vector of A"),
                     ("b", "moves towards the key vector of A"),
                     ("c", "moves away from the value vector of A"),
                     ("d", "stays where it is")),
        ),
        Question(
            "B11", 6,
            f"How many entries of the causal mask of a {n_mask}-token sequence are True "
            "(may attend)?",
            tolerance=0.5,
        ),
        Question(
            "B12", 6,
            "A padded batch in float16. One row has every key masked, and the masked scores "
            "are filled with −1e9 (cast to float16). A softmax that subtracts the row max, "
            "with no special case, turns that row into",
            options=(("a", "all zeros"), ("b", "equal weights on the masked keys"),
                     ("c", "not-a-number (NaN)"), ("d", "an error")),
        ),
    ]
    return qs, {name: value for name, value in locals().items() if name != "qs"}


QUESTIONS_A = Questions("A", *_questions_a())
QUESTIONS_B = Questions("B", *_questions_b())


_QUIZ_HINTS = [
    "Each question names the idea it tests; the lesson it comes from has the explanation "
    "(A: lessons 1–3, B: lessons 4–6). Working from the course repository you can check "
    "part of your answers at any time: the check marks what is right so far and leaves the "
    "rest open. In a graded course run it only records your answers until you submit.",
    "For the questions that ask for a number, compute it in a scratch cell rather than in "
    "your head: `attnlab.softmax`, `attnlab.log_softmax`, `attnlab.entropy`, "
    "`attnlab.causal_mask` and `np.finfo` do the work. Write the number itself into the "
    "dict (or the expression that computes it).",
    "Read the reason the check gives for each answer that is not yet right: it says why that "
    "answer fails without saying which one is right. Then re-read the Key points cell of the "
    "lesson named in the question's topic.",
]

quiz_a = Exercise(
    "Exercise 7.1 (quiz A: scores, scaling and softmax)",
    QUESTIONS_A.check,
    hints=_QUIZ_HINTS,
)
quiz_b = Exercise(
    "Exercise 7.2 (quiz B: heatmaps, values, shapes and masks)",
    QUESTIONS_B.check,
    hints=_QUIZ_HINTS,
)


# ================================================================= bug hunt 1: √d_model
def buggy_multi_head_attention(x, w_q, w_k, w_v, n_heads):
    """Multi-head self-attention: x (n, d_model), w_* (d_model, d_model); returns (n, d_model)."""
    n, d_model = x.shape
    d_head = d_model // n_heads
    q = (x @ w_q).reshape(n, n_heads, d_head).swapaxes(0, 1)  # (n_heads, n, d_head)
    k = (x @ w_k).reshape(n, n_heads, d_head).swapaxes(0, 1)  # (n_heads, n, d_head)
    v = (x @ w_v).reshape(n, n_heads, d_head).swapaxes(0, 1)  # (n_heads, n, d_head)
    scores = q @ k.swapaxes(-1, -2) / np.sqrt(d_model)  # (n_heads, n, n)
    weights = attnlab.softmax(scores, axis=-1)  # (n_heads, n, n)
    heads = weights @ v  # (n_heads, n, d_head)
    return heads.swapaxes(0, 1).reshape(n, d_model)  # (n, d_model) the heads side by side


def _heads(a, n_heads, split="right"):
    """(n, d_model) -> (n_heads, n, d_head); ``split="wrong"`` reshapes without the swap."""
    n, d_model = a.shape
    if split == "wrong":
        return a.reshape(n_heads, n, d_model // n_heads)
    return a.reshape(n, n_heads, d_model // n_heads).swapaxes(0, 1)


def _multi_head(x, w_q, w_k, w_v, n_heads, divisor=None, split="right"):
    """Multi-head attention through attnlab, dividing each head's scores by ``divisor``."""
    n, d_model = x.shape
    q, k, v = (_heads(x @ w, n_heads, split) for w in (w_q, w_k, w_v))  # (h, n, d_head) each
    scale = None if divisor is None else 1.0 / divisor
    heads, _ = attnlab.scaled_dot_product_attention(q, k, v, scale=scale)  # (h, n, d_head)
    if split == "wrong":
        return heads.reshape(n, d_model)
    return heads.swapaxes(0, 1).reshape(n, d_model)  # (n, d_model)


def scale_cases() -> list[tuple[str, tuple]]:
    """(description, (x, w_q, w_k, w_v, n_heads)) the checker tries.

    "The cat sat down" (d_model = 16) with 8 heads (d_head = 2, so √d_model is √8 times too
    large; no other divisor a learner might try coincides with it there) and 4 heads, then
    5 random tokens with d_model = 12 and 3 heads.
    """
    cat = cat_sat_down()
    wide = cat_sat_down_wide(max_d_k=16)
    w_v = np.random.default_rng(71).normal(scale=16**-0.5, size=(16, 16))  # (d_model, d_model)
    rng = np.random.default_rng(72)
    x5 = rng.normal(size=(5, 12))  # (n, d_model)
    w5 = rng.normal(scale=12**-0.5, size=(3, 12, 12))  # three (d_model, d_model)
    text = f'"{" ".join(cat.tokens)}" (x of shape {cat.x.shape})'
    return [
        (f"{text} with 8 heads", (cat.x, wide.w_q, wide.w_k, w_v, 8)),
        (f"{text} with 4 heads", (cat.x, wide.w_q, wide.w_k, w_v, 4)),
        ("5 random tokens (x of shape (5, 12)) with 3 heads", (x5, *w5, 3)),
    ]


def _scale_mistakes(args) -> list[tuple[np.ndarray, str]]:
    x, w_q, w_k, w_v, h = args
    d_model = x.shape[1]
    d_head = d_model // h
    return [
        (_multi_head(*args, divisor=math.sqrt(d_model)),
         f"You divide every head's scores by √d_model = √{d_model}. But each head's scores are "
         f"dot products of d_head = {d_head} numbers, so their spread grows like √d_head, and "
         f"that is what to divide by. √d_model is √n_heads = {math.sqrt(h):.3g} times too "
         "large: every head's weights come out too flat, as if at a temperature of "
         f"{math.sqrt(h):.3g}. The bug hides when n_heads = 1."),
        (_multi_head(*args, divisor=1.0),
         f"You do not scale the scores at all: each head's weights come out too sharp. Divide "
         f"by √d_head = √{d_head}."),
        (_multi_head(*args, divisor=float(d_head)),
         f"You divide by d_head = {d_head}; the spread of a dot product grows like the "
         "square root of its length: divide by √d_head."),
        (_multi_head(*args, divisor=math.sqrt(h)),
         f"You divide by √n_heads = √{h}; the divisor is √d_head, the length of the vectors "
         "in each dot product."),
        (_multi_head(*args, split="wrong"),
         "The heads are split wrongly: reshaping (n, d_model) straight to (n_heads, n, d_head) "
         "mixes different tokens into one head. Reshape to (n, n_heads, d_head) and swap the "
         "first two axes, then swap back before joining the heads."),
    ]


def _check_scale(answer) -> None:
    for description, args in scale_cases():
        what = f"multi_head_attention(...) for {description}"
        got, messages = _run(answer, what, *(np.copy(a) for a in args[:4]), args[4])
        expected = _multi_head(*args)  # (n, d_model)
        _compare(got, expected, what, messages, _scale_mistakes(args))


def _run(answer, what, *args, advice=""):
    """The learner's result and numpy's warnings; :class:`Wrong` naming the case if it failed.

    ``advice`` is added when the function raised a ValueError (e.g. shapes that do not fit).
    """
    try:
        return call_watching(answer, *args)
    except Wrong as exc:
        extra = advice if "raised ValueError" in str(exc) else ""
        raise Wrong(f"{what} failed. {exc}{extra}") from None


def _compare(got, expected, what, messages, mistakes, tol=None) -> None:
    """:class:`Wrong` unless ``got`` is ``expected``; the reason names a known mistake."""
    tol = tol or {"rtol": 1e-6, "atol": 1e-9}
    try:
        values = np.asarray(got, dtype=float)
    except (TypeError, ValueError):
        raise Wrong(f"{what} should be an array of shape {expected.shape}; got "
                    f"{one_line(got)}.") from None
    if values.shape != expected.shape:
        raise Wrong(f"{what} should have shape {expected.shape}, but yours has shape "
                    f"{values.shape}.")
    if np.allclose(values, expected, **tol):
        if messages:
            raise Wrong(f"{what} gives the right numbers, but numpy warned: "
                        f"{'; '.join(messages)}. Your function must not warn.")
        return
    cause = next((text for wrong, text in mistakes if wrong.shape == values.shape
                  and np.allclose(values, wrong, equal_nan=True, **tol)), "")
    if not cause and not np.all(np.isfinite(values)):
        cause = "Yours contains nan or inf."
    said = (f"{what} should be {_short(expected.round(4))}, but yours gave "
            f"{_short(values.round(4))}.")
    if expected.size > 16:  # a long array: show the first row that differs
        rows = values.reshape(len(values), -1), expected.reshape(len(expected), -1)
        i = next(i for i, (a, b) in enumerate(zip(*rows, strict=True))
                 if not np.allclose(a, b, equal_nan=False, **tol))
        said = (f"{what}: row {i} should be {_short(rows[1][i].round(4))}, but yours gave "
                f"{_short(rows[0][i].round(4))}.")
    raise Wrong(f"{said} {cause}{warned(messages)}".rstrip())


scale_bug = Exercise(
    "Exercise 7.3 (bug hunt: scaling by √d_model)",
    _check_scale,
    hints=[
        "Run the buggy function with 1 head and with 8 heads and compare each with "
        "`attnlab.scaled_dot_product_attention` on one head's q, k and v. With one head they "
        "agree. What changes, inside one head, as the number of heads grows?",
        "The division by √d_k exists because the spread of q·k grows like the square root of "
        "the number of terms in the dot product. How many terms does one head's q·k have?",
        "Only the line that computes the scores is wrong. Which size does one head's dot "
        'product add over: d_model, or d_model // n_heads?',
    ],
)


# ================================================================= bug hunt 2: mask after
def buggy_causal_attention(q, k, v):
    """Causal self-attention: query i sees keys 0 … i. Returns (output, weights)."""
    n, d_k = q.shape[-2], q.shape[-1]
    scores = q @ k.swapaxes(-1, -2) / np.sqrt(d_k)  # (..., n, n)
    weights = attnlab.softmax(scores, axis=-1)  # (..., n, n)
    weights = weights * attnlab.causal_mask(n)  # (..., n, n) the future set to 0
    return weights @ v, weights  # (..., n, d_v), (..., n, n)


def mask_cases() -> list[tuple[str, tuple]]:
    """(description, (q, k, v)) the checker tries: the running example, "dog bites man" and a
    batch of 2 random sequences of 5 tokens (d_k = 3, d_v = 2)."""
    cat, dog = cat_sat_down(), dog_bites_man()
    rng = np.random.default_rng(73)
    batch = rng.normal(size=(2, 5, 3)), rng.normal(size=(2, 5, 3)), rng.normal(size=(2, 5, 2))
    return [
        (f'"{" ".join(cat.tokens)}" (q, k, v of shape (4, 8))',
         (cat.x @ cat.w_q, cat.x @ cat.w_k, cat.x @ cat.w_v)),
        (f'"{" ".join(dog.tokens)}" (q, k, v of shape (3, 4))', (dog.q, dog.k, dog.v)),
        ("a batch of 2 random sequences (q, k of shape (2, 5, 3), v of shape (2, 5, 2))", batch),
    ]


def _mask_reference(q, k, v, allowed):
    with np.errstate(all="ignore"):
        return attnlab.scaled_dot_product_attention(q, k, v, mask=allowed)


def _mask_mistakes(q, k, v) -> list[tuple[np.ndarray, str]]:
    n = q.shape[-2]
    causal = attnlab.causal_mask(n)  # (n, n)
    plain = attnlab.softmax(attnlab.attention_scores(q, k))  # (..., n, n)
    after = plain * causal
    zero = attnlab.softmax(np.where(causal, attnlab.attention_scores(q, k), 0.0))
    sums = after.sum(axis=-1).ravel()
    return [
        (after, "You zero the future weights after the softmax, so the weights left in each "
         f"row add up to less than 1 (row sums {_short(sums.round(3))}): the share the future "
         "keys had is lost instead of going to the allowed keys. Mask the scores before the "
         "softmax, with -np.inf, so that the allowed keys share all the weight."),
        (zero, "You set the future scores to 0 before the softmax; but exp(0) = 1, so the "
         "future keys still get weight. Fill them with -np.inf, whose exp is exactly 0."),
        (plain, "Nothing is masked: every query reads future keys."),
        (_mask_reference(q, k, v, causal.T)[1], "Your mask is the upper triangle: each query "
         "sees the future and not the past. Query i may see keys j ≤ i."),
        (_mask_reference(q, k, v, np.tril(causal, -1))[1], "Your mask leaves out the "
         "diagonal: a query must be able to see itself (j ≤ i, not j < i)."),
    ]


def _check_mask(answer) -> None:
    for description, (q, k, v) in mask_cases():
        what = f"causal_attention(q, k, v) for {description}"
        advice = (" In a batch, k.T reverses *all* the axes; swap only the last two with "
                  "k.swapaxes(-1, -2)." if q.ndim > 2 else "")
        got, messages = _run(answer, what, q.copy(), k.copy(), v.copy(), advice=advice)
        if not (isinstance(got, tuple | list) and len(got) == 2):
            raise Wrong(f"{what} should return two arrays, (output, weights), like "
                        f"attnlab.scaled_dot_product_attention; yours returned {one_line(got)}.")
        output, weights = got
        expected_out, expected_w = attnlab.scaled_dot_product_attention(
            q, k, v, mask=attnlab.causal_mask(q.shape[-2]))
        _compare(weights, expected_w, f"{what}: the weights", messages, _mask_mistakes(q, k, v))
        _compare(output, expected_out, f"{what}: the output (the weights are right)", messages,
                 [(np.broadcast_to(v.mean(axis=-2, keepdims=True), expected_out.shape),
                   "That is the plain average of the values: return weights @ v.")])


mask_bug = Exercise(
    "Exercise 7.4 (bug hunt: masking after the softmax)",
    _check_mask,
    hints=[
        "Run the buggy function on the running example and add up each row of the weights it "
        "returns. What should every row add up to, and where did the rest go?",
        "The mask must act on the scores, before the softmax turns them into weights: a "
        "forbidden key needs a score whose exp is exactly 0.",
        'Move the masking before the softmax: fill the scores of the future keys with −∞ (use '
        '`np.where` with `attnlab.causal_mask(n)`), then take the softmax as before and delete '
        'the line after it.',
    ],
)


# ================================================================= bug hunt 3: no max shift
def buggy_stable_attention(q, k, v):
    """Attention in the dtype of q, k and v (float16 on a GPU, say). Returns (n_q, d_v)."""
    scores = q @ k.swapaxes(-1, -2) / q.shape[-1] ** 0.5  # (n_q, n_k) in q's dtype
    e = np.exp(scores)  # (n_q, n_k)
    weights = e / e.sum(axis=-1, keepdims=True)  # (n_q, n_k) each row sums to 1
    return weights @ v  # (n_q, d_v)


def _scores_as_queries(scores, dtype):
    """q, k whose scaled scores q kᵀ / √d are exactly ``scores`` (n_q, d): k = √d · I."""
    scores = np.asarray(scores, dtype=float)  # (n_q, d)
    d = scores.shape[1]
    return scores.astype(dtype), (math.sqrt(d) * np.eye(d)).astype(dtype)  # (n_q, d), (d, d)


def shift_cases() -> list[tuple[str, tuple]]:
    """(description, (q, k, v)) the checker tries; k = √d · I, so the scores are q itself.

    First float16 scores of at most 10, which the naive form survives but a shift by the
    row's min or mean does not (one score far above the rest); then scores up to 14 in
    float16 (exp overflows past about 11.1), up to 120 in float32 (past about 88.7), and rows
    near ±1000 in float64: one row far below the others, so a single max over the whole
    matrix underflows it, and float64 alone does not save the naive form.
    """
    rng = np.random.default_rng(74)
    v = rng.normal(size=(4, 3))  # (n_k, d_v)
    table = [
        ("float16", [[10.0, -20.0, -20.0, -20.0], [4.0, -9.0, 0.0, 1.0]]),
        ("float16", [[14.0, 9.0, 2.0, -3.0], [1.0, 2.0, 0.5, -1.0], [12.0, 12.5, 3.0, 0.0]]),
        ("float32", [[120.0, 100.0, 115.0, 90.0], [-5.0, 0.0, 2.0, 1.0]]),
        ("float64", [[1000.0, 990.0, 995.0, 999.0], [-1000.0, -1005.0, -990.0, -998.0],
                     [0.0, 3.0, 1.0, 2.0]]),
    ]
    cases = []
    for dtype, scores in table:
        q, k = _scores_as_queries(scores, dtype)
        cases.append((f"{dtype} inputs whose scaled scores are {_short(np.array(scores))}",
                      (q, k, v.astype(dtype))))
    return cases


def _shift_mistakes(q, k, v) -> list[tuple[np.ndarray, str]]:
    wide = [a.astype(float) for a in (q, k, v)]
    scores = attnlab.attention_scores(*wide[:2])  # (n_q, n_k) float64
    limit = math.log(float(np.finfo(q.dtype).max))

    def with_shift(shift, dtype=q.dtype):
        with np.errstate(all="ignore"):
            e = np.exp((scores - shift).astype(dtype))
            return (e / e.sum(axis=-1, keepdims=True)) @ wide[2]

    wider = (" Computing in a wider dtype, as here, only moves this limit." if q.dtype ==
             np.float64 else "")
    return [
        (with_shift(0.0), f"exp of a score above {limit:.4g} overflows {q.dtype} to inf, and "
         "inf / inf is nan. Subtract each row's largest score before exponentiating: the "
         f"softmax does not change (the factor cancels), and every exp is then at most 1."
         f"{wider}"),
        (with_shift(scores.max()), "You subtract one max for the whole matrix: a row whose "
         "scores are all far below it underflows to 0 / 0. Subtract each row's own max "
         "(axis=-1, keepdims=True)."),
        (with_shift(scores.min(axis=-1, keepdims=True)), "You subtract the row's smallest "
         "score, which makes every score ≥ 0 and the overflow worse: subtract the largest."),
        (with_shift(scores.mean(axis=-1, keepdims=True)), "Subtracting the row's mean still "
         "leaves scores far above 0 when one score stands out: subtract the largest."),
    ]


def _check_shift(answer) -> None:
    for description, (q, k, v) in shift_cases():
        what = f"stable_attention(q, k, v) for {description}"
        got, messages = _run(answer, what, q.copy(), k.copy(), v.copy())
        expected, _ = attnlab.scaled_dot_product_attention(q, k, v)  # (n_q, d_v)
        loose = q.dtype == np.float16
        tol = {"rtol": 2e-2, "atol": 2e-2} if loose else {"rtol": 1e-5, "atol": 1e-6}
        _compare(got, expected.astype(float), what, messages, _shift_mistakes(q, k, v), tol)


shift_bug = Exercise(
    "Exercise 7.5 (bug hunt: softmax without the max shift)",
    _check_shift,
    hints=[
        "Run the buggy function on float16 inputs with a score of 12 and look at "
        "`np.exp(np.float16(12))`. Where does the nan come from?",
        "softmax(s) = softmax(s − c) for any constant c in a row. Which c makes every exp at "
        "most 1, so nothing can overflow, while the largest exp is exactly 1, so the sum "
        "can't be 0?",
        "Change the one line that exponentiates: subtract each row's maximum (along `axis=-1`, "
        '`keepdims=True`) from the scores inside `np.exp`.',
    ],
)
