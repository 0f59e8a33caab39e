r"""Train a two-layer attention-only transformer on repeated tokens, and read its circuit.

Lesson 11's experiment (Elhage et al. 2021; Olsson et al. 2022), in numpy on a CPU:

1. **Train** the model of :mod:`attnlab.attention_only` with Adam on the task of
   :mod:`attnlab.repeated_tokens`, fresh batches from one seeded generator (a run is a
   pure function of its settings). :func:`training` is a generator that yields a
   :class:`Progress` at every evaluation (a notebook draws its progress bar from it and may
   stop whenever it likes); :func:`train` runs it to the end, with an optional callback.
2. **Watch the two halves**: the loss on the first half cannot go below chance, ``ln vocab``
   (once the model copies it ends a little above: a token repeated by chance in the first
   half sets the copying off, and the model cannot tell the halves apart, it never sees
   ``L``); the loss on the repeated half sits on a plateau, then falls suddenly
   (:func:`phase_change`).
3. **Read the heads**: :func:`previous_token_score` (how much each query attends to the
   position just before it) finds a previous-token head in layer 0;
   :func:`induction_score` (how much a query in the repeat attends to the token *after* the
   earlier occurrence of its own token: prefix matching) finds an induction head in layer 1.
4. **Ablate**: zero the previous-token head and the induction head loses its pattern and the
   repeated half its low loss (:func:`evaluate` with ``ablate=``). A one-layer model
   (``ModelConfig(n_layers=1)``) trained the same way stays far above. Ablate one *path*
   (``ablate_paths=``): the previous-token head's output removed only from the induction
   head's keys, or its queries, or its values (K-, Q- and V-composition).
5. **Read the weights**: :func:`ov_circuit` is a head's token-to-token OV circuit (what
   attending to a token adds to each output logit); :func:`diagonal_top_share` and
   :func:`copying_score` say how much of it copies the token it reads.

Speed: training runs in float32 (``InductionConfig.dtype``; about twice as fast as float64,
the gradient checks use float64). The arrays are small, so OpenBLAS's threads cost more than
they bring on a busy 2-core machine. :func:`train` and :func:`training` run with one BLAS
thread through ``threadpoolctl`` when it is installed (:func:`one_blas_thread`); without it,
set ``OPENBLAS_NUM_THREADS=1`` (and ``OMP_NUM_THREADS=1``) in the environment *before* numpy
is first imported: in the shell that starts Jupyter, or with ``%env OPENBLAS_NUM_THREADS=1``
as the first cell of a fresh kernel. ``./run.sh test`` sets it for the tests.

This module needs numpy only.

Examples
--------
>>> config = InductionConfig(steps=30, eval_every=10, eval_size=32)
>>> run = train(config, seed=0)
>>> run.eval_steps.tolist(), run.train_loss.shape
([0, 10, 20, 30], (30,))
>>> bool(run.first_loss[-1] > 0.9 * chance_loss(config.model.vocab))   # the first half: chance
True

References
----------
Elhage, N. et al. (2021). A mathematical framework for transformer circuits. *Transformer
Circuits Thread*, https://transformer-circuits.pub/2021/framework/index.html

Olsson, C. et al. (2022). In-context learning and induction heads. *Transformer Circuits
Thread*, arXiv:2209.11895.

Kingma, D. P. and Ba, J. (2015). Adam: a method for stochastic optimization. *ICLR*,
arXiv:1412.6980.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import numpy as np

from attnlab import _validate
from attnlab.attention_only import (
    ModelConfig,
    check_params,
    config_of,
    forward,
    init_params,
    loss_and_grads,
    next_token_losses,
)
from attnlab.repeated_tokens import RepeatBatch, chance_loss, repeated_batch
from attnlab.training import TrainingStopped

__all__ = [
    "ADAM_BETAS",
    "ADAM_EPS",
    "Circuit",
    "EVAL_SEED",
    "Evaluation",
    "InductionConfig",
    "InductionStopped",
    "PhaseChange",
    "Progress",
    "Run",
    "adam_init",
    "adam_step",
    "chance_loss",
    "copying_score",
    "diagonal_top_share",
    "evaluate",
    "eval_batch",
    "induction_score",
    "one_blas_thread",
    "ov_circuit",
    "phase_change",
    "previous_token_score",
    "read_circuit",
    "train",
    "training",
]

ADAM_BETAS = (0.9, 0.999)  #: Adam's decay rates for the mean and the mean square of the gradient
ADAM_EPS = 1e-8  #: Adam's guard against dividing by zero
EVAL_SEED = 12345  #: seeds the fixed evaluation batch (the same for every run)


@dataclass(frozen=True)
class InductionConfig:
    """Everything a run depends on besides its seed.

    Examples
    --------
    >>> c = InductionConfig()
    >>> c.model.n_layers, 2 * c.max_repeat <= c.model.n_ctx
    (2, True)
    >>> InductionConfig(max_repeat=40)
    Traceback (most recent call last):
    ...
    ValueError: 2 * max_repeat = 80 positions do not fit the model's n_ctx = 32
    """

    model: ModelConfig = ModelConfig()
    steps: int = 1000  #: Adam updates
    batch: int = 64  #: sequences per update
    lr: float = 3e-3  #: Adam's learning rate
    min_repeat: int = 4  #: shortest repeat length L
    max_repeat: int = 16  #: longest repeat length L (2 · max_repeat <= n_ctx)
    eval_every: int = 25  #: steps between evaluations (and after the last)
    eval_size: int = 256  #: sequences in the fixed evaluation batch
    dtype: str = "float32"  #: the parameters' dtype while training (float32: twice as fast)

    def __post_init__(self):
        if not isinstance(self.model, ModelConfig):
            raise ValueError(f"model must be a ModelConfig, got {type(self.model).__name__}")
        for name in ("steps", "batch", "min_repeat", "max_repeat", "eval_every", "eval_size"):
            _validate.positive_int(getattr(self, name), name)
        _validate.positive_finite(self.lr, "lr")
        if self.dtype not in ("float32", "float64"):
            raise ValueError(f"dtype must be 'float32' or 'float64', got {self.dtype!r}")
        if not 2 <= self.min_repeat <= self.max_repeat:
            raise ValueError(
                "the repeat lengths must satisfy 2 <= min_repeat <= max_repeat, got "
                f"min_repeat = {self.min_repeat}, max_repeat = {self.max_repeat}"
            )
        if 2 * self.max_repeat > self.model.n_ctx:
            raise ValueError(
                f"2 * max_repeat = {2 * self.max_repeat} positions do not fit the model's "
                f"n_ctx = {self.model.n_ctx}"
            )

    def replace(self, **changes) -> InductionConfig:
        """A copy with some fields changed; ``n_layers=`` (and the other model sizes) go to
        ``model``.

        >>> InductionConfig().replace(n_layers=1, steps=10).model.n_layers
        1
        """
        model_fields = {f.name for f in dataclasses.fields(ModelConfig)}
        model = {k: v for k, v in changes.items() if k in model_fields}
        rest = {k: v for k, v in changes.items() if k not in model_fields}
        if model:
            rest["model"] = dataclasses.replace(rest.get("model", self.model), **model)
        return dataclasses.replace(self, **rest)


# ---------------------------------------------------------------- Adam on a dict of arrays
def adam_init(params: dict) -> dict:
    """Adam's state before the first step: zero averages shaped like ``params``, ``t = 0``.

    Examples
    --------
    >>> state = adam_init({"w": np.ones((2, 3))})
    >>> state["t"], state["m"]["w"].shape
    (0, (2, 3))
    """
    return {
        "m": {name: np.zeros_like(a) for name, a in params.items()},
        "v": {name: np.zeros_like(a) for name, a in params.items()},
        "t": 0,
    }


def adam_step(params: dict, grads: dict, state: dict, lr: float, betas=ADAM_BETAS, eps=ADAM_EPS):
    r"""One step of Adam on every array of ``params``, as new arrays (nothing is modified).

    ``m ← β₁m + (1−β₁)g``, ``v ← β₂v + (1−β₂)g²``, ``θ ← θ − lr · m̂ / (√v̂ + ε)`` with the
    bias corrections ``m̂ = m / (1 − β₁ᵗ)``, ``v̂ = v / (1 − β₂ᵗ)`` (lesson 9's
    :func:`attnlab.training.adam_step`, for any set of named arrays).

    Returns
    -------
    params, state : dict
        The new parameters and the new state (``t`` one larger).

    Examples
    --------
    >>> p, s = adam_step({"w": np.ones(2)}, {"w": np.array([3.0, -1.0])},
    ...                  adam_init({"w": np.ones(2)}), lr=0.1)
    >>> p["w"].round(6).tolist(), s["t"]                   # a first step of lr against the sign
    ([0.9, 1.1], 1)
    """
    beta1, beta2 = betas
    t = state["t"] + 1
    m_new, v_new, p_new = {}, {}, {}
    for name, w in params.items():
        g = grads[name]  # shape of w
        m = beta1 * state["m"][name] + (1.0 - beta1) * g  # shape of w
        v = beta2 * state["v"][name] + (1.0 - beta2) * (g * g)  # shape of w
        step = (lr / (1.0 - beta1**t)) * m / (np.sqrt(v / (1.0 - beta2**t)) + eps)
        p_new[name], m_new[name], v_new[name] = w - step, m, v
    return p_new, {"m": m_new, "v": v_new, "t": t}


# ---------------------------------------------------------------- reading the heads
def previous_token_score(weights, batch: RepeatBatch) -> np.ndarray:
    """Each head's mean weight on the previous position, ``W[i, i − 1]``, over the real tokens.

    Averaged over every sequence of ``batch`` and every query ``i = 1 … 2L − 1``; 1 for a
    head that always reads the token just before, about ``1/i`` for a uniform causal head.

    Parameters
    ----------
    weights : array_like, shape (batch, n_heads, n, n)
        One layer's attention on ``batch.tokens`` (``forward(...)[1].weights[layer]``).
    batch : RepeatBatch

    Returns
    -------
    ndarray, shape (n_heads,)

    Examples
    --------
    >>> b = repeated_batch(np.random.default_rng(0), batch=2, vocab=8, min_repeat=2,
    ...                    max_repeat=3)
    >>> shifted = np.eye(6, k=-1)[None, None].repeat(2, axis=0)   # (2, 1, 6, 6) row i reads i − 1
    >>> shifted[:, :, 0, 0] = 1.0                                 # (query 0 can only read itself)
    >>> previous_token_score(shifted, b).tolist()
    [1.0]
    """
    w = _check_weights(weights, batch)
    n = w.shape[-1]
    i = np.arange(1, n)  # (n − 1,) queries that have a previous token
    sub = w[:, :, i, i - 1]  # (batch, H, n − 1)
    real = i[None, :] < 2 * batch.lengths[:, None]  # (batch, n − 1) queries on real tokens
    return (sub * real[:, None, :]).sum(axis=(0, 2)) / real.sum()  # (H,)


def induction_score(weights, batch: RepeatBatch) -> np.ndarray:
    """Each head's mean weight on the token after the earlier copy of its own: prefix matching.

    A query at ``i = L … 2L − 1`` (the repeat) holds the token first seen at ``i − L``; an
    induction head attends to ``i − L + 1``, the token that came next, which is the one to
    predict. Averaged over every sequence of ``batch`` and those queries.

    Parameters
    ----------
    weights : array_like, shape (batch, n_heads, n, n)
        One layer's attention on ``batch.tokens``.
    batch : RepeatBatch

    Returns
    -------
    ndarray, shape (n_heads,)
        1 for a perfect induction head; near 0 for a previous-token head.

    Examples
    --------
    >>> b = repeated_batch(np.random.default_rng(0), batch=1, vocab=8, min_repeat=3,
    ...                    max_repeat=3)
    >>> w = np.zeros((1, 1, 6, 6))
    >>> for i in range(6):                               # L = 3: queries 3, 4, 5 read 1, 2, 3
    ...     w[0, 0, i, i - 2 if i >= 3 else 0] = 1.0
    >>> induction_score(w, b).tolist()
    [1.0]
    """
    w = _check_weights(weights, batch)
    n = w.shape[-1]
    L = batch.lengths[:, None]  # (batch, 1)
    i = np.arange(n)[None, :]  # (1, n)
    in_repeat = (i >= L) & (i < 2 * L)  # (batch, n)
    key = np.where(in_repeat, i - L + 1, 0)  # (batch, n) the key an induction head reads
    rows = np.take_along_axis(w, key[:, None, :, None], axis=-1)[..., 0]  # (batch, H, n)
    return (rows * in_repeat[:, None, :]).sum(axis=(0, 2)) / in_repeat.sum()  # (H,)


@dataclass(frozen=True)
class Evaluation:
    """The losses of the two halves and every head's scores, on one batch."""

    first_loss: float  #: mean loss on the first half (chance: ln vocab)
    repeat_loss: float  #: mean loss on the repeated half
    previous_token: np.ndarray  #: (n_layers, n_heads) :func:`previous_token_score`
    induction: np.ndarray  #: (n_layers, n_heads) :func:`induction_score`


