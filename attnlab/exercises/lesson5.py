"""Lesson 5 — weighted values: the checked exercises.

* :data:`mix_one` (5.1): one output vector from one row of weights,
  ``Σ_j w[j] · values[j]``, shape (d_v,).
* :data:`attention_output` (5.2): every output at once, ``weights @ values``,
  (n_q, n_k) @ (n_k, d_v) → (n_q, d_v).
* :data:`output_box` (5.3): ``(low, high)``, the smallest and largest value each coordinate of
  any output can take: the per-coordinate min and max over the value vectors, because every
  output is a convex combination of them.

Reference answers come from :func:`attnlab.mixing.weighted_values` (5.1, 5.2) and
:func:`attnlab.mixing.coordinate_bounds` (5.3). Known mistakes are named from what the answer
returned (a transpose, the wrong axis, the plain mean, softmax applied twice, …) or from the
numpy error it raised (shapes that do not fit, named with the shapes); an unknown wrong output
is judged by what any output must be: a mix whose weights are w, inside the values' bounds.

Examples
--------
>>> mix_one.check(None).outcome.name
'NOT_ATTEMPTED'
>>> "without weighting" in mix_one.check(lambda w, values: values.sum(axis=0)).message
True
>>> "(2, 3) @ (3, 4)" in attention_output.check(lambda weights, values: values @ weights).message
True
>>> output_box.check(lambda values: (values.max(axis=0), values.min(axis=0))).outcome.name
'WRONG'
"""

from __future__ import annotations

import re

import numpy as np

import attnlab
from attnlab.examples import cat_sat_down, dog_bites_man, query_and_keys_2d
from attnlab.exercises.kit.calling import call_watching
from attnlab.exercises.kit.cases import Cases
from attnlab.exercises.kit.display import hidden_difference, one_line, short, warned
from attnlab.exercises.kit.exercise import Exercise
from attnlab.exercises.kit.judging import as_numbers, recognised, same_values
from attnlab.exercises.kit.mistakes import Compared, Mistake, named_mistake
from attnlab.exercises.kit.outcomes import NotAttempted, Wrong
from attnlab.exercises.kit.precision import judging_tolerance
from attnlab.mixing import coordinate_bounds, weighted_values

__all__ = [
    "mix_one",
    "attention_output",
    "output_box",
    "mix_cases",
    "output_cases",
    "box_cases",
]


# ---------------------------------------------------------------- shared helpers
#: How close a right answer must be (the kit's :func:`judging_tolerance`): any answer may have
#: been computed in float32, which keeps about 7 significant digits, so it passes with 160
#: roundings relative and 17 absolute (about 2e-5 and 2e-6: the values here are of order 1);
#: every known mistake is off by far more (the tests check each one is still told apart).
#: Looser than the kit's defaults, so every comparison below passes them to
#: :func:`same_values` and :func:`recognised`.
_RTOL, _ATOL = judging_tolerance(None, computed_in=np.float32, ulps=160, abs_ulps=17)


def _same(got, wrong) -> bool:
    """``got`` has the shape and (to float32 rounding) the values of a known wrong answer."""
    return same_values(got, wrong, _RTOL, _ATOL)


def _weights_of(u) -> str:
    """``"[0.2, 0.8], which add up to 1"``."""
    return f"{short(np.round(u, 4))}, which add up to {float(np.sum(u)):.4g}"


def _implied_weights(got, values):
    """The weights u with ``u @ values == got`` when the value vectors are independent, or None.

    With more value vectors than coordinates (the 2-D example) many u give the same point,
    so nothing is said about them.
    """
    n_k, d_v = values.shape
    if n_k > d_v or np.linalg.matrix_rank(values) < n_k:
        return None
    u = np.linalg.lstsq(values.T, got, rcond=None)[0]  # (n_k,)
    return u if np.allclose(u @ values, got, rtol=_RTOL, atol=_ATOL) else None


def _mix_diagnosis(got, w, values, expected, name, each) -> str:
    """Why the output vector ``got`` (right shape, finite) is not ``w @ values``.

    ``name`` is how the learner calls this row of weights (``w`` or ``weights[i]``), ``each``
    one weight of it (``w[j]`` or ``weights[i, j]``). Looks at,
    in order: all zeros, a multiple of the right output, a mix with other weights, a
    coordinate outside the values' bounds.
    """
    n_k = len(w)
    if np.allclose(got, 0.0, atol=1e-12):
        return (
            "Yours is all zeros: did the running total ever get the terms added to it, "
            f"and is it the total you return? Add {each}·values[j] for every key j."
        )
    size = float(expected @ expected)
    if size > 1e-12:
        c = float(got @ expected) / size
        if np.allclose(got, c * expected, rtol=_RTOL, atol=_ATOL):
            return (
                f"Yours is {c:.4g} times the right output — as if the weights added up to "
                f"{c:.4g} instead of 1. Use the {n_k} weights exactly as given, each "
                f"{each} times values[j], and add the terms up (a sum, not a mean)."
            )
    u = _implied_weights(got, values)
    if u is not None:
        return (
            f"Yours is the mix Σ_j u[j]·values[j] with u = {_weights_of(u)}, but the "
            f"weights are {name} = {_weights_of(w)}. Scale each values[j] by its own "
            f"weight {each}, nothing else."
        )
    low, high = coordinate_bounds(values)
    tol = 1e-9 * max(1.0, float(np.abs(values).max()))
    outside = np.flatnonzero((got < low - tol) | (got > high + tol))
    if outside.size:
        c = int(outside[0])
        return (
            f"Coordinate {c} of yours is {got[c]:.4g}, but coordinate {c} of the value "
            f"vectors only runs from {low[c]:.4g} to {high[c]:.4g}. A weighted average, "
            "with weights ≥ 0 that add up to 1, never leaves that range: use the weights "
            f"as given, each {each} with values[j]."
        )
    return (
        f"Check the formula: the output is Σ_j {each}·values[j], one term for each of "
        f"the {n_k} keys, added up."
    )


