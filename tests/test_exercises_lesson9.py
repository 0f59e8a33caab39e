"""Lesson 9 checks: each rejects known-wrong answers with a helpful reason, accepts right ones."""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
from answer_tables import Answers, accept_reject

import attnlab
from attnlab.backward import attention_backward, finite_difference_gradient
from attnlab.exercises import Outcome
from attnlab.exercises import lesson9 as L
from attnlab.training import PROBE


# ---------------------------------------------------------------- 9.1 the softmax VJP
def vjp_by_rows(w, g):
    """Row by row in a Python loop, each row with the formula w ⊙ (g − w · g)."""
    w2, g2 = w.reshape(-1, w.shape[-1]), g.reshape(-1, g.shape[-1])  # (rows, n) each
    out = np.zeros_like(w2)
    for r, (wr, gr) in enumerate(zip(w2, g2, strict=True)):
        out[r] = wr * gr - wr * np.dot(wr, gr)  # (n,)
    return out.reshape(w.shape)


def vjp_einsum_jacobian(w, g):
    """Jᵀ g with the whole Jacobian of each row (lesson 2): n² numbers per row."""
    return np.einsum("...ij,...j->...i", attnlab.softmax_jacobian(w), g)


def vjp_by_finite_differences(w, g):
    """The red team's 9.1 answer: central differences of the forward softmax, score by score."""
    w, g = np.asarray(w, dtype=float), np.asarray(g, dtype=float)
    with np.errstate(divide="ignore"):
        s = np.log(w)  # (..., n) scores up to a constant per row; -inf where masked
    out = np.zeros_like(w)
    eps = 1e-6

    def loss(x):
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        return float(np.sum(g * e / e.sum(axis=-1, keepdims=True)))

    for index in np.ndindex(*w.shape):
        if w[index] == 0:
            continue
        up, down = s.copy(), s.copy()
        up[index] += eps
        down[index] -= eps
        out[index] = (loss(up) - loss(down)) / (2 * eps)
    return out


def vjp_by_complex_step(w, g):
    """Complex-step differences, score by score: exact to rounding, one forward pass each."""
    w, g = np.asarray(w, dtype=float), np.asarray(g, dtype=float)
    with np.errstate(divide="ignore"):
        s = np.log(w).astype(complex)  # (..., n)
    out = np.zeros_like(w)
    h = 1e-30
    for index in np.ndindex(*w.shape):
        if w[index] == 0:
            continue
        x = s.copy()
        x[index] += 1j * h
        e = np.exp(x - x.real.max(axis=-1, keepdims=True))
        out[index] = np.sum(g * e / e.sum(axis=-1, keepdims=True)).imag / h
    return out


def vjp_by_one_complex_step_along_g(w, g):
    """Jᵀ g as J g, the derivative of softmax along g, by one complex step: right, since the
    softmax Jacobian is symmetric, and one forward pass, so the lesson accepts it (9.1's text)."""
    w, g = np.asarray(w, dtype=float), np.asarray(g, dtype=float)
    with np.errstate(divide="ignore"):
        s = np.log(w).astype(complex)  # (..., n) scores up to a constant per row
    h = 1e-30
    x = s + 1j * h * g  # (..., n)
    e = np.exp(x - x.real.max(axis=-1, keepdims=True))
    return (e / e.sum(axis=-1, keepdims=True)).imag / h


def vjp_by_vectorised_differences(w, g):
    """Central differences for every score at once: one perturbed copy of each row per score."""
    w, g = np.asarray(w, dtype=float), np.asarray(g, dtype=float)
    n, eps = w.shape[-1], 1e-6
    with np.errstate(divide="ignore"):
        s = np.log(w)[..., None, :]  # (..., 1, n)
    nudge = eps * np.eye(n)  # (n, n)

    def loss(x):  # (..., n, n) rows of scores -> (..., n) losses
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        return np.sum(g[..., None, :] * e / e.sum(axis=-1, keepdims=True), axis=-1)

    with np.errstate(invalid="ignore"):
        out = (loss(s + nudge) - loss(s - nudge)) / (2 * eps)  # (..., n)
    return np.where(w > 0, out, 0.0)


