"""Reading an attention heatmap: four patterns, built on purpose, and the numbers that find them.

A weight matrix ``W`` of shape ``(n_q, n_k)`` has one row per query and one column per key;
every row sums to 1. Lesson 4 reads four patterns off such a matrix:

* **diagonal dominance** -- each token gives most of its weight to itself
  (:func:`diagonal_mass` near 1);
* **off-diagonal links** -- one token gives most of its weight to one *other* token
  (:func:`strongest_links`);
* **uniform rows** -- a query spreads its weight evenly
  (:func:`normalised_entropy` near 1);
* **hub columns** -- many queries give weight to the same key
  (:func:`column_mass` well above 1, the average).

:func:`pattern_example` builds a small matrix that shows each pattern clearly, from score
matrices of small integers passed through softmax, so every weight the lesson shows is
computed.

Examples
--------
>>> hub = pattern_example("hub")
>>> hub.tokens[int(column_mass(hub.weights).argmax())]
'.'
>>> normalised_entropy(pattern_example("uniform").weights).round(2).tolist()
[1.0, 1.0, 1.0, 1.0]
"""

import math
from dataclasses import dataclass

import numpy as np

from attnlab import _validate
from attnlab.softmax_family import entropy, softmax

#: The course's API here (what a lesson may call and forbid by this module's name).
__all__ = [
    "PATTERNS",
    "TITLES",
    "PatternExample",
    "column_mass",
    "diagonal_mass",
    "effective_keys",
    "normalised_entropy",
    "pattern_example",
    "strongest_links",
]

PATTERNS = ("diagonal", "link", "uniform", "hub")
TITLES = {
    "diagonal": "diagonal dominance",
    "link": "off-diagonal links",
    "uniform": "uniform rows",
    "hub": "a hub column",
}

# Score matrices of small integers (row = query, column = key). The weights are their
# row-wise softmax; nothing here is a weight typed by hand.
_EXAMPLES = {
    "diagonal": (("green", "tea", "is", "hot"), 3.0 * np.eye(4)),
    "link": (
        ("the", "dog", "barked", "loudly"),
        np.array([[1, 3, 0, 0], [3, 1, 0, 0], [0, 0, 1, 3], [0, 0, 3, 1]], dtype=float),
    ),
    "uniform": (
        ("so", ",", "it", "rained"),
        np.zeros((4, 4)),  # every query scores every key alike
    ),
    "hub": (
        ("it", "rained", "all", "day", "."),
        np.array(
            [[1, 0, 0, 0, 3], [0, 1, 0, 0, 3], [0, 0, 1, 0, 3], [0, 0, 0, 1, 3], [0, 0, 0, 0, 3]],
            dtype=float,
        ),
    ),
}


@dataclass(frozen=True, eq=False)
class PatternExample:
    """A small self-attention example that shows one pattern (:func:`pattern_example`).

    Attributes
    ----------
    name : str
        One of :data:`PATTERNS`.
    title : str
        How lesson 4 names the pattern, e.g. "a hub column".
    tokens : tuple of str, length n
    scores : ndarray, shape (n, n)
        Small integers, row = query, column = key.
    weights : ndarray, shape (n, n)
        The row-wise softmax of ``scores``.
    """

    name: str
    title: str
    tokens: tuple
    scores: np.ndarray
    weights: np.ndarray


def pattern_example(name: str) -> PatternExample:
    """A small self-attention example that shows one pattern clearly.

    Parameters
    ----------
    name : {"diagonal", "link", "uniform", "hub"}

    Returns
    -------
    PatternExample
        ``name``, ``title`` (e.g. "a hub column"), ``tokens`` (n str), ``scores``
        (n, n) small integers and ``weights`` (n, n), their row-wise softmax.

    Raises
    ------
    ValueError
        If ``name`` is not one of :data:`PATTERNS`.

    Examples
    --------
    >>> ex = pattern_example("diagonal")
    >>> ex.tokens, ex.weights.shape
    (('green', 'tea', 'is', 'hot'), (4, 4))
    >>> bool(np.allclose(ex.weights.sum(axis=1), 1.0))
    True
    """
    if not isinstance(name, str) or name not in _EXAMPLES:  # a list or array is unhashable
        raise ValueError(f"name must be one of {PATTERNS}; got {name!r}")
    tokens, scores = _EXAMPLES[name]
    scores = scores.copy()  # (n, n) so callers cannot change the stored example
    return PatternExample(
        name=name, title=TITLES[name], tokens=tokens, scores=scores, weights=softmax(scores)
    )


