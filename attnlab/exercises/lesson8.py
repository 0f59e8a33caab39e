"""Lesson 8 — the cost of attention: the checked exercises.

* :data:`scores_memory` (8.1): ``scores_bytes(n, heads, batch, dtype)`` returns how many bytes
  the attention scores take: ``batch · heads`` matrices of ``n × n`` entries of ``dtype``
  (a name such as ``"float32"``), as a whole number of bytes.
* :data:`online_update` (8.2): ``online_update(m, l, block)`` folds one block of scores
  ``(n_rows, b)`` into the running max ``m`` and running sum ``l`` ``(n_rows,)``; the check
  streams score rows through it block by block and compares every step with
  :func:`attnlab.online.online_softmax_update`. Rows whose first block is all
  ``-inf`` (masked) must stay at ``m = -inf``, ``l = 0`` without NaN or numpy warnings.
* :data:`attention_step` (8.3): ``attention_step(m, l, acc, scores, v_block)`` is one tile of
  tiled attention: it also keeps ``acc`` ``(n_q, d_v)``, the running sum of ``exp(s - m) · v``;
  after the last key block ``acc / l`` must be the output of
  :func:`attnlab.scaled_dot_product_attention`.

In 8.2 and 8.3 the check hands the learner's function the *correct* running state at every
step, so a mistake is reported at the first block where it shows, with the block, the state
that went in and what should have come out. Known mistakes are named: the old sum (or
accumulator) not rescaled by ``exp(m_old − m_new)``, the factor upside down, a max taken over
the block only, no max shift (overflow), ``-inf − (−inf)`` on a masked block, a per-block
softmax, an accumulator divided too early; in 8.1 ``n`` for ``n²``, bits for bytes, a missing
batch or head factor, 4 bytes for every dtype, MiB for bytes.

Examples
--------
>>> scores_memory.check(None).outcome.name
'NOT_ATTEMPTED'
>>> online_update.check(None).outcome.name
'NOT_ATTEMPTED'
>>> def no_rescale(m, l, block):
...     m_new = np.maximum(m, np.max(block, axis=1))
...     return m_new, l + np.exp(block - m_new[:, None]).sum(axis=1)
>>> "rescale" in online_update.check(no_rescale).message
True
>>> attention_step.check(None).outcome.name
'NOT_ATTEMPTED'
"""

from __future__ import annotations

import math
import numbers
from types import SimpleNamespace

import numpy as np

import attnlab
from attnlab.examples import cat_sat_down, dog_bites_man
from attnlab.exercises.core import Exercise, Wrong, _short, call_watching, one_line, warned
from attnlab.online import _fold, online_softmax_update

__all__ = [
    "scores_memory",
    "online_update",
    "attention_step",
    "memory_cases",
    "online_cases",
    "attention_cases",
]


#: The library's own online softmax and tiled attention: 8.2 and 8.3 ask for the step itself.
_LIBRARY_FOLDS = ("attnlab.online.online_softmax_update", "attnlab.online_softmax",
                  "attnlab.tiled_attention")


# ---------------------------------------------------------------- 8.1 memory of the scores
def _expected_bytes(n, heads, batch, dtype) -> int:
    """Bytes of the score matrices: one (n, n) per sequence and head."""
    return math.prod((batch, heads, n, n)) * np.dtype(dtype).itemsize


def memory_cases() -> list[tuple[int, int, int, str]]:
    """(n, heads, batch, dtype) the checker asks about: small to long, every float dtype."""
    return [(4, 1, 1, "float64"), (2048, 12, 8, "float32"), (16384, 1, 1, "float16"),
            (1000, 16, 3, "float32"), (512, 8, 1, "float64")]  # fmt: skip


def _memory_mistakes(n, heads, batch, dtype) -> list[tuple[float, str]]:
    right = _expected_bytes(n, heads, batch, dtype)
    size = np.dtype(dtype).itemsize
    return [
        (
            right // n,
            f"That is n = {n} scores per row, not n² = {n * n} per matrix: every "
            "query has a score for every key.",
        ),
        (
            right * 8,
            "That is bits, not bytes: a byte has 8 bits, and itemsize is already in bytes.",
        ),
        (right / 2**20, "That looks like mebibytes (divided by 2**20); return plain bytes."),
        (right / 1e6, "That looks like megabytes (divided by 10**6); return plain bytes."),
        (
            right // heads if heads > 1 else None,
            f"You left out the heads: each of the {heads} heads has its own score matrix.",
        ),
        (
            right // batch if batch > 1 else None,
            f"You left out the batch: each of the {batch} sequences has its own score matrices.",
        ),
        (
            right // size * 4 if size != 4 else None,
            f"Every entry is {size} bytes in {dtype}, not 4: use np.dtype(dtype).itemsize.",
        ),
        (
            right // size if size != 1 else None,
            "You counted entries, not bytes: multiply by "
            "the size of one entry, np.dtype(dtype).itemsize.",
        ),
    ]