def vjp_float32(w, g):
    w32, g32 = w.astype(np.float32), g.astype(np.float32)
    return w32 * (g32 - (w32 * g32).sum(axis=-1, keepdims=True))


def vjp_as_list(w, g):
    dot = np.einsum("...i,...i->...", w, g)[..., None]  # (..., 1)
    return (w * g - w * dot).tolist()


def reference_vjp(w, g):
    return w * (g - np.sum(w * g, axis=-1, keepdims=True))


VJP_RIGHT = {
    "w * (g - w.g)": reference_vjp,
    "a Python loop over rows": vjp_by_rows,
    "float32": vjp_float32,
    "einsum, a nested list": vjp_as_list,
    "one complex step along g": vjp_by_one_complex_step_along_g,
}
#: Right numbers by work the lesson rules out: each is stopped on the long row, however close.
TOO_COSTLY = "one or two forward passes per score: 200,000 of them here"
OUT_OF_MEMORY = "an n × n array for a row of n = 200,000 weights"
VJP_WRONG = {
    "w * g": (lambda w, g: w * g, "You kept only w ⊙ g"),
    "diagonal of J only": (lambda w, g: w * (1 - w) * g, "only the diagonal of the Jacobian"),
    "no factor w": (
        lambda w, g: g - np.sum(w * g, axis=-1, keepdims=True),
        "The factor w in front is missing",
    ),
    "unweighted sum": (
        lambda w, g: w * (g - np.sum(g, axis=-1, keepdims=True)),
        "must be weighted by the weights: w · g = Σ_j w_j g_j",
    ),
    "plain mean": (
        lambda w, g: w * (g - np.mean(g, axis=-1, keepdims=True)),
        "not the plain mean of g",
    ),
    "sign flipped": (lambda w, g: -reference_vjp(w, g), "The sign is flipped"),
    "summed down the columns": (
        lambda w, g: w * (g - np.sum(w * g, axis=0, keepdims=True)),
        "summed down the columns",
    ),
    "no keepdims": (lambda w, g: w * (g - np.sum(w * g, axis=-1)), "Without keepdims=True"),
    "in place": (
        lambda w, g: np.multiply(w, g - np.sum(w * g, axis=-1, keepdims=True), out=w),
        "changed its input",
    ),
    "wrong shape": (lambda w, g: np.sum(w * g, axis=-1), "should have shape (3,)"),
    "finite differences": (vjp_by_finite_differences, TOO_COSTLY),
    "complex-step differences": (vjp_by_complex_step, TOO_COSTLY),
    "vectorised differences": (vjp_by_vectorised_differences, OUT_OF_MEMORY),
    "the whole Jacobian, by einsum": (vjp_einsum_jacobian, "That is the Jacobian diag(w) − w wᵀ"),
    "a log of the weights": (
        lambda w, g: (
            w * (g - np.sum(w * g, axis=-1, keepdims=True)) + 0 * np.log(np.where(w > 0, w, np.nan))
        ),
        "nan or inf",
    ),
}


def test_the_long_cases_are_long_and_a_backward_pass_fits_their_limit_many_times():
    """A right answer takes a small share of the limit on each long case (measured, printed),
    so the limit is no danger to it; differences would need hundreds of thousands of forward
    passes there. The long row is spread enough that w · g matters: the commonest shortcut,
    w ⊙ g, is wrong there by far more than the tolerance."""
    long_row, long_attention = L.vjp_cases()[-1], L.attention_cases()[-1]
    assert long_row.weights.shape == (L.LONG_ROW,) and L.LONG_ROW >= 100_000
    n, d = L.LONG_ATTENTION
    assert long_attention.q.shape == long_attention.k.shape == (n, d)
    gap = np.abs(long_row.weights * long_row.g - long_row.expected).max()
    assert gap > 1000 * L._ATOL, gap
    row_args = (long_row.weights, long_row.g)
    attention_args = (long_attention.q, long_attention.k, long_attention.v, long_attention.g)
    for name, answer, args, forward in (
        ("9.1", reference_vjp, row_args, lambda w, g: attnlab.softmax(w)),
        ("9.2", grads_reference, attention_args, L._attention_forward),
    ):
        took = L._seconds(functools.partial(answer, *args))
        limit = L.time_limit(L._seconds(functools.partial(forward, *args)))
        print(f"{name}: a right answer takes {took * 1e3:.1f} ms; the limit is {limit:.2g} s")
        assert took * 10 < limit, (name, took, limit)


