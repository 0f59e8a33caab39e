"""Lesson 8 checks: each rejects known-wrong answers with a helpful reason, accepts right ones."""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
import worked_answers as W
from answer_tables import Answers, accept_reject, judged
from source_answers import worked_answer

import attnlab
from attnlab.exercises import Outcome
from attnlab.exercises import lesson8 as L
from attnlab.online import online_softmax_update


# ---------------------------------------------------------------- 8.1 memory of the scores
def bytes_by_allocating(n, heads, batch, dtype):
    """Measure a small stand-in and scale it: an array knows its own nbytes."""
    return np.zeros((batch, heads, 1, n), dtype=dtype).nbytes * n


def bytes_with_a_table(n, heads, batch, dtype):
    return batch * heads * n**2 * {"float16": 2, "float32": 4, "float64": 8}[dtype]


MEMORY_RIGHT = {
    "reference": W.solution_scores_bytes,
    "a float32 count": lambda n, h, b, d: np.float32(W.solution_scores_bytes(n, h, b, d)),
    "a small stand-in, scaled": bytes_by_allocating,
    "a table of sizes": bytes_with_a_table,
    "numpy integer": lambda n, h, b, d: np.int64(b * h * n * n) * np.dtype(d).itemsize,
    "a whole float": lambda n, h, b, d: float(b * h * n * n * np.dtype(d).itemsize),
}
MEMORY_WRONG = {
    "n not n²": (lambda n, h, b, d: b * h * n * np.dtype(d).itemsize, "not n² = 16 per matrix"),
    "bits": (lambda n, h, b, d: 8 * W.solution_scores_bytes(n, h, b, d), "That is bits"),
    "MiB": (lambda n, h, b, d: W.solution_scores_bytes(n, h, b, d) / 2**20, "mebibytes"),
    "MB": (lambda n, h, b, d: W.solution_scores_bytes(n, h, b, d) / 1e6, "megabytes"),
    "no heads": (
        lambda n, h, b, d: b * n * n * np.dtype(d).itemsize,
        "You left out the heads: each of the 12 heads",
    ),
    "no batch": (
        lambda n, h, b, d: h * n * n * np.dtype(d).itemsize,
        "You left out the batch: each of the 8 sequences",
    ),
    "4 bytes always": (
        lambda n, h, b, d: b * h * n * n * 4,
        "Every entry is 8 bytes in float64, not 4",
    ),
    "entries": (lambda n, h, b, d: b * h * n * n, "You counted entries, not bytes"),
    "scores and weights": (
        lambda n, h, b, d: 2 * W.solution_scores_bytes(n, h, b, d),
        "you counted two n × n matrices per head",
    ),
    "rounded": (
        lambda n, h, b, d: float(f"{W.solution_scores_bytes(n, h, b, d):.3g}"),
        "close but not exact",
    ),
    "a string": (lambda n, h, b, d: "128 bytes", "should be a number of bytes, 128"),
    "right for the first only": (
        lambda n, h, b, d: 128,
        "scores_bytes(n=2048, heads=12, batch=8, dtype='float32') should be 1,610,612,736 bytes",
    ),
}


def test_memory_cases_cover_every_dtype_and_size():
    cases = L.memory_cases()
    assert {c[3] for c in cases} == {"float16", "float32", "float64"}
    assert any(c[1] > 1 and c[2] > 1 for c in cases) and max(c[0] for c in cases) >= 16384


@pytest.mark.parametrize(
    "built",
    [
        lambda n, h, b, d: np.empty((b, h, n, n), d).nbytes,
        lambda n, h, b, d: np.zeros((b, h, n, n), dtype=d).size * np.dtype(d).itemsize,
        lambda n, h, b, d: np.ones((b, h, n, n), dtype=bool).size * np.dtype(d).itemsize,
    ],
    ids=["np.empty nbytes", "np.zeros size", "one byte per score"],
)
def test_an_answer_that_builds_the_scores_to_read_their_size_is_refused(built):
    """8.1 says "count them; do not build the array" but accepted
    ``np.empty((b, h, n, n), dt).nbytes`` (issue 41): the check measures what the call
    allocates (as grading does, where the answer runs) and says why."""
    feedback = judged(L.scores_memory, built)
    assert feedback.outcome is Outcome.WRONG
    assert "without building the array" in feedback.message, feedback.message
    assert "n=2048, heads=12, batch=8, dtype='float32') is right, but your function allocated" in (
        feedback.message
    )


def test_memory_reference_is_nbytes():
    for n, heads, batch, dtype in L.memory_cases()[:2]:
        expected = np.zeros((batch, heads, n, n), dtype=dtype).nbytes
        assert W.solution_scores_bytes(n, heads, batch, dtype) == expected


# ---------------------------------------------------------------- 8.2 the online update
def update_in_loops(m, l, block):
    """Row by row, score by score, in plain Python floats (the textbook one-at-a-time form)."""
    m_out, l_out = [], []
    for mi, li, row in zip(m.tolist(), l.tolist(), block.tolist(), strict=True):
        for x in row:
            new = max(mi, x)
            shift = new if math.isfinite(new) else 0.0
            li = li * math.exp(mi - shift) + math.exp(x - shift)
            mi = new
        m_out.append(mi)
        l_out.append(li)
    return m_out, l_out


def update_with_errstate(m, l, block):
    """nan on a fully masked row, silenced and then replaced: values right, no warning."""
    m_new = np.maximum(m, block.max(axis=1))
    with np.errstate(invalid="ignore"):
        l_new = l * np.exp(m - m_new) + np.exp(block - m_new[:, None]).sum(axis=1)
    return m_new, np.nan_to_num(l_new, nan=0.0)


def no_rescale(m, l, block):
    m_new, shift = L._running(m, block)
    return m_new, l + np.exp(block - shift[:, None]).sum(axis=1)


def upside_down(m, l, block):
    m_new, shift = L._running(m, block)
    with np.errstate(over="ignore"):
        return m_new, l * np.exp(shift - m) + np.exp(block - shift[:, None]).sum(axis=1)


def block_max_only(m, l, block):
    top = block.max(axis=1)
    shift = np.where(np.isfinite(top), top, 0.0)
    return top, l * np.exp(m - shift) + np.exp(block - shift[:, None]).sum(axis=1)


def unshifted_block(m, l, block):
    m_new, shift = L._running(m, block)
    return m_new, l * np.exp(m - shift) + np.exp(block).sum(axis=1)


def no_max_at_all(m, l, block):
    with np.errstate(over="ignore"):
        return np.maximum(m, block.max(axis=1)), l + np.exp(block).sum(axis=1)


