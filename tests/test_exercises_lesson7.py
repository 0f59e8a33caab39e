"""Lesson 7 checks: the quiz judges each question, the bug hunts reject each bug with a reason."""

from __future__ import annotations

import math

import numpy as np
import pytest
import worked_answers as W
from answer_tables import assert_right, assert_wrong, judged, right, wrong

import attnlab
from attnlab.exercises import Outcome
from attnlab.exercises import lesson7 as L

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
        for key, value in A.items()},
    "letters in brackets, numbers rounded as asked": answers(
        A, A1="(a)", A8=round(A["A8"], 3), A10=round(A["A10"], 2), A11=round(A["A11"], 2)),
}
QUIZ_A_WRONG = {
    "rows and columns swapped": (answers(A, A1="b"), "✗ A1 (you said 'b'): rows are queries"),
    "raw score": (answers(A, A2=1.0), "that is the raw score q·k; scale it"),
    "divided by d_k": (answers(A, A2=0.25), "you divided by d_k"),
    "orthogonal is lowest": (answers(A, A3="b"), "it is at right angles to q, so its score is 0"),
    "the standard deviation": (answers(A, A4=8), "that is the standard deviation"),
    "cube root": (answers(A, A5="a"), "the variance would be d_k^(1/3), still growing: 8 at "
                                      "d_k = 512"),
    "Jacobian is the identity": (answers(A, A6="b"), "compute it: its largest entry is"),
    "plain normalisation": (answers(A, A8=round(2.5 / 3.9, 3)), "divides the score by the sum"),
    "fourth key": (answers(A, A8=float(attnlab.softmax(np.array([1, .5, 2.5, -.1]))[3])),
                   "numpy counts from 0"),
    "temperature sharpens": (answers(A, A9="b"), "T > 1 shrinks the gaps"),
    "float32 limit": (answers(A, A10=88.72), "that is the limit in float32"),
    "log of softmax": (answers(A, A11=-np.inf), "after the weight underflowed to 0"),
    "not an option": (answers(A, A1="e"), "'e' is not one of the options; answer a, b, c or d"),
    "a letter for a number": (answers(A, A4="b"), "this one wants a number"),
    "a number for a letter": (answers(A, A1=1), "this one is multiple choice"),
    "nan": (answers(A, A10=float("nan")), "yours is not-a-number"),
    "two missing": (answers(A, A3=None, A4=...), "9 of 11 right so far; not answered yet: A3, "
                                                 "A4."),
    "a stray key": (answers(A, B1="a"), "the key(s) 'B1', but quiz A has the questions A1"),
    "a list": ([A["A1"], A["A2"]], "should be a dict from question to answer"),
    "one wrong among many": (answers(A, A7="c"), "10 of 11 right so far; not yet right: A7."),
}
QUIZ_B_RIGHT = {"reference": W.solution_quiz_b, "a plain dict": B,
                "rounded": answers(B, B2=round(B["B2"], 3), B6=round(B["B6"], 3))}