def _one_hot_note(w, values, name) -> str:
    """For a one-hot row: the output must be that value vector itself."""
    if not np.isclose(w.max(), 1.0, rtol=0, atol=1e-12):
        return ""
    j = int(np.argmax(w))
    return (
        f"With all the weight on key {j} ({name} = {short(w)}), the output must be "
        f"values[{j}] = {short(values[j])} itself. "
    )


# ---------------------------------------------------------------- 5.1 mix the values, one query
def _scaled_row(query, keys) -> np.ndarray:
    """The softmax of one query's scaled scores against the keys, shape (n_k,)."""
    return attnlab.softmax(attnlab.attention_scores(query[None, :], keys))[0]


def mix_cases() -> list[tuple[str, np.ndarray, np.ndarray]]:
    """(description, w, values) triples the checker tries.

    The 2-D example first (three value vectors, two coordinates), then the "bites" row of
    "dog bites man" (three values of four coordinates), a one-hot row that must return its
    value vector, and the "cat" row of the running example (four values of eight). n_k differs
    from d_v every time, so a transposed product cannot go unnoticed.
    """
    ex = query_and_keys_2d()
    dog = dog_bites_man()
    cat = cat_sat_down()
    cat_q, cat_k, cat_v = cat.x @ cat.w_q, cat.x @ cat.w_k, cat.x @ cat.w_v  # (4, d) each
    one_hot = np.eye(len(ex.values))[1]  # all the weight on B
    return [
        (
            f"the 2-D example: w = {short(_scaled_row(ex.query, ex.keys))} (softmax of its scaled "
            f"scores) and values of shape {ex.values.shape}, {short(ex.values)}",
            _scaled_row(ex.query, ex.keys),
            ex.values,
        ),
        (
            f'the "{dog.tokens[1]}" row of "dog bites man": w = '
            f"{short(_scaled_row(dog.q[1], dog.k))} and values of shape {dog.v.shape}",
            _scaled_row(dog.q[1], dog.k),
            dog.v,
        ),
        (f"the one-hot row w = {short(one_hot)} and the 2-D example's values", one_hot, ex.values),
        (
            f'the "{cat.tokens[1]}" row of "The cat sat down": w = '
            f"{short(_scaled_row(cat_q[1], cat_k))} and V = X W_V of shape {cat_v.shape}",
            _scaled_row(cat_q[1], cat_k),
            cat_v,
        ),
    ]


def _weights_row(rng, n_k: int) -> np.ndarray:
    """A softmax row of ``n_k`` random scores, no two weights alike."""
    return attnlab.softmax(rng.normal(0.0, 1.5, size=n_k))  # (n_k,)


def _sizes(rng, count: int) -> list[int]:
    """``count`` different sizes from 2 to 7."""
    return [int(n) for n in rng.choice(np.arange(2, 8), size=count, replace=False)]


def mix_fresh(rng) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """Cases drawn anew for every grading (``Cases(fresh=...)``): a softmax row over n_k
    values of d_v coordinates (n_k ≠ d_v, 2 to 7), then a one-hot row over other values."""
    n_k, d_v = _sizes(rng, 2)
    w, values = _weights_row(rng, n_k), np.round(rng.normal(0.0, 2.0, size=(n_k, d_v)), 2)
    one_hot = np.eye(d_v)[rng.integers(d_v)]  # (d_v,): d_v values of n_k coordinates now
    others = np.round(rng.normal(0.0, 2.0, size=(d_v, n_k)), 2)
    return [
        (f"w = {short(w)} and values of shape {values.shape}, {short(values)}", w, values),
        (f"the one-hot row w = {short(one_hot)} and values {short(others)}", one_hot, others),
    ]


def _mix_mistakes(w, values) -> list[tuple[np.ndarray, str]]:
    """(what a known mistake returns for ``w`` and ``values``, what to say about it)."""
    n_k, d_v = values.shape
    weighted = w[:, None] * values  # (n_k, d_v) the terms, not yet added
    return [
        (
            weighted,
            f"These are the {n_k} weighted value vectors w[j]·values[j], one row per "
            "key — the right pieces. Now add them up over the keys (axis=0), so that one vector "
            f"of {d_v} coordinates is left.",
        ),
        (
            weighted.T,
            f"These are the {n_k} weighted value vectors, as columns. Add them up "
            "over the keys, and return one vector: (w[:, None] * values).sum(axis=0).",
        ),
        (
            weighted.sum(axis=1),
            "You added up the coordinates of each weighted value vector "
            "(axis=1), which leaves one number per key. Add the vectors up over the keys "
            "instead, axis=0, which leaves one number per coordinate.",
        ),
        (
            weighted.sum(),
            "You added every entry into one number. Add the weighted value "
            f"vectors up over the keys only (axis=0): the output has {d_v} coordinates.",
        ),
        (
            weighted.mean(axis=0),
            "You took the mean of the weighted value vectors, which "
            f"divides by {n_k} once more. Add them up: the weights already add up to 1.",
        ),
        (
            values.sum(axis=0),
            "You added the value vectors up without weighting them: scale "
            "each values[j] by its weight w[j] first.",
        ),
        (
            values.mean(axis=0),
            f"That is the plain mean of the {n_k} value vectors, the output "
            f"when every weight is 1/{n_k}. Scale each values[j] by its own weight w[j], then add.",
        ),
        (
            attnlab.softmax(w) @ values,
            "You put w through softmax again. w already holds the "
            "weights (softmax output, adding up to 1): use them as they are.",
        ),
        (
            w[::-1] @ values,
            "You paired the weights with the value vectors in reverse order: "
            "w[j] goes with values[j], the same j.",
        ),
        (
            values[int(np.argmax(w))],
            f"That is the value vector of the largest weight alone, "
            f"values[{int(np.argmax(w))}]. Attention mixes all of them: every values[j] counts, "
            "in proportion to w[j].",
        ),
        (
            w[None, :] @ values,
            f"Right numbers, but shape (1, {d_v}): drop the extra axis, so "
            f"that the output is a plain vector of shape ({d_v},).",
        ),
        (
            w,
            "You returned the weights themselves. They say how much of each value vector to "
            "take; the output is the mix of the value vectors.",
        ),
    ]