def eval_batch(config: InductionConfig) -> RepeatBatch:
    """The fixed evaluation batch: ``config.eval_size`` sequences drawn from :data:`EVAL_SEED`.

    >>> eval_batch(InductionConfig(eval_size=8)).tokens.shape
    (8, 32)
    """
    return repeated_batch(
        np.random.default_rng(EVAL_SEED),
        config.eval_size,
        config.model.vocab,
        config.min_repeat,
        config.max_repeat,
    )


def evaluate(
    params, batch: RepeatBatch, ablate=None, check: bool = True, *, ablate_paths=None
) -> Evaluation:
    """Losses on the two halves of ``batch`` and the scores of every head.

    Parameters
    ----------
    params : dict of str to ndarray
        A model's parameters (:func:`attnlab.attention_only.init_params` or a run's).
    batch : RepeatBatch
        Its ``tokens`` must fit the model (width at most ``n_ctx``, tokens below ``vocab``).
    ablate : iterable of (layer, head), optional
        Heads zeroed for this evaluation (:func:`attnlab.attention_only.forward`).
    check : bool, default True
        Validate ``params`` and ``batch``.
    ablate_paths : iterable of (source, target, part), optional
        Paths removed for this evaluation: ``((0, 0), (1, 0), "k")`` takes head ``(0, 0)``'s
        output out of what head ``(1, 0)`` reads its keys from
        (:func:`attnlab.attention_only.forward`).

    Returns
    -------
    Evaluation

    Raises
    ------
    ValueError
        For a ``batch`` that is not a :class:`RepeatBatch`, and what
        :func:`attnlab.attention_only.forward` refuses.

    Examples
    --------
    >>> config = InductionConfig(eval_size=16)
    >>> e = evaluate(init_params(config.model), eval_batch(config))
    >>> e.induction.shape, round(e.first_loss, 1) == round(chance_loss(32), 1)
    ((2, 1), True)
    """
    if not isinstance(batch, RepeatBatch):
        raise ValueError(
            "batch must be a RepeatBatch (repeated_batch or eval_batch), got "
            f"{type(batch).__name__}"
        )
    logits, cache = forward(params, batch.tokens, ablate, check, ablate_paths=ablate_paths)
    losses = next_token_losses(logits, batch.tokens)  # (batch, n)
    return Evaluation(
        first_loss=float(losses[batch.first].mean()),
        repeat_loss=float(losses[batch.repeat].mean()),
        previous_token=_per_head(previous_token_score, cache, batch),
        induction=_per_head(induction_score, cache, batch),
    )


