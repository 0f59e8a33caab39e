"""Lesson 9 — watch a head learn: the checked exercises.

* :data:`vjp` (9.1): ``softmax_vjp(w, g)`` takes softmax weights ``w`` (..., n) and the
  gradient ``g = ∂L/∂w`` of the same shape, and returns ``∂L/∂s`` for the scores ``s`` with
  ``w = softmax(s)`` along the last axis. The check compares it with **central finite
  differences** of ``L(s) = Σ g · softmax(s)`` in float64 (masked scores, ``-inf``, are held
  fixed: their gradient is 0), and on one long row of :data:`LONG_ROW` weights with the
  library's VJP.
* :data:`backward_step` (9.2): ``attention_grads(q, k, v, g)`` returns ``(dq, dk, dv)``, the
  gradients of ``L = Σ g · attention(q, k, v)`` for unmasked attention with scale 1/√d_k;
  the reference is :func:`attnlab.backward.attention_backward`, itself tested against finite
  differences. The last case is :data:`LONG_ATTENTION` (n queries and keys, width d).
* :data:`reads` (9.3): ``tokens_read()`` returns, for each query of the probe sequence, the
  key token its row weights most in the heatmap of the run with d_k = 16 (÷ √d_k, seed 0) at
  step :data:`READ_STEP`, part-way through training, read off the heatmap.

9.1 and 9.2 ask for **backward passes**, and a backward pass costs a small multiple of the
forward pass, so each call is held to :func:`time_limit`: :data:`FORWARD_PASSES` times the
course's own forward pass on the same inputs, timed just before (never less than
:data:`FLOOR_SECONDS`, never more than grading's per-call limit). Differencing a forward pass
input by input (central or one-sided finite differences, complex-step differences, exact as
they are) costs one or two forward passes per input, :data:`LONG_ROW` of them for the long row
and 3 n d for the long attention, thousands of times the limit; it is stopped there, in the
learner's check as in grading, whatever its accuracy. One derivative of the forward softmax
*along* ``g`` (a single complex step) is accepted in 9.1, and the lesson says so: the softmax
Jacobian is symmetric, so that derivative, ``J g``, is the VJP ``Jᵀ g``, in one forward pass
and exact to rounding; 9.2's Jacobians are not symmetric. The Jacobian of the long row (or a
vectorised difference, one perturbed copy of the row per score) would take ``LONG_ROW ** 2``
numbers: numpy's ``MemoryError`` is named as such.

Known mistakes are named from what the answer returns (or how long it takes, or how much
memory it asks for): differences instead of a backward pass, an n × n Jacobian on the long
row; the diagonal of the Jacobian only, a missing factor ``w``, an unweighted sum, the wrong
axis, a missing ``keepdims``, the sign; a missing 1/√d_k (or 1/√d_v in its place), the softmax
skipped, ``W G`` for ``Wᵀ G``, ``∂S Q`` for ``∂Sᵀ Q``, dq and dk swapped; the finished pattern
instead of the one at that step, the diagonal, positions instead of tokens.

Examples
--------
>>> vjp.check(None).outcome.name
'NOT_ATTEMPTED'
>>> "diagonal" in vjp.check(lambda w, g: w * (1 - w) * g).message
True
>>> backward_step.check(None).outcome.name
'NOT_ATTEMPTED'
"""

from __future__ import annotations

import functools
import math
import time
from dataclasses import dataclass

import numpy as np

import attnlab
from attnlab._kernels import softmax_vjp_unchecked
from attnlab.backward import attention_backward
from attnlab.examples import cat_sat_down, dog_bites_man
from attnlab.exercises.kit.calling import CALL_LIMIT, OverTimeLimit, call_watching
from attnlab.exercises.kit.cases import Cases
from attnlab.exercises.kit.display import one_line, short, warned
from attnlab.exercises.kit.exercise import Exercise
from attnlab.exercises.kit.judging import as_numbers, recognised
from attnlab.exercises.kit.outcomes import Wrong
from attnlab.exercises.kit.precision import judging_tolerance
from attnlab.training import PROBE, train

__all__ = [
    "FLOOR_SECONDS",
    "FORWARD_PASSES",
    "LONG_ATTENTION",
    "LONG_ROW",
    "READ_STEP",
    "attention_cases",
    "backward_step",
    "probe_heatmap",
    "reads",
    "reads_cases",
    "time_limit",
    "vjp",
    "vjp_cases",
]