def _mix_shape_note(shape, n_k, d_v) -> str:
    if shape == (n_k, d_v):
        return (
            f"That is one row per key: add the {n_k} rows up (axis=0), so one vector of "
            f"{d_v} coordinates is left."
        )
    if shape == (n_k,):
        return (
            f"That is one number per key; the output has one number per coordinate of a "
            f"value vector, {d_v} of them: add over the keys (axis=0), not along each "
            "value vector."
        )
    if shape == ():
        return (
            f"That is a single number; the output is a vector with the {d_v} coordinates "
            "of a value vector."
        )
    return ""


def _mix_error_note(exc, w, values) -> str:
    """Advice for a numpy error raised by the learner's function (shapes that do not fit)."""
    n_k, d_v = values.shape
    cause = exc.__cause__
    text = str(cause)
    if isinstance(cause, IndexError):
        return (
            f"\nw has {n_k} weights, one per value vector (row of values), and each value "
            f"vector has d_v = values.shape[1] = {d_v} coordinates. Loop over the keys, j "
            f"in range(len(w)) = range({n_k}), and add w[j] * values[j]."
        )
    if isinstance(cause, ValueError) and "broadcast" in text:
        sizes = (
            f"\nw has shape {w.shape}, values has shape {values.shape} and the output has "
            f"shape ({d_v},), as long as one value vector."
        )
        if str(values.shape).replace(" ", "") not in text.replace(" ", ""):
            return (
                f"{sizes} A running total must have that shape too: start it as 0 or "
                f"np.zeros(values.shape[1]) = np.zeros({d_v}), not np.zeros(len(w))."
            )
        return (
            f"{sizes} numpy lines shapes up from the right, so w * values pairs the {n_k} "
            f"weights with the {d_v} coordinates of each row instead of with the rows. Give "
            f"w a column axis, w[:, None] of shape ({n_k}, 1), so that each row values[j] "
            "is scaled by its own w[j]."
        )
    if isinstance(cause, ValueError) and ("matmul" in text or "aligned" in text):
        return (
            f"\nvalues has shape {values.shape} and w has shape {w.shape}. A matrix product "
            f"adds over the size the two share in the middle, and here that must be the "
            f"{n_k} keys: w @ values, ({n_k},) @ ({n_k}, {d_v}) → ({d_v},). values @ w and "
            f"w @ values.T put the {d_v} coordinates against the {n_k} weights instead."
        )
    return ""


def _first_terms(got, w, values) -> int:
    """m when ``got`` is the sum of only the first m < n_k weighted value vectors, else 0."""
    sums = np.cumsum(w[:, None] * values, axis=0)  # (n_k, d_v) row m-1: the first m terms
    return next((m for m in range(1, len(w)) if _same(got, sums[m - 1])), 0)


def _loop_bound(answer) -> str:
    """Why a loop added too few terms, when every case agrees: "coordinates" (it ran over
    range(values.shape[1])), "one short" (range(len(w) - 1)), else ''.

    One case cannot tell them apart when d_v = n_k - 1 (the 2-D example); a case with
    d_v > n_k can: over the coordinates, w[j] runs past the last weight (IndexError).
    """
    verdicts = set()
    for _, w, values in mix_cases():
        n_k, d_v = values.shape
        try:
            got, _ = call_watching(answer, w.copy(), values.copy())
            got = np.asarray(got, dtype=float)
        except Wrong as exc:
            index_error = isinstance(exc.__cause__, IndexError)
            verdicts.add("coordinates" if index_error and d_v > n_k else "?")
            continue
        except (NotAttempted, TypeError, ValueError):
            verdicts.add("?")
            continue
        if got.shape != (d_v,) or _same(got, weighted_values(w, values)):
            verdicts.add("?" if got.shape != (d_v,) else "either")
            continue
        m = _first_terms(got, w, values)
        if m == d_v == n_k - 1:
            verdicts.add("either")
        elif m == n_k - 1:
            verdicts.add("one short")
        elif m == d_v:
            verdicts.add("coordinates")
        else:
            verdicts.add("?")
    verdicts.discard("either")
    return verdicts.pop() if len(verdicts) == 1 and "?" not in verdicts else ""


