"""The key to lesson 7's quiz: the right answer to each question and what to say about known
wrong ones. It lives outside the ``attnlab`` package on purpose, so the package students
install in a graded course run does not contain it (see ``attnlab/exercises/keys.py`` and the
instructor guide). Every number is computed from the values the questions were built from.
"""

from __future__ import annotations

import math

import numpy as np

import attnlab
from attnlab.examples import SCORE_ROW
from attnlab.exercises.kit.display import short
from attnlab.exercises.quiz import Key
from attnlab.mixing import barycentric
from attnlab.patterns import column_mass


def key_a(scope) -> dict:
    """The key to part A, question by question; ``scope`` holds the values the
    questions were built from (:attr:`attnlab.exercises.quiz.Questions.scope`)."""
    d = scope["d"]
    d_k = scope["d_k"]
    d_model = scope["d_model"]
    d_power = scope["d_power"]
    d_var = scope["d_var"]
    far = scope["far"]
    jac = scope["jac"]
    jac_plain = scope["jac_plain"]
    k = scope["k"]
    limits = scope["limits"]
    n_equal = scope["n_equal"]
    naive_log = scope["naive_log"]
    plain = scope["plain"]
    power = scope["power"]
    q = scope["q"]
    tokens_k = scope["tokens_k"]
    tokens_q = scope["tokens_q"]
    count = tokens_q * tokens_k  # one score per (query, key) pair
    raw = float(q @ k)
    g_scores = scope["geometry"] @ np.array([1.0, 0.0])  # (4,) against q = [1, 0]
    p = attnlab.softmax(SCORE_ROW)  # (4,)
    hot = attnlab.softmax(SCORE_ROW, temperature=5.0)  # (4,)
    lowest = int(np.argmin(g_scores))
    divisor = d_power**power
    sum_limit = limits[np.float32] - math.log(n_equal)  # n · exp(s) passes the largest float32
    return {
        "A1": Key(
            float(count),
            why_not=(
                (
                    float(count * d_k),
                    "d_k is added up inside each dot product: it is not an axis of the result.",
                ),
                (
                    float(tokens_q**2),
                    "the keys come from the other sentence: the score matrix need not be square.",
                ),
                (
                    float(tokens_k**2),
                    "the queries come from the first sentence: the "
                    "score matrix need not be square.",
                ),
                (
                    float(tokens_q * d_k),
                    "that is the size of Q; the scores pair every query with every key.",
                ),
                (float(d_model * d_k), "that is the size of W_Q, which every query shares."),
            ),
            nudge="one number per (query, key) pair: how many queries, how many keys?",
        ),
        "A2": Key(
            raw / math.sqrt(d),
            why_not=(
                (raw, "that is the raw score q·k; scale it."),
                (raw / d, "you divided by d_k; the scaling divides by its square root."),
                (
                    float(np.sum(q + k)) / math.sqrt(d),
                    "you added q and k entry by entry; a dot product multiplies matching "
                    "entries, then adds the products.",
                ),
            ),
            nudge="multiply matching entries of q and k, add the products, then divide by √d_k.",
        ),
        "A3": Key(
            "abcd"[lowest],
            why_not=tuple(
                (letter, reason)
                for letter, reason in (
                    (
                        "a",
                        f"it is at right angles to q, so its score is {g_scores[0]:g} whatever "
                        "its length; a key that points partly away from q scores below 0.",
                    ),
                    (
                        "b",
                        f"it points almost straight away from q, but it is short: its score is "
                        f"{g_scores[1]:g}. A score is |q| |k| cos θ: length counts as well as "
                        "angle.",
                    ),
                    (
                        "c",
                        f"a short key scores near 0 ({g_scores[2]:g} here), but near 0 is not "
                        "the lowest: scores can be negative.",
                    ),
                    ("d", f"its score is {g_scores[3]:g}; another key's is lower."),
                )
                if letter != "abcd"[lowest]
            ),
        ),
        "A4": Key(
            float(d_var),
            why_not=(
                (
                    math.sqrt(d_var),
                    "that is the standard deviation; the question asks for the variance.",
                ),
                (
                    1.0,
                    "that is the variance after dividing by √d_k; before it, the "
                    "variances of the d_k products add up.",
                ),
                (
                    float(d_var**2),
                    "each product q_i k_i has variance 1, and there are "
                    "d_k of them: the variances add, they do not "
                    "multiply.",
                ),
            ),
            nudge="q·k is a sum of d_k independent products q_i k_i, each of variance 1.",
        ),
        "A5": Key(
            d_power / divisor**2,
            why_not=(
                (1.0, "that is what dividing by √d_k gives; this divisor is smaller."),
                (
                    d_power / divisor,
                    "you divided the variance by the divisor; dividing "
                    "a number by c divides its variance by c².",
                ),
                (
                    math.sqrt(d_power) / divisor,
                    "that is the standard deviation; the question asks for the variance.",
                ),
                (float(d_power), "that is the variance before any scaling."),
            ),
            nudge="Var(q·k) = d_k, and dividing by c divides a variance by c².",
        ),
        "A6": Key(
            "c",
            why_not=(
                ("a", f"compute it: its largest entry is {np.abs(jac).max():.3g}."),
                ("b", f"the winning entry is p(1 − p) with p ≈ 1: {jac[0, 0]:.3g}."),
                (
                    "d",
                    "softmax ignores *adding* the same number to every score, not "
                    "multiplying by one: the largest entry of the Jacobian was "
                    f"{np.abs(jac_plain).max():.3g} before × 100 and is "
                    f"{np.abs(jac).max():.3g} after.",
                ),
            ),
        ),
        "A7": Key(
            "a",
            why_not=(
                ("b", f"compare them: softmax of these scores is {short(p.round(3))}."),
                ("c", f"they do add up to {plain.sum():g}; look at the signs instead."),
                ("d", "dividing by a positive sum keeps the order; look at the signs."),
            ),
        ),
        "A8": Key(
            float(p[2]),
            why_not=(
                (
                    float(plain[2]),
                    "that divides the score by the sum of the scores; "
                    "softmax exponentiates them first.",
                ),
                (
                    math.exp(SCORE_ROW[2]),
                    "that is exp of the score; divide it by the sum of the exps of the whole row.",
                ),
                (
                    float(p[3]),
                    "that is the fourth key: numpy counts from 0, so the third is index 2.",
                ),
                (float(p[1]), "that is the second key."),
            ),
            nudge="exponentiate every score, add the exps up, and divide the third by the sum.",
        ),
        "A9": Key(
            "d",
            why_not=(
                (
                    "a",
                    f"T > 1 shrinks the gaps between the scores: the largest weight "
                    f"goes from {p.max():.3f} to {hot.max():.3f}.",
                ),
                ("b", "dividing every score by the same positive T cannot reorder them."),
                ("c", "softmax ignores *adding* a constant to every score, not *dividing* by one."),
            ),
        ),
        "A10": Key(
            sum_limit,
            why_not=(
                (
                    limits[np.float32],
                    "that is where exp of one score overflows; here "
                    f"the sum of {n_equal} of them reaches the largest "
                    "float32 first, and a finite exp divided by an "
                    "infinite sum is 0.",
                ),
                (limits[np.float16], "that is the float16 limit; the row is float32."),
                (
                    limits[np.float32] - math.log10(n_equal),
                    "the exponent is a natural log: exp(s) · n = e^(s + ln n).",
                ),
                (limits[np.float32] - n_equal, "the sum is n · exp(s), not exp(s + n)."),
            ),
            nudge=f"the sum of the row is {n_equal} · exp(s): when does that pass the largest "
            "float32, np.finfo(np.float32).max?",
        ),
        "A11": Key(
            float(attnlab.log_softmax(far)[1]),
            why_not=(
                (
                    naive_log,
                    "that is what np.log(softmax(x)) gives, after the weight "
                    "underflowed to 0. log-softmax is x − logsumexp(x), and "
                    "never takes the log of a weight.",
                ),
                (0.0, "that is the first entry; the question asks for the second."),
            ),
            nudge="log_softmax(x) = x − logsumexp(x), and logsumexp(x) = max x + "
            "log Σ exp(x − max x).",
        ),
    }


