"""The course's running examples, as data (numpy only).

Every example is built here from a fixed seed or from small integers chosen for
the course, and every number a lesson shows is computed from these arrays.

Examples
--------
>>> ex = cat_sat_down()
>>> ex.tokens, ex.x.shape, ex.w_q.shape
(('The', 'cat', 'sat', 'down'), (4, 16), (16, 8))
>>> query_and_keys_2d().keys.shape
(3, 2)

The examples are frozen dataclasses: a variant is a new example, the original is unchanged.

>>> from dataclasses import replace
>>> replace(ex, d_k=4).d_k, ex.d_k
(4, 8)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

SCORE_ROW = np.array([1.0, 0.5, 2.5, -0.1])  # (4,) one query's scores against four keys
COLLAPSE_ROW = np.array([2.0, 1.0, 1.0])  # (3,) multiplied by 10 and 100 in lesson 2
COLLAPSE_FACTORS = (1, 10, 100)
WIDE_D_K = 512  # the head size whose √d_k rescues the collapsed rows


@dataclass(frozen=True, eq=False)
class Embedded:
    """Tokens, their embeddings and one head's projections (:func:`cat_sat_down`).

    Attributes
    ----------
    tokens : tuple of str, length n
    x : ndarray, shape (n, d_model)
        The embeddings, one row per token.
    w_q, w_k, w_v : ndarray, shape (d_model, d_k)
        The query, key and value projections.
    d_k : int
    """

    tokens: tuple
    x: np.ndarray
    w_q: np.ndarray
    w_k: np.ndarray
    w_v: np.ndarray
    d_k: int


@dataclass(frozen=True, eq=False)
class WideEmbedded:
    """:class:`Embedded` with query and key projections wide enough for every head size.

    Attributes
    ----------
    tokens : tuple of str, length n
    x : ndarray, shape (n, d_model)
    w_q, w_k : ndarray, shape (d_model, max_d_k)
        Their first ``d_k`` columns are :func:`cat_sat_down`'s projections.
    d_k : int
        The running example's head size, 8.
    """

    tokens: tuple
    x: np.ndarray
    w_q: np.ndarray
    w_k: np.ndarray
    d_k: int


@dataclass(frozen=True, eq=False)
class SmallQKV:
    """Queries, keys and values of a few tokens, small integers (:func:`dog_bites_man`).

    Attributes
    ----------
    tokens : tuple of str, length n
    q, k : ndarray, shape (n, d_k)
    v : ndarray, shape (n, d_v)
    """

    tokens: tuple
    q: np.ndarray
    k: np.ndarray
    v: np.ndarray


@dataclass(frozen=True, eq=False)
class SmallScores:
    """Queries and keys of a few tokens with their raw scores (:func:`please_study_man`).

    Attributes
    ----------
    tokens : tuple of str, length n
    q, k : ndarray, shape (n, d_k)
    scores : ndarray, shape (n, n)
        ``q @ k.T``, not scaled.
    """

    tokens: tuple
    q: np.ndarray
    k: np.ndarray
    scores: np.ndarray


@dataclass(frozen=True, eq=False)
class Plane:
    """One query, keys and values in 2-D, for pictures (:func:`query_and_keys_2d`).

    Attributes
    ----------
    query : ndarray, shape (2,)
    keys, values : ndarray, shape (n, 2)
    labels : tuple of str, length n
    """

    query: np.ndarray
    keys: np.ndarray
    values: np.ndarray
    labels: tuple


def cat_sat_down(seed: int = 7) -> Embedded:
    """ "The cat sat down": 4 tokens, d_model = 16, d_k = d_v = 8.

    Returns
    -------
    Embedded
        ``tokens`` (4 str), ``x`` (4, 16) embeddings, ``w_q``, ``w_k``, ``w_v`` (16, 8)
        projections, ``d_k`` = 8. Entries are drawn with a fixed seed and scaled so
        that Q = X W_Q has entries of order 1.
    """
    rng = np.random.default_rng(seed)
    d_model, d_k = 16, 8
    x = rng.normal(size=(4, d_model))  # (n, d_model)
    w_q, w_k, w_v = rng.normal(scale=d_model**-0.5, size=(3, d_model, d_k))  # (d_model, d_k)
    return Embedded(tokens=("The", "cat", "sat", "down"), x=x, w_q=w_q, w_k=w_k, w_v=w_v, d_k=d_k)


def cat_sat_down_wide(max_d_k: int = 512, seed: int = 8) -> WideEmbedded:
    """ "The cat sat down" with room for head sizes up to ``max_d_k`` (lesson 4's d_k slider).

    The first 8 columns of ``w_q`` and ``w_k`` are those of :func:`cat_sat_down`; the rest
    are drawn the same way from ``seed``. So ``x @ w_q[:, :d_k]`` is the running example's
    Q at d_k = 8, and a larger d_k adds dimensions to it rather than starting afresh.

    Parameters
    ----------
    max_d_k : int, default 512
        The widest head offered, at least 8.
    seed : int, default 8
        Seed of the extra columns.

    Returns
    -------
    WideEmbedded
        ``tokens`` (4 str), ``x`` (4, 16), ``w_q`` and ``w_k`` (16, max_d_k), ``d_k`` = 8.

    Raises
    ------
    ValueError
        If ``max_d_k`` is not an integer of at least 8.

    Examples
    --------
    >>> wide, ex = cat_sat_down_wide(64), cat_sat_down()
    >>> wide.w_q.shape, bool(np.array_equal(wide.w_q[:, :8], ex.w_q))
    ((16, 64), True)
    >>> bool(np.array_equal(cat_sat_down_wide(512).w_k[:, :64], wide.w_k))  # same columns
    True
    """
    if isinstance(max_d_k, bool) or not isinstance(max_d_k, int | np.integer) or max_d_k < 8:
        raise ValueError(f"max_d_k must be an integer of at least 8; got {max_d_k!r}")
    ex = cat_sat_down()
    d_model = ex.x.shape[1]
    rng = np.random.default_rng(seed)
    # Drawn column by column, so column c is the same whatever max_d_k is.
    extra = rng.normal(scale=d_model**-0.5, size=(max_d_k - ex.d_k, 2, d_model))  # (+, 2, d_model)
    return WideEmbedded(
        tokens=ex.tokens,
        x=ex.x,
        w_q=np.concatenate([ex.w_q, extra[:, 0].T], axis=1),  # (d_model, max_d_k)
        w_k=np.concatenate([ex.w_k, extra[:, 1].T], axis=1),  # (d_model, max_d_k)
        d_k=ex.d_k,
    )


def dog_bites_man() -> SmallQKV:
    """ "dog bites man": queries, keys (d_k = 4) and values (d_v = 4) as small integers.

    Returns
    -------
    SmallQKV
        ``tokens`` (3 str), ``q`` (3, 4), ``k`` (3, 4), ``v`` (3, 4).
    """
    q = np.array([[1, 0, 1, 0], [0, 2, 0, 1], [1, 1, 0, 0]], dtype=float)  # (3, 4)
    k = np.array([[1, 0, 1, 1], [0, 1, 0, 2], [2, 0, 0, 0]], dtype=float)  # (3, 4)
    v = np.array([[1, 0, 0, 1], [0, 1, 0, 0], [0, 0, 1, 1]], dtype=float)  # (3, 4)
    return SmallQKV(tokens=("dog", "bites", "man"), q=q, k=k, v=v)


def please_study_man() -> SmallScores:
    """ "please study man": three tokens whose raw score rows are worked by hand in lesson 3.

    Returns
    -------
    SmallScores
        ``tokens`` (3 str), ``q`` (3, 2) and ``k`` (3, 2) small-integer vectors;
        ``scores`` = q @ k.T, shape (3, 3).
    """
    q = np.array([[1, 0], [2, 1], [1, 1]], dtype=float)  # (3, 2)
    k = np.array([[1, 1], [0, 2], [1, -1]], dtype=float)  # (3, 2)
    return SmallScores(tokens=("please", "study", "man"), q=q, k=k, scores=q @ k.T)


def query_and_keys_2d() -> Plane:
    """One 2-D query, three 2-D keys and three 2-D values (for pictures on a plane).

    Returns
    -------
    Plane
        ``query`` (2,), ``keys`` (3, 2), ``values`` (3, 2), ``labels`` (3 str).
    """
    return Plane(
        query=np.array([1.0, 0.5]),  # (2,)
        keys=np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.2]]),  # (3, 2)
        values=np.array([[2.0, 0.5], [0.5, 2.0], [-1.0, -0.5]]),  # (3, 2)
        labels=("A", "B", "C"),
    )