def normalised_entropy(weights, axis=-1):
    r"""Entropy of each row divided by its maximum, :math:`H(w) / \log n`, in ``[0, 1]``.

    0 means the query puts all its weight on one key; 1 means it spreads it evenly over
    all ``n`` keys. Dividing by :math:`\log n` makes rows of different lengths comparable.

    Parameters
    ----------
    weights : array_like, shape (..., n, ...)
        Attention weights, each slice along ``axis`` summing to 1 (or all zero, a fully
        masked row, which counts as 0).
    axis : int, default -1
        The key axis.

    Returns
    -------
    ndarray, shape of ``weights`` without ``axis``
        Values in ``[0, 1]``. With a single key (``n = 1``) there is no choice to make,
        and the result is 0.

    Raises
    ------
    ValueError
        If ``weights`` are not probabilities along ``axis`` (negative, above 1, rows not
        summing to 1, NaN or inf): pass softmax output, not scores.

    Examples
    --------
    >>> normalised_entropy([[1.0, 0.0, 0.0], [1 / 3, 1 / 3, 1 / 3]]).round(6).tolist()
    [0.0, 1.0]
    >>> float(normalised_entropy([1.0]))
    0.0
    """
    w, ax = _validate.probabilities(weights, "weights", axis=axis)
    h = entropy(w, axis=ax)  # (...) shape of weights without axis
    n = w.shape[ax]
    if n == 1:
        return np.zeros_like(h)
    return np.clip(h / math.log(n), 0.0, 1.0)


def effective_keys(weights, axis=-1):
    r"""The effective number of keys of each row, :math:`e^{H(w)}`, between 1 and ``n``.

    A row that spreads its weight evenly over ``m`` of its keys (0 on the rest) has
    :math:`H = \log m` and so exactly ``m`` effective keys, whatever its length ``n``:
    that is why this, and not :func:`normalised_entropy`, compares rows of different
    lengths. (``H / log n`` gives ``log m / log n``, which for the same ``m`` shrinks as
    ``n`` grows: a row spread over 2 of 4 keys scores 0.5, over 2 of 1000 keys 0.1.)

    Parameters
    ----------
    weights : array_like, shape (..., n, ...)
        Attention weights, each slice along ``axis`` summing to 1 (an all-zero, fully
        masked row has entropy 0 and so 1 effective key).
    axis : int, default -1
        The key axis.

    Returns
    -------
    ndarray, shape of ``weights`` without ``axis``
        Values in ``[1, n]``: 1 for a one-hot row, ``n`` for a uniform one.

    Raises
    ------
    ValueError
        If ``weights`` are not probabilities along ``axis``: pass softmax output.

    References
    ----------
    The exponential of the entropy is the "perplexity" of the row (Shannon 1948; Jelinek
    et al. 1977) and, in ecology, Hill's diversity number of order 1 (Hill 1973).

    Examples
    --------
    >>> effective_keys([[1.0, 0.0, 0.0, 0.0], [0.5, 0.5, 0.0, 0.0], [0.25] * 4]).round(6).tolist()
    [1.0, 2.0, 4.0]
    >>> float(effective_keys(np.r_[0.5, 0.5, np.zeros(998)]).round(6))  # 2 of 1000 keys
    2.0
    """
    w, ax = _validate.probabilities(weights, "weights", axis=axis)
    return np.exp(np.asarray(entropy(w, axis=ax), dtype=float))  # shape of w without axis