def _first_terms_reason(answer, m, n_k, d_v) -> str:
    said = f"You added only the first {m} of the {n_k} weighted value vectors."
    bound = _loop_bound(answer)
    if bound == "coordinates":
        return (
            f"{said} Your loop runs over the coordinates, range(values.shape[1]) = "
            f"range({d_v}), the length of one value vector. There is one weight per value "
            f"vector (row of values): loop over range(len(w)) = range({n_k})."
        )
    if bound == "one short":
        return (
            f"{said} Your loop stops one key short: range(len(w)) = range({n_k}) already "
            f"ends at the last key, j = {n_k - 1}; range(len(w) - 1) leaves it out."
        )
    return f"{said} Loop over every key, j in range(len(w)) = range({n_k})."


def _mix_what(description) -> str:
    return f"mix_one(w, values) for {description},"


def _mix_failed(exc, case) -> str:
    description, w, values = case
    return f"{_mix_what(description)} failed. {exc}{_mix_error_note(exc, w, values)}"


def _judge_mix(answer, got, case, messages) -> None:
    """Judge ``got`` for one of :func:`mix_cases`; ``answer`` is called again only to say which
    loop bound left terms out (:func:`_loop_bound`)."""
    description, w, values = case
    what = _mix_what(description)
    expected = weighted_values(w, values)  # (d_v,)
    n_k, d_v = values.shape
    got = as_numbers(got, what, expected.shape)
    said = f"{what} should be {short(expected)}"
    if got.shape != expected.shape:
        cause = recognised(got, _mix_mistakes(w, values), _RTOL, _ATOL) or _mix_shape_note(
            got.shape, n_k, d_v
        )
        raise Wrong(
            f"{said}, shape {expected.shape} (one number per coordinate of a value "
            f"vector), but yours has shape {got.shape}. {cause}{warned(messages)}".rstrip()
        )
    if not np.all(np.isfinite(got)):
        raise Wrong(f"{said}, but yours contains nan or inf: {short(got)}.{warned(messages)}")
    if np.allclose(got, expected, rtol=_RTOL, atol=_ATOL):
        return
    m = _first_terms(got, w, values)
    cause = (
        recognised(got, _mix_mistakes(w, values), _RTOL, _ATOL)
        or (_first_terms_reason(answer, m, n_k, d_v) if m else "")
        or _mix_diagnosis(got, w, values, expected, "w", "w[j]")
    )
    raise Wrong(
        f"{said}, but yours gave {short(got)}.{hidden_difference(got, expected)} "
        f"{_one_hot_note(w, values, 'w')}{cause}{warned(messages)}"
    )


mix_one = Exercise(
    "Exercise 5.1 (mix the values for one query)",
    Cases(
        mix_cases, _judge_mix, failed=_mix_failed, with_answer=True, fresh=mix_fresh
    ),  # answer: _loop_bound
    hints=[
        "The output is a weighted average of the value vectors: each value vector (one row of "
        "values) is scaled by its own weight, and the scaled vectors are added up. The result "
        "is as long as one value vector, one number per coordinate.",
        "Loop over the keys: start with `total = np.zeros(values.shape[1])` and, for each `j` "
        "in `range(len(w))`, add `w[j] * values[j]`. Without a loop, `w[:, None]` is the "
        "weights as a column of shape (n_k, 1): multiplying it by `values` scales each row, "
        "and `.sum(axis=0)` adds the rows up.",
        "Give `w` a second axis so each weight multiplies a whole row of `values` (`w[:, "
        "None]`), then add the rows up along `axis=0`. A single matrix product of the right "
        "shapes does the same.",
    ],
    forbidden=("attnlab.mixing",),
    id="5.1",
    attr="mix_one",
    points=1,
)


# ---------------------------------------------------------------- 5.2 every output at once
def output_fresh(rng) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """Cases drawn anew for every grading (``Cases(fresh=...)``): weights (softmax rows of
    random scores) and values with n_q, n_k and d_v all different, then square weights, then
    n_q = d_v (sizes 2 to 7)."""
    n_q, n_k, d_v = _sizes(rng, 3)
    cases = []
    for rows, keys, width in ((n_q, n_k, d_v), (n_k, n_k, d_v), (d_v, n_k, d_v)):
        weights = attnlab.softmax(rng.normal(0.0, 1.5, size=(rows, keys)))  # (rows, keys)
        values = np.round(rng.normal(0.0, 2.0, size=(keys, width)), 2)  # (keys, width)
        cases.append(
            (
                f"weights of shape {weights.shape} and values of shape {values.shape}, drawn "
                "at random",
                weights,
                values,
            )
        )
    return cases


def output_cases() -> list[tuple[str, np.ndarray, np.ndarray]]:
    """(description, weights, values) triples the checker tries.

    First the first two queries of "dog bites man", so that n_q, n_k and d_v all differ
    (2, 3, 4) and every product in the wrong order fails or changes the shape; then the
    running example, whose square weights let ``weights.T @ values`` through with the right
    shape; then the 2-D example (its query and a one-hot row), where n_q = d_v, so a
    transposed output has the right shape too.
    """
    dog = dog_bites_man()
    dog_weights = attnlab.softmax(attnlab.attention_scores(dog.q, dog.k))[:2]  # (2, 3)
    cat = cat_sat_down()
    cat_weights = attnlab.softmax(attnlab.attention_scores(cat.x @ cat.w_q, cat.x @ cat.w_k))
    cat_v = cat.x @ cat.w_v  # (4, 8)
    ex = query_and_keys_2d()
    two_d = np.stack([_scaled_row(ex.query, ex.keys), np.eye(len(ex.values))[1]])  # (2, 3)
    return [
        (
            f'the first two queries of "dog bites man" ("{dog.tokens[0]}", "{dog.tokens[1]}"): '
            f"weights of shape {dog_weights.shape} and values of shape {dog.v.shape}",
            dog_weights,
            dog.v,
        ),
        (
            f'"The cat sat down": weights of shape {cat_weights.shape} and V = X W_V of shape '
            f"{cat_v.shape}",
            cat_weights,
            cat_v,
        ),
        (
            f"the 2-D example: weights {short(two_d)} (its query's row and a one-hot row) and "
            f"values of shape {ex.values.shape}",
            two_d,
            ex.values,
        ),
    ]


