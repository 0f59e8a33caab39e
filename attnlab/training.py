r"""Train one attention head in numpy to reverse a sequence, and watch its heatmap form.

The task: a sequence of ``n`` tokens from a small vocabulary comes in; at every position ``i``
the head must output the token at position ``n − 1 − i``. Nothing about a token says where its
partner is, only its position does, so the one way to solve the task is for query ``i`` to put
its weight on key ``n − 1 − i``: an **anti-diagonal** heatmap, lesson 4's off-diagonal links,
one per query. :func:`anti_diagonal_mass` measures it with lesson 4's :func:`diagonal_mass`
of the heatmap read right to left.

The model, one head and a read-out::

    x_i   = [one-hot(token_i), one-hot(i)]            (n, vocab + n)
    Q, K, V = X W_Q, X W_K, X W_V                     (n, d_k), (n, d_k), (n, d_v)
    W     = softmax(Q Kᵀ · d_k^(−α))                  (n, n)    α = ½ is the usual 1/√d_k
    logits = (W V) W_O                                (n, vocab)
    loss  = mean cross-entropy against the reversed sequence

trained with plain stochastic gradient descent, ``θ ← θ − lr · ∂L/∂θ`` (the default), or with
Adam (:func:`adam_step`), on fresh random batches drawn from one seeded generator, so a run is
a pure function of its settings. The
gradients come from :mod:`attnlab.backward`. Every weight starts from a normal distribution
scaled so that each entry of ``q``, ``k`` and ``v`` has variance 1 at the start: the
assumption of lesson 2, under which ``q · k`` has variance ``d_k``.

Examples
--------
>>> run = train(d_k=8, steps=300, seed=0)
>>> run.solved_at is not None, bool(run.accuracy[-1] > 0.99)
(True, True)
>>> bool(anti_diagonal_mass(run.weights[-1]) > 0.8)
True
"""

import math
from dataclasses import dataclass, field

import numpy as np

from attnlab import _kernels, _validate
from attnlab.patterns import diagonal_mass, normalised_entropy

__all__ = [
    "PROBE",
    "TOKENS",
    "OPTIMIZERS",
    "AdamState",
    "Head",
    "Run",
    "TrainingStopped",
    "adam_init",
    "adam_step",
    "anti_diagonal_mass",
    "encode",
    "head_forward",
    "init_head",
    "loss_and_grads",
    "reverse_batch",
    "sgd_step",
    "train",
]

TOKENS = tuple("ABCDEFGH")  #: the vocabulary
N = 6  #: sequence length
D_V = 16  #: value width (fixed: only d_k varies in the experiments)
BATCH = 32
LEARNING_RATE = 0.5
STEPS = 300
SOLVED = 0.99  #: the accuracy on the evaluation batch that counts as solved
EVAL_EVERY = 10  #: steps between evaluations and snapshots
OPTIMIZERS = ("sgd", "adam")  #: the update rules :func:`train` offers
ADAM_BETAS = (0.9, 0.999)  #: Adam's decay rates for the mean and the mean square of the gradient
ADAM_EPS = 1e-8  #: Adam's guard against dividing by zero
#: The sequence whose heatmap is shown: repeated tokens, so reading by token is ambiguous.
PROBE = ("C", "A", "F", "E", "C", "D")


def reverse_batch(
    rng: np.random.Generator, batch: int = BATCH, n: int = N, vocab: int = len(TOKENS)
) -> tuple[np.ndarray, np.ndarray]:
    """A batch of random token sequences and their reverses.

    Returns
    -------
    tokens, targets : ndarray of int, shape (batch, n)
        ``targets[:, i] == tokens[:, n - 1 - i]``.

    Examples
    --------
    >>> tokens, targets = reverse_batch(np.random.default_rng(0), batch=2, n=4)
    >>> bool((targets == tokens[:, ::-1]).all()), tokens.shape
    (True, (2, 4))
    """
    tokens = rng.integers(0, vocab, size=(batch, n))  # (batch, n)
    return tokens, tokens[:, ::-1].copy()