def nan_on_masked(m, l, block):
    m_new = np.maximum(m, block.max(axis=1))
    with np.errstate(invalid="ignore"):
        return m_new, l * np.exp(m - m_new) + np.exp(block - m_new[:, None]).sum(axis=1)


def warns_on_masked(m, l, block):
    m_new = np.maximum(m, block.max(axis=1))
    l_new = l * np.exp(m - m_new) + np.exp(block - m_new[:, None]).sum(axis=1)
    return m_new, np.nan_to_num(l_new, nan=0.0)


def shift_by_old_max(m, l, block):
    """exp(block - m) with the max before this block: inf on the first block."""
    m_new = np.maximum(m, block.max(axis=1))
    with np.errstate(over="ignore", invalid="ignore"):
        return m_new, l * np.exp(m - m_new) + np.exp(block - m[:, None]).sum(axis=1)


def shift_by_old_max_or_zero(m, l, block):
    """The old max, 0 while it is -inf: nothing is subtracted from the first block."""
    old = np.where(np.isfinite(m), m, 0.0)
    return np.maximum(m, block.max(axis=1)), l + np.exp(block - old[:, None]).sum(axis=1)


def shift_by_old_max_rescaled(m, l, block):
    """The old sum rescaled as it should be, but the block shifted by the old max (0 while it
    is -inf)."""
    m_new, shift = L._running(m, block)
    old = np.where(np.isfinite(m), m, 0.0)
    return m_new, l * np.exp(m - shift) + np.exp(block - old[:, None]).sum(axis=1)


OLD_MAX_FIRST_BLOCK = (
    "You shifted the block's exponentials by the old running max m instead of the new one. "
    "On this first block the old max is -inf, and the 0 you used in its place subtracts nothing"
)


def in_float32(function):
    """The same answer computed in float32: every float array cast before the call."""

    def answer(*args):
        return function(*(a.astype(np.float32) if isinstance(a, np.ndarray) else a for a in args))

    return answer


def as_lists(function):
    return lambda *args: tuple(np.asarray(x).tolist() for x in function(*args))


ONLINE_RIGHT = {
    "reference": W.solution_online_update,
    "in float32": in_float32(W.solution_online_update),
    "returns lists": as_lists(W.solution_online_update),
    "loops over Python floats": update_in_loops,
    "errstate, then nan_to_num": update_with_errstate,
}
ONLINE_WRONG = {
    "attnlab's own": (online_softmax_update, "asks you not to use"),
    "no rescale": (no_rescale, "You did not rescale the old sum"),
    "upside down": (upside_down, "The rescale factor is upside down"),
    "block max only": (block_max_only, "Your m is the max of this block only"),
    "unshifted block": (unshifted_block, "adds exp(block) without subtracting the new max"),
    "no max at all": (no_max_at_all, "adds exp(block) without subtracting the new max"),
    "shifted by the old max": (shift_by_old_max, "shifted the block's exponentials by the old"),
    # the old max with 0 in its place while it is -inf: on the first block the same l as no
    # shift at all, so the check tries the answer on a later block to tell them apart
    "shifted by the old max, 0 at first": (shift_by_old_max_or_zero, OLD_MAX_FIRST_BLOCK),
    "shifted by the old max, 0 at first, rescaled": (
        shift_by_old_max_rescaled,
        OLD_MAX_FIRST_BLOCK,
    ),
    "shifted by the old max, rescaled, in float32": (
        in_float32(shift_by_old_max_rescaled),
        OLD_MAX_FIRST_BLOCK,
    ),
    "shifted by the old max, rescaled, as lists": (
        as_lists(shift_by_old_max_rescaled),
        OLD_MAX_FIRST_BLOCK,
    ),
    "nan on a masked block": (nan_on_masked, "-inf - (-inf) is nan. Shift by 0"),
    "warns on a masked block": (
        warns_on_masked,
        "your values are right, but numpy warned: invalid value encountered in subtract",
    ),
    "keepdims": (
        lambda m, l, b: tuple(x[:, None] for x in W.solution_online_update(m, l, b)),
        "did you keep the reduced axis, keepdims=True?",
    ),
    "only l": (
        lambda m, l, b: W.solution_online_update(m, l, b)[1],
        "should return the 2 values (m, l) as a tuple",
    ),
    "in place": (lambda m, l, b: (np.maximum(m, b.max(axis=1), out=m), l), "changed its input"),
    "off by a little": (
        lambda m, l, b: (
            W.solution_online_update(m, l, b)[0],
            W.solution_online_update(m, l, b)[1] * 1.01,
        ),
        "Row 0 of l should be",
    ),
}


def test_online_cases_teach_what_they_claim():
    cases = L.online_cases()
    grows = False
    for case in cases:
        m, _ = case.start
        for (block,) in case.blocks:
            m_new = np.maximum(m, block.max(axis=1))
            grows |= bool(np.any(np.isfinite(m) & (m_new > m)))
            m = m_new
    assert grows, "some row's max must grow after its first block, or no rescale is tested"
    assert any(np.isneginf(b.max(axis=1)).any() for c in cases for (b,) in c.blocks[:1])
    assert any(np.abs(b[np.isfinite(b)]).max() > 700 for c in cases for (b,) in c.blocks)
    assert any(c.blocks[-1][0].shape[1] != c.blocks[0][0].shape[1] for c in cases)


def test_streamed_blocks_give_the_softmax():
    """The reference update, streamed over each case, reproduces attnlab.softmax exactly."""
    for case in L.online_cases():
        m, l = case.start
        for (block,) in case.blocks:
            m, l = online_softmax_update(m, l, block)
        scores = np.concatenate([b for (b,) in case.blocks], axis=1)  # (n_rows, n)
        shift = np.where(np.isfinite(m), m, 0.0)[:, None]
        weights = np.exp(scores - shift) / np.where(l > 0, l, 1.0)[:, None]
        np.testing.assert_allclose(weights, attnlab.softmax(scores), rtol=1e-12, atol=1e-15)


# ---------------------------------------------------------------- 8.3 one tile of attention
def step_through_online_update(m, l, acc, scores, v_block):
    """Reuse the 8.2 answer for m and l; rescale acc from the change of m."""
    m_new, l_new = W.solution_online_update(m, l, scores)
    shift_old = np.where(np.isfinite(m), m, 0.0)
    shift = np.where(np.isfinite(m_new), m_new, 0.0)
    rescale = np.exp(np.where(np.isfinite(m), shift_old - shift, -np.inf))
    return m_new, l_new, acc * rescale[:, None] + np.exp(scores - shift[:, None]) @ v_block


