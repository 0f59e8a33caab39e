"""Lesson 9's explorer: the first run is trained before the first picture, the other seven
in the background, each exactly once, and the background runs equal foreground ones."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from attnlab import training
from attnlab.explorers import training as explorer_module
from attnlab.explorers.training import (
    D_K_VALUES,
    SCALINGS,
    TrainingExplorer,
    snapshot_steps,
    training_run,
)

ALL_RUNS = {(d, a) for d in D_K_VALUES for _, a in SCALINGS}


def wait_for_background_training():
    """Join every training thread an earlier explorer (a doctest, another test) left running."""
    for thread in threading.enumerate():
        if thread.name == "attnlab-training":
            thread.join(timeout=120)


@pytest.fixture
def no_runs(monkeypatch):
    """An empty run cache and a counting ``train``, for this test only."""
    wait_for_background_training()  # else it would fill the new cache through the counter
    monkeypatch.setattr(explorer_module, "_RUNS", {})
    calls = []
    real = training.train

    def counting(d_k, exponent, seed):
        calls.append((d_k, exponent))
        return real(d_k, exponent, seed=seed)

    monkeypatch.setattr(explorer_module, "train", counting)
    return calls


def test_building_trains_only_the_run_it_shows_then_the_rest_in_the_background(
    no_runs, monkeypatch
):
    started = []
    monkeypatch.setattr(explorer_module, "train_the_rest", lambda: started.append(True))
    explorer = TrainingExplorer()
    assert no_runs == [(16, 0.5)] and started == [True]
    assert explorer.state.d_k == 16 and explorer.state.exponent == 0.5


def test_the_background_trains_every_other_run_once(no_runs):
    training_run(16, 0.5)
    background = explorer_module.train_the_rest()
    background.join(timeout=900)  # seconds alone; minutes on a machine loaded 4x over
    assert not background.is_alive(), "the background training did not finish in 15 minutes"
    assert sorted(no_runs) == sorted(ALL_RUNS)  # the one already trained is not trained again
    assert set(explorer_module._RUNS) == ALL_RUNS


def test_a_run_asked_for_while_it_trains_is_waited_for_not_trained_twice(no_runs):
    threads = [threading.Thread(target=training_run, args=(64, 0.0)) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert no_runs == [(64, 0.0)]


def test_a_step_waits_for_a_run_the_background_is_training():
    explorer = TrainingExplorer()
    explorer.set(d_k=256, exponent=0.0, step=300)  # perhaps still training: the step waits
    assert explorer.last_error is None
    assert explorer.state.d_k == 256 and explorer.state.exponent == 0.0
    explorer.training.join(timeout=120)
    assert set(explorer_module._RUNS) == ALL_RUNS


def test_runs_trained_in_the_background_equal_runs_trained_in_the_foreground():
    TrainingExplorer().training.join(timeout=120)
    for d_k, exponent in [(4, 0.5), (256, 0.0)]:
        cached = training_run(d_k, exponent)
        fresh = training.train(d_k, exponent, seed=0)
        assert np.array_equal(cached.loss, fresh.loss)
        assert np.array_equal(cached.weights, fresh.weights)
        assert cached.solved_at == fresh.solved_at


def test_the_step_slider_offers_exactly_the_snapshot_steps():
    run = training_run(16, 0.5)
    assert np.array_equal(snapshot_steps(), run.eval_steps)
    slider = TrainingExplorer().controls["step"]
    assert [value for _, value in slider.options] == run.eval_steps.tolist()


def test_a_run_the_explorer_does_not_offer_is_refused_by_name():
    with pytest.raises(ValueError, match="d_k must be one of"):
        training_run(32, 0.5)
    with pytest.raises(ValueError, match="exponent must be one of"):
        training_run(16, 1.0)