# ---------------------------------------------------------------- reading the weights
def ov_circuit(params, head) -> np.ndarray:
    r"""A head's OV circuit from token to token: ``E W_V[h] W_O[h] U``, shape (vocab, vocab).

    Row ``s`` is what the head adds to each output logit when it puts all its weight on a
    position holding token ``s``, through that token's embedding alone: the position
    embedding is left out (it does not depend on the token), and so is, for a head in layer 1
    or later, what earlier heads wrote at that position (the direct path only, as in Elhage et
    al. 2021). Entry ``[s, t]`` is the logit it adds to token ``t``. Elhage et al. write the
    same matrix transposed, ``W_U W_O W_V W_E`` (columns in, rows out): it has the same
    eigenvalues.

    Parameters
    ----------
    params : dict of str to ndarray
        A model's parameters (:func:`attnlab.attention_only.init_params` or a run's); never
        modified.
    head : (int, int)
        ``(layer, head)``.

    Returns
    -------
    ndarray, shape (vocab, vocab)
        float64, whatever the parameters' dtype.

    Raises
    ------
    ValueError
        For parameters that are not a model's, or a ``head`` the model does not have.

    Examples
    --------
    >>> p = init_params(ModelConfig(vocab=6, d_model=8, n_heads=2, d_head=4))
    >>> ov = ov_circuit(p, (1, 0))
    >>> ov.shape
    (6, 6)
    >>> plain = p["embed"] @ p["w_v.1"][0] @ p["w_o.1"][0] @ p["unembed"]
    >>> bool(np.allclose(ov, plain))
    True

    References
    ----------
    Elhage, N. et al. (2021). A mathematical framework for transformer circuits. *Transformer
    Circuits Thread*, https://transformer-circuits.pub/2021/framework/index.html
    """
    layer, h = _check_head(head, config_of(params))
    w_v = np.asarray(params[f"w_v.{layer}"][h], dtype=np.float64)  # (d_model, d_head)
    w_o = np.asarray(params[f"w_o.{layer}"][h], dtype=np.float64)  # (d_head, d_model)
    embed = np.asarray(params["embed"], dtype=np.float64)  # (vocab, d_model)
    unembed = np.asarray(params["unembed"], dtype=np.float64)  # (d_model, vocab)
    return embed @ (w_v @ w_o) @ unembed  # (vocab, vocab)


