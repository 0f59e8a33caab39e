"""Lesson 10 — where is each token? Positions inside attention: the checked exercises.

* :data:`pair` (10.1): ``rotate_pair(pair, position, theta)`` turns one pair of dimensions
  ``[x, y]`` (shape (2,)) counterclockwise by the angle ``position · theta`` (radians), as
  RoPE turns pair ``i`` of a row at that position by ``position · θ_i``.
* :data:`whole_head` (10.2): ``rope_head(x, positions)`` is RoPE for every row of a head's
  queries (or keys) ``x`` of shape (n, d): row ``r`` sits at ``positions[r]``, and each pair
  of dimensions ``(2i, 2i+1)`` turns by ``positions[r] · θ_i`` with
  ``θ_i = BASE ** (-2i / d)``. One case sits at the end of a long context (positions near
  100,000), where angles computed in float32 are off by thousandths of a radian.
* :data:`rope_attention` (10.3): ``rope_attention(q, k, v, positions)`` is one head of
  unmasked self-attention with RoPE: queries and keys rotated by their positions (values
  never), scores scaled by 1/√d_k, softmax, times v.
* :data:`alibi` (10.4): ``causal_alibi(n_q, n_k, slopes)`` is ALiBi's causal bias, shape
  (h, n_q, n_k): ``-slopes[h] · (distance from query i to key j)`` for keys at or before the
  query, ``-inf`` after it; query ``i`` sits at position ``i + n_k - n_q`` (the last query is
  the last key, as :func:`attnlab.causal_mask` aligns them).

The references are :mod:`attnlab.positions` (:func:`~attnlab.positions.apply_rope`,
:func:`~attnlab.positions.alibi_bias`), itself tested against plain loops and the complex
form; the answers may not call it. Known mistakes are named from what the answer returns:
turning clockwise (the angle's sign), sine and cosine swapped, a position off by one (or the
row index in place of the positions given), the frequency exponent counting pairs instead of
dimensions, the "rotate half" pairing (i, i + d/2) in place of (2i, 2i+1), the rotated halves
not interleaved back, angles computed in float32; rotating v too, or only q or only k;
ALiBi's sign, its transpose, no -inf after the query, the first query at position 0 when
there are fewer queries than keys, the heads on the last axis.

Examples
--------
>>> pair.check(None).outcome.name
'NOT_ATTEMPTED'
>>> import numpy as np
>>> def clockwise(p, m, theta):
...     c, s = np.cos(m * theta), np.sin(m * theta)
...     return np.array([p[0] * c + p[1] * s, -p[0] * s + p[1] * c])
>>> "clockwise" in pair.check(clockwise).message
True
>>> alibi.check(None).outcome.name
'NOT_ATTEMPTED'
"""

from __future__ import annotations

import math

import numpy as np

import attnlab
from attnlab.examples import cat_sat_down
from attnlab.exercises.kit.cases import Cases
from attnlab.exercises.kit.display import one_line, short, warned
from attnlab.exercises.kit.exercise import Exercise
from attnlab.exercises.kit.judging import recognised
from attnlab.exercises.kit.outcomes import Wrong
from attnlab.exercises.kit.precision import compare, mismatch, precision_of, tolerance
from attnlab.positions import alibi_bias, apply_rope

__all__ = [
    "BASE",
    "LONG_CONTEXT",
    "alibi",
    "alibi_cases",
    "attention_cases",
    "head_cases",
    "pair",
    "pair_cases",
    "rope_attention",
    "whole_head",
]

#: RoPE's base in 10.2 and 10.3: ``θ_i = BASE ** (-2i / d)``, as in RoFormer and the lesson.
BASE = 10000.0
#: The first position of 10.2's long-context case: float32 numbers there are 1/128 apart.
LONG_CONTEXT = 100_000
_LIBRARY = ("attnlab.positions",)


def _rotated(x, angles) -> np.ndarray:
    """Pairs ``(x[..., 0::2], x[..., 1::2])`` turned by ``angles`` (..., d/2), float64."""
    x = np.asarray(x, dtype=float)
    even, odd = x[..., 0::2], x[..., 1::2]  # (..., d/2) each
    cos, sin = np.cos(angles), np.sin(angles)
    out = np.empty_like(x)
    out[..., 0::2] = even * cos - odd * sin
    out[..., 1::2] = even * sin + odd * cos
    return out