def test_the_time_limit_is_the_forward_passes_within_the_floor_and_the_call_limit():
    from attnlab.exercises.kit.calling import CALL_LIMIT

    assert L.time_limit(0.0) == L.FLOOR_SECONDS
    assert L.time_limit(1.0) == CALL_LIMIT
    middle = (L.FLOOR_SECONDS + CALL_LIMIT) / 2 / L.FORWARD_PASSES
    assert L.time_limit(middle) == L.FORWARD_PASSES * middle


def test_vjp_cases_hold_a_mask_and_a_batch_and_fd_agrees_with_the_library():
    cases = L.vjp_cases()
    assert any(np.isinf(c.scores).any() for c in cases)
    assert any(c.weights.ndim == 3 for c in cases)
    for case in cases:
        np.testing.assert_allclose(case.expected, reference_vjp(case.weights, case.g), atol=1e-8)
        assert np.all(case.expected[case.weights == 0] == 0)


# ---------------------------------------------------------------- 9.2 one backward step
def grads_reference(q, k, v, g):
    c = 1 / math.sqrt(q.shape[1])
    w = attnlab.softmax(q @ k.T * c)
    dw = g @ v.T
    ds = reference_vjp(w, dw)
    return c * ds @ k, c * ds.T @ q, w.T @ g


def grads_einsum_float32(q, k, v, g):
    q, k, v, g = (a.astype(np.float32) for a in (q, k, v, g))
    c = np.float32(1 / np.sqrt(q.shape[-1]))
    s = np.einsum("id,jd->ij", q, k) * c
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    w = e / e.sum(axis=-1, keepdims=True)
    dw = np.einsum("ie,je->ij", g, v)
    ds = w * (dw - np.einsum("ij,ij->i", w, dw)[:, None])
    return [
        np.einsum("ij,jd->id", ds, k) * c,
        np.einsum("ij,id->jd", ds, q) * c,
        np.einsum("ij,ie->je", w, g),
    ]


def grads_by_finite_differences(q, k, v, g):
    """Right numbers without a backward pass: nudge every entry (98,304 of them on the long
    case, two forward passes each)."""

    def loss(a, b, c):
        return float(np.sum(g * attnlab.scaled_dot_product_attention(a, b, c)[0]))

    return (
        finite_difference_gradient(lambda a: loss(a, k, v), q),
        finite_difference_gradient(lambda b: loss(q, b, v), k),
        finite_difference_gradient(lambda c: loss(q, k, c), v),
    )


def _parts(q, k, v, g):
    c = 1 / math.sqrt(q.shape[1])
    w = attnlab.softmax(q @ k.T * c)
    dw = g @ v.T
    return c, w, dw, reference_vjp(w, dw)


def scale_by_d_v(q, k, v, g):
    c = 1 / math.sqrt(v.shape[1])  # the width of v, not of q and k
    w = attnlab.softmax(q @ k.T * c)
    ds = reference_vjp(w, g @ v.T)
    return c * ds @ k, c * ds.T @ q, w.T @ g


def scale_by_d_v_in_float32(q, k, v, g):
    return [
        a.astype(np.float32) for a in scale_by_d_v(*(x.astype(np.float32) for x in (q, k, v, g)))
    ]


def no_scale(q, k, v, g):
    _, w, _, ds = _parts(q, k, v, g)
    return ds @ k, ds.T @ q, w.T @ g


def scale_twice(q, k, v, g):
    c, w, _, ds = _parts(q, k, v, g)
    return c * c * ds @ k, c * c * ds.T @ q, w.T @ g


def softmax_skipped(q, k, v, g):
    c, w, dw, _ = _parts(q, k, v, g)
    return c * dw @ k, c * dw.T @ q, w.T @ g