def diagonal_top_share(matrix) -> float:
    """The share of rows whose largest entry is on the diagonal.

    For an OV circuit (:func:`ov_circuit`): the share of tokens whose highest output logit is
    the token itself, so that attending to a token pushes the prediction towards that same
    token. About ``1/vocab`` for a matrix with no such structure. A tie counts for the first
    column holding the row's largest entry (``argmax``).

    Parameters
    ----------
    matrix : array_like, shape (m, m)
        Finite; never modified.

    Returns
    -------
    float
        From 0 to 1.

    Raises
    ------
    ValueError
        For a ``matrix`` that is not square, empty or not finite.

    Examples
    --------
    >>> diagonal_top_share(np.eye(4)), diagonal_top_share(np.ones((4, 4)) - np.eye(4))
    (1.0, 0.0)
    >>> diagonal_top_share([[2.0, 1.0], [3.0, 1.0]])           # row 0 copies, row 1 does not
    0.5
    """
    m = _check_square(matrix)  # (m, m)
    return float((m.argmax(axis=1) == np.arange(m.shape[0])).mean())


def copying_score(matrix) -> float:
    r"""Elhage et al.'s summary of how much a matrix copies: ``Σ λ / Σ |λ|`` over its eigenvalues.

    A matrix that copies maps a vector mostly back onto itself, so its eigenvalues are mostly
    positive. The score is the sum of the eigenvalues over the sum of their absolute values
    (moduli, as they may be complex). The sum is real (complex eigenvalues of a real matrix
    come in conjugate pairs; it equals the trace), so this is also
    ``Σ Re λ / Σ |λ|``: 1 when every eigenvalue is positive (the identity: perfect copying),
    −1 when every one is negative (minus the identity: every token pushed *away* from
    itself), near 0 for a random matrix, whose eigenvalues spread around 0 in all directions.

    Parameters
    ----------
    matrix : array_like, shape (m, m)
        Finite, not all zero; never modified. Computed in float64.

    Returns
    -------
    float
        From −1 to 1.

    Raises
    ------
    ValueError
        For a ``matrix`` that is not square, empty, not finite, or whose eigenvalues are all 0.

    Examples
    --------
    >>> copying_score(np.eye(3)), copying_score(-np.eye(3))
    (1.0, -1.0)
    >>> round(copying_score([[0.0, -1.0], [1.0, 0.0]]), 12)   # a rotation: eigenvalues ±i
    0.0

    References
    ----------
    Elhage, N. et al. (2021). A mathematical framework for transformer circuits. *Transformer
    Circuits Thread*, https://transformer-circuits.pub/2021/framework/index.html (detecting
    copying behaviour: the positive eigenvalues of the OV circuit).
    """
    m = _check_square(matrix)  # (m, m)
    eig = np.linalg.eigvals(m)  # (m,) complex
    total = float(np.abs(eig).sum())
    if not total > 0.0:
        raise ValueError("matrix must have a non-zero eigenvalue, got all eigenvalues 0")
    return float(eig.real.sum()) / total


