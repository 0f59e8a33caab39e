"""Lesson 10 checks: each rejects known-wrong answers with a helpful reason, accepts right ones."""

from __future__ import annotations

import math

import numpy as np
from answer_tables import Answers, accept_reject, judged

import attnlab
from attnlab.exercises import Outcome
from attnlab.exercises import lesson10 as L


# ---------------------------------------------------------------- 10.1 one pair
def pair_by_matrix(pair, position, theta):
    a = position * theta
    return np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]]) @ pair


def pair_by_complex(pair, position, theta):
    """The pair as x + iy, multiplied by e^(i·angle)."""
    z = complex(pair[0], pair[1]) * np.exp(1j * position * theta)
    return [z.real, z.imag]


def pair_in_float32(pair, position, theta):
    p = np.asarray(pair, dtype=np.float32)
    c, s = np.float32(math.cos(position * theta)), np.float32(math.sin(position * theta))
    return np.array([p[0] * c - p[1] * s, p[0] * s + p[1] * c], dtype=np.float32)


def _turn(pair, a):
    c, s = math.cos(a), math.sin(a)
    return np.array([pair[0] * c - pair[1] * s, pair[0] * s + pair[1] * c])


PAIR_RIGHT = {
    "a rotation matrix": pair_by_matrix,
    "a complex number, as a list": pair_by_complex,
    "float32": pair_in_float32,
}
PAIR_WRONG = {
    "clockwise": (lambda p, m, t: _turn(p, -m * t), "You turned it clockwise"),
    "sine and cosine swapped": (
        lambda p, m, t: np.array(
            [
                p[0] * math.sin(m * t) - p[1] * math.cos(m * t),
                p[0] * math.cos(m * t) + p[1] * math.sin(m * t),
            ]
        ),
        "You swapped sine and cosine",
    ),
    "position + 1": (lambda p, m, t: _turn(p, (m + 1) * t), "the angle for position + 1"),
    "theta alone": (lambda p, m, t: _turn(p, t), "You turned it by theta alone"),
    "degrees": (lambda p, m, t: _turn(p, math.radians(m * t)), "already in radians"),
    "the order swapped": (lambda p, m, t: _turn(p, m * t)[::-1], "in the wrong order"),
    "not turned": (lambda p, m, t: np.array(p, dtype=float), "should be"),
    "the library": (
        lambda p, m, t: attnlab.positions.apply_rope(np.asarray(p)[None], [m * t])[0],
        "asks you not to use",
    ),
}


