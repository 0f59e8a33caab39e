"""Lesson 6 checks: each rejects known-wrong answers with a helpful reason, accepts right ones."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
import worked_answers as W
from answer_tables import Answers, accept_reject, assert_hints_climb, assert_right, judged

import attnlab
from attnlab import causal_mask
from attnlab.examples import cat_sat_down
from attnlab.exercises import Outcome
from attnlab.exercises import lesson6 as L
from attnlab.exercises.kit.calling import call_watching
from attnlab.exercises.kit.display import short


# ---------------------------------------------------------------- 6.1 the shapes
def shapes_by_computing(batch, n, d_model, d_k, d_v):
    """Make arrays of the right sizes and read the shapes off numpy's results."""
    x = np.zeros((batch, n, d_model))
    q, k, v = (
        x @ np.zeros((d_model, d_k)),
        x @ np.zeros((d_model, d_k)),
        x @ np.zeros((d_model, d_v)),
    )
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(d_k)
    weights = attnlab.softmax(scores, axis=-1)
    output = weights @ v
    return {
        "Q": q.shape,
        "K": k.shape,
        "V": v.shape,
        "scores": scores.shape,
        "weights": weights.shape,
        "output": output.shape,
    }


def shapes_as(kind):
    def answer(batch, n, d_model, d_k, d_v):
        return {
            key: kind(shape)
            for key, shape in W.solution_attention_shapes(batch, n, d_model, d_k, d_v).items()
        }

    return answer


def shapes_with(**changes):
    """The right shapes, with some replaced by ``changes[key](batch, n, d_model, d_k, d_v)``."""

    def answer(batch, n, d_model, d_k, d_v):
        shapes = W.solution_attention_shapes(batch, n, d_model, d_k, d_v)
        shapes.update({key: make(batch, n, d_model, d_k, d_v) for key, make in changes.items()})
        return shapes

    return answer


SHAPES_RIGHT = {
    "reference": W.solution_attention_shapes,
    "computed with numpy": shapes_by_computing,
    "lists": shapes_as(list),
    "numpy int arrays": shapes_as(lambda s: np.array(s, dtype=np.int64)),
    "dict() with an extra key": lambda b, n, dm, dk, dv: dict(
        Q=(b, n, dk),
        K=(b, n, dk),
        V=(b, n, dv),
        scores=(b, n, n),
        weights=(b, n, n),
        output=(b, n, dv),
        X=(b, n, dm),
    ),
}
WEIGHTS_BN = (
    "gave 'weights': (2, 3) = (batch, n), but it should be (2, 3, 3) = (batch, n, n). The "
    "weights are missing an axis: they pair every query with every key, so each of the 2 "
    "sequences has an n × n matrix, one axis for the n = 3 queries and one for the n = 3 "
    "keys: Q Kᵀ is (n, d_k) @ (d_k, n) → (n, n). Softmax normalises each row of the scores "
    "but keeps its shape"
)
SHAPES_WRONG = {
    "d_model in Q": (
        shapes_with(Q=lambda b, n, dm, dk, dv: (b, n, dm)),
        "adds over the size the two share, d_model = 16",
    ),
    "d_model in V": (
        shapes_with(V=lambda b, n, dm, dk, dv: (b, n, dm)),
        "V keeps the last size of W_V, d_v = 5",
    ),
    "d_k in V": (
        shapes_with(V=lambda b, n, dm, dk, dv: (b, n, dk)),
        "which need not equal d_k = 8",
    ),
    "scores (batch, n, d_k)": (
        shapes_with(scores=lambda b, n, dm, dk, dv: (b, n, dk)),
        "d_k is added over in every dot product",
    ),
    # weights of shape (batch, n): the key axis summed away (or the query axis dropped)
    # one mistake, so one reason, however the shape is written
    "weights (batch, n)": (shapes_with(weights=lambda b, n, dm, dk, dv: (b, n)), WEIGHTS_BN),
    "weights (batch, n) as a list": (
        shapes_with(weights=lambda b, n, dm, dk, dv: [b, n]),
        WEIGHTS_BN,
    ),
    "weights (batch, n) read off a summed array": (
        shapes_with(weights=lambda b, n, dm, dk, dv: np.ones((b, n, n)).sum(axis=-1).shape),
        WEIGHTS_BN,
    ),
    "weights (batch, n) as an int array, on other sizes": (
        shapes_with(weights=lambda b, n, dm, dk, dv: np.array([b, n]) if b == 4 else (b, n, n)),
        "gave 'weights': (4, 7) = (batch, n), but it should be (4, 7, 7) = (batch, n, n). "
        "The weights are missing an axis",
    ),
    "scores (batch, n)": (
        shapes_with(scores=lambda b, n, dm, dk, dv: (b, n)),
        "(batch, n) is one number per token, what a sum over one of the two axes gives",
    ),
    "output with d_k": (
        shapes_with(output=lambda b, n, dm, dk, dv: (b, n, dk)),
        "d_k = 8 only lives in Q and K",
    ),
    "output like the weights": (
        shapes_with(output=lambda b, n, dm, dk, dv: (b, n, n)),
        "That is the shape of the weights",
    ),
    "output with d_model": (
        shapes_with(output=lambda b, n, dm, dk, dv: (b, n, dm)),
        "There is no output projection here",
    ),
    "no batch axis": (
        lambda *sizes: {k: v[1:] for k, v in W.solution_attention_shapes(*sizes).items()},
        "You dropped the batch axis",
    ),
    "missing output": (
        lambda *sizes: {
            k: v for k, v in W.solution_attention_shapes(*sizes).items() if k != "output"
        },
        "without the key(s) 'output'",
    ),
    "lower-case keys": (
        lambda *sizes: {k.lower(): v for k, v in W.solution_attention_shapes(*sizes).items()},
        "The keys are case-sensitive: write 'Q', 'K', 'V'",
    ),
    "the arrays, not their shapes": (
        shapes_with(Q=lambda b, n, dm, dk, dv: np.zeros((b, n, dk))),
        "give its shape, e.g. Q.shape",
    ),
    "float sizes": (
        shapes_with(V=lambda b, n, dm, dk, dv: (b, n, dv / 1)),
        "a shape holds whole numbers",
    ),
    "a list of shapes": (
        lambda *sizes: list(W.solution_attention_shapes(*sizes).values()),
        "should return a dict with the keys",
    ),
    "right for the first sizes only": (
        lambda *sizes: W.solution_attention_shapes(2, 3, 16, 8, 5),
        "attention_shapes(batch=4, n=7, d_model=12, d_k=6, d_v=9) gave 'Q': "
        "(2, 3, 8), but it should be (4, 7, 6)",
    ),
}