# ---------------------------------------------------------------- one BLAS thread
@contextlib.contextmanager
def one_blas_thread():
    """Limit BLAS to one thread inside the ``with`` block, if ``threadpoolctl`` is installed.

    Yields ``True`` when the limit is in force: through ``threadpoolctl``, or without it when
    ``OPENBLAS_NUM_THREADS`` (or ``OMP_NUM_THREADS``) is ``1`` in this process's environment
    (set before numpy was imported, as the module's docstring says); ``False`` otherwise, and
    nothing is changed then. Nothing is downloaded.

    Examples
    --------
    >>> with one_blas_thread() as limited:
    ...     isinstance(limited, bool)
    True
    """
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        environ = os.environ
        yield environ.get("OPENBLAS_NUM_THREADS") == "1" or environ.get("OMP_NUM_THREADS") == "1"
        return
    with threadpool_limits(limits=1, user_api="blas"):
        yield True


# ---------------------------------------------------------------- training
@dataclass(frozen=True)
class Progress:
    """What :func:`training` yields at each evaluation (step 0 included, and after the last)."""

    step: int  #: updates made so far
    steps: int  #: the run's budget
    train_loss: float  #: mean training loss over the updates since the last evaluation (nan at 0)
    evaluation: Evaluation  #: on the fixed evaluation batch
    params: dict = field(repr=False)  #: the weights now (new arrays at every step: keep them)
    elapsed: float = 0.0  #: seconds since the run started
    losses: np.ndarray = field(default_factory=lambda: np.empty(0), repr=False)  #: each update's


class InductionStopped(TrainingStopped):
    """:func:`train` interrupted by the learner; ``.run`` holds what was trained so far.

    Shown as one line, not a traceback (lesson 9's :class:`attnlab.training.TrainingStopped`).

    >>> InductionStopped(120, 2000, run=None)._render_traceback_()
    ['Training stopped at step 120 of 2000 (interrupted).']
    """

    def __init__(self, step: int, steps: int, run=None):
        super().__init__(step, steps)
        self.run = run