def _check_memory(answer) -> None:
    for n, heads, batch, dtype in memory_cases():
        what = f"scores_bytes(n={n}, heads={heads}, batch={batch}, dtype={dtype!r})"
        try:
            got, messages = call_watching(answer, n, heads, batch, dtype)
        except Wrong as exc:
            raise Wrong(f"{what} failed. {exc}") from None
        right = _expected_bytes(n, heads, batch, dtype)
        if isinstance(got, np.ndarray) and got.ndim == 0:
            got = got[()]
        if isinstance(got, bool | np.bool_) or not isinstance(got, numbers.Real):
            raise Wrong(f"{what} should be a number of bytes, {right}; got {one_line(got)}.")
        said = f"{what} should be {right:,} bytes, but yours gave {_number(got)}."
        if got == right:
            if messages:
                raise Wrong(f"{what} is right, but numpy warned: {'; '.join(messages)}.")
            continue
        cause = next(
            (
                text
                for wrong, text in _memory_mistakes(n, heads, batch, dtype)
                if wrong is not None and math.isclose(got, wrong, rel_tol=1e-9)
            ),
            "",
        )
        if not cause and math.isclose(got, right, rel_tol=1e-3):
            cause = (
                "That is close but not exact: the count is a whole number, so compute it "
                "with integers (no rounding, no powers of 1024)."
            )
        raise Wrong(
            f"{said} {cause or 'Count the matrices, the entries of each, and the '}"
            f"{'' if cause else 'bytes of one entry, and multiply.'}"
        )


def _number(value) -> str:
    value = float(value)
    return f"{value:,.0f}" if value.is_integer() else f"{value:,.6g}"


scores_memory = Exercise(
    "Exercise 8.1 (memory of the scores)",
    _check_memory,
    hints=[
        "How many score matrices are there (one per sequence in the batch and per head), how "
        "many entries does each hold, and how many bytes is one entry?",
        "Each matrix is n × n. `np.dtype(dtype).itemsize` is the size of one entry in bytes: "
        "2 for float16, 4 for float32, 8 for float64.",
        'Count the entries of all the score matrices (one n × n matrix per sequence and per '
        'head) and multiply by the bytes of one entry, `np.dtype(dtype).itemsize`.',
    ],
)


# ---------------------------------------------------------------- what 8.2 and 8.3 share
def _as_results(got, names, shapes, what) -> list[np.ndarray]:
    """The learner's returned tuple as float arrays of the expected shapes, or :class:`Wrong`."""
    if not isinstance(got, tuple | list) or len(got) != len(names):
        raise Wrong(
            f"{what} should return the {len(names)} values ({', '.join(names)}) as a "
            f"tuple, e.g. `return {', '.join(names)}`; yours returned {one_line(got)}."
        )
    results = []
    for name, value, shape in zip(names, got, shapes, strict=True):
        try:
            array = np.asarray(value, dtype=float)
        except (TypeError, ValueError):
            raise Wrong(
                f"{what}: {name} should be an array of numbers of shape {shape}; got "
                f"{one_line(value)}."
            ) from None
        if array.shape != shape:
            keep = (
                " (did you keep the reduced axis, keepdims=True?)"
                if array.shape == (*shape, 1)
                else ""
            )
            raise Wrong(
                f"{what}: {name} should have shape {shape}, one entry per row, but "
                f"yours has shape {array.shape}{keep}."
            )
        results.append(array)
    return results


def _same(got, expected) -> bool:
    """Close, with ``-inf`` matching ``-inf`` and NaN matching NaN (the references have none)."""
    return all(
        np.allclose(g, e, rtol=1e-6, atol=1e-9, equal_nan=True)
        for g, e in zip(got, expected, strict=True)
    )


def _quietly(function, *args):
    with np.errstate(all="ignore"):
        return function(*args)