def step_in_loops(m, l, acc, scores, v_block):
    m, l, acc = m.copy(), l.copy(), acc.copy()
    for i in range(len(m)):
        for j in range(scores.shape[1]):
            new = max(m[i], scores[i, j])
            r = math.exp(m[i] - new) if math.isfinite(m[i]) else 0.0
            p = math.exp(scores[i, j] - new)
            l[i] = l[i] * r + p
            acc[i] = acc[i] * r + p * v_block[j]
            m[i] = new
    return m, l, acc


def acc_not_rescaled(m, l, acc, s, vb):
    m_new, l_new, _ = W.solution_attention_step(m, l, acc, s, vb)
    return m_new, l_new, acc + np.exp(s - m_new[:, None]) @ vb


def l_not_rescaled(m, l, acc, s, vb):
    m_new, _, acc_new = W.solution_attention_step(m, l, acc, s, vb)
    return m_new, l + np.exp(s - m_new[:, None]).sum(axis=1), acc_new


def divided_each_step(m, l, acc, s, vb):
    m_new, l_new, acc_new = W.solution_attention_step(m, l, acc, s, vb)
    return m_new, l_new, acc_new / l_new[:, None]


def softmax_per_tile(m, l, acc, s, vb):
    m_new, l_new, _ = W.solution_attention_step(m, l, acc, s, vb)
    return m_new, l_new, acc * np.exp(m - m_new)[:, None] + attnlab.softmax(s) @ vb


def no_shift(m, l, acc, s, vb):
    with np.errstate(all="ignore"):
        e = np.exp(s)
        return np.maximum(m, s.max(axis=1)), l + e.sum(axis=1), acc + e @ vb


def factor_without_new_axis(m, l, acc, s, vb):
    """acc times the (n_q,) factor: a broadcasting error, or (n_q == d_v) a silent wrong value."""
    m_new = np.maximum(m, s.max(axis=1))
    shift = np.where(np.isfinite(m_new), m_new, 0.0)
    factor = np.exp(m - shift)
    e = np.exp(s - shift[:, None])
    return m_new, l * factor + e.sum(axis=1), acc * factor + e @ vb


def factor_first(m, l, acc, s, vb):
    """The same, written factor * acc, in place."""
    m_new = np.maximum(m, s.max(axis=1))
    shift = np.where(np.isfinite(m_new), m_new, 0.0)
    factor = np.exp(m - shift)
    e = np.exp(s - shift[:, None])
    acc = acc.copy()
    acc *= factor
    return m_new, l * factor + e.sum(axis=1), factor * acc + e @ vb


ROW_FACTOR = (
    "raised ValueError: operands could not be broadcast together with shapes (4,8) (4,). "
    "acc has shape (n_q, d_v) = (4, 8) and the rescale factor one entry per row, (n_q,) = "
    "(4,). numpy lines shapes up from their last axis, so it tried to pair the 4 factors with "
    "the 8 columns of acc. Every entry of row i must be multiplied by row i's factor: give the "
    "factor a second axis, factor[:, None] of shape (4, 1)"
)


ATTENTION_RIGHT = {
    "reference": W.solution_attention_step,
    "in float32": in_float32(W.solution_attention_step),
    "returns lists": as_lists(W.solution_attention_step),
    "through the online update": step_through_online_update,
    "loops": step_in_loops,
}
ATTENTION_WRONG = {
    "acc not rescaled": (acc_not_rescaled, "You rescaled l but not acc"),
    "l not rescaled": (l_not_rescaled, "You rescaled acc but not l"),
    "neither rescaled": (
        lambda m, l, a, s, vb: (
            np.maximum(m, s.max(axis=1)),
            *(lambda e: (l + e.sum(axis=1), a + e @ vb))(
                np.exp(s - np.maximum(m, s.max(axis=1))[:, None])
            ),
        ),
        "Neither l nor acc was rescaled",
    ),
    "divided each step": (divided_each_step, "Your acc is normalised already"),
    "softmax per tile": (softmax_per_tile, "keep acc unnormalised while the tiles stream by"),
    "no shift": (no_shift, "You did not subtract the new running max inside the exponentials"),
    "off by a little": (
        lambda m, l, a, s, vb: (
            *W.solution_attention_step(m, l, a, s, vb)[:2],
            W.solution_attention_step(m, l, a, s, vb)[2] + 0.01,
        ),
        "Row 0 of acc should be [0.805",
    ),
    "acc * factor": (factor_without_new_axis, ROW_FACTOR),
    "acc * factor, in float32": (in_float32(factor_without_new_axis), ROW_FACTOR),
    "acc * factor, as lists": (as_lists(factor_without_new_axis), ROW_FACTOR),
    "acc *= factor": (factor_first, "give the factor a second axis, factor[:, None]"),
    "values transposed": (lambda m, l, a, s, vb: (m, l, a.T), "acc should have shape (4, 8)"),
    "two values": (lambda m, l, a, s, vb: (m, l), "should return the 3 values (m, l, acc)"),
}


def test_attention_cases_stream_to_the_plain_output():
    """Streaming the reference step over each case gives scaled_dot_product_attention."""
    for case in L.attention_cases():
        m, l, acc = case.start
        for scores, v_block in case.blocks:
            m, l, acc = W.solution_attention_step(m, l, acc, scores, v_block)
        expected, _ = attnlab.scaled_dot_product_attention(case.q, case.k, case.v)
        np.testing.assert_allclose(acc / l[:, None], expected, rtol=1e-10, atol=1e-12)
        assert len(case.blocks) > 1


def test_attention_cases_have_large_scores_and_uneven_blocks():
    cases = L.attention_cases()
    assert any(np.abs(s).max() > 100 for c in cases for s, _ in c.blocks)
    assert any(c.blocks[-1][0].shape[1] != c.blocks[0][0].shape[1] for c in cases)


def _with_attention_cases(monkeypatch, *cases):
    monkeypatch.setattr(L, "attention_cases", lambda: [L.attention_case(*c) for c in cases])


def test_acc_times_the_factor_is_named_when_square_shapes_raise_no_error(monkeypatch):
    """With n_q = d_v, acc * factor broadcasts without an error and multiplies column j by row
    j's factor: the check names that mistake from the values."""
    rng = np.random.default_rng(3)
    q, k, v = rng.normal(size=(3, 4)) * 3, rng.normal(size=(6, 4)) * 3, rng.normal(size=(6, 3))
    _with_attention_cases(monkeypatch, ("3 queries, d_v = 3, keys in blocks of 2", q, k, v, 2))
    assert judged(L.attention_step, W.solution_attention_step).outcome.name == "CORRECT"
    for answer in (
        factor_without_new_axis,
        in_float32(factor_without_new_axis),
        as_lists(factor_without_new_axis),
        factor_first,
    ):
        message = judged(L.attention_step, answer).message
        assert "Here n_q = d_v = 3, so numpy raised no error" in message, message
        assert "multiplied column j of acc by row j's factor" in message
        assert "factor[:, None] of shape (3, 1)" in message and "step 1 of" not in message