def training(config: InductionConfig, seed: int = 0, params=None) -> Iterator[Progress]:
    """Train step by step, yielding a :class:`Progress` at every evaluation.

    Deterministic: the weights come from ``init_params(config.model, seed)`` (or ``params``),
    the batches from ``np.random.default_rng([seed, 1])``. Stop whenever you like (``break``
    out of the loop, or close the generator); the arrays already yielded stay valid. Runs with
    one BLAS thread when ``threadpoolctl`` is installed (:func:`one_blas_thread`).

    Parameters
    ----------
    config : InductionConfig
    seed : int, default 0
    params : dict of str to ndarray, optional
        Start from these weights (checked against ``config.model``; not modified).

    Yields
    ------
    Progress

    Raises
    ------
    ValueError
        For a bad ``config``, ``seed`` or ``params`` (on the first ``next``).
    FloatingPointError
        If the training loss stops being finite (a learning rate far too large).

    Examples
    --------
    >>> for p in training(InductionConfig(steps=20, eval_every=10, eval_size=16)):
    ...     print(p.step, p.steps, p.evaluation.induction.shape)
    0 20 (2, 1)
    10 20 (2, 1)
    20 20 (2, 1)
    """
    if not isinstance(config, InductionConfig):
        raise ValueError(f"config must be an InductionConfig, got {type(config).__name__}")
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise ValueError(f"seed must be an int >= 0, got {seed!r}")
    if params is None:
        params = init_params(config.model, seed, dtype=config.dtype)
    else:
        config_of(params)  # a model's parameters, whole
        try:
            check_params(params, config.model)
        except ValueError as why:
            raise ValueError(f"params do not fit config.model = {config.model}: {why}") from None
        params = {name: np.array(a, dtype=config.dtype) for name, a in params.items()}  # copies
    rng = np.random.default_rng([int(seed), 1])
    held_out = eval_batch(config)
    state = adam_init(params)
    start = time.perf_counter()
    with one_blas_thread():
        first = evaluate(params, held_out, check=False)
        yield Progress(0, config.steps, math.nan, first, params, time.perf_counter() - start)
        since = []
        for step in range(1, config.steps + 1):
            b = repeated_batch(
                rng, config.batch, config.model.vocab, config.min_repeat, config.max_repeat
            )
            loss, grads, _ = loss_and_grads(params, b.tokens, b.target, check=False)
            if not math.isfinite(loss):
                raise FloatingPointError(f"the training loss is {loss} at step {step}")
            params, state = adam_step(params, grads, state, config.lr)
            since.append(loss)
            if step % config.eval_every == 0 or step == config.steps:
                yield Progress(
                    step,
                    config.steps,
                    float(np.mean(since)),
                    evaluate(params, held_out, check=False),
                    params,
                    time.perf_counter() - start,
                    np.array(since),
                )
                since = []


@dataclass(frozen=True)
class Run:
    """A finished (or stopped) run: its curves, every head's scores over time, its weights."""

    config: InductionConfig
    seed: int
    eval_steps: np.ndarray = field(repr=False)  #: (m,) steps evaluated, 0 first
    train_loss: np.ndarray = field(repr=False)  #: (steps done,) training loss at every update
    first_loss: np.ndarray = field(repr=False)  #: (m,) first-half loss on the evaluation batch
    repeat_loss: np.ndarray = field(repr=False)  #: (m,) repeated-half loss
    previous_token: np.ndarray = field(repr=False)  #: (m, n_layers, n_heads)
    induction: np.ndarray = field(repr=False)  #: (m, n_layers, n_heads)
    params: dict = field(repr=False)  #: the final weights
    initial: dict = field(repr=False)  #: the weights at step 0
    seconds: float = 0.0  #: wall time of the run
    stopped: bool = False  #: True when the callback stopped it before ``config.steps``


def train(
    config: InductionConfig | None = None,
    seed: int = 0,
    callback: Callable[[Progress], bool | None] | None = None,
) -> Run:
    """Run :func:`training` to the end (or until ``callback`` returns ``False``).

    Parameters
    ----------
    config : InductionConfig, optional
        ``InductionConfig()`` by default: the lesson's run.
    seed : int, default 0
    callback : callable, optional
        Called with each :class:`Progress`; return ``False`` to stop there (anything else
        goes on). A progress bar updates itself here.

    Returns
    -------
    Run

    Raises
    ------
    InductionStopped
        When the kernel is interrupted: one line, with ``.run`` up to the last evaluation.

    Examples
    --------
    >>> run = train(InductionConfig(steps=40, eval_every=10, eval_size=16),
    ...             callback=lambda p: p.step < 20)
    >>> run.eval_steps.tolist(), run.stopped, run.train_loss.shape
    ([0, 10, 20], True, (20,))
    """
    config = InductionConfig() if config is None else config
    seen: list[Progress] = []
    stopped = False
    gen = training(config, seed)
    try:
        for progress in gen:
            seen.append(progress)
            if callback is not None and callback(progress) is False:
                stopped = progress.step < config.steps
                break
    except KeyboardInterrupt:
        gen.close()
        run = _run_from(config, seed, seen, stopped=True)
        raise InductionStopped(seen[-1].step if seen else 0, config.steps, run) from None
    finally:
        gen.close()
    return _run_from(config, seed, seen, stopped=stopped)


