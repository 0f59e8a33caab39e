"""attnlab.training: deterministic runs that solve reversal with an anti-diagonal head."""

from __future__ import annotations

import numpy as np
import pytest

from attnlab.patterns import diagonal_mass, strongest_links
from attnlab.training import (
    PROBE,
    Head,
    N,
    anti_diagonal_mass,
    encode,
    init_head,
    reverse_batch,
    sgd_step,
    train,
)


@pytest.fixture(scope="module")
def run():
    return train(d_k=16, exponent=0.5, seed=0)


def test_runs_are_deterministic(run):
    again = train(d_k=16, exponent=0.5, seed=0)
    assert np.array_equal(run.loss, again.loss) and np.array_equal(run.weights, again.weights)
    other = train(d_k=16, exponent=0.5, seed=1, steps=20)
    assert not np.array_equal(run.loss[:20], other.loss)


def test_the_head_learns_reversal_and_the_pattern_is_the_anti_diagonal(run):
    assert run.solved_at is not None and run.accuracy[-1] >= 0.99
    assert run.loss[-20:].mean() < 0.05 * run.loss[:20].mean()
    final = run.weights[-1]  # (n, n)
    assert anti_diagonal_mass(final) > 0.75 > anti_diagonal_mass(run.weights[0])
    assert diagonal_mass(final) < 0.1  # not the diagonal of lesson 4
    links = {(i, j) for i, j, _ in strongest_links(final, count=N)}
    assert links == {(i, N - 1 - i) for i in range(N)}
    assert run.entropy[-1].mean() < run.entropy[0].mean()


def test_anti_diagonal_mass_is_diagonal_mass_read_right_to_left():
    w = np.random.default_rng(0).dirichlet(np.ones(5), size=5)  # (5, 5) rows sum to 1
    assert anti_diagonal_mass(w) == pytest.approx(np.mean([w[i, 4 - i] for i in range(5)]))
    assert anti_diagonal_mass(np.full((4, 4), 0.25)) == pytest.approx(0.25)


def test_batches_encode_tokens_and_positions():
    tokens, targets = reverse_batch(np.random.default_rng(3), batch=5)
    assert np.array_equal(targets, tokens[:, ::-1])
    x = encode(tokens)
    assert x.shape == (5, N, 8 + N) and np.all(x.sum(axis=-1) == 2)
    assert np.array_equal(x[..., 8:], np.broadcast_to(np.eye(N), (5, N, N)))
    assert len(PROBE) == N and len(set(PROBE)) < N  # a repeated token on purpose


def test_initial_q_and_k_entries_have_unit_variance():
    head = init_head(d_k=256, seed=0)
    x = encode(reverse_batch(np.random.default_rng(1), batch=64)[0])
    q = x @ head.w_q  # (64, n, 256)
    assert 0.85 < q.var() < 1.15


def test_sgd_step_makes_new_arrays():
    head = init_head(4)
    grads = Head(*(np.ones_like(w) for _, w in head.items()))
    before = head.w_q.copy()
    stepped = sgd_step(head, grads, 0.1)
    assert np.array_equal(head.w_q, before)
    np.testing.assert_allclose(stepped.w_q, before - 0.1)


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"d_k": 0}, "d_k"),
        ({"d_k": 4, "steps": 0}, "steps"),
        ({"d_k": 4, "lr": -1.0}, "lr"),
        ({"d_k": 4, "exponent": float("nan")}, "exponent"),
    ],
)
def test_bad_settings_are_named(kwargs, name):
    with pytest.raises(ValueError, match=name):
        train(**kwargs)