def _drive(answer, case, names, step, mistakes) -> None:
    """Feed ``answer`` the correct running state block by block; explain the first miss.

    ``case.start`` is the state before the first block, ``case.blocks`` the per-step inputs,
    ``step(*state, *inputs)`` the reference, ``mistakes(*state, *inputs)`` pairs of (what a
    known mistake returns, what to say).
    """
    state = case.start
    for t, inputs in enumerate(case.blocks):
        args = (*state, *inputs)
        shown = ", ".join(f"{n} = {_short(np.round(a, 4))}" for n, a in
                          zip((*names, *case.inputs), args, strict=True))  # fmt: skip
        what = f"For {case.description}, step {t + 1} of {len(case.blocks)} ({shown}):"
        try:
            got, messages = call_watching(answer, *(a.copy() for a in args))
        except Wrong as exc:
            raise Wrong(f"{what} {exc}") from None
        expected = step(*args)
        got = _as_results(got, names, [e.shape for e in expected], what)
        said = (
            f"{what} the answer is {_pairs(names, expected)}, but yours gave {_pairs(names, got)}."
        )
        if _same(got, expected):
            if messages:
                raise Wrong(
                    f"{what} your values are right, but numpy warned: "
                    f"{'; '.join(messages)}. Your function must not warn: compute a "
                    "shift that is 0 where the max is still -inf, instead of cleaning "
                    "up a nan afterwards."
                )
            state = expected
            continue
        cause = next((text for wrong, text in mistakes(*args) if _same(got, wrong)), "")
        if not cause and not all(np.all(np.isfinite(g) | np.isneginf(g)) for g in got):
            cause = _not_finite(args, expected, got, names)
        cause = cause or _first_difference(got, expected, names)
        raise Wrong(f"{said} {cause}{warned(messages)}")


def _pairs(names, values) -> str:
    return ", ".join(f"{n} = {_short(np.round(v, 4))}" for n, v in zip(names, values, strict=True))


def _first_difference(got, expected, names) -> str:
    for name, g, e in zip(names, got, expected, strict=True):
        bad = ~np.isclose(g, e, rtol=1e-6, atol=1e-9)
        if bad.any():
            row = int(np.argwhere(bad)[0][0])
            return (
                f"Row {row} of {name} should be {_short(np.round(e[row], 6).tolist())}, "
                f"not {_short(np.round(g[row], 6).tolist())}."
            )
    return ""


def _not_finite(args, expected, got, names) -> str:
    """Why a nan or inf came out: overflow without a shift, or -inf - (-inf)."""
    m = args[0]
    rows = np.flatnonzero(np.any([~(np.isfinite(g) | np.isneginf(g)).reshape(len(m), -1).any(
        axis=1) for g in got], axis=0))  # fmt: skip
    row = int(rows[0])
    if np.isneginf(expected[0][row]):
        return (
            f"Row {row} has seen only masked scores (-inf) so far, so its max is still "
            "-inf, and -inf - (-inf) is nan. Shift by 0 where the new max is -inf: "
            "np.where(np.isfinite(m_new), m_new, 0). exp(-inf - 0) is then exactly 0."
        )
    top = float(np.max(np.abs(args[len(names)][row])))
    if top > 80:
        return (
            f"Row {row} has scores as large as {top:.4g}: exp of them overflows to inf "
            "(inf/inf and inf·0 are nan). Subtract the new running max before every exp; "
            "then every exponent is ≤ 0."
        )
    return f"Your {names[0]} or {names[1]} holds nan or inf in row {row}."


def _running(m, block):
    """The new max (n_rows,) and the shift used for the exponentials (0 while still -inf)."""
    m_new = np.maximum(m, np.max(block, axis=1))
    return m_new, np.where(np.isfinite(m_new), m_new, 0.0)


def _split(array, size) -> list[np.ndarray]:
    """``array`` cut along its last axis (scores) or first axis (values) into blocks."""
    return [array[..., j : j + size] for j in range(0, array.shape[-1], size)]


# ---------------------------------------------------------------- 8.2 the online update
def _case(description, inputs, start, blocks) -> SimpleNamespace:
    return SimpleNamespace(description=description, inputs=inputs, start=start, blocks=blocks)