def test_shape_cases_have_five_different_sizes():
    for sizes in L.shape_cases():
        assert len(set(sizes)) == 5, sizes
    assert len(set(L.shape_cases())) == len(L.shape_cases()) >= 3


def test_the_reference_shapes_are_numpys():
    for sizes in L.shape_cases():
        assert W.solution_attention_shapes(*sizes) == shapes_by_computing(*sizes)


# ---------------------------------------------------------------- 6.2 the causal mask
def causal_loops(n):
    return [[j <= i for j in range(n)] for i in range(n)]


def causal_from_attnlab(n):
    return causal_mask(n)


def causal_through_the_module(n):
    return attnlab.causal_mask(n)


CAUSAL_RIGHT = {
    "reference": W.solution_causal,
    "np.tril": lambda n: np.tril(np.ones((n, n), dtype=bool)),
    "np.tri": lambda n: np.tri(n, dtype=bool),
    "loops, lists of bools": causal_loops,
    "not the strict upper triangle": lambda n: ~np.triu(np.ones((n, n), dtype=bool), k=1),
    "floats, then astype": lambda n: np.tril(np.ones((n, n))).astype(bool),
}
CAUSAL_WRONG = {
    "upper triangle": (lambda n: np.triu(np.ones((n, n), dtype=bool)), "looks at the future"),
    "strict lower": (
        lambda n: np.tril(np.ones((n, n), dtype=bool), k=-1),
        "a query can't see itself",
    ),
    "inverted": (lambda n: np.triu(np.ones((n, n), dtype=bool), k=1), "the mask is inverted"),
    "nothing masked": (lambda n: np.ones((n, n), dtype=bool), "nothing is masked"),
    "only itself": (lambda n: np.eye(n, dtype=bool), "only itself"),
    "upside down": (lambda n: np.tril(np.ones((n, n), dtype=bool))[::-1], "upside down"),
    "0/1 ints": (lambda n: np.tril(np.ones((n, n), dtype=int)), "0/1 integers, not booleans"),
    "0/1 floats": (lambda n: np.tril(np.ones((n, n))), "0/1 floats, not booleans"),
    "0/1 upper floats": (
        lambda n: np.triu(np.ones((n, n))),
        "0/1 floats, not booleans; use "
        "dtype=bool (or compare, j <= i, which gives booleans). attnlab's "
        "attention refuses a 0/1 mask, because a 1 could be meant as 'masked' "
        "as easily as 'allowed'. Yours is the upper triangle, so it looks at the "
        "future",
    ),
    "additive mask": (lambda n: np.where(np.tri(n) > 0, 0.0, -np.inf), "an additive mask"),
    "other numbers": (lambda n: np.tri(n) * 2, "A mask holds booleans, True where"),
    "too wide": (lambda n: np.tri(n, n + 1, dtype=bool), "yours has shape (4, 5)"),
    "flat": (lambda n: np.tri(n, dtype=bool).ravel(), "yours has shape (16,)"),
    "strings": (lambda n: [["yes"] * n] * n, "should be a boolean array of shape (4, 4)"),
    "from attnlab": (causal_from_attnlab, "asks you not to use"),
    "bound as a default": (lambda n, _f=causal_mask: _f(n), "asks you not to use"),
    "through the module": (causal_through_the_module, "asks you not to use"),
    "one wrong entry": (
        lambda n: np.tri(n, dtype=bool) ^ (np.arange(n * n).reshape(n, n) == 1),
        "Entry [0, 1] (query 0, key 1) should be False, since key 1 is after query 0",
    ),
    "right for 4 only": (lambda n: np.tri(4, dtype=bool), "causal(1) should have shape (1, 1)"),
}