def encode(tokens, vocab: int = len(TOKENS)) -> np.ndarray:
    """Each token as ``[one-hot(token), one-hot(position)]``.

    Parameters
    ----------
    tokens : array_like of int, shape (..., n)

    Returns
    -------
    ndarray, shape (..., n, vocab + n), float64

    Examples
    --------
    >>> encode([[1, 0]], vocab=3).astype(int).tolist()
    [[[0, 1, 0, 1, 0], [1, 0, 0, 0, 1]]]
    """
    tokens = np.asarray(tokens)
    n = tokens.shape[-1]
    token_part = np.eye(vocab)[tokens]  # (..., n, vocab)
    position_part = np.broadcast_to(np.eye(n), (*tokens.shape[:-1], n, n))  # (..., n, n)
    return np.concatenate([token_part, position_part], axis=-1)  # (..., n, vocab + n)


@dataclass(frozen=True)
class Head:
    """The trainable weights: one attention head and its read-out."""

    w_q: np.ndarray  #: (d_in, d_k)
    w_k: np.ndarray  #: (d_in, d_k)
    w_v: np.ndarray  #: (d_in, d_v)
    w_o: np.ndarray  #: (d_v, vocab)

    def items(self):
        return {"w_q": self.w_q, "w_k": self.w_k, "w_v": self.w_v, "w_o": self.w_o}.items()


def init_head(
    d_k: int, seed: int = 0, d_v: int = D_V, n: int = N, vocab: int = len(TOKENS)
) -> Head:
    """Random weights such that every entry of ``q``, ``k`` and ``v`` starts with variance 1.

    An input row has two ones (its token and its position), so a projection entry drawn with
    variance ½ gives ``q_j = W[token, j] + W[position, j]`` variance 1. ``W_O`` has variance
    ``1/d_v``, so each logit starts with variance about 1 as well.

    Examples
    --------
    >>> head = init_head(d_k=4)
    >>> head.w_q.shape, head.w_v.shape, head.w_o.shape
    ((14, 4), (14, 16), (16, 8))
    """
    rng = np.random.default_rng([seed, d_k])
    d_in = vocab + n
    w_q, w_k = rng.normal(0.0, math.sqrt(0.5), size=(2, d_in, d_k))  # (d_in, d_k) each
    w_v = rng.normal(0.0, math.sqrt(0.5), size=(d_in, d_v))  # (d_in, d_v)
    w_o = rng.normal(0.0, 1.0 / math.sqrt(d_v), size=(d_v, vocab))  # (d_v, vocab)
    return Head(w_q, w_k, w_v, w_o)


def head_forward(head: Head, x: np.ndarray, scale: float):
    """Logits and everything the backward pass needs.

    Returns
    -------
    logits : ndarray, shape (..., n, vocab)
    cache : dict
        ``q``, ``k`` (..., n, d_k), ``v`` (..., n, d_v), ``weights`` (..., n, n),
        ``mixed`` (..., n, d_v) = weights @ v.
    """
    q, k, v = (_rows_times(x, w) for w in (head.w_q, head.w_k, head.w_v))  # (..., n, d_k|d_v)
    scores = (q @ np.swapaxes(k, -1, -2)) * scale  # (..., n, n)
    weights = _kernels.softmax_in_place(scores, axis=-1, all_finite=True)  # (..., n, n), in scores
    mixed = weights @ v  # (..., n, d_v)
    return _rows_times(mixed, head.w_o), {
        "q": q,
        "k": k,
        "v": v,
        "weights": weights,
        "mixed": mixed,
    }