def online_cases() -> list[SimpleNamespace]:
    """Score rows, cut into blocks, with m = -inf and l = 0 before the first block.

    The scaled scores of "The cat sat down" (4, 4) in blocks of 3 (3 does not divide 4);
    seeded random rows whose max arrives late, in blocks of 4; scores near ±1000 in blocks of
    2; rows whose first block is fully masked (-inf), as in a causal tile.
    """
    cat = cat_sat_down()
    cat_scores = attnlab.attention_scores(cat.x @ cat.w_q, cat.x @ cat.w_k)  # (4, 4)
    rising = np.random.default_rng(8).normal(size=(5, 11)) + np.linspace(0, 6, 11)  # (5, 11)
    large = np.array(
        [[1000.0, 998.0, 1003.0, 999.0, 1005.0], [-1000.0, -995.0, -1001.0, -990.0, -999.0]]
    )  # (2, 5)
    masked = np.array(
        [
            [-np.inf, -np.inf, 1.0, 2.0, 0.5],
            [0.5, -np.inf, -np.inf, 3.0, -np.inf],
            [-np.inf, -np.inf, -np.inf, -np.inf, 4.0],
        ]
    )  # (3, 5)
    cases = []
    for text, scores, size in [
        (f'the scaled scores of "{" ".join(cat.tokens)}" in blocks of 3', cat_scores, 3),
        ("5 rows whose largest scores come late, in blocks of 4", rising, 4),
        ("scores near 1000 and -1000, in blocks of 2", large, 2),
        ("rows that start with masked (-inf) scores, in blocks of 2", masked, 2),
    ]:
        n = len(scores)
        start = (np.full(n, -np.inf), np.zeros(n))  # (n_rows,) each
        cases.append(_case(text, ("block",), start, [(b,) for b in _split(scores, size)]))
    return cases


def _online_mistakes(m, l, block) -> list[tuple[tuple, str]]:
    m_new, shift = _running(m, block)
    terms = _quietly(lambda: np.exp(block - shift[:, None]).sum(axis=1))
    block_max = block.max(axis=1)
    own = np.where(np.isfinite(block_max), block_max, 0.0)
    return [
        (
            (m_new, l + terms),
            "You did not rescale the old sum: l was measured against the old "
            "max, so when the max grows it must be multiplied by exp(m_old - m_new) before the "
            "block's terms are added.",
        ),
        (
            _quietly(lambda: (m_new, l * np.exp(shift - m) + terms)),
            "The rescale factor is "
            "upside down: the old sum shrinks when the max grows, so multiply by "
            "exp(m_old - m_new), which is ≤ 1.",
        ),
        (
            _quietly(
                lambda: (block_max, l * np.exp(m - own) + np.exp(block - own[:, None]).sum(axis=1))
            ),
            "Your m is the max of this block only; it must be the max of everything "
            "seen so far, np.maximum(m, block.max(axis=1)).",
        ),
        (_quietly(lambda: (m_new, l * np.exp(m - shift) + np.exp(block).sum(axis=1))), _UNSHIFTED),
        (_quietly(lambda: (m_new, l + np.exp(block).sum(axis=1))), _UNSHIFTED),
    ]


_UNSHIFTED = (
    "Your l adds exp(block) without subtracting the new max: every term of l must "
    "be exp(x - m_new), and the old l is rescaled by exp(m_old - m_new). Without the "
    "shift, scores near 1000 overflow."
)


def _check_online(answer) -> None:
    for case in online_cases():
        _drive(answer, case, ("m", "l"), online_softmax_update, _online_mistakes)


online_update = Exercise(
    "Exercise 8.2 (the online softmax update)",
    _check_online,
    hints=[
        "The new running max is the larger of the old one and the block's own max. The old "
        "sum l was measured against the old max: what factor turns exp(x - m_old) into "
        "exp(x - m_new)?",
        "m_new = np.maximum(m, block.max(axis=1)); the old sum becomes l · exp(m - m_new), and "
        "the block adds exp(block - m_new[:, None]).sum(axis=1). While a row has seen only -inf, "
        "m_new is -inf and m - m_new is nan: shift by 0 there instead.",
        'Compute the new running max first. Then rescale the old sum by exp(old max − new max) '
        'and add the exps of the new block shifted by the new max; use 0 as the shift on rows '
        'whose max is still −∞.',
    ],
    forbidden=_LIBRARY_FOLDS,
)