# ---------------------------------------------------------------- 10.2 RoPE for a whole head
def rope_by_loops(x, positions):
    """Row by row, pair by pair, in Python floats."""
    n, d = x.shape
    out = np.zeros((n, d))
    for r in range(n):
        for i in range(d // 2):
            a = float(positions[r]) * 10000.0 ** (-2 * i / d)
            out[r, 2 * i : 2 * i + 2] = _turn(x[r, 2 * i : 2 * i + 2], a)
    return out


def rope_by_complex_einsum(x, positions):
    """Pairs as complex numbers, the phases by einsum, returned as a nested list."""
    d = x.shape[1]
    theta = 10000.0 ** (-np.arange(0, d, 2) / d)  # (d/2,)
    phase = np.exp(1j * np.einsum("n,i->ni", np.asarray(positions, dtype=float), theta))
    z = (x[:, 0::2] + 1j * x[:, 1::2]) * phase  # (n, d/2)
    return np.stack([z.real, z.imag], axis=-1).reshape(x.shape).tolist()


def rope_float32_rows(x, positions):
    """Rows in float32, angles in float64 (as the task asks), the result float32."""
    x = x.astype(np.float32)
    d = x.shape[1]
    angles = np.asarray(positions, dtype=np.float64)[:, None] * 10000.0 ** (-np.arange(0, d, 2) / d)
    cos, sin = np.cos(angles).astype(np.float32), np.sin(angles).astype(np.float32)
    out = np.empty_like(x)
    out[:, 0::2] = x[:, 0::2] * cos - x[:, 1::2] * sin
    out[:, 1::2] = x[:, 0::2] * sin + x[:, 1::2] * cos
    return out


def _rope_with(
    x, positions, theta_of=lambda d: 10000.0 ** (-np.arange(0, d, 2) / d), dtype=np.float64
):
    d = x.shape[1]
    angles = np.asarray(positions, dtype=dtype)[:, None] * theta_of(d).astype(dtype)
    out = np.empty(x.shape)
    out[:, 0::2] = x[:, 0::2] * np.cos(angles) - x[:, 1::2] * np.sin(angles)
    out[:, 1::2] = x[:, 0::2] * np.sin(angles) + x[:, 1::2] * np.cos(angles)
    return out


def rope_rotate_half(x, positions):
    d = x.shape[1]
    half = d // 2
    angles = np.asarray(positions, dtype=float)[:, None] * 10000.0 ** (-np.arange(0, d, 2) / d)
    a, b = x[:, :half], x[:, half:]
    return np.concatenate(
        [a * np.cos(angles) - b * np.sin(angles), a * np.sin(angles) + b * np.cos(angles)], axis=1
    )


HEAD_RIGHT = {
    "loops": rope_by_loops,
    "complex numbers and einsum, a list": rope_by_complex_einsum,
    "float32 rows, float64 angles": rope_float32_rows,
}
HEAD_WRONG = {
    "rotate half (GPT-NeoX pairing)": (rope_rotate_half, "You paired dimension i with i + d/2"),
    "clockwise": (lambda x, p: _rope_with(x, -np.asarray(p)), "turned every pair clockwise"),
    "row index for positions": (
        lambda x, p: _rope_with(x, np.arange(len(x))),
        "You used each row's index",
    ),
    "positions + 1": (lambda x, p: _rope_with(x, np.asarray(p) + 1), "every position + 1"),
    "positions - 1": (lambda x, p: _rope_with(x, np.asarray(p) - 1), "every position − 1"),
    "exponent counts pairs": (
        lambda x, p: _rope_with(x, p, lambda d: 10000.0 ** (-np.arange(d // 2) / d)),
        "the exponent counts dimensions, not pairs",
    ),
    "one frequency for every pair": (
        lambda x, p: _rope_with(x, p, lambda d: np.ones(d // 2)),
        "Every pair turned at θ_0 = 1",
    ),
    "not interleaved": (
        lambda x, p: np.concatenate([_rope_with(x, p)[:, 0::2], _rope_with(x, p)[:, 1::2]], axis=1),
        "you returned all the first coordinates",
    ),
    "angles in float32": (
        lambda x, p: _rope_with(x, p, dtype=np.float32),
        "the angles look computed in float32",
    ),
    "the library": (
        lambda x, p: attnlab.positions.apply_rope(x, p),
        "asks you not to use",
    ),
}


def test_the_long_context_case_tells_float32_angles_from_float64():
    """At positions near 100,000 float32 angles are off by thousandths of a radian: far more
    than the float32 tolerance the check allows a right answer."""
    case = L.head_cases()[-1]
    assert case[2].min() >= L.LONG_CONTEXT
    wrong = _rope_with(case[1], case[2], dtype=np.float32)
    right = attnlab.positions.apply_rope(case[1], case[2])
    assert np.abs(wrong - right).max() > 10 * 1e-4  # float32 tolerance: 1e-4 relative


# ---------------------------------------------------------------- 10.3 attention with RoPE
def _rope(x, positions):
    return np.asarray(rope_by_complex_einsum(x, positions))


def attention_written_out(q, k, v, positions):
    s = _rope(q, positions) @ _rope(k, positions).T / math.sqrt(q.shape[1])
    e = np.exp(s - s.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True) @ v


def attention_with_the_course(q, k, v, positions):
    out, _ = attnlab.scaled_dot_product_attention(_rope(q, positions), _rope(k, positions), v)
    return out


def attention_shifted_positions(q, k, v, positions):
    """Every position moved by 1000: the same scores, the same output (the relative property)."""
    return attention_with_the_course(q, k, v, np.asarray(positions) + 1000)


def attention_in_float32(q, k, v, positions):
    q32, k32, v32 = (a.astype(np.float32) for a in (q, k, v))
    return attention_written_out(q32, k32, v32, positions).astype(np.float32)


ATTENTION_RIGHT = {
    "written out": attention_written_out,
    "with the course's attention": attention_with_the_course,
    "every position + 1000": attention_shifted_positions,
    "float32": attention_in_float32,
}
ATTENTION_WRONG = {
    "v rotated too": (
        lambda q, k, v, p: attention_with_the_course(q, k, _rope(v, p), p),
        "You rotated v as well",
    ),
    "only q rotated": (
        lambda q, k, v, p: attnlab.scaled_dot_product_attention(_rope(q, p), k, v)[0],
        "You rotated q but not k",
    ),
    "only k rotated": (
        lambda q, k, v, p: attnlab.scaled_dot_product_attention(q, _rope(k, p), v)[0],
        "You rotated k but not q",
    ),
    "no positions": (
        lambda q, k, v, p: attnlab.scaled_dot_product_attention(q, k, v)[0],
        "attention without positions",
    ),
    "clockwise": (
        lambda q, k, v, p: attention_with_the_course(q, k, v, -np.asarray(p)),
        "turn clockwise",
    ),
    "rotate half": (
        lambda q, k, v, p: attnlab.scaled_dot_product_attention(
            rope_rotate_half(q, p), rope_rotate_half(k, p), v
        )[0],
        "You paired dimension i with i + d/2",
    ),
    "no scale": (
        lambda q, k, v, p: attnlab.softmax(_rope(q, p) @ _rope(k, p).T) @ v,
        "missing the 1/√d_k scale",
    ),
    "the weights returned": (
        lambda q, k, v, p: attnlab.scaled_dot_product_attention(_rope(q, p), _rope(k, p), v)[1],
        "should have shape (4, 8)",
    ),
}


def test_a_shift_of_every_position_changes_no_output_but_changes_the_rotated_rows():
    """10.3 accepts positions + c (the relative property); 10.2 refuses it."""
    assert judged(L.rope_attention, attention_shifted_positions).outcome is Outcome.CORRECT
    shifted = judged(L.whole_head, lambda x, p: _rope(x, np.asarray(p) + 1000))
    assert shifted.outcome is Outcome.WRONG


# ---------------------------------------------------------------- 10.4 the causal ALiBi bias
def alibi_by_loops(n_q, n_k, slopes):
    out = np.zeros((len(slopes), n_q, n_k))
    for h, m in enumerate(slopes):
        for i in range(n_q):
            for j in range(n_k):
                back = i + n_k - n_q - j
                out[h, i, j] = -m * back if back >= 0 else -np.inf
    return out.tolist()


def alibi_by_broadcasting(n_q, n_k, slopes):
    back = np.arange(n_k - n_q, n_k)[:, None] - np.arange(n_k)  # (n_q, n_k)
    with np.errstate(invalid="ignore"):
        bias = -np.asarray(slopes)[:, None, None] * back  # (h, n_q, n_k)
    bias[:, back < 0] = -np.inf
    return bias


def alibi_with_causal_mask_float32(n_q, n_k, slopes):
    slopes = np.asarray(slopes, dtype=np.float32)
    back = (np.arange(n_q)[:, None] + n_k - n_q - np.arange(n_k)).astype(np.float32)
    allowed = attnlab.causal_mask(n_q, n_k)
    return np.where(allowed, -slopes[:, None, None] * back, np.float32(-np.inf))


def _top_left(n_q, n_k, slopes):
    back = np.arange(n_q)[:, None] - np.arange(n_k)
    return np.where(back >= 0, -np.asarray(slopes)[:, None, None] * back, -np.inf)


ALIBI_RIGHT = {
    "loops, a list": alibi_by_loops,
    "broadcasting": alibi_by_broadcasting,
    "float32 with causal_mask": alibi_with_causal_mask_float32,
}
ALIBI_WRONG = {
    "sign flipped": (
        lambda a, b, s: np.where(
            np.isinf(alibi_by_broadcasting(a, b, s)), -np.inf, -alibi_by_broadcasting(a, b, s)
        ),
        "The sign is flipped",
    ),
    "not causal": (
        lambda a, b, s: (
            -np.asarray(s)[:, None, None] * np.abs(np.arange(b - a, b)[:, None] - np.arange(b))
        ),
        "yours penalises them by their distance",
    ),
    "0 after the query": (
        lambda a, b, s: np.nan_to_num(alibi_by_broadcasting(a, b, s), neginf=0.0),
        "yours leaves them at 0",
    ),
    "-1e9 after the query": (
        lambda a, b, s: np.nan_to_num(alibi_by_broadcasting(a, b, s), neginf=-1e9),
        "use -inf",
    ),
    "transposed": (
        lambda a, b, s: np.swapaxes(alibi_by_broadcasting(a, b, s), 1, 2),
        "Yours is transposed",
    ),
    "first query at position 0": (_top_left, "You put query i at position i"),
    "distance one too large": (
        lambda a, b, s: alibi_by_broadcasting(a, b, s) - np.asarray(s)[:, None, None],
        "Your distances are one too large",
    ),
    "heads last": (
        lambda a, b, s: np.moveaxis(alibi_by_broadcasting(a, b, s), 0, -1),
        "should have shape",
    ),
    "the library": (
        lambda a, b, s: attnlab.positions.alibi_bias(a, b, s),
        "asks you not to use",
    ),
}


def test_the_heads_last_reason_names_the_axis_order_when_there_are_heads():
    message = judged(
        L.alibi, lambda a, b, s: np.moveaxis(alibi_by_broadcasting(a, b, s), 0, -1)
    ).message
    assert "should have shape (1, 3, 3)" in message
    feedback = L.alibi.check(lambda a, b, s: np.moveaxis(alibi_by_broadcasting(a, b, s), 0, -1))
    assert feedback.outcome is Outcome.WRONG


def test_the_cases_hold_the_edges_each_exercise_is_about():
    assert any(case[2] == 0 for case in L.pair_cases())  # position 0 turns nothing
    head = L.head_cases()
    assert any(not np.array_equal(c[2], np.arange(len(c[2]))) for c in head)
    assert any(c[1].shape[1] >= 64 for c in head)
    assert any(c[3].shape[1] == c[1].shape[1] for c in L.attention_cases())  # d_v = d_k
    assert any(c[3].shape[1] != c[1].shape[1] for c in L.attention_cases())
    assert any(c[1] < c[2] for c in L.alibi_cases())  # fewer queries than keys
    assert any(len(c[3]) > 1 for c in L.alibi_cases())


# ---------------------------------------------------------------- the tables
test_accepts, test_rejects = accept_reject(
    Answers(L.pair, PAIR_RIGHT, PAIR_WRONG),
    Answers(L.whole_head, HEAD_RIGHT, HEAD_WRONG),
    Answers(L.rope_attention, ATTENTION_RIGHT, ATTENTION_WRONG),
    Answers(L.alibi, ALIBI_RIGHT, ALIBI_WRONG),
)


def test_print_the_exercise_table(capsys):
    """The exercise table (answer, verdict, reason) for the lesson's note: printed with -s."""
    rows = []
    for exercise, right, wrong in (
        (L.pair, PAIR_RIGHT, PAIR_WRONG),
        (L.whole_head, HEAD_RIGHT, HEAD_WRONG),
        (L.rope_attention, ATTENTION_RIGHT, ATTENTION_WRONG),
        (L.alibi, ALIBI_RIGHT, ALIBI_WRONG),
    ):
        for name, answer in [*right.items(), *((n, a) for n, (a, _) in wrong.items())]:
            feedback = judged(exercise, answer)
            reason = feedback.message.split(" Stuck?")[0]
            rows.append((exercise.id, name, feedback.outcome.name, reason))
    with capsys.disabled():
        print()
        for row in rows:
            print(" | ".join(row))
    assert {r[2] for r in rows} == {"CORRECT", "WRONG"}