def test_causal_cases_start_with_the_running_example():
    sizes = L.causal_cases()
    assert sizes[0] == len(cat_sat_down().tokens) and 1 in sizes and len(set(sizes)) >= 3


def test_checking_leaves_attnlab_causal_mask_as_it_was():
    before = (attnlab.causal_mask, attnlab.attention.causal_mask)
    for answer in (causal_through_the_module, W.solution_causal, lambda n: 1 / 0):
        judged(L.causal_mask_from_scratch, answer)
    assert (attnlab.causal_mask, attnlab.attention.causal_mask) == before


def test_a_warning_makes_a_right_mask_wrong():
    def warns(n):
        np.float64(1.0) / np.float64(0.0)
        return np.tri(n, dtype=bool)

    message = judged(L.causal_mask_from_scratch, warns).message
    assert "gives the right mask, but numpy warned: divide by zero" in message


# ---------------------------------------------------------------- 6.3 softmax with a mask
def softmax_rows(scores, mask):
    """Row by row, in Python, over the allowed keys only."""
    out = np.zeros(np.shape(scores))
    for i in range(len(scores)):
        allowed = [j for j in range(len(scores[i])) if mask[i][j]]
        if not allowed:
            continue
        top = max(float(scores[i][j]) for j in allowed)
        e = {j: np.exp(float(scores[i][j]) - top) for j in allowed}
        total = sum(e.values())
        for j in allowed:
            out[i, j] = e[j] / total
    return out


def softmax_finite_fill(scores, mask):
    """-1e9 for the masked scores, and fully masked rows zeroed afterwards."""
    w = library_like_softmax(np.where(mask, scores, -1e9), axis=-1)
    return w * mask.any(axis=1, keepdims=True)


def softmax_log_sum_exp(scores, mask):
    s = np.where(mask, scores, -np.inf)
    m = np.max(s, axis=1, keepdims=True, initial=-np.inf, where=mask)
    m = np.where(mask.any(axis=1, keepdims=True), m, 0.0)
    e = np.exp(s - m)
    return np.divide(
        e, e.sum(axis=1, keepdims=True), out=np.zeros_like(e), where=mask.any(axis=1, keepdims=True)
    )


def no_shift(scores, mask):
    e = np.exp(np.where(mask, scores, -np.inf))
    t = e.sum(axis=1, keepdims=True)
    return e / np.where(t > 0, t, 1)