def _weighted_terms(weights, values) -> np.ndarray:
    """Every weighted value vector weights[i, j]·values[j], shape (n_q, n_k, d_v)."""
    return weights[:, :, None] * values[None, :, :]  # (n_q, n_k, d_v)


_OUTPUT_MISTAKES = [
    Mistake(
        lambda weights, values: (weights @ values).T,  # (d_v, n_q)
        lambda weights, values: (
            f"Rows and columns are swapped: yours has one row per coordinate, shape "
            f"({values.shape[1]}, {len(weights)}). Row i must be query i's output: "
            "weights @ values, with no transpose (values.T @ weights.T is its transpose)."
        ),
    ),
    Mistake(
        lambda weights, values: weights.T @ values if len(weights) == len(values) else None,
        "You mixed with weights.T: column j of "
        "weights is what key j gives to every query, not one query's weights. Row i of "
        "weights is query i's mix: weights @ values.",
    ),
    Mistake(
        lambda weights, values: values @ weights if values.shape[1] == len(weights) else None,
        "You computed values @ weights: that mixes "
        "the coordinates, not the value vectors. weights @ values puts the keys in the "
        "middle, where they are added up.",
    ),
    Mistake(
        _weighted_terms,
        lambda weights, values: (
            f"These are all the weighted value vectors weights[i, j]·values[j], shape "
            f"({len(weights)}, {len(values)}, {values.shape[1]}): add them up over the keys "
            "(axis=1)."
        ),
    ),
    Mistake(
        lambda weights, values: _weighted_terms(weights, values).sum(axis=0),  # (n_k, d_v)
        lambda weights, values: (
            f"You added over the queries (axis=0), which leaves one row per "
            f"key, shape ({len(values)}, {values.shape[1]}). Add over the keys instead "
            "(axis=1): one row per query."
        ),
    ),
    Mistake(
        lambda weights, values: _weighted_terms(weights, values).sum(axis=2),  # (n_q, n_k)
        lambda weights, values: (
            "You added up the coordinates of each weighted value vector "
            f"(axis=2), which leaves shape ({len(weights)}, {len(values)}). Add over the keys "
            "instead (axis=1)."
        ),
    ),
    Mistake(
        lambda weights, values: weights,
        "You returned the weights unchanged. They say how much of each value vector "
        "each query takes; the outputs are those mixes: weights @ values.",
    ),
    Mistake(
        lambda weights, values: (weights @ values)[0],  # (d_v,)
        lambda weights, values: (
            f"That is the output of the first query only. Return one row for each of the "
            f"{len(weights)} queries, shape ({len(weights)}, {values.shape[1]})."
        ),
    ),
    Mistake(
        lambda weights, values: (weights @ values).sum(axis=0),  # (d_v,)
        lambda weights, values: (
            f"You added the outputs of all {len(weights)} queries into one vector. Keep "
            f"one row per query, shape ({len(weights)}, {values.shape[1]})."
        ),
    ),
    Mistake(
        lambda weights, values: np.tile(values.mean(axis=0), (len(weights), 1)),
        lambda weights, values: (
            f"Every row of yours is the plain mean of the {len(values)} value vectors, the "
            f"output of uniform weights 1/{len(values)}. Use each query's own weights."
        ),
    ),
    Mistake(
        lambda weights, values: np.tile(values.sum(axis=0), (len(weights), 1)),
        "Every row of yours is the sum of the value "
        "vectors, unweighted. Scale values[j] by weights[i, j] for query i.",
    ),
    Mistake(
        lambda weights, values: attnlab.softmax(weights) @ values,
        "You put the weights through softmax again. They "
        "are softmax output already (rows adding up to 1): use them as they are.",
    ),
    Mistake(
        lambda weights, values: values[np.argmax(weights, axis=1)],
        "Each row of yours is the value vector of that "
        "query's largest weight alone. Attention mixes all of them: every values[j] counts, "
        "in proportion to weights[i, j].",
    ),
]


def _output_mistakes(weights, values) -> list[tuple[np.ndarray | None, str]]:
    """(what each known mistake returns for ``weights`` and ``values``, what to say about it)."""
    return [(m.output(weights, values), m.why(weights, values)) for m in _OUTPUT_MISTAKES]


def _output_shape_note(shape, n_q, n_k, d_v) -> str:
    if shape == (d_v, n_q):
        return (
            "Rows and columns are swapped: row i must be query i's output, so use "
            "weights @ values with no transpose."
        )
    if shape == (n_q, n_k):
        return (
            "That is the shape of the weights; the output has one row per query and one "
            "column per coordinate of a value vector."
        )
    if shape == (n_k, d_v):
        return "That is the shape of values, one row per key; the output has one row per query."
    if shape == (d_v,):
        return f"That is one vector; the output has one for each of the {n_q} queries."
    return ""


