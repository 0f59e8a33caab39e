"""attnlab.positions against independent references: plain loops, complex numbers, mpmath.

The references are written here in plain Python (math, cmath, mpmath), never with the module's
own helpers; the properties (RoPE scores depend only on m − n, rotations keep lengths, the
sinusoidal dot product depends only on the offset, attention is permutation-equivariant only
without positions) are drawn by hypothesis.
"""

from __future__ import annotations

import cmath
import math

import mpmath
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import FAST, float_arrays, no_warnings

from attnlab.attention import attention_scores, scaled_dot_product_attention
from attnlab.positions import (
    alibi_bias,
    alibi_slopes,
    apply_rope,
    learned_positions,
    permute_tokens,
    position_frequencies,
    rope_angles,
    rope_scores,
    sinusoidal_positions,
)
from attnlab.softmax_family import softmax

# --------------------------------------------------------------------------- references


def ref_theta(i: int, d: int, base: float = 10000.0) -> float:
    return base ** (-2 * i / d)


def ref_sinusoidal(n: int, d: int, base: float = 10000.0) -> list[list[float]]:
    """Vaswani et al.'s formula, one entry at a time."""
    pe = [[0.0] * d for _ in range(n)]
    for pos in range(n):
        for i in range(d // 2):
            pe[pos][2 * i] = math.sin(pos / base ** (2 * i / d))
            pe[pos][2 * i + 1] = math.cos(pos / base ** (2 * i / d))
    return pe


def ref_rope_row(row, pos: float, base: float = 10000.0) -> list[float]:
    """One row rotated pair by pair with 2 × 2 rotation matrices written out."""
    d = len(row)
    out = [0.0] * d
    for i in range(d // 2):
        a = pos * ref_theta(i, d, base)
        x, y = float(row[2 * i]), float(row[2 * i + 1])
        out[2 * i] = x * math.cos(a) - y * math.sin(a)
        out[2 * i + 1] = x * math.sin(a) + y * math.cos(a)
    return out


def ref_rope_score_complex(q_row, k_row, m: float, n: float, base: float = 10000.0) -> float:
    """RoFormer's complex form: q_m · k_n = Re Σ_i q̃_i conj(k̃_i) e^{i (m − n) θ_i}, unscaled."""
    d = len(q_row)
    total = 0j
    for i in range(d // 2):
        q_c = complex(q_row[2 * i], q_row[2 * i + 1])
        k_c = complex(k_row[2 * i], k_row[2 * i + 1])
        total += q_c * k_c.conjugate() * cmath.exp(1j * (m - n) * ref_theta(i, d, base))
    return total.real


def ref_alibi_slopes(n: int) -> list[float]:
    """The reference code of Press et al. (2022), as its repository gives it."""

    def power_of_2(n):
        start = 2 ** (-(2 ** -(math.log2(n) - 3)))
        return [start * start**i for i in range(n)]

    if math.log2(n).is_integer():
        return power_of_2(n)
    closest = 2 ** math.floor(math.log2(n))
    return power_of_2(closest) + ref_alibi_slopes(2 * closest)[0::2][: n - closest]


def ref_alibi_bias(n_q: int, n_k: int, slopes, causal: bool) -> list:
    bias = []
    for m in slopes:
        rows = []
        for i in range(n_q):
            at = i + n_k - n_q
            rows.append(
                [-math.inf if causal and j > at else -float(m) * abs(at - j) for j in range(n_k)]
            )
        bias.append(rows)
    return bias


def rng_rows(seed: int, shape) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=shape)


# --------------------------------------------------------------------------- frequencies
@pytest.mark.parametrize(("d", "base"), [(2, 10000.0), (8, 10000.0), (64, 10000.0), (6, 7.5)])
def test_frequencies_are_the_papers(d, base):
    np.testing.assert_allclose(
        position_frequencies(d, base), [ref_theta(i, d, base) for i in range(d // 2)], rtol=1e-15
    )
    assert position_frequencies(d, base)[0] == 1.0


def test_rope_angles_are_position_times_frequency():
    positions = np.array([[0, 3, 7], [1, 2, 1000]])
    angles = rope_angles(positions, 8)
    assert angles.shape == (2, 3, 4) and angles.dtype == np.float64
    for index in np.ndindex(positions.shape):
        expected = [positions[index] * ref_theta(i, 8) for i in range(4)]
        np.testing.assert_allclose(angles[index], expected, rtol=1e-15)


# --------------------------------------------------------------------------- sinusoidal
@pytest.mark.parametrize(("n", "d", "base"), [(1, 2, 10000.0), (7, 6, 10000.0), (50, 16, 100.0)])
def test_sinusoidal_matches_the_formula(n, d, base):
    pe = sinusoidal_positions(n, d, base)
    assert pe.shape == (n, d) and pe.dtype == np.float64
    np.testing.assert_allclose(pe, ref_sinusoidal(n, d, base), rtol=1e-13, atol=1e-15)


def test_sinusoidal_far_positions_against_mpmath():
    """Positions up to 10^5: float64 angles still give every entry to ~1e-11 (50-digit mpmath)."""
    n, d = 100_001, 8
    pe = sinusoidal_positions(n, d)
    with mpmath.workdps(50):
        for pos in (0, 1, 12_345, 99_999, 100_000):
            for i in range(d // 2):
                angle = mpmath.mpf(pos) * mpmath.power(10000, mpmath.mpf(-2 * i) / d)
                assert pe[pos, 2 * i] == pytest.approx(float(mpmath.sin(angle)), abs=1e-10)
                assert pe[pos, 2 * i + 1] == pytest.approx(float(mpmath.cos(angle)), abs=1e-10)


@FAST
@given(
    st.integers(0, 400),
    st.integers(0, 400),
    st.integers(0, 400),
    st.sampled_from([2, 4, 16, 64]),
)
def test_sinusoidal_dot_product_depends_only_on_the_offset(m, n, shift, d):
    pe = sinusoidal_positions(max(m, n) + shift + 1, d)
    here, there = float(pe[m] @ pe[n]), float(pe[m + shift] @ pe[n + shift])
    by_offset = math.fsum(math.cos((m - n) * ref_theta(i, d)) for i in range(d // 2))
    assert here == pytest.approx(by_offset, abs=1e-11)
    assert there == pytest.approx(by_offset, abs=1e-11)
    assert float(pe[m] @ pe[m]) == pytest.approx(d / 2)  # every row has length √(d/2)


# --------------------------------------------------------------------------- learned
def test_learned_positions_are_rows_of_the_table():
    table = rng_rows(0, (5, 3)).astype(np.float32)
    rows = learned_positions(table, [[4, 0], [2, 2]])
    assert rows.shape == (2, 2, 3) and rows.dtype == np.float32
    np.testing.assert_array_equal(rows[0, 0], table[4])
    np.testing.assert_array_equal(rows[1, 1], table[2])
    rows[0, 0] = 99.0
    assert not (table == 99.0).any(), "the rows must be a copy"


@pytest.mark.parametrize("position", [5, 1024, -1])
def test_learned_positions_have_nothing_past_the_trained_length(position):
    table = rng_rows(1, (5, 3))
    with pytest.raises(ValueError, match=rf"positions must lie in 0 \.\. 4 .*got {position}\b"):
        learned_positions(table, [0, position])


# --------------------------------------------------------------------------- RoPE
@pytest.mark.parametrize("d", [2, 4, 10, 64])
@pytest.mark.parametrize("base", [10000.0, 500.0])
def test_apply_rope_matches_rotation_matrices(d, base):
    x = rng_rows(d, (6, d))
    positions = [0, 1, 2, 17, 300, 4096]
    got = apply_rope(x, positions, base)
    expected = [ref_rope_row(row, pos, base) for row, pos in zip(x, positions, strict=True)]
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


def test_apply_rope_with_batch_dims_and_per_batch_positions():
    x = rng_rows(2, (2, 3, 4, 8))  # (batch, heads, n, d)
    positions = np.array([[[0, 1, 2, 3]], [[10, 11, 12, 13]]])  # (batch, 1, n)
    got = apply_rope(x, positions)
    assert got.shape == x.shape
    for b, h, t in np.ndindex(2, 3, 4):
        np.testing.assert_allclose(
            got[b, h, t], ref_rope_row(x[b, h, t], positions[b, 0, t]), rtol=1e-12, atol=1e-12
        )


@pytest.mark.parametrize("d", [2, 8, 64])
def test_rope_scores_match_the_complex_form(d):
    q, k = rng_rows(3, (5, d)), rng_rows(4, (7, d))
    q_pos, k_pos = [0, 3, 9, 100, 2047], [0, 1, 2, 3, 50, 999, 2047]
    got = rope_scores(q, k, q_pos, k_pos, scale=1.0)
    expected = [
        [ref_rope_score_complex(q[a], k[b], q_pos[a], k_pos[b]) for b in range(7)] for a in range(5)
    ]
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-10)
    default = rope_scores(q, k, q_pos, k_pos)  # scaled by 1/√d, as attention_scores
    np.testing.assert_allclose(default, np.asarray(expected) / math.sqrt(d), rtol=1e-10, atol=1e-10)


def test_rope_scores_equal_attention_scores_of_the_rotated_rows():
    q, k = rng_rows(5, (3, 4)), rng_rows(6, (2, 4))
    rotated = attention_scores(apply_rope(q, [5, 6, 7]), apply_rope(k, [1, 2]))
    np.testing.assert_array_equal(rope_scores(q, k, [5, 6, 7], [1, 2]), rotated)


def test_rope_far_positions_against_mpmath():
    """At position 10^6 the float64 angle keeps the rotation right to ~1e-9; mpmath, 50 digits."""
    d, pos = 8, 1_000_000
    row = np.array([0.3, -1.2, 0.7, 0.1, -0.4, 2.0, 1.5, -0.9])
    got = apply_rope(row[None, :], [pos])[0]
    with mpmath.workdps(50):
        for i in range(d // 2):
            angle = pos * mpmath.power(10000, mpmath.mpf(-2 * i) / d)
            c, s = mpmath.cos(angle), mpmath.sin(angle)
            x, y = mpmath.mpf(row[2 * i]), mpmath.mpf(row[2 * i + 1])
            assert got[2 * i] == pytest.approx(float(x * c - y * s), abs=1e-9)
            assert got[2 * i + 1] == pytest.approx(float(x * s + y * c), abs=1e-9)


def test_float32_rows_are_rotated_by_float64_angles():
    """float32 in, float32 out, but the angles are not computed in float32.

    Near 100 000 rad float32 angles are 1/128 rad apart: a rotation by float32 angles is off
    by ~1e-3, while apply_rope's float32 result is within float32 rounding of the exact one.
    """
    d, pos = 64, 100_003
    row = np.tile(np.array([1.0, 0.0], dtype=np.float32), d // 2)[None, :]  # (1, d)
    got = apply_rope(row, [pos])[0]
    assert got.dtype == np.float32
    with mpmath.workdps(50):
        angles = [pos * mpmath.power(10000, mpmath.mpf(-2 * i) / d) for i in range(d // 2)]
        exact = np.array([[float(mpmath.cos(a)), float(mpmath.sin(a))] for a in angles]).ravel()
    assert np.max(np.abs(got - exact)) < 5e-7
    theta32 = np.float32(10000.0) ** (-np.arange(0, d, 2, dtype=np.float32) / np.float32(d))
    angles32 = np.float32(pos) * theta32  # (d/2,) float32 angles
    in_float32 = np.column_stack([np.cos(angles32), np.sin(angles32)]).ravel()
    assert np.max(np.abs(in_float32 - exact)) > 1e-4


@FAST
@given(
    float_arrays(dtypes=(np.float64,), bound=1e3, shape=(1, 8)),
    float_arrays(dtypes=(np.float64,), bound=1e3, shape=(1, 8)),
    st.integers(0, 5000),
    st.integers(0, 5000),
    st.integers(-5000, 5000),
)
def test_rope_score_depends_only_on_the_offset(q, k, m, n, shift):
    # The score is bilinear: rows scaled to max |entry| = 1 lose nothing and keep clear of
    # underflow (the norm of a row of 1e-200s is 0 in float64).
    q, k = (a / np.max(np.abs(a)) if np.any(a) else a for a in (q, k))
    m_shifted, n_shifted = m + shift, n + shift
    here = rope_scores(q, k, [m], [n], scale=1.0)[0, 0]
    there = rope_scores(q, k, [m_shifted], [n_shifted], scale=1.0)[0, 0]
    size = float(np.linalg.norm(q) * np.linalg.norm(k))
    # the angles (up to 10^4 rad) are rounded to ~1e-12 rad: the scores agree to that times |q||k|
    assert abs(float(here - there)) <= 1e-10 * size
    by_offset = ref_rope_score_complex(q[0], k[0], m - n, 0)
    assert abs(float(here) - by_offset) <= 1e-10 * size


@FAST
@given(float_arrays(dtypes=(np.float64,), min_dims=2, max_dims=3), st.data())
def test_rope_keeps_every_rows_length(x, data):
    if x.shape[-1] % 2:
        x = np.concatenate([x, x[..., :1]], axis=-1)
    positions = data.draw(
        st.lists(st.integers(-(10**6), 10**6), min_size=x.shape[-2], max_size=x.shape[-2])
    )
    rotated = no_warnings(apply_rope, x, positions)
    scale = np.max(np.abs(x), axis=-1, keepdims=True)  # norms of huge rows without overflow
    scale[scale == 0] = 1.0
    before = np.linalg.norm(x / scale, axis=-1)  # (..., n)
    after = np.linalg.norm(rotated / scale, axis=-1)  # (..., n)
    # a subnormal row keeps fewer digits: each rotated entry is rounded to a multiple of the
    # smallest subnormal, which is large against a row as tiny as 1e-313
    floor = 4 * x.shape[-1] * np.finfo(np.float64).smallest_subnormal / scale[..., 0]  # (..., n)
    assert np.all(np.abs(after - before) <= 1e-13 * before + floor), (after, before)


@FAST
@given(float_arrays(min_dims=2, max_dims=4))
def test_rope_at_position_zero_is_the_identity(x):
    if x.shape[-1] % 2:
        x = np.concatenate([x, x[..., :1]], axis=-1)
    rotated = no_warnings(apply_rope, x, np.zeros(x.shape[-2], dtype=int))
    assert rotated.dtype == x.dtype
    np.testing.assert_array_equal(rotated, x)


def test_rope_is_the_same_rotation_as_the_half_split_convention_on_reordered_dims():
    """GPT-NeoX pairs dimension i with i + d/2; interleaved RoPE on reordered dims is the same."""
    d = 8
    x = rng_rows(7, (4, d))
    positions = [0, 1, 5, 40]

    def half_split(x, positions):  # rotate_half, as in GPT-NeoX / Hugging Face Llama
        angles = np.asarray(positions, float)[:, None] * position_frequencies(d)  # (n, d/2)
        cos, sin = (
            np.cos(np.concatenate([angles] * 2, -1)),
            np.sin(np.concatenate([angles] * 2, -1)),
        )
        rotated_half = np.concatenate([-x[:, d // 2 :], x[:, : d // 2]], -1)
        return x * cos + rotated_half * sin

    to_pairs = np.ravel(np.column_stack([np.arange(d // 2), np.arange(d // 2, d)]))  # 0,4,1,5..
    np.testing.assert_allclose(
        apply_rope(x[:, to_pairs], positions), half_split(x, positions)[:, to_pairs], atol=1e-14
    )
    assert not np.allclose(apply_rope(x, positions), half_split(x, positions))


# --------------------------------------------------------------------------- ALiBi
def test_alibi_slopes_for_eight_heads_are_one_half_to_one_256th():
    assert alibi_slopes(8).tolist() == [
        1 / 2,
        1 / 4,
        1 / 8,
        1 / 16,
        1 / 32,
        1 / 64,
        1 / 128,
        1 / 256,
    ]


@pytest.mark.parametrize("n", [*range(1, 20), 24, 32, 48, 64, 96, 100])
def test_alibi_slopes_match_the_papers_code(n):
    slopes = alibi_slopes(n)
    assert slopes.shape == (n,) and slopes.dtype == np.float64
    np.testing.assert_allclose(slopes, ref_alibi_slopes(n), rtol=1e-14)
    assert len(set(slopes.tolist())) == n and (slopes > 0).all() and (slopes < 1).all()


@pytest.mark.parametrize(("n_q", "n_k"), [(1, 1), (4, 4), (2, 5), (5, 2), (1, 6)])
@pytest.mark.parametrize("causal", [True, False])
def test_alibi_bias_matches_the_distances(n_q, n_k, causal):
    slopes = alibi_slopes(3)
    bias = alibi_bias(n_q, n_k, slopes, causal=causal)
    assert bias.shape == (3, n_q, n_k) and bias.dtype == np.float64
    np.testing.assert_array_equal(bias, ref_alibi_bias(n_q, n_k, slopes, causal))
    assert not np.signbit(bias[bias == 0]).any(), "a zero distance reads 0.0, not -0.0"


def test_alibi_weights_are_geometric_when_the_content_is_equal():
    """Equal scores plus ALiBi: the last query's weights fall by e^{-m} per step back."""
    n, m = 12, 0.5
    scores = np.zeros((1, n, n))  # q·k the same for every pair
    weights = softmax(scores + alibi_bias(n, n, [m]), axis=-1)[0]  # (n, n)
    last = weights[-1]  # keys 0 .. n-1 at distances n-1 .. 0
    ratio = math.exp(-m)
    expected = [ratio ** (n - 1 - j) for j in range(n)]
    total = math.fsum(expected)
    np.testing.assert_allclose(last, [e / total for e in expected], rtol=1e-13)
    assert (np.triu(weights, 1) == 0).all(), "keys after the query get weight exactly 0"


# --------------------------------------------------------------------------- equivariance
@FAST
@given(st.integers(2, 7), st.integers(0, 10**6), st.randoms(use_true_random=False))
def test_attention_is_permutation_equivariant_without_positions(n, seed, random):
    x = rng_rows(seed, (n, 4))
    order = list(range(n))
    random.shuffle(order)
    out, _ = scaled_dot_product_attention(x, x, x)
    shuffled = permute_tokens(x, order)
    out_shuffled, _ = scaled_dot_product_attention(shuffled, shuffled, shuffled)
    np.testing.assert_allclose(out_shuffled, permute_tokens(out, order), rtol=1e-12, atol=1e-12)


def test_positions_break_the_equivariance_and_travel_with_their_tokens():
    n, d = 5, 8
    x = rng_rows(11, (n, d))
    order = [3, 0, 4, 1, 2]
    positions = np.arange(n)
    pe = sinusoidal_positions(n, d)

    def sinusoidal(x):
        h = x + pe
        return scaled_dot_product_attention(h, h, h)[0]

    def rotary(x, positions=positions):
        q = apply_rope(x, positions)
        return scaled_dot_product_attention(q, q, x)[0]  # values are not rotated

    for attend in (sinusoidal, rotary):
        gap = np.abs(attend(permute_tokens(x, order)) - permute_tokens(attend(x), order)).max()
        assert gap > 0.05, f"{attend.__name__} positions left attention equivariant ({gap})"
    # Moving the positions with their tokens restores it: a token's position is what says where.
    np.testing.assert_allclose(
        rotary(permute_tokens(x, order), positions[order]),
        permute_tokens(rotary(x), order),
        rtol=1e-12,
        atol=1e-12,
    )


def test_permute_tokens_copies_and_keeps_the_dtype():
    x = rng_rows(12, (2, 3, 4)).astype(np.float32)
    permuted = permute_tokens(x, np.array([2, 0, 1]))
    assert permuted.dtype == np.float32
    np.testing.assert_array_equal(permuted, x[:, [2, 0, 1], :])
    permuted[...] = 0
    assert (x != 0).any()


# --------------------------------------------------------------------------- dtypes
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_dtype_in_is_dtype_out(dtype):
    q, k = rng_rows(13, (3, 4)).astype(dtype), rng_rows(14, (2, 4)).astype(dtype)
    assert apply_rope(q, [0, 1, 2]).dtype == dtype
    assert rope_scores(q, k, [0, 1, 2], [0, 1]).dtype == dtype
    assert alibi_bias(2, 3, np.array([0.5, 0.25], dtype=dtype)).dtype == dtype
    assert learned_positions(q, [1]).dtype == dtype
    assert permute_tokens(q, [1, 0, 2]).dtype == dtype
    reference = apply_rope(q.astype(np.float64), [0, 1, 2])
    tolerance = {np.float16: 2e-3, np.float32: 2e-7, np.float64: 1e-15}[dtype]
    np.testing.assert_allclose(apply_rope(q, [0, 1, 2]), reference, rtol=tolerance, atol=tolerance)


def test_lists_and_ints_give_float64():
    assert apply_rope([[1, 0]], [3]).dtype == np.float64
    assert alibi_bias(1, 2, [1]).dtype == np.float64


# --------------------------------------------------------------------------- inputs untouched
def test_inputs_are_never_modified():
    q, k = rng_rows(15, (2, 3, 4)), rng_rows(16, (2, 5, 4))
    q_pos, k_pos = np.arange(3), np.arange(5)
    slopes, table = alibi_slopes(2), rng_rows(17, (6, 4))
    arrays = (q, k, q_pos, k_pos, slopes, table)
    copies = [a.copy() for a in arrays]
    for a in arrays:
        a.setflags(write=False)  # a write would raise
    apply_rope(q, q_pos)
    rope_scores(q, k, q_pos, k_pos)
    rope_angles(q_pos, 4)
    alibi_bias(3, 5, slopes)
    learned_positions(table, k_pos)
    permute_tokens(k, [4, 3, 2, 1, 0])
    for a, c in zip(arrays, copies, strict=True):
        np.testing.assert_array_equal(a, c)


def test_results_are_new_arrays():
    x = rng_rows(18, (3, 4))
    for result in (apply_rope(x, np.zeros(3)), permute_tokens(x, [0, 1, 2])):
        assert not np.shares_memory(result, x)


# --------------------------------------------------------------------------- bad input
BAD = [
    # (call, match): each message names the argument and says what it got
    (lambda: sinusoidal_positions(0, 4), r"n_positions must be a positive int \(>= 1\), got 0"),
    (lambda: sinusoidal_positions(3.0, 4), r"n_positions must be a positive int, got 3\.0"),
    (lambda: sinusoidal_positions(3, 5), r"d_model must be even .*got 5"),
    (lambda: sinusoidal_positions(3, 4, base=0), r"base must be > 0, got 0\.0"),
    (lambda: sinusoidal_positions(3, 4, base=np.nan), r"base must be finite, got nan"),
    (lambda: position_frequencies(True), r"d must be a positive int, got True"),
    (lambda: rope_angles([0, np.nan], 4), r"positions contains NaN \(1 of 2 entries\)"),
    (lambda: rope_angles([0, np.inf], 4), r"positions must be finite"),
    (lambda: rope_angles(["a"], 4), r"positions must contain real numbers"),
    (lambda: apply_rope(np.ones(4), [0]), r"x must have at least 2 dimensions .*shape \(4,\)"),
    (lambda: apply_rope(np.ones((2, 3)), [0, 1]), r"x must have an even.*shape \(2, 3\)"),
    (lambda: apply_rope(np.ones((2, 0)), [0, 1]), r"x must have an even, non-zero.*\(2, 0\)"),
    (
        lambda: apply_rope(np.ones((2, 4)), [0, 1, 2]),
        r"positions must broadcast to x's shape without its last axis, \(2,\).*"
        r"positions has shape \(3,\), x has shape \(2, 4\)",
    ),
    (lambda: apply_rope(np.ones((2, 4)), 3), r"positions must broadcast .*shape \(\)"),
    (lambda: apply_rope([[1.0, np.nan]], [0]), r"x contains NaN"),
    (lambda: apply_rope([[1.0, 2.0]], [0], base=-1), r"base must be > 0"),
    (
        lambda: apply_rope(np.full((1, 2), 1.7e308), [1]),
        r"x is too large to rotate in float64.*shape \(1, 2\)",
    ),
    (lambda: rope_scores(np.ones((2, 3)), np.ones((2, 4)), [0, 1], [0, 1]), r"q must have an even"),
    (
        lambda: rope_scores(np.ones((2, 4)), np.ones((3, 4)), [0, 1], [0, 1]),
        r"k_positions must broadcast to k's shape.*k_positions has shape \(2,\), k has shape",
    ),
    (
        lambda: rope_scores(np.ones((2, 4)), np.ones((3, 6)), [0, 1], [0, 1, 2]),
        r"q and k must have the same last dimension d_k: q has shape \(2, 4\), k has shape",
    ),
    (
        lambda: rope_scores(np.ones((2, 4)), np.ones((3, 4)), [0, 1], [0, 1, 2], scale=0),
        r"scale must be > 0",
    ),
    (lambda: alibi_slopes(0), r"n_heads must be a positive int \(>= 1\), got 0"),
    (lambda: alibi_slopes(8.0), r"n_heads must be a positive int, got 8\.0"),
    (lambda: alibi_bias(0, 3, [0.5]), r"n_q must be a positive int"),
    (lambda: alibi_bias(2, 3, [[0.5]]), r"slopes must be a 1-D array .*shape \(1, 1\)"),
    (lambda: alibi_bias(2, 3, []), r"slopes must be a 1-D array .*shape \(0,\)"),
    (lambda: alibi_bias(2, 3, [0.5, -0.1]), r"slopes must be >= 0 .*got -0\.1"),
    (lambda: alibi_bias(2, 3, [np.inf]), r"slopes must be finite"),
    (lambda: alibi_bias(2, 3, [0.5], causal=1), r"causal must be True or False, got 1"),
    (lambda: learned_positions(np.ones(4), [0]), r"table must have shape \(n_max, d\).*\(4,\)"),
    (lambda: learned_positions(np.ones((0, 4)), [0]), r"table must have shape .*\(0, 4\)"),
    (
        lambda: learned_positions(np.ones((3, 4)), [0.0, 1.0]),
        r"positions must be integers.*float64",
    ),
    (lambda: learned_positions(np.ones((3, 4)), [-1]), r"positions must lie in 0 \.\. 2.*got -1"),
    (lambda: permute_tokens(np.ones((3, 2)), [0, 1]), r"order must be a permutation of 0 \.\. 2"),
    (
        lambda: permute_tokens(np.ones((3, 2)), [0, 0, 1]),
        r"order must be a permutation .*\[0, 0, 1\]",
    ),
    (lambda: permute_tokens(np.ones((3, 2)), [0.0, 1.0, 2.0]), r"order must be a permutation"),
    (lambda: permute_tokens(np.ones(3), [0, 1, 2]), r"x must have at least 2 dimensions"),
]


@pytest.mark.parametrize(("call", "match"), BAD, ids=[m[:40] for _, m in BAD])
def test_bad_input_is_a_clear_value_error(call, match):
    with pytest.raises(ValueError, match=match):
        no_warnings(call)
