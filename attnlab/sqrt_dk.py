r"""The √d_k experiment: what does scaling the scores by ``d_k^(−α)`` buy?

Lesson 2 argued from variances: with unit-variance entries ``q · k`` has variance ``d_k``, so
without a correction the scores of a wide head are large, the softmax saturates and its
Jacobian nearly vanishes; ``α = ½`` keeps the variance at 1. This module tests what that
changes, in two parts, for every exponent ``α`` in :data:`CONFIG` and head width ``d_k``:

**At the start** (:func:`init_record`, no training): on the 256 fixed evaluation sequences of
:func:`attnlab.training.train`, the mean normalised row entropy of the attention weights, the
mean Frobenius norm of each row's softmax Jacobian, and the size of the first gradient on
``W_Q`` and ``W_K``. Each is summarised over the seeds by its **median**.

**In training** (:func:`run_steps`): the number of steps until the accuracy first reaches
0.99, evaluated every :data:`EVAL_EVERY` steps (the resolution), with at most :data:`CAP`
steps, for each optimizer (plain SGD and Adam), each learning rate of a log grid (powers of
2) and each seed. The grid is searched per setting (:func:`search_window`) until the best
rate lies strictly inside the rates tried, and always covers the optimizer's shared rate
(:data:`SHARED_LR`) and the rate that was best at the smallest width (``d_k = 4``), so every
setting can also be read at those rates. The **best rate** of a setting is the one at which
the slowest of the seeds gets there soonest (a run that never reaches 0.99 counts as never),
so a rate at which one seed diverges is not called best while a rate exists at which all
succeed; ties go to the smaller median, then to the smaller rate. Where two rates give the
same slowest seed and the same median (:func:`tied_rates`) the choice between them is the
tie-break's, not the data's: :func:`settings` reports every such tie.

``tools/sqrt_dk_sweep.py`` runs all of it on two processes and writes :data:`SHIPPED`
(``attnlab/sqrt_dk_sweep.json``); :func:`load_shipped` reads it and :func:`settings` digests it.

Examples
--------
>>> run_steps("adam", 0.5, 4, 0.25, seed=0)
16
>>> record = init_record(0.0, 256, seed=0)
>>> record["entropy"] < 0.2 < init_record(0.5, 256, seed=0)["entropy"]
True
"""

from __future__ import annotations

import json
import math
from fractions import Fraction
from pathlib import Path

import numpy as np

import attnlab
from attnlab.patterns import normalised_entropy
from attnlab.training import (
    OPTIMIZERS,
    encode,
    head_forward,
    init_head,
    loss_and_grads,
    reverse_batch,
    train,
)

__all__ = [
    "CAP",
    "CONFIG",
    "EVAL_EVERY",
    "SHARED_LR",
    "SHIPPED",
    "best_rate",
    "by_setting",
    "exponent_name",
    "init_record",
    "init_summary",
    "is_interior",
    "load_shipped",
    "run_steps",
    "search_window",
    "seed_values",
    "slowest",
    "settings",
    "start_steadiness",
    "steps_table",
    "tied_rates",
]

CAP = 300  #: the step budget of one run
EVAL_EVERY = 2  #: steps between evaluations: the resolution of "steps to 99 %"
SHARED_LR = {"sgd": 2.0, "adam": 2.0**-4}  #: one rate per optimizer, used at every setting
TUNE_WIDTH = 4  #: the width whose best rate every other width is also run at
LOG2_BOUNDS = (-16, 12)  #: the search never leaves 2**-16 … 2**12
#: The full sweep that tools/sqrt_dk_sweep.py runs.
CONFIG = {
    "optimizers": list(OPTIMIZERS),
    "exponents": [0.0, round(1 / 3, 6), 0.5, round(2 / 3, 6), 1.0],
    "d_ks": [4, 8, 16, 32, 64, 128, 256],
    "seeds": [0, 1, 2, 3, 4],
    "cap": CAP,
    "eval_every": EVAL_EVERY,
    "shared_lr": SHARED_LR,
    "tune_width": TUNE_WIDTH,
    "solved": 0.99,
}
SHIPPED = Path(__file__).with_name("sqrt_dk_sweep.json")
DIGITS = 6  #: initial statistics are stored rounded to this many decimals