def key_b(scope) -> dict:
    """The key to part B, question by question; ``scope`` holds the values the
    questions were built from (:attr:`attnlab.exercises.quiz.Questions.scope`)."""
    busiest = scope["busiest"]
    cat = scope["cat"]
    fill16 = scope["fill16"]
    filter_options = scope["filter_options"]
    link = scope["link"]
    mean = scope["mean"]
    n_mask = scope["n_mask"]
    points = scope["points"]
    two_d = scope["two_d"]
    w2 = scope["w2"]
    causal = int(attnlab.causal_mask(n_mask).sum())
    raw_h = float(attnlab.entropy(attnlab.softmax(SCORE_ROW)))  # nats
    out = attnlab.softmax(two_d.keys @ two_d.query) @ two_d.values  # (2,)
    # which points the output can land on: worked out here, not in the package, where a
    # student could read it off the quiz (the second red team of 2026-12-06 did)
    inside = {key: bool(np.all(barycentric(p, two_d.values) >= 0)) for key, p in points.items()}
    filters = {
        "x": "you mixed the tokens x themselves; the output mixes their values v = x W_V, "
        "and W_V has dropped the coordinate the tokens differ in.",
        "k": "you mixed the keys; the keys decide the weights, the output mixes the values.",
        "w": "those are the weights; the output is the weighted sum of the value vectors.",
    }
    return {
        "B1": Key(
            "b",
            why_not=(
                (
                    "a",
                    f"a column is what one key hands out to all the queries; in "
                    f'"{" ".join(cat.tokens)}" one column collects {busiest:.2f}.',
                ),
                ("c", "one of the two is free: a popular key can collect more than 1."),
                ("d", "think of what the softmax normalises, one query at a time."),
            ),
        ),
        "B2": Key(
            raw_h,
            why_not=(
                (
                    raw_h / math.log(2),
                    "that is H in bits (log base 2); the question asks for nats, the natural log.",
                ),
                (
                    raw_h / math.log(len(SCORE_ROW)),
                    "that is H / log n, the normalised entropy; the question asks for H itself.",
                ),
                (math.exp(raw_h), "that is e^H; the question asks for H itself."),
                (-raw_h, "H = −Σ w ln w is never negative: mind the minus sign."),
            ),
            nudge="H = −Σ w ln w over the weights of the row.",
        ),
        "B3": Key(
            "c",
            why_not=(
                ("a", "find each row's largest weight: is it on the diagonal, its own token?"),
                (
                    "b",
                    f"a uniform row has every weight 1/n = {1 / len(link.tokens):g}; "
                    "these rows have a clear winner.",
                ),
                (
                    "d",
                    f"column sums {short(column_mass(link.weights).round(2))}: no "
                    "column stands out.",
                ),
            ),
        ),
        "B4": Key(
            "d",
            why_not=(
                (
                    "a",
                    "the same colour then means different weights in different "
                    "pictures: compare a sharp map with a flat one.",
                ),
                (
                    "b",
                    "a sharp map already spans about 0 to 1, so stretching leaves it "
                    "much as it is: look at what happens to a flat one.",
                ),
                (
                    "c",
                    "stretching spreads the colours over the weights shown, so small "
                    "differences become *more* visible, not less.",
                ),
            ),
        ),
        "B5": Key(
            "a",
            why_not=(
                (
                    "b",
                    "one head's weights are one step of many layers; weights are not explanations.",
                ),
                (
                    "c",
                    "what a key adds is its weight times its value vector, and value "
                    "vectors differ in length.",
                ),
                ("d", "that needs an experiment; other heads, layers and value lengths decide."),
            ),
        ),
        "B6": Key(
            float(out[0]),
            why_not=(
                (
                    float(mean[0]),
                    "that is the plain average of the values; weight each one by its weight.",
                ),
                (float((w2 @ two_d.keys)[0]), "you mixed the keys; the output mixes the values."),
                (float(out[1]), "that is the second coordinate."),
            ),
            nudge="the output is Σ_j w_j v_j: weight each value vector, then add them up.",
        ),
        "B7": Key(
            "c",
            why_not=(
                (
                    "a",
                    "that is the shape of X (and of the output after the heads are "
                    "joined); weights pair queries with keys.",
                ),
                (
                    "b",
                    "that is the shape of one of Q, K, V split into heads; the "
                    "weights have one number per (query, key) pair.",
                ),
                ("d", "the batch axis is missing: each of the 2 sequences has its own weights."),
            ),
        ),
        "B8": Key(
            next(letter for letter, kind in filter_options.items() if kind == "v"),
            why_not=tuple(
                (letter, filters[kind]) for letter, kind in filter_options.items() if kind != "v"
            ),
        ),
        "B9": Key(
            next(key for key, ok in inside.items() if ok),
            why_not=tuple(
                (
                    key,
                    f"to land on {short(p)} you would need the weights "
                    f"{short(barycentric(p, two_d.values).round(2))}, and a "
                    "weight can't be negative: it lies outside the triangle "
                    "of the values.",
                )
                for key, p in points.items()
                if not inside[key]
            ),
        ),
        "B10": Key(
            "b",
            why_not=(
                ("a", "the output mixes values, not keys."),
                (
                    "c",
                    "a higher score raises A's weight whatever the others are, and "
                    "the output moves towards A's value even from a small share.",
                ),
                ("d", "the weights change, so the mix of different values changes."),
            ),
        ),
        "B11": Key(
            float(causal),
            why_not=(
                (float(causal - n_mask), "each token may also see itself: the diagonal is True."),
                (float(n_mask**2), "that lets every token see the future too."),
                (float(n_mask), "that lets each token see only itself."),
            ),
            nudge="query i may see keys 0 … i: count them row by row.",
        ),
        "B12": Key(
            "c",
            why_not=(
                (
                    "a",
                    "that is what a softmax with a special case for fully masked "
                    "rows, such as attnlab.softmax with −∞, returns.",
                ),
                (
                    "b",
                    f"that happens in float32 and float64; but np.float16(-1e9) is "
                    f"{float(fill16)}.",
                ),
                ("d", "numpy and most libraries return a value here, not an error."),
            ),
        ),
    }