def test_acc_times_the_factor_is_named_when_d_v_is_1(monkeypatch):
    """With d_v = 1, acc * factor broadcasts to (n_q, n_q): the shape is wrong, and why."""
    rng = np.random.default_rng(4)
    q, k, v = rng.normal(size=(3, 4)) * 3, rng.normal(size=(6, 4)) * 3, rng.normal(size=(6, 1))
    _with_attention_cases(monkeypatch, ("3 queries, d_v = 1", q, k, v, 2))
    message = judged(L.attention_step, factor_without_new_axis).message
    assert "acc should have shape (3, 1), one entry per row, but yours has shape (3, 3)" in message
    assert "broadcasts to (3, 3), every row times every factor" in message
    assert "factor[:, None] of shape (3, 1)." in message


def test_other_broadcasting_errors_are_not_blamed_on_the_factor():
    def values_transposed(m, l, acc, s, vb):
        return W.solution_attention_step(m, l, acc, s, vb.T)

    message = judged(L.attention_step, values_transposed).message
    assert "raised ValueError" in message and "factor[:, None]" not in message


def test_no_shift_at_all_is_not_called_the_old_max():
    """An answer that never shifts gets the no-shift reason alone: the check tried it on a
    block with a finite m, where the old max would show."""
    for answer in (unshifted_block, no_max_at_all):
        message = judged(L.online_update, answer).message
        assert "adds exp(block) without subtracting the new max" in message
        assert "old running max" not in message, message


def test_a_wrong_step_names_the_case_the_step_and_the_inputs():
    message = judged(L.online_update, no_rescale).message
    assert "step 2 of" in message and "m = " in message and "block = " in message
    assert "the answer is m = " in message and "but yours gave" in message


# ---------------------------------------------------------------- 8.4 the outer tiled loop
@functools.cache
def _worked_loop():
    return worked_answer(L.tiled_loop)  # defined once: its import cell is not a cost of the call


@pytest.fixture(autouse=True)
def _lesson_imports_done():
    """Lesson 8's import cell run before any check watches a call: importing the cost explorer
    computes with ``attnlab.softmax``, which 8.4 forbids (run alone, "reference" failed)."""
    _worked_loop()


def loop_worked(q, k, v, block, causal):
    return _worked_loop()(q, k, v, block, causal)