def column_mass(weights):
    """The total weight each key receives, summed over the queries.

    Every row sums to 1, so the masses add up to ``n_q`` and average ``n_q / n_k``; a hub
    key collects far more than the average, a key nobody reads gets almost none.

    Parameters
    ----------
    weights : array_like, shape (..., n_q, n_k)
        Attention weights, rows summing to 1.

    Returns
    -------
    ndarray, shape (..., n_k)

    Raises
    ------
    ValueError
        If ``weights`` has fewer than 2 dimensions or is not a matrix of probabilities.

    Examples
    --------
    >>> column_mass([[0.5, 0.5], [0.0, 1.0], [0.25, 0.75]]).tolist()
    [0.75, 2.25]
    """
    w = _weight_matrix(weights)
    return w.sum(axis=-2)  # (..., n_k)


def diagonal_mass(weights):
    """The average weight a token gives to itself: ``mean_i W[i, i]``, in ``[0, 1]``.

    Only meaningful for self-attention, where query ``i`` and key ``i`` are the same token.
    ``1 / n`` is what uniform rows give; near 1 is diagonal dominance.

    Parameters
    ----------
    weights : array_like, shape (..., n, n)
        Square self-attention weights, rows summing to 1.

    Returns
    -------
    ndarray, shape (...)

    Raises
    ------
    ValueError
        If the last two dimensions are not equal (queries and keys are different tokens).

    Examples
    --------
    >>> float(diagonal_mass([[0.9, 0.1], [0.3, 0.7]]))
    0.8
    """
    w = _weight_matrix(weights)
    if w.shape[-1] != w.shape[-2]:
        raise ValueError(
            "weights must be square (self-attention: query i and key i are one token); "
            f"got shape {w.shape}"
        )
    return np.diagonal(w, axis1=-2, axis2=-1).mean(axis=-1)  # (...)


def strongest_links(weights, count=3):
    """The ``count`` largest off-diagonal weights of a self-attention matrix, largest first.

    A large ``W[i, j]`` with ``i != j`` says that, when token ``i`` builds its output, it
    reads mostly from token ``j``. Weights equal to 12 decimals count as tied (two rows
    with the same scores in another order differ in the last bits) and keep row-major order.

    Parameters
    ----------
    weights : array_like, shape (n, n)
        Square self-attention weights, rows summing to 1.
    count : int, default 3
        How many links; at most ``n * (n - 1)``.

    Returns
    -------
    list of (int, int, float)
        ``(query, key, weight)`` triples.

    Raises
    ------
    ValueError
        If ``weights`` is not one square matrix of probabilities, or ``count`` is not a
        positive integer.

    Examples
    --------
    >>> strongest_links([[0.2, 0.8], [0.6, 0.4]], count=1)
    [(0, 1, 0.8)]
    >>> [(i, j) for i, j, _ in strongest_links(pattern_example("link").weights)]
    [(0, 1), (1, 0), (2, 3)]
    """
    w = _weight_matrix(weights)
    if w.ndim != 2 or w.shape[0] != w.shape[1]:
        raise ValueError(f"weights must be one square matrix (n, n); got shape {w.shape}")
    count = _validate.positive_int(count, "count")
    off = w.astype(float)  # (n, n) a copy: the caller's array is not touched
    np.fill_diagonal(off, -np.inf)
    rank = -np.round(off, 12)  # (n, n) ties to 12 decimals sort in row-major order
    order = np.argsort(rank, axis=None, kind="stable")[: min(count, off.size - len(off))]
    rows, cols = np.unravel_index(order, off.shape)
    return [(int(i), int(j), float(off[i, j])) for i, j in zip(rows, cols, strict=True)]


# ---------------------------------------------------------------- helpers (private)
def _weight_matrix(weights) -> np.ndarray:
    w, _ = _validate.probabilities(weights, "weights", axis=-1)
    if w.ndim < 2:
        raise ValueError(f"weights must be a matrix (n_q, n_k); got shape {w.shape}")
    return w