def loss_and_grads(head: Head, x: np.ndarray, targets: np.ndarray, scale: float):
    """Mean cross-entropy over every position of the batch, and its gradient for each weight.

    Returns
    -------
    loss : float
    grads : Head
        ``∂loss/∂W`` for each of the four matrices.
    cache : dict
        As :func:`head_forward`, plus ``logits``.

    Examples
    --------
    >>> tokens, targets = reverse_batch(np.random.default_rng(0), batch=4)
    >>> loss, grads, _ = loss_and_grads(init_head(4), encode(tokens), targets, 0.5)
    >>> grads.w_q.shape, loss > 0
    ((14, 4), True)
    """
    logits, cache = head_forward(head, x, scale)  # (batch, n, vocab)
    log_p = _log_softmax_of_finite(logits)  # (batch, n, vocab)
    picked = np.take_along_axis(log_p, targets[..., None], axis=-1)  # (batch, n, 1)
    count = targets.size
    loss = -float(picked.sum()) / count
    d_logits = np.exp(log_p)  # (batch, n, vocab) softmax of the logits
    np.put_along_axis(
        d_logits,
        targets[..., None],
        np.take_along_axis(d_logits, targets[..., None], axis=-1) - 1.0,
        axis=-1,
    )
    d_logits /= count  # (batch, n, vocab) ∂loss/∂logits
    d_w_o = _sum_of_outer(cache["mixed"], d_logits)  # (d_v, vocab)
    d_mixed = d_logits @ head.w_o.T  # (batch, n, d_v)
    dq, dk, dv = _kernels.attention_backward_unchecked(
        cache["q"], cache["k"], cache["v"], cache["weights"], d_mixed, scale
    )
    grads = Head(
        w_q=_sum_of_outer(x, dq),  # (d_in, d_k)
        w_k=_sum_of_outer(x, dk),  # (d_in, d_k)
        w_v=_sum_of_outer(x, dv),  # (d_in, d_v)
        w_o=d_w_o,
    )
    cache["logits"] = logits
    return loss, grads, cache


def sgd_step(head: Head, grads: Head, lr) -> Head:
    """Plain stochastic gradient descent: ``W ← W − lr · ∂L/∂W``, as new arrays.

    ``lr`` is one rate, or a :class:`Head` of one rate per matrix.

    Examples
    --------
    >>> one = Head(*(np.ones((1, 1)) for _ in range(4)))
    >>> sgd_step(one, one, 0.25).w_q.tolist()
    [[0.75]]
    """
    rates = [r for _, r in lr.items()] if isinstance(lr, Head) else [lr] * 4
    return Head(
        *(w - r * g for (_, w), (_, g), r in zip(head.items(), grads.items(), rates, strict=True))
    )


@dataclass(frozen=True)
class AdamState:
    """Adam's running averages, one array per weight matrix, and the step count.

    ``m`` holds the decaying mean of the gradient, ``v`` the decaying mean of its square
    (elementwise), each a :class:`Head` of arrays shaped like the weights; ``t`` counts the
    steps taken so far.
    """

    m: Head
    v: Head
    t: int = 0


def adam_init(head: Head) -> AdamState:
    """Adam's state before the first step: both averages zero, ``t = 0``.

    Examples
    --------
    >>> state = adam_init(init_head(4))
    >>> state.t, state.m.w_q.shape, float(state.v.w_o.sum())
    (0, (14, 4), 0.0)
    """
    zeros = Head(*(np.zeros_like(w) for _, w in head.items()))  # shapes of the weights
    return AdamState(m=zeros, v=zeros, t=0)


def adam_step(
    head: Head,
    grads: Head,
    state: AdamState,
    lr: float,
    betas: tuple[float, float] = ADAM_BETAS,
    eps: float = ADAM_EPS,
) -> tuple[Head, AdamState]:
    r"""One step of Adam (Kingma and Ba, 2015), as new arrays.

    For every weight entry, with gradient ``g`` and ``t`` the step number after this one::

        m ← β₁ m + (1 − β₁) g          v ← β₂ v + (1 − β₂) g²
        m̂ = m / (1 − β₁ᵗ)              v̂ = v / (1 − β₂ᵗ)
        θ ← θ − lr · m̂ / (√v̂ + ε)

    Each entry's step is about ``lr`` in size whatever the size of its gradient: unlike
    :func:`sgd_step`, multiplying the loss by a constant leaves Adam's steps (nearly) unchanged.

    Parameters
    ----------
    head, grads : Head
        The weights and ``∂L/∂W`` for each, same shapes.
    state : AdamState
        From :func:`adam_init` or the previous step.
    lr : float or Head
        One rate, or a :class:`Head` of one rate per matrix.
    betas : (float, float), default :data:`ADAM_BETAS`
    eps : float, default :data:`ADAM_EPS`

    Returns
    -------
    head : Head
        The updated weights.
    state : AdamState
        The updated averages, ``t`` one larger.

    Examples
    --------
    The first step moves every entry by ``lr`` against the sign of its gradient:

    >>> one = Head(*(np.ones((1, 1)) for _ in range(4)))
    >>> stepped, state = adam_step(one, one, adam_init(one), 0.25)
    >>> stepped.w_q.tolist(), state.t
    ([[0.75]], 1)
    """
    beta1, beta2 = betas
    t = state.t + 1
    new_w, new_m, new_v = [], [], []
    rates = [r for _, r in lr.items()] if isinstance(lr, Head) else [lr] * 4
    for (_, w), (_, g), (_, m), (_, v), rate in zip(
        head.items(), grads.items(), state.m.items(), state.v.items(), rates, strict=True
    ):
        m = beta1 * m + (1.0 - beta1) * g  # shape of w
        v = beta2 * v + (1.0 - beta2) * (g * g)  # shape of w
        m_hat = m / (1.0 - beta1**t)  # shape of w
        v_hat = v / (1.0 - beta2**t)  # shape of w
        new_w.append(w - rate * m_hat / (np.sqrt(v_hat) + eps))
        new_m.append(m)
        new_v.append(v)
    return Head(*new_w), AdamState(m=Head(*new_m), v=Head(*new_v), t=t)


