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
* :data:`tiled_loop` (8.4): ``tiled_loop(q, k, v, block, causal)`` is the whole loop around that
  step: query blocks and key blocks of ``block`` rows (the last one shorter when ``block``
  does not divide ``n``), the tiles wholly above the diagonal skipped when ``causal``, and
  the later keys masked inside the tiles that cross it. It returns ``(output, tiles)``; the
  output is compared with the plain masked attention, ``tiles`` with the count a skipping loop
  computes, and on three long cases (100 queries against 10,000 keys; 2048 tokens, causal;
  4 queries against 250,000 keys) the memory it allocates (``tracemalloc``) must stay within a
  few tiles, the output and a copy of q (:func:`memory_budget`): a strip of one query
  block's scores against every key, a mask for the whole sequence, one query's row of
  scores (even with its softmax done in place, even in float16), an array of every key's
  position, or a copy of k or v goes over. The long cases' scores reach the thousands, with
  a max that grows from key block to key block, so a loop without the running max (or with
  a stale one) overflows; they are short binary fractions, exact in float32. A causal case
  has fewer queries than keys: query i sees keys j ≤ i, so the keys from n_q on are seen by
  no query, and they hold NaN, so a loop that computes a tile every query masks (whatever
  count it returns) gives NaN. A softmax over a whole row (``attnlab.softmax`` and the
  library's other whole-row softmaxes) is forbidden: the softmax runs online, tile by tile.

In 8.2 and 8.3 the check hands the learner's function the *correct* running state at every
step, so a mistake is reported at the first block where it shows, with the block, the state
that went in and what should have come out. Known mistakes are named: the old sum (or
accumulator) not rescaled by ``exp(m_old − m_new)``, the factor upside down, a max taken over
the block only, no max shift (overflow), ``-inf − (−inf)`` on a masked block, a per-block
softmax, an accumulator divided too early, a shift by the old max (told from no shift at all
by trying the answer on a block whose old max is finite), the factor multiplied into ``acc``
without a second axis (numpy's broadcasting error, or a wrong value when ``n_q = d_v``); in
8.1 ``n`` for ``n²``, bits for bytes, a missing batch or head factor, 4 bytes for every
dtype, MiB for bytes, the scores and the weights both counted; in 8.4 the last short block
dropped, no tile skipping (counted, or seen in NaN from the keys no query sees), no mask (or
a tile-local one) inside the diagonal tiles, the diagonal tiles skipped, no final division,
no running max or the first tile's max kept (overflow), the whole matrix, a strip of scores
against every key, a row of scores against every key (or every key's positions) or a
whole-sequence mask built.

Answers computed in float32 are accepted to float32 precision (relative 2e-5); when a wrong
answer prints like the right one, the feedback says how far apart they are.

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

import functools
import gc
import math
import numbers
import re
import sys
import tracemalloc
import types
from dataclasses import dataclass

import numpy as np

import attnlab
from attnlab._kernels import fold_block
from attnlab.examples import cat_sat_down, dog_bites_man
from attnlab.exercises.kit.calling import call_watching
from attnlab.exercises.kit.cases import Cases
from attnlab.exercises.kit.display import one_line, short, warned
from attnlab.exercises.kit.exercise import Exercise
from attnlab.exercises.kit.exercise_map import EXERCISES
from attnlab.exercises.kit.judging import as_numbers, quietly
from attnlab.exercises.kit.outcomes import Wrong
from attnlab.exercises.kit.precision import judging_tolerance
from attnlab.exercises.rules.unseen_names import cells_run, running_shell, top_level_names
from attnlab.online import online_softmax_update

__all__ = [
    "scores_memory",
    "online_update",
    "attention_step",
    "tiled_loop",
    "memory_cases",
    "online_cases",
    "attention_cases",
    "loop_cases",
    "expected_tiles",
    "memory_budget",
]


#: The library's own online softmax and tiled attention: 8.2 and 8.3 ask for the step itself.
_LIBRARY_FOLDS = (
    "attnlab.online.online_softmax_update",
    "attnlab._kernels.fold_block",
    "attnlab.online_softmax",
    "attnlab.tiled_attention",
)


# ---------------------------------------------------------------- 8.1 memory of the scores
def _expected_bytes(n, heads, batch, dtype) -> int:
    """Bytes of the score matrices: one (n, n) per sequence and head."""
    return math.prod((batch, heads, n, n)) * np.dtype(dtype).itemsize


def memory_cases() -> list[tuple[int, int, int, str]]:
    """(n, heads, batch, dtype) the checker asks about: small to long, every float dtype."""
    return [
        (4, 1, 1, "float64"),
        (2048, 12, 8, "float32"),
        (16384, 1, 1, "float16"),
        (1000, 16, 3, "float32"),
        (512, 8, 1, "float64"),
    ]


def memory_fresh(rng) -> list[tuple[int, int, int, str]]:
    """(n, heads, batch, dtype) drawn anew for every grading (``Cases(fresh=...)``): a length
    from 3 to 20,000 with 2 to 16 heads and a batch of 2 to 8 in float16 or float64, then
    another length with one head in float32."""
    heads = int(rng.integers(2, 17))
    batch = int(rng.choice([size for size in range(2, 9) if size != heads]))
    return [
        (int(rng.integers(3, 20_001)), heads, batch, str(rng.choice(["float16", "float64"]))),
        (int(rng.integers(3, 20_001)), 1, 1, "float32"),
    ]


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
        (
            2 * right,
            "That is twice the answer: you counted two n × n matrices per head (the scores "
            "and the weights, say). The exercise asks for the scores alone; the weights would "
            "be another matrix of the same size.",
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


def _memory_what(case) -> str:
    n, heads, batch, dtype = case
    return f"scores_bytes(n={n}, heads={heads}, batch={batch}, dtype={dtype!r})"


def _bytes_counted(answer, *args):
    """Call an 8.1 answer measuring what it allocates (:func:`_peak_of`, where grading runs it
    too), so that the judge sees an answer that builds the array to read its size."""
    return _peak_of(answer, *args)


#: What an 8.1 answer may allocate: counting takes a few numbers, never an array of scores
#: (refused from a sixteenth of the scores' bytes up, so an array of one byte per score is
#: too, and never under 1 MiB, so a row of scores, scaled, is not).
_COUNTING = 2**20


def _judge_memory(got, case, messages, use=None) -> None:
    """Judge the byte count ``got`` for one of :func:`memory_cases`, and the memory ``use``
    of the call (a :class:`MemoryUse`): the task says to count the scores, not to build them."""
    n, heads, batch, dtype = case
    what = _memory_what(case)
    right = _expected_bytes(n, heads, batch, dtype)
    if isinstance(got, np.ndarray) and got.ndim == 0:
        got = got[()]
    if isinstance(got, bool | np.bool_) or not isinstance(got, numbers.Real):
        raise Wrong(f"{what} should be a number of bytes, {right}; got {one_line(got)}.")
    said = f"{what} should be {right:,} bytes, but yours gave {_number(got)}."
    if got == right:
        if messages:
            raise Wrong(f"{what} is right, but numpy warned: {'; '.join(messages)}.")
        if use is not None and use.allocated >= max(_COUNTING, right // 16):
            raise Wrong(
                f"{what} is right, but your function allocated {use.allocated:,} bytes to "
                "get it: it built the array of scores (np.empty or np.zeros of shape "
                "(batch, heads, n, n), say) to read its size. The exercise asks you to count "
                "the bytes without building the array, which at these sizes may not fit in "
                "memory: multiply the number of matrices, the entries of each and "
                "np.dtype(dtype).itemsize."
            )
        return
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
    Cases(
        memory_cases,
        _judge_memory,
        inputs=tuple,
        what=_memory_what,
        call=_bytes_counted,
        fresh=memory_fresh,
    ),
    hints=[
        "How many score matrices are there (one per sequence in the batch and per head), how "
        "many entries does each hold, and how many bytes is one entry?",
        "Each matrix is n × n. `np.dtype(dtype).itemsize` is the size of one entry in bytes: "
        "2 for float16, 4 for float32, 8 for float64.",
        "Count the entries of all the score matrices (one n × n matrix per sequence and per "
        "head) and multiply by the bytes of one entry, `np.dtype(dtype).itemsize`.",
    ],
    id="8.1",
    attr="scores_memory",
    answer="scores_bytes",
    points=1,
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
        array = as_numbers(value, f"{what.rstrip(':')}: {name}", shape)
        if array.shape != shape:
            keep = (
                " (did you keep the reduced axis, keepdims=True?)"
                if array.shape == (*shape, 1)
                else ""
            )
            if name == "acc" and shape[1:] == (1,) and array.shape == (shape[0], shape[0]):
                keep = _square_from_column(shape[0])
            raise Wrong(
                f"{what.rstrip(':')}: {name} should have shape {shape}, one entry per row, but "
                f"yours has shape {array.shape}{keep}."
            )
        results.append(array)
    return results


def _tolerance(expected) -> tuple[float, float]:
    """How close a right answer must be (the kit's :func:`judging_tolerance`): any answer may
    have been computed in float32, which keeps about 7 significant digits, and a sum of a few
    dozen terms can lose one or two more (160 roundings, about 2e-5), so answers computed in
    float32 pass; every known mistake is off by far more (the tests check that each one is
    still told apart). The absolute tolerance is in proportion to the size of the numbers
    (``acc`` can cancel)."""
    finite = np.abs(expected[np.isfinite(expected)]) if np.size(expected) else np.zeros(0)
    size = max(1.0, float(finite.max()) if finite.size else 1.0)
    return judging_tolerance(None, computed_in=np.float32, ulps=160, abs_ulps=168, scale=size)


def _close(g, e) -> np.ndarray:
    """Entry by entry: within float32 rounding of the reference, -inf matching -inf."""
    rtol, atol = _tolerance(e)
    with np.errstate(invalid="ignore"):
        return np.isclose(g, e, rtol=rtol, atol=atol, equal_nan=True)


def _same_results(got, expected) -> bool:
    """Close, with ``-inf`` matching ``-inf`` and NaN matching NaN (the references have none)."""
    return all(
        np.shape(g) == np.shape(e) and bool(np.all(_close(g, e)))
        for g, e in zip(got, expected, strict=True)
    )


def _looks_equal(shown_got: str, shown_expected: str, got, expected) -> str:
    """When the numbers as printed agree, the size of the difference they hide ('' if not)."""
    if shown_got != shown_expected:
        return ""
    gaps = [
        np.abs(np.asarray(g, float) - np.asarray(e, float))[~_close(g, e)]
        for g, e in zip(got, expected, strict=True)
    ]
    gap = max((float(x.max()) for x in gaps if x.size), default=0.0)
    return (
        f" They agree to the digits shown, but differ by up to {gap:.3g}, more than "
        "rounding (even in float32) explains."
    )


@dataclass(frozen=True, eq=False)
class StreamCase:
    """Score rows streamed block by block through a running state (8.2, 8.3).

    Attributes
    ----------
    description : str
        How the feedback names the case.
    inputs : tuple of str
        The names of each step's inputs after the state, e.g. ``("scores", "v_block")``.
    start : tuple of ndarray
        The running state before the first block (``m = -inf``, ``l = 0``, ``acc = 0``).
    blocks : list of tuple of ndarray
        Each step's inputs, in order.
    q, k, v : ndarray or None
        The attention whose scores and values are streamed (8.3 only).
    """

    description: str
    inputs: tuple
    start: tuple
    blocks: list
    q: np.ndarray | None = None
    k: np.ndarray | None = None
    v: np.ndarray | None = None


@dataclass(frozen=True, eq=False)
class _Step:
    """One block of a :class:`StreamCase`, with the correct running state that goes in and the
    reference's state that should come out."""

    case: StreamCase
    number: int  #: 1 for the first block
    names: tuple  #: the names of the running state, e.g. ``("m", "l")``
    state: tuple
    block: tuple
    expected: tuple

    @property
    def arguments(self) -> tuple:
        return (*self.state, *self.block)

    @property
    def what(self) -> str:
        """``"For <case>, step 2 of 3 (m = ..., l = ..., block = ...):"``."""
        named = zip((*self.names, *self.case.inputs), self.arguments, strict=True)
        shown = ", ".join(f"{n} = {short(np.round(a, 4))}" for n, a in named)
        return (
            f"For {self.case.description}, step {self.number} of {len(self.case.blocks)} ({shown}):"
        )


def _steps(cases, names, step):
    """Every block of every case in turn, each with the correct running state: ``step`` (the
    reference) folds each block into the state the next one gets, whatever the answer gave."""
    for case in cases:
        state = case.start
        for t, block in enumerate(case.blocks):
            expected = step(*state, *block)
            yield _Step(case, t + 1, names, state, block, expected)
            state = expected


def _streamed(cases, names, step, mistakes, *, refine=None, crashed=None, fresh=None) -> Cases:
    """The check of 8.2 or 8.3: the answer gets the correct running state at every step, so a
    mistake is reported at the first block where it shows; ``mistakes(*state, *inputs)`` gives
    pairs of (what a known mistake returns, what to say).

    ``refine(answer, cause)``, if given, may replace the reason a known mistake gave when one
    step cannot tell two mistakes apart (it tries the answer on a step that can);
    ``crashed(message, step)`` may add the reason for a call that raised (a known mistake
    that fails in numpy, e.g. a broadcasting error), or return ''. ``fresh(rng)``, if given,
    draws more :class:`StreamCase` at grading time (``Cases(fresh=...)``).
    """

    def drawn(rng):
        return list(_steps(fresh(rng), names, step))

    if fresh is not None:  # the drawn cases' seed is named after ``fresh`` (kit.cases)
        drawn.__module__, drawn.__qualname__ = fresh.__module__, f"{fresh.__qualname__}.steps"

    def failed(exc, s):
        reason = crashed(str(exc), s) if crashed is not None else ""
        return f"{s.what} {exc}{f' {reason}' if reason else ''}"

    return Cases(
        lambda: _steps(cases(), names, step),
        functools.partial(_judge_step, mistakes, refine),
        inputs=lambda s: s.arguments,
        failed=failed,
        with_answer=True,
        fresh=drawn if fresh is not None else None,
    )


def _judge_step(mistakes, refine, answer, got, step, messages) -> None:
    """Judge the state ``got`` that the answer returned for one :class:`_Step`."""
    what, names, args, expected = step.what, step.names, step.arguments, step.expected
    got = _as_results(got, names, [e.shape for e in expected], what)
    said = f"{what} the answer is {_pairs(names, expected)}, but yours gave {_pairs(names, got)}."
    if _same_results(got, expected):
        if messages:
            raise Wrong(
                f"{what} your values are right, but numpy warned: "
                f"{'; '.join(messages)}. Your function must not warn: compute a "
                "shift that is 0 where the max is still -inf, instead of cleaning "
                "up a nan afterwards."
            )
        return
    cause = next(
        (
            text
            for wrong, text in mistakes(*args)
            if wrong is not None and _same_results(got, wrong)  # None: cannot happen here
        ),
        "",
    )
    if cause and refine is not None:
        cause = refine(answer, cause)
    if not cause and not all(np.all(np.isfinite(g) | np.isneginf(g)) for g in got):
        cause = _not_finite(args, expected, got, names)
    cause = cause or _first_difference(got, expected, names)
    hidden = _looks_equal(_pairs(names, got), _pairs(names, expected), got, expected)
    raise Wrong(f"{said}{hidden} {cause}{warned(messages)}")


def _pairs(names, values) -> str:
    return ", ".join(f"{n} = {short(np.round(v, 4))}" for n, v in zip(names, values, strict=True))


def _first_difference(got, expected, names) -> str:
    for name, g, e in zip(names, got, expected, strict=True):
        bad = ~_close(g, e)
        if bad.any():
            row = int(np.argwhere(bad)[0][0])
            return f"Row {row} of {name} should be {_digits(e[row])}, not {_digits(g[row])}."
    return ""


def _digits(value) -> str:
    """Numbers with 8 significant digits, enough to show a difference the check cares about."""
    flat = np.atleast_1d(np.asarray(value, dtype=float)).ravel()
    text = ", ".join(f"{x:.8g}" for x in flat[:8]) + (", ..." if flat.size > 8 else "")
    return f"[{text}]" if np.ndim(value) else text


def _not_finite(args, expected, got, names) -> str:
    """Why a nan or inf came out: overflow without a shift, or -inf - (-inf)."""
    m = args[0]
    rows = np.flatnonzero(
        np.any(
            [~(np.isfinite(g) | np.isneginf(g)).reshape(len(m), -1).any(axis=1) for g in got],
            axis=0,
        )
    )
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
def online_cases() -> list[StreamCase]:
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
        cases.append(StreamCase(text, ("block",), start, [(b,) for b in _split(scores, size)]))
    return cases


def online_fresh(rng) -> list[StreamCase]:
    """Score rows drawn anew for every grading (``Cases(fresh=...)``), m = -inf and l = 0
    before the first block: 2 to 5 rows whose max comes late, in blocks of 2 to 4 (one that
    need not divide the row); whole-number scores near +1000 and -1000; rows whose first
    blocks are fully masked (-inf)."""
    n, width, size = int(rng.integers(2, 6)), int(rng.integers(6, 12)), int(rng.integers(2, 5))
    rising = np.round(rng.normal(size=(n, width)) + np.linspace(0, 6, width), 2)  # (n, width)
    large = rng.integers(-10, 11, size=(2, width)).astype(float)  # exact in float32 too
    large += np.array([[1000.0], [-1000.0]])  # (2, width)
    masked = np.round(rng.normal(0.0, 2.0, size=(n, width)), 2)  # (n, width)
    masked[:, :size] = -np.inf  # the first block of every row: masked
    masked[rng.random((n, width)) < 0.3] = -np.inf
    masked[np.arange(n), rng.integers(size, width, size=n)] = 1.5  # a score in every row
    cases = []
    for text, scores, block in [
        (f"{n} rows whose largest scores come late, in blocks of {size}", rising, size),
        ("scores near 1000 and -1000, in blocks of 2", large, 2),
        (f"rows that start with masked (-inf) scores, in blocks of {size}", masked, size),
    ]:
        start = (np.full(len(scores), -np.inf), np.zeros(len(scores)))  # (n_rows,) each
        cases.append(StreamCase(text, ("block",), start, [(b,) for b in _split(scores, block)]))
    return cases


def _online_mistakes(m, l, block) -> list[tuple[tuple, str]]:
    m_new, shift = _running(m, block)
    terms = quietly(lambda: np.exp(block - shift[:, None]).sum(axis=1))
    block_max = block.max(axis=1)
    own = np.where(np.isfinite(block_max), block_max, 0.0)
    old = np.where(np.isfinite(m), m, 0.0)  # the old max, 0 while it is still -inf
    return [
        (
            (m_new, l + terms),
            "You did not rescale the old sum: l was measured against the old "
            "max, so when the max grows it must be multiplied by exp(m_old - m_new) before the "
            "block's terms are added.",
        ),
        (
            quietly(lambda: (m_new, l * np.exp(shift - m) + terms)),
            "The rescale factor is "
            "upside down: the old sum shrinks when the max grows, so multiply by "
            "exp(m_old - m_new), which is ≤ 1.",
        ),
        (
            quietly(
                lambda: (block_max, l * np.exp(m - own) + np.exp(block - own[:, None]).sum(axis=1))
            ),
            "Your m is the max of this block only; it must be the max of everything "
            "seen so far, np.maximum(m, block.max(axis=1)).",
        ),
        (
            quietly(lambda: (m_new, l + np.exp(block - m[:, None]).sum(axis=1))),
            _OLD_MAX,
        ),
        (
            quietly(
                lambda: (m_new, l * np.exp(m - shift) + np.exp(block - m[:, None]).sum(axis=1))
            ),
            _OLD_MAX,
        ),
        (
            quietly(lambda: (m_new, l + np.exp(block - old[:, None]).sum(axis=1))),
            _OLD_MAX if np.isfinite(m).all() else _UNSHIFTED + _OLD_MAX_FIRST,
        ),
        (
            quietly(lambda: (m_new, l * np.exp(m - shift) + np.exp(block).sum(axis=1))),
            _UNSHIFTED + (_OLD_MAX_FIRST if np.isneginf(m).all() else ""),
        ),
        (
            quietly(lambda: (m_new, l + np.exp(block).sum(axis=1))),
            _UNSHIFTED + (_OLD_MAX_FIRST if np.isneginf(m).all() else ""),
        ),
    ]


_UNSHIFTED = (
    "Your l adds exp(block) without subtracting the new max: every term of l must "
    "be exp(x - m_new), and the old l is rescaled by exp(m_old - m_new). Without the "
    "shift, scores near 1000 overflow."
)


_OLD_MAX = (
    "You shifted the block's exponentials by the old running max m instead of the new one. "
    "Before the first block m is -inf, so exp(x - m) is inf; later, a block that raises the "
    "max gives terms exp(x - m_old) > 1, and l is then measured against two different "
    "maxima. Compute m_new = max(m, block max) first and use it in exp(block - m_new)."
)
_OLD_MAX_FIRST = (
    " (If you shifted by the old running max: before the first block that is -inf, or the 0 "
    "you used in its place, so nothing was subtracted. The shift must be the new max, which "
    "already includes this block.)"
)


#: A step on which the old max and no shift at all give different sums: m is finite, and the
#: max grows in row 0 (3 > 1) but not in row 1.
_PROBE = (np.array([1.0, -2.0]), np.array([1.5, 2.0]), np.array([[0.5, 3.0], [-1.0, -3.0]]))


def _try_again(answer, inputs, names, shapes):
    """The answer's results on other ``inputs``, or None when it fails there."""
    try:
        got, _ = call_watching(answer, *(a.copy() for a in inputs))
        return _as_results(got, names, shapes, "")
    except Exception:  # a crash, a stub, junk: nothing to learn from this probe
        return None


def _online_refined(answer, cause) -> str:
    """On a first block (m = -inf), the old max (or the 0 put in its place) and no shift at all
    give the same l: tell them apart on :data:`_PROBE`, where m is finite."""
    if _OLD_MAX_FIRST not in cause:
        return cause
    m, l, block = _PROBE
    expected = online_softmax_update(m, l, block)
    got = _try_again(answer, _PROBE, ("m", "l"), [e.shape for e in expected])
    said = next(
        (
            text
            for wrong, text in _online_mistakes(*_PROBE)
            if got is not None and _same_results(got, wrong)
        ),
        "",
    )
    if said == _OLD_MAX:
        return _OLD_MAX_FIRST_BLOCK.format(
            m=short(m), l=short(l), block=short(block), got=short(got[1]), right=short(expected[1])
        )
    if said.startswith(_UNSHIFTED):
        return _UNSHIFTED
    return cause


_OLD_MAX_FIRST_BLOCK = (
    "You shifted the block's exponentials by the old running max m instead of the new one. "
    "On this first block the old max is -inf, and the 0 you used in its place subtracts "
    "nothing, so l holds exp(x) itself (scores near 1000 overflow). On a later block it "
    "shows too: with m = {m}, l = {l} and block = {block}, yours gives l = {got}, not {right}: "
    "its terms are exp(x - m_old), measured against a max the block has already raised. "
    "Compute m_new = max(m, block max) first and use it in exp(block - m_new) (0 in its "
    "place while it is still -inf)."
)


online_update = Exercise(
    "Exercise 8.2 (the online softmax update)",
    # the cases are looked up at each check, so a test can try others in their place
    _streamed(
        lambda: online_cases(),
        ("m", "l"),
        online_softmax_update,
        _online_mistakes,
        refine=_online_refined,
        fresh=online_fresh,
    ),
    hints=[
        "The new running max is the larger of the old one and the block's own max. The old "
        "sum l was measured against the old max: what factor turns exp(x - m_old) into "
        "exp(x - m_new)?",
        "m_new = np.maximum(m, block.max(axis=1)); the old sum becomes l · exp(m - m_new), and "
        "the block adds exp(block - m_new[:, None]).sum(axis=1). While a row has seen only -inf, "
        "m_new is -inf and m - m_new is nan: shift by 0 there instead.",
        "Compute the new running max first. Then rescale the old sum by exp(old max − new max) "
        "and add the exps of the new block shifted by the new max; use 0 as the shift on rows "
        "whose max is still −∞.",
    ],
    forbidden=_LIBRARY_FOLDS,
    id="8.2",
    attr="online_update",
    points=2,
)


# ---------------------------------------------------------------- 8.3 one tile of attention
def attention_cases() -> list[StreamCase]:
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
    return [attention_case(*args) for args in sets]


def attention_fresh(rng) -> list[StreamCase]:
    """Queries, keys and values drawn anew for every grading (``Cases(fresh=...)``): 2 to 6
    queries against 4 to 10 keys in blocks of 1 to 4, n_q, d_v apart; then queries with
    scores of several hundred."""
    n_q, n_k, d = int(rng.integers(2, 7)), int(rng.integers(4, 11)), int(rng.integers(2, 6))
    d_v = int(rng.choice([size for size in range(2, 6) if size != n_q]))
    size = int(rng.integers(1, 5))
    big_q, big_k = rng.normal(size=(2, n_q, d)) * 12  # (n_q, d) each: scores of hundreds
    return [
        attention_case(
            f"{n_q} random queries, {n_k} keys in blocks of {size}",
            rng.normal(size=(n_q, d)),
            rng.normal(size=(n_k, d)),
            rng.normal(size=(n_k, d_v)),
            size,
        ),
        attention_case(
            f"{n_q} random queries with large scores, {2 * n_q} keys in blocks of 3",
            big_q,
            np.vstack([big_k, big_k * -0.5]),
            rng.normal(size=(2 * n_q, d_v)),
            3,
        ),
    ]


def attention_case(text, q, k, v, size) -> StreamCase:
    """The scores of ``q`` against ``k`` and the values ``v``, streamed ``size`` keys at a time,
    with m = -inf, l = 0 and acc = 0 before the first block."""
    scores = attnlab.attention_scores(q, k)  # (n_q, n_k)
    n_q, d_v = len(q), v.shape[1]
    start = (np.full(n_q, -np.inf), np.zeros(n_q), np.zeros((n_q, d_v)))
    values = [v[j : j + size] for j in range(0, len(v), size)]
    blocks = list(zip(_split(scores, size), values, strict=True))
    return StreamCase(text, ("scores", "v_block"), start, blocks, q, k, v)


def _attention_reference(m, l, acc, scores, v_block):
    m_new, l_new, rescale, e = fold_block(m, l, scores)
    return m_new, l_new, acc * rescale[:, None] + e @ v_block


def _attention_mistakes(m, l, acc, scores, v_block) -> list[tuple[tuple, str]]:
    m_new, l_new, acc_new = _attention_reference(m, l, acc, scores, v_block)
    _, shift = _running(m, scores)
    e = np.exp(scores - shift[:, np.newaxis])  # (n_q, b)
    weights = attnlab.softmax(scores)  # (n_q, b) normalised within the tile only
    rescale = quietly(lambda: np.exp(m - shift))[:, None]
    return [
        (
            # acc * factor without a second axis: possible without an error only when
            # n_q == d_v, where column j is multiplied by row j's factor
            (m_new, l_new, acc * rescale[:, 0] + e @ v_block)
            if acc.shape[0] == acc.shape[1]
            else None,
            _row_factor(acc.shape, square=True),
        ),
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
        ((m_new, l_new, quietly(lambda: acc_new / l_new[:, None])), _NORMALISED),
        ((m_new, l_new, acc * rescale + weights @ v_block), _NORMALISED),
        (
            quietly(
                lambda: (
                    m_new,
                    l * rescale[:, 0] + np.exp(scores).sum(axis=1),
                    acc * rescale + np.exp(scores) @ v_block,
                )
            ),
            _NO_SHIFT,
        ),
        (
            quietly(
                lambda: (m_new, l + np.exp(scores).sum(axis=1), acc + np.exp(scores) @ v_block)
            ),
            _NO_SHIFT,
        ),
    ]


def _row_factor(shape, square=False) -> str:
    """Why acc times the (n_q,) rescale factor needs the factor as a column, factor[:, None]."""
    n_q, d_v = shape
    lined_up = (
        f"Here n_q = d_v = {n_q}, so numpy raised no error: lining the shapes up from their "
        f"last axis, it multiplied column j of acc by row j's factor."
        if square
        else "numpy lines shapes up from their last axis, so it tried to pair the "
        f"{n_q} factors with the {d_v} columns of acc."
    )
    return (
        f"acc has shape (n_q, d_v) = ({n_q}, {d_v}) and the rescale factor one entry per row, "
        f"(n_q,) = ({n_q},). {lined_up} Every entry of row i must be multiplied by row i's "
        f"factor: give the factor a second axis, factor[:, None] of shape ({n_q}, 1), which "
        "broadcasts along the row."
    )


def _square_from_column(n_q) -> str:
    """Why acc came back (n_q, n_q) when d_v = 1: acc times the factor without [:, None]."""
    return (
        f". That is what acc, ({n_q}, 1), times the rescale factor, ({n_q},), gives: numpy "
        f"lines shapes up from their last axis, so the product broadcasts to ({n_q}, {n_q}), "
        "every row times every factor. Every entry of row i must be multiplied by row i's "
        f"factor: give the factor a second axis, factor[:, None] of shape ({n_q}, 1)"
    )


#: How numpy words a broadcasting failure, and the shapes it names.
_BROADCAST = re.compile(r"could not be broadcast together with shapes ((?:\([\d,\s]*\)\s*)+)")


def _attention_crashed(message, step) -> str:
    """The reason for an attention step that raised numpy's broadcasting error on acc times
    the (n_q,) factor, or ''."""
    found = _BROADCAST.search(message)
    if not found:
        return ""
    shapes = {
        tuple(int(x) for x in re.findall(r"\d+", shape))
        for shape in re.findall(r"\([\d,\s]*\)", found.group(1))
    }
    acc = step.state[2]
    if {acc.shape, acc.shape[:1]} <= shapes:
        return _row_factor(acc.shape)
    return ""


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


attention_step = Exercise(
    "Exercise 8.3 (one tile of attention)",
    _streamed(
        lambda: attention_cases(),
        ("m", "l", "acc"),
        _attention_reference,
        _attention_mistakes,
        crashed=_attention_crashed,
        fresh=attention_fresh,
    ),
    hints=[
        "This is your online update with one more running quantity: acc, the sum of "
        "exp(s - m) · v over the keys seen so far. Whatever was measured against the old max "
        "must be rescaled when the max grows.",
        "Compute m_new and the shift as in 8.2, rescale = exp(m - shift) and "
        "e = exp(scores - shift[:, None]). Then l · rescale + e.sum(axis=1) and "
        "acc · rescale[:, None] + e @ v_block. Do not divide by l here.",
        "Return three things: the new max; the old sum times the rescale factor plus the new "
        "exps' row sums; the old accumulator times the rescale factor (one per row, so give it "
        "a second axis) plus the new exps times `v_block`.",
    ],
    forbidden=_LIBRARY_FOLDS,
    id="8.3",
    attr="attention_step",
    points=2,
)


# ---------------------------------------------------------------- 8.4 the outer tiled loop
#: The library's plain and tiled attention: 8.4 asks for the loop itself.
_LIBRARY_ATTENTION = (
    "attnlab.tiled_attention",
    "attnlab.tiling.tiled_attention",
    "attnlab.scaled_dot_product_attention",
    "attnlab.attention.scaled_dot_product_attention",
)
#: Softmaxes (and their normalisers) over a whole row: 8.4's softmax runs online, tile by tile,
#: so a loop over single query rows that hands each row of scores against every key to one of
#: these is not the tiled work (the library's online fold of one tile stays allowed).
_WHOLE_ROW_SOFTMAX = (
    "attnlab.softmax",
    "attnlab.naive_softmax",
    "attnlab.log_softmax",
    "attnlab.logsumexp",
    "attnlab._kernels.softmax_in_place",
    "attnlab._kernels.logsumexp_shifted",
    "attnlab._kernels.normalised_exp",
    "attnlab.online_softmax",
    "attnlab.online_normaliser",
    "scipy.special.softmax",
    "scipy.special.log_softmax",
    "scipy.special.logsumexp",
)


@dataclass(frozen=True, eq=False)
class LoopCase:
    """One call of 8.4's ``tiled_loop(q, k, v, block, causal)``, with how the feedback names it
    and the number of tiles a loop that skips the tiles wholly above the diagonal computes."""

    description: str
    q: np.ndarray
    k: np.ndarray
    v: np.ndarray
    block: int
    causal: bool
    tiles: int


def _exact(values, step=8) -> np.ndarray:
    """``values`` rounded to multiples of ``1 / step``: with integer queries, every score the
    cases below make is then a short binary fraction, exact in float32 as in float64, so a
    loop computed in float32 loses nothing to scores in the thousands."""
    return np.round(np.asarray(values) * step) / step


def _rising(rng, n_q, n_k, d, reach, visible=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(q, k, v) whose scores reach the thousands: the first coordinate of the keys rises from
    ``-reach`` to ``reach`` along the keys (along the first ``visible`` keys when given: the
    later keys and their values are NaN, keys no query may see), the queries' first
    coordinate is a whole number, and the rest is small. A query whose first coordinate is
    positive (the first query's is) has its largest scores in the last key blocks, a max that
    grows from key block to key block; one whose first coordinate is negative (the last
    query's is) has large scores in its first tile.

    exp of such a score overflows without the running max (exp(710) is inf), and a loop that
    keeps the max of its first tile overflows on the rows whose max grows; float16 cannot hold
    the scores either (its resolution at 2048 is 2, and its largest number 65,504)."""
    first = rng.choice([-3.0, -2.0, 2.0, 3.0, 4.0, 5.0], size=n_q)  # (n_q,)
    first[0], first[-1] = 5.0, -3.0  # one query of each kind, whatever was drawn
    q = np.column_stack([first, rng.integers(-2, 3, size=(n_q, d - 1))]).astype(float)
    k = _exact(rng.normal(scale=0.5, size=(n_k, d)))  # (n_k, d)
    rising = n_k if visible is None else visible
    k[:rising, 0] += _exact(np.linspace(-reach, reach, rising))  # the rise along the keys
    v = rng.normal(size=(n_k, d))  # (n_k, d_v)
    if visible is not None:
        k[visible:], v[visible:] = np.nan, np.nan
    return q, k, v


def loop_cases() -> list[LoopCase]:
    """(q, k, v, block, causal) the checker tries, with the number of tiles a causal loop
    that skips every tile wholly above the diagonal computes.

    "The cat sat down" with block 3 (3 does not divide 4), without and with the causal mask;
    10 random queries with scores in the hundreds, block 4, causal; the same with block 1;
    then three long ones, where the check also measures the memory the function allocates:
    100 queries against 10,000 keys (block 64, not causal), where a strip of one query
    block's scores against every key is far larger than a few tiles, 2048 tokens (block
    64, causal), where a mask for the whole sequence is, and 4 queries against 250,000 keys
    (d_k = d_v = 1, block 1024), where even one query's row of scores, in float32 and with its
    softmax done in place, is more than a few tiles, the output and a copy of q (a loop over
    single query rows is not tiled). Their scores reach the thousands (the 250,000 keys'
    beyond float16's largest number), with a max that grows from key block to key block
    (:func:`_rising`): a loop without the running max, or one that keeps a stale max,
    overflows. Last, 16 queries against 64 keys, causal, block 4: query i sees keys j ≤ i,
    so keys 16 to 63 are seen by no query, and they hold NaN; a loop that computes a tile
    every query masks reads them (a tile count is what the answer says, NaN what it did).
    """
    cat = cat_sat_down()
    rng = np.random.default_rng(84)
    big = rng.normal(size=(3, 10, 5)) * np.array([[[12.0]], [[12.0]], [[1.0]]])  # (3, 10, 5)
    few_q, many_k, many_v = _rising(rng, 100, 10_000, 4, 1000.0)  # (100, 4), (10000, 4) × 2
    long = _rising(rng, 2048, 2048, 4, 1000.0)  # (2048, 4) each
    one_q, row_k, row_v = _rising(rng, 4, 250_000, 1, 20_000.0)  # (4, 1), (250000, 1) × 2
    unseen = _rising(rng, 16, 64, 4, 1000.0, visible=16)  # (16, 4), (64, 4) × 2
    text = f'"{" ".join(cat.tokens)}"'
    cases = [
        (
            f"{text}, block 3, causal=False",
            cat.x @ cat.w_q,
            cat.x @ cat.w_k,
            cat.x @ cat.w_v,
            3,
            False,
        ),
        (
            f"{text}, block 3, causal=True",
            cat.x @ cat.w_q,
            cat.x @ cat.w_k,
            cat.x @ cat.w_v,
            3,
            True,
        ),
        ("10 random tokens with scores in the hundreds, block 4, causal=True", *big, 4, True),
        ("the same 10 tokens, block 1, causal=True", *big, 1, True),
        (
            "100 random queries against 10,000 keys (d_k = d_v = 4) with scores in the "
            "thousands, block 64, causal=False",
            few_q,
            many_k,
            many_v,
            64,
            False,
        ),
        (
            "2048 random tokens (d_k = d_v = 4) with scores in the thousands, block 64, "
            "causal=True",
            *long,
            64,
            True,
        ),
        (
            "4 random queries against 250,000 keys (d_k = d_v = 1) with scores up to "
            f"{_top_score(one_q, row_k, False):,.0f}, block 1024, causal=False",
            one_q,
            row_k,
            row_v,
            1024,
            False,
        ),
        (
            "16 random queries against 64 keys (d_k = d_v = 4), block 4, causal=True: keys 16 "
            "to 63 come after every query, and hold NaN",
            *unseen,
            4,
            True,
        ),
    ]
    return [
        LoopCase(d, q, k, v, b, c, expected_tiles(len(q), b, c, n_keys=len(k)))
        for d, q, k, v, b, c in cases
    ]


def loop_fresh(rng) -> list[LoopCase]:
    """Cases drawn anew for every grading (``Cases(fresh=...)``): 5 to 15 random tokens with
    scores in the hundreds and a block of 2 to 5 (that need not divide n), causal and not;
    then 12 to 40 queries against more keys with scores in the thousands and a max that
    grows from key block to key block (:func:`_rising`), block 4 to 8."""
    n, d, block = int(rng.integers(5, 16)), int(rng.integers(2, 6)), int(rng.integers(2, 6))
    q, k, v = rng.normal(size=(3, n, d)) * np.array([[[12.0]], [[12.0]], [[1.0]]])
    n_q, wide = int(rng.integers(12, 41)), int(rng.integers(4, 9))
    rising = _rising(rng, n_q, n_q + int(rng.integers(10, 60)), 4, 1000.0)
    cases = [
        (f"{n} random tokens with scores in the hundreds, block {block}, causal=True", q, k, v),
        (f"the same {n} tokens, block {block}, causal=False", q, k, v),
        (
            f"{n_q} random queries against {len(rising[1])} keys (d_k = d_v = 4) with scores "
            f"in the thousands, block {wide}, causal=False",
            *rising,
        ),
    ]
    settings = [(block, True), (block, False), (wide, False)]
    return [
        LoopCase(text, q, k, v, b, c, expected_tiles(len(q), b, c, n_keys=len(k)))
        for (text, q, k, v), (b, c) in zip(cases, settings, strict=True)
    ]


#: exp of a float64 above this is inf.
_EXP_OVERFLOWS = float(np.log(np.finfo(np.float64).max))


def _top_score(q, k, causal) -> float:
    """The largest score a query may see (query i sees keys j ≤ i when ``causal``), one query
    at a time: no (n_q, n_k) matrix is made."""
    seen = [k[: i + 1] if causal else k for i in range(len(q))]  # the keys each query sees
    return max(float(np.max(keys @ row)) for keys, row in zip(seen, q, strict=True)) / np.sqrt(
        q.shape[1]
    )


def _unseen(case) -> int:
    """How many keys no query may see: with the causal mask query i sees keys j ≤ i, so keys
    from n_q on are seen by none (0 when not causal)."""
    return max(0, len(case.k) - len(case.q)) if case.causal else 0


def expected_tiles(n, block, causal, n_keys=None) -> int:
    """Tiles of a loop over query blocks and key blocks of ``block`` rows (the last may be
    shorter), ``n`` queries and ``n_keys`` keys (``n`` by default); causal: without the tiles
    whose first key comes after the block's last query."""
    keys = range(0, n if n_keys is None else n_keys, block)
    return sum(
        1 for i0 in range(0, n, block) for j0 in keys if not causal or j0 <= min(i0 + block, n) - 1
    )


def _plain(q, k, v, causal) -> np.ndarray:
    """The whole-matrix reference, float64: softmax(q kᵀ / √d_k, causal mask) v; causal, only
    the first n_q keys (query i sees keys j ≤ i, so no query sees a key from n_q on)."""
    if causal:
        k, v = k[: len(q)], v[: len(q)]  # (n_q, d_k), (n_q, d_v)
    mask = attnlab.causal_mask(len(q)) if causal else None
    return attnlab.scaled_dot_product_attention(q, k, v, mask=mask)[0]


def _loop_variant(
    q,
    k,
    v,
    block,
    causal,
    *,
    tail=True,
    diagonal_mask=True,
    local=False,
    skip_diagonal=False,
    divide=True,
    skip=True,
    shift="running",
):
    """The tiled loop with one known mistake switched on; returns the output (n, d_v).

    ``shift`` is what the exponentials subtract: the running max (right), ``"none"`` or the
    max of the query block's ``"first"`` tile, kept for the later ones."""
    n, n_k, d_v = len(q), len(k), v.shape[1]

    def starts(size):
        return range(0, size, block) if tail else range(0, size - size % block, block)

    out = np.zeros((n, d_v))  # (n, d_v)
    with np.errstate(all="ignore"):
        for i0 in starts(n):
            i1 = min(i0 + block, n)
            m, l, acc = np.full(i1 - i0, -np.inf), np.zeros(i1 - i0), np.zeros((i1 - i0, d_v))
            for j0 in starts(n_k):
                j1 = min(j0 + block, n_k)
                if causal and skip and (j0 >= i0 if skip_diagonal else j0 > i1 - 1):
                    continue
                s = q[i0:i1] @ k[j0:j1].T / np.sqrt(q.shape[1])  # (bq, bk)
                if causal and diagonal_mask:
                    rows, cols = (
                        (np.arange(i1 - i0), np.arange(j1 - j0))
                        if local
                        else (np.arange(i0, i1), np.arange(j0, j1))
                    )
                    s = np.where(cols[None, :] <= rows[:, None], s, -np.inf)
                if shift == "running":
                    m, l, acc = _attention_reference(m, l, acc, s, v[j0:j1])
                    continue
                if shift == "first" and j0 == 0:
                    m = np.where(np.isfinite(s.max(axis=1)), s.max(axis=1), 0.0)  # (bq,)
                e = np.exp(s - (m[:, None] if shift == "first" else 0.0))  # (bq, bk)
                l, acc = l + e.sum(axis=1), acc + e @ v[j0:j1]
            out[i0:i1] = acc / l[:, None] if divide else acc
    return out


def _masked_tile_read(case) -> str:
    """Why an output holds NaN on a case whose keys from n_q on hold NaN (:func:`_unseen`)."""
    n_q, n_k = len(case.q), len(case.k)
    return (
        f"A tile every query masks was computed: with causal=True query i sees keys j ≤ i "
        f"(aligned top-left), so keys {n_q} to {n_k - 1} come after all {n_q} queries here, "
        "and the check fills them "
        "(in k and v) with NaN. A loop that skips the tiles wholly above the diagonal never "
        "reads them; yours did, and a masked score times a NaN value is NaN. Skip a tile, "
        "before computing anything, when its first key comes after the query block's last "
        "query (and do not build the whole score matrix)."
    )


def _loop_mistakes(case) -> list[tuple[np.ndarray, str]]:
    """(the output of a known mistake, what to say), for one case."""
    n, b = len(case.k), case.block  # the keys: as many as the queries, or more
    args = (case.q, case.k, case.v, b, case.causal)
    mistakes = (  # every tile computed: NaN from the keys no query sees
        [(_loop_variant(*args, skip=False), _masked_tile_read(case))] if _unseen(case) else []
    )
    top = _top_score(case.q, case.k, case.causal)
    if top > _EXP_OVERFLOWS:  # exp of a score overflows: the running max is what saves it
        mistakes += [
            (
                _loop_variant(*args, shift="none"),
                f"Your loop takes exp of the scores without subtracting the running max: the "
                f"scores here reach {top:,.0f}, and exp of anything above "
                f"{_EXP_OVERFLOWS:.0f} is inf, so rows come out nan. Keep a running max m for "
                "each query row, subtract it inside every exp, and rescale l and acc by "
                "exp(m_old - m_new) when it grows (8.2 and 8.3).",
            ),
            (
                _loop_variant(*args, shift="first"),
                "Your loop subtracts the max of each query block's first tile and keeps it: "
                f"here the scores grow from key block to key block (up to {top:,.0f}), so a "
                "later tile's exp overflows. Update the running max with every tile and "
                "rescale l and acc by exp(m_old - m_new) when it grows (8.2 and 8.3).",
            ),
        ]
    last = f"{n - n % b}:{n}"
    mistakes += (
        []
        if n % b == 0 and len(case.q) % b == 0
        else [
            (
                _loop_variant(*args, tail=False),
                f"Your loop leaves out the last, shorter block: with "
                f"{f'n = {n}' if len(case.q) == n else f'{n} keys'} and block = {b} the "
                f"{'' if len(case.q) == n else 'key '}blocks are 0:{b}, {b}:{min(2 * b, n)}, …, "
                f"{last}. Step with range(0, n, block) and end each block at "
                "min(start + block, n), "
                "so the last block takes whatever is left.",
            ),
        ]
    )
    mistakes += [
        (
            _loop_variant(*args, divide=False),
            "Your rows are not divided by l: acc is the sum "
            "of exp(s - m) · v, and the output is acc / l, once per query block, after its last "
            "key block.",
        ),
    ]
    if case.causal and not _unseen(case):  # with unseen keys: NaN, the masked tile's reason
        mistakes += [
            (
                _plain(case.q, case.k, case.v, False),
                "Your output ignores causal=True: every "
                "query sees every key. Skip the tiles that lie wholly after the query block and "
                "mask the keys after each query inside the tiles that cross the diagonal.",
            ),
        ]
    if case.causal:
        mistakes += [
            (
                _loop_variant(*args, skip_diagonal=True),
                "You skip the tiles on the diagonal "
                "too: a query block must still see the key block at its own positions (each "
                "query sees itself). Skip a tile only when its first key comes after the "
                "block's last query.",
            ),
        ]
    if case.causal and b > 1:  # 1 × 1 tiles need no mask inside them
        mistakes += [
            (
                _loop_variant(*args, diagonal_mask=False),
                "You skip the tiles wholly above "
                "the diagonal, but inside the tiles that cross it the keys after each query are "
                "still read. Mask them there: key position j > query position i gets -inf.",
            ),
            (
                _loop_variant(*args, local=True),
                "Your causal mask compares positions within "
                "the tile (0, 1, 2, …) instead of positions in the sequence: a tile below the "
                "diagonal then loses keys that come before its queries. Compare i0 + r with "
                "j0 + c, the tile's offsets added.",
            ),
        ]
    return mistakes


@dataclass(frozen=True)
class MemoryUse:
    """What one call of an answer cost in memory: what it ``allocated`` at its peak, and what
    the notebook ``held`` when it began (arrays the answer cells keep, named ``holders`` where
    known)."""

    allocated: int
    held: int = 0
    holders: tuple = ()

    @property
    def total(self) -> int:
        return self.allocated + self.held


def _arrays_in(value, depth: int = 0) -> list[np.ndarray]:
    """The arrays ``value`` is or holds (in lists, tuples, sets and dict values, two deep)."""
    if isinstance(value, np.ndarray):
        return [value]
    if depth >= 2 or not isinstance(value, list | tuple | set | frozenset | dict):
        return []
    items = value.values() if isinstance(value, dict) else value
    return [a for item in list(items)[:10_000] for a in _arrays_in(item, depth + 1)]


#: The type of what ``functools.lru_cache`` and ``functools.cache`` return.
_CACHE_WRAPPER = type(functools.lru_cache(maxsize=1)(abs))


def _kept_by_function(value) -> list:
    """What a function keeps alive from one call to the next: its default arguments, the
    variables it closes over, its attributes, and for a ``functools.lru_cache`` or ``cache``
    wrapper, every result (and key) it caches, then the same of the function it wraps.
    Nothing for what is not a function (grading counts all of these as held: they were
    allocated by the answer cells and are alive when a measured call begins).

    Examples
    --------
    >>> def f(x, scratch=np.zeros(1000)):
    ...     return x
    >>> [a.nbytes for a in _kept_by_function(f) if isinstance(a, np.ndarray)]
    [8000]
    >>> @functools.cache
    ... def g(n):
    ...     return np.zeros(n)
    >>> _ = g(500)
    >>> [a.nbytes for a in _kept_by_function(g) if isinstance(a, np.ndarray)]
    [4000]
    """
    kept, seen, stack = [], set(), [value]
    while stack:
        function = stack.pop()
        if id(function) in seen:
            continue
        seen.add(id(function))
        if isinstance(function, _CACHE_WRAPPER):
            own = (getattr(function, "__dict__", None), getattr(function, "__wrapped__", None))
            for ref in gc.get_referents(function):  # a bounded cache's keys and results
                if isinstance(ref, type) or any(ref is o for o in own):
                    continue
                kept += list(ref.values()) if isinstance(ref, dict) else [ref]  # or its dict
            stack.append(getattr(function, "__wrapped__", None))
        elif isinstance(function, functools.partial):
            kept += [*function.args, *function.keywords.values()]
            stack.append(function.func)
        elif isinstance(function, types.FunctionType):
            kept += list(function.__defaults__ or ())
            kept += list((function.__kwdefaults__ or {}).values())
            for cell in function.__closure__ or ():
                try:
                    kept.append(cell.cell_contents)
                except ValueError:  # a variable not yet bound
                    continue
            kept += list(vars(function).values())
    return kept


def held_by_answer_cells(namespace=None, cells=None) -> MemoryUse:
    """The arrays, whatever their size, that the notebook's lesson-8 answer cells keep under
    their top-level names (a try-it's inputs and output, say), and the lists, dicts, sets,
    strings and bytes they keep (each one's own block), as grading counts them towards 8.4's
    memory: grading runs the answer cells and counts every block the student's code holds
    when a measured call begins, whatever its size (:func:`attnlab.grading.worker._held`;
    when only blocks of 64 KB or more counted, 48 buffers of 64,000 bytes held a whole row
    of scores). What the answer cells' functions keep counts too: default arguments, closed
    over variables and the results an ``lru_cache`` keeps (:func:`_kept_by_function`).

    ``namespace`` and ``cells`` (the code of the cells run) default to the running IPython's
    (``user_ns`` and its input history); outside IPython nothing is held. A cell is an answer
    cell when it defines one of lesson 8's answer functions.

    Examples
    --------
    >>> cells = ["def tiled_loop(q, k, v, block, causal): pass", "q_try = x"]
    >>> cells = [cells[0] + chr(10) + cells[1]]  # one answer cell: the function and a try
    >>> use = held_by_answer_cells({"q_try": np.zeros((512, 32)), "x": 1}, cells)
    >>> use.held, use.holders
    (131072, ('q_try',))
    >>> small = [np.zeros(8000) for _ in range(48)]  # 64,000 bytes each
    >>> held_by_answer_cells({"q_try": small}, cells).held >= 48 * 64_000
    True
    """
    if namespace is None or cells is None:
        shell = running_shell()
        if shell is None:
            return MemoryUse(0)
        namespace, cells = shell.user_ns, cells_run(shell)
    answers = {e.answer for key, e in EXERCISES.loaded().items() if key.startswith("8.")}
    names: set[str] = set()
    for code in cells:
        if isinstance(code, str) and any(f"def {a}" in code for a in answers):
            bound = top_level_names(code)
            if bound & answers:
                names |= bound
    seen, held, holders = set(), 0, []
    for name in sorted(names):
        value, mine = namespace.get(name), 0  # bytes of this name's, counted once
        # a function's own block is not counted; what it keeps (defaults, closure, cache) is
        label = f"what {name} keeps between calls" if callable(value) else name
        values = _kept_by_function(value) if callable(value) else [value]
        for value in values:
            if isinstance(value, list | dict | set | bytes | bytearray | str):
                if id(value) not in seen:
                    seen.add(id(value))
                    mine += sys.getsizeof(value)  # its own block: a list's pointers, a dict's
            for array in _arrays_in(value):
                owner = array
                while isinstance(owner.base, np.ndarray):
                    owner = owner.base
                if owner.nbytes >= _NAMED:
                    holders.append(label)  # a view of an array counted under another name
                if id(owner) not in seen:
                    seen.add(id(owner))
                    mine += owner.nbytes
        held += mine
        if mine >= _NAMED:
            holders.append(label)
    return MemoryUse(0, held, tuple(dict.fromkeys(holders)))


#: What a name of an answer cell's must hold to be named in 8.4's reason (all of it counts).
_NAMED = 1024


def _peak_of(answer, *args):
    """Call ``answer`` (as :func:`call_watching` does) and measure its memory: a
    :class:`MemoryUse`, with what the notebook held (:func:`held_by_answer_cells`).

    An answer that runs elsewhere (the grader's :class:`~attnlab.grading.remote.RemoteFunction`)
    is measured where it runs and reports ``last_peak`` (held memory included) and
    ``last_held``.
    """
    if hasattr(answer, "last_peak") and hasattr(answer, "measure"):
        answer.measure = True
        try:
            got, messages = call_watching(answer, *args)
        finally:
            answer.measure = False
        if answer.last_peak is None:
            raise Wrong("The memory your function used could not be measured.")
        held = getattr(answer, "last_held", None) or 0
        return got, messages, MemoryUse(answer.last_peak - held, held)
    call_watching(lambda *_: 0, *args)  # the first call imports what the checking needs
    peaks = []

    def measured(*arguments):
        # only the answer's own call is measured, as where grading runs it: the check's copy
        # of the inputs (to see they are left unchanged) and its comparison are not the answer's
        tracemalloc.reset_peak()
        start = tracemalloc.get_traced_memory()[0]
        try:
            return answer(*arguments)
        finally:
            peaks.append(tracemalloc.get_traced_memory()[1] - start)

    tracing = tracemalloc.is_tracing()
    if not tracing:
        tracemalloc.start()
    try:
        got, messages = call_watching(measured, *args)
        held = held_by_answer_cells()
        return got, messages, MemoryUse(peaks[-1], held.held, held.holders)
    finally:
        if not tracing:
            tracemalloc.stop()


def _as_loop_result(got, what, shape) -> tuple[np.ndarray, object]:
    if not isinstance(got, tuple | list) or len(got) != 2:
        raise Wrong(
            f"{what} should return two things, (output, tiles): the output of shape "
            f"{shape} and the number of tiles your loop computed; yours returned "
            f"{one_line(got)}."
        )
    out, tiles = got
    try:
        out = np.asarray(out, dtype=float)
    except (TypeError, ValueError):
        raise Wrong(
            f"{what}: the output should be an array of numbers of shape {shape}; got "
            f"{one_line(out)}."
        ) from None
    if out.shape != shape:
        raise Wrong(
            f"{what}: the output should have shape {shape}, one row per query, but "
            f"yours has shape {out.shape}."
        )
    return out, tiles


#: How many (block, block) tiles of float64 scores a tiled loop may hold at once (the scores,
#: their mask, their exponentials and a product or two), before the output and the inputs.
_TILES = 8
#: Python's own bookkeeping during a call (frames, small arrays, the running max and sum).
_FIXED = 64 * 1024
#: What a loop may keep for each block of keys: a view of k and one of v (``np.array_split``
#: makes them all at once), their places in a list and the block's start, with room to spare.
_PER_KEY_BLOCK = 2 * 256


def _deep_size(value) -> int:
    """The bytes Python holds for a returned output: an array's data, or a (nested) list's
    objects (a list of 2048 rows of 8 floats is several times the array it came from)."""
    if isinstance(value, np.ndarray):
        return value.nbytes
    if isinstance(value, list | tuple):
        return sys.getsizeof(value) + sum(_deep_size(item) for item in value[:100_000])
    return sys.getsizeof(value)


def memory_budget(case: LoopCase, output=None) -> int:
    """The most a tiled loop may allocate on ``case``: a few (block, block) tiles of float64
    scores, the output (twice over in float64, plus the object returned when it is not an
    array), one copy of q (a scaled or cast q), a view of k and of v per key block and a
    little bookkeeping.

    Nothing here grows with n_k: k and v are read a block at a time (a slice is a view), so
    a copy of either is not in the budget. On 4 queries against 250,000 keys of one dimension
    a copy of k is exactly one query's row of scores against every key, so a budget that
    allowed the copy would let a loop over single query rows through, a whole-row softmax
    done in place (the red team's attack). A loop that holds the scores of a query block
    against every key, or a mask for the whole sequence, goes over it too.
    """
    n_q, n_k, d_v = len(case.q), len(case.k), case.v.shape[1]
    tile = min(case.block, n_q) * min(case.block, n_k) * 8
    out = n_q * d_v * 8
    returned = 0 if output is None or isinstance(output, np.ndarray) else _deep_size(output)
    scaled_q = case.q.size * 8
    key_blocks = -(-n_k // case.block) * _PER_KEY_BLOCK
    return _TILES * tile + 2 * out + returned + scaled_q + key_blocks + _FIXED


def _measured(case) -> bool:
    """Whether the check holds ``case`` to :func:`memory_budget`: where the whole score matrix
    (1 MB or more) dwarfs a few tiles; on short cases the fixed costs of a call dominate."""
    return len(case.q) * len(case.k) * 8 >= 2**20


def _check_memory(case, output, use: MemoryUse, what) -> None:
    """:class:`Wrong` when the call allocated, with what the notebook held, more than
    :func:`memory_budget` allows."""
    if not _measured(case):
        return
    budget = memory_budget(case, output)
    peak = use.total
    if peak <= budget:
        return
    n_q, n_k, b = len(case.q), len(case.k), case.block
    tile = min(b, n_q) * min(b, n_k) * 8
    room = (
        f"A tiled loop needs a few ({min(b, n_q)}, {min(b, n_k)}) tiles of scores "
        f"({tile:,} bytes each in float64), the output and a copy of q: {budget:,} bytes at "
        "most here"
    )
    if use.held:
        holders = f" ({', '.join(use.holders)})" if use.holders else ""
        kept = (
            f"{what}: the output is right, but your function allocated {use.allocated:,} "
            f"bytes at its peak, and your notebook held {use.held:,} bytes more in arrays "
            f"your answer cells keep{holders}: {peak:,} in all. {room}, and memory your code "
            "holds when the call begins counts too, whatever the size of each array. Delete a "
            "try-it's arrays at the end of its cell (del and their names), or try your loop in "
            "a scratch cell of its own; a function's default argument or cache keeps its "
            "arrays as long as the function lives."
        )
        if use.allocated <= budget:
            raise Wrong(kept)
    said = (
        f"{what}: the output is right, but your function allocated {use.allocated:,} bytes at "
        f"its peak. {room} (what your code keeps from before the call counts too: an array "
        "made when a cell ran, a default argument, a cache)."
    )
    if use.held:
        said = kept
    peak = use.allocated  # what the loop's shape explains
    d_k, d_v = case.k.shape[1], case.v.shape[1]
    if case.causal and n_q == n_k:
        built = n_q * n_k  # the whole sequence's mask, in booleans
        cause = (
            f"Something as large as the sequence squared was built: most often the causal "
            f"mask for the whole sequence (a {n_q} × {n_k} array of booleans is "
            f"{n_q * n_k:,} bytes, of floats {n_q * n_k * 8:,}). Build each tile's mask "
            "inside the loop, from the positions of its queries (i0 to i1) and its keys "
            "(j0 to j1), so it is never bigger than the tile."
        )
    elif n_q < b:
        built = n_k * 4  # one query's row of scores, in float32
        cause = (
            f"Something that grows with the number of keys was made. One query's row of "
            f"scores against all {n_k:,} keys is {n_k * 8:,} bytes ({n_k * 4:,} in float32), "
            "even with its softmax done in place. Walk over "
            "the keys in blocks, folding each tile into the running max, sum and acc (8.2 and "
            "8.3), instead of taking one softmax over a whole row, even one query at a time."
        )
    else:
        built = b * n_k * 4  # one query block's strip of scores against every key, float32
        cause = (
            f"That is what scores against all {n_k:,} keys at once cost: one query block's "
            f"row of tiles, ({b}, {n_k}), is {b * n_k * 8:,} bytes, the whole {n_q} × {n_k} "
            f"score matrix {n_q * n_k * 8:,}. Walk over the keys in blocks too, folding each "
            "tile into the running max, sum and acc (8.2 and 8.3) instead of taking one "
            "softmax over the whole row."
        )
    copy = n_k * min(d_k, d_v) * 4  # the smallest copy of k or v: the smaller one in float32
    copied = (
        f"A copy of k or v costs as much ({n_k * d_k * 8:,} and {n_k * d_v * 8:,} bytes in "
        "float64, half that in float32): np.array(k), k.astype(...) and k / np.sqrt(d_k) all "
        "copy. Use k and v as they are given and scale or convert one block at a time: "
        "k[j0:j1] is a view and costs nothing."
    )
    positions = n_k * np.dtype(np.int64).itemsize  # np.arange(n_k): every key's position
    if peak >= positions > budget - _TILES * tile:  # more than the room beside the tiles
        copied = (
            f"An array of every key's position or index costs as much: np.arange({n_k}) is "
            f"{positions:,} bytes of int64 (a list of them several times that). Make the "
            "positions of one tile's keys at a time, np.arange(j0, j1), inside the loop. "
            f"{copied}"
        )
    if peak < built and peak >= copy:  # too little for what the loop shape would build
        cause = copied
    elif peak >= copy:
        cause = f"{cause} {copied}"
    raise Wrong(f"{said} {cause}")


def _loop_what(case) -> str:
    return f"tiled_loop(q, k, v, block={case.block}, causal={case.causal}) for {case.description}"


def _judge_loop(got, case, messages, use: MemoryUse) -> None:
    """Judge ``(output, tiles)`` for one of :func:`loop_cases`, and the memory ``use`` of the
    call."""
    n, d_v = len(case.q), case.v.shape[1]
    what = _loop_what(case)
    out, tiles = _as_loop_result(got, what, (n, d_v))
    expected = _plain(case.q, case.k, case.v, case.causal)  # (n, d_v)
    if not np.all(_close(out, expected)):
        said = f"{what}: the output should be {short(expected)}, but yours gave {short(out)}."
        hidden = _looks_equal(short(out), short(expected), [out], [expected])
        cause = next(
            (text for wrong, text in _loop_mistakes(case) if np.all(_close(out, wrong))), ""
        )
        if not cause and _unseen(case) and not np.all(np.isfinite(out)):
            cause = f"Yours holds nan or inf. {_masked_tile_read(case)}"
        if not cause and not np.all(np.isfinite(out)) and any("overflow" in m for m in messages):
            top = _top_score(case.q, case.k, case.causal)
            cause = (
                "Yours holds nan or inf, and numpy warned of an overflow: the scores here "
                f"reach {top:,.0f}. exp of a score above {_EXP_OVERFLOWS:.0f} is "
                f"inf in float64 (above {np.log(np.finfo(np.float32).max):.0f} in float32), "
                f"and float16 holds no number above {float(np.finfo(np.float16).max):,.0f}. "
                "Subtract the running max inside every exp, and keep the scores in float32 "
                "or float64."
            )
        if not cause:
            bad = ~np.all(_close(out, expected), axis=1)
            row = int(np.flatnonzero(bad)[0])
            cause = (
                f"Row {row} (query {row}) should be {_digits(expected[row])}, not "
                f"{_digits(out[row])}."
                + ("" if np.all(np.isfinite(out)) else " Yours holds nan or inf.")
            )
        raise Wrong(f"{said}{hidden} {cause}{warned(messages)}")
    if messages:
        raise Wrong(
            f"{what}: the output is right, but numpy warned: "
            f"{'; '.join(messages)}. Your function must not warn."
        )
    _check_memory(case, got[0], use, what)
    if isinstance(tiles, bool | np.bool_) or not isinstance(tiles, numbers.Integral):
        raise Wrong(
            f"{what}: the output is right; tiles should be the whole number of "
            f"tiles your loop computed, {case.tiles}; got {one_line(tiles)}."
        )
    if int(tiles) == case.tiles:
        return
    blocks = -(-n // case.block)  # query blocks
    key_blocks = -(-len(case.k) // case.block)
    said = (
        f"{what}: the output is right, but your loop says it computed {int(tiles)} "
        f"tiles; it should compute {case.tiles}."
    )
    if case.causal and int(tiles) == blocks * key_blocks:
        cause = (
            f"That is all {blocks} × {key_blocks} tiles: with causal=True the tiles whose "
            "first key comes after the query block's last query are all masked, so "
            "skip them (about half the work) instead of computing them."
        )
    elif int(tiles) == blocks:
        cause = (
            "That is one per query block: count every (query block, key block) tile "
            "you compute, inside the inner loop."
        )
    else:
        cause = (
            "Count one tile each time your inner loop computes a block of scores; "
            "skip (and do not count) the tiles wholly above the diagonal."
        )
    raise Wrong(f"{said} {cause}")


tiled_loop = Exercise(
    "Exercise 8.4 (the whole tiled loop)",
    Cases(
        loop_cases,
        _judge_loop,
        inputs=lambda c: (c.q, c.k, c.v, c.block, c.causal),
        what=_loop_what,
        call=_peak_of,
        measures_memory=True,
        fresh=loop_fresh,
    ),  # the judge also gets the bytes each call allocated
    hints=[
        "Two loops: the outer one over query blocks, the inner one over key blocks. Each "
        "query block starts with fresh running values (m = -inf, l = 0, acc = 0) and writes "
        "its rows of the output after its last key block. What if the block does not divide "
        "n, and which tiles can a causal loop leave out?",
        "Blocks start at 0, block, 2·block, … and end at the smaller of start + block and n. "
        "A tile is wholly above the diagonal when its first key comes after the last query "
        "of the block; a tile that crosses the diagonal still needs a mask built from the "
        "positions in the whole sequence. Your `attention_step` from 8.3 can fold each tile.",
        "For each query block: set up m, l and acc for its rows; for each key block, stop "
        "(or skip) when causal and the key block starts after the block's last query; else "
        "compute that tile's scaled scores, mask the later keys with −∞ when causal, fold the "
        "tile in and add one to your tile count. After the key blocks, divide acc by l into "
        "the output rows.",
    ],
    forbidden=_LIBRARY_ATTENTION + _WHOLE_ROW_SOFTMAX,
    id="8.4",
    attr="tiled_loop",
    answer="tiled_loop",
    points=2,
    grade_id="check-tiled-loop",
)
