"""attnlab.training: deterministic runs that solve reversal with an anti-diagonal head."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from attnlab import training
from attnlab.patterns import diagonal_mass, strongest_links
from attnlab.training import (
    ADAM_BETAS,
    ADAM_EPS,
    PROBE,
    AdamState,
    Head,
    N,
    adam_init,
    adam_step,
    anti_diagonal_mass,
    encode,
    init_head,
    loss_and_grads,
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


def _adam_reference(params, grads_per_step, lr, betas=ADAM_BETAS, eps=ADAM_EPS):
    """Adam written out one scalar at a time in Python floats (float64), as in Kingma & Ba."""
    beta1, beta2 = betas
    flat = [float(x) for x in params]
    m, v = [0.0] * len(flat), [0.0] * len(flat)
    for t, grads in enumerate(grads_per_step, start=1):
        for i, g in enumerate(grads):
            m[i] = beta1 * m[i] + (1 - beta1) * g
            v[i] = beta2 * v[i] + (1 - beta2) * g * g
            m_hat = m[i] / (1 - beta1**t)
            v_hat = v[i] / (1 - beta2**t)
            flat[i] -= lr * m_hat / (v_hat**0.5 + eps)
    return flat


def _flat(head: Head) -> np.ndarray:
    return np.concatenate([w.ravel() for _, w in head.items()])  # (all weights,)


def test_adam_step_matches_a_float64_reference_loop_on_real_gradients():
    """Ten Adam steps on the head's own gradients, against the scalar loop above."""
    head = init_head(d_k=4, seed=3)
    state = adam_init(head)
    batches = np.random.default_rng(7)
    start = _flat(head)
    seen = []
    for _ in range(10):
        tokens, targets = reverse_batch(batches, batch=8)
        _, grads, _ = loss_and_grads(head, encode(tokens), targets, 0.5)
        seen.append(_flat(grads).tolist())
        head, state = adam_step(head, grads, state, lr=0.05)
    assert state.t == 10 and isinstance(state, AdamState)
    expected = _adam_reference(start, seen, lr=0.05)
    np.testing.assert_allclose(_flat(head), expected, rtol=1e-12, atol=1e-14)


def test_adam_steps_ignore_the_size_of_the_gradient():
    """Scaling every gradient by 1000 leaves Adam's steps (up to eps) the same; SGD's not."""
    head = init_head(4)
    grads = Head(*(np.full_like(w, 0.01) for _, w in head.items()))
    big = Head(*(1000 * g for _, g in grads.items()))
    small_step, _ = adam_step(head, grads, adam_init(head), 0.1)
    big_step, _ = adam_step(head, big, adam_init(head), 0.1)
    np.testing.assert_allclose(_flat(small_step), _flat(big_step), rtol=0, atol=1e-6)
    np.testing.assert_allclose(_flat(small_step), _flat(head) - 0.1, rtol=0, atol=1e-6)


def test_adam_runs_are_deterministic_and_learn():
    one = train(d_k=8, seed=1, lr=0.125, optimizer="adam", steps=100, eval_every=5)
    two = train(d_k=8, seed=1, lr=0.125, optimizer="adam", steps=100, eval_every=5)
    assert one.optimizer == "adam" and np.array_equal(one.loss, two.loss)
    assert one.solved_at is not None and one.solved_at < 100


def test_stop_when_solved_ends_at_the_first_solved_evaluation():
    full = train(d_k=8, seed=0, lr=4.0, steps=120, eval_every=5)
    early = train(d_k=8, seed=0, lr=4.0, steps=120, eval_every=5, stop_when_solved=True)
    assert early.solved_at == full.solved_at == early.steps == early.eval_steps[-1]
    assert np.array_equal(early.loss, full.loss[: early.steps])
    assert len(early.grad_norm) == early.steps


