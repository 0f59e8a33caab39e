"""Lesson 1 — dot-product scores: the checked exercises.

* :data:`dot` (1.1): one score, ``q · k``, as a sum of products.
* :data:`score_matrix` (1.2): every score at once, ``Q Kᵀ``, shape (n_q, n_k).
* :data:`score_shape` (1.3): the shape of the score matrix from n_q, n_k, d_k.
* :data:`orthogonal_query` (1.4): a query that scores exactly 0 against a given key.

Reference answers come from :func:`attnlab.attention_scores` with ``scale=1.0``
(the raw, unscaled scores; lesson 2 adds the ``1/√d_k``).

Examples
--------
>>> dot.check(None).outcome.name
'NOT_ATTEMPTED'
>>> dot.check(lambda q, k: q * k).outcome.name       # forgot to add up
'WRONG'
>>> score_matrix.check(None).outcome.name
'NOT_ATTEMPTED'
"""

from __future__ import annotations

import math
import numbers

import numpy as np

import attnlab
from attnlab.examples import cat_sat_down, dog_bites_man, query_and_keys_2d
from attnlab.exercises.kit.cases import Cases
from attnlab.exercises.kit.display import short
from attnlab.exercises.kit.exercise import Exercise
from attnlab.exercises.kit.judging import as_number
from attnlab.exercises.kit.mistakes import Compared, Mistake
from attnlab.exercises.kit.outcomes import Wrong
from attnlab.exercises.kit.precision import judging_tolerance


def raw_scores(q, k) -> np.ndarray:
    """``q @ k.T`` computed by attnlab (``scale=1.0``): the reference for this lesson.

    Examples
    --------
    >>> raw_scores([[1.0, 2.0]], [[3.0, 4.0], [1.0, 0.0]]).tolist()
    [[11.0, 1.0]]
    """
    return attnlab.attention_scores(q, k, scale=1.0)  # (n_q, n_k)


def _example_qk():
    """Q for the first two tokens and K for all four tokens of "The cat sat down"."""
    ex = cat_sat_down()
    q = ex.x @ ex.w_q  # (4, d_k)
    k = ex.x @ ex.w_k  # (4, d_k)
    return q, k


def _finite_number(value) -> float | None:
    """``value`` as one finite float, or None: :func:`as_number`, refusing nan and inf too,
    and reading a returned bool as the number 1 or 0."""
    number = float(value) if isinstance(value, (bool, np.bool_)) else as_number(value)
    return number if number is not None and math.isfinite(number) else None


def _float_atol(got, q, k) -> float:
    """The absolute tolerance for dot products: 1e-9, or what float32 (float16) rounding allows.

    A dot product computed in a dtype with machine epsilon ``eps`` is off by at most about
    ``d · eps · Σ_d |q_d k_d|``; a float32 answer is judged to that precision, a float64 (or
    list) answer to 1e-9 (the kit's :func:`judging_tolerance`).
    """
    q, k = np.asarray(q, dtype=float), np.asarray(k, dtype=float)
    magnitude = float(np.max(np.abs(q) @ np.abs(k).T))  # largest Σ_d |q_d k_d|
    return judging_tolerance(got, abs_ulps=4 * q.shape[-1], scale=magnitude)[1]


# --------------------------------------------------------------------------- 1.1 dot
def dot_cases() -> list[tuple[np.ndarray, np.ndarray]]:
    """The (q, k) pairs the checker tries: small integers, a negative score, the cat example."""
    q, k = _example_qk()
    return [
        (np.array([2.0, 1.0, -1.0]), np.array([1.0, -3.0, 3.0])),  # negative score
        (np.array([2.0, 0.5, 1.0, 3.0]), np.array([1.0, 4.0, -2.0, 0.5])),  # d = 4
        (q[1], k[2]),  # "cat" asking "sat", d_k = 8
    ]


def dot_fresh(rng) -> list[tuple[np.ndarray, np.ndarray]]:
    """Pairs drawn anew for every grading (``Cases(fresh=...)``): d between 2 and 9, entries
    with one decimal; the first pair's score is negative, the second's positive."""
    pairs = []
    for sign in (-1.0, 1.0):
        d = int(rng.integers(2, 10))
        q, k = np.round(rng.normal(0.0, 2.0, size=(2, d)), 1)  # (d,) each
        if np.sign(q @ k) != sign:
            k = -k
        pairs.append((q, k + (k == 0) * 0.5))  # no zero entry
    return pairs


def _dot_what(q, k) -> str:
    return f"dot({short(q)}, {short(k)})"


def _products_not_added(got, expected, what, q, k) -> None:
    """The products ``q[d]·k[d]`` not yet added up get a sentence of their own."""
    try:
        products = np.shape(got) == q.shape and np.allclose(np.asarray(got, dtype=float), q * k)
    except (TypeError, ValueError):  # anything ragged
        return
    if products:
        raise Wrong(
            f"{what} should be one number, {float(expected):.4g}, but yours gave the {len(q)} "
            f"products q[d]·k[d], {short(np.asarray(got))}: add the products up."
        )


