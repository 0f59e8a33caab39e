"""Lesson 1's checks: each rejects known-wrong answers with a useful reason, accepts right ones."""

from __future__ import annotations

import math

import numpy as np
import pytest
from answer_tables import Answers, accept_reject
from cell_functions import cell_function

from attnlab.exercises import Outcome
from attnlab.exercises import lesson1 as ex


# ------------------------------------------------------------------------------ 1.1 dot
def dot_loop(q, k):
    total = 0
    for i in range(len(q)):
        total += q[i] * k[i]
    return total


DOT_RIGHT = {
    "loop": dot_loop,
    "sum of products": lambda q, k: np.sum(q * k),
    "python sum over zip": lambda q, k: sum(a * b for a, b in zip(q, k, strict=True)),
    "einsum": lambda q, k: np.einsum("d,d->", q, k),
    "in float32": lambda q, k: np.sum(q.astype(np.float32) * k.astype(np.float32)),
}

DOT_WRONG = {
    "products not summed": (lambda q, k: q * k, "one number, -4, but yours gave the 3 products"),
    "sum of q plus sum of k": (lambda q, k: np.sum(q) + np.sum(k), "sum of all entries"),
    "product of sums": (lambda q, k: np.sum(q) * np.sum(k), "(sum of q) × (sum of k)"),
    "absolute values": (lambda q, k: np.sum(np.abs(q * k)), "absolute values"),
    "mean of products": (lambda q, k: np.mean(q * k), "mean"),
    "scaled by sqrt(d)": (lambda q, k: np.sum(q * k) / math.sqrt(len(q)), "√d"),
    "q with itself": (lambda q, k: np.sum(q * q), "q · q"),
    "forgot return": (lambda q, k: None, "return"),
    "off by one loop": (
        lambda q, k: sum(q[i] * k[i] for i in range(len(q) - 1)),
        "should be -4, but yours gave -1. Check that you multiply q[d] by k[d]",
    ),
}


def test_dot_check_inputs_tell_the_mistakes_apart():
    """On the first pair, the right answer and each known mistake all give different numbers."""
    q, k = ex.dot_cases()[0]
    values = [float(q @ k)]
    for mistake, _ in DOT_WRONG.values():
        got = mistake(q, k)
        if got is not None and np.ndim(got) == 0:
            values.append(float(got))
    assert len(values) == len(set(np.round(values, 9))) >= 7


@pytest.mark.parametrize(
    ("body", "refused"),
    [
        ("return q @ k", "`@`"),
        ("return np.dot(q, k)", "`np.dot`"),
        ("return q.dot(k)", "`q.dot`"),
        ("return np.matmul(q, k)", "`np.matmul`"),
        # red team 2026-12-06 W4 (np.inner: given 1 of 1, fair 0): the other library products
        ("return float(np.inner(q, k))", "`np.inner`"),
        ("return np.vdot(q, k)", "`np.vdot`"),
        ("return np.tensordot(q, k, 1)", "`np.tensordot`"),
        ("return np.linalg.multi_dot([q, k])", "`np.linalg.multi_dot`"),
        ("return np.sum(q * k)", None),
        ("return np.einsum('d,d->', q, k)", None),
        ("return sum(a * b for a, b in zip(q, k))", None),
    ],
)
def test_the_matrix_product_the_task_rules_out_is_refused_alike(body, refused):
    """1.1 says "without @ or np.dot" but accepted `q @ k` (issue 41): the answer cell's lint
    now refuses the matrix product, in grading and in the learner's check, with the reason;
    the formulations the task allows pass both."""
    from attnlab.exercises.rules.lint import problems

    code = f"def dot(q, k):\n    {body}\n"
    found = problems(code, forbidden=ex.dot.forbidden)
    feedback = ex.dot.check(cell_function(code, "dot", number=4100 + len(body)))
    if refused is None:
        assert found == [] and feedback.outcome is Outcome.CORRECT, (found, feedback.message)
        return
    assert len(found) == 1 and refused in found[0] and "without @, np.dot" in found[0], found
    assert feedback.outcome is Outcome.WRONG
    assert "would not be run for grading" in feedback.message and refused in feedback.message


def test_dot_does_not_mutate_inputs():
    def mutating(q, k):
        q *= 2
        return np.sum(q * k) / 2

    assert ex.dot.check(mutating).outcome is Outcome.WRONG


# --------------------------------------------------------------------- 1.2 score matrix
SCORES_RIGHT = {
    "Q @ K.T": lambda Q, K: Q @ K.T,
    "np.matmul transpose": lambda Q, K: np.matmul(Q, np.transpose(K)),
    "einsum": lambda Q, K: np.einsum("id,jd->ij", Q, K),
    "double loop": lambda Q, K: np.array(
        [[sum(Q[i] * K[j]) for j in range(len(K))] for i in range(len(Q))]
    ),
    "(K Q^T)^T": lambda Q, K: (K @ Q.T).T,
    "in float32": lambda q, k: q.astype(np.float32) @ k.astype(np.float32).T,
}