def test_a_diverging_run_stops_and_says_so():
    run = train(d_k=8, seed=0, lr=4096.0, steps=100, eval_every=5)
    assert run.diverged and run.solved_at is None and run.steps < 100
    assert np.all(np.isfinite(run.eval_loss))


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"d_k": 0}, "d_k"),
        ({"d_k": 4, "steps": 0}, "steps"),
        ({"d_k": 4, "lr": -1.0}, "lr"),
        ({"d_k": 4, "exponent": float("nan")}, "exponent"),
        ({"d_k": 4, "optimizer": "rmsprop"}, "optimizer"),
    ],
)
def test_bad_settings_are_named(kwargs, name):
    with pytest.raises(ValueError, match=name):
        train(**kwargs)


INTERRUPTED_CELL = """
import attnlab.training as t
calls = []
real = t.loss_and_grads
def interrupted(*args, **kwargs):
    calls.append(1)
    if len(calls) == 4:
        raise KeyboardInterrupt  # what the kernel's Interrupt raises in the running cell
    return real(*args, **kwargs)
t.loss_and_grads = interrupted
run = t.train(d_k=16, exponent=0.5, seed=0)
"""


def test_interrupting_training_ends_with_one_line():
    """Issue 29: interrupting lesson 9's training cell printed a 71-line traceback."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "IPython",
            "--no-banner",
            "--colors=NoColor",
            "-c",
            INTERRUPTED_CELL,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        # another virtualenv activated in the caller's shell makes IPython warn on stderr
        env={k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"},
    )
    shown = [line for line in (done.stdout + done.stderr).splitlines() if line.strip()]
    assert shown == ["Training stopped at step 3 of 300 (interrupted)."], shown


def test_an_interrupt_is_still_an_interrupt(monkeypatch):
    """Run All stops there, and no ``except Exception`` swallows it."""

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(training, "loss_and_grads", interrupted)
    with pytest.raises(KeyboardInterrupt) as caught:
        training.train(d_k=4)
    assert isinstance(caught.value, training.TrainingStopped) and caught.value.step == 0
    assert not isinstance(caught.value, Exception)


# ---------------------------------------------------------------- a chosen start, per-matrix rates
def test_a_given_start_and_unit_rate_multipliers_change_nothing():
    plain = training.train(4, 0.5, seed=3, steps=20, eval_every=5)
    same = training.train(
        4,
        0.5,
        seed=3,
        steps=20,
        eval_every=5,
        init=training.init_head(4, 3),
        lr_scale={"w_q": 1.0, "w_v": 1.0},
    )
    np.testing.assert_array_equal(plain.loss, same.loss)


def test_per_matrix_rates_move_only_the_matrices_named():
    head = training.init_head(4, 0)
    rates = training.Head(w_q=0.0, w_k=0.0, w_v=0.5, w_o=0.0)
    grads = training.Head(*(np.ones_like(w) for _, w in head.items()))
    stepped = training.sgd_step(head, grads, rates)
    np.testing.assert_array_equal(stepped.w_q, head.w_q)
    np.testing.assert_array_equal(stepped.w_v, head.w_v - 0.5)
    moved, _ = training.adam_step(head, grads, training.adam_init(head), rates)
    np.testing.assert_array_equal(moved.w_k, head.w_k)
    np.testing.assert_allclose(moved.w_v, head.w_v - 0.5, atol=1e-7)
    # in train: a larger rate on W_Q and W_K alone changes the run, and W_V's trajectory with it
    base = training.train(4, 1.0, seed=0, steps=10, lr=1.0, eval_every=5)
    fast = training.train(4, 1.0, seed=0, steps=10, lr=1.0, eval_every=5, lr_scale={"w_q": 8.0})
    assert not np.array_equal(base.loss[1:], fast.loss[1:])
    assert base.loss[0] == fast.loss[0]  # the same start


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"init": "weights"}, "init"),
        ({"init": training.init_head(8)}, "init"),
        ({"lr_scale": {"w_x": 2.0}}, "lr_scale"),
        ({"lr_scale": {"w_q": 0.0}}, "lr_scale"),
        ({"lr_scale": {"w_q": float("nan")}}, "lr_scale"),
        ({"lr_scale": [2.0]}, "lr_scale"),
    ],
)
def test_a_bad_start_or_rate_multiplier_is_named(kwargs, name):
    with pytest.raises(ValueError, match=name):
        training.train(4, steps=2, **kwargs)