_MULTIPLY_FIRST = "Multiply matching entries first (q[d]·k[d]), then add those products."

_judge_dot = Compared(
    reference=lambda q, k: raw_scores(q[None, :], k[None, :])[0, 0],
    what=_dot_what,
    mistakes=[
        Mistake(
            lambda q, k: q.sum() + k.sum(),
            f"that is the sum of all entries of q plus those of k. {_MULTIPLY_FIRST}",
        ),
        Mistake(
            lambda q, k: q.sum() * k.sum(), f"that is (sum of q) × (sum of k). {_MULTIPLY_FIRST}"
        ),
        Mistake(
            lambda q, k: np.abs(q * k).sum(),
            "it looks like you took absolute values. Dot products can be "
            "negative — that is how a key pointing away shows up.",
        ),
        Mistake(
            lambda q, k: (q * k).mean(),
            "that is the mean of the products; the dot product is their sum.",
        ),
        Mistake(
            lambda q, k: raw_scores(q[None, :], k[None, :])[0, 0] / math.sqrt(len(q)),
            "it looks like you divided by √d. That scaling comes in "
            "lesson 2; here we want the raw dot product.",
        ),
        Mistake(lambda q, k: q @ q, "that is q · q; use k as the second vector."),
    ],
    tolerance=lambda got, q, k: (1e-6, _float_atol(got, q[None, :], k[None, :])),
    check=_products_not_added,
    shown=lambda x: f"{float(x):.4g}",
    otherwise=lambda q, k: (
        f". Check that you multiply q[d] by k[d] for every d, all {len(q)} of them, "
        "and add up every product."
    ),
)


dot = Exercise(
    "Exercise 1.1 (one dot product)",
    Cases(dot_cases, _judge_dot, inputs=tuple, fresh=dot_fresh),  # a case is the call's (q, k)
    hints=[
        "A dot product pairs up the entries: q[0] with k[0], q[1] with k[1], and so on. "
        "Multiply each pair, then add all the products into one number.",
        "Start a running total at 0.0, walk through the pairs of entries together "
        "(`zip(q, k)` hands you one pair at a time), add each pair's product to the total, "
        "and return the total once the loop is done.",
        "With numpy the whole loop shrinks to one line of the form `return np.___(q ___ k)`: an "
        "element-wise operation, then a reduction. Which two fill the blanks?",
    ],
    # the task: without @ or np.dot (the matrix product any way numpy writes it, refused by
    # the answer cell's lint: attnlab.exercises.rules.lint.MATRIX_PRODUCT)
    forbidden=("@",),
    id="1.1",
    attr="dot",
    points=1,
    grade_id="check-lesson1-dot",
)


# ------------------------------------------------------------------ 1.2 score matrix
def score_matrix_cases() -> list[tuple[np.ndarray, np.ndarray]]:
    """(Q, K) pairs the checker tries: n_q ≠ n_k ≠ d_k, then a square "dog bites man"."""
    q, k = _example_qk()
    dog = dog_bites_man()
    return [(q[:2], k), (dog.q, dog.k)]  # (2, 8) with (4, 8); (3, 4) with (3, 4)


def score_matrix_fresh(rng) -> list[tuple[np.ndarray, np.ndarray]]:
    """(Q, K) drawn anew for every grading (``Cases(fresh=...)``): n_q, n_k and d_k all
    different (2 to 7), then a square pair; entries with one decimal."""
    n_q, n_k, d_k = (int(n) for n in rng.choice(np.arange(2, 8), size=3, replace=False))
    n = int(rng.integers(2, 6))
    return [
        (np.round(rng.normal(size=(n_q, d_k)), 1), np.round(rng.normal(size=(n_k, d_k)), 1)),
        (np.round(rng.normal(size=(n, n)), 1), np.round(rng.normal(size=(n, n)), 1)),
    ]


def _score_matrix_what(q, k) -> str:
    return f"score_matrix(Q, K) for Q of shape {q.shape} and K of shape {k.shape}"


def _score_matrix_failed(exc, case) -> str | None:
    """A ValueError (shapes that do not fit together) says how the shapes must line up."""
    q, k = case
    cause = exc.__cause__
    if not isinstance(cause, ValueError):
        return None
    return (
        f"{_score_matrix_what(q, k)} should give an array of shape "
        f"{raw_scores(q, k).shape}, but yours raised {type(cause).__name__}: {cause}\n"
        f"{_shape_advice(q, k)}"
    )