def _frequencies(d: int, exponent_of=lambda i, d: 2 * i / d) -> np.ndarray:
    """``BASE ** -exponent_of(i, d)`` for the pairs ``i = 0 .. d/2 - 1`` (d/2,)."""
    i = np.arange(d // 2)
    return BASE ** -exponent_of(i, d)


# ---------------------------------------------------------------- 10.1 one pair
def pair_cases() -> list[tuple[str, np.ndarray, int, float]]:
    """``(description, pair, position, theta)``: a pair turned by 1.5 radians, the point
    (1, 0) turned by 1 radian, a pair at position 0 (nothing turns), a pair of a slow kind far
    out."""
    return [
        ("the pair [0.6, -0.8] at position 3 with theta = 0.5", np.array([0.6, -0.8]), 3, 0.5),
        ("the pair [1, 0] at position 1 with theta = 1", np.array([1.0, 0.0]), 1, 1.0),
        ("the pair [2, 1] at position 0 with theta = 1", np.array([2.0, 1.0]), 0, 1.0),
        (
            "the pair [1.5, -0.5] at position 2000 with theta = 0.001",
            np.array([1.5, -0.5]),
            2000,
            0.001,
        ),
    ]


def pair_fresh(rng) -> list[tuple[str, np.ndarray, int, float]]:
    """Cases drawn anew for every grading (``Cases(fresh=...)``): a random pair at a position
    from 1 to 50 with theta from 0.05 to 1, and one at a position up to 5000 with theta from
    1e-4 to 1e-2."""
    cases = []
    for high, low_exp, high_exp in ((50, -1.3, 0.0), (5000, -4.0, -2.0)):
        p = np.round(rng.normal(size=2), 3)  # (2,)
        m = int(rng.integers(1, high + 1))
        theta = float(np.round(10 ** rng.uniform(low_exp, high_exp), 6))
        cases.append((f"the pair {short(p)} at position {m} with theta = {theta:g}", p, m, theta))
    return cases


def _turned(p, angle) -> np.ndarray:
    c, s = math.cos(angle), math.sin(angle)
    return np.array([p[0] * c - p[1] * s, p[0] * s + p[1] * c])


def _pair_mistakes(p, m, theta) -> list[tuple[np.ndarray, str]]:
    a = m * theta
    c, s = math.cos(a), math.sin(a)
    right = _turned(p, a)
    return [
        (
            _turned(p, -a),
            "You turned it clockwise, by −position·theta (the transposed rotation). RoPE "
            "turns counterclockwise: x' = x cos a − y sin a, y' = x sin a + y cos a.",
        ),
        (
            np.array([p[0] * s - p[1] * c, p[0] * c + p[1] * s]),
            "You swapped sine and cosine: x' = x cos a − y sin a, y' = x sin a + y cos a.",
        ),
        (
            right[::-1],
            "Your two numbers are the right ones in the wrong order: return [x', y'].",
        ),
        (
            _turned(p, (m + 1) * theta),
            "That is the angle for position + 1: the pair at position m turns by m·theta, "
            "so the first position, 0, does not turn at all.",
        ),
        (
            _turned(p, (m - 1) * theta) if m > 0 else None,
            "That is the angle for position − 1: the pair at position m turns by m·theta "
            "(positions count from 0, and position 0 does not turn).",
        ),
        (
            _turned(p, theta) if m != 1 else None,
            "You turned it by theta alone: the angle is position · theta, so a pair further "
            "along the sequence turns further.",
        ),
        (
            _turned(p, math.radians(a)),
            "You converted the angle from degrees: position · theta is already in radians, "
            "which is what np.cos and np.sin take.",
        ),
    ]


def _pair_what(case) -> str:
    return f"rotate_pair(pair, position, theta) for {case[0]}"


def _judge_pair(got, case, messages) -> None:
    """Judge the turned pair ``got`` for one of :func:`pair_cases`."""
    _, p, m, theta = case
    expected = _turned(p, m * theta)  # (2,)
    compare(got, expected, _pair_what(case), messages, _pair_mistakes(p, m, theta), p.dtype)


pair = Exercise(
    "Exercise 10.1 (rotate one pair)",
    Cases(pair_cases, _judge_pair, what=_pair_what, fresh=pair_fresh),
    hints=[
        "Think of the pair as a point in the plane. Turning it by an angle keeps its length "
        "and changes its direction; at position 0 nothing turns, and each step along the "
        "sequence adds theta to the angle.",
        "The angle is a = position · theta, in radians. A counterclockwise turn by a sends "
        "(x, y) to (x cos a − y sin a, x sin a + y cos a): the 2 × 2 rotation matrix "
        "[[cos a, −sin a], [sin a, cos a]] times the column (x, y).",
        "Compute the angle first, then its cosine and sine once each; build the two new "
        "coordinates from the formula of the second hint and return them together as one "
        "array of two numbers, the x coordinate first.",
    ],
    forbidden=_LIBRARY,
    id="10.1",
    attr="pair",
    answer="rotate_pair",
    points=1,
)


# ---------------------------------------------------------------- 10.2 RoPE for a whole head
def head_cases() -> list[tuple[str, np.ndarray, np.ndarray]]:
    """``(description, x, positions)``: one row repeated at positions 0, 1, 2 (d = 4); the
    queries of "The cat sat down" at 0 .. 3 (d = 8); five random rows at positions that are
    not 0 .. n - 1; last, four rows of width 64 at the end of a long context
    (:data:`LONG_CONTEXT`, where float32 angles are too coarse)."""
    rng = np.random.default_rng(10)
    cat = cat_sat_down()
    return [
        (
            "the row [1, 0, 1, 0] at positions 0, 1, 2",
            np.array([[1.0, 0.0, 1.0, 0.0]] * 3),
            np.arange(3),
        ),
        (
            'the queries of "The cat sat down" (4, 8) at positions 0 .. 3',
            cat.x @ cat.w_q,
            np.arange(4),
        ),
        (
            "5 rows of width 6 at positions [3, 7, 8, 20, 21]",
            np.round(rng.normal(size=(5, 6)), 3),
            np.array([3, 7, 8, 20, 21]),
        ),
        (
            f"4 rows of width 64 at positions {LONG_CONTEXT:,} .. {LONG_CONTEXT + 3:,}",
            rng.normal(size=(4, 64)),
            np.arange(LONG_CONTEXT, LONG_CONTEXT + 4),
        ),
    ]


def head_fresh(rng) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """Cases drawn anew for every grading (``Cases(fresh=...)``): 2 to 6 rows of even width 2
    to 16 at sorted positions up to 5000, then 2 to 4 rows of width 16 to 64 at the end of a
    context of 50,000 to 200,000 positions."""
    n, d = int(rng.integers(2, 7)), 2 * int(rng.integers(1, 9))
    positions = np.sort(rng.choice(5000, size=n, replace=False))  # (n,)
    far_n, far_d = int(rng.integers(2, 5)), 2 * int(rng.integers(8, 33))
    start = int(rng.integers(50_000, 200_000))
    return [
        (
            f"{n} rows of width {d} at positions {positions.tolist()}",
            rng.normal(size=(n, d)),
            positions,
        ),
        (
            f"{far_n} rows of width {far_d} at positions {start:,} .. {start + far_n - 1:,}",
            rng.normal(size=(far_n, far_d)),
            np.arange(start, start + far_n),
        ),
    ]


def _rope(x, positions, exponent_of=lambda i, d: 2 * i / d) -> np.ndarray:
    x = np.asarray(x, dtype=float)
    angles = np.asarray(positions, dtype=float)[:, None] * _frequencies(x.shape[-1], exponent_of)
    return _rotated(x, angles)  # (n, d)


def _rotate_half(x, positions) -> np.ndarray:
    """RoPE with GPT-NeoX's pairing: dimension i with i + d/2."""
    x = np.asarray(x, dtype=float)
    half = x.shape[-1] // 2
    angles = np.asarray(positions, dtype=float)[:, None] * _frequencies(x.shape[-1])  # (n, d/2)
    first, second = x[:, :half], x[:, half:]
    cos, sin = np.cos(angles), np.sin(angles)
    return np.concatenate([first * cos - second * sin, first * sin + second * cos], axis=1)


def _head_mistakes(x, positions) -> list[tuple[np.ndarray, str]]:
    n, d = x.shape
    right = _rope(x, positions)
    theta = _frequencies(d)
    angles = np.asarray(positions, dtype=float)[:, None] * theta  # (n, d/2)
    even, odd = x[:, 0::2], x[:, 1::2]
    cos, sin = np.cos(angles), np.sin(angles)
    swapped = np.empty_like(right)
    swapped[:, 0::2] = even * sin - odd * cos
    swapped[:, 1::2] = even * cos + odd * sin
    mistakes = [
        (
            _rotate_half(x, positions) if d >= 4 else None,
            'You paired dimension i with i + d/2 (GPT-NeoX\'s "rotate half"). This course '
            "pairs neighbours, (2i, 2i+1): pair i is x[:, 2i] and x[:, 2i+1], e.g. "
            "x[:, 0::2] and x[:, 1::2]. Both are RoPE, on differently ordered dimensions; "
            "mixing them up silently gives wrong scores.",
        ),
        (
            _rope(x, -np.asarray(positions)),
            "You turned every pair clockwise, by −position·θ_i. RoPE turns counterclockwise: "
            "x'_2i = x_2i cos − x_2i+1 sin, x'_2i+1 = x_2i sin + x_2i+1 cos.",
        ),
        (
            swapped,
            "You swapped sine and cosine: x'_2i = x_2i cos − x_2i+1 sin, "
            "x'_2i+1 = x_2i sin + x_2i+1 cos.",
        ),
        (
            _rope(x, np.arange(n)) if not np.array_equal(positions, np.arange(n)) else None,
            f"You used each row's index, 0 .. {n - 1}, as its position. Row r sits at "
            "positions[r]; the positions given need not start at 0 or follow one another.",
        ),
        (
            _rope(x, np.asarray(positions) + 1),
            "That is every position + 1: row r turns by positions[r] · θ_i, so a row at "
            "position 0 does not turn at all.",
        ),
        (
            _rope(x, np.asarray(positions) - 1),
            "That is every position − 1: row r turns by positions[r] · θ_i, not "
            "(positions[r] − 1) · θ_i.",
        ),
        (
            _rope(x, positions, exponent_of=lambda i, d: i / d) if d >= 4 else None,
            "Your frequencies use 10000 ** (−i/d): the exponent counts dimensions, not "
            "pairs, so pair i (dimensions 2i and 2i+1) has θ_i = 10000^(−2i/d).",
        ),
        (
            _rope(x, positions, exponent_of=lambda i, d: 2 * i / (d // 2)) if d >= 4 else None,
            "Your frequencies use 10000 ** (−2i/(d/2)): the exponent is 2i/d with d the "
            "whole width, so the slowest pair's θ is just above 1/10000.",
        ),
        (
            _rope(x, positions, exponent_of=lambda i, d: 0 * i) if d >= 4 else None,
            "Every pair turned at θ_0 = 1: each pair i has its own frequency "
            "θ_i = 10000^(−2i/d), from 1 down to almost 1/10000.",
        ),
    ]
    if d >= 4:
        split = np.concatenate([right[:, 0::2], right[:, 1::2]], axis=1)
        mistakes.append(
            (
                split,
                "Each pair is turned right, but you returned all the first coordinates, "
                "then all the second ones. Put them back where they came from: x'_2i in "
                "column 2i and x'_2i+1 in column 2i+1 (out[:, 0::2] = …, out[:, 1::2] = …).",
            )
        )
    return mistakes


def _angle_gaps(got, expected) -> np.ndarray | None:
    """The angle (radians) between each pair of ``got`` and of ``expected``, when every pair
    kept its length (else None): what a rotation by slightly wrong angles leaves behind."""
    g = got[..., 0::2] + 1j * got[..., 1::2]  # (n, d/2)
    e = expected[..., 0::2] + 1j * expected[..., 1::2]
    if not np.allclose(np.abs(g), np.abs(e), rtol=1e-4, atol=1e-6):
        return None
    with np.errstate(all="ignore"):
        return np.abs(np.angle(g * np.conj(e)))[np.abs(e) > 1e-3]


def _head_what(case) -> str:
    return f"rope_head(x, positions) for {case[0]}"


def _judge_head(got, case, messages) -> None:
    """Judge the rotated rows ``got`` for one of :func:`head_cases`."""
    _, x, positions = case
    expected = apply_rope(x.astype(float), positions, base=BASE)  # (n, d)
    what = _head_what(case)
    try:
        compare(got, expected, what, messages, _head_mistakes(x, positions), x.dtype)
    except Wrong as wrong:
        try:
            values = np.asarray(got, dtype=float)
        except (TypeError, ValueError):
            raise wrong from None
        if values.shape != expected.shape:
            raise
        gaps = _angle_gaps(values, expected) if np.all(np.isfinite(values)) else None
        far = np.max(positions) >= 10_000
        if (
            far
            and gaps is not None
            and gaps.size
            and gaps.max() < 0.05
            and not recognised(
                values, _head_mistakes(x, positions), *tolerance(precision_of(got), x.dtype)
            )
        ):
            rtol, atol = tolerance(precision_of(got), x.dtype, np.float32)
            said = mismatch(what, values, expected, rtol, atol)
            raise Wrong(
                f"{said} Every pair kept its length but turned by up to {gaps.max():.2g} "
                f"radians too much or too little: the angles look computed in float32. Near "
                f"position {int(np.max(positions)):,} float32 numbers are "
                f"{float(np.spacing(np.float32(np.max(positions)))):g} apart, too coarse for "
                "an angle; compute position × θ_i in float64 (then rotate in any dtype)."
                f"{warned(messages)}"
            ) from None
        raise


whole_head = Exercise(
    "Exercise 10.2 (RoPE for a whole head)",
    Cases(
        head_cases,
        _judge_head,
        what=_head_what,
        fresh=head_fresh,
    ),
    hints=[
        "Every row is a list of d/2 pairs, and each pair turns exactly as in 10.1: pair i of "
        "the row at position m by the angle m times its own frequency. Only the frequency "
        "changes from pair to pair, and only the position from row to row.",
        "The frequencies are θ_i = 10000^(−2i/d) for i = 0 .. d/2 − 1, and the angles "
        "form an (n, d/2) table, positions as a column times "
        "θ as a row. Pair i is the columns 2i and 2i+1: x[:, 0::2] and x[:, 1::2].",
        "Build the angle table by broadcasting in float64, take its cosine and sine, turn the "
        "even and the odd columns with 10.1's formula, and write the results into a new array "
        "of x's shape, the even results in the even columns and the odd ones in the odd "
        "columns.",
    ],
    forbidden=_LIBRARY,
    id="10.2",
    attr="whole_head",
    answer="rope_head",
    points=2,
)


# ---------------------------------------------------------------- 10.3 attention with RoPE
def attention_cases() -> list[tuple[str, np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
    """``(description, q, k, v, positions)``: "The cat sat down" at 0 .. 3 (d_k = d_v = 8);
    five random tokens of width 6 (values of width 6 too) at positions that skip; four
    tokens with d_k = 4 and d_v = 3 at 10 .. 13."""
    rng = np.random.default_rng(1010)
    cat = cat_sat_down()
    return [
        (
            '"The cat sat down" (d_k = d_v = 8) at positions 0 .. 3',
            cat.x @ cat.w_q,
            cat.x @ cat.w_k,
            cat.x @ cat.w_v,
            np.arange(4),
        ),
        (
            "5 tokens (d_k = d_v = 6) at positions [0, 2, 5, 9, 14]",
            *(rng.normal(size=(5, 6)) for _ in range(3)),
            np.array([0, 2, 5, 9, 14]),
        ),
        (
            "4 tokens (d_k = 4, d_v = 3) at positions 10 .. 13",
            rng.normal(size=(4, 4)),
            rng.normal(size=(4, 4)),
            rng.normal(size=(4, 3)),
            np.arange(10, 14),
        ),
    ]


def attention_fresh(rng) -> list[tuple]:
    """Cases drawn anew for every grading (``Cases(fresh=...)``): 3 to 6 tokens with d_k =
    d_v (even, 2 to 10) at sorted positions up to 200, then d_k ≠ d_v."""
    cases = []
    for same in (True, False):
        n, d_k = int(rng.integers(3, 7)), 2 * int(rng.integers(1, 6))
        d_v = d_k if same else int(rng.choice([w for w in range(2, 9) if w != d_k]))
        positions = np.sort(rng.choice(200, size=n, replace=False))
        cases.append(
            (
                f"{n} tokens (d_k = {d_k}, d_v = {d_v}) at positions {positions.tolist()}",
                rng.normal(size=(n, d_k)),
                rng.normal(size=(n, d_k)),
                rng.normal(size=(n, d_v)),
                positions,
            )
        )
    return cases


def _attend(q, k, v) -> np.ndarray:
    out, _ = attnlab.scaled_dot_product_attention(q, k, v)
    return out


def _attention_mistakes(q, k, v, positions) -> list[tuple[np.ndarray | None, str]]:
    rq, rk = _rope(q, positions), _rope(k, positions)
    d_k = q.shape[-1]
    mistakes = [
        (
            _attend(rq, rk, _rope(v, positions)) if v.shape[-1] % 2 == 0 else None,
            "You rotated v as well. RoPE turns only the queries and the keys, so that their "
            "scores depend on the offset; the values are what gets mixed, and rotating them "
            "would stamp each value with its absolute position.",
        ),
        (
            _attend(rq, k, v),
            "You rotated q but not k: both must turn, each by its own position, so that "
            "only the offset between them is left in the score.",
        ),
        (
            _attend(q, rk, v),
            "You rotated k but not q: both must turn, each by its own position, so that "
            "only the offset between them is left in the score.",
        ),
        (
            _attend(q, k, v),
            "That is attention without positions: rotate q and k by their positions "
            "(your 10.2) before the scores.",
        ),
        (
            _attend(_rope(q, -np.asarray(positions)), _rope(k, -np.asarray(positions)), v),
            "Your rotations turn clockwise, by −position·θ_i: every score then reads the "
            "offset the wrong way round (n − m instead of m − n).",
        ),
        (
            _attend(_rotate_half(q, positions), _rotate_half(k, positions), v)
            if d_k >= 4
            else None,
            'You paired dimension i with i + d/2 ("rotate half"). This course pairs '
            "neighbours, (2i, 2i+1), as in 10.2.",
        ),
        (
            (attnlab.softmax(rq @ rk.T) @ v),
            "The scores are missing the 1/√d_k scale.",
        ),
    ]
    return mistakes


def _attention_what(case) -> str:
    return f"rope_attention(q, k, v, positions) for {case[0]}"


def _judge_attention(got, case, messages) -> None:
    """Judge the output ``got`` for one of :func:`attention_cases`."""
    _, q, k, v, positions = case
    expected = _attend(
        apply_rope(q.astype(float), positions, base=BASE),
        apply_rope(k.astype(float), positions, base=BASE),
        v.astype(float),
    )  # (n, d_v)
    compare(
        got,
        expected,
        _attention_what(case),
        messages,
        _attention_mistakes(q.astype(float), k.astype(float), v.astype(float), positions),
        q.dtype,
    )


rope_attention = Exercise(
    "Exercise 10.3 (attention with RoPE)",
    Cases(attention_cases, _judge_attention, what=_attention_what, fresh=attention_fresh),
    hints=[
        "Positions enter at one place only: between the projections and the scores. "
        "Which of q, k and v take part in the scores, and which is only mixed by the "
        "weights?",
        "Rotate q and k by the positions (your rope_head from 10.2 does it), then compute "
        "attention exactly as in lesson 6: the scores of the rotated q and k, scaled by "
        "1/√d_k, a softmax along each row, and the weights times v.",
        "Call rope_head on q and on k with the same positions, leave v as it is, and hand the "
        "three to the course's attention (attnlab.scaled_dot_product_attention returns the "
        "output and the weights) or write the three steps yourself.",
    ],
    forbidden=_LIBRARY,
    id="10.3",
    attr="rope_attention",
    answer="rope_attention",
    points=2,
)


# ---------------------------------------------------------------- 10.4 the causal ALiBi bias
def alibi_cases() -> list[tuple[str, int, int, np.ndarray]]:
    """``(description, n_q, n_k, slopes)``: one head on 3 tokens (slope 1/2); two heads on 4
    tokens (slopes 1/2, 1/4); one query against 5 keys (the next token of a cached context);
    3 queries against 6 keys with the paper's 4-head slopes."""
    return [
        ("one head (slope 0.5) on 3 tokens", 3, 3, np.array([0.5])),
        ("two heads (slopes 0.5, 0.25) on 4 tokens", 4, 4, np.array([0.5, 0.25])),
        ("one query after 4 cached tokens: n_q = 1, n_k = 5, slope 0.5", 1, 5, np.array([0.5])),
        (
            "3 queries, 6 keys, slopes [1/4, 1/16, 1/64, 1/256]",
            3,
            6,
            np.array([0.25, 0.0625, 0.015625, 0.00390625]),
        ),
    ]


def alibi_fresh(rng) -> list[tuple[str, int, int, np.ndarray]]:
    """Cases drawn anew for every grading (``Cases(fresh=...)``): 1 to 4 heads with random
    slopes on 2 to 7 tokens, then fewer queries than keys (1 to n_k - 1)."""
    h, n = int(rng.integers(1, 5)), int(rng.integers(2, 8))
    slopes = np.round(rng.uniform(0.01, 1.0, size=h), 4)
    n_k = int(rng.integers(3, 9))
    n_q = int(rng.integers(1, n_k))
    slopes2 = np.round(rng.uniform(0.01, 1.0, size=int(rng.integers(1, 4))), 4)
    return [
        (f"{h} heads (slopes {slopes.tolist()}) on {n} tokens", n, n, slopes),
        (f"{n_q} queries, {n_k} keys, slopes {slopes2.tolist()}", n_q, n_k, slopes2),
    ]


def _alibi_mistakes(n_q, n_k, slopes) -> list[tuple[np.ndarray | None, str]]:
    right = alibi_bias(n_q, n_k, slopes)
    top_left = (np.arange(n_q)[:, None] - np.arange(n_k)).astype(float)  # (n_q, n_k)
    penalty = slopes[:, None, None] * np.abs(top_left)
    aligned_top = np.where(top_left < 0, -np.inf, -penalty)
    with np.errstate(invalid="ignore"):
        mistakes = [
            (
                np.where(np.isinf(right), -np.inf, -right),
                "The sign is flipped: ALiBi subtracts slope × distance, so keys further "
                "back get lower scores, not higher.",
            ),
            (
                alibi_bias(n_q, n_k, slopes, causal=False),
                "Keys after the query must get -inf (this bias is also the causal mask): "
                "yours penalises them by their distance instead.",
            ),
            (
                np.where(np.isinf(right), 0.0, right),
                "Keys after the query must get -inf (this bias is also the causal mask); "
                "yours leaves them at 0, so a query would see the future.",
            ),
            (
                np.swapaxes(right, -1, -2) if n_q == n_k else None,
                "Yours is transposed: row i is query i, column j is key j, and -inf goes "
                "above the diagonal (keys after the query).",
            ),
            (
                aligned_top if n_q != n_k else None,
                "You put query i at position i. With fewer queries than keys, "
                + (
                    "the query is the last token"
                    if n_q == 1
                    else f"the queries are the last {n_q} tokens"
                )
                + f": query i sits at position i + n_k − n_q = i + {n_k - n_q}, so the last "
                "query sees every key (the alignment of "
                "attnlab.causal_mask).",
            ),
            (
                np.where(np.isinf(right), -np.inf, right - slopes[:, None, None]),
                "Your distances are one too large: a query's own key is at distance 0 and "
                "gets no penalty.",
            ),
        ]
    return mistakes


def _alibi_what(case) -> str:
    return f"causal_alibi(n_q, n_k, slopes) for {case[0]}"


def _judge_alibi(got, case, messages) -> None:
    """Judge the bias ``got`` for one of :func:`alibi_cases`."""
    _, n_q, n_k, slopes = case
    expected = alibi_bias(n_q, n_k, slopes.astype(float))  # (h, n_q, n_k)
    what = _alibi_what(case)
    try:
        values = np.asarray(got, dtype=float)
    except (TypeError, ValueError):
        raise Wrong(
            f"{what} should be an array of shape {expected.shape}; got {one_line(got)}."
        ) from None
    h = len(slopes)
    if values.shape != expected.shape:
        heads_last = values.shape == (n_q, n_k, h)
        note = (
            " The heads go first: bias[h] is head h's (n_q, n_k) matrix, so it adds to scores "
            "of shape (h, n_q, n_k)."
            if heads_last and h > 1
            else ""
        )
        raise Wrong(
            f"{what} should have shape {expected.shape}, (heads, queries, keys), but yours "
            f"has shape {values.shape}.{note}"
        )
    if np.isnan(values).any():
        raise Wrong(f"{what} contains nan: {short(values)}.{warned(messages)}")
    after = np.isinf(expected)
    big = (values <= -1e9) & ~np.isinf(values)
    if np.array_equal(big | np.isinf(values), after) and big.any():
        raise Wrong(
            f"{what}: the keys after each query hold a large negative number; use -inf "
            "(-np.inf), as the task asks: it gives a weight of exactly 0 whatever the "
            "scores are, as lesson 6's masks do."
        )
    rtol, atol = tolerance(precision_of(got), slopes.dtype, np.float32)
    if np.allclose(values, expected, rtol=rtol, atol=atol):
        if messages:
            raise Wrong(
                f"{what} gives the right numbers, but numpy warned: "
                f"{'; '.join(messages)}. Your function must not warn."
            )
        return
    mistakes = _alibi_mistakes(n_q, n_k, slopes.astype(float))
    cause = recognised(values, mistakes, rtol, atol)
    if not cause:
        wrong_inf = np.argwhere(np.isneginf(values) != after)
        if wrong_inf.size:
            h_, i, j = (int(x) for x in wrong_inf[0])
            cause = f"Entry [{h_}, {i}, {j}] (head {h_}, query {i}, key {j}) should " + (
                "be -inf: that key comes after the query."
                if after[h_, i, j]
                else "not be -inf: that key is at or before the query."
            )
        else:
            h_, i, j = (int(x) for x in np.argwhere(~np.isclose(values, expected, rtol, atol))[0])
            distance = i + n_k - n_q - j
            cause = (
                f"Entry [{h_}, {i}, {j}] (head {h_}, query {i}, key {j}) should be "
                f"−{slopes[h_]:g} × {distance} = {expected[h_, i, j]:g}: query {i} sits at "
                f"position {i + n_k - n_q}, {distance} after key {j}."
            )
    raise Wrong(
        f"{what} should be {short(expected)}, but yours gave {short(values)}. {cause}"
        f"{warned(messages)}"
    )


alibi = Exercise(
    "Exercise 10.4 (the causal ALiBi bias)",
    Cases(
        alibi_cases,
        _judge_alibi,
        what=_alibi_what,
        fresh=alibi_fresh,
    ),
    hints=[
        "For each head, picture the (n_q, n_k) grid of queries and keys. How far back is key "
        "j from query i? The bias is that distance times the head's slope, with a minus sign; "
        "keys after the query are not allowed at all.",
        "Query i sits at position i + (n_k − n_q), so its distance to key j is "
        "i + n_k − n_q − j: broadcast a column of query positions against a row of key "
        "positions. A negative distance is a key after the query: −inf there.",
        "Build the (n_q, n_k) distance grid once, multiply it by the slopes reshaped to "
        "(h, 1, 1) so that every head gets its own grid, negate it, and set the entries whose "
        "distance is negative to −inf in every head.",
    ],
    forbidden=_LIBRARY,
    id="10.4",
    attr="alibi",
    answer="causal_alibi",
    points=1,
)