def nan_on_full_row(scores, mask):
    s = np.where(mask, scores, -np.inf)
    e = np.exp(s - s.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def nan_to_num_after(scores, mask):
    with np.errstate(all="ignore"):
        return np.nan_to_num(nan_on_full_row(scores, mask))


def warns_then_cleans(scores, mask):
    return np.nan_to_num(nan_on_full_row(scores, mask))


def max_over_everything(scores, mask):
    e = np.exp(scores - scores.max(axis=1, keepdims=True)) * mask
    t = e.sum(axis=1, keepdims=True)
    return e / np.where(t > 0, t, 1)


def renormalise(scores, mask):
    """Softmax over every key, zero the masked weights, divide by what is left (0 for none)."""
    kept = library_like_softmax(scores, axis=1) * mask
    total = kept.sum(axis=1, keepdims=True)
    return kept / np.where(total > 0, total, 1.0)


def renormalise_nan(scores, mask):
    """The same, with only the fully masked rows guarded: a dominated row becomes 0/0."""
    kept = library_like_softmax(scores, axis=1) * mask
    total = kept.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore"):
        return np.where(
            mask.any(axis=1, keepdims=True),
            kept / np.where(mask.any(axis=1, keepdims=True), total, 1.0),
            0.0,
        )


def in_float32(scores, mask):
    """The reference computed in float32 throughout."""
    return W.solution_masked_softmax(scores.astype(np.float32), mask).astype(np.float32)


def masks_in_place(scores, mask):
    scores[~mask] = -np.inf
    return W.solution_masked_softmax(scores, mask)


RENORMALISED = (
    "included the masked score 5000, the same computation as taking the softmax "
    "over every key, zeroing the masked weights and renormalising"
)


def library_like_softmax(x, axis=-1):
    """attnlab.softmax written out in numpy (a fully -inf row gives zeros), to build answers
    with: 6.3 forbids the library's own."""
    m = np.max(x, axis=axis, keepdims=True)
    e = np.exp(x - np.where(np.isfinite(m), m, 0))
    total = e.sum(axis=axis, keepdims=True)
    return e / np.where(total > 0, total, 1)


SOFTMAX_RIGHT = {
    "reference": W.solution_masked_softmax,
    "row by row": softmax_rows,
    "finite fill, full rows zeroed": softmax_finite_fill,
    "max where=mask, np.divide where": softmax_log_sum_exp,
    "errstate, nan_to_num": nan_to_num_after,
    "in float32": in_float32,
    "a list of lists": lambda s, m: W.solution_masked_softmax(s, m).tolist(),
    "batch-ready (axis=-1)": lambda s, m: library_like_softmax(
        np.where(m[None], s[None], -np.inf), axis=-1
    )[0],
}
SOFTMAX_WRONG = {
    "attnlab.softmax of -inf": (
        lambda s, m: attnlab.softmax(np.where(m, s, -np.inf), axis=-1),
        "asks you not to use",
    ),
    "masked after the softmax": (
        lambda s, m: library_like_softmax(s, axis=1) * m,
        "masked after the softmax without renormalising",
    ),
    "fill 0": (
        lambda s, m: library_like_softmax(np.where(m, s, 0.0), axis=1),
        "a score of 0 is not 'never'",
    ),
    "inverted": (
        lambda s, m: library_like_softmax(np.where(~m, s, -np.inf), axis=1),
        "the mask is inverted",
    ),
    "fill -1e9": (
        lambda s, m: library_like_softmax(np.where(m, s, -1e9), axis=1),
        "yours spreads the weight evenly",
    ),
    "nan on the full row": (
        nan_on_full_row,
        "Row 1 is fully masked (no key allowed), and yours is nan there",
    ),
    "no max shift": (no_shift, "exp of scores as large as 1000 overflows float64"),
    "no max shift, float32 only": (
        lambda s, m: no_shift(s, m) if s.dtype == np.float32 else W.solution_masked_softmax(s, m),
        "exp of scores as large as 95 overflows float32",
    ),
    # one computation, so one reason: the max includes the masked score 5000
    "max over masked scores too": (max_over_everything, RENORMALISED),
    "softmax, zero the future, renormalise": (renormalise, RENORMALISED),
    "renormalise, nan where a masked score dominates": (renormalise_nan, RENORMALISED),
    "warns, then cleans up": (
        warns_then_cleans,
        "gives the right weights, but numpy warned: invalid value encountered in subtract",
    ),
    "masks in place": (masks_in_place, "changed its input"),
    "plain softmax": (
        lambda s, m: library_like_softmax(s, axis=1),
        "weights[0, 1] = 0.4146, but key 1 is masked for query 0",
    ),
    "half the weights": (
        lambda s, m: W.solution_masked_softmax(s, m) / 2,
        "Row 0 of yours adds up to 0.5",
    ),
    "full row set to 1": (
        lambda s, m: W.solution_masked_softmax(s, m) + ~m.any(axis=1, keepdims=True) * 0.25,
        "Row 1 is fully masked (no key allowed), so all its weights must be 0; yours is "
        "[0.25, 0.25, 0.25]",
    ),
    "temperature 2": (
        lambda s, m: W.solution_masked_softmax(s / 2, m),
        "Row 1 should be [0.4596, 0.5404, 0, 0], the softmax of its allowed scores",
    ),
    "transposed": (lambda s, m: W.solution_masked_softmax(s, m).T, "weights[0, 1] ="),
    "one row": (
        lambda s, m: W.solution_masked_softmax(s, m)[0],
        "should have the shape of the scores, (4, 4)",
    ),
    "the mask": (lambda s, m: m, "Row 1 of yours adds up to 2"),
}


def test_softmax_cases_cover_what_the_exercise_promises():
    cases = L.softmax_cases()
    cat = cat_sat_down()
    _, scores, mask = cases[0]
    np.testing.assert_allclose(scores, attnlab.attention_scores(cat.x @ cat.w_q, cat.x @ cat.w_k))
    np.testing.assert_array_equal(mask, attnlab.causal_mask(4))
    assert any((~m).all(axis=1).any() for _, _, m in cases)  # a fully masked row
    assert any((~m).all(axis=0).any() and m.any(axis=1).all() for _, _, m in cases)  # padding
    assert any(np.abs(s).max() >= 1000 for _, s, _ in cases)
    assert any(s.dtype == np.float32 and np.abs(s).max() > 89 for _, s, _ in cases)
    for _, scores, mask in cases:
        assert scores.shape == mask.shape and mask.dtype == bool


def test_each_known_softmax_mistake_differs_from_the_right_answer_somewhere():
    for k, (_, reason) in enumerate(L._softmax_mistakes(*L.softmax_cases()[0][1:])):

        def differs(scores, mask, k=k):
            mine = L._softmax_mistakes(scores, mask)[k][0]
            return mine is not None and not np.allclose(
                mine, attnlab.softmax(np.where(mask, scores, -np.inf), axis=-1), equal_nan=True
            )

        assert any(differs(s, m) for _, s, m in L.softmax_cases()), reason


def test_an_answer_right_until_the_large_scores_is_judged_there():
    description = next(d for d, s, _ in L.softmax_cases() if np.abs(s).max() >= 1000)
    assert description in judged(L.masked_softmax, no_shift).message


# ------------------------------------------------------------------ every table above
# Each wrong answer's feedback begins with the call that failed, and carries no reason another
# entry of its table is expected to give.
test_accepts, test_rejects = accept_reject(
    Answers(
        L.attention_shapes,
        SHAPES_RIGHT,
        SHAPES_WRONG,
        call="attention_shapes(batch=",
        told_apart=True,
    ),
    Answers(
        L.causal_mask_from_scratch, CAUSAL_RIGHT, CAUSAL_WRONG, call="causal(", told_apart=True
    ),
    Answers(
        L.masked_softmax,
        SOFTMAX_RIGHT,
        SOFTMAX_WRONG,
        call="masked_softmax(scores, mask) for ",
        told_apart=True,
    ),
)


def test_messages_show_numbers_computed_from_the_inputs(monkeypatch):
    """With the running example's projections doubled, the weights shown follow."""

    def expected():
        _, scores, mask = L.softmax_cases()[0]
        return W.solution_masked_softmax(scores, mask)

    def fill_zero(s, m):
        return library_like_softmax(np.where(m, s, 0.0), axis=1)

    before = judged(L.masked_softmax, fill_zero).message
    assert short(expected()) in before

    def doubled():
        ex = cat_sat_down()
        return SimpleNamespace(**{**vars(ex), "w_q": 2 * ex.w_q})

    monkeypatch.setattr(L, "cat_sat_down", doubled)
    after = judged(L.masked_softmax, fill_zero).message
    assert short(expected()) in after and short(expected()) not in before


def test_shape_messages_follow_the_sizes(monkeypatch):
    monkeypatch.setattr(L, "shape_cases", lambda: [(5, 2, 30, 11, 7)])
    message = judged(L.attention_shapes, SHAPES_WRONG["output with d_k"][0]).message
    assert "gave 'output': (5, 2, 11) = (batch, n, d_k), but it should be (5, 2, 7)" in message


@pytest.mark.parametrize(
    "exercise",
    [L.attention_shapes, L.causal_mask_from_scratch, L.masked_softmax],
    ids=lambda e: e.title,
)
def test_hints_go_from_a_nudge_to_the_method(exercise):
    assert_hints_climb(exercise)
    assert "`" not in exercise.hints[1]  # the method, in words
    assert len(set(exercise.hints)) == 3  # each tier says something new (never the code:
    # test_exercises_contract checks no hint holds a line of the worked solution)


def test_the_last_hints_lead_to_a_right_answer():
    """Code written from the words of the last hint of 6.2 and 6.3 passes the check."""

    def causal(n):
        return np.arange(n)[None, :] <= np.arange(n)[:, None]

    def masked(scores, mask):
        s = np.where(mask, scores, -np.inf)
        m = s.max(axis=1, keepdims=True)
        e = np.exp(s - np.where(np.isfinite(m), m, 0))
        t = e.sum(axis=1, keepdims=True)
        return e / np.where(t > 0, t, 1)

    assert "np.arange(n)" in L.causal_mask_from_scratch.hints[2]
    assert "np.where" in L.masked_softmax.hints[2] and "finite" in L.masked_softmax.hints[2]
    assert_right(L.causal_mask_from_scratch, causal)
    assert_right(L.masked_softmax, masked)


def test_solutions_show_their_source():
    assert "(batch, n, d_v)" in L.attention_shapes.solution().markdown
    assert "j <= i" in L.causal_mask_from_scratch.solution().markdown
    assert "np.where(mask, scores, -np.inf)" in L.masked_softmax.solution().markdown


def test_a_difference_hidden_by_rounding_is_said_to_be_one():
    def nearly(scores, mask):
        w = W.solution_masked_softmax(scores, mask)
        return w + 4e-5 * (w > 0.5)  # below the 4 digits shown, above float32 rounding

    message = judged(L.masked_softmax, nearly).message
    assert "agree to the digits shown, but differ by up to" in message, message


def test_lesson_6_rejects_what_lesson_7_must_reject():
    """Softmax, zero the future, renormalise: right on small scores, wrong when a future score
    dominates; lesson 6 says why (lesson 7's check 7.4 must agree, issue 12)."""
    small = np.array([[1.0, 2.0], [0.5, 0.1]])
    causal = attnlab.causal_mask(2)
    np.testing.assert_allclose(renormalise(small, causal), W.solution_masked_softmax(small, causal))
    dominated = np.array([[1.0, 2000.0], [0.5, 0.1]])
    assert np.all(renormalise(dominated, causal)[0] == 0)
    assert judged(L.masked_softmax, renormalise).outcome.name == "WRONG"


def masked_array_softmax(scores, mask):
    """The softmax over the allowed keys in a numpy masked array: np.ma.exp takes the exp of
    the masked entries' raw scores too, and warns when one of them overflows."""
    s = np.ma.masked_array(np.asarray(scores, dtype=float), mask=~np.asarray(mask, dtype=bool))
    e = np.ma.exp(s - s.max(axis=-1, keepdims=True))  # (n_q, n_k)
    return (e / e.sum(axis=-1, keepdims=True)).filled(0.0)


def exp_of_every_score(scores, mask):
    """np.where after the exp: the exp of a masked score far above the others overflows."""
    s = np.asarray(scores, dtype=float)
    top = np.where(mask, s, -np.inf).max(axis=-1, keepdims=True)  # (n_q, 1)
    e = np.where(mask, np.exp(s - np.where(np.isfinite(top), top, 0.0)), 0.0)
    total = e.sum(axis=-1, keepdims=True)
    return e / np.where(total > 0, total, 1.0)


@pytest.mark.parametrize("answer", [masked_array_softmax, exp_of_every_score])
def test_a_warning_from_masked_out_scores_only_is_not_penalised(answer):
    """Issue 39: a np.ma softmax lost 6.3's two points to an overflow warning raised on a
    masked-out entry, with advice about np.where it does not use. Right weights whose warnings
    go away when only the masked-out scores change are right."""
    case = next(c for c in L.softmax_cases() if c[0].startswith("the large scores"))
    assert call_watching(answer, case[1].copy(), case[2].copy())[1]  # it does warn there
    feedback = judged(L.masked_softmax, answer)
    assert feedback.outcome is Outcome.CORRECT, feedback.message


def test_a_warning_on_a_fully_masked_row_is_still_refused():
    """0/0 on a row with no allowed key warns whatever its masked scores are: still wrong,
    with the advice about np.where that fits it."""

    def unguarded(scores, mask):
        s = np.where(mask, scores, -np.inf)
        e = np.exp(s - s.max(axis=-1, keepdims=True))  # -inf - (-inf) on an empty row
        total = e.sum(axis=-1, keepdims=True)
        return np.where(total > 0, e / total, 0.0)

    message = judged(L.masked_softmax, unguarded).message
    assert "gives the right weights, but numpy warned" in message, message
    assert "np.where computes both branches" in message