def _round(value):
    return None if value is None else round(float(value), DIGITS)


def run_steps(optimizer: str, exponent: float, d_k: int, lr: float, seed: int) -> int | None:
    """Steps until the accuracy first reaches 0.99, or ``None`` within :data:`CAP` steps.

    One run of :func:`attnlab.training.train` with early stopping, evaluated every
    :data:`EVAL_EVERY` steps; a diverging run (the loss overflows) counts as ``None``.
    """
    run = train(
        d_k,
        exponent,
        seed,
        steps=CAP,
        lr=lr,
        eval_every=EVAL_EVERY,
        optimizer=optimizer,
        stop_when_solved=True,
    )
    return run.solved_at


def init_record(exponent: float, d_k: int, seed: int) -> dict:
    """The head before any training, on the 256 evaluation sequences and the first batch.

    Returns
    -------
    dict
        ``exponent``, ``d_k``, ``seed``; ``entropy``, the mean normalised row entropy of the
        attention weights (1 = uniform, 0 = one key per row); ``jacobian``, the mean Frobenius
        norm of a row's softmax Jacobian ``diag(w) − w wᵀ`` (lesson 2); ``grad``, the Frobenius
        size of ``(∂L/∂W_Q, ∂L/∂W_K)`` on the first training batch (what SGD multiplies by
        the learning rate at its first step). Rounded to :data:`DIGITS` decimals.
    """
    scale = d_k ** -float(exponent)
    head = init_head(d_k, seed)
    eval_tokens, _ = reverse_batch(np.random.default_rng(12345), batch=256)
    _, cache = head_forward(head, encode(eval_tokens), scale)
    weights = cache["weights"]  # (256, n, n)
    jacobians = attnlab.softmax_jacobian(weights)  # (256, n, n, n)
    tokens, targets = reverse_batch(np.random.default_rng([seed, 1]))  # train's first batch
    _, grads, _ = loss_and_grads(head, encode(tokens), targets, scale)
    return {
        "exponent": _round(exponent),
        "d_k": d_k,
        "seed": seed,
        "entropy": _round(normalised_entropy(weights).mean()),
        "jacobian": _round(np.linalg.norm(jacobians, axis=(-2, -1)).mean()),
        "grad": _round(math.hypot(np.linalg.norm(grads.w_q), np.linalg.norm(grads.w_k))),
    }


def init_summary(data: dict, key: str) -> dict:
    """``{(exponent, d_k): median over the seeds}`` of one initial statistic."""
    groups: dict = {}
    for r in data["init"]:
        groups.setdefault((r["exponent"], r["d_k"]), []).append(r[key])
    return {g: float(np.median(v)) for g, v in groups.items()}


def seed_values(data: dict, key: str) -> dict:
    """``{(exponent, d_k): [value per seed]}`` of one initial statistic."""
    groups: dict = {}
    for r in data["init"]:
        groups.setdefault((r["exponent"], r["d_k"]), []).append(r[key])
    return groups


def start_steadiness(data: dict, exponent: float) -> dict:
    """How much the untrained head of one exponent changes across the widths.

    Returns
    -------
    dict
        ``entropy`` and ``jacobian``: the largest relative change of the median over the seeds
        from its value at the narrowest width, ``max |m(d_k) / m(4) − 1|`` over every width;
        ``grad``: the ratio largest / smallest of the median first gradient over the widths;
        ``grad_seeds``: the same ratio over the five seeds *within* one width, at the width
        where the seeds agree best (the seed-to-seed spread); ``grad_rises`` and
        ``grad_falls``: whether the median gradient goes up, and down, between some
        neighbouring widths.
    """
    d_ks = data["config"]["d_ks"]
    out = {}
    for key in ("entropy", "jacobian"):
        m = np.array([init_summary(data, key)[(exponent, d)] for d in d_ks])  # (n_d,)
        out[key] = float(np.max(np.abs(m / m[0] - 1)))
    g = np.array([init_summary(data, "grad")[(exponent, d)] for d in d_ks])  # (n_d,)
    seeds = seed_values(data, "grad")
    out["grad"] = float(g.max() / g.min())
    out["grad_seeds"] = min(max(seeds[(exponent, d)]) / min(seeds[(exponent, d)]) for d in d_ks)
    out["grad_rises"] = bool(np.any(np.diff(g) > 0))
    out["grad_falls"] = bool(np.any(np.diff(g) < 0))
    return out