def _shape_advice(q, k) -> str:
    (n_q, d_k), (n_k, _) = q.shape, k.shape
    return (
        f"Q has shape {q.shape} and K has shape {k.shape}. A matrix product needs the inner "
        f"sizes to match, so turn K on its side: K.T has shape ({d_k}, {n_k}), and "
        f"({n_q}, {d_k}) @ ({d_k}, {n_k}) gives ({n_q}, {n_k})."
    )


_judge_score_matrix = Compared(  # Qᵀ K, Q K and K ᵀQ fail on the first case (_shape_advice)
    reference=raw_scores,
    what=_score_matrix_what,
    mistakes=[
        Mistake(
            lambda q, k: raw_scores(q, k).T,
            "you computed K Qᵀ, the transpose: its rows are keys. Rows of the score "
            "matrix must be queries, so put Q first: Q @ K.T.",
        ),
        Mistake(
            lambda q, k: raw_scores(q, k) / math.sqrt(q.shape[1]),
            "it looks like you divided by √d_k. That is lesson 2's "
            "step; this exercise wants the raw scores Q Kᵀ.",
        ),
        Mistake(
            lambda q, k: raw_scores(q, k) / q.shape[1],
            "it looks like you divided by d_k. This exercise wants the raw "
            "scores Q Kᵀ, with no scaling.",
        ),
    ],
    tolerance=lambda got, q, k: (1e-6, _float_atol(got, q, k)),
)


score_matrix = Exercise(
    "Exercise 1.2 (the score matrix)",
    Cases(
        score_matrix_cases,
        _judge_score_matrix,
        inputs=tuple,
        failed=_score_matrix_failed,
        fresh=score_matrix_fresh,
    ),
    hints=[
        "Entry (i, j) must be the dot product of row i of Q with row j of K. In a matrix "
        "product A @ B, entry (i, j) is row i of A times column j of B.",
        "So the keys have to be the *columns* of the second factor: transpose K. "
        "Check the shapes: (n_q, d_k) @ (d_k, n_k) → (n_q, n_k).",
        "One matrix product, with the keys turned on their side so that their rows become "
        "columns. The result has shape (n_q, n_k); the `.T` attribute of an array transposes "
        "it.",
    ],
    id="1.2",
    attr="score_matrix",
    points=2,
    grade_id="check-lesson1-score-matrix",
)


# ------------------------------------------------------------------- 1.3 score shape
def shape_cases() -> list[tuple[int, int, int]]:
    """The (n_q, n_k, d_k) the checker tries: no two sizes alike at first, then n_q = n_k."""
    return [(2, 5, 8), (7, 3, 64), (4, 4, 16)]


def shape_fresh(rng) -> list[tuple[int, int, int]]:
    """Sizes drawn anew for every grading (``Cases(fresh=...)``): three different sizes up to
    99, then n_q = n_k."""
    n_q, n_k, d_k = (int(n) for n in rng.choice(np.arange(2, 100), size=3, replace=False))
    return [(n_q, n_k, d_k), (n_k, n_k, d_k)]


def expected_score_shape(n_q, n_k, d_k) -> tuple[int, int]:
    """The shape attnlab's scores really have, for queries (n_q, d_k) and keys (n_k, d_k).

    Examples
    --------
    >>> expected_score_shape(2, 5, 8)
    (2, 5)
    """
    return raw_scores(np.ones((n_q, d_k)), np.ones((n_k, d_k))).shape


def _whole(size) -> bool:
    """True for a Python or numpy int (not a bool, not a float, even 2.0)."""
    return isinstance(size, numbers.Integral) and not isinstance(size, bool | np.bool_)


def _judge_score_shape(got, case, messages) -> None:
    """``got`` must be the shape of the scores for the sizes ``case`` = (n_q, n_k, d_k)."""
    n_q, n_k, d_k = case
    what = f"score_shape(n_q={n_q}, n_k={n_k}, d_k={d_k})"
    expected = expected_score_shape(n_q, n_k, d_k)
    if isinstance(got, np.ndarray) and got.ndim == 2:
        raise Wrong(
            f"{what} should be {expected}, the shape of the scores, but yours returned an "
            f"array of shape {got.shape} itself. Return the tuple (rows, columns)."
        )
    try:
        sizes = tuple(got)
    except TypeError as exc:
        raise Wrong(
            f"{what} should return a tuple of two sizes, (rows, columns), but yours gave "
            f"{got!r}{', a single number' if _finite_number(got) is not None else ''}."
        ) from exc
    if not all(_whole(size) for size in sizes):
        raise Wrong(
            f"{what} should be {expected}, but yours gave {got!r}: a shape holds whole "
            "numbers of type int (numpy refuses np.zeros((2.0, 5))). Each size is one of "
            "n_q, n_k, d_k as given, with no arithmetic on it."
        )
    shape = tuple(int(size) for size in sizes)
    if shape == expected:
        return
    said = f"{what} should be {expected}, but yours gave {shape}"
    known = {
        (n_k, n_q): "that is the transpose. Rows are queries, columns are keys.",
        (n_q, d_k): "that is the shape of Q itself. Each score adds up the d_k products, "
        "so d_k disappears from the result.",
        (n_k, d_k): "that is the shape of K itself. The scores have one row per query and "
        "one column per key.",
        (d_k, d_k): "a (d_k, d_k) result comes from Qᵀ K, which adds over tokens. The score "
        "matrix pairs every query with every key.",
        (n_q, n_k, d_k): "d_k is added up inside each dot product, so it disappears.",
    }
    raise Wrong(f"{said}: {known.get(shape, 'count the queries and the keys.')}")