def anti_diagonal_mass(weights) -> np.ndarray:
    """The mean weight on the anti-diagonal, ``mean_i W[i, n − 1 − i]``: reversal's pattern.

    It is lesson 4's :func:`attnlab.patterns.diagonal_mass` of the heatmap read from right
    to left; ``1/n`` for uniform rows, 1 when every query reads its mirror position.

    Examples
    --------
    >>> float(anti_diagonal_mass(np.eye(3)[::-1]))
    1.0
    """
    return diagonal_mass(np.flip(weights, axis=-1))


@dataclass(frozen=True)
class Run:
    """One training run: its settings, loss curve, evaluations and heatmap snapshots."""

    d_k: int
    exponent: float
    seed: int
    lr: float
    steps: int  #: steps taken (fewer than asked for when the run stopped once solved)
    loss: np.ndarray = field(repr=False)  #: (steps,) training loss at each step
    eval_steps: np.ndarray = field(repr=False)  #: (m,) steps at which evaluated (0 included)
    accuracy: np.ndarray = field(repr=False)  #: (m,) accuracy on the evaluation batch
    eval_loss: np.ndarray = field(repr=False)  #: (m,) loss on the evaluation batch
    weights: np.ndarray = field(repr=False)  #: (m, n, n) the probe sequence's heatmap
    entropy: np.ndarray = field(repr=False)  #: (m, n) its normalised row entropy
    grad_norm: np.ndarray = field(repr=False)  #: (steps,) |∂L/∂W_Q| + |∂L/∂W_K| (Frobenius)
    solved_at: int | None = None  #: first evaluated step with accuracy ≥ SOLVED
    head: Head | None = field(default=None, repr=False)  #: the final weights
    optimizer: str = "sgd"  #: ``"sgd"`` or ``"adam"``
    diverged: bool = False  #: the loss overflowed to inf or nan, and the run stopped there

    @property
    def scale(self) -> float:
        return self.d_k**-self.exponent


class TrainingStopped(KeyboardInterrupt):
    """:func:`train` interrupted by the learner: shown as one line, not a traceback.

    A ``KeyboardInterrupt`` (so Run All stops there, and ``except Exception`` does not catch
    it) whose ``_render_traceback_`` IPython uses instead of the traceback through numpy
    and the package.

    Parameters
    ----------
    step : int
        The updates made before the interrupt.
    steps : int
        The run's budget.

    Examples
    --------
    >>> TrainingStopped(120, 2000)._render_traceback_()
    ['Training stopped at step 120 of 2000 (interrupted).']
    """

    def __init__(self, step: int, steps: int):
        super().__init__(f"Training stopped at step {step} of {steps} (interrupted).")
        self.step, self.steps = step, steps

    def _render_traceback_(self) -> list[str]:
        return [str(self)]


