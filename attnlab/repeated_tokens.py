r"""The repeated-token task of lesson 11: random tokens, then the same tokens again.

Each sequence holds ``L`` tokens drawn uniformly from a vocabulary of ``V``, then the same
``L`` tokens once more, then padding up to the batch's width ``n = 2 · max_repeat``::

    position   0 1 2 3 4 5 6 7 8 9 …        (L = 4 here)
    token      c a f e c a f e ▢ ▢ …        ▢ = padding, never a target and never attended to
                                             by a real token (the model is causal)

Position ``p`` predicts the token at ``p + 1``. The **first half** (targets ``1 … L − 1``) is
unpredictable: its best loss is the chance level ``ln V``. The **repeated half** (targets
``L + 1 … 2L − 1``) is predictable by looking back: the token after the earlier occurrence of
the current token is the next one. The target ``L`` (the first repeated token) belongs to
neither half: nothing announces where the repeat starts.

``L`` is drawn afresh for every sequence, between ``min_repeat`` and ``max_repeat``. With one
fixed ``L`` the task has a **position shortcut**: position ``p`` could read position
``p + 1 − L`` by its learned position alone, and one layer would do; a varying ``L`` leaves only
the content-based route, the induction head (Olsson et al. 2022).

This module needs numpy only.

Examples
--------
>>> batch = repeated_batch(np.random.default_rng(0), batch=2, vocab=8, min_repeat=3,
...                        max_repeat=5)
>>> batch.tokens.shape, batch.lengths.tolist()                    # (batch, 2 · max_repeat)
((2, 10), [5, 4])
>>> batch.tokens[1].tolist()                                      # L = 4, then padding
[0, 1, 6, 5, 0, 1, 6, 5, 0, 0]
>>> batch.first[1].astype(int).tolist()                          # p = 0 … 2 predict tokens 1 … 3
[1, 1, 1, 0, 0, 0, 0, 0, 0, 0]
>>> batch.repeat[1].astype(int).tolist()                         # p = 4 … 6 predict tokens 5 … 7
[0, 0, 0, 0, 1, 1, 1, 0, 0, 0]

References
----------
Elhage, N. et al. (2021). A mathematical framework for transformer circuits. *Transformer
Circuits Thread*, https://transformer-circuits.pub/2021/framework/index.html

Olsson, C. et al. (2022). In-context learning and induction heads. *Transformer Circuits
Thread*, arXiv:2209.11895.
"""

import math
from dataclasses import dataclass, field

import numpy as np

from attnlab import _validate

__all__ = ["PAD", "RepeatBatch", "chance_loss", "repeated_batch"]

PAD = 0  #: the token written after the repeat (any token would do: it is never a target)


@dataclass(frozen=True)
class RepeatBatch:
    """A batch of repeated sequences and which positions count where.

    Every mask is ``(batch, n)`` and marks *predicting positions* ``p`` (the target is the
    token at ``p + 1``); the last position never predicts.
    """

    tokens: np.ndarray = field(repr=False)  #: (batch, n) int64, n = 2 · max_repeat
    lengths: np.ndarray  #: (batch,) the repeat length L of each sequence
    first: np.ndarray = field(repr=False)  #: (batch, n) bool, p = 0 … L − 2 (targets 1 … L − 1)
    repeat: np.ndarray = field(repr=False)  #: (batch, n) bool, p = L … 2L − 2 (targets L+1 … 2L−1)
    target: np.ndarray = field(repr=False)  #: (batch, n) bool, p = 0 … 2L − 2: every real target


def repeated_batch(
    rng: np.random.Generator,
    batch: int,
    vocab: int,
    min_repeat: int,
    max_repeat: int,
) -> RepeatBatch:
    """Draw ``batch`` sequences: ``L`` random tokens, the same ``L`` again, then padding.

    Parameters
    ----------
    rng : numpy.random.Generator
        The only source of randomness: the same generator state gives the same batch.
    batch : int
        Number of sequences, >= 1.
    vocab : int
        Tokens are drawn uniformly (with replacement) from ``0 … vocab − 1``; >= 2.
    min_repeat, max_repeat : int
        Each sequence's ``L`` is uniform on ``min_repeat … max_repeat`` (both included);
        ``2 <= min_repeat <= max_repeat``.

    Returns
    -------
    RepeatBatch
        ``tokens`` of shape ``(batch, 2 · max_repeat)`` and the masks of the two halves.

    Raises
    ------
    ValueError
        If ``rng`` is not a numpy Generator, a size is not a positive int, ``vocab < 2`` or
        the repeat lengths are out of order (the message gives the values).

    Examples
    --------
    >>> b = repeated_batch(np.random.default_rng(2), batch=3, vocab=5, min_repeat=2,
    ...                    max_repeat=2)
    >>> b.tokens.tolist()
    [[4, 1, 4, 1], [0, 1, 0, 1], [2, 4, 2, 4]]
    >>> int(b.repeat.sum()), int(b.first.sum()), int(b.target.sum())   # per row: 1, 1, 3
    (3, 3, 9)
    """
    if not isinstance(rng, np.random.Generator):
        raise ValueError(
            f"rng must be a numpy Generator (np.random.default_rng(seed)), got {type(rng).__name__}"
        )
    batch = _validate.positive_int(batch, "batch")
    vocab = _validate.positive_int(vocab, "vocab")
    min_repeat = _validate.positive_int(min_repeat, "min_repeat")
    max_repeat = _validate.positive_int(max_repeat, "max_repeat")
    if vocab < 2:
        raise ValueError(
            f"vocab must be at least 2 (nothing to predict with one token), got {vocab}"
        )
    if not 2 <= min_repeat <= max_repeat:
        raise ValueError(
            "the repeat lengths must satisfy 2 <= min_repeat <= max_repeat, got "
            f"min_repeat = {min_repeat}, max_repeat = {max_repeat}"
        )
    n = 2 * max_repeat
    lengths = rng.integers(min_repeat, max_repeat + 1, size=batch)  # (batch,)
    half = rng.integers(0, vocab, size=(batch, max_repeat))  # (batch, max_repeat)
    pos = np.arange(n)  # (n,)
    L = lengths[:, None]  # (batch, 1)
    source = np.where(pos < L, pos, pos - L)  # (batch, n) where each token is copied from
    real = pos < 2 * L  # (batch, n)
    tokens = np.where(real, np.take_along_axis(half, np.minimum(source, max_repeat - 1), 1), PAD)
    return RepeatBatch(
        tokens=tokens.astype(np.int64),  # (batch, n)
        lengths=lengths,
        first=pos <= L - 2,  # (batch, n)
        repeat=(pos >= L) & (pos <= 2 * L - 2),  # (batch, n)
        target=pos <= 2 * L - 2,  # (batch, n)
    )


def chance_loss(vocab: int) -> float:
    """The loss of a uniform guess, ``ln vocab`` nats: the best possible on the first half.

    Examples
    --------
    >>> round(chance_loss(32), 4)
    3.4657
    """
    return math.log(_validate.positive_int(vocab, "vocab"))
