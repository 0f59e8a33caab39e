"""Lesson 5 checks: each rejects known-wrong answers with a helpful reason, accepts right ones."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
import worked_answers as W
from answer_tables import Answers, accept_reject, assert_hints_climb, judged

import attnlab
from attnlab.examples import cat_sat_down, dog_bites_man, query_and_keys_2d
from attnlab.exercises import lesson5 as L
from attnlab.exercises.kit.display import short
from attnlab.mixing import coordinate_bounds, weighted_values


# ---------------------------------------------------------------- 5.1 mix the values, one query
def mix_python_lists(w, values):
    d_v = len(values[0])
    return [sum(w[j] * values[j][d] for j in range(len(w))) for d in range(d_v)]


def mix_running_total(w, values):
    total = 0
    for j in range(len(w)):
        total = total + w[j] * values[j]
    return total


def mix_over_coordinates(w, values):
    """Loop over the keys: range(values.shape[1]) counts coordinates instead."""
    return sum(w[j] * values[j] for j in range(values.shape[1]))


def mix_stops_early(w, values):
    total = np.zeros(values.shape[1])
    for j in range(len(w) - 1):
        total += w[j] * values[j]
    return total


def mix_total_per_key(w, values):
    total = np.zeros(len(w))  # one entry per key: the wrong length
    for j in range(len(w)):
        total += w[j] * values[j]
    return total


def mix_mutates(w, values):
    values *= w[:, None]
    return values.sum(axis=0)


MIX_RIGHT = {
    "reference loop": W.solution_mix_one,
    "broadcasting": lambda w, values: (w[:, None] * values).sum(axis=0),
    "w @ values": lambda w, values: w @ values,
    "values.T @ w": lambda w, values: values.T @ w,
    "einsum": lambda w, values: np.einsum("j,jd->d", w, values),
    "rows of values.T": lambda w, values: (w * values.T).sum(axis=1),
    "python lists": mix_python_lists,
    "running total from 0": mix_running_total,
    "np.average": lambda w, values: np.average(values, axis=0, weights=w),
    "in float32": lambda w, values: w.astype(np.float32) @ values.astype(np.float32),
    "a list": lambda w, values: (w @ values).tolist(),
}
MIX_WRONG = {
    "attnlab's own": (weighted_values, "asks you not to use"),
    # one product written three ways (w @ values.T is values @ w): the same advice
    "values @ w": (lambda w, values: values @ w, "values @ w and w @ values.T put the"),
    "w @ values.T": (lambda w, values: w @ values.T, "values @ w and w @ values.T put the"),
    "np.dot(values, w)": (
        lambda w, values: np.dot(values, w),
        "values @ w and w @ values.T put the",
    ),
    "w * values": (lambda w, values: (w * values).sum(axis=0), "w[:, None] of shape (3, 1)"),
    "total of length n_k": (mix_total_per_key, "not np.zeros(len(w))"),
    "not added up": (lambda w, values: w[:, None] * values, "the right pieces"),
    "not added up, transposed": (lambda w, values: w * values.T, "as columns"),
    "added along each vector": (
        lambda w, values: (w[:, None] * values).sum(axis=1),
        "coordinates of each weighted value vector (axis=1)",
    ),
    "everything added": (lambda w, values: np.sum(w[:, None] * values), "into one number"),
    "mean of the terms": (
        lambda w, values: (w[:, None] * values).mean(axis=0),
        "divides by 3 once more",
    ),
    "values without weights": (lambda w, values: values.sum(axis=0), "without weighting"),
    "plain mean": (lambda w, values: values.mean(axis=0), "plain mean of the 3 value vectors"),
    "softmax again": (lambda w, values: attnlab.softmax(w) @ values, "through softmax again"),
    "reversed pairing": (lambda w, values: w[::-1] @ values, "reverse order"),
    "largest weight only": (
        lambda w, values: values[np.argmax(w)],
        "largest weight alone, values[0]",
    ),
    "keepdims": (lambda w, values: w[None, :] @ values, "drop the extra axis"),
    "the weights": (lambda w, values: w, "returned the weights themselves"),
    "loop over coordinates": (mix_over_coordinates, "runs over the coordinates"),
    "loop stops early": (mix_stops_early, "stops one key short"),
    "doubled": (lambda w, values: 2 * (w @ values), "2 times the right output"),
    "exp of the weights": (lambda w, values: np.exp(w) @ values, "never leaves that range"),
    "squared weights": (lambda w, values: (w**2) @ values, "Check the formula"),
    "all zeros": (lambda w, values: np.zeros(values.shape[1]), "all zeros"),
    "divided by zero": (lambda w, values: (w / 0.0) @ values, "numpy warned: divide by zero"),
    "forgot return": (lambda w, values: None, "forget `return`"),
    "mutates values": (mix_mutates, "changed its input"),
}


def test_mix_cases_are_the_lessons_examples():
    cases = L.mix_cases()
    ex, dog, cat = query_and_keys_2d(), dog_bites_man(), cat_sat_down()
    _, w, values = cases[0]
    scores = attnlab.attention_scores(ex.query[None, :], ex.keys)
    np.testing.assert_allclose(w, attnlab.softmax(scores)[0])
    np.testing.assert_array_equal(values, ex.values)
    assert any(v.shape == dog.v.shape and np.array_equal(v, dog.v) for _, _, v in cases)
    assert any(v.shape == (4, 8) and np.allclose(v, cat.x @ cat.w_v) for _, _, v in cases)
    assert any(np.array_equal(np.sort(w), [0.0] * (len(w) - 1) + [1.0]) for _, w, _ in cases)
    for _, w, values in cases:
        assert values.shape[0] != values.shape[1] and w.shape == (values.shape[0],)
        assert np.isclose(w.sum(), 1.0) and np.all(w >= 0)


def test_known_mix_mistakes_differ_on_the_first_case():
    """Each recognised mistake returns something else than the right output and than every
    mistake listed before it, so its reason is the one the learner reads."""
    _, w, values = L.mix_cases()[0]
    expected = weighted_values(w, values)
    seen = [expected]
    for wrong_output, reason in L._mix_mistakes(w, values):
        if wrong_output is None:
            continue
        assert not any(L._same(np.asarray(wrong_output, dtype=float), s) for s in seen), reason
        seen.append(np.asarray(wrong_output, dtype=float))


def test_a_one_hot_row_must_give_its_value_vector():
    def smoothed_on_one_hot(w, values):
        return values.mean(axis=0) if np.isclose(w.max(), 1.0) else w @ values

    _, w, values = next(case for case in L.mix_cases() if np.isclose(case[1].max(), 1.0))
    j = int(np.argmax(w))
    message = judged(L.mix_one, smoothed_on_one_hot).message
    assert f"the output must be values[{j}] = {short(values[j])} itself" in message
    assert "plain mean" in message


def test_a_mix_with_other_weights_is_named_with_those_weights():
    """Independent value vectors (dog, d_v > n_k) let the check say which weights were used."""
    dog = dog_bites_man()

    def squared_on_dog(w, values):
        return (w**2) @ values if values.shape == dog.v.shape else w @ values

    _, w, values = next(c for c in L.mix_cases() if c[2].shape == dog.v.shape)
    message = judged(L.mix_one, squared_on_dog).message
    assert f"u = {short(np.round(w**2, 4))}, which add up to {np.sum(w**2):.4g}" in message
    assert f"w = {short(np.round(w, 4))}, which add up to 1" in message


def test_an_index_error_in_the_loop_is_explained_with_the_sizes():
    """Looping over the coordinates fails with IndexError once d_v > n_k (dog: 3 keys, 4)."""

    def over_coordinates_when_wider(w, values):
        if len(w) < values.shape[1]:
            return sum(w[d] * values[d] for d in range(values.shape[1]))
        return w @ values

    dog = dog_bites_man()
    message = judged(L.mix_one, over_coordinates_when_wider).message
    assert "IndexError" in message
    assert f"w has {dog.v.shape[0]} weights, one per value vector" in message
    assert f"d_v = values.shape[1] = {dog.v.shape[1]}" in message


# ---------------------------------------------------------------- 5.2 every output at once
def output_loops(weights, values):
    n_q, n_k = np.shape(weights)
    d_v = np.shape(values)[1]
    out = [[0.0] * d_v for _ in range(n_q)]
    for i in range(n_q):
        for j in range(n_k):
            for d in range(d_v):
                out[i][d] += weights[i][j] * values[j][d]
    return out


def output_last_row_missing(weights, values):
    out = np.zeros((len(weights), values.shape[1]))
    for i in range(len(weights) - 1):
        out[i] = weights[i] @ values
    return out


OUTPUT_RIGHT = {
    "reference": W.solution_attention_output,
    "einsum": lambda weights, values: np.einsum("qk,kd->qd", weights, values),
    "row by row": lambda weights, values: np.array([w_i @ values for w_i in weights]),
    "broadcasting": lambda weights, values: (weights[:, :, None] * values[None]).sum(axis=1),
    "transpose of the transpose": lambda weights, values: (values.T @ weights.T).T,
    "reference 5.1 on each row": lambda weights, values: np.stack(
        [W.solution_mix_one(w, values) for w in weights]
    ),
    "three loops": output_loops,
    "np.dot": lambda weights, values: np.dot(weights, values),
    "in float32": lambda weights, values: weights.astype(np.float32) @ values.astype(np.float32),
    "a list of lists": lambda weights, values: (weights @ values).tolist(),
    "batch-ready einsum": lambda weights, values: np.einsum("...qk,...kd->...qd", weights, values),
}
OUTPUT_WRONG = {
    "attnlab's own": (weighted_values, "asks you not to use"),
    "values @ weights": (
        lambda weights, values: values @ weights,
        "put 4 (the coordinates) on the left against 2 (the queries) on the right",
    ),
    "np.dot(values, weights)": (  # np.dot words its error differently from @
        lambda weights, values: np.dot(values, weights),
        "put 4 (the coordinates) on the left against 2 (the queries) on the right",
    ),
    "weights.T @ values": (
        lambda weights, values: weights.T @ values,
        "put 2 (the queries) on the left against 3 (the keys) on the right",
    ),
    "weights * values": (lambda weights, values: weights * values, "multiplies entry by entry"),
    "weights @ values.T": (
        lambda weights, values: weights @ values.T,
        "put 3 (the keys) on the left against 4 (the coordinates) on the right",
    ),
    "transposed output": (
        lambda weights, values: values.T @ weights.T,
        "yours has one row per coordinate, shape (4, 2)",
    ),
    "einsum, transposed": (
        lambda weights, values: np.einsum("qk,kd->dq", weights, values),
        "yours has one row per coordinate, shape (4, 2)",
    ),
    "not added up": (
        lambda weights, values: weights[:, :, None] * values[None],
        "shape (2, 3, 4): add them up over the keys (axis=1)",
    ),
    "added over the queries": (
        lambda weights, values: (weights[:, :, None] * values[None]).sum(axis=0),
        "added over the queries (axis=0)",
    ),
    "added over the coordinates": (
        lambda weights, values: (weights[:, :, None] * values[None]).sum(axis=2),
        "coordinates of each weighted value vector (axis=2)",
    ),
    "the weights": (lambda weights, values: weights, "returned the weights unchanged"),
    "first query only": (lambda weights, values: weights[0] @ values, "first query only"),
    "all queries added": (
        lambda weights, values: (weights @ values).sum(axis=0),
        "outputs of all 2 queries into one vector",
    ),
    "uniform mean": (
        lambda weights, values: np.tile(values.mean(axis=0), (len(weights), 1)),
        "plain mean of the 3 value vectors",
    ),
    "sum of the values": (
        lambda weights, values: np.tile(values.sum(axis=0), (len(weights), 1)),
        "sum of the value vectors, unweighted",
    ),
    "softmax again": (
        lambda weights, values: attnlab.softmax(weights) @ values,
        "through softmax again",
    ),
    "hard attention": (
        lambda weights, values: values[np.argmax(weights, axis=1)],
        "that query's largest weight alone",
    ),
    "loop over the keys as queries": (
        lambda weights, values: np.array([weights[i] @ values for i in range(len(values))]),
        "range(len(weights)) = range(2); inside it, over the keys, range(3)",
    ),
    "weights.T where it fits": (
        lambda weights, values: (
            weights.T @ values if len(weights) == len(values) else weights @ values
        ),
        "You mixed with weights.T",
    ),
    "transposed where the shape allows": (
        lambda weights, values: (
            (weights @ values).T if len(weights) == values.shape[1] else weights @ values
        ),
        "yours has one row per coordinate, shape (2, 2)",
    ),
    "last row missing": (output_last_row_missing, "Row 1 (query 1's output)"),
    "squared weights": (
        lambda weights, values: (weights**2) @ values,
        "Yours is the mix Σ_j u[j]·values[j]",
    ),
    "doubled": (lambda weights, values: 2 * weights @ values, "2 times the right output"),
    "a ragged list": (
        lambda weights, values: [list(r) for r in weights @ values] + [[1.0]],
        "should be an array of numbers of shape (2, 4)",
    ),
}


def test_output_cases_make_every_product_in_the_wrong_order_fail_first():
    cases = L.output_cases()
    _, weights, values = cases[0]
    n_q, n_k = weights.shape
    assert len({n_q, n_k, values.shape[1]}) == 3
    for wrong_product in (
        lambda: values @ weights,
        lambda: weights.T @ values,
        lambda: weights * values,
        lambda: weights @ values.T,
    ):
        with pytest.raises(ValueError):
            wrong_product()
    assert any(w.shape[0] == w.shape[1] for _, w, _ in cases)  # weights.T @ values fits
    assert any(w.shape[0] == v.shape[1] for _, w, v in cases)  # a transpose fits
    for _, weights, values in cases:
        np.testing.assert_allclose(weights.sum(axis=1), 1.0)
        assert weights.shape[1] == values.shape[0]


def test_output_cases_are_the_lessons_examples():
    dog, cat, ex = dog_bites_man(), cat_sat_down(), query_and_keys_2d()
    (_, w_dog, v_dog), (_, w_cat, v_cat), (_, w_2d, v_2d) = L.output_cases()
    np.testing.assert_allclose(w_dog, attnlab.softmax(attnlab.attention_scores(dog.q, dog.k))[:2])
    np.testing.assert_array_equal(v_dog, dog.v)
    q, k = cat.x @ cat.w_q, cat.x @ cat.w_k
    np.testing.assert_allclose(w_cat, attnlab.softmax(attnlab.attention_scores(q, k)))
    np.testing.assert_allclose(v_cat, cat.x @ cat.w_v)
    np.testing.assert_array_equal(v_2d, ex.values)
    assert np.array_equal(w_2d[1], np.eye(3)[1])


def test_every_known_output_mistake_is_reachable():
    """Each recognised mistake, on some case, differs from the right output and from every
    mistake listed before it."""
    cases = L.output_cases()
    reasons = [reason for _, reason in L._output_mistakes(*cases[0][1:])]
    for k, reason in enumerate(reasons):

        def told_apart(weights, values, k=k):
            mistakes = L._output_mistakes(weights, values)
            mine = mistakes[k][0]
            if mine is None:
                return False
            mine = np.asarray(mine, dtype=float)
            earlier = [weights @ values] + [m for m, _ in mistakes[:k] if m is not None]
            return not any(L._same(mine, np.asarray(e, dtype=float)) for e in earlier)

        assert any(told_apart(w, v) for _, w, v in cases), reason


def test_shape_errors_name_both_shapes():
    _, weights, values = L.output_cases()[0]
    n_q, n_k = weights.shape
    d_v = values.shape[1]
    for answer in (
        lambda w, v: v @ w,
        lambda w, v: w * v,
        lambda w, v: w @ v.T,
        lambda w, v: w @ np.ones((7, 1)),
    ):
        message = judged(L.attention_output, answer).message
        assert f"weights has shape {weights.shape}" in message
        assert f"values has shape {values.shape}" in message
        assert f"({n_q}, {n_k}) @ ({n_k}, {d_v}) → ({n_q}, {d_v})" in message


def test_sizes_that_mean_nothing_here_are_not_named():
    """A product of the weights with some other matrix: its size 7 is no query, key or
    coordinate, so the check does not guess what it stands for."""
    message = judged(L.attention_output, lambda w, v: w @ np.ones((7, 1))).message
    assert "ValueError" in message and "Your product put" not in message


# ---------------------------------------------------------------- 5.3 the box of the outputs
def box_loops(values):
    columns = list(zip(*values, strict=True))  # one tuple per coordinate
    return [min(c) for c in columns], [max(c) for c in columns]


def box_columns_when_wide(values):
    low, high = values.min(axis=0), values.max(axis=0)
    return np.stack([low, high], axis=1) if values.shape[1] != 2 else (low, high)


def box_sorts_in_place(values):
    values.sort(axis=0)
    return values[0], values[-1]


def norms(values):
    return np.linalg.norm(values, axis=1)


BOX_RIGHT = {
    "reference": W.solution_output_box,
    "np.min, np.max": lambda values: (np.min(values, axis=0), np.max(values, axis=0)),
    "loops": box_loops,
    "sorted columns": lambda values: np.sort(values, axis=0)[[0, -1]],
    "percentiles": lambda values: np.percentile(values, [0, 100], axis=0),
    "low plus range": lambda values: (values.min(0), values.min(0) + np.ptp(values, axis=0)),
    "in float32": lambda values: tuple(
        x.astype(np.float32) for x in (values.min(0), values.max(0))
    ),
    "lists": lambda values: [values.min(0).tolist(), values.max(0).tolist()],
}
BOX_WRONG = {
    "attnlab's own": (coordinate_bounds, "asks you not to use"),
    "box through the origin": (
        lambda v: (np.minimum(v.min(axis=0), 0), np.maximum(v.max(axis=0), 0)),
        "The origin is not special",
    ),
    "axis=1": (lambda v: (v.min(axis=1), v.max(axis=1)), "one pair per key"),
    "global min and max": (lambda v: (v.min(), v.max()), "one min and one max over all"),
    "global, filled in": (
        lambda v: (np.full(v.shape[1], v.min()), np.full(v.shape[1], v.max())),
        "one min and one max over all",
    ),
    "swapped": (lambda v: (v.max(axis=0), v.min(axis=0)), "low and high are swapped"),
    "norms": (lambda v: (norms(v).min(), norms(v).max()), "lengths (norms)"),
    "± the largest norm": (lambda v: (-norms(v).max(), norms(v).max()), "lengths (norms)"),
    "0 and 1": (lambda v: (0, 1), "bound the weights, not the outputs"),
    "zeros and ones": (
        lambda v: (np.zeros(v.shape[1]), np.ones(v.shape[1])),
        "bound the weights, not the outputs",
    ),
    "each weight on its own": (
        lambda v: (np.minimum(v, 0).sum(axis=0), np.maximum(v, 0).sum(axis=0)),
        "move between 0 and 1 on its own",
    ),
    "sum of the values": (lambda v: (0, v.sum(axis=0)), "every weight to be 1 at once"),
    "mean ± std": (
        lambda v: (v.mean(0) - v.std(0), v.mean(0) + v.std(0)),
        "mean ± standard deviation",
    ),
    "argmin, argmax": (lambda v: (v.argmin(0), v.argmax(0)), "positions of the extremes"),
    "only low": (lambda v: v.min(axis=0), "one array of shape (2,)"),
    "pairs per coordinate": (
        lambda v: np.stack([v.min(0), v.max(0)], axis=1),
        "a (low, high) pair per coordinate, one row each",
    ),
    "pairs per coordinate, wide": (box_columns_when_wide, "is one array of shape (4, 2)"),
    "a dict": (lambda v: {"low": v.min(0), "high": v.max(0)}, "; got {'low'"),
    "three things": (lambda v: (v.min(0), v.max(0), 0), "has 3 items"),
    "a ragged pair": (lambda v: ([1.0, [2.0]], v.max(0)), "low should be an array of numbers"),
    "low too high": (lambda v: (v.min(0) + 0.1, v.max(0)), "leaves out value vector 2"),
    "high too high": (lambda v: (v.min(0), v.max(0) + 0.1), "beyond every value vector's"),
    "first and last vector": (lambda v: (v[0], v[-1]), "leaves out value vector 2"),
    "nan": (lambda v: (v.min(0) * np.nan, v.max(0)), "always finite numbers"),
    "sorts values in place": (box_sorts_in_place, "changed its input"),
}


def test_box_cases_are_the_lessons_examples():
    ex, dog, cat = query_and_keys_2d(), dog_bites_man(), cat_sat_down()
    (_, a), (_, b), (_, c), (_, d) = L.box_cases()
    np.testing.assert_array_equal(d, ex.values + [3.0, 2.0])  # no coordinate reaches 0
    assert np.all(d > 0)
    np.testing.assert_array_equal(a, ex.values)
    np.testing.assert_array_equal(b, dog.v)
    np.testing.assert_allclose(c, cat.x @ cat.w_v)
    assert c.shape == (4, 8)


def test_a_box_through_the_origin_is_caught_on_the_moved_case():
    *_, (_, values) = L.box_cases()
    low, high = coordinate_bounds(values)
    origin_low, origin_high, _ = L._box_mistakes(values)[0]
    assert not (np.allclose(origin_low, low) and np.allclose(origin_high, high))


def test_known_box_mistakes_differ_on_the_first_case():
    """Every recognised (low, high) of shape (d_v,), a number filled into every coordinate,
    differs from the right box and from every such mistake listed before it. (The first
    mistake, a box through the origin, needs values away from 0: tested above.)"""
    (_, values), *_ = L.box_cases()
    d_v = values.shape[1]
    seen = [coordinate_bounds(values)]
    for wrong_low, wrong_high, reason in L._box_mistakes(values)[1:]:
        pair = [
            np.full(d_v, x) if np.ndim(x) == 0 else np.asarray(x, dtype=float)
            for x in (wrong_low, wrong_high)
        ]
        if pair[0].shape != (d_v,) or pair[1].shape != (d_v,):
            continue
        assert not any(np.allclose(pair[0], a) and np.allclose(pair[1], b) for a, b in seen), reason
        seen.append(pair)
    assert len(seen) >= 10


def test_single_numbers_are_shown_as_numbers():
    (_, values), *_ = L.box_cases()
    message = judged(L.output_box, lambda v: (v.min(), v.max())).message
    assert f"low = {values.min():.4g} and high = {values.max():.4g}. You took one" in message


def test_box_mistakes_with_numbers_are_recognised_when_filled_in():
    (_, values), *_ = L.box_cases()
    d_v = values.shape[1]
    for wrong_low, wrong_high, reason in L._box_mistakes(values)[1:]:
        if np.ndim(wrong_low) == 0 and np.ndim(wrong_high) == 0:
            filled = (np.full(d_v, wrong_low), np.full(d_v, wrong_high))
            assert L._box_mistake(*filled, values) == reason


# ------------------------------------------------------------------ every table above
# Each wrong answer's feedback begins with the call that failed, and carries no reason another
# entry of its table is expected to give.
test_accepts, test_rejects = accept_reject(
    Answers(L.mix_one, MIX_RIGHT, MIX_WRONG, call="mix_one(w, values) for ", told_apart=True),
    Answers(
        L.attention_output,
        OUTPUT_RIGHT,
        OUTPUT_WRONG,
        call="attention_output(weights, values) for ",
        told_apart=True,
    ),
    Answers(L.output_box, BOX_RIGHT, BOX_WRONG, call="output_box(values) for ", told_apart=True),
)


def doubled(example):
    """``example`` with its values doubled, to see the checks compute what they show."""

    def make():
        ex = example()
        changes = {key: 2 * getattr(ex, key) for key in ("values", "v", "w_v") if hasattr(ex, key)}
        return SimpleNamespace(**{**vars(ex), **changes})

    return make


@pytest.mark.parametrize(
    "exercise, answer, expected",
    [
        (
            L.mix_one,
            lambda w, values: values.mean(axis=0),
            lambda: weighted_values(*L.mix_cases()[0][1:]),
        ),
        (
            L.attention_output,
            lambda weights, values: attnlab.softmax(weights) @ values,
            lambda: weighted_values(*L.output_cases()[0][1:]),
        ),
        (
            L.output_box,
            lambda values: (values.max(0), values.min(0)),
            lambda: coordinate_bounds(L.box_cases()[0][1])[0],
        ),
    ],
    ids=["mix_one", "attention_output", "output_box"],
)
def test_messages_show_numbers_computed_from_the_inputs(exercise, answer, expected, monkeypatch):
    """With every example's values doubled, the right answer shown follows: nothing is typed
    in."""
    before = judged(exercise, answer).message
    assert short(expected()) in before
    for name in ("query_and_keys_2d", "dog_bites_man", "cat_sat_down"):
        monkeypatch.setattr(L, name, doubled(getattr(L, name)))
    after = judged(exercise, answer).message
    assert short(expected()) in after and short(expected()) not in before


@pytest.mark.parametrize(
    "exercise", [L.mix_one, L.attention_output, L.output_box], ids=lambda e: e.title
)
def test_hints_go_from_a_nudge_to_the_method(exercise):
    assert_hints_climb(exercise)
    assert len(set(exercise.hints)) == 3  # each tier says something new (never the code:
    # test_exercises_contract checks no hint holds a line of the worked solution)


def test_solutions_show_their_source():
    assert "def mix_one(w, values):" in L.mix_one.solution().markdown
    assert "weights @ values" in L.attention_output.solution().markdown
    assert "values.min(axis=0)" in L.output_box.solution().markdown


def test_a_wrong_answer_is_judged_on_the_first_case_it_fails():
    """Right on the first case, wrong later: the feedback names the later case."""

    def wrong_on_cat(w, values):
        return values.mean(axis=0) if values.shape[0] == 4 else w @ values

    description = next(d for d, _, v in L.mix_cases() if v.shape[0] == 4)
    assert description in judged(L.mix_one, wrong_on_cat).message


def test_a_difference_hidden_by_rounding_is_said_to_be_one():
    def nearly(weights, values):
        out = weights @ values
        out[0, 1] += 3e-5  # 0.15536 -> 0.15539: both print as 0.1554
        return out

    message = judged(L.attention_output, nearly).message
    assert "agree to the digits shown, but differ by up to" in message, message
