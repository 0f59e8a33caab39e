r"""The √d_k experiment: train the same head with the scores scaled by ``d_k^(−α)``.

Lesson 2 argued from variances: with unit-variance entries ``q · k`` has variance ``d_k``, so
without a correction the scores of a wide head are large, the softmax saturates and its
Jacobian (and with it the gradient) nearly vanishes; ``α = ½`` keeps the variance at 1,
``α = ⅓`` under-corrects and ``α = ⅔`` over-corrects. :func:`sweep` tests that by training
(:func:`attnlab.training.train`) at every exponent, head width and seed, with one learning
rate and one budget for all, and records per run:

* ``solved_at`` — the first evaluation step with accuracy ≥ 0.99 (None if never);
* ``final_loss`` — the evaluation loss after the budget;
* ``anti_diagonal`` — lesson 4's diagonal mass of the probe heatmap read right to left;
* ``final_entropy`` — its mean normalised row entropy (lesson 4);
* ``start_entropy`` — the same at step 0: how saturated the softmax starts;
* ``start_grad`` — the size of ``∂L/∂W_Q`` and ``∂L/∂W_K`` at the first step.

The full sweep takes about a minute; ``tools/sqrt_dk_sweep.py`` runs it and writes
:data:`SHIPPED` (``attnlab/sqrt_dk_sweep.json``), which :func:`load_shipped` reads.

Examples
--------
>>> records = sweep(exponents=(0.5,), d_ks=(4,), seeds=(0,), steps=60)
>>> sorted(records[0])[:3]
['anti_diagonal', 'd_k', 'exponent']
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import numpy as np

from attnlab.training import LEARNING_RATE, STEPS, anti_diagonal_mass, train

__all__ = ["CONFIG", "SHIPPED", "exponent_name", "load_shipped", "summary", "sweep", "table"]

#: The full sweep that tools/sqrt_dk_sweep.py runs.
CONFIG = {
    "exponents": [0.0, 1 / 3, 0.5, 2 / 3],
    "d_ks": [4, 8, 16, 32, 64, 128, 256],
    "seeds": [0, 1, 2, 3, 4],
    "steps": STEPS,
    "lr": LEARNING_RATE,
}
SHIPPED = Path(__file__).with_name("sqrt_dk_sweep.json")
DIGITS = 6  #: values are stored rounded to this many decimals


def _round(value):
    return None if value is None else round(float(value), DIGITS)


def run_record(
    exponent: float, d_k: int, seed: int, steps: int = STEPS, lr: float = LEARNING_RATE
) -> dict:
    """Train once and keep the numbers the experiment compares (rounded to :data:`DIGITS`)."""
    run = train(d_k, exponent, seed, steps=steps, lr=lr)
    return {
        "exponent": _round(exponent),
        "d_k": d_k,
        "seed": seed,
        "solved_at": run.solved_at,
        "final_loss": _round(run.eval_loss[-1]),
        "anti_diagonal": _round(anti_diagonal_mass(run.weights[-1])),
        "final_entropy": _round(run.entropy[-1].mean()),
        "start_entropy": _round(run.entropy[0].mean()),
        "start_grad": _round(run.grad_norm[0]),
    }


def sweep(
    exponents=CONFIG["exponents"],
    d_ks=CONFIG["d_ks"],
    seeds=CONFIG["seeds"],
    steps: int = STEPS,
    lr: float = LEARNING_RATE,
) -> list[dict]:
    """One :func:`run_record` per (exponent, d_k, seed), in that nesting order."""
    return [run_record(a, d, s, steps, lr) for a in exponents for d in d_ks for s in seeds]


def load_shipped() -> dict:
    """The precomputed full sweep: ``{"config": CONFIG, "records": [...]}``."""
    return json.loads(SHIPPED.read_text(encoding="utf-8"))


def exponent_name(exponent: float) -> str:
    """``0``, ``1/3``, ``1/2``, ``2/3`` for the exponents of the sweep.

    >>> exponent_name(0.5), exponent_name(2 / 3), exponent_name(0.0)
    ('1/2', '2/3', '0')
    """
    return str(Fraction(exponent).limit_denominator(12))


def summary(records, key: str) -> dict:
    """``{(exponent, d_k): (median, min, max)}`` of ``key`` over the seeds.

    A run that never solved counts as ``inf`` for ``solved_at``.
    """
    groups: dict = {}
    for r in records:
        value = r[key]
        groups.setdefault((r["exponent"], r["d_k"]), []).append(
            np.inf if value is None else float(value)
        )
    return {g: (float(np.median(v)), float(np.min(v)), float(np.max(v))) for g, v in groups.items()}


def table(records, key: str = "solved_at", fmt: str = "{:.0f}") -> str:
    """A text table: one row per exponent, one column per d_k, ``median [min–max]`` per cell."""
    stats = summary(records, key)
    exponents = sorted({a for a, _ in stats})
    d_ks = sorted({d for _, d in stats})

    def cell(m, lo, hi):
        if lo == hi:
            return fmt.format(m)
        return f"{fmt.format(m)} [{fmt.format(lo)}–{fmt.format(hi)}]"

    cells = [[cell(*stats[(a, d)]) for d in d_ks] for a in exponents]
    width = max(len(c) for row in cells for c in row) + 2
    head = "α \\ d_k".ljust(8) + "".join(str(d).rjust(width) for d in d_ks)
    rows = [
        exponent_name(a).ljust(8) + "".join(c.rjust(width) for c in row)
        for a, row in zip(exponents, cells, strict=True)
    ]
    return "\n".join([head, *rows])