def loop_in(
    dtype=np.float64,
    *,
    skip=True,
    tail=True,
    diagonal_mask=True,
    local=False,
    skip_diagonal=False,
    divide=True,
    count="tile",
    as_list=False,
    copy_kv=False,
    shift="running",
    positions=False,
    split=False,
    einsum=False,
):
    """A tiled loop written the way a learner might, with one choice (or mistake) switched.
    The inputs are converted to ``dtype`` a block at a time, or (``copy_kv``) k and v whole.
    ``count="formula"`` returns the count of a skipping loop whatever was computed;
    ``shift`` is what the exponentials subtract (the running max, ``"none"``, or the max of
    the ``"first"`` tile, kept); ``positions`` makes every key's position once, before the
    loop; ``split`` cuts k and v with ``np.array_split`` at the block starts; ``einsum``
    writes the products with ``np.einsum``."""

    def tiled(q, k, v, block, causal):
        q = np.asarray(q, dtype=dtype)  # a copy of q (in float32) is within the budget
        k, v = (a if copy_kv else np.asarray(a) for a in (k, v))  # no copy of k, v
        if copy_kv:  # the whole of k and v converted at once: a copy of each
            k, v = (np.array(a, dtype=dtype) for a in (k, v))
        n, d_k = q.shape[-2:]
        n_k = k.shape[-2]
        out = np.zeros((*q.shape[:-1], v.shape[-1]), dtype=dtype)  # (..., n, d_v)

        def starts(size):
            return range(0, size, block) if tail else range(0, size - size % block, block)

        tiles = 0
        pos = np.arange(n_k) if positions else None  # (n_k,) every key's position, at once
        cuts = list(range(block, n_k, block))
        pieces = (
            list(zip(*(np.array_split(a, cuts, axis=-2) for a in (k, v)), strict=True))
            if split
            else None
        )
        for i0 in starts(n):
            i1 = min(i0 + block, n)
            m = np.full(q.shape[:-2] + (i1 - i0,), -np.inf, dtype=dtype)
            l = np.zeros_like(m)
            acc = np.zeros(q.shape[:-2] + (i1 - i0, v.shape[-1]), dtype=dtype)
            tiles += count == "query block"
            for j0 in starts(n_k):
                j1 = min(j0 + block, n_k)
                if causal and skip and (j0 >= i0 if skip_diagonal else j0 > i1 - 1):
                    continue
                blocks = pieces[j0 // block] if split else (a[..., j0:j1, :] for a in (k, v))
                k_j, v_j = (np.asarray(a, dtype=dtype) for a in blocks)
                q_i = q[..., i0:i1, :]
                if einsum:
                    s = np.einsum("...id,...jd->...ij", q_i, k_j) / np.sqrt(d_k)  # (..., bq, bk)
                else:
                    s = q_i @ k_j.swapaxes(-1, -2) / np.sqrt(d_k)  # (..., bq, bk)
                if causal and diagonal_mask:
                    r, c = (
                        (np.arange(i1 - i0), np.arange(j1 - j0))
                        if local
                        else (pos[i0:i1], pos[j0:j1])
                        if positions
                        else (np.arange(i0, i1), np.arange(j0, j1))
                    )
                    s = np.where(c[None, :] <= r[:, None], s, -np.inf)
                if shift == "running":
                    m_new = np.maximum(m, s.max(axis=-1))
                    safe = np.where(np.isfinite(m_new), m_new, 0.0)
                    factor = np.exp(m - safe)
                    e = np.exp(s - safe[..., None])
                    l = l * factor + e.sum(axis=-1)
                    m = m_new
                else:  # no running max: nothing subtracted, or the first tile's max kept
                    if j0 == 0:
                        m = s.max(axis=-1) if shift == "first" else np.zeros_like(m)
                    factor, e = 1.0, np.exp(s - m[..., None])
                    l = l + e.sum(axis=-1)
                if einsum:
                    acc = np.einsum("...i,...id->...id", factor * np.ones_like(l), acc)
                    acc = acc + np.einsum("...ij,...jd->...id", e, v_j)
                else:
                    acc = acc * np.asarray(factor)[..., None] + e @ v_j
                tiles += count == "tile"
            out[..., i0:i1, :] = acc / l[..., None] if divide else acc
        if count == "formula":  # what a skipping loop computes, whatever this one did
            tiles = L.expected_tiles(n, block, causal, n_keys=n_k)
        return (out.tolist() if as_list else out), tiles

    return tiled


def loop_whole_matrix(q, k, v, block, causal):
    """Right numbers, but through the whole (n_q, n_k) matrix."""
    scores = q @ k.T / np.sqrt(q.shape[1])  # (n_q, n_k)
    if causal:
        scores = np.where(np.tril(np.ones(scores.shape, dtype=bool)), scores, -np.inf)
    e = np.exp(scores - scores.max(axis=1, keepdims=True))
    tiles = L.expected_tiles(len(q), block, causal, n_keys=len(k))
    return e @ v / e.sum(axis=1, keepdims=True), tiles


def loop_row_strips(q, k, v, block, causal, in_place=False):
    """Query blocks only: each block's (block, n_k) strip of scores against every key, and an
    ordinary softmax over it (the keys are never tiled); the tile count is the expected one."""
    n, d_k = q.shape
    out = np.zeros((n, v.shape[1]))
    for i0 in range(0, n, block):
        i1 = min(i0 + block, n)
        s = q[i0:i1] @ k.T / np.sqrt(d_k)  # (bq, n_k) a whole row of tiles
        if causal:
            s[np.arange(len(k))[None, :] > np.arange(i0, i1)[:, None]] = -np.inf
        if in_place:  # the leanest a strip can be: one (bq, n_k) array
            s -= s.max(axis=1, keepdims=True)
            np.exp(s, out=s)
            out[i0:i1] = s @ v / s.sum(axis=1, keepdims=True)
        else:
            e = np.exp(s - s.max(axis=1, keepdims=True))
            out[i0:i1] = e @ v / e.sum(axis=1, keepdims=True)
    return out, L.expected_tiles(n, block, causal, n_keys=len(k))


def loop_rows_in_place(q, k, v, block, causal):
    """One query at a time, its softmax over every key written out and done in place (the
    red team's attack: the row is as large as a copy of k when d_k = 1), and the formula's
    tile count."""
    n, d_k = q.shape
    out = np.zeros((n, v.shape[1]))  # (n, d_v)
    for i in range(n):
        s = k @ q[i]  # (n_k,) one query's row of scores against every key
        s /= np.sqrt(d_k)
        if causal:
            s[i + 1 :] = -np.inf
        np.subtract(s, s.max(), out=s)
        np.exp(s, out=s)
        out[i] = s @ v / s.sum()
    return out, L.expected_tiles(n, block, causal, n_keys=len(k))


def loop_rows_in_float32(q, k, v, block, causal):
    """One query at a time in a float32 buffer, elementwise where d_k = d_v = 1 (no float64
    row is ever made): half a copy of k, still a row that grows with n_k."""
    n, d_k = q.shape
    n_k, d_v = v.shape
    if d_k != 1 or d_v != 1 or causal:
        return loop_rows_in_place(q, k, v, block, causal)
    out = np.zeros((n, 1))  # (n, 1)
    row = np.empty(n_k, dtype=np.float32)  # (n_k,) one query's scores, in float32
    for i in range(n):
        np.multiply(k[:, 0], q[i, 0], out=row, casting="same_kind")
        np.subtract(row, row.max(), out=row)
        np.exp(row, out=row)
        total = row.sum(dtype=np.float64)
        np.multiply(row, v[:, 0], out=row, casting="same_kind")
        out[i, 0] = row.sum(dtype=np.float64) / total
    return out, L.expected_tiles(n, block, causal, n_keys=n_k)


def loop_mask_first(q, k, v, block, causal, dtype=bool):
    """The online loop, tile by tile, but the causal mask is built for the whole sequence
    first and sliced per tile: n × n memory."""
    n, d_k = q.shape
    n_k, d_v = v.shape
    allowed = np.tril(np.ones((n, n_k), dtype=dtype)) if causal else None  # (n, n_k)
    out = np.zeros((n, d_v))
    tiles = 0
    for i0 in range(0, n, block):
        i1 = min(i0 + block, n)
        m, l, acc = np.full(i1 - i0, -np.inf), np.zeros(i1 - i0), np.zeros((i1 - i0, d_v))
        for j0 in range(0, n_k, block):
            if causal and j0 > i1 - 1:
                break
            j1 = min(j0 + block, n_k)
            s = q[i0:i1] @ k[j0:j1].T / np.sqrt(d_k)
            if causal:
                s = np.where(allowed[i0:i1, j0:j1], s, -np.inf)
            m_new = np.maximum(m, s.max(axis=1))
            factor, e = np.exp(m - m_new), np.exp(s - m_new[:, None])
            l, acc, m = l * factor + e.sum(axis=1), acc * factor[:, None] + e @ v[j0:j1], m_new
            tiles += 1
        out[i0:i1] = acc / l[:, None]
    return out, tiles


def loop_row_by_row(q, k, v, block, causal, softmax=None):
    """One query row at a time, a softmax over all its keys (attnlab's, or numpy written out):
    O(n_k) memory, never a tile; the tile count is the formula's."""
    n, d_k = q.shape
    out = np.zeros((n, v.shape[1]))
    for i in range(n):
        s = k @ q[i] / np.sqrt(d_k)  # (n_k,) every key at once
        if causal:
            s[i + 1 :] = -np.inf
        if softmax is not None:
            out[i] = softmax(s) @ v
        else:
            e = np.exp(s - s.max())
            out[i] = e @ v / e.sum()
    return out, L.expected_tiles(n, block, causal, n_keys=len(k))


def loop_rows_in_float16(q, k, v, block, causal):
    """One query at a time, its row of scores against every key kept in float16 when the keys
    are many (the red team's float16 row, half the bytes of a float32 one), its softmax in
    place; the formula's tile count."""
    n, n_k = len(q), len(k)
    out = np.zeros((n, v.shape[1]))  # (n, d_v)
    row = np.empty(n_k, dtype=np.float16 if n_k > 50_000 else np.float64)  # (n_k,)
    for i in range(n):
        last = i + 1 if causal else n_k
        r = row[:last]
        np.divide(k[:last] @ q[i], np.sqrt(q.shape[1]), out=r, casting="unsafe")
        r -= r.max()
        np.exp(r, out=r)
        out[i] = r.astype(float) @ v[:last] / np.add.reduce(r, dtype=np.float64)
    return out, L.expected_tiles(n, block, causal, n_keys=n_k)


def loop_through_the_library(q, k, v, block, causal):
    return attnlab.tiled_attention(q, k, v, causal=causal, block_size=block), 0


LOOP_RIGHT = {
    "reference": loop_worked,
    "written out, float64": loop_in(),
    "in float32": loop_in(np.float32),
    "returns a list": loop_in(as_list=True),
    "batch-ready (... axes)": lambda q, k, v, b, c: (lambda r: (r[0][0], r[1]))(
        loop_in()(q[None], k[None], v[None], b, c)
    ),
    "k and v cut with np.array_split": loop_in(split=True),
    "k and v cut with np.array_split, in float32": loop_in(np.float32, split=True),
    "products with np.einsum": loop_in(einsum=True),
    "products with np.einsum, batch-ready": lambda q, k, v, b, c: (lambda r: (r[0][0], r[1]))(
        loop_in(einsum=True)(q[None], k[None], v[None], b, c)
    ),
}
LOOP_WRONG = {
    "attnlab's tiled_attention": (loop_through_the_library, "asks you not to use"),
    "the whole matrix": (loop_whole_matrix, "the whole 100 × 10000 score matrix 8,000,000"),
    "row strips, ordinary softmax": (
        loop_row_strips,
        "one query block's row of tiles, (64, 10000), is 5,120,000 bytes",
    ),
    "k and v converted whole before the loop (copies)": (
        loop_in(copy_kv=True),
        "A copy of k or v costs as much (320,000 and 320,000 bytes in float64",
    ),
    "k and v cast to float32 whole before the loop (copies)": (
        loop_in(np.float32, copy_kv=True),
        "k.astype(...) and k / np.sqrt(d_k) all copy",
    ),
    "row by row, a whole-row softmax written out in place": (
        loop_rows_in_place,
        "One query's row of scores against all 250,000 keys is 2,000,000 bytes (1,000,000 in "
        "float32)",
    ),
    "row by row in a float32 buffer, elementwise": (
        loop_rows_in_float32,
        "One query's row of scores against all 250,000 keys is 2,000,000 bytes (1,000,000 in "
        "float32)",
    ),
    "row strips, softmax in place": (
        functools.partial(loop_row_strips, in_place=True),
        "Walk over the keys in blocks too",
    ),
    "row by row, attnlab.softmax over every key": (
        functools.partial(loop_row_by_row, softmax=attnlab.softmax),
        "calls attnlab.softmax, which this exercise asks you not to use",
    ),
    "row by row, attnlab.online_softmax over every key": (
        functools.partial(loop_row_by_row, softmax=attnlab.online_softmax),
        "asks you not to use",
    ),
    "row by row, numpy softmax over every key": (
        loop_row_by_row,
        "One query's row of scores against all 250,000 keys is 2,000,000 bytes",
    ),
    "online loop over a whole-sequence mask": (
        loop_mask_first,
        "most often the causal mask for the whole sequence (a 2048 × 2048 array of booleans",
    ),
    "online loop over a whole-sequence mask of floats": (
        functools.partial(loop_mask_first, dtype=float),
        "Build each tile's mask inside the loop",
    ),
    "no causal skipping": (loop_in(skip=False), "That is all 2 × 2 tiles"),
    # the red team's: the count a skipping loop computes, returned by one that computes every
    # tile (the keys no query sees hold NaN, so what was computed shows in the output)
    "every tile computed, the skipping count returned": (
        loop_in(skip=False, count="formula"),
        "A tile every query masks was computed: with causal=True query i sees keys j ≤ i "
        "(aligned top-left), so keys 16 to 63 come after all 16 queries here",
    ),
    "every tile computed, the skipping count returned, in float32": (
        loop_in(np.float32, skip=False, count="formula"),
        "A tile every query masks was computed",
    ),
    "no running max": (
        loop_in(shift="none"),
        "Your loop takes exp of the scores without subtracting the running max: the scores "
        "here reach",
    ),
    "no running max, in float32": (
        loop_in(np.float32, shift="none"),
        "without subtracting the running max",
    ),
    "the first tile's max kept": (
        loop_in(shift="first"),
        "Your loop subtracts the max of each query block's first tile and keeps it",
    ),
    "every key's position made once (np.arange(n_k))": (
        loop_in(positions=True),
        "An array of every key's position or index costs as much: np.arange(250000) is "
        "2,000,000 bytes of int64",
    ),
    "row by row, a float16 row of every key": (
        loop_rows_in_float16,
        "and float16 holds no number above 65,504",
    ),
    "tiles counted per query block": (loop_in(count="query block"), "one per query block"),
    "last block dropped": (loop_in(tail=False), "leaves out the last, shorter block"),
    "no mask inside the diagonal tiles": (
        loop_in(diagonal_mask=False),
        "inside the tiles that cross it the keys after each query are still read",
    ),
    "mask with positions inside the tile": (loop_in(local=True), "positions within the tile"),
    "diagonal tiles skipped": (loop_in(skip_diagonal=True), "You skip the tiles on the diagonal"),
    "no division by l": (loop_in(divide=False), "Your rows are not divided by l"),
    "causal ignored": (lambda q, k, v, b, c: loop_in()(q, k, v, b, False), "ignores causal=True"),
    "output only": (lambda *a: loop_worked(*a)[0], "should return two things, (output, tiles)"),
}


def test_loop_cases_cover_what_the_exercise_promises():
    cases = L.loop_cases()
    assert any(len(c.q) % c.block for c in cases), "a length the block does not divide"
    assert any(c.causal for c in cases) and any(not c.causal for c in cases)
    assert any(len(c.q) * len(c.q) * 8 > 4_000_000 for c in cases), "a case where N² shows"
    assert any(np.abs(c.q @ c.k.T).max() > 100 for c in cases[:4])
    assert all(len(c.q) <= len(c.k) for c in cases if c.causal)


def test_the_long_cases_overflow_without_a_running_max():
    """Every measured case has scores exp overflows on (above 709.78) and a row whose max grows
    by more than that from its first tile to its last (a loop that keeps a stale max
    overflows there), and a row whose max is in its first tile; so does a short case."""
    limit = np.log(np.finfo(np.float64).max)
    measured = [c for c in L.loop_cases() if L._measured(c)]
    assert len(measured) == 3
    for case in [*measured, L.loop_cases()[-1]]:
        growth = []
        for i, row in enumerate(case.q):
            keys = case.k[: i + 1] if case.causal else case.k  # (n_seen, d_k) the keys i sees
            scores = keys @ row / np.sqrt(len(row))  # (n_seen,)
            growth.append(scores.max() - scores[: case.block].max())
        assert L._top_score(case.q, case.k, case.causal) > limit, case.description
        assert max(growth) > limit and min(growth) == 0, case.description


def test_the_large_scores_are_exact_in_float32():
    """Scores in the thousands lose digits in float32 unless they are short binary fractions:
    every score of the long cases is the same in float32 as in float64, so a loop in float32
    is still judged to float32 precision."""
    for case in L.loop_cases()[4:7]:
        q32, k32 = case.q[:8].astype(np.float32), case.k[:4096].astype(np.float32)
        exact = case.q[:8] @ case.k[:4096].T  # (8, 4096)
        assert np.array_equal(q32 @ k32.T, exact.astype(np.float32)), case.description
        assert np.array_equal(exact.astype(np.float32), exact), case.description


def test_keys_no_query_sees_hold_nan_and_the_reference_never_reads_them():
    case = L.loop_cases()[-1]
    n_q = len(case.q)
    assert case.causal and len(case.k) >= 4 * n_q and L._unseen(case) == len(case.k) - n_q
    assert np.isnan(case.k[n_q:]).all() and np.isnan(case.v[n_q:]).all()
    assert np.isfinite(case.k[:n_q]).all() and np.isfinite(case.v[:n_q]).all()
    assert n_q % case.block == 0 and len(case.k) % case.block == 0  # np.array_split cuts alike
    assert np.isfinite(L._plain(case.q, case.k, case.v, True)).all()
    assert case.tiles < L.expected_tiles(n_q, case.block, False, n_keys=len(case.k)) / 4


def test_every_case_names_its_known_mistakes_without_raising():
    """The known mistakes are worked out when an answer is wrong, on whichever case: on the
    case whose unseen keys hold NaN too (the library's attention refuses NaN keys)."""
    for case in L.loop_cases():
        for wrong, reason in L._loop_mistakes(case):
            assert np.shape(wrong) == (len(case.q), case.v.shape[1]) and reason.endswith(".")


def test_a_float16_row_of_every_key_does_not_fit_the_budget():
    """The red team's float16 row: 2 bytes a key is more than a few tiles, the output and a
    copy of q on the case with the most keys (and its scores overflow float16 besides)."""
    case = max(L.loop_cases(), key=lambda c: len(c.k))
    assert len(case.k) * np.dtype(np.float16).itemsize > L.memory_budget(case)
    assert L._top_score(case.q, case.k, False) > np.finfo(np.float16).max


def test_a_case_with_many_keys_and_few_queries_is_measured():
    """There one query block's strip of scores against every key (and even its in-place
    softmax) is several times what a few tiles, the output and the inputs come to."""
    case = next(c for c in L.loop_cases() if len(c.k) >= 50 * len(c.q))
    assert not case.causal and L._measured(case)
    strip = case.block * len(case.k) * 8  # one (block, n_k) array of float64 scores
    assert strip > 4 * L.memory_budget(case)


def test_a_case_where_one_query_row_of_scores_is_too_much_is_measured():
    """4 queries against 250,000 keys of one dimension: one query's row of scores against every
    key, even in float32 with its softmax done in place (one row), is nearly twice the budget: a few
    tiles, the output and a copy of q. A copy of k or v is not in it (at d_k = 1 a copy of k
    is exactly one row, so allowing it let the row through)."""
    case = next(c for c in L.loop_cases() if len(c.q) < c.block)
    assert not case.causal and L._measured(case)
    row = len(case.k) * 8
    assert row / 2 > 1.8 * L.memory_budget(case)  # the row in float32: nearly twice the budget
    assert case.k.nbytes == row  # why no copy of k can be allowed


def test_the_causal_measured_case_tells_a_whole_sequence_mask_from_tiles():
    case = next(c for c in L.loop_cases() if c.causal and L._measured(c))
    assert len(case.q) ** 2 > 3 * L.memory_budget(case)  # the mask as booleans, 1 byte each


def test_memory_is_what_the_answer_allocates_not_the_check():
    """The check's own copy of the inputs is not counted; an answer's own arrays are."""
    case = L.loop_cases()[-1]
    args = (case.q, case.k, case.v, case.block, case.causal)
    _, _, nothing = L._peak_of(lambda *a: 0, *args)
    _, _, one_mb = L._peak_of(lambda *a: np.ones(2**17).sum(), *args)
    assert nothing.total < 10_000 and 2**20 <= one_mb.total < 2**20 + 10_000


_TRY_IT = (
    "def tiled_loop(q, k, v, block, causal):\n    return loop(q, k, v, block, causal)\n\n"
    "rng = np.random.default_rng(0)\nq_try, k_try, v_try = rng.standard_normal((3, 512, 32))\n"
    "out_try, n_tiles = tiled_loop(q_try, k_try, v_try, 64, False)\n"
)


def _try_it_namespace() -> dict:
    """The names a lesson-8 notebook holds after an answer cell with a try-it (:data:`_TRY_IT`)
    ran: the lesson's own q, k, v (512 KB each, made by lesson cells) and the try's arrays."""
    rng = np.random.default_rng(0)
    q_try, k_try, v_try = rng.standard_normal((3, 512, 32))  # views of one (3, 512, 32) array
    big = rng.standard_normal((3, 2048, 32))
    return {
        "q": big[0], "k": big[1], "v": big[2], "rng": rng, "n_tiles": 64,
        "q_try": q_try, "k_try": k_try, "v_try": v_try, "out_try": np.zeros((512, 32)),
    }  # fmt: skip


def test_what_answer_cells_keep_is_held_as_grading_counts_it():
    """A try-it left at the bottom of 8.4's answer cell (a red team's right work that lost 8.4's
    two points in grading while the learner's check said correct): its arrays are counted
    once each (q_try, k_try, v_try are views of one array) and named; the lesson's own q, k, v
    and cells that define no answer are not."""
    namespace = _try_it_namespace()
    lesson_cell = "q, k, v = big_example()"
    use = L.held_by_answer_cells(namespace, [lesson_cell, _TRY_IT])
    assert use.held == 3 * 512 * 32 * 8 + 512 * 32 * 8
    assert use.holders == ("k_try", "out_try", "q_try", "v_try")  # the views' owner once
    assert L.held_by_answer_cells(namespace, [lesson_cell]).held == 0
    namespace["cache"] = list(range(20_000))  # a list's own block: 20,000 pointers
    use = L.held_by_answer_cells(namespace, [_TRY_IT + "cache = list(range(20_000))\n"])
    assert "cache" in use.holders and use.held > 3 * 512 * 32 * 8 + 512 * 32 * 8 + 8 * 20_000


def test_the_check_says_what_the_notebook_holds_and_how_to_free_it(monkeypatch):
    """The learner's check counts what the answer cells keep, as grading does, and says so:
    the right loop fails 8.4 with the names to delete, and passes once they are gone."""
    namespace = _try_it_namespace()
    real = L.held_by_answer_cells
    monkeypatch.setattr(L, "held_by_answer_cells", lambda: real(namespace, [_TRY_IT]))
    feedback = judged(L.tiled_loop, loop_in())
    assert feedback.outcome is Outcome.WRONG, feedback.message
    message = feedback.message
    assert "your notebook held" in message and "k_try" in message and "del" in message
    for name in ("q_try", "k_try", "v_try", "out_try"):
        namespace.pop(name)
    assert judged(L.tiled_loop, loop_in()).outcome is Outcome.CORRECT


def test_small_arrays_the_answer_cells_keep_are_held_too(monkeypatch):
    """Held memory counts whatever the size of each array (issue 39): a red team kept 48
    buffers of 64,000 bytes, each just under the 64 KiB that alone counted then, and took a
    whole-row softmax per query in them; the learner's check said correct and grading 2/2."""
    buffers = "BUFS = [np.empty(8_000) for _ in range(48)]\n"
    namespace = {"BUFS": [np.empty(8_000) for _ in range(48)]}  # 64,000 bytes each
    use = L.held_by_answer_cells(namespace, [_TRY_IT.split("rng =")[0] + buffers])
    assert use.held >= 48 * 64_000 and use.holders == ("BUFS",)
    real = L.held_by_answer_cells
    monkeypatch.setattr(L, "held_by_answer_cells", lambda: real(namespace, [_TRY_IT + buffers]))
    feedback = judged(L.tiled_loop, loop_in())
    assert feedback.outcome is Outcome.WRONG, feedback.message
    assert "your notebook held" in feedback.message and "BUFS" in feedback.message
    namespace["BUFS"] = [np.empty(8) for _ in range(48)]  # a few small constants fit
    assert judged(L.tiled_loop, loop_in()).outcome is Outcome.CORRECT


def test_a_right_loop_that_also_builds_a_big_array_is_rejected():
    def loop_and_a_mask(q, k, v, block, causal):
        wasted = np.ones((len(q), len(k)), dtype=bool)  # (n_q, n_k), never used
        out, tiles = loop_in()(q, k, v, block, causal)
        return out + 0 * wasted[:, :1], tiles

    message = judged(L.tiled_loop, loop_and_a_mask).message
    assert "the output is right, but your function allocated" in message, message


def test_expected_tiles_counts_the_loop():
    """Against a brute-force count: tiles holding at least one allowed (query, key) pair."""
    for n, b in [(4, 3), (10, 4), (10, 1), (1000, 64), (7, 7), (5, 9)]:
        allowed = attnlab.causal_mask(n)
        brute = sum(
            bool(allowed[i : i + b, j : j + b].any())
            for i in range(0, n, b)
            for j in range(0, n, b)
        )
        assert L.expected_tiles(n, b, True) == brute
        assert L.expected_tiles(n, b, False) == (-(-n // b)) ** 2
    for n, n_k, b in [(100, 10_000, 64), (3, 7, 2), (7, 3, 2)]:
        assert L.expected_tiles(n, b, False, n_keys=n_k) == (-(-n // b)) * (-(-n_k // b))


def test_every_loop_mistake_differs_from_the_right_output():
    for case in L.loop_cases()[1:4]:
        expected = attnlab.scaled_dot_product_attention(
            case.q, case.k, case.v, mask=attnlab.causal_mask(len(case.q))
        )[0]
        for mistake, reason in L._loop_mistakes(case):
            assert not np.allclose(mistake, expected, rtol=1e-4, equal_nan=True), reason


# ---------------------------------------------------------------- every table above
test_accepts, test_rejects = accept_reject(
    Answers(L.scores_memory, MEMORY_RIGHT, MEMORY_WRONG),
    Answers(L.online_update, ONLINE_RIGHT, ONLINE_WRONG),
    Answers(L.attention_step, ATTENTION_RIGHT, ATTENTION_WRONG),
    Answers(L.tiled_loop, LOOP_RIGHT, LOOP_WRONG),
)


def test_a_difference_hidden_by_rounding_is_said_to_be_one():
    """Numbers that print alike but differ by more than float32 rounding: the message says so."""

    def nearly(m, l, block):
        m_new, l_new = W.solution_online_update(m, l, block)
        return m_new, l_new - 1.5e-4 * (np.arange(len(l_new)) == 0)

    message = judged(L.online_update, nearly).message
    assert "agree to the digits shown, but differ by up to" in message, message


def test_float32_loop_is_checked_to_float32_precision_only():
    """A loop that is off by 1e-3 relative is wrong, even though float32 answers pass."""

    def off(q, k, v, block, causal):
        out, tiles = loop_in()(q, k, v, block, causal)
        return out * (1 + 1e-3), tiles

    assert judged(L.tiled_loop, off).outcome.name == "WRONG"


def test_a_shape_message_has_one_colon_after_the_step():
    message = judged(L.online_update, ONLINE_WRONG["keepdims"][0]).message
    assert "):: " not in message and "): m should have shape (4,)" in message, message


def test_what_an_answer_cells_functions_keep_is_held_as_grading_counts_it(monkeypatch):
    """Red team round 9 (F1b): an array in a default argument of the answer (``scratch=``) and
    one kept by an ``lru_cache`` helper counted 0 bytes in the learner's check, while grading
    counts every block the answer cells keep alive; the lesson says both count the same."""
    import functools

    cell = (
        "import functools\n"
        "@functools.lru_cache(maxsize=4)\n"
        "def buffer(n):\n"
        "    return np.empty(n)\n"
        "def tiled_loop(q, k, v, block, causal, scratch=np.zeros(60_000)):\n"
        "    pass\n"
    )

    @functools.lru_cache(maxsize=4)
    def buffer(n):
        return np.empty(n)

    def tiled_loop(q, k, v, block, causal, scratch=np.zeros(60_000)):  # noqa: B008 - the case
        return buffer(block)

    buffer(30_000)
    namespace = {"buffer": buffer, "tiled_loop": tiled_loop, "functools": functools}
    use = L.held_by_answer_cells(namespace, [cell])
    assert use.held == 60_000 * 8 + 30_000 * 8, use
    assert use.holders == (
        "what buffer keeps between calls",
        "what tiled_loop keeps between calls",
    )
    real = L.held_by_answer_cells
    monkeypatch.setattr(L, "held_by_answer_cells", lambda: real(namespace, [cell]))
    feedback = judged(L.tiled_loop, loop_in())
    assert feedback.outcome is Outcome.WRONG, feedback.message
    assert "what tiled_loop keeps between calls" in feedback.message, feedback.message