# ---------------------------------------------------------------- 8.3 one tile of attention
def attention_cases() -> list[SimpleNamespace]:
    """Queries' scores against key blocks, with the matching value blocks.

    "The cat sat down" (keys in blocks of 3), "dog bites man" (one key at a time) and seeded
    random queries with scores of several hundred (keys in blocks of 4, 10 keys).
    """
    cat, dog = cat_sat_down(), dog_bites_man()
    rng = np.random.default_rng(88)
    big_q, big_k = rng.normal(size=(2, 6, 5)) * 12  # (6, 5) each: scores of several hundred
    sets = [
        (
            f'"{" ".join(cat.tokens)}", keys in blocks of 3',
            cat.x @ cat.w_q,
            cat.x @ cat.w_k,
            cat.x @ cat.w_v,
            3,
        ),
        (f'"{" ".join(dog.tokens)}", one key at a time', dog.q, dog.k, dog.v, 1),
        (
            "6 random queries with large scores, 10 keys in blocks of 4",
            big_q,
            np.vstack([big_k, big_k[:4] * -0.5]),
            rng.normal(size=(10, 3)),
            4,
        ),
    ]
    cases = []
    for text, q, k, v, size in sets:
        scores = attnlab.attention_scores(q, k)  # (n_q, n_k)
        n_q, d_v = len(q), v.shape[1]
        start = (np.full(n_q, -np.inf), np.zeros(n_q), np.zeros((n_q, d_v)))
        blocks = list(zip(_split(scores, size), [v[j : j + size] for j in range(0, len(v),
                                                                                 size)],
                          strict=True))  # fmt: skip
        case = _case(text, ("scores", "v_block"), start, blocks)
        case.q, case.k, case.v = q, k, v
        cases.append(case)
    return cases


def _attention_reference(m, l, acc, scores, v_block):
    m_new, l_new, rescale, e = _fold(m, l, scores)
    return m_new, l_new, acc * rescale[:, None] + e @ v_block


def _attention_mistakes(m, l, acc, scores, v_block) -> list[tuple[tuple, str]]:
    m_new, l_new, acc_new = _attention_reference(m, l, acc, scores, v_block)
    _, shift = _running(m, scores)
    e = np.exp(scores - shift[:, np.newaxis])  # (n_q, b)
    weights = attnlab.softmax(scores)  # (n_q, b) normalised within the tile only
    rescale = _quietly(lambda: np.exp(m - shift))[:, None]
    return [
        (
            (m_new, l_new, acc + e @ v_block),
            "You rescaled l but not acc: acc is a sum of "
            "exp(s - m_old) · v, so when the max grows it must be multiplied by "
            "exp(m_old - m_new) too, before this tile's e @ v_block is added.",
        ),
        (
            (m_new, l + e.sum(axis=1), acc_new),
            "You rescaled acc but not l: both were measured "
            "against the old max, so both are multiplied by exp(m_old - m_new).",
        ),
        (
            (m_new, l + e.sum(axis=1), acc + e @ v_block),
            "Neither l nor acc was rescaled: when "
            "the max grows, everything summed so far must be multiplied by exp(m_old - m_new).",
        ),
        ((m_new, l_new, _quietly(lambda: acc_new / l_new[:, None])), _NORMALISED),
        ((m_new, l_new, acc * rescale + weights @ v_block), _NORMALISED),
        (
            _quietly(
                lambda: (
                    m_new,
                    l * rescale[:, 0] + np.exp(scores).sum(axis=1),
                    acc * rescale + np.exp(scores) @ v_block,
                )
            ),
            _NO_SHIFT,
        ),
        (
            _quietly(
                lambda: (m_new, l + np.exp(scores).sum(axis=1), acc + np.exp(scores) @ v_block)
            ),
            _NO_SHIFT,
        ),
    ]


_NORMALISED = (
    "Your acc is normalised already (divided by l, or a softmax within this tile). "
    "The softmax runs over all keys, so keep acc unnormalised while the tiles "
    "stream by: add exp(scores - m_new) @ v_block, and divide by l once, after the "
    "last tile."
)
_NO_SHIFT = (
    "You did not subtract the new running max inside the exponentials: use "
    "exp(scores - m_new) for l and acc alike (and rescale the old ones by "
    "exp(m_old - m_new)). Without the shift, scores in the hundreds overflow."
)


def _check_attention(answer) -> None:
    for case in attention_cases():
        _drive(answer, case, ("m", "l", "acc"), _attention_reference, _attention_mistakes)


attention_step = Exercise(
    "Exercise 8.3 (one tile of attention)",
    _check_attention,
    hints=[
        "This is your online update with one more running quantity: acc, the sum of "
        "exp(s - m) · v over the keys seen so far. Whatever was measured against the old max "
        "must be rescaled when the max grows.",
        "Compute m_new and the shift as in 8.2, rescale = exp(m - shift) and "
        "e = exp(scores - shift[:, None]). Then l · rescale + e.sum(axis=1) and "
        "acc · rescale[:, None] + e @ v_block. Do not divide by l here.",
        'Return three things: the new max; the old sum times the rescale factor plus the new '
        "exps' row sums; the old accumulator times the rescale factor (one per row, so give it "
        'a second axis) plus the new exps times `v_block`.',
    ],
    forbidden=_LIBRARY_FOLDS,
)