def _output_error_note(exc, weights, values) -> str:
    """Advice for a numpy error raised by the learner's function (shapes that do not fit)."""
    n_q, n_k = weights.shape
    d_v = values.shape[1]
    cause = exc.__cause__
    sizes = (
        f"\nweights has shape {weights.shape}: {n_q} queries × {n_k} keys. values has "
        f"shape {values.shape}: {n_k} keys × {d_v} coordinates."
    )
    if isinstance(cause, IndexError):
        return (
            f"{sizes} A loop over the queries runs over range(len(weights)) = range({n_q}); "
            f"inside it, over the keys, range({n_k})."
        )
    if not isinstance(cause, ValueError):
        return ""
    product = (
        f" Each output adds over the keys, so the keys must be the inner size of the "
        f"product: weights @ values, ({n_q}, {n_k}) @ ({n_k}, {d_v}) → ({n_q}, {d_v})."
    )
    if "broadcast" in str(cause):
        return (
            f"{sizes} weights * values multiplies entry by entry, which needs shapes that "
            f"line up; the matrix product @ multiplies and adds over the keys in one "
            f"go.{product}"
        )
    if "matmul" in str(cause) or "aligned" in str(cause):
        return f"{sizes}{_inner_sizes(str(cause), n_q, n_k, d_v)}{product}"
    return ""


def _inner_sizes(error: str, n_q: int, n_k: int, d_v: int) -> str:
    """What the two sizes a failed matrix product put side by side stand for.

    numpy names them in its message: matmul says ``(size R is different from L)`` and np.dot
    ``L (dim 1) != R (dim 0)``, where L is the last size of the left factor and R the first
    of the right one. Said only when n_q, n_k and d_v all differ (else a size is ambiguous).
    """
    if len({n_q, n_k, d_v}) < 3:
        return ""
    found = re.search(r"size (\d+) is different from (\d+)", error)
    if found:
        right, left = (int(size) for size in found.groups())
    else:
        found = re.search(r"(\d+) \(dim \d+\) != (\d+) \(dim \d+\)", error)
        if not found:
            return ""
        left, right = (int(size) for size in found.groups())
    names = {n_q: "the queries", n_k: "the keys", d_v: "the coordinates"}
    if left not in names or right not in names:
        return ""
    return (
        f" Your product put {left} ({names[left]}) on the left against {right} "
        f"({names[right]}) on the right, and a matrix product needs those inner sizes to "
        "be equal."
    )


def _output_what(description) -> str:
    return f"attention_output(weights, values) for {description},"


def _output_failed(exc, case) -> str:
    description, weights, values = case
    return f"{_output_what(description)} failed. {exc}{_output_error_note(exc, weights, values)}"


def _output_screen(got, expected, what, messages, weights, values) -> None:
    """The sentences of 5.2 for an answer of another shape (a known mistake, else what the
    shape is) or with nan or inf."""
    got = np.asarray(got, dtype=float)
    (n_q, n_k), d_v = weights.shape, values.shape[1]
    if got.shape != expected.shape:
        cause = named_mistake(
            got, _OUTPUT_MISTAKES, (weights, values), _RTOL, _ATOL
        ) or _output_shape_note(got.shape, n_q, n_k, d_v)
        raise Wrong(
            f"{what} should have shape {expected.shape}, one row per query, but yours has "
            f"shape {got.shape}. {cause}{warned(messages)}".rstrip()
        )
    if not np.all(np.isfinite(got)):
        raise Wrong(
            f"{what} should be {short(expected)}, but yours contains nan or inf: "
            f"{short(got)}.{warned(messages)}"
        )


def _output_row(got, expected, messages, weights, values) -> str:
    """The cause when no known mistake matches: the first wrong row, diagnosed as a mix."""
    i = next(
        i for i in range(len(got)) if not np.allclose(got[i], expected[i], rtol=_RTOL, atol=_ATOL)
    )
    name = f"weights[{i}]"
    diagnosis = _mix_diagnosis(got[i], weights[i], values, expected[i], name, f"weights[{i}, j]")
    return (
        f"Row {i} (query {i}'s output) should be {short(expected[i])}, but yours is "
        f"{short(got[i])}. {_one_hot_note(weights[i], values, name)}{diagnosis}"
    )


_judge_output = Compared(
    weighted_values,
    lambda description, weights, values: _output_what(description),
    _OUTPUT_MISTAKES,
    tolerance=lambda got, weights, values: (_RTOL, _ATOL),
    check=lambda got, expected, what, *arguments: as_numbers(got, what, expected.shape),
    screen=_output_screen,
    after=_output_row,
    joiner=". ",
    hidden=True,
    warned=True,
    arguments=lambda case: case[1:],  # (description, weights, values)
)


attention_output = Exercise(
    "Exercise 5.2 (every output at once)",
    Cases(output_cases, _judge_output, failed=_output_failed, fresh=output_fresh),
    hints=[
        "Row i of the output is what you computed in exercise 5.1 for query i: its row of "
        "weights mixing the value vectors. Doing every row at once is one matrix product — "
        "which factor goes first, and does anything need turning on its side?",
        "Write the shapes down: weights is (n_q, n_k), values is (n_k, d_v). In `A @ B` the "
        "last size of A must equal the first size of B, and that size is added over and "
        "disappears. The keys are what each output adds over, so they go in the middle.",
        "One matrix product: weights (n_q, n_k) times values (n_k, d_v). Which order, and does "
        "anything need a transpose?",
    ],
    forbidden=("attnlab.mixing",),
    id="5.2",
    attr="attention_output",
    points=1,
)