def train(
    d_k: int,
    exponent: float = 0.5,
    seed: int = 0,
    steps: int = STEPS,
    lr: float = LEARNING_RATE,
    eval_every: int = EVAL_EVERY,
    optimizer: str = "sgd",
    stop_when_solved: bool = False,
    init: Head | None = None,
    lr_scale: dict | None = None,
) -> Run:
    r"""Train the head on the reversal task; deterministic for given arguments.

    Parameters
    ----------
    d_k : int
        Width of queries and keys, >= 1.
    exponent : float, default 0.5
        The scores are multiplied by ``d_k ** -exponent``: 0 is no scaling, ½ is
        :math:`1/\sqrt{d_k}`.
    seed : int, default 0
        Seeds the weights and the batches.
    steps : int, default :data:`STEPS`
        The budget: at most this many updates.
    lr : float, default :data:`LEARNING_RATE`
    eval_every : int, default :data:`EVAL_EVERY`
        Evaluate (256 fixed sequences) and snapshot the probe heatmap every this many steps,
        and after the last.
    optimizer : {"sgd", "adam"}, default "sgd"
        :func:`sgd_step` or :func:`adam_step` (with :data:`ADAM_BETAS`, :data:`ADAM_EPS`).
    stop_when_solved : bool, default False
        Stop at the first evaluation whose accuracy reaches :data:`SOLVED` (the experiment's
        early stop); the arrays then end there.
    init : Head, optional
        Start from these weights instead of ``init_head(d_k, seed)`` (same shapes); the
        batches still come from ``seed``. Lesson 9 uses it to nudge the start by 1e-12, or
        to start ``W_Q`` smaller.
    lr_scale : dict, optional
        Per-matrix multipliers of ``lr``, e.g. ``{"w_q": 16.0, "w_k": 16.0}`` (μP's SGD rule
        for a wider head); a matrix not named keeps ``lr``.

    A run whose training loss overflows (too large a learning rate) stops at that step with
    ``diverged=True``; its arrays end there.

    Returns
    -------
    Run

    Raises
    ------
    ValueError
        For a non-positive ``d_k``, ``steps``, ``eval_every`` or ``lr``, a negative or
        non-finite ``exponent``, or an unknown ``optimizer``.
    TrainingStopped
        When the learner interrupts the kernel: one line saying at which step.
    """
    d_k = _validate.positive_int(d_k, "d_k")
    steps = _validate.positive_int(steps, "steps")
    eval_every = _validate.positive_int(eval_every, "eval_every")
    lr = _validate.positive_finite(lr, "lr")
    if not (isinstance(exponent, int | float) and math.isfinite(exponent) and exponent >= 0):
        raise ValueError(f"exponent must be a finite number >= 0; got {exponent!r}")
    if optimizer not in OPTIMIZERS:
        raise ValueError(f"optimizer must be one of {OPTIMIZERS}; got {optimizer!r}")
    scale = d_k ** -float(exponent)
    head = init_head(d_k, seed)
    if init is not None:
        if not isinstance(init, Head) or any(
            np.shape(w) != np.shape(w0)
            for (_, w), (_, w0) in zip(init.items(), head.items(), strict=True)
        ):
            raise ValueError(f"init must be a Head shaped like init_head({d_k}); got {init!r}")
        head = init
    names = [name for name, _ in head.items()]
    if lr_scale is not None and not (
        isinstance(lr_scale, dict)
        and set(lr_scale) <= set(names)
        and all(
            isinstance(v, int | float) and math.isfinite(v) and v > 0 for v in lr_scale.values()
        )
    ):
        raise ValueError(f"lr_scale must map some of {names} to positive numbers; got {lr_scale!r}")
    rates = Head(*(lr * (lr_scale or {}).get(name, 1.0) for name in names))  # one per matrix
    batches = np.random.default_rng([seed, 1])
    eval_tokens, eval_targets = reverse_batch(np.random.default_rng(12345), batch=256)
    eval_x = encode(eval_tokens)  # (256, n, d_in)
    probe_x = encode([TOKENS.index(t) for t in PROBE])  # (n, d_in)
    losses, norms = np.empty(steps), np.empty(steps)  # (steps,) each
    state = adam_init(head) if optimizer == "adam" else None
    evals = {"step": [], "accuracy": [], "loss": [], "weights": []}

    def evaluate(step) -> bool:
        """Record one evaluation; False (and nothing recorded) if the weights overflowed."""
        logits, _ = head_forward(head, eval_x, scale)  # (256, n, vocab)
        log_p = _log_softmax_of_finite(logits)  # (256, n, vocab)
        eval_loss = -float(np.take_along_axis(log_p, eval_targets[..., None], axis=-1).mean())
        if not math.isfinite(eval_loss):
            return False
        evals["step"].append(step)
        evals["accuracy"].append(float((logits.argmax(axis=-1) == eval_targets).mean()))
        evals["loss"].append(eval_loss)
        evals["weights"].append(head_forward(head, probe_x, scale)[1]["weights"])  # (n, n)
        return True

    done = 0  # updates made so far: what an interrupt reports
    try:
        evaluate(0)
        taken, diverged = steps, False
        with np.errstate(over="ignore", invalid="ignore"):  # a diverging run is detected below
            for step in range(steps):
                done = step
                tokens, targets = reverse_batch(batches)
                loss, grads, _ = loss_and_grads(head, encode(tokens), targets, scale)
                losses[step] = loss
                norms[step] = math.hypot(np.linalg.norm(grads.w_q), np.linalg.norm(grads.w_k))
                if not math.isfinite(loss):
                    taken, diverged = step + 1, True
                    break
                if state is None:
                    head = sgd_step(head, grads, lr if lr_scale is None else rates)
                else:
                    head, state = adam_step(head, grads, state, lr if lr_scale is None else rates)
                if (step + 1) % eval_every == 0 or step + 1 == steps:
                    if not evaluate(step + 1):
                        taken, diverged = step + 1, True
                        break
                    if stop_when_solved and evals["accuracy"][-1] >= SOLVED:
                        taken = step + 1
                        break
    except KeyboardInterrupt:  # the learner pressed Interrupt (Kernel menu, or I, I)
        raise TrainingStopped(done, steps) from None
    accuracy = np.array(evals["accuracy"])
    eval_steps = np.array(evals["step"])
    solved = np.flatnonzero(accuracy >= SOLVED)
    weights = np.array(evals["weights"])  # (m, n, n)
    return Run(
        d_k=d_k,
        exponent=float(exponent),
        seed=seed,
        lr=lr,
        steps=taken,
        loss=losses[:taken],
        eval_steps=eval_steps,
        accuracy=accuracy,
        eval_loss=np.array(evals["loss"]),
        weights=weights,
        entropy=normalised_entropy(weights),
        grad_norm=norms[:taken],
        solved_at=int(eval_steps[solved[0]]) if solved.size else None,
        head=head,
        optimizer=optimizer,
        diverged=diverged,
    )


