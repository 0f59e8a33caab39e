"""Lesson 11's explorer: the history it scrubs through is the run's, frame by frame."""

from __future__ import annotations

import numpy as np
import pytest

from attnlab.attention_only import ModelConfig, forward
from attnlab.explorers import all_explorers
from attnlab.explorers.induction import (
    InductionExplorer,
    default_history,
    induction_frame,
    training_history,
)
from attnlab.induction import InductionConfig, eval_batch, train

SMALL = InductionConfig(
    model=ModelConfig(vocab=8, n_ctx=8, d_model=8, n_layers=2, n_heads=1, d_head=4),
    steps=20,
    min_repeat=2,
    max_repeat=4,
    eval_every=10,
    eval_size=16,
)


@pytest.fixture(scope="module")
def small_run():
    snapshots = {}
    run = train(SMALL, seed=1, callback=lambda p: snapshots.update({p.step: p.params}))
    return run, snapshots


def test_every_frame_is_the_forward_pass_of_that_steps_weights(small_run):
    run, snapshots = small_run
    history = training_history(run, snapshots, length=3)
    assert history.steps.tolist() == [0, 10, 20]
    batch = eval_batch(SMALL)
    row = int(np.flatnonzero(batch.lengths == 3)[0])
    seq = batch.tokens[row, :6]
    assert history.tokens.tolist() == seq.tolist() and history.n == 6
    for i, step in enumerate(history.steps):
        _, cache = forward(snapshots[int(step)], seq[None])
        for layer in range(2):
            assert np.allclose(history.weights[i, layer], cache.weights[layer][0, 0])
    assert np.allclose(history.weights.sum(axis=-1), 1.0)  # every row a distribution
    assert np.allclose(np.triu(history.weights, 1), 0.0)  # causal
    assert np.array_equal(history.repeat_loss, run.repeat_loss)
    assert np.array_equal(history.induction, run.induction[:, 1, 0])
    assert np.array_equal(history.previous_token, run.previous_token[:, 0, 0])


def test_a_frame_is_the_history_at_that_step(small_run):
    history = training_history(*small_run, length=3)
    frame = induction_frame(history, 10)
    assert frame.index == 1 and frame.repeat_loss == history.repeat_loss[1]
    assert np.array_equal(frame.layer1, history.weights[1, 1])
    with pytest.raises(ValueError, match="one of the evaluated steps"):
        induction_frame(history, 5)


def test_bad_inputs_are_refused_by_name(small_run):
    run, snapshots = small_run
    with pytest.raises(ValueError, match="length must be a repeat length"):
        training_history(run, snapshots, length=40)
    with pytest.raises(ValueError, match="snapshots has no weights for steps"):
        training_history(run, {0: snapshots[0]}, length=3)
    one_layer = train(SMALL.replace(n_layers=1, steps=10), seed=0)
    with pytest.raises(ValueError, match="two-layer model with one head per layer"):
        training_history(one_layer, snapshots, length=3)
    with pytest.raises(ValueError, match="history must be a TrainingHistory"):
        InductionExplorer(history=run)


def test_the_explorer_shows_the_history_it_is_given(small_run):
    history = training_history(*small_run, length=3)
    explorer = InductionExplorer(history)
    assert explorer.state.step == 20  # the last step by default
    explorer.controls["step"].value = 0  # as the slider would
    assert explorer.state.step == 0
    assert np.array_equal(explorer.artists["layer1"].get_array(), history.weights[0, 1])
    assert "step <b>0</b>" in explorer.readout.value


def test_the_default_is_found_with_the_other_explorers_and_trained_once():
    assert InductionExplorer in all_explorers()
    assert default_history() is default_history()