def swapped(q, k, v, g):
    c, w, _, ds = _parts(q, k, v, g)
    return c * ds.T @ q, c * ds @ k, w.T @ g


def dv_untransposed(q, k, v, g):
    c, w, _, ds = _parts(q, k, v, g)
    return c * ds @ k, c * ds.T @ q, w @ g


def dk_untransposed(q, k, v, g):
    c, w, _, ds = _parts(q, k, v, g)
    return c * ds @ k, c * ds @ q, w.T @ g


def grads_query_by_query(q, k, v, g):
    """The table one query (row) at a time, in a Python loop, dk and dv summed over queries."""
    c = 1 / np.sqrt(q.shape[1])
    dq, dk, dv = np.zeros(q.shape), np.zeros(k.shape), np.zeros(v.shape)
    for i in range(len(q)):
        w = attnlab.softmax(k @ q[i] * c)  # (n_k,)
        dw = v @ g[i]  # (n_k,)
        ds = w * (dw - w @ dw)  # (n_k,)
        dq[i] = c * ds @ k  # (d_k,)
        dk += c * np.outer(ds, q[i])  # (n_k, d_k)
        dv += np.outer(w, g[i])  # (n_k, d_v)
    return dq, dk, dv


BACKWARD_RIGHT = {
    "reference": grads_reference,
    "einsum in float32, a list": grads_einsum_float32,
    "query by query": grads_query_by_query,
}
BACKWARD_WRONG = {
    "finite differences": (
        grads_by_finite_differences,
        "one or two forward passes per entry of q, k and v: 98,304 of them here",
    ),
    "no 1/√d_k": (no_scale, "missing the factor 1/√d_k"),
    "1/√d_k twice": (scale_twice, "You applied 1/√d_k twice"),
    "1/√d_v": (scale_by_d_v, "You scaled by 1/√d_v = 1/√2, the width of v"),
    "1/√d_v in float32": (scale_by_d_v_in_float32, "The scale is 1/√d_k = 1/√3"),
    "softmax skipped": (softmax_skipped, "You skipped the softmax"),
    "dq and dk swapped": (swapped, "dq and dk are swapped"),
    "W G for dv": (dv_untransposed, "dv should be Wᵀ G"),
    "∂S Q for dk": (dk_untransposed, "dk should be (∂L/∂S)ᵀ Q"),
    "only two": (
        lambda q, k, v, g: grads_reference(q, k, v, g)[:2],
        "should return the three gradients (dq, dk, dv)",
    ),
    "the library's backward": (
        lambda q, k, v, g: tuple(attention_backward(q, k, v, g)),
        "asks you not to use",
    ),
    "off a little": (
        lambda q, k, v, g: (
            *grads_reference(q, k, v, g)[:2],
            grads_reference(q, k, v, g)[2] * 1.01,
        ),
        "dv is not right; dv should be",
    ),
}


def test_backward_cases_are_rectangular_somewhere_and_the_references_agree():
    cases = L.attention_cases()
    assert any(c.q.shape[0] != c.k.shape[0] and c.q.shape[1] != c.v.shape[1] for c in cases)
    for case in cases:
        for got, want in zip(
            grads_reference(case.q, case.k, case.v, case.g), case.expected, strict=True
        ):
            np.testing.assert_allclose(got, want, atol=1e-10)


def test_a_rectangular_case_names_the_transpose_by_shape():
    feedback = L.backward_step.check(
        lambda q, k, v, g: (
            *grads_reference(q, k, v, g)[:2],
            g.T @ np.ones((q.shape[0], k.shape[0])),
        )
    )
    assert "should have shape" in feedback.message


# ---------------------------------------------------------------- 9.3 read the heatmap
def read_with_argmax():
    weights = L.probe_heatmap()
    return [PROBE[j] for j in weights.argmax(axis=1)]