QUIZ_B_WRONG = {
    "columns sum to 1": (answers(B, B1="b"), "a column is what one key hands out"),
    "entropy in nats": (answers(B, B2=float(attnlab.entropy(attnlab.softmax(
        np.array([1, .5, 2.5, -.1]))))), "that is H itself, in nats; divide by log n"),
    "diagonal": (answers(B, B3="a"), "is it on the diagonal"),
    "stretched scale is fine": (answers(B, B4="b"), "the same colour then means different"),
    "weights as reasons": (answers(B, B5="b"), "weights are not explanations"),
    "plain average": (answers(B, B6=0.5), "that is the plain average of the values"),
    "no batch axis": (answers(B, B7="d"), "the batch axis is missing"),
    "W_V decides weights": (answers(B, B8="c"), "V never enters the softmax"),
    "outside the hull": (answers(B, B9="d"), "a weight can't be negative"),
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
    feedback = judged(L.quiz_a, {"A4": 64, "A1": "b"})
    lines = feedback.message.splitlines()
    assert lines[0] == ("1 of 11 right so far; not yet right: A1; not answered yet: A2, A3, A5, "
                        "A6, A7, A8, A9, A10, A11.")
    assert lines[-1].startswith("✓ right: A4.")
    assert "(5, 7)" not in feedback.message  # the right option of A1


def test_question_numbers_are_computed():
    key_a, key_b = L.QUESTIONS_A.key(), L.QUESTIONS_B.key()
    assert math.isclose(key_a["A2"].answer, 0.5) and "[0, 2, 0, 1]" in L.QUESTIONS_A.by_key[
        "A2"].prompt
    assert math.isclose(key_a["A10"].answer, math.log(65504))
    assert key_b["B11"].answer == 21


def test_without_the_key_answers_are_recorded_not_judged(monkeypatch, tmp_path):
    """A graded course run has no answer_keys/: the check says nothing right or wrong."""
    monkeypatch.setenv("ATTNLAB_ANSWER_KEYS", str(tmp_path / "none"))
    assert L.QUESTIONS_A.key() is None
    complete = judged(L.quiz_a, W.solution_quiz_a())
    assert complete.outcome is Outcome.RECORDED and bool(complete)
    wrong_everywhere = {key: ("z" if q.options else -1.0) for key, q in
                        L.QUESTIONS_A.by_key.items()}
    feedback = judged(L.quiz_a, {**W.solution_quiz_a(), "A1": "b", "A2": 99.0})
    assert feedback.outcome is Outcome.RECORDED, feedback.message
    assert "right" not in feedback.message.replace("marked", "")
    odd = judged(L.quiz_a, wrong_everywhere)
    assert odd.outcome is Outcome.WRONG and "not one of the options" in odd.message
    assert "A2" not in odd.message  # a number is a well-formed answer, never judged
    partial = judged(L.quiz_a, {"A1": "b"})
    assert partial.outcome is Outcome.WRONG and partial.message.startswith(
        "Not answered yet: A2")


def test_quiz_scores_per_question():
    answers = W.solution_quiz_a()
    answers.update({"A1": "b", "A3": "a"})
    feedback = judged(L.quiz_a, answers)
    assert feedback.outcome is Outcome.WRONG and math.isclose(feedback.score, 9 / 11)


# ---------------------------------------------------------------- 7.3 √d_model
def mha_with(divisor):
    def answer(x, w_q, w_k, w_v, n_heads):
        return L._multi_head(x, w_q, w_k, w_v, n_heads, divisor=divisor(x.shape[1], n_heads))
    return answer


def mha_loops(x, w_q, w_k, w_v, n_heads):
    """One head at a time with attnlab, joined with np.concatenate."""
    d = x.shape[1] // n_heads
    outs = []
    for h in range(n_heads):
        cols = slice(h * d, (h + 1) * d)
        out, _ = attnlab.scaled_dot_product_attention(x @ w_q[:, cols], x @ w_k[:, cols],
                                                      x @ w_v[:, cols])
        outs.append(out)
    return np.concatenate(outs, axis=1)


SCALE_RIGHT = {"reference": W.solution_multi_head_attention, "head by head": mha_loops,
               "1 / sqrt(d_model / h)": mha_with(lambda dm, h: math.sqrt(dm / h))}
SCALE_WRONG = {
    "the buggy function": (L.buggy_multi_head_attention, "You divide every head's scores by "
                           "√d_model = √16. But each head's scores are dot products of "
                           "d_head = 2 numbers"),
    "no scaling": (mha_with(lambda dm, h: 1.0), "You do not scale the scores at all"),
    "d_head, not its root": (mha_with(lambda dm, h: dm / h), "You divide by d_head = 2"),
    "root of the head count": (mha_with(lambda dm, h: math.sqrt(h)), "You divide by √n_heads"),
    "heads split wrongly": (lambda x, *w: L._multi_head(x, *w, split="wrong"),
                            "The heads are split wrongly"),
    "right for 8 heads only": (lambda x, wq, wk, wv, h: W.solution_multi_head_attention(
        x, wq, wk, wv, 8), "with 4 heads"),
}


# ---------------------------------------------------------------- 7.4 mask after softmax
def causal_renormalised(q, k, v):
    """Mask after the softmax, then renormalise: the same weights, if nothing overflows."""
    n = q.shape[-2]
    w = attnlab.softmax(attnlab.attention_scores(q, k)) * attnlab.causal_mask(n)
    w = w / w.sum(axis=-1, keepdims=True)
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
    "attnlab with mask=": lambda q, k, v: attnlab.scaled_dot_product_attention(
        q, k, v, mask=attnlab.causal_mask(q.shape[-2])),
    "renormalised after masking": causal_renormalised,
}
MASK_WRONG = {
    "the buggy function": (L.buggy_causal_attention, "You zero the future weights after the "
                           "softmax, so the weights left in each row add up to less than 1 "
                           "(row sums [0.212"),
    "fill with 0": (lambda q, k, v: (lambda w: (w @ v, w))(attnlab.softmax(np.where(
        attnlab.causal_mask(q.shape[-2]), attnlab.attention_scores(q, k), 0.0))),
        "exp(0) = 1, so the future keys still get weight"),
    "no mask": (lambda q, k, v: attnlab.scaled_dot_product_attention(q, k, v),
                "Nothing is masked"),
    "upper triangle": (causal_with(lambda n: attnlab.causal_mask(n).T),
                       "Your mask is the upper triangle"),
    "no diagonal": (causal_with(lambda n: np.tri(n, k=-1, dtype=bool)),
                    "a query must be able to see itself"),
    "only the output": (lambda q, k, v: W.solution_causal_attention(q, k, v)[0],
                        "should return two arrays, (output, weights)"),
    "k.T in a batch": (causal_with_k_t, "k.T reverses *all* the axes"),
    "output is the average": (lambda q, k, v: (np.broadcast_to(
        v.mean(axis=-2, keepdims=True), v.shape[:-2] + (q.shape[-2], v.shape[-1])),
        W.solution_causal_attention(q, k, v)[1]), "That is the plain average of the values"),
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
    "attnlab": lambda q, k, v: attnlab.scaled_dot_product_attention(q, k, v)[0],
    "attnlab.softmax in float64": lambda q, k, v: attnlab.softmax(
        attnlab.attention_scores(q.astype(float), k.astype(float))) @ v.astype(float),
}
SHIFT_WRONG = {
    "the buggy function": (L.buggy_stable_attention, "exp of a score above 11.09 overflows "
                           "float16 to inf, and inf / inf is nan. Subtract each row's largest"),
    "float64 without the shift": (float64_no_shift, "exp of a score above 709.8 overflows "
                                  "float64 to inf, and inf / inf is nan. Subtract each row's "
                                  "largest score before exponentiating: the softmax does not "
                                  "change (the factor cancels), and every exp is then at most 1. "
                                  "Computing in a wider dtype, as here, only moves this limit."),
    "one max for the matrix": (shifted_by(lambda s: s.max()), "You subtract one max for the "
                               "whole matrix"),
    "the min": (shifted_by(lambda s: s.min(axis=-1, keepdims=True)), "You subtract the row's "
                "smallest score"),
    "the mean": (shifted_by(lambda s: s.mean(axis=-1, keepdims=True)), "Subtracting the row's "
                 "mean"),
    "max without keepdims": (shifted_by(lambda s: s.max(axis=-1)), "could not be broadcast"),
}


@pytest.mark.parametrize(
    "exercise, answer",
    right((L.quiz_a, QUIZ_A_RIGHT), (L.quiz_b, QUIZ_B_RIGHT), (L.scale_bug, SCALE_RIGHT),
          (L.mask_bug, MASK_RIGHT), (L.shift_bug, SHIFT_RIGHT)),
)
def test_right_answers_are_accepted(exercise, answer):
    assert_right(exercise, answer)


@pytest.mark.parametrize(
    "exercise, answer, reason",
    wrong((L.quiz_a, QUIZ_A_WRONG), (L.quiz_b, QUIZ_B_WRONG), (L.scale_bug, SCALE_WRONG),
          (L.mask_bug, MASK_WRONG), (L.shift_bug, SHIFT_WRONG)),
)
def test_wrong_answers_are_rejected_with_a_reason(exercise, answer, reason):
    assert_wrong(exercise, answer, reason)


def test_each_buggy_function_differs_from_its_fix_in_one_line():
    import inspect

    for bug, fix in ((L.buggy_multi_head_attention, W.solution_multi_head_attention),
                     (L.buggy_causal_attention, W.solution_causal_attention),
                     (L.buggy_stable_attention, W.solution_stable_attention)):
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