def _steps_key(steps: list) -> tuple[float, float]:
    """(worst, median) of a seed list, a never-solved run counting as ``inf``."""
    values = [math.inf if s is None else float(s) for s in steps]
    return max(values), float(np.median(values))


def best_rate(by_lr: dict) -> float:
    """The best of ``{lr: [steps per seed]}``: fewest steps for the slowest seed, then the
    fewest median steps, then the smaller rate.

    >>> best_rate({1.0: [20, 30, None], 2.0: [20, 25, 25], 4.0: [None, None, 10]})
    2.0
    >>> best_rate({1.0: [20, 40, 40], 2.0: [10, 10, None]})
    1.0
    """
    return min(by_lr, key=lambda lr: (*_steps_key(by_lr[lr]), lr))


def tied_rates(by_lr: dict) -> list[float]:
    """The rates other than :func:`best_rate` with the same slowest seed and the same median.

    >>> tied_rates({0.25: [8, 8, 8, 8, 10], 0.5: [8, 8, 8, 10, 10], 1.0: [None] * 5})
    [0.5]
    >>> tied_rates({1.0: [20, 30], 2.0: [20, 25]})
    []
    """
    best = best_rate(by_lr)
    return sorted(
        lr for lr in by_lr if lr != best and _steps_key(by_lr[lr]) == _steps_key(by_lr[best])
    )


def slowest(steps: list) -> float:
    """Steps of the slowest seed, ``inf`` if any seed never gets there.

    >>> slowest([10, 14, 12]), slowest([10, None])
    (14.0, inf)
    """
    return _steps_key(steps)[0]


def is_interior(by_lr: dict) -> bool:
    """Whether the best rate has a rate tried on each side of it.

    >>> is_interior({1.0: [30], 2.0: [20], 4.0: [None]}), is_interior({1.0: [30], 2.0: [40]})
    (True, False)
    """
    rates = sorted(by_lr)
    return 0 < rates.index(best_rate(by_lr)) < len(rates) - 1


def search_window(by_lr: dict, must_cover=()) -> list[int]:
    """The powers of 2 still to try for one setting, given ``{lr: [steps per seed]}`` so far.

    Empty when the best rate is strictly inside the contiguous range tried and that range
    covers every rate in ``must_cover``; otherwise two more powers of 2 beyond the edge
    where the best rate sits, and whatever fills the range up to ``must_cover``.

    >>> search_window({1.0: [30], 2.0: [20], 4.0: [None]})
    []
    >>> search_window({1.0: [30], 2.0: [40], 4.0: [50]})
    [-2, -1]
    """
    tried = sorted(round(math.log2(lr)) for lr in by_lr)
    low, high = tried[0], tried[-1]
    for lr in must_cover:
        low, high = min(low, round(math.log2(lr))), max(high, round(math.log2(lr)))
    best = round(math.log2(best_rate(by_lr)))
    if best == tried[0]:
        low = min(low, best - 2)
    if best == tried[-1]:
        high = max(high, best + 2)
    low, high = max(low, LOG2_BOUNDS[0]), min(high, LOG2_BOUNDS[1])
    return [k for k in range(low, high + 1) if k not in tried]


def load_shipped() -> dict:
    """The precomputed sweep: ``{"config": CONFIG, "init": [...], "runs": [...]}``.

    Each run record is ``{"optimizer", "exponent", "d_k", "lr", "steps"}`` with ``steps`` one
    :func:`run_steps` result per seed of ``config["seeds"]``.
    """
    return json.loads(SHIPPED.read_text(encoding="utf-8"))