# ---------------------------------------------------------------- the phase change
@dataclass(frozen=True)
class PhaseChange:
    """Where a loss curve falls, read from the data (:func:`phase_change`)."""

    step: int  #: the first evaluation below halfway from ``plateau`` to ``final``
    start: int  #: the first evaluation below 80 % of the way up from ``final`` to ``plateau``
    end: int  #: the first evaluation below 20 % of the way
    plateau: float  #: the curve's highest level after step 0
    final: float  #: the mean of the last 10 % of the evaluations
    steepest: float  #: the largest fall within any window of 10 % of the run, in loss units
    window: tuple  #: (first, last) evaluated step of that steepest window

    @property
    def width(self) -> int:
        """Steps the middle 60 % of the fall took, ``end − start``."""
        return self.end - self.start

    @property
    def suddenness(self) -> float:
        """The share of the whole fall, ``plateau − final``, inside the steepest window of 10 %
        of the run (:attr:`steepest` over the fall): from 0 to 1.

        A steady decline of any shape spreads its fall over the run: a straight line puts
        about 10 % of it in any such window, one that starts late about 10 % / (the share of
        the run it lasts), an exponential decline with a time constant of a third of the run
        about 28 %. A phase change puts half of its fall or more in one window.
        """
        return self.steepest / (self.plateau - self.final)