READS_RIGHT = {
    "argmax of each row": read_with_argmax,
    "a tuple": lambda: tuple(read_with_argmax()),
    "a numpy array of str": lambda: np.array(read_with_argmax()),
}
READS_WRONG = {
    "the finished reversal": (lambda: list(PROBE[::-1]), "That is the reversed sequence"),
    "the diagonal": (lambda: list(PROBE), "each query's own token, the diagonal"),
    "positions": (lambda: L.probe_heatmap().argmax(axis=1).tolist(), "Those are positions"),
    "too short": (lambda: read_with_argmax()[:-1], "one token per query, 6 in all"),
    "one string": (lambda: "BAEFAB", "should return a list of 6 tokens"),
    "the faintest cell of each row": (
        lambda: [PROBE[j] for j in L.probe_heatmap().argmin(axis=1)],
        "Row 0 (query 'C'): its brightest cell is not under",
    ),
}


def test_the_probe_tells_the_diagonal_from_the_anti_diagonal():
    """Reading each row's own token and reading its mirror's give different answers in every
    row (with a token at mirror positions twice, "reads itself" and "reads its mirror" were
    the same answer there); a token still repeats, so reading by token stays ambiguous."""
    n = len(PROBE)
    assert all(PROBE[i] != PROBE[n - 1 - i] for i in range(n))
    assert len(set(PROBE)) < n
    diagonal, mirror = list(PROBE), list(PROBE[::-1])
    with_diagonal = L.reads.check(lambda: diagonal)
    with_mirror = L.reads.check(lambda: mirror)
    assert "diagonal" in str(with_diagonal) and "reversed sequence" in str(with_mirror)


def test_the_heatmap_at_the_read_step_has_a_clear_winner_in_every_row_and_is_half_learned():
    weights = L.probe_heatmap()
    top2 = np.sort(weights, axis=1)[:, -2:]  # (n, 2)
    assert np.min(top2[:, 1] - top2[:, 0]) > 0.15  # readable from the colours
    reads = weights.argmax(axis=1)
    mirror = np.arange(len(PROBE))[::-1]
    assert 0 < np.sum(reads != mirror) < len(PROBE) // 2  # part-way: most rows, not all
    assert [PROBE[j] for j in reads] != list(PROBE[::-1])


# ---------------------------------------------------------------- the tables
test_accepts, test_rejects = accept_reject(
    Answers(L.vjp, VJP_RIGHT, VJP_WRONG),
    Answers(L.backward_step, BACKWARD_RIGHT, BACKWARD_WRONG),
    Answers(L.reads, READS_RIGHT, READS_WRONG),
)


def vjp_by_one_complex_step_as_written(w, g):
    """The complex step as the lesson describes it, ``s = np.log(w)``: numpy warns of the log
    of each masked weight (0), and exp(log 0) gives that 0 back exactly."""
    w, g = np.asarray(w, dtype=float), np.asarray(g, dtype=float)
    s = np.log(w)  # (..., n), -inf where a weight is 0
    h = 1e-30
    x = s + 1j * h * g  # (..., n)
    e = np.exp(x - x.real.max(axis=-1, keepdims=True))
    return (e / e.sum(axis=-1, keepdims=True)).imag / h


def test_the_lessons_complex_step_is_right_despite_the_log_of_zero():
    """Issue 41: 9.1's complex step written as the lesson describes it was refused for numpy's
    "divide by zero encountered in log" on the masked weights. That warning alone, on weights
    that hold a 0, no longer costs the points; any other warning on right numbers still does."""
    case = next(c for c in L.vjp_cases() if np.any(c.weights == 0))
    with np.errstate(divide="warn"), pytest.warns(RuntimeWarning, match="divide by zero"):
        vjp_by_one_complex_step_as_written(case.weights, case.g)
    feedback = L.vjp.check(vjp_by_one_complex_step_as_written)
    assert feedback.outcome is Outcome.CORRECT, feedback.message

    def right_but_overflows(w, g):
        np.exp(np.full(1, 1000.0))  # a warning of its own, on right numbers
        return w * (g - np.sum(w * g, axis=-1, keepdims=True))

    message = L.vjp.check(right_but_overflows).message
    assert "is right, but numpy warned: overflow encountered in exp" in message, message


def test_the_library_is_forbidden_where_the_step_is_the_point():
    from attnlab.backward import softmax_vjp

    feedback = L.vjp.check(lambda w, g: softmax_vjp(w, g))
    assert "asks you not to use" in feedback.message