score_shape = Exercise(
    "Exercise 1.3 (the shape of the scores)",
    Cases(shape_cases, _judge_score_shape, inputs=tuple, fresh=shape_fresh),
    hints=[
        "There is one score for every (query, key) pair. How many rows, how many columns?",
        "Write the matrix product's shapes: (n_q, d_k) @ (d_k, n_k). The inner size is "
        "added up and disappears.",
        "The answer is a tuple of two of the three sizes you are given, in the order (rows, "
        "columns) = (queries, keys). Which size disappears in the product?",
    ],
    id="1.3",
    attr="score_shape",
    points=1,
    grade_id="check-lesson1-score-shape",
)


# --------------------------------------------------------------- 1.4 orthogonal query
def _cosine_tolerance(got) -> float:
    """How close to 0 cos(q, k) must be: 1e-9, or 8 ulps for a float32 (or float16) answer.

    A query computed in float32 from k rounded to float32 is at right angles to the rounded
    k, which leaves a cosine of about 1e-8 against the float64 k; that is still exact to the
    answer's own precision.
    """
    return judging_tolerance(got, abs_ulps=8)[1]


def orthogonal_cases() -> list[np.ndarray]:
    """The keys the checker tries: the 2-D example's keys A, B, C and one more."""
    return [*query_and_keys_2d().keys, np.array([3.0, 1.0])]


def orthogonal_fresh(rng) -> list[np.ndarray]:
    """Keys drawn anew for every grading (``Cases(fresh=...)``): two 2-D keys with one
    decimal, neither zero nor on an axis."""
    keys = np.round(rng.uniform(0.5, 4.0, size=(2, 2)), 1) * rng.choice([-1.0, 1.0], (2, 2))
    return list(keys)


def _judge_orthogonal_query(got, k, messages) -> None:
    """``got`` must be a non-zero 2-D vector whose raw score against the key ``k`` is 0."""
    what = f"orthogonal_query({short(k)})"
    try:
        q = np.asarray(got, dtype=float)
    except (TypeError, ValueError) as exc:
        raise Wrong(f"{what} should return a 2-D vector; got {short(got)}.") from exc
    if q.shape != (2,):
        raise Wrong(f"{what} should return a vector of shape (2,); got shape {q.shape}.")
    if not np.all(np.isfinite(q)):
        raise Wrong(f"{what} returned {short(q)}, which contains nan or inf.")
    size = float(np.linalg.norm(q)) * float(np.linalg.norm(k))  # |q| |k|
    if size <= 1e-9:
        raise Wrong(
            f"{what} returned the zero vector. It does score 0 against every key, but it "
            "has no direction; find a non-zero query at right angles to k."
        )
    score = float(raw_scores(q[None, :], k[None, :])[0, 0])
    cosine = score / size
    if abs(cosine) <= _cosine_tolerance(got):
        return
    said = f"{what} returned q = {short(q)}, whose score q·k is {score:.4g}, not 0"
    if cosine > 0.999:
        raise Wrong(f"{said}: q points along k (aligned), which gives the largest score.")
    if cosine < -0.999:
        raise Wrong(f"{said}: q points against k (opposite), which gives the most negative score.")
    raise Wrong(f"{said}. Turn k by exactly 90°: swap its two entries and change one sign.")


orthogonal_query = Exercise(
    "Exercise 1.4 (a query that ignores a key)",
    Cases(orthogonal_cases, _judge_orthogonal_query, inputs=lambda k: (k,), fresh=orthogonal_fresh),
    hints=[
        "A score is 0 exactly when q and k are at right angles (cos 90° = 0). Use the "
        "explorer: turn q until the bar of the key you chose is at zero.",
        "For k = (x, y), try q = (a, b) and write q·k = a·x + b·y. Which a and b make that "
        "zero for every x and y?",
        "Swap the two entries of k and change the sign of one of them; check with pencil and "
        "paper that a·x + b·y becomes 0. Return it as a numpy array.",
    ],
    id="1.4",
    attr="orthogonal_query",
    points=1,
    grade_id="check-lesson1-orthogonal-query",
)