READ_STEP = 80  #: the training step whose heatmap 9.3 asks about
_LIBRARY = (
    "attnlab.backward.softmax_vjp",
    "attnlab._kernels.softmax_vjp_unchecked",
    "attnlab.backward.attention_backward",
    "attnlab.backward.self_attention_backward",
)


#: The length of 9.1's long row: the softmax VJP of it takes milliseconds; its Jacobian would
#: hold LONG_ROW² numbers (320 GB of float64), differences LONG_ROW forward passes of it.
LONG_ROW = 200_000
#: (n, d) of 9.2's long case: n queries and n keys of width d (d_k = d_v = d); differences
#: need 3 n d forward passes of O(n² d) work, a backward pass a few matrix products.
LONG_ATTENTION = (512, 64)
#: How many forward passes a call may cost (:func:`time_limit`): a backward pass costs a small
#: multiple of one, differences one or two per input (200,000 for the long row).
FORWARD_PASSES = 100
#: The least time a call is allowed (seconds), whatever the forward pass costs: many times
#: what a right answer takes on the longest case (milliseconds), far below what differencing
#: it takes (minutes).
FLOOR_SECONDS = 2.0


# ---------------------------------------------------------------- the cost of a backward pass
def _seconds(forward) -> float:
    """The shortest of three runs of ``forward()`` (seconds): what it costs on this machine now."""
    best = math.inf
    for _ in range(3):
        began = time.perf_counter()
        forward()
        best = min(best, time.perf_counter() - began)
    return best


def time_limit(forward_seconds: float) -> float:
    """The longest a backward pass may take (seconds), given its forward pass's time.

    Parameters
    ----------
    forward_seconds : float
        What the course's forward pass on the same inputs takes on this machine (seconds).

    Returns
    -------
    float
        :data:`FORWARD_PASSES` forward passes, never less than :data:`FLOOR_SECONDS` and never
        more than grading's per-call limit (:data:`~attnlab.exercises.kit.calling.CALL_LIMIT`).

    Examples
    --------
    >>> time_limit(0.001), time_limit(0.05), time_limit(1.0)
    (2.0, 5.0, 20.0)
    """
    return min(CALL_LIMIT, max(FLOOR_SECONDS, FORWARD_PASSES * forward_seconds))


#: Inputs with fewer numbers than this are not timed: their forward pass takes microseconds,
#: so :func:`time_limit` is :data:`FLOOR_SECONDS` however slow the machine.
_TIMED_FROM = 10_000


def _held_to_its_forward_pass(forward):
    """A ``Cases(call=...)``: time ``forward(*arguments)`` (the course's forward pass on the
    call's inputs), then call the answer within :func:`time_limit` of it; a call over the
    limit raises :class:`OverTimeLimit` carrying that forward time (``forward_seconds``)."""

    def timed_call(answer, *arguments):
        size = sum(np.size(a) for a in arguments)
        seconds = _seconds(lambda: forward(*arguments)) if size >= _TIMED_FROM else None
        try:
            return call_watching(answer, *arguments, limit=time_limit(seconds or 0.0))
        except OverTimeLimit as exc:
            exc.forward_seconds = seconds
            raise

    return timed_call


def _duration(seconds: float) -> str:
    """``seconds`` as a learner reads a time: ``'3.1 ms'``, ``'2 s'``."""
    return f"{seconds:.2g} s" if seconds >= 0.1 else f"{seconds * 1e3:.2g} ms"


def _too_costly(exc, what: str, per_input: str, inputs: int, also: str) -> str | None:
    """The reason for a call over :func:`time_limit`, or None when ``exc`` is another failure:
    what differences would cost (``per_input``, ``inputs`` of them), what else is as slow
    (``also``, a sentence)."""
    if not isinstance(exc, OverTimeLimit):
        return None
    forward = getattr(exc, "forward_seconds", None)
    measured = (
        f"the course's forward pass on these inputs takes {_duration(forward)} here, and the "
        f"check allows {FORWARD_PASSES} times that, at least {FLOOR_SECONDS:g} s"
        if forward is not None
        else f"on inputs this small the check allows {FLOOR_SECONDS:g} s"
    )
    return (
        f"{what} took longer than {exc.limit:.2g} s, the most the check allows it. A backward "
        f"pass should cost about as much as the forward pass ({measured}). Differences, finite "
        f"or complex-step, exact as they may be, need {per_input}: {inputs:,} of them here, "
        f"far past any limit. {also} Derive the gradient and compute it with a few whole-array "
        "numpy operations."
    )


def _failed_as_stated(what: str, exc) -> str:
    """What a failed call reads as by default (``Cases``' ``what``): ``"<what> failed. <why>"``."""
    return f"{what} failed. {exc}"