def phase_change(steps, loss) -> PhaseChange | None:
    """Locate the drop of a loss curve: where it leaves its plateau, crosses halfway, lands.

    With ``plateau`` the curve's maximum after step 0 and ``final`` the mean of its last
    10 %, ``start``, ``step`` and ``end`` are the first evaluations at or below 80 %, 50 % and
    20 % of the way from ``final`` up to ``plateau``. ``None`` when the curve never falls by
    0.5 nats. How *sudden* the drop is comes from its slope: ``steepest`` is the largest fall
    ``loss[i] − loss[j]`` between evaluations at most 10 % of the run apart
    (``steps[j] − steps[i] <= (steps[-1] − steps[0]) / 10``), and
    :attr:`PhaseChange.suddenness` is its share of the whole fall.

    Parameters
    ----------
    steps : array_like of int, shape (m,)
        Increasing evaluation steps.
    loss : array_like of float, shape (m,)
        Finite.

    Returns
    -------
    PhaseChange or None

    Raises
    ------
    ValueError
        For arrays of different lengths, fewer than 3 points, steps that do not increase, or
        a loss that is not finite.

    Examples
    --------
    >>> s = np.arange(0, 1001, 25)
    >>> curve = np.where(s < 400, 3.0, np.where(s < 500, 1.5, 0.2))
    >>> pc = phase_change(s, curve)
    >>> pc.start, pc.step, pc.end, pc.window, round(pc.suddenness, 2)
    (400, 400, 500, (300, 400), 0.54)
    >>> line = 3.0 - 2.8 * s / s[-1]  # a straight decline over the whole run
    >>> round(phase_change(s, line).suddenness, 2)
    0.11
    """
    steps = np.asarray(steps)
    loss = np.asarray(loss, dtype=float)
    if steps.ndim != 1 or loss.shape != steps.shape or steps.size < 3:
        raise ValueError(
            f"steps and loss must be 1-D of the same length >= 3, got shapes {steps.shape} "
            f"and {loss.shape}"
        )
    if not (np.diff(steps) > 0).all():
        raise ValueError("steps must increase")
    if not np.isfinite(loss).all():
        raise ValueError("loss must be finite")
    tail = max(1, loss.size // 10)
    low = float(loss[-tail:].mean())
    high = float(loss[1:].max())
    if high - low < 0.5:
        return None

    def first_below(fraction: float) -> int:
        return int(steps[np.flatnonzero(loss <= low + fraction * (high - low))[0]])

    span = (steps[-1] - steps[0]) / 10
    steepest, window = 0.0, (int(steps[0]), int(steps[0]))
    for i in range(steps.size):
        j = int(np.searchsorted(steps, steps[i] + span, side="right")) - 1  # last within span
        fall = float(loss[i] - loss[i : j + 1].min())
        if fall > steepest:
            k = i + int(np.argmin(loss[i : j + 1]))
            steepest, window = fall, (int(steps[i]), int(steps[k]))
    return PhaseChange(
        step=first_below(0.5),
        start=first_below(0.8),
        end=first_below(0.2),
        plateau=high,
        final=low,
        steepest=steepest,
        window=window,
    )


# ---------------------------------------------------------------- reading a run
@dataclass(frozen=True)
class Circuit:
    """What a trained run shows (:func:`read_circuit`): the drop, the two heads, the ablations.

    A zero-layer model has no heads: both heads are ``None`` and the two "ablated"
    evaluations are the model's own.
    """

    phase: PhaseChange | None  #: the drop of the repeated-half loss, or None if it never fell
    first_loss: float  #: final loss on the first half
    repeat_loss: float  #: final loss on the repeated half
    previous_token: np.ndarray  #: (n_layers, n_heads) final previous-token scores
    induction: np.ndarray  #: (n_layers, n_heads) final induction scores
    previous_token_head: tuple | None  #: (layer, head) with the highest previous-token score
    induction_head: tuple | None  #: (layer, head) with the highest induction score
    ablated_previous: Evaluation  #: the evaluation with the previous-token head zeroed
    ablated_induction: Evaluation  #: the evaluation with the induction head zeroed


def read_circuit(run: Run) -> Circuit:
    """Find the previous-token head and the induction head of ``run`` and ablate each.

    Both heads are found by their scores on the fixed evaluation batch, over every head of
    every layer (not assumed to be in layers 0 and 1): the lesson then checks where they are.

    Examples
    --------
    >>> run = train(InductionConfig(steps=20, eval_every=10, eval_size=16))
    >>> c = read_circuit(run)
    >>> c.previous_token.shape, len(c.induction_head)
    ((2, 1), 2)
    """
    if not isinstance(run, Run):
        raise ValueError(f"run must be a Run from train(), got {type(run).__name__}")
    held_out = eval_batch(run.config)
    final = evaluate(run.params, held_out, check=False)
    if final.previous_token.size == 0:  # the zero-layer model: nothing to find or ablate
        phase = phase_change(run.eval_steps, run.repeat_loss)
        return Circuit(
            phase,
            final.first_loss,
            final.repeat_loss,
            final.previous_token,
            final.induction,
            None,
            None,
            final,
            final,
        )
    prev = tuple(
        int(i) for i in np.unravel_index(final.previous_token.argmax(), final.previous_token.shape)
    )
    ind = tuple(int(i) for i in np.unravel_index(final.induction.argmax(), final.induction.shape))
    return Circuit(
        phase=phase_change(run.eval_steps, run.repeat_loss),
        first_loss=final.first_loss,
        repeat_loss=final.repeat_loss,
        previous_token=final.previous_token,
        induction=final.induction,
        previous_token_head=prev,
        induction_head=ind,
        ablated_previous=evaluate(run.params, held_out, ablate=[prev], check=False),
        ablated_induction=evaluate(run.params, held_out, ablate=[ind], check=False),
    )


# ---------------------------------------------------------------- private helpers
def _check_head(head, config: ModelConfig) -> tuple[int, int]:
    """``head`` as a ``(layer, head)`` pair of ints the model has."""
    ok = isinstance(head, tuple | list) and len(head) == 2
    for i in head if ok else ():
        ok = ok and isinstance(i, int | np.integer) and not isinstance(i, bool)
    if not ok or not (0 <= head[0] < config.n_layers and 0 <= head[1] < config.n_heads):
        raise ValueError(
            f"head must be a (layer, head) pair with 0 <= layer < {config.n_layers} and "
            f"0 <= head < {config.n_heads}, got {head!r}"
        )
    return int(head[0]), int(head[1])


def _check_square(matrix) -> np.ndarray:
    """``matrix`` as a new float64 (m, m) array, m >= 1, finite."""
    try:
        m = np.array(matrix, dtype=np.float64)  # a copy: the caller's array is never touched
    except (TypeError, ValueError):
        raise ValueError(f"matrix must be a square array of numbers, got {matrix!r}") from None
    if m.ndim != 2 or m.shape[0] != m.shape[1] or m.size == 0:
        raise ValueError(f"matrix must be square and not empty, (m, m), got shape {m.shape}")
    if not np.isfinite(m).all():
        raise ValueError("matrix must be finite, got NaN or inf entries")
    return m


def _check_weights(weights, batch: RepeatBatch) -> np.ndarray:
    w = np.asarray(weights)
    n = batch.tokens.shape[1]
    if w.ndim != 4 or w.shape[0] != batch.tokens.shape[0] or w.shape[2:] != (n, n):
        raise ValueError(
            f"weights must be one layer's attention, (batch, n_heads, n, n) = "
            f"({batch.tokens.shape[0]}, n_heads, {n}, {n}) for this batch; got shape {w.shape}"
        )
    return w


def _per_head(score, cache, batch) -> np.ndarray:
    """``score`` of every layer's weights, as an (n_layers, n_heads) array (zero layers too)."""
    rows = [score(w, batch) for w in cache.weights]  # n_layers × (n_heads,)
    return np.array(rows).reshape(len(rows), -1 if rows else 0)  # (n_layers, n_heads)


def _run_from(config, seed, seen, stopped) -> Run | None:
    if not seen:
        return None
    ev = [p.evaluation for p in seen]
    return Run(
        config=config,
        seed=seed,
        eval_steps=np.array([p.step for p in seen]),
        train_loss=np.concatenate([p.losses for p in seen]),
        first_loss=np.array([e.first_loss for e in ev]),
        repeat_loss=np.array([e.repeat_loss for e in ev]),
        previous_token=np.array([e.previous_token for e in ev]),
        induction=np.array([e.induction for e in ev]),
        params=seen[-1].params,
        initial=seen[0].params,
        seconds=seen[-1].elapsed,
        stopped=stopped,
    )