def by_setting(data: dict) -> dict:
    """``{(optimizer, exponent, d_k): {lr: [steps per seed]}}`` from the shipped runs."""
    out: dict = {}
    for r in data["runs"]:
        out.setdefault((r["optimizer"], r["exponent"], r["d_k"]), {})[r["lr"]] = r["steps"]
    return out


def settings(data: dict) -> dict:
    """Per ``(optimizer, exponent, d_k)``: the best rate and the steps at it and elsewhere.

    Returns
    -------
    dict
        Values are dicts with ``best_lr``; ``best`` (median, min, max of the steps over the
        seeds at the best rate, ``inf`` for never); ``shared`` (the same at the optimizer's
        shared rate); ``tuned_lr`` and ``tuned`` (the rate that was best at ``d_k = 4`` for
        the same optimizer and exponent, and the steps at it); ``interior`` (the best rate
        has a tried rate on each side; a neighbour may tie with it); ``ties`` (the rates that
        tie with the best, :func:`tied_rates`); ``tuned_fails`` (seeds that never reach 0.99
        at the tuned rate); ``tuned_cost`` (slowest seed at the tuned rate divided by the
        slowest seed at the best rate, ``inf`` if a seed never gets there); ``rates`` (every
        rate tried, ascending).
    """
    config, runs = data["config"], by_setting(data)

    def stats(steps):
        values = [math.inf if s is None else float(s) for s in steps]
        return float(np.median(values)), min(values), max(values)

    out = {}
    for (optimizer, exponent, d_k), by_lr in runs.items():
        best = best_rate(by_lr)
        tuned = best_rate(runs[(optimizer, exponent, config["tune_width"])])
        shared = config["shared_lr"][optimizer]
        out[(optimizer, exponent, d_k)] = {
            "best_lr": best,
            "best": stats(by_lr[best]),
            "shared": stats(by_lr[shared]),
            "tuned_lr": tuned,
            "tuned": stats(by_lr[tuned]),
            "interior": is_interior(by_lr),
            "ties": tied_rates(by_lr),
            "tuned_fails": sum(s is None for s in by_lr[tuned]),
            "tuned_cost": slowest(by_lr[tuned]) / slowest(by_lr[best]),
            "rates": sorted(by_lr),
        }
    return out


def exponent_name(exponent: float) -> str:
    """``0``, ``1/3``, ``1/2``, ``2/3``, ``1`` for the exponents of the sweep.

    >>> exponent_name(0.5), exponent_name(2 / 3), exponent_name(0.0), exponent_name(1.0)
    ('1/2', '2/3', '0', '1')
    """
    return str(Fraction(exponent).limit_denominator(12))


def _rate_name(lr: float) -> str:
    """A power of 2 as ``2^k``.

    >>> _rate_name(0.25), _rate_name(8.0)
    ('2^-2', '2^3')
    """
    return f"2^{round(math.log2(lr))}"


def _steps_name(median: float, low: float, high: float) -> str:
    def one(x):
        return "never" if math.isinf(x) else f"{x:.0f}"

    return one(median) if low == high else f"{one(median)} [{one(low)}–{one(high)}]"


def steps_table(data: dict, optimizer: str, what: str = "best") -> str:
    """A text table for one optimizer: a row per exponent, a column per ``d_k``.

    ``what="best"``: each cell is the best rate and the steps at it, ``median [min–max]``
    over the seeds; ``"shared"`` and ``"tuned"``: the steps at the shared rate, or at the
    rate that was best at ``d_k = 4``.
    """
    table = settings(data)
    config = data["config"]
    cells = []
    for exponent in config["exponents"]:
        row = []
        for d_k in config["d_ks"]:
            s = table[(optimizer, exponent, d_k)]
            text = _steps_name(*s[what])
            row.append(f"{_rate_name(s['best_lr'])}: {text}" if what == "best" else text)
        cells.append(row)
    width = max(len(c) for row in cells for c in row) + 2
    head = "α \\ d_k".ljust(8) + "".join(str(d).rjust(width) for d in config["d_ks"])
    rows = [
        exponent_name(a).ljust(8) + "".join(c.rjust(width) for c in row)
        for a, row in zip(config["exponents"], cells, strict=True)
    ]
    return "\n".join([head, *rows])
