"""Lesson 9 checks: each rejects known-wrong answers with a helpful reason, accepts right ones."""

from __future__ import annotations

import math

import numpy as np
from answer_tables import Answers, accept_reject

import attnlab
from attnlab.backward import attention_backward, finite_difference_gradient
from attnlab.exercises import lesson9 as L
from attnlab.training import PROBE


# ---------------------------------------------------------------- 9.1 the softmax VJP
def vjp_by_rows(w, g):
    """Row by row, with the explicit Jacobian diag(w) - w wᵀ (lesson 2), in Python loops."""
    w2, g2 = w.reshape(-1, w.shape[-1]), g.reshape(-1, g.shape[-1])
    out = np.zeros_like(w2)
    for r, (wr, gr) in enumerate(zip(w2, g2, strict=True)):
        for i in range(len(wr)):
            out[r, i] = sum(wr[i] * ((i == j) - wr[j]) * gr[j] for j in range(len(wr)))
    return out.reshape(w.shape)


def vjp_einsum_jacobian(w, g):
    return np.einsum("...ij,...j->...i", attnlab.softmax_jacobian(w), g)


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
    "explicit Jacobian in loops": vjp_by_rows,
    "einsum with softmax_jacobian": vjp_einsum_jacobian,
    "float32": vjp_float32,
    "a nested list": vjp_as_list,
}
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
    "a log of the weights": (
        lambda w, g: (
            w * (g - np.sum(w * g, axis=-1, keepdims=True)) + 0 * np.log(np.where(w > 0, w, np.nan))
        ),
        "nan or inf",
    ),
}


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
    """Slow but right: nudge every entry (the check cannot tell a careful learner from this)."""

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


BACKWARD_RIGHT = {
    "reference": grads_reference,
    "einsum in float32, a list": grads_einsum_float32,
    "finite differences": grads_by_finite_differences,
}
BACKWARD_WRONG = {
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


def test_the_library_is_forbidden_where_the_step_is_the_point():
    from attnlab.backward import softmax_vjp

    feedback = L.vjp.check(lambda w, g: softmax_vjp(w, g))
    assert "asks you not to use" in feedback.message