# ---------------------------------------------------------------- 5.3 the box of the outputs
def box_cases() -> list[tuple[str, np.ndarray]]:
    """(description, values) pairs the checker tries: the 2-D example's three values, those of
    "dog bites man" (3, 4), and the running example's V = X W_V (4, 8)."""
    ex = query_and_keys_2d()
    dog = dog_bites_man()
    cat = cat_sat_down()
    cat_v = cat.x @ cat.w_v  # (4, 8)
    return [
        (f"the 2-D example's values {short(ex.values)}, shape {ex.values.shape}", ex.values),
        (f'the values of "dog bites man", shape {dog.v.shape}', dog.v),
        (f'V = X W_V of "The cat sat down", shape {cat_v.shape}', cat_v),
        # Every coordinate well away from 0, so a box stretched to take in the origin fails.
        (
            f"the 2-D example's values moved by [3, 2], {short(ex.values + [3.0, 2.0])}",
            ex.values + [3.0, 2.0],
        ),
    ]


def box_fresh(rng) -> list[tuple[str, np.ndarray]]:
    """Values drawn anew for every grading (``Cases(fresh=...)``): n_k ≠ d_v (2 to 7), then
    values whose every coordinate is 2 or more away from 0, on either side."""
    n_k, d_v = _sizes(rng, 2)
    values = np.round(rng.normal(0.0, 2.0, size=(n_k, d_v)), 2)  # (n_k, d_v)
    away = rng.uniform(0.0, 3.0, size=(d_v, n_k)) + 2.0  # (d_v, n_k) values of n_k coordinates
    away = np.round(away * rng.choice([-1.0, 1.0], size=n_k), 2)  # each column on one side
    return [
        (f"values of shape {values.shape}, {short(values)}", values),
        (f"values of shape {away.shape} away from 0, {short(away)}", away),
    ]


def _box_mistakes(values) -> list[tuple[object, object, str]]:
    """(low, high, what to say) of known mistakes; a number stands for every coordinate."""
    n_k, d_v = values.shape
    norms = np.linalg.norm(values, axis=1)  # (n_k,)
    lengths = (
        "Those are the lengths (norms) of the value vectors. The bounds go coordinate "
        "by coordinate: the smallest and the largest entry of each column of values."
    )
    zero_one = (
        "0 and 1 bound the weights, not the outputs. The outputs are mixes of the "
        "value vectors, so their bounds come from the values: the smallest and the "
        "largest entry of each column."
    )
    return [
        (
            np.minimum(values.min(axis=0), 0),
            np.maximum(values.max(axis=0), 0),
            "Your box "
            "always reaches 0. The origin is not special: an output is a mix of the value "
            "vectors only, so the box is just the smallest and largest entry of each column.",
        ),
        (
            values.min(axis=1),
            values.max(axis=1),
            "You took the min and max of each value "
            f"vector (axis=1), one pair per key, {n_k} of them. The bounds are per coordinate, "
            f"over the value vectors: down each column, axis=0, {d_v} of them.",
        ),
        (
            values.min(),
            values.max(),
            "You took one min and one max over all the entries. "
            "Each coordinate has its own range: take them down each column, axis=0.",
        ),
        (
            values.max(axis=0),
            values.min(axis=0),
            "low and high are swapped: low is the "
            "smallest entry of each column (min), high the largest (max).",
        ),
        (norms.min(), norms.max(), lengths),
        (0.0, norms.max(), lengths),
        (-norms.max(), norms.max(), lengths),
        (0.0, 1.0, zero_one),
        (
            np.minimum(values, 0).sum(axis=0),
            np.maximum(values, 0).sum(axis=0),
            "You let each "
            "weight move between 0 and 1 on its own, so the negative entries all add up for low "
            "and the positive ones for high. But the weights add up to 1 together: more weight "
            "on one value vector is less on the others. The extremes are single value vectors, "
            "reached by one-hot weights.",
        ),
        (
            0.0,
            values.sum(axis=0),
            "high is the sum of the value vectors: that would need every "
            "weight to be 1 at once. The weights add up to 1, so an output is an average, never "
            "larger than the largest value vector's coordinate.",
        ),
        (
            values.mean(axis=0) - values.std(axis=0),
            values.mean(axis=0) + values.std(axis=0),
            "mean ± standard deviation says where the values typically are, not how far the "
            "outputs can go: take the smallest and the largest entry of each column.",
        ),
        (
            values.argmin(axis=0),
            values.argmax(axis=0),
            "Those are the positions of the "
            "extremes (np.argmin, np.argmax), which value vector holds them; return the "
            "extremes themselves, values.min(axis=0) and values.max(axis=0).",
        ),
    ]


def _matches(got: np.ndarray, wrong, d_v: int) -> bool:
    wrong = np.asarray(wrong, dtype=float)
    if wrong.ndim == 0 and got.shape == (d_v,):  # a number filled into every coordinate
        return bool(np.allclose(got, wrong, rtol=_RTOL, atol=_ATOL))
    return _same(got, wrong)


def _shown(x: np.ndarray) -> str:
    """An array as short shows it, a single number as 4 significant digits."""
    return f"{float(x):.4g}" if np.ndim(x) == 0 else short(x)