# ---------------------------------------------------------------- 9.1 the softmax VJP
def _fd_scores_gradient(scores: np.ndarray, g: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """Central differences of ``Σ g · softmax(scores)`` over the finite scores (float64)."""
    grad = np.zeros_like(scores)
    for index in zip(*np.nonzero(np.isfinite(scores)), strict=True):
        up, down = scores.copy(), scores.copy()
        up[index] += eps
        down[index] -= eps
        grad[index] = (np.sum(g * attnlab.softmax(up)) - np.sum(g * attnlab.softmax(down))) / (
            2 * eps
        )
    return grad


@dataclass(frozen=True, eq=False)
class VjpCase:
    """Scores, their softmax weights, an upstream gradient ``g`` and the finite-difference
    gradient ``expected`` of ``Σ g · softmax(scores)``, with how the feedback names them."""

    description: str
    scores: np.ndarray
    weights: np.ndarray
    g: np.ndarray
    expected: np.ndarray


def vjp_cases() -> list[VjpCase]:
    """Scores, their softmax weights and an upstream gradient ``g``, with a description.

    One row (lesson 3's [2, 1, 1]); the scaled scores of "The cat sat down" (4, 4); a causal
    mask on five seeded tokens (masked scores are -inf, their weights 0); a batch (2, 3, 4);
    last, one long row of :data:`LONG_ROW` seeded scores, spread wide enough (× 4) that some
    weights are large and ``w · g`` matters (its reference is the library's VJP: differences
    of it are what this case rules out).
    """
    rng = np.random.default_rng(9)
    cat = cat_sat_down()
    cat_scores = attnlab.attention_scores(cat.x @ cat.w_q, cat.x @ cat.w_k)  # (4, 4)
    causal = np.where(attnlab.causal_mask(5), rng.normal(size=(5, 5)) * 2, -np.inf)  # (5, 5)
    sets = [
        (
            "the row [2, 1, 1] with g = [1, 0, 0]",
            np.array([2.0, 1.0, 1.0]),
            np.array([1.0, 0.0, 0.0]),
        ),
        ('the scaled scores of "The cat sat down" (4, 4)', cat_scores, rng.normal(size=(4, 4))),
        ("five tokens under a causal mask (5, 5)", causal, rng.normal(size=(5, 5))),
        (
            "a batch of two 3 × 4 score matrices (2, 3, 4)",
            rng.normal(size=(2, 3, 4)),
            rng.normal(size=(2, 3, 4)),
        ),
    ]
    cases = [
        VjpCase(text, scores, attnlab.softmax(scores), g, _fd_scores_gradient(scores, g))
        for text, scores, g in sets
    ]
    return [*cases, _long_row(_drawn_seed(90))]


def vjp_fresh(rng) -> list[VjpCase]:
    """Cases drawn anew for every grading (``Cases(fresh=...)``): one row of 3 to 8 scores, a
    causal mask on 3 to 6 tokens (weights of 0), and a batch (2 or 3, n_q, n_k), each with a
    random upstream gradient ``g``."""
    n, b = int(rng.integers(3, 9)), int(rng.integers(2, 4))
    m = int(rng.integers(3, 7))
    n_q, n_k = int(rng.integers(2, 5)), int(rng.integers(2, 6))
    causal = np.where(attnlab.causal_mask(m), rng.normal(size=(m, m)) * 2, -np.inf)  # (m, m)
    sets = [
        (f"a row of {n} scores", rng.normal(size=n) * 2, rng.normal(size=n)),
        (f"{m} tokens under a causal mask ({m}, {m})", causal, rng.normal(size=(m, m))),
        (
            f"a batch of {b} score matrices {n_q} × {n_k} ({b}, {n_q}, {n_k})",
            rng.normal(size=(b, n_q, n_k)),
            rng.normal(size=(b, n_q, n_k)),
        ),
    ]
    return [
        VjpCase(text, scores, attnlab.softmax(scores), g, _fd_scores_gradient(scores, g))
        for text, scores, g in sets
    ]


def _drawn_seed(seed: int) -> int:
    """A seed drawn from ``default_rng(seed)``: fixed in a learner's check, new with every
    grading salt (:func:`~attnlab.exercises.rules.grading_mode.salted_seeds`), so a long case
    built from it can be cached."""
    return int(np.random.default_rng(seed).integers(2**62))


def _read_only(*arrays) -> None:
    for array in arrays:
        array.flags.writeable = False


@functools.lru_cache(maxsize=2)
def _long_row(seed: int) -> VjpCase:
    """9.1's long row (built once per seed: the check tries many course helpers on its cases)."""
    rng = np.random.default_rng(seed)
    scores = rng.normal(size=LONG_ROW) * 4  # (LONG_ROW,)
    weights, g = attnlab.softmax(scores), rng.normal(size=LONG_ROW)  # (LONG_ROW,) each
    expected = softmax_vjp_unchecked(weights, g)  # (LONG_ROW,)
    _read_only(scores, weights, g, expected)
    return VjpCase(f"one long row of {LONG_ROW:,} weights", scores, weights, g, expected)


def _vjp_mistakes(w, g) -> list[tuple[np.ndarray, str]]:
    weighted = np.sum(w * g, axis=-1, keepdims=True)  # (..., 1)
    right = w * (g - weighted)
    out = [
        (
            w * g,
            "You kept only w ⊙ g, the first half of J g. Each weight also moves when any "
            "other score moves (∂w_i/∂s_j = −w_i w_j), so subtract w times (w · g), one "
            "dot product per row.",
        ),
        (
            w * (1 - w) * g,
            "You used only the diagonal of the Jacobian, w_i (1 − w_i): the "
            "off-diagonal entries −w_i w_j are missing. Raising one score lowers "
            "every other weight.",
        ),
        (
            g - weighted,
            "The factor w in front is missing: ∂L/∂s_i = w_i (g_i − w · g). A "
            "masked key (w = 0) must get gradient 0.",
        ),
        (
            w * (g - np.sum(g, axis=-1, keepdims=True)),
            "The sum you subtract must be weighted by the weights: w · g = Σ_j w_j g_j, "
            "not Σ_j g_j.",
        ),
        (
            w * (g - np.mean(g, axis=-1, keepdims=True)),
            "The sum you subtract must be weighted by the weights, w · g, not the plain mean of g.",
        ),
        (-right, "The sign is flipped: ∂L/∂s_i = w_i (g_i − w · g), not its negative."),
    ]
    if w.ndim >= 2:
        along_rows = w * (g - np.sum(w * g, axis=-2, keepdims=True))
        out.append(
            (
                along_rows,
                "You summed down the columns (axis 0 or -2). Each row is one "
                "softmax, so the dot product w · g runs along the last axis.",
            )
        )
        if w.shape[-1] == w.shape[-2] or w.shape[-2] == 1:
            flat = np.sum(w * g, axis=-1)  # (...,) without keepdims
            out.append(
                (
                    w * (g - flat[..., None, :]) if w.ndim >= 2 else None,
                    "Without keepdims=True the row sums (w · g) line up with the columns, "
                    "not the rows: keep the summed axis so each row subtracts its own.",
                )
            )
    return [(m, text) for m, text in out if m is not None]


def _as_array(got, shape, what) -> np.ndarray:
    array = as_numbers(got, what, shape)
    if array.shape != shape:
        raise Wrong(
            f"{what} should have shape {shape}, one gradient per score, but yours has "
            f"shape {array.shape}."
        )
    return array


#: How close a right gradient must be (the kit's :func:`judging_tolerance`): any answer may
#: have been computed in float32, and a gradient collects more roundings than a forward pass
#: (830 relative, about 1e-4; 9 absolute, about 1e-6); every known mistake is off by far more.
_RTOL, _ATOL = judging_tolerance(None, computed_in=np.float32, ulps=830, abs_ulps=9)


def _close(got, expected) -> bool:
    """Same shape and (to float32 rounding) the same values; never raises on shapes."""
    got, expected = np.asarray(got, dtype=float), np.asarray(expected, dtype=float)
    return got.shape == expected.shape and bool(np.allclose(got, expected, rtol=_RTOL, atol=_ATOL))


def _vjp_what(case) -> str:
    return f"For {case.description}, softmax_vjp(w, g)"


def _vjp_failed(exc, case) -> str:
    """Why a call failed: too slow or out of memory on the long row, said in terms of cost."""
    what, n = _vjp_what(case), case.weights.shape[-1]
    slow = _too_costly(
        exc,
        what,
        "one or two forward passes per score",
        case.weights.size,
        f"The Jacobian, or a Python loop over pairs of scores, takes n² = {n * n:,} steps.",
    )
    if slow:
        return slow
    if isinstance(exc.__cause__, MemoryError):
        gigabytes = n * n * 8 / 1e9
        return (
            f"{what} ran out of memory: an n × n array for a row of n = {n:,} weights holds "
            f"{n * n:,} numbers ({gigabytes:,.0f} GB of float64). That is the Jacobian "
            "diag(w) − w wᵀ, or one perturbed copy of the row per score. The VJP needs "
            "neither: w ⊙ (g − w · g) takes one dot product per row and a few arrays the size "
            "of w."
        )
    return _failed_as_stated(what, exc)


#: The one warning a right 9.1 may raise: the complex step as the lesson writes it, s = log w,
#: takes the log of a masked weight (0), which is -inf, and exp(-inf) gives the 0 back exactly.
_LOG_OF_ZERO = "divide by zero encountered in log"


def _judge_vjp(got, case, messages) -> None:
    """Judge the gradient ``got`` for one of :func:`vjp_cases`. Right numbers that warn are
    wrong, but for :data:`_LOG_OF_ZERO` alone on weights that hold a 0 (issue 41: the
    lesson's own complex step was refused for it)."""
    what = _vjp_what(case)
    got = _as_array(got, case.weights.shape, what)
    if _close(got, case.expected):
        if list(messages) == [_LOG_OF_ZERO] and np.any(np.asarray(case.weights) == 0):
            return
        if messages:
            raise Wrong(f"{what} is right, but numpy warned: {'; '.join(messages)}.")
        return
    said = (
        f"{what} should match the finite differences "
        f"{short(np.round(case.expected, 4))}, but yours gave {short(np.round(got, 4))}."
    )
    if not np.all(np.isfinite(got)):
        raise Wrong(
            f"{said} It holds nan or inf: a masked weight is 0, so multiply by w "
            f"rather than divide, and never take a log.{warned(messages)}"
        )
    cause = recognised(got, _vjp_mistakes(case.weights, case.g), rtol=_RTOL, atol=_ATOL)
    if not cause:
        row_sums = got.sum(axis=-1)
        cause = (
            "Every row of your gradient should add up to 0 (adding a constant to all "
            "scores changes no weight); yours add up to "
            f"{short(np.round(row_sums, 4))}."
            if not np.allclose(row_sums, 0, atol=1e-6)
            else "Compare yours with w ⊙ (g − w · g), row by row."
        )
    raise Wrong(f"{said} {cause}{warned(messages)}")


vjp = Exercise(
    "Exercise 9.1 (the gradient of softmax)",
    Cases(
        vjp_cases,
        _judge_vjp,
        inputs=lambda case: (case.weights, case.g),
        what=_vjp_what,
        failed=_vjp_failed,
        call=_held_to_its_forward_pass(lambda w, g: attnlab.softmax(w)),
        fresh=vjp_fresh,
    ),
    hints=[
        "The Jacobian of one softmax row is J = diag(w) − w wᵀ (lesson 2). You need Jᵀ g, and "
        "J is symmetric. Multiply it out on paper: what is entry i of diag(w) g, and what is "
        "entry i of w (wᵀ g)?",
        "Entry i is w_i g_i − w_i (w · g), where w · g = Σ_j w_j g_j is one number per row. "
        "Compute that dot product along the last axis, keeping the axis so it broadcasts back "
        "over the row.",
        "Work row-wise along the last axis: first the weighted sum of g (weights w), kept as a "
        "column with keepdims=True; then subtract it from g; then multiply by w elementwise. No "
        "n × n matrix is needed, and a weight of 0 must give a gradient of 0.",
    ],
    forbidden=_LIBRARY,
    id="9.1",
    attr="vjp",
    answer="softmax_vjp",
    points=2,
)


# ---------------------------------------------------------------- 9.2 one backward step
@dataclass(frozen=True, eq=False)
class BackwardCase:
    """q, k, v, the upstream gradient ``g`` and the reference ``expected = (dq, dk, dv)``, with
    how the feedback names them."""

    description: str
    q: np.ndarray
    k: np.ndarray
    v: np.ndarray
    g: np.ndarray
    expected: tuple


def attention_cases() -> list[BackwardCase]:
    """q, k, v and the upstream gradient g of three attentions, with a description.

    "The cat sat down" (4 tokens, d_k = d_v = 8); "dog bites man" (3 tokens, d = 4);
    seeded random queries against more keys, of other widths (n_q = 2, n_k = 5, d_k = 3,
    d_v = 2), where a transposed product has the wrong shape; last, :data:`LONG_ATTENTION`
    (seeded, n queries and keys of width d), where only a backward pass is fast enough.
    """
    rng = np.random.default_rng(99)
    cat, dog = cat_sat_down(), dog_bites_man()
    sets = [
        (
            '"The cat sat down" (n = 4, d_k = d_v = 8)',
            cat.x @ cat.w_q,
            cat.x @ cat.w_k,
            cat.x @ cat.w_v,
        ),
        ('"dog bites man" (n = 3, d_k = d_v = 4)', dog.q, dog.k, dog.v),
        (
            "2 queries and 5 keys (d_k = 3, d_v = 2)",
            rng.normal(size=(2, 3)),
            rng.normal(size=(5, 3)),
            rng.normal(size=(5, 2)),
        ),
    ]
    cases = []
    for text, q, k, v in sets:
        g = rng.normal(size=(q.shape[0], v.shape[1]))  # (n_q, d_v)
        cases.append(BackwardCase(text, q, k, v, g, attention_backward(q, k, v, g)))
    return [*cases, _long_attention(_drawn_seed(990))]


def backward_fresh(rng) -> list[BackwardCase]:
    """Cases drawn anew for every grading (``Cases(fresh=...)``): n_q ≠ n_k and d_k ≠ d_v
    (2 to 6 each), then self-attention on 3 to 6 tokens, with a random upstream gradient."""
    n_q, n_k = (int(size) for size in rng.choice(np.arange(2, 7), size=2, replace=False))
    d_k, d_v = (int(size) for size in rng.choice(np.arange(2, 7), size=2, replace=False))
    n = int(rng.integers(3, 7))
    sets = [
        (
            f"{n_q} queries and {n_k} keys (d_k = {d_k}, d_v = {d_v})",
            rng.normal(size=(n_q, d_k)),
            rng.normal(size=(n_k, d_k)),
            rng.normal(size=(n_k, d_v)),
        ),
        (
            f"{n} tokens (d_k = d_v = {d_k})",
            *(rng.normal(size=(n, d_k)) for _ in range(3)),
        ),
    ]
    cases = []
    for text, q, k, v in sets:
        g = rng.normal(size=(q.shape[0], v.shape[1]))  # (n_q, d_v)
        cases.append(BackwardCase(text, q, k, v, g, attention_backward(q, k, v, g)))
    return cases


@functools.lru_cache(maxsize=2)
def _long_attention(seed: int) -> BackwardCase:
    """9.2's long case (built once per seed: the check tries many course helpers on its cases)."""
    rng = np.random.default_rng(seed)
    n, d = LONG_ATTENTION
    q, k, v, g = (rng.normal(size=(n, d)) for _ in range(4))  # (n, d) each
    expected = tuple(attention_backward(q, k, v, g))  # (dq, dk, dv), (n, d) each
    _read_only(q, k, v, g, *expected)
    text = f"{n} queries and {n} keys (d_k = d_v = {d})"
    return BackwardCase(text, q, k, v, g, expected)


def _attention_mistakes(q, k, v, g) -> list[tuple[tuple, str]]:
    c = 1 / math.sqrt(q.shape[-1])
    w = attnlab.softmax(q @ k.T * c)  # (n_q, n_k)
    dw = g @ v.T  # (n_q, n_k)
    ds = softmax_vjp_unchecked(w, dw)  # (n_q, n_k)
    dv = w.T @ g  # (n_k, d_v)
    mistakes = [
        (
            (ds @ k, ds.T @ q, dv),
            "dq and dk are missing the factor 1/√d_k: the scores are "
            "Q Kᵀ / √d_k, so the chain rule carries 1/√d_k to both.",
        ),
        (
            (c * c * ds @ k, c * c * ds.T @ q, dv),
            "You applied 1/√d_k twice to dq and dk: once "
            "is enough (it is already inside the weights).",
        ),
        (
            (c * dw @ k, c * dw.T @ q, dv),
            "You skipped the softmax: ∂L/∂S is the softmax VJP of "
            "∂L/∂W = G Vᵀ, not ∂L/∂W itself (exercise 9.1).",
        ),
        (
            (c * ds.T @ q, c * ds @ k, dv),
            "dq and dk are swapped: ∂L/∂Q = (∂L/∂S) K / √d_k and ∂L/∂K = (∂L/∂S)ᵀ Q / √d_k.",
        ),
    ]
    d_v = v.shape[-1]
    if d_v != q.shape[-1]:
        cv = 1 / math.sqrt(d_v)
        w_v = attnlab.softmax(q @ k.T * cv)  # (n_q, n_k) weights scaled by 1/√d_v
        ds_v = softmax_vjp_unchecked(w_v, dw)
        mistakes.append(
            (
                (cv * ds_v @ k, cv * ds_v.T @ q, w_v.T @ g),
                f"You scaled by 1/√d_v = 1/√{d_v}, the width of v. The scale is 1/√d_k = "
                f"1/√{q.shape[-1]}, from the width of q and k (q.shape[-1]): the scores are "
                "dot products of queries with keys, so their size grows with d_k.",
            )
        )
    if w.shape[0] == w.shape[1]:
        mistakes += [
            (
                (c * ds @ k, c * ds.T @ q, w @ g),
                "dv should be Wᵀ G: key j collects the gradient "
                "of every query i in proportion to w_ij, a sum "
                "down column j.",
            ),
            (
                (c * ds @ k, c * ds @ q, dv),
                "dk should be (∂L/∂S)ᵀ Q / √d_k: key j collects from "
                "every query, a sum down column j of ∂L/∂S.",
            ),
        ]
    return mistakes


def _backward_what(case) -> str:
    return f"For {case.description}, attention_grads(q, k, v, g)"


def _backward_failed(exc, case) -> str:
    """Why a call failed: too slow said in terms of cost (differences need 3 n d passes)."""
    what = _backward_what(case)
    inputs = case.q.size + case.k.size + case.v.size
    slow = _too_costly(
        exc,
        what,
        "one or two forward passes per entry of q, k and v",
        inputs,
        "A Python loop over single numbers is too slow as well.",
    )
    return slow or _failed_as_stated(what, exc)


def _attention_forward(q, k, v, g):
    """The course's forward pass on a call's inputs (what :func:`time_limit` is measured by)."""
    return attnlab.scaled_dot_product_attention(q, k, v)


def _judge_backward(got, case, messages) -> None:
    """Judge the gradients ``got`` for one of :func:`attention_cases`."""
    names = ("dq", "dk", "dv")
    what = _backward_what(case)
    if not isinstance(got, tuple | list) or len(got) != 3:
        raise Wrong(
            f"{what} should return the three gradients (dq, dk, dv), e.g. "
            f"`return dq, dk, dv`; yours returned {one_line(got)}."
        )
    arrays = []
    for name, value, expected in zip(names, got, case.expected, strict=True):
        array = as_numbers(value, f"{what}: {name}", expected.shape, kind="an array")
        if array.shape != expected.shape:
            hint = (
                " (did you use W G instead of Wᵀ G?)"
                if name == "dv"
                else " (did you use ∂L/∂S Q instead of (∂L/∂S)ᵀ Q?)"
                if name == "dk"
                else ""
            )
            raise Wrong(
                f"{what}: {name} should have shape {expected.shape}, the shape of "
                f"{name[1]}, but yours has shape {array.shape}{hint}."
            )
        arrays.append(array)
    if all(_close(a, e) for a, e in zip(arrays, case.expected, strict=True)):
        if messages:
            raise Wrong(f"{what} is right, but numpy warned: {'; '.join(messages)}.")
        return
    cause = next(
        (
            text
            for wrong, text in _attention_mistakes(case.q, case.k, case.v, case.g)
            if all(_close(a, m) for a, m in zip(arrays, wrong, strict=True))
        ),
        "",
    )
    bad = [n for n, a, e in zip(names, arrays, case.expected, strict=True) if not _close(a, e)]
    first = bad[0]
    index = names.index(first)
    said = (
        f"{what}: {', '.join(bad)} {'is' if len(bad) == 1 else 'are'} not right; "
        f"{first} should be {short(np.round(case.expected[index], 4))}, but yours gave "
        f"{short(np.round(arrays[index], 4))}."
    )
    raise Wrong(f"{said} {cause or _generic_backward(first)}{warned(messages)}")


def _generic_backward(name: str) -> str:
    return {
        "dq": "Follow the chain: G → ∂L/∂W = G Vᵀ → ∂L/∂S by the softmax VJP → ∂L/∂Q = "
        "(∂L/∂S) K / √d_k.",
        "dk": "∂L/∂K = (∂L/∂S)ᵀ Q / √d_k, with ∂L/∂S the softmax VJP of G Vᵀ.",
        "dv": "∂L/∂V = Wᵀ G, with W the attention weights.",
    }[name]


backward_step = Exercise(
    "Exercise 9.2 (one attention backward step)",
    Cases(
        attention_cases,
        _judge_backward,
        inputs=lambda c: (c.q, c.k, c.v, c.g),
        what=_backward_what,
        failed=_backward_failed,
        call=_held_to_its_forward_pass(_attention_forward),
        fresh=backward_fresh,
    ),
    hints=[
        "Go backwards through the forward pass one line at a time: output = W V, "
        "W = softmax(S), S = Q Kᵀ / √d_k. Each line gives one gradient from the one after it.",
        "For output = W V: ∂L/∂V = Wᵀ G and ∂L/∂W = G Vᵀ. Through the softmax: your 9.1 "
        "gives ∂L/∂S from ∂L/∂W. For S = Q Kᵀ / √d_k: ∂L/∂Q uses K and ∂L/∂K uses Q, "
        "each with a 1/√d_k.",
        "Recompute the weights first (the stable softmax of the scaled scores). Then find the "
        "gradient of the weights from g and v, turn it into the gradient of the scores with "
        "your 9.1 function, and multiply that by k (for dq) or, transposed, by q (for dk), "
        "not forgetting the scale; dv comes from the transposed weights and g.",
    ],
    forbidden=_LIBRARY,
    id="9.2",
    attr="backward_step",
    answer="attention_grads",
    points=3,
)


# ---------------------------------------------------------------- 9.3 read the heatmap
def probe_heatmap(step: int = READ_STEP) -> np.ndarray:
    """The probe sequence's weights (n, n) at ``step`` of the run d_k = 16, ÷ √d_k, seed 0."""
    return _heatmap_at(step)


@functools.cache
def _heatmap_at(step: int) -> np.ndarray:
    """:func:`probe_heatmap`, trained once per step however the step is passed."""
    run = train(16, 0.5, seed=0)
    index = int(np.flatnonzero(run.eval_steps == step)[0])
    weights = run.weights[index]
    weights.flags.writeable = False
    return weights


def reads_cases() -> list[int]:
    """The training steps whose probe heatmap the checker reads (``tokens_read()`` takes no
    arguments): :data:`READ_STEP`."""
    return [READ_STEP]


def _judge_reads(got, step, messages) -> None:
    """Judge the tokens ``got`` read off the heatmap at ``step`` (warnings are not judged)."""
    weights = probe_heatmap(step)
    n = len(PROBE)
    expected = [PROBE[j] for j in weights.argmax(axis=1)]
    if isinstance(got, str) or not hasattr(got, "__len__"):
        raise Wrong(
            f"tokens_read() should return a list of {n} tokens, one per query (row), "
            f"e.g. ['A', 'B', ...]; yours returned {one_line(got)}."
        )
    got = list(np.asarray(got).tolist()) if isinstance(got, np.ndarray) else list(got)
    if len(got) != n:
        raise Wrong(
            f"tokens_read() should give one token per query, {n} in all (one per row "
            f"of the heatmap); yours gave {len(got)}."
        )
    if all(isinstance(t, int | np.integer) and not isinstance(t, bool) for t in got):
        raise Wrong(
            "Those are positions; return the tokens themselves, the labels of the "
            "columns (PROBE[j] for position j)."
        )
    got = [str(t) for t in got]
    if got == expected:
        return
    finished = list(PROBE[::-1])
    if got == finished:
        wrong_rows = [i for i in range(n) if expected[i] != finished[i]]
        raise Wrong(
            f"That is the reversed sequence, the pattern the head ends up with. At "
            f"step {step} it is not there yet: look again at the row of query "
            f"{wrong_rows[0]} ('{PROBE[wrong_rows[0]]}') and find its brightest cell."
        )
    if got == list(PROBE):
        raise Wrong(
            "That is each query's own token, the diagonal. Follow each row to its "
            "brightest cell and read the key label under it."
        )
    row = next(i for i in range(n) if got[i] != expected[i])
    raise Wrong(
        f"Row {row} (query '{PROBE[row]}'): its brightest cell is not under "
        f"'{got[row]}'. Read each row across to its largest weight, then down to the "
        f"key label."
    )


reads = Exercise(
    "Exercise 9.3 (which token does the head read?)",
    Cases(reads_cases, _judge_reads, inputs=lambda step: (), what=lambda step: "tokens_read()"),
    hints=[
        "Each row is one query. The token it reads most is the key whose cell is brightest in "
        "that row (the largest weight), whatever the task says it should read in the end.",
        f"The heatmap is the one at step {READ_STEP}, part-way through training: most rows "
        "already follow the anti-diagonal, not necessarily all. Go row by row.",
        "Write the answer as a list with one string per row, top row first; each string is "
        "the column label (a token) of that row's largest weight. Tokens repeat in the probe "
        "sequence, so either copy of a repeated token is the same answer.",
    ],
    id="9.3",
    attr="reads",
    answer="tokens_read",
    points=1,
)
