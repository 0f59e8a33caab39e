"""Lesson 7 checks: the quiz judges each question, the bug hunts reject each bug with a reason."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
import worked_answers as W
from answer_tables import Answers, accept_reject, assert_right, assert_wrong, judged

import attnlab
from attnlab.examples import cat_sat_down
from attnlab.exercises import Outcome
from attnlab.exercises import lesson7 as L
from attnlab.exercises.kit import precision as P

A = W.solution_quiz_a()
B = W.solution_quiz_b()


def answers(base, **changes):
    """The right answers with some changed (``None`` removes one: not answered)."""
    given = dict(base)
    for key, value in changes.items():
        if value is None:
            given.pop(key)
        else:
            given[key] = value
    return given


# ---------------------------------------------------------------- 7.1 and 7.2 the quiz
QUIZ_A_RIGHT = {
    "reference": W.solution_quiz_a,
    "a plain dict": A,
    "upper-case letters, strings for numbers, lower-case keys": {
        key.lower(): (value.upper() if isinstance(value, str) else str(value))
        for key, value in A.items()
    },
    "letters in brackets, numbers rounded as asked": answers(
        A, A3="(d)", A8=round(A["A8"], 3), A10=round(A["A10"], 2), A11=round(A["A11"], 2)
    ),
    "an option's text instead of its letter, numpy numbers": answers(
        A,
        A9="flatter, with a higher entropy, and the keys keep their order",
        A1=np.int64(35),
        A5=np.float32(16.0),
    ),
}
LIMIT32 = math.log(float(np.finfo(np.float32).max))
QUIZ_A_WRONG = {
    "d_k kept as an axis": (
        answers(A, A1=5 * 7 * 4),
        "d_k is added up inside each dot product: it is not an axis of the result",
    ),
    "a square score matrix": (answers(A, A1=25), "the score matrix need not be square"),
    "the size of Q": (answers(A, A1=20), "that is the size of Q"),
    "raw score": (answers(A, A2=1.0), "that is the raw score q·k; scale it"),
    "divided by d_k": (answers(A, A2=0.25), "you divided by d_k"),
    "orthogonal is lowest": (
        answers(A, A3="a"),
        "it is at right angles to q, so its score is 0 whatever its length",
    ),
    "most opposite is lowest": (answers(A, A3="b"), "length counts as well as angle"),
    "shortest is lowest": (answers(A, A3="c"), "near 0 is not the lowest"),
    "the standard deviation": (answers(A, A4=8), "that is the standard deviation"),
    "variance divided by the divisor": (
        answers(A, A5=64),
        "you divided the variance by the divisor",
    ),
    "scaling always gives 1": (answers(A, A5=1), "that is what dividing by √d_k gives"),
    "std for the wrong power": (answers(A, A5=4), "that is the standard deviation"),
    "Jacobian is the identity": (answers(A, A6="a"), "compute it: its largest entry is"),
    "scale does not matter": (answers(A, A6="d"), "softmax ignores *adding* the same number"),
    "same weights as softmax": (
        answers(A, A7="b"),
        "compare them: softmax of these scores is [0.156, 0.094, 0.698, 0.052]",
    ),
    "plain normalisation": (answers(A, A8=round(2.5 / 3.9, 3)), "divides the score by the sum"),
    "fourth key": (
        answers(A, A8=float(attnlab.softmax(np.array([1, 0.5, 2.5, -0.1]))[3])),
        "numpy counts from 0",
    ),
    "temperature sharpens": (answers(A, A9="a"), "T > 1 shrinks the gaps"),
    "one exp's limit": (
        answers(A, A10=round(LIMIT32, 2)),
        "that is where exp of one score "
        "overflows; here the sum of 1000 of them reaches the largest float32 "
        "first",
    ),
    "log10 of n": (answers(A, A10=LIMIT32 - 3), "the exponent is a natural log"),
    "log of softmax": (answers(A, A11=-np.inf), "after the weight underflowed to 0"),
    "not an option": (answers(A, A3="e"), "'e' is not one of the options; answer a, b, c or d"),
    "a letter for a number": (answers(A, A4="b"), "this one wants a number"),
    "a number for a letter": (answers(A, A3=1), "this one is multiple choice"),
    "nan": (answers(A, A10=float("nan")), "yours is not-a-number"),
    "two missing": (answers(A, A3=None, A4=...), "9 of 11 right so far; not answered yet: A3, A4."),
    "a stray key": (answers(A, B1="a"), "the key(s) 'B1', but quiz A has the questions A1"),
    "a list": ([A["A1"], A["A2"]], "should be a dict from question to answer"),
    "one wrong among many": (answers(A, A7="c"), "10 of 11 right so far; not yet right: A7."),
}
QUIZ_B_RIGHT = {
    "reference": W.solution_quiz_b,
    "a plain dict": B,
    "rounded": answers(B, B2=round(B["B2"], 3), B6=round(B["B6"], 3)),
    "B8 as the output's text": answers(B, B8="[1, 0]"),
}
H = float(attnlab.entropy(attnlab.softmax(np.array([1, 0.5, 2.5, -0.1]))))
QUIZ_B_WRONG = {
    "columns sum to 1": (answers(B, B1="a"), "a column is what one key hands out"),
    "entropy in bits": (answers(B, B2=H / math.log(2)), "that is H in bits"),
    "normalised entropy": (
        answers(B, B2=H / math.log(4)),
        "that is H / log n, the normalised entropy",
    ),
    "diagonal": (answers(B, B3="a"), "is it on the diagonal"),
    "stretched scale is fine": (answers(B, B4="a"), "the same colour then means different"),
    "stretching flattens sharp rows": (
        answers(B, B4="b"),
        "a sharp map already spans about 0 to 1",
    ),
    "weights as reasons": (answers(B, B5="b"), "weights are not explanations"),
    "plain average": (answers(B, B6=0.5), "that is the plain average of the values"),
    "no batch axis": (answers(B, B7="d"), "the batch axis is missing"),
    "mixing the tokens": (answers(B, B8="a"), "you mixed the tokens x themselves"),
    "mixing the keys": (answers(B, B8="b"), "you mixed the keys"),
    "the weights as the output": (answers(B, B8="c"), "those are the weights"),
    "outside the hull": (answers(B, B9="d"), "a weight can't be negative"),
    "only the winner moves it": (
        answers(B, B10="c"),
        "a higher score raises A's weight whatever the others are",
    ),
    "strict triangle": (answers(B, B11=15), "the diagonal is True"),
    "uniform in float16": (answers(B, B12="b"), "np.float16(-1e9) is -inf"),
}


def test_every_objective_of_lessons_1_to_6_has_a_question():
    lessons = [q.lesson for q in L.QUESTIONS_A.questions + L.QUESTIONS_B.questions]
    assert {1, 2, 3, 4, 5, 6} <= set(lessons)
    assert len(L.QUESTIONS_A.questions) == len(A) and len(L.QUESTIONS_B.questions) == len(B)


def _with_keys():
    """Every question with its key (the key is read from the repository's answer_keys/)."""
    for questions in (L.QUESTIONS_A, L.QUESTIONS_B):
        key = questions.key()
        for question in questions.questions:
            yield question, key[question.key]


def test_reasons_never_give_the_answer_away():
    for question, key in _with_keys():
        if question.options:
            right_text = dict(question.options)[key.answer]
            for _, reason in key.why_not:
                assert right_text not in reason, (question.key, reason)
        else:
            for _, reason in key.why_not:
                assert f"{key.answer:.3g}" not in reason, (question.key, reason)


def test_every_wrong_option_has_a_reason():
    for question, key in _with_keys():
        if question.options:
            reasons = dict(key.why_not)
            for letter, _ in question.options:
                assert (letter == key.answer) != (letter in reasons), (question.key, letter)
        else:
            assert key.nudge or key.why_not, question.key


def test_an_empty_template_is_not_attempted():
    for exercise, questions in ((L.quiz_a, L.QUESTIONS_A), (L.quiz_b, L.QUESTIONS_B)):
        template = eval(questions.template())  # {"A1": ..., ...}
        feedback = judged(exercise, template)
        assert feedback.outcome is Outcome.NOT_ATTEMPTED, feedback.message
        assert judged(exercise, {}).outcome is not Outcome.CORRECT


def test_a_partial_answer_reports_what_is_right_without_revealing_the_rest():
    feedback = judged(L.quiz_a, {"A4": 64, "A1": 140})
    lines = feedback.message.splitlines()
    assert lines[0] == (
        "1 of 11 right so far; not yet right: A1; not answered yet: A2, A3, A5, "
        "A6, A7, A8, A9, A10, A11."
    )
    assert lines[-1].startswith("✓ right: A4.")
    assert "35" not in feedback.message  # the right answer to A1


def test_each_question_names_its_idea_and_links_its_lesson():
    for question in L.QUESTIONS_A.questions + L.QUESTIONS_B.questions:
        text = question.markdown()
        assert f"*{question.topic}*, from lesson {question.lesson}, [" in text, text
        assert f"(0{question.lesson}-" in text and ".ipynb)" in text, text
    assert "A: lessons 1–3" in L._QUIZ_HINTS[0] and "link" in L._QUIZ_HINTS[2]


def test_right_answers_are_spread_over_the_letters():
    letters = [key.answer for _, key in _with_keys() if isinstance(key.answer, str)]
    assert set(letters) == set("abcd")
    assert max(letters.count(x) for x in "abcd") <= len(letters) // 2


def _notebook_cells() -> list[str]:
    import json
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    cells = json.loads(next(root.glob("source/07-*/07-*.ipynb")).read_text())["cells"]
    return [(c["cell_type"], "".join(c["source"])) for c in cells]


def _shows(text: str, value: float) -> bool:
    """Whether ``text`` shows ``value`` as a learner would write it (2 decimals or 4 digits)."""
    import re

    return any(
        re.search(rf"(?<![\d.]){re.escape(shown)}(?!\d)", text)
        for shown in {f"{value:.2f}", f"{value:.4g}"}
    )


def test_no_cell_of_the_notebook_prints_or_states_a_quiz_answer(capsys):
    """The Markdown and the printed output of lesson 7 hand out no numeric quiz answer."""
    cells = _notebook_cells()
    namespace: dict = {}
    exec(next(text for kind, text in cells if kind == "code"), namespace)  # the imports
    for kind, text in cells:
        if kind == "code" and "print(" in text and "BEGIN SOLUTION" not in text:
            exec(text, namespace)  # noqa: S102 - the course's own cells
    shown = capsys.readouterr().out + "\n".join(t for k, t in cells if k == "markdown")
    numbers = {
        name: key.answer
        for questions in (L.QUESTIONS_A, L.QUESTIONS_B)
        for name, key in questions.key().items()
        if not isinstance(key.answer, str)
    }
    checked = {name: value for name, value in numbers.items() if round(value, 1) != value}
    assert {"A8", "A10", "B2", "B6"} <= set(checked)  # short numbers (0.5, 16) occur anyway
    for name, value in checked.items():
        assert not _shows(shown, value), (name, value)
    assert "(n_q, n_k)" not in shown  # the shape rule behind A1 is not restated


def test_question_numbers_are_computed():
    key_a, key_b = L.QUESTIONS_A.key(), L.QUESTIONS_B.key()
    assert (
        math.isclose(key_a["A2"].answer, 0.5)
        and "[0, 2, 0, 1]" in L.QUESTIONS_A.by_key["A2"].prompt
    )
    assert math.isclose(
        key_a["A10"].answer, math.log(float(np.finfo(np.float32).max)) - math.log(1000)
    )
    assert key_a["A1"].answer == 35 and key_a["A5"].answer == 16
    assert key_b["B11"].answer == 21
    assert "(2, 8, 10, 10)" in dict(L.QUESTIONS_B.by_key["B7"].options).values()


def test_a10_is_where_the_naive_softmax_stops_working():
    """Just below the answer the naive float32 softmax of 1000 equal scores is right, just
    above it every weight is 0 (a finite exp over an infinite sum)."""
    limit = L.QUESTIONS_A.key()["A10"].answer
    for s, expected in ((limit - 0.005, 1e-3), (limit + 0.005, 0.0)):
        row = np.full(1000, s, dtype=np.float32)
        with np.errstate(over="ignore"):
            e = np.exp(row)
            weights = e / e.sum()
        np.testing.assert_allclose(weights, expected, rtol=1e-5)


def test_b8_output_ignores_what_w_v_dropped():
    scope = L.QUESTIONS_B.scope
    assert np.allclose(scope["mixes"]["v"], [1.0, 0.0])
    assert not np.allclose(scope["mixes"]["x"], scope["mixes"]["v"])


def test_without_the_key_answers_are_recorded_not_judged(monkeypatch, tmp_path):
    """A graded course run has no answer_keys/: the check says nothing right or wrong."""
    monkeypatch.setenv("ATTNLAB_ANSWER_KEYS", str(tmp_path / "none"))
    assert L.QUESTIONS_A.key() is None
    complete = judged(L.quiz_a, W.solution_quiz_a())
    assert complete.outcome is Outcome.RECORDED and bool(complete)
    wrong_everywhere = {
        key: ("z" if q.options else -1.0) for key, q in L.QUESTIONS_A.by_key.items()
    }
    feedback = judged(L.quiz_a, {**W.solution_quiz_a(), "A3": "b", "A2": 99.0})
    assert feedback.outcome is Outcome.RECORDED, feedback.message
    assert "right" not in feedback.message.replace("marked", "")
    odd = judged(L.quiz_a, wrong_everywhere)
    assert odd.outcome is Outcome.WRONG and "not one of the options" in odd.message
    assert "A2" not in odd.message  # a number is a well-formed answer, never judged
    partial = judged(L.quiz_a, {"A1": 140})
    assert partial.outcome is Outcome.WRONG and partial.message.startswith("Not answered yet: A2")


def test_quiz_scores_per_question():
    answers = W.solution_quiz_a()
    answers.update({"A1": 140, "A3": "a"})
    feedback = judged(L.quiz_a, answers)
    assert feedback.outcome is Outcome.WRONG and math.isclose(feedback.score, 9 / 11)


# ---------------------------------------------------------------- 7.3 √d_model
def mha_with(divisor):
    """Multi-head attention whose scores are divided by ``divisor(d_model, n_heads)``, written
    with attnlab.softmax (a bug hunt refuses the library's whole attention)."""

    def answer(x, w_q, w_k, w_v, n_heads):
        n, d_model = x.shape
        d_head = d_model // n_heads

        def split(w):
            return (x @ w).reshape(n, n_heads, d_head).swapaxes(0, 1)

        scores = split(w_q) @ split(w_k).swapaxes(-1, -2) / divisor(d_model, n_heads)
        heads = attnlab.softmax(scores, axis=-1) @ split(w_v)
        return heads.swapaxes(0, 1).reshape(n, d_model)

    return answer


def mha_split_wrongly(x, w_q, w_k, w_v, n_heads):
    """Heads made by a reshape without the swap, written with attnlab.softmax."""
    n, d_model = x.shape
    q, k, v = (L._heads(x @ w, n_heads, "wrong") for w in (w_q, w_k, w_v))
    weights = attnlab.softmax(q @ k.swapaxes(-1, -2) / np.sqrt(d_model // n_heads), axis=-1)
    return (weights @ v).reshape(n, d_model)


def mha_loops(x, w_q, w_k, w_v, n_heads):
    """One head at a time with attnlab.softmax, joined with np.concatenate."""
    d = x.shape[1] // n_heads
    outs = []
    for h in range(n_heads):
        cols = slice(h * d, (h + 1) * d)
        q, k, v = x @ w_q[:, cols], x @ w_k[:, cols], x @ w_v[:, cols]
        outs.append(attnlab.softmax(q @ k.T / np.sqrt(d)) @ v)
    return np.concatenate(outs, axis=1)


def mha_library(x, w_q, w_k, w_v, n_heads):
    """One head at a time with the library's whole attention: not a mended function."""
    d = x.shape[1] // n_heads
    outs = []
    for h in range(n_heads):
        cols = slice(h * d, (h + 1) * d)
        out, _ = attnlab.scaled_dot_product_attention(
            x @ w_q[:, cols], x @ w_k[:, cols], x @ w_v[:, cols]
        )
        outs.append(out)
    return np.concatenate(outs, axis=1)


def in_float32(answer):
    """``answer`` computed in float32: its inputs cast down (its result stays float32)."""

    def wrapped(*args):
        return answer(*(a.astype(np.float32) if isinstance(a, np.ndarray) else a for a in args))

    return wrapped


def as_lists(answer):
    """``answer`` returning nested lists (a tuple of them if it returns several arrays)."""

    def wrapped(*args):
        got = answer(*args)
        return (
            tuple(np.asarray(g).tolist() for g in got)
            if isinstance(got, tuple)
            else np.asarray(got).tolist()
        )

    return wrapped


SCALE_RIGHT = {
    "reference": W.solution_multi_head_attention,
    "head by head": mha_loops,
    "1 / sqrt(d_model / h)": mha_with(lambda dm, h: math.sqrt(dm / h)),
    "in float32": in_float32(W.solution_multi_head_attention),
    "as lists": as_lists(W.solution_multi_head_attention),
    "float32 returned as lists": as_lists(in_float32(mha_loops)),
}
SCALE_WRONG = {
    "the buggy function": (
        L.buggy_multi_head_attention,
        "You divide every head's scores by "
        "√d_model = √16. But each head's scores are dot products of "
        "d_head = 2 numbers",
    ),
    "no scaling": (mha_with(lambda dm, h: 1.0), "You do not scale the scores at all"),
    "d_head, not its root": (mha_with(lambda dm, h: dm / h), "You divide by d_head = 2"),
    "root of the head count": (mha_with(lambda dm, h: math.sqrt(h)), "You divide by √n_heads"),
    "heads split wrongly": (
        mha_split_wrongly,
        "The heads are split wrongly",
    ),
    "right for 8 heads only": (
        lambda x, wq, wk, wv, h: W.solution_multi_head_attention(x, wq, wk, wv, 8),
        "with 4 heads",
    ),
}


# ---------------------------------------------------------------- 7.4 mask after softmax
def causal_renormalised(q, k, v, eps=0.0):
    """Mask after the softmax, then renormalise: the same weights, unless a future score
    dominates so much that every allowed weight underflows to 0 (then 0 / 0)."""
    n = q.shape[-2]
    w = attnlab.softmax(attnlab.attention_scores(q, k)) * attnlab.causal_mask(n)
    w = w / (w.sum(axis=-1, keepdims=True) + eps)
    return w @ v, w


def causal_with(mask_of):
    def answer(q, k, v):
        s = attnlab.attention_scores(q, k)
        w = attnlab.softmax(np.where(mask_of(q.shape[-2]), s, -np.inf))
        return w @ v, w

    return answer


def causal_with_k_t(q, k, v):
    scores = q @ k.T / np.sqrt(q.shape[-1])
    w = attnlab.softmax(np.where(attnlab.causal_mask(q.shape[-2]), scores, -np.inf))
    return w @ v, w


MASK_RIGHT = {
    "reference": W.solution_causal_attention,
    "-1e9 fill": lambda q, k, v: (lambda w: (w @ v, w))(
        attnlab.softmax(
            np.where(attnlab.causal_mask(q.shape[-2]), attnlab.attention_scores(q, k), -1e9)
        )
    ),
    "in float32": in_float32(W.solution_causal_attention),
    "as lists": as_lists(W.solution_causal_attention),
}
MASK_WRONG = {
    "renormalised after masking": (
        causal_renormalised,
        "You take the softmax over every key, "
        "zero the masked weights and divide by what is left. With "
        "exact numbers that is the same thing, but in row 1 a "
        "masked score is 898 above the largest allowed one",
    ),
    "renormalised with an epsilon": (
        lambda q, k, v: causal_renormalised(q, k, v, eps=1e-9),
        "dividing by what is left cannot bring it back",
    ),
    "the buggy function": (
        L.buggy_causal_attention,
        "You zero the future weights after the "
        "softmax, so the weights left in each row add up to less than 1 "
        "(row sums [0.212",
    ),
    "fill with 0": (
        lambda q, k, v: (lambda w: (w @ v, w))(
            attnlab.softmax(
                np.where(attnlab.causal_mask(q.shape[-2]), attnlab.attention_scores(q, k), 0.0)
            )
        ),
        "exp(0) = 1, so the future keys still get weight",
    ),
    "no mask": (
        lambda q, k, v: (lambda w: (w @ v, w))(attnlab.softmax(attnlab.attention_scores(q, k))),
        "Nothing is masked",
    ),
    "upper triangle": (
        causal_with(lambda n: attnlab.causal_mask(n).T),
        "Your mask is the upper triangle",
    ),
    "no diagonal": (
        causal_with(lambda n: np.tri(n, k=-1, dtype=bool)),
        "a query must be able to see itself",
    ),
    "only the output": (
        lambda q, k, v: W.solution_causal_attention(q, k, v)[0],
        "should return two arrays, (output, weights)",
    ),
    "k.T in a batch": (causal_with_k_t, "k.T reverses *all* the axes"),
    "output is the average": (
        lambda q, k, v: (
            np.broadcast_to(
                v.mean(axis=-2, keepdims=True), v.shape[:-2] + (q.shape[-2], v.shape[-1])
            ),
            W.solution_causal_attention(q, k, v)[1],
        ),
        "That is the plain average of the values",
    ),
}


# ---------------------------------------------------------------- 7.5 no max shift
def shifted_by(shift):
    def answer(q, k, v):
        scores = q @ k.swapaxes(-1, -2) / q.shape[-1] ** 0.5
        e = np.exp(scores - shift(scores))
        return (e / e.sum(axis=-1, keepdims=True)) @ v

    return answer


def float64_no_shift(q, k, v):
    return L.buggy_stable_attention(*(a.astype(np.float64) for a in (q, k, v)))


SHIFT_RIGHT = {
    "reference": W.solution_stable_attention,
    "in float32 whatever the input": in_float32(W.solution_stable_attention),
    "as lists": as_lists(W.solution_stable_attention),
    "batched": lambda q, k, v: W.solution_stable_attention(q[None], k[None], v[None])[0],
    "attnlab.softmax in float64": lambda q, k, v: (
        attnlab.softmax(attnlab.attention_scores(q.astype(float), k.astype(float)))
        @ v.astype(float)
    ),
}
SHIFT_WRONG = {
    "the buggy function": (
        L.buggy_stable_attention,
        "exp of a score above 11.09 overflows "
        "float16 to inf, and inf / inf is nan. Subtract each row's largest",
    ),
    "float64 without the shift": (
        float64_no_shift,
        "exp of a score above 709.8 overflows "
        "float64 to inf, and inf / inf is nan. Subtract each row's "
        "largest score before exponentiating: the softmax does not "
        "change (the factor cancels), and every exp is then at most 1. "
        "Computing in a wider dtype, as here, only moves this limit.",
    ),
    "one max for the matrix": (
        shifted_by(lambda s: s.max()),
        "You subtract one max for the whole matrix",
    ),
    "the min": (
        shifted_by(lambda s: s.min(axis=-1, keepdims=True)),
        "You subtract the row's smallest score",
    ),
    "the mean": (
        shifted_by(lambda s: s.mean(axis=-1, keepdims=True)),
        "Subtracting the row's mean",
    ),
    "max without keepdims": (shifted_by(lambda s: s.max(axis=-1)), "could not be broadcast"),
    "column max": (
        shifted_by(lambda s: s.max(axis=0, keepdims=True)),
        "You subtract each *column's* max (axis=0)",
    ),
}


# ---------------------------------------------------------------- 7.6 an exposing input
EXPOSE_RIGHT = {
    "reference": W.solution_exposing_input,
    "lists, 0/1 mask": lambda: ([[0.0, 900.0, 1.0], [1.0, 2.0, 3.0]], [[1, 0, 1], [1, 1, 0]]),
    "float32, a smaller gap": lambda: (np.float32([[0.0, 200.0]]), np.array([[True, False]])),
    "a batch, one row exposing": lambda: (
        np.array([[[0.0, 2.0], [5.0, 1.0]], [[0.0, 760.0], [3.0, 3.0]]]),
        np.array([[True, False], [True, True]])[None].repeat(2, axis=0),
    ),
    "precision lost, not NaN": lambda: (
        np.array([[0.0, 743.0, 0.5]]),
        np.array([[True, False, True]]),
    ),
}
EXPOSE_WRONG = {
    "the running example": (
        lambda: (
            attnlab.attention_scores(*(lambda c: (c.x @ c.w_q, c.x @ c.w_k))(cat_sat_down())),
            attnlab.causal_mask(4),
        ),
        "they agree (the largest difference is",
    ),
    "allowed keys on top": (
        lambda: (
            np.array([[1000.0, 0.0], [5.0, -900.0]]),
            np.array([[True, False], [True, False]]),
        ),
        "In every row an allowed key has the largest score",
    ),
    "a masked key 10 above": (
        lambda: (np.array([[0.0, 10.0]]), np.array([[True, False]])),
        "On your input the patched function gave [[1, 0]] and a correct "
        "masked softmax gave [[1, 0]]: they agree",
    ),
    "a gap that still fits": (
        lambda: (np.array([[0.0, 700.0]]), np.array([[True, False]])),
        "In float64, how far below the max must a score be",
    ),
    "nothing masked": (
        lambda: (np.array([[0.0, 1000.0]]), np.array([[True, True]])),
        "Nothing is masked",
    ),
    "a fully masked row": (
        lambda: (np.array([[0.0, 1000.0]]), np.array([[False, False]])),
        "Row 0 has no allowed key",
    ),
    "an infinite score": (
        lambda: (np.array([[0.0, np.inf]]), np.array([[True, False]])),
        "the claim under test is about finite scores",
    ),
    "mask of the wrong shape": (
        lambda: (np.zeros((2, 3)), np.ones((3, 2), dtype=bool)),
        "mask should have the shape of scores, (2, 3)",
    ),
    "only the scores": (lambda: np.array([[0.0, 1000.0]]), "should return two things"),
    "a mask of strings": (lambda: ([[0.0, 1.0]], [["yes", "no"]]), "mask should hold True"),
}


test_accepts, test_rejects = accept_reject(
    Answers(L.quiz_a, QUIZ_A_RIGHT, QUIZ_A_WRONG),
    Answers(L.quiz_b, QUIZ_B_RIGHT, QUIZ_B_WRONG),
    Answers(L.scale_bug, SCALE_RIGHT, SCALE_WRONG),
    Answers(L.mask_bug, MASK_RIGHT, MASK_WRONG),
    Answers(L.shift_bug, SHIFT_RIGHT, SHIFT_WRONG),
    Answers(L.expose_bug, EXPOSE_RIGHT, EXPOSE_WRONG),
)


def test_each_buggy_function_differs_from_its_fix_in_one_line():
    import inspect

    for bug, fix in (
        (L.buggy_multi_head_attention, W.solution_multi_head_attention),
        (L.buggy_causal_attention, W.solution_causal_attention),
        (L.buggy_stable_attention, W.solution_stable_attention),
    ):
        bad = inspect.getsource(bug).splitlines()[1:]
        good = inspect.getsource(fix).splitlines()[1:]
        changed = [line for line in good if line not in bad]
        assert 1 <= len(changed) <= 2, changed


def test_the_shift_cases_overflow_their_dtypes():
    cases = L.shift_cases()
    for _, (q, k, _v) in cases:
        scores = attnlab.attention_scores(q.astype(float), k.astype(float))
        np.testing.assert_array_equal(scores, q.astype(float))  # k = √d I: the scores are q
    first, rest = cases[0][1][0].astype(float), cases[1:]
    limit16 = math.log(65504)
    assert first.max() < limit16 < (first - first.mean(axis=1, keepdims=True)).max()
    for _, (q, _k, _v) in rest:
        assert q.astype(float).max() > math.log(float(np.finfo(q.dtype).max))


# ---------------------------------------------------------------- tolerances and messages
def nudged(answer, factor):
    """``answer`` with its first entry multiplied by ``factor`` (a tiny, real error)."""

    def wrapped(*args):
        got = answer(*args)
        first = got[0] if isinstance(got, tuple) else got
        first = np.array(first, dtype=float)
        first.flat[0] *= factor
        return (first, got[1]) if isinstance(got, tuple) else first

    return wrapped


def _shown_pair(message: str) -> tuple[str, str]:
    """The expected and the given numbers as a reason shows them."""
    if ": entry " in message:  # the entry that differs, with enough digits
        said = message.split(": entry ")[1].split(", a difference")[0]
        got, expected = said.split(" where it should be ")
        return expected, got.split(" is ")[1]
    expected, rest = message.split(" should be ")[1].split(", but yours gave ")
    return expected, rest.split("]. ")[0] + "]"


@pytest.mark.parametrize("factor", [1 + 1.5e-4, 1 + 3e-4, 1 + 1e-3, 1 - 2e-4])
@pytest.mark.parametrize(
    "exercise, answer",
    [
        (L.scale_bug, W.solution_multi_head_attention),
        (L.mask_bug, W.solution_causal_attention),
        (L.shift_bug, W.solution_stable_attention),
    ],
    ids=["7.3", "7.4", "7.5"],
)
def test_a_small_error_is_never_shown_as_equal_looking_numbers(exercise, answer, factor):
    """An error just above float32 precision is rejected, and the reason shows two numbers
    that differ (with more digits and the difference when 4 digits are not enough)."""
    feedback = assert_wrong(exercise, nudged(answer, factor), "should be")
    expected, got = _shown_pair(feedback.message)
    assert expected != got, feedback.message


def test_mismatch_adds_digits_only_when_needed():
    close = P.mismatch("f", np.array([1.00003, 2.0]), np.array([1.0, 2.0]), 1e-6, 1e-9)
    assert "entry [0] is 1.00003 where it should be 1, a difference of 3e-05" in close
    far = P.mismatch("f", np.array([1.5, 2.0]), np.array([1.0, 2.0]), 1e-6, 1e-9)
    assert far == "f should be [1, 2], but yours gave [1.5, 2]."
    nan = P.mismatch("f", np.array([np.nan, 2.0]), np.array([1.0, 2.0]), 1e-6, 1e-9)
    assert nan == "f should be [1, 2], but yours gave [nan, 2]."


def test_float32_is_judged_to_float32_precision():
    """A float32 answer may be off by float32 rounding, not by much more."""
    rtol, _ = P.tolerance(np.float32)
    assert_right(L.scale_bug, in_float32(W.solution_multi_head_attention))
    assert_right(L.scale_bug, in_float32(nudged(W.solution_multi_head_attention, 1 + rtol / 20)))
    assert_wrong(
        L.scale_bug, in_float32(nudged(W.solution_multi_head_attention, 1 + 20 * rtol)), "should be"
    )


def test_precision_of_lists_and_arrays():
    assert P.precision_of(np.float32([0.1])) == np.float32
    assert P.precision_of(np.float32([0.1, 0.3]).tolist()) == np.float32
    assert P.precision_of([0.1, 0.3]) == np.float64
    assert P.precision_of([0.5, 1.0]) == np.float64  # exact in every dtype: judged strictly
    assert P.tolerance(np.float64, np.float16) == P.TOLERANCES[np.dtype(np.float16)]


# ---------------------------------------------------------------- 7.4 and 7.6 agree
def test_the_patched_softmax_is_right_for_ordinary_scores():
    """What Exercise 7.6 says: the patch agrees with a correct masked softmax unless a masked
    score dominates by hundreds, and the last mask case of 7.4 is where it breaks."""
    rng = np.random.default_rng(7)
    for _ in range(50):
        scores = rng.normal(scale=20.0, size=(4, 6))  # (4, 6)
        mask = rng.random((4, 6)) < 0.6
        mask[:, 0] = True
        np.testing.assert_allclose(
            L.patched_masked_softmax(scores, mask),
            L._masked_softmax(scores, mask),
            rtol=1e-9,
            atol=1e-15,
        )
    _, (q, k, v) = L.mask_cases()[-1]
    with np.errstate(all="ignore"):
        assert np.isnan(causal_renormalised(q, k, v)[1][:2]).all()
    assert assert_right(L.mask_bug, W.solution_causal_attention) is None


#: A bug hunt is graded on mending the given code: the library's whole attention is refused.
LIBRARY_ATTENTION = [
    (L.scale_bug, mha_library),
    (
        L.mask_bug,
        lambda q, k, v: attnlab.scaled_dot_product_attention(
            q, k, v, mask=attnlab.causal_mask(q.shape[-2])
        ),
    ),
    (L.shift_bug, lambda q, k, v: attnlab.scaled_dot_product_attention(q, k, v)[0]),
    (L.shift_bug, lambda q, k, v: attnlab.tiled_attention(q, k, v)),
]


@pytest.mark.parametrize("exercise, answer", LIBRARY_ATTENTION)
def test_a_bug_hunt_does_not_take_the_librarys_attention_for_a_fix(exercise, answer):
    feedback = exercise.check(answer)
    assert feedback.outcome is Outcome.WRONG, feedback
    assert "asks you not to use" in feedback.message, feedback


# ---------------------------------------------------------------- the quiz's scope in the package
def _numbers(value, depth=0):
    """Every number inside ``value``: scalars, arrays, dicts, sequences and the fields of the
    small records the examples are (a few levels deep)."""
    if depth > 4 or isinstance(value, (str, bytes, type)) or callable(value):
        return
    if isinstance(value, (bool, np.bool_)):
        return
    if isinstance(value, (int, float, np.number)):
        yield float(value)
    elif isinstance(value, np.ndarray):
        if value.dtype.kind in "fiu":
            yield from value.astype(float).ravel()[:10_000]
    elif isinstance(value, dict):
        for item in list(value.keys()) + list(value.values()):
            yield from _numbers(item, depth + 1)
    elif isinstance(value, (list, tuple, set)):
        for item in value:
            yield from _numbers(item, depth + 1)
    elif hasattr(value, "__dict__"):
        yield from _numbers(vars(value), depth + 1)


@pytest.mark.parametrize("quiz", [L.QUESTIONS_A, L.QUESTIONS_B], ids=["7.1", "7.2"])
def test_the_shipped_scope_holds_no_answer_the_question_does_not_show(quiz):
    """What a student can read off the installed quiz (``Questions.scope``, the values the
    questions were built from) holds no number equal to a numeric answer, unless the quiz shows
    that number itself (A4 asks the variance of q·k for d_k = 64; its answer is 64):
    the answers are worked out in the key file, outside the package (a red team read A1's,
    A8's, B2's, B6's and B11's answers off the scope)."""
    key = quiz.key()
    assert key is not None, "the key file is needed to run this test"
    leaks, text = [], "\n".join(q.prompt for q in quiz.questions)
    for question in quiz.questions:
        answer = key[question.key].answer
        if question.options or not isinstance(answer, (int, float)) or math.isinf(answer):
            continue
        near = max(question.tolerance, 1e-9 * max(1.0, abs(answer)))
        found = [x for x in _numbers(quiz.scope) if abs(x - answer) <= near]
        shown = any(re.search(rf"(?<![\d.]){re.escape(f'{x:g}')}(?![\d])", text) for x in found)
        if found and not shown:
            leaks.append((question.key, answer, found[:3]))
    assert not leaks, leaks