# ---------------------------------------------------------------- helpers (private)
def _rows_times(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """``x @ w`` for a stack of rows ``x`` (..., n, d_in) and one matrix ``w`` (d_in, d_out).

    Flattened to a single matrix product: numpy would otherwise make one small product
    per batch entry.

    >>> _rows_times(np.ones((2, 3, 4)), np.ones((4, 5))).shape
    (2, 3, 5)
    """
    return (x.reshape(-1, x.shape[-1]) @ w).reshape(*x.shape[:-1], w.shape[-1])


def _log_softmax_of_finite(logits: np.ndarray) -> np.ndarray:
    """:func:`attnlab.log_softmax` along the last axis, for finite logits, without its checks.

    The trainer's inner loop calls it every step on arrays it made itself; the checks of
    the public function cost more than the arithmetic at these sizes.
    """
    s = logits - logits.max(axis=-1, keepdims=True)  # (..., vocab), max 0
    return s - _kernels.logsumexp_shifted(s, -1)  # (..., vocab)


def _sum_of_outer(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``Σ_{batch, position} a[..., :, None] * b[..., None, :]``: ``einsum("bni,bnj->ij")``.

    Written as one matrix product of the flattened rows, which numpy runs through BLAS
    (``einsum`` takes a slower path for these small shapes).

    >>> a, b = np.arange(12.0).reshape(2, 3, 2), np.ones((2, 3, 1))
    >>> bool(np.allclose(_sum_of_outer(a, b), np.einsum("bni,bnj->ij", a, b)))
    True
    """
    return a.reshape(-1, a.shape[-1]).T @ b.reshape(-1, b.shape[-1])  # (i, j)