SCORES_WRONG = {
    "Q @ K (no transpose)": (lambda Q, K: Q @ K, "shape (2, 4), but yours raised ValueError"),
    "K^T @ Q": (lambda Q, K: K.T @ Q, "K.T has shape"),
    "K @ Q.T (transposed result)": (lambda Q, K: K @ Q.T, "shape (4, 2): you computed K Qᵀ"),
    "elementwise Q * K": (lambda Q, K: Q * K, "inner sizes"),
    "scaled by sqrt(d_k)": (lambda Q, K: Q @ K.T / math.sqrt(Q.shape[1]), "√d_k"),
    "scaled by d_k": (lambda Q, K: Q @ K.T / Q.shape[1], "divided by d_k"),
    "Q^T @ K": (lambda Q, K: Q.T @ K, "inner sizes"),
    "only the first query": (lambda Q, K: Q[:1] @ K.T, "shape"),
}


def test_score_matrix_names_expected_and_got_values_for_a_scaled_answer():
    q, k = ex.score_matrix_cases()[0]
    message = ex.score_matrix.check(lambda Q, K: Q @ K.T / 8).message
    assert f"should be {ex.short(q @ k.T)}, but yours gave {ex.short(q @ k.T / 8)}" in message


def test_score_matrix_shape_errors_do_not_print_the_input_arrays():
    """A learner who forgot the transpose sees shapes and advice, not a wall of numbers."""
    q, _ = ex.score_matrix_cases()[0]
    message = ex.score_matrix.check(lambda Q, K: Q @ K).message
    assert ex.short(q) not in message
    assert "K.T has shape (8, 4)" in message


def test_score_matrix_cases_are_not_square_at_first():
    q, k = ex.score_matrix_cases()[0]
    n_q, d_k = q.shape
    assert len({n_q, len(k), d_k}) == 3


# ---------------------------------------------------------------------- 1.3 score shape
SHAPE_RIGHT = {
    "tuple": lambda n_q, n_k, d_k: (n_q, n_k),
    "list": lambda n_q, n_k, d_k: [n_q, n_k],
    "shape of an actual product": lambda n_q, n_k, d_k: (
        (np.ones((n_q, d_k)) @ np.ones((n_k, d_k)).T).shape
    ),
}

SHAPE_WRONG = {
    "transposed": (lambda n_q, n_k, d_k: (n_k, n_q), "transpose"),
    "shape of Q": (lambda n_q, n_k, d_k: (n_q, d_k), "shape of Q"),
    "shape of K": (lambda n_q, n_k, d_k: (n_k, d_k), "shape of K"),
    "d_k by d_k": (lambda n_q, n_k, d_k: (d_k, d_k), "Qᵀ K"),
    "keeps d_k": (lambda n_q, n_k, d_k: (n_q, n_k, d_k), "disappears"),
    "a number": (
        lambda n_q, n_k, d_k: n_q * n_k,
        "tuple of two sizes, (rows, columns), but yours gave 10, a single number",
    ),
    # int() used to turn these into the right shape.
    "non-integer sizes": (lambda n_q, n_k, d_k: (n_q + 0.5, n_k + 0.9), "whole numbers"),
    "float sizes": (lambda n_q, n_k, d_k: (float(n_q), float(n_k)), "np.zeros((2.0, 5))"),
    "the matrix itself": (
        lambda n_q, n_k, d_k: np.ones((n_q, d_k)) @ np.ones((n_k, d_k)).T,
        "returned an array of shape (2, 5) itself",
    ),
}


# ----------------------------------------------------------------- 1.4 orthogonal query
ORTHO_RIGHT = {
    "quarter turn anticlockwise": lambda k: np.array([-k[1], k[0]]),
    "quarter turn clockwise": lambda k: np.array([k[1], -k[0]]),
    "scaled": lambda k: 3.5 * np.array([-k[1], k[0]]),
    "unit length": lambda k: np.array([-k[1], k[0]]) / np.linalg.norm(k),
    "rotation matrix": lambda k: (
        np.array([[np.cos(np.pi / 2), -np.sin(np.pi / 2)], [np.sin(np.pi / 2), np.cos(np.pi / 2)]])
        @ k
    ),
    "list": lambda k: [float(-k[1]), float(k[0])],
}

ORTHO_WRONG = {
    "k itself": (lambda k: k, "aligned"),
    "minus k": (lambda k: -k, "opposite"),
    "zero vector": (lambda k: np.zeros(2), "zero vector"),
    "swapped without a sign": (lambda k: np.array([k[1], k[0]]), "90°"),
    "three entries": (lambda k: np.array([-k[1], k[0], 0.0]), "shape (2,)"),
    "nan": (lambda k: np.array([np.nan, 1.0]), "nan"),
}


def test_orthogonal_keys_include_one_with_both_entries_non_zero():
    """(x, y) -> (y, x) is only caught by a key whose entries differ and are both non-zero."""
    assert any(k[0] != 0 and k[1] != 0 and abs(k[0]) != abs(k[1]) for k in ex.orthogonal_cases())


# ------------------------------------------------------------------ every table above
test_accepts, test_rejects = accept_reject(
    Answers(ex.dot, DOT_RIGHT, DOT_WRONG),
    Answers(ex.score_matrix, SCORES_RIGHT, SCORES_WRONG),
    Answers(ex.score_shape, SHAPE_RIGHT, SHAPE_WRONG),
    Answers(ex.orthogonal_query, ORTHO_RIGHT, ORTHO_WRONG),
)