def _box_mistake(low, high, values) -> str:
    """The reason of the first known mistake whose (low, high) the learner's pair equals, or ''."""
    d_v = values.shape[1]
    return next(
        (
            reason
            for wrong_low, wrong_high, reason in _box_mistakes(values)
            if _matches(low, wrong_low, d_v) and _matches(high, wrong_high, d_v)
        ),
        "",
    )


def _as_box(got, what, values) -> tuple[np.ndarray, np.ndarray]:
    """The learner's (low, high): a pair of arrays, or an array of two rows."""
    d_v = values.shape[1]
    shape = f"({d_v},)"
    pair = f"two arrays, (low, high), of shape {shape} each"
    if isinstance(got, np.ndarray):
        if got.shape == (d_v, 2) and d_v != 2:
            raise Wrong(
                f"{what} should be {pair}, but yours is one array of shape {got.shape}, "
                "a (low, high) pair per coordinate. Return them separately: "
                "return low, high."
            )
        if (
            got.ndim == 1
            and got.dtype.kind in "fiub"
            and not (len(got) == 2 and _box_mistake(got[0], got[1], values))
        ):
            raise Wrong(
                f"{what} should be {pair}, but yours is one array of shape {got.shape}: "
                f"{short(got)}. Return both: return low, high."
            )
        if got.ndim == 0 or len(got) != 2:
            raise Wrong(f"{what} should be {pair}; yours is an array of shape {got.shape}.")
    elif isinstance(got, (tuple, list)):
        if len(got) != 2:
            raise Wrong(
                f"{what} should be {pair}, but yours has {len(got)} items: {one_line(got)}."
            )
    else:
        raise Wrong(f"{what} should be {pair}; got {one_line(got)}.")
    low = as_numbers(got[0], f"{what} low", shape)
    high = as_numbers(got[1], f"{what} high", shape)
    return low, high


def _box_diagnosis(low, high, values, expected_low, expected_high) -> str:
    """Why a box of the right shape is not the tightest box around the outputs."""
    for got, expected, side, extreme in (
        (low, expected_low, "low", np.argmin),
        (high, expected_high, "high", np.argmax),
    ):
        wrong = np.flatnonzero(~np.isclose(got, expected, rtol=_RTOL, atol=_ATOL))
        if not wrong.size:
            continue
        c = int(wrong[0])
        j = int(extreme(values[:, c]))
        inside = got[c] > expected[c] if side == "low" else got[c] < expected[c]
        if inside:
            return (
                f"Your {side}[{c}] = {got[c]:.4g} leaves out value vector {j}, whose "
                f"coordinate {c} is {values[j, c]:.4g}; yet values[{j}] is itself an "
                f"output, when key {j} gets all the weight (a one-hot row). {side}[{c}] "
                f"must be the {'smallest' if side == 'low' else 'largest'} coordinate {c} "
                "over all the value vectors."
            )
        return (
            f"Your {side}[{c}] = {got[c]:.4g} is beyond every value vector's coordinate "
            f"{c} (the {'smallest' if side == 'low' else 'largest'} is {expected[c]:.4g}). "
            "No weighted average with weights ≥ 0 that add up to 1 gets there: the box "
            "must be the tightest one, from the values themselves."
        )
    return ""


def _box_what(description) -> str:
    return f"output_box(values) for {description},"


def _judge_box(got, case, messages) -> None:
    """Judge ``got`` for one of :func:`box_cases`."""
    description, values = case
    what = _box_what(description)
    d_v = values.shape[1]
    expected_low, expected_high = coordinate_bounds(values)  # (d_v,) each
    low, high = _as_box(got, what, values)
    if _matches(low, expected_low, d_v) and _matches(high, expected_high, d_v):
        return
    said = (
        f"{what} low should be {short(expected_low)} and high "
        f"{short(expected_high)}, but yours gave low = {_shown(low)} and high = "
        f"{_shown(high)}."
    )
    if (
        isinstance(got, np.ndarray)
        and got.shape == (2, 2)
        and d_v == 2
        and _same(got.T, np.stack([expected_low, expected_high]))
    ):
        raise Wrong(
            f"{said} Your array holds a (low, high) pair per coordinate, one row "
            "each. Return low and high separately: return low, high."
        )
    cause = _box_mistake(low, high, values)
    if not cause and (low.shape != (d_v,) or high.shape != (d_v,)):
        cause = (
            f"low and high should each have shape ({d_v},), one number per coordinate "
            f"of a value vector; yours have shapes {low.shape} and {high.shape}."
        )
    if not cause and not (np.all(np.isfinite(low)) and np.all(np.isfinite(high))):
        cause = "The bounds are entries of values, always finite numbers."
    if not cause:
        cause = _box_diagnosis(low, high, values, expected_low, expected_high)
    raise Wrong(f"{said} {cause}{warned(messages)}".rstrip())


output_box = Exercise(
    "Exercise 5.3 (the box every output lies in)",
    Cases(box_cases, _judge_box, what=lambda case: _box_what(case[0]), fresh=box_fresh),
    hints=[
        "Every output is a weighted average of the value vectors, with weights that are "
        "never negative and add up to 1. Can an average be larger than the largest thing it "
        "averages? Look at one coordinate at a time.",
        "For one coordinate (one column of values), the largest output puts all the weight "
        "on the value vector with the largest entry in that column: a one-hot row. So the "
        "bounds are the minimum and the maximum down each column, `axis=0`.",
        "Return two arrays: the smallest entry of each column of `values` and the largest entry "
        "of each column (`axis=0` runs down the columns).",
    ],
    forbidden=("attnlab.mixing",),
    id="5.3",
    attr="output_box",
    points=1,
)
